"""CUDA backend flags: not built in pylucid. The precision switches scripts set before training
(``backends.cuda.matmul.allow_tf32 = True``) are kept and have no effect: float32 products are
always computed in float32 here.

The attention-kernel switches (``enable_flash_sdp``, ``math_sdp_enabled``, the deprecated
``sdp_kernel`` context manager...) act on pylucid's CPU attention as on PyTorch's CPU build: see
:mod:`pylucid.nn.attention`."""
import warnings

from ..nn._functional_attention import _SDP_ENABLED
from ..nn.attention import _sdp_state

__all__ = ["cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp", "enable_math_sdp",
           "enable_mem_efficient_sdp", "flash_sdp_enabled", "is_built", "math_sdp_enabled", "matmul",
           "mem_efficient_sdp_enabled", "sdp_kernel"]


def is_built():
    """False: pylucid is not built with CUDA support."""
    return False


class _MatmulFlags:
    """``backends.cuda.matmul``: the reduced-precision switches of CUDA matrix products (PyTorch's
    defaults; recorded only)."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    def __repr__(self):
        return (f"_MatmulFlags(allow_tf32={self.allow_tf32}, allow_fp16_reduced_precision_reduction="
                f"{self.allow_fp16_reduced_precision_reduction}, allow_bf16_reduced_precision_reduction="
                f"{self.allow_bf16_reduced_precision_reduction})")


matmul = _MatmulFlags()


def flash_sdp_enabled():
    """Whether scaled_dot_product_attention may use the flash kernel (True unless switched off)."""
    return _SDP_ENABLED["flash"]


def mem_efficient_sdp_enabled():
    """Whether scaled_dot_product_attention may use the memory-efficient kernel (a CUDA kernel)."""
    return _SDP_ENABLED["mem_efficient"]


def math_sdp_enabled():
    """Whether scaled_dot_product_attention may use the math kernel (True unless switched off)."""
    return _SDP_ENABLED["math"]


def cudnn_sdp_enabled():
    """Whether scaled_dot_product_attention may use the cuDNN kernel (a CUDA kernel)."""
    return _SDP_ENABLED["cudnn"]


def enable_flash_sdp(enabled: bool):
    """Allows or forbids the flash attention kernel."""
    _SDP_ENABLED["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool):
    """Allows or forbids the memory-efficient attention kernel."""
    _SDP_ENABLED["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool):
    """Allows or forbids the math attention kernel."""
    _SDP_ENABLED["math"] = bool(enabled)


def enable_cudnn_sdp(enabled: bool):
    """Allows or forbids the cuDNN attention kernel."""
    _SDP_ENABLED["cudnn"] = bool(enabled)


def sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
               enable_cudnn: bool = True):
    """Deprecated form of :func:`pylucid.nn.attention.sdpa_kernel`: a context manager setting the
    four switches for its block (warns with a FutureWarning, as PyTorch)."""
    warnings.warn("backends.cuda.sdp_kernel() is deprecated and will be removed; use "
                  "nn.attention.sdpa_kernel(), which takes a list of SDPBackend.", FutureWarning, stacklevel=2)
    return _sdp_state({"flash": bool(enable_flash), "math": bool(enable_math),
                       "mem_efficient": bool(enable_mem_efficient), "cudnn": bool(enable_cudnn)})
