"""float16 and bfloat16 elementwise ops run the float32 kernel by blocks (kernels/cpu/half_map.h).

Half types are storage types: every op computes them in float32 and rounds the result once.
These tests pin that down bit for bit, against the float32 op on the same values rounded to the
half type, on shapes that cross the block size, split over threads, and operands that are
non-contiguous, broadcast or written in place. The float32 reference reads a non-contiguous
copy, so it runs the same generic float32 functor (not a vectorised contiguous kernel).
"""
import numpy as np
import pytest

import pylucid as pl
import pylucid.nn.functional as F

from helpers import rand_array

HALF = [pl.float16, pl.bfloat16]
# (rows, cols): one ragged block, several blocks, and enough elements to split over threads.
SHAPES = [(3, 5), (37, 41), (300, 250)]


def strided_f32(x):
    """x's values as a non-contiguous float32 tensor."""
    return x.float().t().contiguous().t()


def bits(t):
    return np.asarray(t.float()).view(np.uint32)


def assert_same(out, ref, dtype):
    assert out.dtype == ref.to(dtype).dtype == dtype
    np.testing.assert_array_equal(bits(out), bits(ref.to(dtype)))


UNARY = [
    ("exp", pl.exp, False),
    ("log", pl.log, True),
    ("sqrt", pl.sqrt, True),
    ("tanh", pl.tanh, False),
    ("sigmoid", pl.sigmoid, False),
    ("sin", pl.sin, False),
    ("erf", pl.erf, False),
    ("neg", pl.neg, False),
    ("abs", pl.abs, False),
    ("round", pl.round, False),
    ("gelu", F.gelu, False),
    ("silu", F.silu, False),
    ("elu", F.elu, False),
    ("softplus", F.softplus, False),
    ("hardswish", F.hardswish, False),
    ("sign", pl.sign, False),
]


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name,fn,positive", UNARY, ids=[u[0] for u in UNARY])
def test_unary_equals_float32_rounded(name, fn, positive, shape, dtype):
    """Guards against the half path computing anything other than the float32 functor rounded
    once: a wrong block offset, a ragged last block, or a thread split dropping elements."""
    x = pl.tensor(rand_array(shape, low=-4, high=4, positive=positive), dtype=dtype)
    assert_same(fn(x), fn(strided_f32(x)), dtype)
    xt = x.t()  # non-contiguous half input
    assert_same(fn(xt), fn(strided_f32(xt)), dtype)


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("shape", SHAPES)
def test_isnan_isfinite_bool_outputs(shape, dtype):
    """Guards against a bool result of the half path written as floats (or at the wrong stride)."""
    a = rand_array(shape)
    a.flat[::7] = np.nan
    a.flat[::11] = np.inf
    x = pl.tensor(a, dtype=dtype)
    for fn in (pl.isnan, pl.isfinite):
        out = fn(x.t())
        assert out.dtype == pl.bool
        np.testing.assert_array_equal(np.asarray(out), np.asarray(fn(strided_f32(x.t()))))


BINARY = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
    ("pow", lambda a, b: pl.pow(a.abs(), b)),
    ("maximum", pl.maximum),
    ("remainder", pl.remainder),
]


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name,fn", BINARY, ids=[b[0] for b in BINARY])
def test_binary_equals_float32_rounded(name, fn, shape, dtype):
    """Guards against broadcast (stride 0) or transposed half operands read at the wrong place."""
    a = pl.tensor(rand_array(shape, low=-3, high=3), dtype=dtype)
    b = pl.tensor(rand_array(shape, low=0.5, high=2), dtype=dtype)
    row = pl.tensor(rand_array((shape[1],), low=0.5, high=2), dtype=dtype)
    assert_same(fn(a, b), fn(strided_f32(a), strided_f32(b)), dtype)
    assert_same(fn(a, row), fn(strided_f32(a), row.float()), dtype)
    assert_same(fn(a.t(), b.t()), fn(strided_f32(a.t()), strided_f32(b.t())), dtype)


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_comparisons_give_bool(dtype):
    a = pl.tensor(rand_array((37, 41)), dtype=dtype)
    b = pl.tensor(rand_array((41,)), dtype=dtype)
    for op in (lambda x, y: x < y, lambda x, y: x == y, lambda x, y: x >= y):
        out = op(a.t().t(), b)
        assert out.dtype == pl.bool
        np.testing.assert_array_equal(np.asarray(out), np.asarray(op(strided_f32(a), b.float())))


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("shape", SHAPES)
def test_inplace_equals_float32_rounded(shape, dtype):
    """Guards against the in-place half path reading a block after writing it."""
    a = pl.tensor(rand_array(shape), dtype=dtype)
    row = pl.tensor(rand_array((shape[1],)), dtype=dtype)
    x = a.clone()
    x.mul_(row).add_(pl.tensor(2.0, dtype=dtype)).relu_()
    ref_rounded = ((strided_f32(a) * row.float()).to(dtype).float() + 2.0).to(dtype).float().relu()
    assert_same(x, ref_rounded, dtype)


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("name,fn,positive", [u for u in UNARY if u[0] in ("log", "sin", "gelu", "elu", "softplus")],
                         ids=["log", "sin", "gelu", "elu", "softplus"])
def test_backward_equals_float32_rounded(name, fn, positive, dtype):
    """Guards against the half backward (df on float32 blocks) differing from the float32 formula
    rounded once, for ops whose backward reads the input."""
    a = rand_array((37, 41), low=-3, high=3, positive=positive)
    g = rand_array((37, 41))
    x = pl.tensor(a, dtype=dtype, requires_grad=True)
    fn(x).backward(pl.tensor(g, dtype=dtype))
    xf = strided_f32(x.detach()).requires_grad_()
    fn(xf).backward(strided_f32(pl.tensor(g, dtype=dtype)))
    assert x.grad.dtype == dtype
    assert_same(x.grad, xf.grad, dtype)
