"""PyTorch's module paths that pylucid's files do not mirror one to one.

Scripts import names from PyTorch's implementation modules (``from torch.distributions.normal
import Normal``, ``from torch.nn.modules.normalization import LayerNorm``, ``from
torch.nn.modules.activation import MultiheadAttention``). pylucid groups its classes into other
files, so :func:`alias_submodules` gives a package every submodule name PyTorch's has: a missing
one becomes a module of its own, and every one of them (and the real ones) falls back, for a name
it lacks, to the package's public namespace and then to the package's other submodules (where
private bases such as ``_InstanceNorm`` live)."""
import importlib
import sys
import types


def _fallback_getattr(package_name, full_name):
    def __getattr__(attr):
        if attr.startswith("__"):
            raise AttributeError(f"module '{full_name}' has no attribute '{attr}'")
        package = sys.modules[package_name]
        if attr in vars(package) and not isinstance(vars(package)[attr], types.ModuleType):
            return vars(package)[attr]
        prefix = package_name + "."
        for name, mod in list(sys.modules.items()):
            if name.startswith(prefix) and name != full_name and mod is not None and attr in vars(mod):
                value = vars(mod)[attr]
                if not isinstance(value, types.ModuleType):
                    return value
        raise AttributeError(f"module '{full_name}' has no attribute '{attr}'")
    return __getattr__


def alias_submodules(package_name, names):
    """Makes ``<package_name>.<name>`` importable for each of ``names`` (see the module doc)."""
    package = sys.modules[package_name]
    for name in names:
        full = f"{package_name}.{name}"
        try:
            mod = importlib.import_module(full)
        except ImportError:
            mod = types.ModuleType(full, f"PyTorch's ``{full.replace('pylucid', 'torch', 1)}``: its names, "
                                         f"which pylucid defines elsewhere in ``{package_name}``.")
            sys.modules[full] = mod
            setattr(package, name, mod)
        if "__getattr__" not in vars(mod):
            mod.__getattr__ = _fallback_getattr(package_name, full)  # type: ignore[method-assign]
