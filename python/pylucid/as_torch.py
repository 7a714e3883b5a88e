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
    "torch.distributions": "distributions",
    "torch.cuda": "cuda",
    "torch.cuda.amp": "cuda.amp",
    "torch.cpu": "cpu",
    "torch.cpu.amp": "cpu.amp",
    "torch.backends": "backends",
    "torch.amp": "amp",
    "torch.testing": "testing",
    "torch.special": "special",
    "torch.random": "random",
}


def install():
    """Makes ``import torch`` (and the submodules listed in ``ALIASES``) import pylucid."""
    import importlib

    import pylucid

    for name, path in ALIASES.items():
        mod = pylucid
        for part in filter(None, path.split(".")):
            mod = getattr(mod, part, None) or importlib.import_module(f"{mod.__name__}.{part}")
        sys.modules[name] = mod


def uninstall(previous=None):
    """Removes the aliases; ``previous`` (a dict of module name -> module, e.g. a real torch
    imported earlier) is put back."""
    for name in ALIASES:
        sys.modules.pop(name, None)
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
