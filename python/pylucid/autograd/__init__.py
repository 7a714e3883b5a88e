"""Autograd: grad mode, ``grad``/``backward``, ``gradcheck``, and the C++ backward nodes.

Every backward node class of the core (``RMSNormBackward``, ...) is importable from here; a
tensor's ``grad_fn`` is an instance of one of them.
"""
from .. import _C
from .functional import backward, grad  # noqa: F401
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from . import forward_ad, functional, graph, hooks, profiler  # noqa: F401

Node = _C.Node
# Export the node classes the bindings define (RMSNormBackward, GroupRMSNormBackward, ...).
for _name in dir(_C):
    _obj = getattr(_C, _name)
    if isinstance(_obj, type) and issubclass(_obj, _C.Node):
        globals()[_name] = _obj
        if not (_obj.__doc__ or "").strip():
            _obj.__doc__ = (f"Autograd node ``{_name}``: the backward of the op that records it as a "
                            "tensor's grad_fn (its ``schema`` names the op).")
del _name, _obj


def Variable(data, requires_grad=False, volatile=False):  # noqa: N802  (PyTorch's legacy class name)
    """PyTorch's legacy ``Variable(tensor, requires_grad=...)``: since tensors carry autograd
    themselves it returns ``data`` (a leaf gets ``requires_grad`` set; a non-leaf is detached
    first when ``requires_grad`` is asked for, as the old wrapper started a new leaf)."""
    if not isinstance(data, _C.Tensor):
        raise _C.DtypeMismatch(f"Variable: expected a Tensor, got {type(data).__name__}")
    if requires_grad:
        t = data if data.is_leaf else data.detach()
        return t.requires_grad_(True)
    return data


def __getattr__(name):
    # torch.autograd.inference_mode is pylucid.inference_mode, which lives with the Tensor surface
    # (loaded after this package, so it is looked up on first use).
    if name == "inference_mode":
        from .._compat import inference_mode
        return inference_mode
    raise AttributeError(f"module 'pylucid.autograd' has no attribute '{name}'")
