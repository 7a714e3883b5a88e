"""CUDA backend flags: not built in pylucid. The precision switches scripts set before training
(``backends.cuda.matmul.allow_tf32 = True``) are kept and have no effect: float32 products are
always computed in float32 here."""
__all__ = ["is_built", "matmul"]


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
