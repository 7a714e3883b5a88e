"""float32 gemm: the AVX-512 kernel (kernels/cpu/sgemm.cpp) that takes products of at least 32
rows (and n, k in its range, matmul.cpp) on CPUs that have it, and OpenBLAS for the rest. Edge tiles (every remainder of the 14-row and
32-column panels), the four transpose combinations, leading dims past the row length (sliced and
transposed views), beta 1 (linear's bias), NaN/Inf, blocked k and N, and results that do not
depend on the thread count. References are float64 numpy products; the tolerance is the float32
error bound of a k-term dot product, (k + 2) u sum_p |a_ip b_pj|."""
import numpy as np
import pytest

import pylucid
import pylucid.nn.functional as F

U32 = 2.0 ** -24


@pytest.fixture
def threads():
    """Restores the pool size a test changes."""
    n = pylucid.get_num_threads()
    yield
    pylucid.set_num_threads(n)


def _operand(rng, rows, cols, trans, pad):
    """A float32 tensor op(X) of shape (rows, cols) stored transposed or not, with `pad` extra
    stored columns (leading dim > row length); also its float64 values."""
    if trans:
        base = rng.standard_normal((cols, rows + pad)).astype(np.float32)
        return pylucid.tensor(base)[:, :rows].t(), base[:, :rows].T.astype(np.float64)
    base = rng.standard_normal((rows, cols + pad)).astype(np.float32)
    return pylucid.tensor(base)[:, :cols], base[:, :cols].astype(np.float64)


def _check(out, a, b, bias=None):
    ref = a @ b + (0 if bias is None else bias)
    bound = (a.shape[1] + 2) * U32 * (np.abs(a) @ np.abs(b) + (0 if bias is None else np.abs(bias))) + 1e-30
    err = np.abs(np.asarray(out, dtype=np.float64) - ref)
    assert err.shape == ref.shape
    assert np.all(err <= bound), f"max err/bound {np.max(err / bound):.3g}"


# (m, n, k): m 96..113 covers every remainder of 14-row panels (short 4-row panels for 1..8,
# a zero-padded full panel for 9..13); n covers every remainder of 32-column panels; k from 1.
KERNEL_SHAPES = [
    (96, 129, 1), (97, 130, 2), (98, 131, 3), (99, 132, 5), (100, 133, 7), (101, 134, 16),
    (102, 135, 17), (103, 136, 31), (104, 137, 33), (105, 138, 47), (106, 139, 64),
    (107, 140, 70), (108, 141, 1), (109, 142, 13), (110, 143, 29), (111, 144, 61),
    (112, 145, 2), (113, 146, 9), (126, 147, 37), (127, 148, 41), (128, 149, 43),
    (129, 150, 53), (130, 151, 59), (131, 152, 67), (140, 153, 19), (150, 154, 23),
    (200, 155, 11), (97, 156, 3), (98, 157, 4), (99, 158, 6), (100, 159, 8), (101, 160, 10),
    (102, 161, 12), (103, 32, 14), (104, 61, 15), (105, 62, 18), (106, 63, 20), (107, 64, 21),
    (108, 26, 22), (109, 27, 24), (110, 28, 26), (111, 29, 27), (112, 30, 28), (113, 31, 30),
    (128, 256, 784), (256, 784, 128), (128, 256, 256), (128, 256, 10),
]
# Few rows (32.. on the kernel), the OpenBLAS path (few rows or columns), k = 0.
SMALL_SHAPES = [(32, 32, 5), (33, 61, 9), (47, 160, 33), (61, 96, 70), (16, 64, 20), (1, 1, 1), (1, 70, 5), (70, 1, 3),
                (1, 1, 70), (5, 7, 0), (13, 17, 19), (64, 64, 64), (128, 10, 256), (10, 256, 128), (67, 53, 71)]
LAYOUTS = [(False, False), (False, True), (True, False), (True, True)]


@pytest.mark.parametrize("ta,tb", LAYOUTS, ids=["nn", "nt", "tn", "tt"])
def test_layouts_edges_and_threads(ta, tb, threads):
    """Guards against wrong edge tiles (rows or columns past the panel, k not a multiple of 16
    in the transposing pack), a transpose or leading dim read wrong, and sums that change with
    the thread count (same bits on 1 and 2 threads)."""
    rng = np.random.default_rng(7)
    for i, (m, n, k) in enumerate(KERNEL_SHAPES + SMALL_SHAPES):
        a, a64 = _operand(rng, m, k, ta, pad=i % 3)
        b, b64 = _operand(rng, k, n, tb, pad=(i + 1) % 4)
        pylucid.set_num_threads(1)
        one = np.asarray(a @ b)
        pylucid.set_num_threads(2)
        two = np.asarray(a @ b)
        _check(one, a64, b64)
        np.testing.assert_array_equal(one, two, err_msg=f"thread count changed the bits at {m}x{n}x{k}")


@pytest.mark.parametrize("m,n,k", [(300, 150, 1000), (100, 262, 1000), (257, 263, 269), (400, 30, 100),
                                   (300, 31, 1000), (1500, 96, 300)])
def test_blocked_products(m, n, k, threads):
    """Guards against the packed blocks of A (128 K floats) or B (256 K floats, rounded down to
    whole panels: 100x262x1000 needs two) going wrong when a product needs several, and races
    between blocks on 2 threads (split by columns with private panels, or by rows with shared B
    panels: one column panel, n <= 32, splits by rows)."""
    rng = np.random.default_rng(m + n + k)
    for ta, tb in LAYOUTS:
        a, a64 = _operand(rng, m, k, ta, pad=3)
        b, b64 = _operand(rng, k, n, tb, pad=1)
        pylucid.set_num_threads(1)
        one = np.asarray(a @ b)
        pylucid.set_num_threads(2)
        two = np.asarray(a @ b)
        _check(one, a64, b64)
        np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("m,n,k", [(128, 256, 784), (97, 131, 45), (100, 30, 7), (5, 9, 11)])
def test_linear_bias_accumulates(m, n, k, threads):
    """Guards against beta = 1 (linear writes its bias into the output, then the product adds
    onto it) losing the bias or adding it twice."""
    rng = np.random.default_rng(k)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    outs = []
    for nt in (1, 2):
        pylucid.set_num_threads(nt)
        outs.append(np.asarray(F.linear(pylucid.tensor(x), pylucid.tensor(w), pylucid.tensor(bias))))
    _check(outs[0], x.astype(np.float64), w.T.astype(np.float64), bias.astype(np.float64))
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("ta,tb", LAYOUTS, ids=["nn", "nt", "tn", "tt"])
def test_nan_inf_propagate(ta, tb):
    """Guards against NaN or Inf lost or spread by the zero padding of edge panels: a NaN in
    op(A) row i poisons row i of C only, an Inf in op(B) column j column j only."""
    rng = np.random.default_rng(3)
    m, n, k = 101, 75, 37
    a = rng.uniform(0.5, 1.5, (m, k)).astype(np.float32)
    b = rng.uniform(0.5, 1.5, (k, n)).astype(np.float32)
    a[3, 5] = np.nan
    a[100, 36] = np.nan
    b[7, 74] = np.inf
    b[0, 2] = -np.inf
    ta_ = pylucid.tensor(np.ascontiguousarray(a.T)).t() if ta else pylucid.tensor(a)
    tb_ = pylucid.tensor(np.ascontiguousarray(b.T)).t() if tb else pylucid.tensor(b)
    out = np.asarray(ta_ @ tb_)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(ref))
    np.testing.assert_array_equal(np.sign(out[np.isinf(ref)]), np.sign(ref[np.isinf(ref)]))


def test_output_never_read(threads):
    """Guards against beta = 0 reading the output buffer: freed NaN-filled blocks of the output's
    size are what the allocator hands back, and a product must overwrite them, not add to them."""
    rng = np.random.default_rng(11)
    a = pylucid.tensor(rng.standard_normal((128, 256)).astype(np.float32))
    b = pylucid.tensor(rng.standard_normal((256, 96)).astype(np.float32))
    for nt in (1, 2):
        pylucid.set_num_threads(nt)
        for _ in range(4):
            junk = pylucid.full((128, 96), float("nan"), dtype=pylucid.float32)
            del junk
            assert np.isfinite(np.asarray(a @ b)).all()


def test_matches_torch(threads):
    """Guards against the training-step products drifting from PyTorch's sgemm beyond rounding."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    w = rng.standard_normal((256, 784)).astype(np.float32)
    g = rng.standard_normal((128, 256)).astype(np.float32)
    ours = [np.asarray(pylucid.tensor(x) @ pylucid.tensor(w).t()), np.asarray(pylucid.tensor(g).t() @ pylucid.tensor(x))]
    theirs = [(torch.tensor(x) @ torch.tensor(w).t()).numpy(), (torch.tensor(g).t() @ torch.tensor(x)).numpy()]
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-4, atol=1e-3)
