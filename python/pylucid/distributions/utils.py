"""``pylucid.distributions.utils`` (PyTorch's ``torch.distributions.utils``): ``broadcast_all``,
``lazy_property`` and the conversions between ``probs`` and ``logits``."""
import numbers

import pylucid
from pylucid.nn import functional as F

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


def broadcast_all(*values):
    """Numbers and tensors as tensors of one broadcast shape (numbers take the dtype of the first
    floating tensor, else the default dtype), PyTorch's ``broadcast_all``."""
    if not all(isinstance(v, (pylucid.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, pylucid.Tensor)]
    if len(tensors) < len(values):
        floats = [t.dtype for t in tensors if t.dtype.is_floating_point]
        dtype = floats[0] if floats else pylucid.get_default_dtype()
        values = tuple(v if isinstance(v, pylucid.Tensor) else pylucid.tensor(v, dtype=dtype) for v in values)
    return pylucid.broadcast_tensors(*values)


def _float_params(*values):
    """``broadcast_all`` with integer tensors promoted to the default floating dtype."""
    out = broadcast_all(*values)
    return [t if t.dtype.is_floating_point else t.to(pylucid.get_default_dtype()) for t in out]


class lazy_property:
    """A property computed on first access and then stored on the instance (so ``probs`` and
    ``logits`` each derive from the other once)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with pylucid.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def clamp_probs(probs):
    """``probs`` clamped to ``[eps, 1 - eps]`` of its dtype, so their logs are finite."""
    eps = pylucid.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """``sigmoid(logits)`` when ``is_binary``, else ``softmax`` over the last dim."""
    return pylucid.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """The inverse of :func:`logits_to_probs` (on clamped probabilities)."""
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (from diagonal ``diag``) of ``mat`` (..., n, n) as vectors, row by row."""
    n = mat.shape[-1]
    idx = [(i, j) for i in range(n) for j in range(n) if j - i <= diag]
    rows = pylucid.tensor([i for i, _ in idx])
    cols = pylucid.tensor([j for _, j in idx])
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of :func:`tril_matrix_to_vec`."""
    m = vec.shape[-1]
    n = round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2)
    idx = [i * n + j for i in range(n) for j in range(n) if j - i <= diag]
    if len(idx) != m:
        raise ValueError(f"vec_to_tril_matrix: {m} values do not fill a triangle")
    flat = pylucid.zeros(*vec.shape[:-1], n * n, dtype=vec.dtype)
    index = pylucid.tensor(idx).expand(*vec.shape[:-1], m)
    return flat.scatter(-1, index, vec).reshape(*vec.shape[:-1], n, n)
