"""``pylucid.version`` (PyTorch's ``torch.version``): what environment-check cells print, e.g.
``print(torch.__version__, torch.version.cuda)``. pylucid is a CPU-only build, so ``cuda`` and
``hip`` are None, as in PyTorch's CPU wheels."""

__all__ = ["__version__", "cuda", "debug", "hip"]

__version__ = "0.1.0"
cuda = None
hip = None
debug = False
