"""Printing tensors the way PyTorch prints them, so a script's output reads (and diffs) the same.

PyTorch's rules (``torch/_tensor_str.py``), followed exactly: one formatter per tensor, chosen
from its nonzero finite values (read after summarising big tensors to their edge items):
- *int mode* when every such value is integral: ``1.``, ``-3.`` (a trailing dot marks a float);
- *sci mode* when max/min > 1000, max > 1e8 or min < 1e-4: ``1.2346e+05`` with ``precision`` digits;
- else fixed point with ``precision`` digits, ``0.1235``;
every element right-aligned to the widest one, lines wrapped at ``linewidth`` characters, tensors
with more than ``threshold`` elements summarised to ``edgeitems`` rows/columns around ``...``.
The suffixes follow: ``dtype=`` when the dtype is not the default float dtype, int64 or bool,
``size=`` for empty tensors that are not 1-d, then ``grad_fn=<...>`` or ``requires_grad=True``.

>>> import pylucid
>>> pylucid.tensor([1.0, 2.5, -3.0])
tensor([ 1.0000,  2.5000, -3.0000])
>>> pylucid.tensor([1e-5, 1.0])
tensor([1.0000e-05, 1.0000e+00])
>>> pylucid.tensor([[1, 2], [3, 40]])
tensor([[ 1,  2],
        [ 3, 40]])
"""
import contextlib
import dataclasses
import math
from typing import Optional

import numpy as _np

__all__ = ["set_printoptions", "get_printoptions", "printoptions"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: Optional[bool] = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Sets how tensors print, as ``torch.set_printoptions``: ``precision`` digits (4),
    ``threshold`` elements before summarising (1000), ``edgeitems`` kept at each end when
    summarising (3), ``linewidth`` (80), ``profile`` (``"default"``, ``"short"``, ``"full"``) and
    ``sci_mode`` (None chooses per tensor; True/False force scientific or fixed notation).

    >>> import pylucid
    >>> pylucid.set_printoptions(precision=2)
    >>> pylucid.tensor([1.12345])
    tensor([1.12])
    >>> pylucid.set_printoptions(profile="default")
    """
    for name, v in (("precision", precision), ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise (ValueError if isinstance(v, int) and not isinstance(v, bool) else TypeError)(
                f"set_printoptions: {name} must be a non-negative int, got {v!r}")
    if threshold is not None and (not isinstance(threshold, (int, float)) or isinstance(threshold, bool)):
        raise TypeError(f"set_printoptions: threshold must be a number, got {threshold!r}")
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"set_printoptions: sci_mode must be None, True or False, got {sci_mode!r}")
    if profile is not None:
        presets = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}
        if profile not in presets:
            raise ValueError(f"set_printoptions: profile must be 'default', 'short' or 'full', got {profile!r}")
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = presets[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict ``set_printoptions(**d)`` accepts."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that sets print options for its body and restores them after."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """PyTorch's per-tensor number format (see the module docstring); ``values`` is a flat numpy
    array of the (summarised) elements, as float64 for floating tensors."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        if not floating:
            for v in values.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        nz = values[_np.isfinite(values) & (values != 0)]
        if nz.size == 0:
            return
        a = _np.abs(nz)
        lo, hi = float(a.min()), float(a.max())
        self.int_mode = bool(_np.all(nz == _np.ceil(nz)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if PRINT_OPTS.sci_mode is None \
            else PRINT_OPTS.sci_mode
        vals = nz.tolist()
        if self.sci_mode:
            width = max(len(f"{v:.{p}e}") for v in vals)
        elif self.int_mode:
            width = max(len(f"{v:.0f}") for v in vals) + 1
        else:
            width = max(len(f"{v:.{p}f}") for v in vals)
        self.max_width = max(self.max_width, width)

    def format(self, v):
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = f"{v}"
        return (self.max_width - len(s)) * " " + s


def _summarized(arr):
    """The elements PyTorch reads to pick the format of a summarised tensor: the first and last
    ``edgeitems`` along every dim."""
    e = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        return _np.concatenate((arr[:e], arr[-e:])) if arr.shape[0] > 2 * e else arr
    if not e:
        return arr[:0]
    rows = list(range(e)) + list(range(arr.shape[0] - e, arr.shape[0])) if arr.shape[0] > 2 * e \
        else range(arr.shape[0])
    return _np.stack([_summarized(arr[i]) for i in rows])


def _vector_str(arr, indent, summarize, fmt):
    e = PRINT_OPTS.edgeitems
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    if summarize and not e:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * e:
        data = [fmt.format(v) for v in arr[:e].tolist()] + [" ..."] + [fmt.format(v) for v in arr[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nd_str(arr, indent, summarize, fmt):
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    e, n = PRINT_OPTS.edgeitems, arr.shape[0]
    if summarize and n > 2 * e:
        slices = [_nd_str(arr[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."] + \
                 [_nd_str(arr[i], indent + 1, summarize, fmt) for i in range(n - e, n)]
    else:
        slices = [_nd_str(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _body(arr, floating, indent):
    """The bracketed numbers of a non-empty tensor given as a numpy array."""
    summarize = arr.size > PRINT_OPTS.threshold
    shown = _summarized(arr) if summarize else arr
    fmt = _Formatter(shown.reshape(-1), floating)
    return _nd_str(arr, indent, summarize, fmt)


def _add_suffixes(s, suffixes, indent):
    parts = [s]
    last = len(s) - s.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


# pylucid's node for an op whose PyTorch node has another name (PyTorch records the op it
# decomposes into, or its "native" kernel): reshape of a contiguous tensor is a view, F.linear
# an addmm, cross_entropy ends in nll_loss, training-mode dropout is a multiplication by a mask.
_TORCH_NODE_NAMES = {
    "ReshapeBackward": "ViewBackward", "FlattenBackward": "ViewBackward", "UnflattenBackward": "ViewBackward",
    "MovedimBackward": "PermuteBackward", "NarrowBackward": "SliceBackward",
    "CrossEntropyBackward": "NllLossBackward", "DropoutBackward": "MulBackward",
    "LayerNormBackward": "NativeLayerNormBackward", "BatchNormBackward": "NativeBatchNormBackward",
    "GroupNormBackward": "NativeGroupNormBackward", "PadBackward": "ConstantPadNdBackward",
    "Log1pBackward": "Log1PBackward", "SoftsignBackward": "DivBackward", "TanhshrinkBackward": "SubBackward",
    "NormBackward": "LinalgVectorNormBackward",
}
# The node names of custom autograd Functions (``MyReLUBackward``), which PyTorch does not number.
CUSTOM_NODE_NAMES: set[str] = set()
# Ops whose PyTorch overload with a dim argument is numbered 1 (sum(dim), mean(dim)) and whose
# full reduction is 0 (max/min/median nodes carry their number in their own name).
_DIM_OVERLOAD = {"SumBackward": ("0", "1"), "MeanBackward": ("0", "1")}
# Ops whose common call is not PyTorch's first overload: clamp with number bounds (clamp(min=0),
# clip(0, 1)) is clamp.Scalar, overload 1 (clamp with tensor bounds, 0, records where here).
_OVERLOAD_NUMBER = {"ClampBackward": "1"}


def node_display_name(node, out=None):
    """The name PyTorch shows for a backward node (``AddBackward0``): PyTorch numbers the node of
    each overload of an op, and the first overload (``0``) is the one toy programs meet. With
    ``out``, the tensor the node produced, the name also follows the overload its shape tells
    (``AddmmBackward0`` for a batch of rows through F.linear, ``SumBackward1`` for a sum over a dim)."""
    name = node.name()
    if not name.endswith("Backward") or name in CUSTOM_NODE_NAMES:
        return name  # AccumulateGrad, and custom Functions' nodes, are not numbered
    if name == "LinearBackward" and (out is None or out.dim() == 2):
        fns = node.next_functions
        return "AddmmBackward0" if len(fns) > 2 and fns[2][0] is not None else "MmBackward0"
    if out is not None:
        nd = out.dim()
        if name == "LinearBackward":
            return "ViewBackward0"
        if name == "MatmulBackward":
            return {0: "DotBackward0", 1: "MvBackward0", 2: "MmBackward0", 3: "BmmBackward0"}.get(nd, "UnsafeViewBackward0")
        if name in _DIM_OVERLOAD:
            return name + _DIM_OVERLOAD[name][0 if nd == 0 else 1]
    elif name in _DIM_OVERLOAD:
        return name + _DIM_OVERLOAD[name][0]
    elif name == "MatmulBackward":
        return "MmBackward0"
    return _TORCH_NODE_NAMES.get(name, name) + _OVERLOAD_NUMBER.get(name, "0")


def return_type_repr(self):
    """PyTorch's print of a ``(values, indices)`` result: ``torch.return_types.max(`` then one
    field per line."""
    fields = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
    return f"pylucid.return_types.{type(self).__name__}(\n{fields})"


def tensor_repr(t, arr, default_dtype, grad_fn_name, prefix="tensor("):
    """PyTorch's ``repr`` of tensor ``t`` whose values are the numpy array ``arr`` (float64 for
    floating dtypes); ``grad_fn_name`` is None for a tensor without a graph."""
    from ._C import dtype
    indent = len(prefix)
    suffixes = []
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if t.dtype != default_dtype:
            suffixes.append(f"dtype={t.dtype!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        if t.dtype not in (default_dtype, dtype.int64, dtype.bool):
            suffixes.append(f"dtype={t.dtype!r}")
        body = _body(arr, t.dtype.is_floating_point, indent)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
