"""``pylucid.testing``: ``assert_close`` with PyTorch's default tolerances and message style."""
import math

import numpy as np

from .. import _C
from .._C import Tensor

__all__ = ["assert_close", "make_tensor"]

# PyTorch's defaults: (rtol, atol) per dtype; integer and bool dtypes compare exactly.
_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def _dtype_name(t):
    return repr(t.dtype).replace("pylucid.", "") if isinstance(t, Tensor) else None


def _as_array(x):
    if isinstance(x, Tensor):
        return np.asarray(x.detach().to(_C.dtype.float64) if x.dtype.is_floating_point else x.detach())
    return np.asarray(x)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raises ``AssertionError`` unless ``actual`` and ``expected`` are close:
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with PyTorch's default
    ``rtol``/``atol`` for the dtype (float32: 1.3e-6 and 1e-5, float64: 1e-7 and 1e-7, float16:
    1e-3 and 1e-5, bfloat16: 1.6e-2 and 1e-5, exact for integers). Shapes and (by default) dtypes
    must match. Sequences and mappings are compared element by element.

    >>> import pylucid
    >>> assert_close(pylucid.tensor([1.0, 2.0]), pylucid.tensor([1.0, 2.0 + 1e-7]))
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {'rtol' if rtol is None else 'atol'}.")
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            raise AssertionError(f"The keys of the mappings do not match: {sorted(actual)} != {sorted(expected)}")
        for k in actual:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, Tensor) != isinstance(expected, Tensor):
        raise AssertionError(f"Expected both inputs to be Tensors or both numbers, got {type(actual).__name__} "
                             f"and {type(expected).__name__}")
    if isinstance(actual, Tensor):
        if tuple(actual.shape) != tuple(expected.shape):
            raise AssertionError(msg or f"The values for attribute 'shape' do not match: {tuple(actual.shape)} != "
                                        f"{tuple(expected.shape)}.")
        if check_dtype and actual.dtype != expected.dtype:
            raise AssertionError(msg or f"The values for attribute 'dtype' do not match: {actual.dtype!r} != "
                                        f"{expected.dtype!r}.")
        name = _dtype_name(actual)
        default = _TOL.get(name, (0.0, 0.0))
        if _dtype_name(expected) in _TOL:
            ed = _TOL[_dtype_name(expected)]
            default = (max(default[0], ed[0]), max(default[1], ed[1]))
    else:
        if not all(isinstance(v, (int, float, bool, complex)) for v in (actual, expected)):
            raise AssertionError(f"No comparison pair for {type(actual).__name__} and {type(expected).__name__}")
        default = _TOL["float64"] if isinstance(actual, float) or isinstance(expected, float) else (0.0, 0.0)
    if rtol is None:
        rtol, atol = default
    a, e = _as_array(actual).astype(np.float64), _as_array(expected).astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - e)
        ok = diff <= atol + rtol * np.abs(e)
        ok |= a == e  # infinities of the same sign
        if equal_nan:
            ok |= np.isnan(a) & np.isnan(e)
    if ok.all():
        return
    if msg is not None:
        raise AssertionError(msg)
    bad = ~ok
    n, total = int(bad.sum()), a.size
    flat_bad = np.flatnonzero(bad.reshape(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = diff / np.abs(e)
    abs_i = int(flat_bad[np.nanargmax(diff.reshape(-1)[flat_bad])]) if np.isfinite(diff.reshape(-1)[flat_bad]).any() else int(flat_bad[0])
    rel_i = int(flat_bad[np.nanargmax(rel.reshape(-1)[flat_bad])]) if np.isfinite(rel.reshape(-1)[flat_bad]).any() else int(flat_bad[0])
    idx = lambda i: tuple(int(v) for v in np.unravel_index(i, a.shape)) if a.ndim else ()  # noqa: E731
    kind = "Tensor-likes" if isinstance(actual, Tensor) else "Scalars"
    if a.size == 1 and not isinstance(actual, Tensor):
        raise AssertionError(f"Scalars are not close!\n\nExpected {e.item()} but got {a.item()}.\n"
                             f"Absolute difference: {diff.item()} (up to {atol} allowed)\n"
                             f"Relative difference: {rel.item()} (up to {rtol} allowed)")
    raise AssertionError(
        f"{kind} are not close!\n\nMismatched elements: {n} / {total} ({100.0 * n / total:.1f}%)\n"
        f"Greatest absolute difference: {diff.reshape(-1)[abs_i]} at index {idx(abs_i)} (up to {atol} allowed)\n"
        f"Greatest relative difference: {rel.reshape(-1)[rel_i]} at index {idx(rel_i)} (up to {rtol} allowed)")




def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with values drawn uniformly from ``[low, high)``, drawn from the
    global generator in the same order as PyTorch's ``torch.testing.make_tensor`` (so a seeded
    program gets the same values): floats default to ``[-9, 9)``, integers to ``[-9, 10)``, bool to
    {False, True}. ``noncontiguous=True`` draws twice the last dim and returns every second
    element; ``exclude_zero=True`` replaces zeros by the smallest positive step (the dtype's tiny
    for floats, 1 for integers), as PyTorch does.

    >>> import pylucid
    >>> t = make_tensor(2, 3, dtype=pylucid.float64, low=-1, high=1)
    >>> t.shape, bool((t.abs() <= 1).all())
    (pylucid.Size([2, 3]), True)
    """
    import pylucid  # noqa: PLC0415

    from .._device import _check_device  # noqa: PLC0415

    _check_device(device, "make_tensor")
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(d) for d in shape)
    floating = dtype.is_floating_point
    if requires_grad and not floating:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got {dtype=}")
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    draw = (*shape[:-1], 2 * shape[-1]) if noncontiguous else shape
    if dtype == _C.dtype.bool:
        result = pylucid.randint(0, 2, draw, dtype=_C.dtype.bool)
    else:
        info = pylucid.finfo(dtype) if floating else pylucid.iinfo(dtype)
        lo, hi = (-9 if low is None else low), ((9 if floating else 10) if high is None else high)
        if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
        if lo > hi or (lo == hi and not floating):
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        top = info.max + (1 if not floating and dtype != pylucid.int64 else 0)
        lo, hi = min(max(lo, info.min), top), min(max(hi, info.min), top)
        if floating:
            result = pylucid.empty(draw, dtype=dtype)
            if hi - lo >= info.max:
                result.uniform_(lo / 2, hi / 2).mul_(2)
            else:
                result.uniform_(lo, hi)
        else:
            result = pylucid.randint(math.ceil(lo), math.ceil(hi), draw, dtype=dtype)
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        result = pylucid.where(result == 0, pylucid.full_like(result, 1 if not floating else pylucid.finfo(dtype).tiny),
                               result)
    if floating:
        result.requires_grad_(requires_grad)
    return result
