"""matmul / mm / bmm / dot / linear: numpy's shape rules, BLAS layouts (transposed and strided
operands), dtypes, empty dims, gradients reduced over broadcast batch dims, autocast."""
import numpy as np
import pytest

import pylucid
from helpers import check_op, rand_array

F64 = pylucid.float64

SHAPES = [
    ((3,), (3,)),              # dot -> 0-d
    ((2, 3), (3, 4)),          # mm
    ((3,), (3, 4)),            # vector @ matrix
    ((2, 3), (3,)),            # matrix @ vector
    ((5, 2, 3), (3, 4)),       # batch @ shared matrix (folded into one gemm)
    ((2, 3), (5, 3, 4)),       # shared matrix @ batch
    ((2, 1, 3, 4), (5, 4, 2)), # broadcast batch dims on both sides
    ((4,), (2, 4, 3)),         # vector @ batch
    ((2, 4, 3), (3,)),         # batch @ vector
    ((1, 1), (1, 1)),
]


@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
def test_matmul_forward_and_grad(sa, sb):
    """Guards against numpy-rule mistakes (1-D promotion, batch broadcasting) and gradients not
    summed over broadcast batch dims (also non-contiguous inputs, grads accumulated twice)."""
    check_op(lambda a, b: a @ b, np.matmul, [sa, sb])


@pytest.mark.parametrize("dtype,tol", [(pylucid.float32, 1e-5), (pylucid.float16, 1e-2), (pylucid.bfloat16, 4e-2)])
def test_low_precision_dtypes(dtype, tol):
    """Guards against half types multiplied in 16 bits (or not converted back)."""
    a, b = rand_array((3, 5, 40)), rand_array((40, 6))
    x, y = pylucid.tensor(a, dtype=dtype), pylucid.tensor(b, dtype=dtype)
    out = x @ y
    assert out.dtype == dtype
    expected = np.asarray(x.to(F64)) @ np.asarray(y.to(F64))
    np.testing.assert_allclose(np.asarray(out.to(F64)), expected, rtol=tol, atol=tol)


def test_int64_matmul_is_exact():
    rng = np.random.default_rng(4)
    a, b = rng.integers(-50, 50, (2, 3, 7)), rng.integers(-50, 50, (7, 4))
    out = pylucid.tensor(a) @ pylucid.tensor(b)
    assert out.dtype == pylucid.int64
    np.testing.assert_array_equal(np.asarray(out), a @ b)
    np.testing.assert_array_equal(np.asarray(pylucid.tensor(b.T) @ pylucid.tensor(a[0].T)), b.T @ a[0].T)


@pytest.mark.parametrize("make", [
    lambda a: pylucid.from_numpy(np.ascontiguousarray(a.swapaxes(-1, -2))).transpose(-1, -2),  # column-major
    lambda a: pylucid._C._from_numpy(np.repeat(a, 2, axis=-1)[..., ::2]),                       # strided columns
    lambda a: pylucid._C._from_numpy(np.repeat(a, 3, axis=-2)[..., ::3, :]),                    # padded rows (ld > cols)
    lambda a: pylucid.from_numpy(np.ascontiguousarray(np.moveaxis(a, 0, -1))).permute(2, 0, 1),   # batch dim innermost
], ids=["transposed", "strided_cols", "padded_rows", "batch_inner"])
def test_noncontiguous_layouts(make):
    """Guards against passing a transposed or padded operand to BLAS with the wrong CBLAS_TRANSPOSE
    or leading dimension (BLAS reads garbage without failing)."""
    a, b = rand_array((3, 4, 5)), rand_array((3, 5, 6))
    for x, y in [(make(a), pylucid.tensor(b, dtype=F64)), (pylucid.tensor(a, dtype=F64), make(b)), (make(a), make(b))]:
        np.testing.assert_allclose(np.asarray(x), a)
        np.testing.assert_allclose(np.asarray(x @ y), a @ b, rtol=1e-12)
    a32, b32 = make(a.astype(np.float32)), make(b.astype(np.float32))  # sgemm takes the same layouts
    np.testing.assert_allclose(np.asarray(a32 @ b32), a @ b, rtol=1e-5, atol=1e-6)


def test_broadcast_stride_zero_operand():
    """Guards against an expanded (stride-0) operand being handed to BLAS as is."""
    a = rand_array((1, 4))
    x = pylucid.tensor(a, dtype=F64).expand(3, 4)
    y = pylucid.tensor(rand_array((4, 2)), dtype=F64)
    np.testing.assert_allclose(np.asarray(x @ y), np.broadcast_to(a, (3, 4)) @ np.asarray(y), rtol=1e-12)


def test_zero_size_dims():
    """Guards against crashes and uninitialised output for empty products (K = 0 gives zeros)."""
    assert (pylucid.ones(0, 3) @ pylucid.ones(3, 4)).shape == (0, 4)
    assert (pylucid.ones(2, 3) @ pylucid.ones(3, 0)).shape == (2, 0)
    z = pylucid.ones(2, 0, dtype=F64, requires_grad=True) @ pylucid.ones(0, 4, dtype=F64)
    assert z.tolist() == [[0.0] * 4] * 2
    z.sum().backward()
    assert (pylucid.ones(5, 2, 0) @ pylucid.ones(0, 3)).tolist() == [[[0.0] * 3] * 2] * 5
    assert (pylucid.ones(0, 2, 3) @ pylucid.ones(3, 4)).shape == (0, 2, 4)
    assert (pylucid.ones(0, dtype=pylucid.int64) @ pylucid.ones(0, dtype=pylucid.int64)).item() == 0


def test_large_float32_matches_numpy():
    a = np.random.default_rng(5).standard_normal((130, 257)).astype(np.float32)
    b = np.random.default_rng(6).standard_normal((257, 70)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(pylucid.from_numpy(a) @ pylucid.from_numpy(b)),
                               a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_shape_and_dtype_errors():
    """Guards against mismatched inner dims being multiplied anyway (or crashing) and against
    messages that do not name both shapes."""
    with pytest.raises(pylucid.ShapeMismatch, match=r"matmul: shapes \[2, 3\] and \[4, 5\] cannot be multiplied "
                                                    r"\(inner dims 3 and 4 differ\)"):
        pylucid.ones(2, 3) @ pylucid.ones(4, 5)
    with pytest.raises(ValueError, match=r"\[3\] and \[4\]"):
        pylucid.ones(3) @ pylucid.ones(4)
    with pytest.raises(pylucid.ShapeMismatch, match="matmul: shapes"):
        pylucid.ones(2, 2, 3) @ pylucid.ones(3, 3, 4)
    with pytest.raises(pylucid.ShapeMismatch, match="at least 1 dim"):
        pylucid.matmul(pylucid.tensor(2.0), pylucid.ones(3))
    with pytest.raises(pylucid.DtypeMismatch, match="same dtype, got float32 and float64"):
        pylucid.ones(2, 2) @ pylucid.ones(2, 2, dtype=F64)
    with pytest.raises(TypeError, match="bool"):
        pylucid.tensor([True]) @ pylucid.tensor([True])
    with pytest.raises(TypeError):
        pylucid.ones(2, 2) @ 3.0


def test_mm_bmm_dot():
    a, b, c = rand_array((2, 3)), rand_array((3, 4)), rand_array((5, 3, 4))
    t = lambda v: pylucid.tensor(v, dtype=F64)  # noqa: E731
    np.testing.assert_allclose(np.asarray(pylucid.mm(t(a), t(b))), a @ b)
    np.testing.assert_allclose(np.asarray(t(a).mm(t(b))), a @ b)
    d = rand_array((5, 2, 3))
    np.testing.assert_allclose(np.asarray(pylucid.bmm(t(d), t(c))), d @ c)
    np.testing.assert_allclose(pylucid.dot(t(a[0]), t(b[:, 0])).item(), a[0] @ b[:, 0])
    assert t(a[0]).dot(t(b[:, 0])).shape == ()
    np.testing.assert_allclose(np.asarray(t(a).matmul(t(b))), a @ b)
    with pytest.raises(pylucid.ShapeMismatch, match=r"mm: expected two 2-D tensors, got shapes \[5, 3, 4\]"):
        pylucid.mm(t(c), t(b))
    with pytest.raises(pylucid.ShapeMismatch, match="bmm: batch sizes differ"):
        pylucid.bmm(t(d[:2]), t(c))
    with pytest.raises(pylucid.ShapeMismatch, match="dot: expected two 1-D tensors"):
        pylucid.dot(t(a), t(b))
    with pytest.raises(pylucid.ShapeMismatch, match="dot: tensors of shapes"):
        pylucid.dot(t(a[0]), t(b[0]))
    check_op(pylucid.bmm, np.matmul, [(2, 3, 4), (2, 4, 2)])


def test_rmatmul():
    x = pylucid.tensor(rand_array((2, 3)), dtype=F64)
    y = pylucid.tensor(rand_array((3, 2)), dtype=F64)
    np.testing.assert_allclose(np.asarray(y.__rmatmul__(x)), np.asarray(x) @ np.asarray(y))
    assert x.__rmatmul__(3) is NotImplemented


def test_batched_weight_gradient_is_one_gemm_result():
    """Guards against the weight gradient of x[B, T, K] @ W[K, N] missing the batch sum."""
    a, w = rand_array((4, 6, 3)), rand_array((3, 5))
    x = pylucid.tensor(a, dtype=F64, requires_grad=True)
    W = pylucid.tensor(w, dtype=F64, requires_grad=True)
    g = rand_array((4, 6, 5))
    (x @ W).backward(pylucid.tensor(g, dtype=F64))
    np.testing.assert_allclose(np.asarray(W.grad), np.einsum("btk,btn->kn", a, g), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad), g @ w.T, rtol=1e-12)


def _linear_ref(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


@pytest.mark.parametrize("sx,sw,sb", [
    ((4, 3), (5, 3), (5,)),
    ((2, 4, 3), (5, 3), (5,)),
    ((3,), (5, 3), (5,)),
    ((2, 4, 3), (5, 3), None),
    ((2, 4, 3), (5, 3), (4, 5)),   # bias broadcast over the leading dim only
    ((2, 4, 3), (5, 3), ()),
])
def test_linear_forward_and_grad(sx, sw, sb):
    """Guards against the fused bias (gemm beta=1) being added twice or not at all, and the
    bias gradient not summed over broadcast dims."""
    if sb is None:
        check_op(lambda x, w: pylucid.linear(x, w), _linear_ref, [sx, sw])
    else:
        check_op(lambda x, w, b: pylucid.linear(x, w, b), _linear_ref, [sx, sw, sb])


def test_linear_node_and_errors():
    x = pylucid.ones(2, 3, requires_grad=True)
    w = pylucid.ones(4, 3, requires_grad=True)
    y = pylucid.linear(x, w)
    assert y.grad_fn.name() == "LinearBackward" and len(y.grad_fn.next_functions) == 3
    with pytest.raises(pylucid.ShapeMismatch, match=r"linear: input shape \[2, 3\] does not end in in_features = 4"):
        pylucid.linear(x, pylucid.ones(4, 4))
    with pytest.raises(pylucid.ShapeMismatch, match="linear: weight must be 2-D"):
        pylucid.linear(x, pylucid.ones(3))
    with pytest.raises(pylucid.ShapeMismatch, match="linear"):
        pylucid.linear(x, w, pylucid.ones(3))
    with pytest.raises(pylucid.DtypeMismatch, match="linear: expected all operands to have the same dtype"):
        pylucid.linear(x, w, pylucid.ones(4, dtype=F64))
    assert pylucid.linear(pylucid.ones(0, 3), w).shape == (0, 4)
    assert pylucid.linear(pylucid.ones(2, 0), pylucid.ones(4, 0), pylucid.ones(4)).tolist() == [[1.0] * 4] * 2
    xi = pylucid.tensor([[1, 2, 3]])
    assert pylucid.linear(xi, pylucid.tensor([[1, 1, 1], [0, 1, 0]]), pylucid.tensor([10, 20])).tolist() == [[16, 22]]


def test_autocast_promote_and_grads_in_input_dtype():
    """Guards against autocast leaving matmul/linear in float32, or handing bfloat16 gradients to
    float32 parameters (the cast back lives in the backward node)."""
    x = pylucid.tensor(rand_array((4, 3)), dtype=pylucid.float32, requires_grad=True)
    w = pylucid.tensor(rand_array((5, 3)), dtype=pylucid.float32, requires_grad=True)
    b = pylucid.tensor(rand_array((5,)), dtype=pylucid.float32, requires_grad=True)
    with pylucid.autocast(dtype=pylucid.bfloat16):
        y = pylucid.linear(x, w, b)
        z = x @ w.t()
    assert y.dtype == pylucid.bfloat16 and z.dtype == pylucid.bfloat16
    y.float().sum().backward()
    assert x.grad.dtype == w.grad.dtype == b.grad.dtype == pylucid.float32
    np.testing.assert_allclose(np.asarray(b.grad), np.full(5, 4.0))
    # bfloat16 rounds each weight to ~2^-9 relative: bound the error of the column sums by that
    # share of the summed magnitudes (a sum near 0 has no relative accuracy to test).
    wn = np.asarray(w.detach())
    np.testing.assert_allclose(np.asarray(x.grad), np.tile(wn.sum(0), (4, 1)), rtol=0, atol=np.abs(wn).sum(0).max() * 2**-7)
    assert pylucid.ops.schema("matmul").amp_policy == pylucid.ops.AmpPolicy.Promote
    assert pylucid.ops.schema("linear").amp_policy == pylucid.ops.AmpPolicy.Promote


def test_saved_input_modified_in_place_raises():
    a = pylucid.ones(2, 2, requires_grad=True)
    b = pylucid.ones(2, 2)
    y = a @ b
    b.add_(1.0)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        y.sum().backward()


def test_against_pytorch():
    """Guards against drift from PyTorch's matmul broadcasting and linear, forward and grads."""
    torch = pytest.importorskip("torch")
    for sa, sb in SHAPES:
        a, b = rand_array(sa), rand_array(sb)
        x, y = pylucid.tensor(a, dtype=F64, requires_grad=True), pylucid.tensor(b, dtype=F64, requires_grad=True)
        tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        out, tout = x @ y, tx @ ty
        np.testing.assert_allclose(np.asarray(out.detach()), tout.detach().numpy(), rtol=1e-12)
        (out * out).sum().backward()
        (tout * tout).sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(y.grad), ty.grad.numpy(), rtol=1e-10)
    a, w, bb = rand_array((2, 5, 3)), rand_array((4, 3)), rand_array((4,))
    ts = [torch.tensor(v, requires_grad=True) for v in (a, w, bb)]
    ps = [pylucid.tensor(v, dtype=F64, requires_grad=True) for v in (a, w, bb)]
    out, tout = pylucid.linear(*ps), torch.nn.functional.linear(*ts)
    np.testing.assert_allclose(np.asarray(out.detach()), tout.detach().numpy(), rtol=1e-12)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(np.asarray(p.grad), t.grad.numpy(), rtol=1e-10)
