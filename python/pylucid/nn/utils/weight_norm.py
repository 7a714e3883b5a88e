"""The older weight normalisation, as ``torch.nn.utils.weight_norm``: parameters ``<name>_g`` and
``<name>_v`` replace ``<name>``, recomputed as ``g * v / ||v||`` by a forward pre-hook."""
from ... import _C
from ..parameter import Parameter
from .parametrizations import _weight_norm, norm_except_dim

__all__ = ["remove_weight_norm", "weight_norm"]


class _WeightNormHook:
    def __init__(self, name, dim):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Splits ``module.<name>`` into a magnitude ``<name>_g`` and a direction ``<name>_v``; the
    weight is recomputed from them before every forward. Returns ``module``."""
    if name + "_g" in module._parameters:
        raise _C.LucidError(f"weight_norm: cannot register two weight_norm hooks on the same parameter {name}")
    weight = getattr(module, name)
    hook = _WeightNormHook(name, dim)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, hook.dim).detach().clone()))
    module.register_parameter(name + "_v", Parameter(weight.detach().clone()))
    setattr(module, name, hook.compute_weight(module))
    handle = module.register_forward_pre_hook(hook)
    module.__dict__.setdefault("_weight_norm_hooks", {})[name] = (hook, handle)
    return module


def remove_weight_norm(module, name="weight"):
    """Undoes :func:`weight_norm`: ``<name>`` becomes a plain parameter holding ``g * v / ||v||``."""
    hooks = module.__dict__.get("_weight_norm_hooks", {})
    if name not in hooks:
        raise _C.ShapeMismatch(f"remove_weight_norm: weight_norm of '{name}' not found in {type(module).__name__}")
    hook, handle = hooks.pop(name)
    weight = hook.compute_weight(module).detach().clone()
    handle.remove()
    del module._parameters[name + "_g"]
    del module._parameters[name + "_v"]
    module.__dict__.pop(name, None)
    module.register_parameter(name, Parameter(weight))
    return module
