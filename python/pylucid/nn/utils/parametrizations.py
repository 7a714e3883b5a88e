"""Parametrizations built on :mod:`pylucid.nn.utils.parametrize`, as PyTorch's
``torch.nn.utils.parametrizations``: ``weight_norm``."""
from ..module import Module
from .parametrize import register_parametrization

__all__ = ["weight_norm"]


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 (PyTorch's name)
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped to broadcast against ``v``
    (over everything when ``dim`` is -1)."""
    if dim == -1:
        return v.norm(pow)
    dim %= v.dim()
    shape = [1] * v.dim()
    shape[dim] = v.shape[dim]
    return v.transpose(0, dim).reshape(v.shape[dim], -1).norm(pow, 1).reshape(shape)


def _weight_norm(v, g, dim):
    """``v * (g / ||v||)``, the norm taken over every dim but ``dim`` (PyTorch's ``_weight_norm``)."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrizes ``module.<name>`` as ``g * v / ||v||`` (the norm over every dim but ``dim``):
    parameters ``parametrizations.<name>.original0`` (g) and ``original1`` (v). Returns ``module``."""
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
