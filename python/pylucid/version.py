"""``pylucid.version`` (PyTorch's ``torch.version``): what environment-check cells print, e.g.
``print(torch.__version__, torch.version.cuda)``. pylucid is a CPU-only build, so ``cuda`` and
``hip`` are None, as in PyTorch's CPU wheels."""

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "xpu"]

__version__ = "0.1.0"
cuda = None
hip = None
xpu = None
git_version = "unknown"
debug = False
