"""``pylucid.version``: what environment-report scripts print (``torch.version.cuda`` and friends)."""
__version__ = "0.1.0"
cuda = None  # CPU only: no CUDA, HIP or XPU build
hip = None
xpu = None
debug = False
git_version = "unknown"
