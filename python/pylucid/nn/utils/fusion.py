"""Folding an eval-mode BatchNorm into the convolution or linear layer before it (PyTorch's
``torch.nn.utils.fusion``): with ``s = bn.weight / sqrt(running_var + eps)`` the fused layer has
weight ``w * s`` (per output channel) and bias ``(b - running_mean) * s + bn.bias``, so it
computes ``bn(layer(x))`` in one layer."""
import copy

from ... import _C
from ..._tensor import ones_like, zeros_like
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _check_eval(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A new convolution (a deep copy of ``conv``) equal to ``bn(conv(x))``; both in eval mode.
    ``transpose=True`` for a transposed convolution (output channels on weight dim 1).

    >>> import pylucid, pylucid.nn as nn
    >>> conv, bn = nn.Conv2d(2, 3, 3).eval(), nn.BatchNorm2d(3).eval()
    >>> x = pylucid.randn(1, 2, 5, 5)
    >>> bool(pylucid.allclose(fuse_conv_bn_eval(conv, bn)(x), bn(conv(x)), atol=1e-6))
    True
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused ``(weight, bias)`` Parameters of :func:`fuse_conv_bn_eval` (``conv_b``,
    ``bn_w``, ``bn_b`` may be None)."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    b_grad = conv_b.requires_grad if conv_b is not None else False
    with no_grad():
        conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
        bn_w = ones_like(bn_rm) if bn_w is None else bn_w
        bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
        rsqrt = _C.rsqrt(bn_rv + bn_eps)
        shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
        w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(w_dtype)
        b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(b_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, b_grad)


def fuse_linear_bn_eval(linear, bn):
    """A new Linear (a deep copy of ``linear``) equal to ``bn(linear(x))`` for a BatchNorm over
    the linear's outputs (``bn.num_features`` equal to ``out_features``, or 1); both in eval mode."""
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(f"To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused ``(weight, bias)`` Parameters of :func:`fuse_linear_bn_eval`."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    b_grad = linear_b.requires_grad if linear_b is not None else False
    with no_grad():
        linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
        scale = bn_w * _C.rsqrt(bn_rv + bn_eps)
        w = linear_w * scale.unsqueeze(-1).to(w_dtype)
        b = ((linear_b - bn_rm) * scale + bn_b).to(b_dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, b_grad)
