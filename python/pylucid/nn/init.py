"""Parameter initialisation, as ``torch.nn.init``: every function fills a tensor in place under
``no_grad``, draws from the generator seeded by :func:`pylucid.manual_seed`, and returns it.

>>> import pylucid
>>> from pylucid.nn import init
>>> w = pylucid.empty(3, 4)
>>> _ = pylucid.manual_seed(0)
>>> init.kaiming_uniform_(w, a=5 ** 0.5) is w
True
>>> bool((w.abs() <= 0.5).all())     # bound = gain * sqrt(3 / fan_in) = sqrt(1/3) * sqrt(3/4)
True
>>> init.calculate_gain("relu")
1.4142135623730951
"""
import math
import warnings

from .. import _C
from ..autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table): 1 for linear/sigmoid, 5/3 for
    tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (slope ``param``, default
    0.01), 3/4 for selu."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "identity":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise _C.LucidError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise _C.LucidError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r} (expected one of "
                        "linear, sigmoid, tanh, relu, leaky_relu, selu, identity, conv*)")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise _C.ShapeMismatch(f"init: fan in and fan out can not be computed for a tensor with fewer "
                               f"than 2 dimensions (got shape {list(tensor.shape)})")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise _C.LucidError(f"init: mode {mode!r} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0):
    """Fill with samples from U(a, b)."""
    with no_grad():
        return tensor.uniform_(float(a), float(b))


def normal_(tensor, mean=0.0, std=1.0):
    """Fill with samples from N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(float(mean), float(std))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with samples from N(mean, std^2) truncated to ``[a, b]``, drawn as PyTorch draws them
    (so a seed gives PyTorch's values): when the interval holds more than 30% of the mass, normal
    draws with the ones outside redrawn (a full-size draw per round) until none is; otherwise
    uniform proposals on ``[a, b]`` accepted with probability ``exp(-z^2/2 - log_peak)``."""
    from .._shape import where

    gen = {} if generator is None else {"generator": generator}

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            lo, hi = tensor.new_tensor(a).item(), tensor.new_tensor(b).item()
            result = tensor.normal_(mean, std, **gen)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                result = where(mask, tensor.new_empty(tuple(tensor.shape)).normal_(mean, std, **gen), result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2
        candidates = tensor.new_empty(tuple(tensor.shape))
        accept = tensor.new_empty(tuple(tensor.shape))
        tensor.uniform_(a, b, **gen)
        candidates.copy_(tensor)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = accept.uniform_(**gen).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, **gen)
                result = where(pending, candidates, result)
                candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                pending = where(pending, accept.uniform_(**gen).log_().gt(candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def orthogonal_(tensor, gain=1.0, generator=None):
    """Fill with a (semi-)orthogonal matrix, trailing dims flattened: the Q of the QR
    decomposition of a standard normal draw (signs fixed by R's diagonal), times ``gain``."""
    import numpy as np

    from .._tensor import tensor as _tensor

    if tensor.ndim < 2:
        raise _C.ShapeMismatch("orthogonal_: only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flat = tensor.new_empty((rows, cols))
        flat.normal_(0, 1, generator=generator) if generator is not None else flat.normal_(0, 1)
        m = flat.numpy().astype(np.float64 if tensor.dtype == _C.dtype.float64 else np.float32)
        if rows < cols:
            m = m.T
        q, r = np.linalg.qr(m)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        tensor.copy_(_tensor(np.asarray(q, order="C"), dtype=tensor.dtype).reshape(tuple(tensor.shape)))
        return tensor.mul_(gain)


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-d convolution weight with the Dirac delta, so that the convolution
    passes its first input channels through (per group of output channels)."""
    import numpy as np

    from .._tensor import tensor as _tensor

    if tensor.ndim not in (3, 4, 5):
        raise _C.ShapeMismatch("dirac_: only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise _C.ShapeMismatch("dirac_: dim 0 must be divisible by groups")
    per = sizes[0] // groups
    w = np.zeros(sizes)
    centre = tuple(n // 2 for n in sizes[2:])
    for g in range(groups):
        for d in range(min(per, sizes[1])):
            w[(g * per + d, d) + centre] = 1
    with no_grad():
        return tensor.copy_(_tensor(w, dtype=tensor.dtype))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-d tensor from N(0, std^2), then zero ``ceil(sparsity * rows)`` random rows of each
    column (a fresh ``randperm`` per column, as PyTorch draws them)."""
    from .. import _random

    if tensor.ndim != 2:
        raise _C.ShapeMismatch("sparse_: only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator) if generator is not None else tensor.normal_(0, std)
        for c in range(cols):
            zero_rows = (_random.randperm(rows, generator=generator) if generator is not None else
                         _random.randperm(rows))[:num_zeros]
            tensor[zero_rows, c] = 0
    return tensor


def constant_(tensor, val):
    """Fill with the value ``val``."""
    with no_grad():
        return tensor.fill_(float(val))


def zeros_(tensor):
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def ones_(tensor):
    """Fill with ones."""
    return constant_(tensor, 1.0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal, zeros elsewhere)."""
    if tensor.ndim != 2:
        raise _C.ShapeMismatch(f"eye_: only 2-D tensors are supported, got shape {list(tensor.shape)}")
    import numpy as np

    from .._tensor import tensor as _tensor

    with no_grad():
        n, m = tensor.shape
        return tensor.copy_(_tensor(np.eye(n, m), dtype=tensor.dtype))


def xavier_uniform_(tensor, gain=1.0):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """He uniform: U(-bound, bound), bound = gain * sqrt(3 / fan), gain from ``nonlinearity``
    with negative slope ``a``. ``Linear`` uses ``a=sqrt(5)``, giving bound 1/sqrt(fan_in)."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """He normal: N(0, std^2), std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std)


def _make_deprecate(meth):
    """PyTorch's deprecated spellings without the trailing underscore (``nn.init.normal``): they
    warn (FutureWarning) and call the in-place initialiser."""
    import warnings

    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"Deprecated: use :func:`{new_name}` (this warns and calls it)."
    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
