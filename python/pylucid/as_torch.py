"""Run a PyTorch program on pylucid without editing it.

``install()`` registers pylucid's modules under PyTorch's module names in ``sys.modules``
(``torch``, ``torch.nn``, ``torch.nn.functional``, ``torch.optim``, ``torch.utils.data``, ...),
so ``import torch``, ``import torch.nn as nn`` and ``from torch.utils.data import DataLoader``
all give pylucid. From the shell, ``python -m pylucid.as_torch script.py [args]`` does the same
and runs the script as ``__main__``. A script that only writes ``import torch`` can instead be
edited to ``import pylucid as torch``.

>>> import sys, pylucid
>>> from pylucid import as_torch
>>> saved = {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith("torch.")}
>>> as_torch.install()
>>> import torch.nn.functional as F
>>> F is pylucid.nn.functional
True
>>> as_torch.uninstall(saved)
"""
import importlib.abc
import runpy
import sys

__all__ = ["ALIASES", "install", "uninstall"]

# PyTorch's module name -> pylucid's (attribute path below ``pylucid``).
ALIASES = {
    "torch": "",
    "torch.nn": "nn",
    "torch.nn.functional": "nn.functional",
    "torch.nn.init": "nn.init",
    "torch.nn.utils": "nn.utils",
    "torch.nn.utils.rnn": "nn.utils.rnn",
    "torch.nn.utils.parametrize": "nn.utils.parametrize",
    "torch.nn.utils.parametrizations": "nn.utils.parametrizations",
    "torch.nn.parameter": "nn.parameter",
    "torch.optim": "optim",
    "torch.optim.lr_scheduler": "optim.lr_scheduler",
    "torch.optim.swa_utils": "optim.swa_utils",
    "torch.autograd": "autograd",
    "torch.autograd.functional": "autograd.functional",
    "torch.utils": "utils",
    "torch.utils.data": "utils.data",
    "torch.utils.checkpoint": "utils.checkpoint",
    "torch.linalg": "linalg",
    "torch.jit": "jit",
    "torch.distributions": "distributions",
    "torch.cuda": "cuda",
    "torch.accelerator": "accelerator",
    "torch.cuda.amp": "cuda.amp",
    "torch.cpu": "cpu",
    "torch.cpu.amp": "cpu.amp",
    "torch.backends": "backends",
    "torch.amp": "amp",
    "torch.testing": "testing",
    "torch.special": "special",
    "torch.random": "random",
}


class _AliasFinder:
    """Finds ``torch.a.b`` (any submodule not in ``ALIASES``, e.g. ``torch.autograd.function``
    or ``torch.nn.modules.linear``) as pylucid's ``pylucid.a.b`` when pylucid has that module."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        import importlib
        import importlib.util

        if not fullname.startswith("torch."):
            return None
        try:
            mod = importlib.import_module("pylucid." + fullname[len("torch."):])
        except ImportError:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(mod))


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


_FINDER = _AliasFinder()


def install():
    """Makes ``import torch`` (and the submodules listed in ``ALIASES``, and any other
    ``torch.x`` that pylucid has as ``pylucid.x``) import pylucid."""
    import importlib

    import pylucid

    for name, path in ALIASES.items():
        mod = pylucid
        for part in filter(None, path.split(".")):
            mod = getattr(mod, part, None) or importlib.import_module(f"{mod.__name__}.{part}")
        sys.modules[name] = mod
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    _install_in_spawned_children()


class _InstallWhenUnpickled:
    """Unpickles as a call to :func:`install` (named through a statement: under ``python -m
    pylucid.as_torch`` this module is ``__main__``, where a child would not find ``install``)."""

    def __reduce__(self):
        return exec, ("import pylucid.as_torch\npylucid.as_torch.install()",)


def _install_in_spawned_children():
    """Makes processes started by the ``spawn``/``forkserver`` methods install the aliases before
    they re-import the main script: its ``import torch`` then gives pylucid there too. The child
    unpickles the preparation data first, so one more entry in it is enough."""
    import multiprocessing.spawn as mp_spawn

    if getattr(mp_spawn.get_preparation_data, "_pylucid", False):
        return
    original = mp_spawn.get_preparation_data

    def get_preparation_data(name):
        data = original(name)
        if _FINDER in sys.meta_path:
            data["pylucid_as_torch"] = _InstallWhenUnpickled()
        return data
    get_preparation_data._pylucid = True  # type: ignore[attr-defined]
    mp_spawn.get_preparation_data = get_preparation_data


def uninstall(previous=None):
    """Removes the aliases; ``previous`` (a dict of module name -> module, e.g. a real torch
    imported earlier) is put back."""
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        if name in ALIASES or getattr(sys.modules[name], "__name__", "").startswith("pylucid"):
            sys.modules.pop(name, None)
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    sys.modules.update(previous or {})


def main(argv=None):
    """``python -m pylucid.as_torch script.py [args]``: installs the aliases and runs the script."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m pylucid.as_torch script.py [args...]", file=sys.stderr)
        return 2
    install()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
