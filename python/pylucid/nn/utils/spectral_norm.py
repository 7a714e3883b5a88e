"""The older spectral normalisation, as ``torch.nn.utils.spectral_norm``: the parameter
``<name>_orig`` and the buffers ``<name>_u``, ``<name>_v`` replace ``<name>``, which a forward
pre-hook recomputes as ``<name>_orig / sigma``, ``sigma = u^T W v`` estimated by power iteration
on ``W`` (``<name>_orig`` viewed as a matrix with ``dim`` first), one or more steps per forward in
training mode (``v`` first, then ``u``, as PyTorch), none in eval mode."""
from ... import _C
from ...autograd.grad_mode import no_grad
from .._functional_act_ext import normalize
from ..parameter import Parameter

__all__ = ["remove_spectral_norm", "spectral_norm"]


def _weight_matrix(weight, dim):
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.shape[0], -1)


class SpectralNorm:
    """The forward pre-hook (PyTorch's ``torch.nn.utils.spectral_norm.SpectralNorm``)."""

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError("spectral_norm: Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = _weight_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(normalize(weight_mat.mv(v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        module.__dict__.pop(self.name, None)
        del module._parameters[self.name + "_orig"]
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        hooks = module.__dict__.setdefault("_spectral_norm_hooks", {})
        if name in hooks:
            raise _C.LucidError(f"spectral_norm: Cannot register two spectral_norm hooks on the same parameter {name}")
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"spectral_norm: Module '{type(module).__name__}' has no parameter with name '{name}'")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        with no_grad():
            weight_mat = _weight_matrix(weight, dim)
            h, w = weight_mat.shape
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        # <name> stays readable (weight initialisers look it up) as a plain attribute.
        object.__setattr__(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        handle = module.register_forward_pre_hook(fn)
        hooks[name] = (fn, handle)
        return fn


def _default_dim(module):
    from ..modules.conv import _ConvTranspose
    return 1 if isinstance(module, _ConvTranspose) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectrally normalises ``module.<name>`` (``dim`` defaults to 0, 1 for transposed
    convolutions). Returns ``module``."""
    if dim is None:
        dim = _default_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undoes :func:`spectral_norm`: ``<name>`` becomes a plain parameter holding the normalised
    weight (with the current ``u``, ``v``)."""
    hooks = module.__dict__.get("_spectral_norm_hooks", {})
    if name not in hooks:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    fn, handle = hooks.pop(name)
    handle.remove()
    fn.remove(module)
    return module
