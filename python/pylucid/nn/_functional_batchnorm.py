"""Batch, group and instance normalisation with PyTorch's signatures: ``batch_norm``,
``group_norm``, ``instance_norm``.

``batch_norm`` and ``group_norm`` are each one fused C++ op with a closed-form backward
(``BatchNormBackward``, ``GroupNormBackward``); ``instance_norm`` is ``group_norm`` with one group
per channel when it keeps no running statistics, and otherwise ``batch_norm`` over the input
folded to ``(1, N * C, *)``, as PyTorch computes it.
"""
from .. import _C
from .._C import Tensor

__all__ = ["batch_norm", "group_norm", "instance_norm"]


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5) -> Tensor:
    r"""Batch normalisation of ``input`` ``(N, C, *)`` per channel (PyTorch's ``batch_norm``).

    .. math::

        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}}\, w + b

    With ``training=True`` the mean and (biased) variance are taken over the batch and spatial
    positions of each channel, and ``running_mean``/``running_var``, when given, are updated in
    place: ``running = (1 - momentum) * running + momentum * stat`` with the unbiased variance.
    With ``training=False`` the running statistics are used (and are constants for autograd).

    Args:
        input: floating Tensor of shape ``(N, C)`` or ``(N, C, *)``.
        running_mean, running_var: Tensors of shape ``(C,)`` or None (only with ``training``).
        weight, bias: Tensors of shape ``(C,)`` or None.
        training: use batch statistics (and update the running ones).
        momentum: weight of the new statistic in the running average.
        eps: added to the variance; must be >= 0.

    Raises:
        ShapeMismatch: ``input`` has fewer than 2 dims, a per-channel tensor's shape is not
            ``(C,)``, or training sees a single value per channel.
        LucidError: ``training=False`` without running statistics.

    >>> import pylucid
    >>> from pylucid.nn import functional as F
    >>> x = pylucid.tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> [[round(v, 4) for v in row] for row in F.batch_norm(x, None, None, training=True).tolist()]
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    momentum = 0.0 if momentum is None else momentum
    return _C._batch_norm(input, running_mean, running_var, weight, bias, bool(training), float(momentum),
                          float(eps))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5) -> Tensor:
    r"""Group normalisation (PyTorch's ``group_norm``): the ``C`` channels of ``input``
    ``(N, C, *)`` form ``num_groups`` consecutive groups, each normalised per sample over its
    channels and all spatial positions, then scaled and shifted per channel by ``weight`` and
    ``bias`` (shape ``(C,)`` or None).

    Raises:
        ShapeMismatch: ``C`` not divisible by ``num_groups``, ``num_groups < 1``, a ``weight`` or
            ``bias`` not of shape ``(C,)``, an input with fewer than 2 dims.

    >>> import pylucid
    >>> from pylucid.nn import functional as F
    >>> [round(v, 4) for v in F.group_norm(pylucid.tensor([[1.0, 3.0, 5.0, 5.0]]), 2).tolist()[0]]
    [-1.0, 1.0, 0.0, 0.0]
    """
    return _C._group_norm(input, num_groups, weight, bias, float(eps))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5) -> Tensor:
    r"""Instance normalisation (PyTorch's ``instance_norm``): each (sample, channel) of ``input``
    ``(N, C, *)`` is normalised over its spatial positions, then scaled and shifted per channel.

    With running statistics and ``use_input_stats`` they are updated with the mean over the
    batch of the per-instance statistics; with ``use_input_stats=False`` they are used instead.

    >>> import pylucid
    >>> from pylucid.nn import functional as F
    >>> [round(v, 4) for v in F.instance_norm(pylucid.tensor([[[1.0, 3.0], [2.0, 2.0]]])).tolist()[0][0]]
    [-1.0, 1.0]
    """
    if running_mean is None and running_var is None and use_input_stats:
        if not isinstance(input, Tensor) or input.dim() < 2:
            return _C._group_norm(input, 1, weight, bias, float(eps))  # C++ names the bad input
        return _C._group_norm(input, int(input.shape[1]), weight, bias, float(eps))
    if not isinstance(input, Tensor) or input.dim() < 2:
        raise _C.ShapeMismatch(f"instance_norm: expected input of shape (N, C, *), got "
                               f"{getattr(input, 'shape', type(input).__name__)}")
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and not isinstance(t, Tensor):
            raise _C.DtypeMismatch(f"instance_norm: {name} must be a Tensor or None, got {type(t).__name__}")
    n, c = int(input.shape[0]), int(input.shape[1])
    folded = input.reshape(1, n * c, *input.shape[2:])
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    out = batch_norm(folded, rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats and rm is not None and rv is not None:
        from ..autograd.grad_mode import no_grad

        with no_grad():
            running_mean.copy_(rm.view(n, c).mean(0))
            running_var.copy_(rv.view(n, c).mean(0))
    return out.reshape(input.shape)
