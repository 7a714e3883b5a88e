"""linalg decompositions (cholesky, qr, eigh, eigvalsh, svd, svdvals, pinv, lstsq, matrix_rank,
cholesky_ex, inv_ex) and the top-level spellings: numpy-checked values, float64 gradcheck and
gradgradcheck (on batched and non-contiguous inputs), named tuples, typed errors, PyTorch's numbers."""
import warnings

import numpy as np
import pytest

import pylucid
from pylucid import linalg as LA
from pylucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)


def _t(a, grad=True):
    return pylucid.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _nc(a, grad=True):
    """A non-contiguous float64 tensor equal to ``a`` (built transposed, transposed back)."""
    t = pylucid.from_numpy(np.ascontiguousarray(np.swapaxes(np.asarray(a, dtype=np.float64), -1, -2))).transpose(-1, -2)
    assert not t.is_contiguous()
    return t.requires_grad_(grad)


def _spd(X):
    """A symmetric positive-definite function of an arbitrary square X (keeps gradcheck's
    perturbations symmetric)."""
    n = X.shape[-1]
    return X @ X.transpose(-2, -1) + pylucid.eye(n, dtype=X.dtype) * n


def _sym(X):
    return X + X.transpose(-2, -1)


def _signfix(U, Vh=None):
    """Eigen/singular vectors with the sign of their first row made positive (a gauge-invariant
    function of them for gradcheck)."""
    s = U[..., :1, :].sign()
    return (U * s,) if Vh is None else (U * s, Vh * s.transpose(-2, -1))


# ---- values --------------------------------------------------------------------------------

def test_values_against_numpy():
    A = RNG.standard_normal((2, 5, 3))
    S = A.transpose(0, 2, 1) @ A + np.eye(3)
    L = LA.cholesky(_t(S, False)).numpy()
    np.testing.assert_allclose(L, np.linalg.cholesky(S), atol=1e-12)
    np.testing.assert_allclose(LA.cholesky(_t(S, False), upper=True).numpy(), np.swapaxes(L, -1, -2), atol=1e-12)
    w, V = LA.eigh(_t(S, False))
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(S), atol=1e-12)
    np.testing.assert_allclose((V.numpy() * w.numpy()[..., None, :]) @ np.swapaxes(V.numpy(), -1, -2), S, atol=1e-10)
    np.testing.assert_allclose(LA.eigvalsh(_t(S, False)).numpy(), np.linalg.eigvalsh(S), atol=1e-12)
    Q, R = LA.qr(_t(A, False))
    assert tuple(Q.shape) == (2, 5, 3) and tuple(R.shape) == (2, 3, 3)
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), A, atol=1e-12)
    np.testing.assert_allclose(np.triu(R.numpy()), R.numpy())
    Qc, Rc = LA.qr(_t(A, False), mode="complete")
    assert tuple(Qc.shape) == (2, 5, 5) and tuple(Rc.shape) == (2, 5, 3)
    Qr, Rr = LA.qr(_t(A, False), mode="r")
    assert Qr.numel() == 0 and np.allclose(np.abs(Rr.numpy()), np.abs(R.numpy()))
    U, s, Vh = LA.svd(_t(A, False))
    assert tuple(U.shape) == (2, 5, 5) and tuple(Vh.shape) == (2, 3, 3)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(A, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose((U.numpy()[..., :3] * s.numpy()[..., None, :]) @ Vh.numpy(), A, atol=1e-12)
    np.testing.assert_allclose(U.numpy() @ np.swapaxes(U.numpy(), -1, -2), np.broadcast_to(np.eye(5), (2, 5, 5)),
                               atol=1e-12)
    np.testing.assert_allclose(LA.svdvals(_t(A, False)).numpy(), np.linalg.svd(A, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(LA.pinv(_t(A, False)).numpy(), np.linalg.pinv(A), atol=1e-12)
    B = RNG.standard_normal((2, 5, 2))
    X = LA.lstsq(_t(A, False), _t(B, False)).solution.numpy()
    for i in range(2):
        np.testing.assert_allclose(X[i], np.linalg.lstsq(A[i], B[i], rcond=None)[0], atol=1e-12)


def test_matrix_rank_and_tolerances():
    A = RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 5))
    assert LA.matrix_rank(_t(A, False)).item() == 2
    assert LA.matrix_rank(_t(A, False)).dtype == pylucid.int64
    batch = np.stack([A, RNG.standard_normal((4, 5))])
    assert LA.matrix_rank(_t(batch, False)).tolist() == [2, 4]
    assert LA.matrix_rank(_t(np.diag([1.0, 1e-3, 1e-9]), False), atol=1e-6).item() == 2
    assert LA.matrix_rank(_t(np.diag([1.0, 1e-3, 1e-9]), False), rtol=1e-2).item() == 1
    assert LA.matrix_rank(_t(np.diag([2.0, -1.0, 0.0]), False), hermitian=True).item() == 2
    P = LA.pinv(_t(np.diag([2.0, 1e-9]), False), atol=1e-6).numpy()
    np.testing.assert_allclose(P, np.diag([0.5, 0.0]))


def test_named_tuples_print_like_torch():
    r = LA.eigh(_t(np.eye(2), False))
    assert type(r).__name__ == "linalg_eigh" and r._fields == ("eigenvalues", "eigenvectors")
    assert repr(r).startswith("pylucid.return_types.linalg_eigh(\neigenvalues=tensor(")
    assert LA.svd(_t(np.eye(2), False))._fields == ("U", "S", "Vh")
    assert LA.qr(_t(np.eye(2), False))._fields == ("Q", "R")
    assert LA.lstsq(_t(np.eye(2), False), _t(np.eye(2), False))._fields == ("solution", "residuals", "rank",
                                                                             "singular_values")
    assert LA.cholesky_ex(_t(np.eye(2), False))._fields == ("L", "info")
    assert LA.inv_ex(_t(np.eye(2), False))._fields == ("inverse", "info")
    assert type(pylucid.svd(_t(np.eye(2), False))).__name__ == "svd"
    assert pylucid.svd(_t(np.eye(2), False))._fields == ("U", "S", "V")


def test_lstsq_drivers_fill_what_torch_fills():
    A, B = _t(RNG.standard_normal((6, 3)), False), _t(RNG.standard_normal((6, 2)), False)
    r = LA.lstsq(A, B)
    assert r.residuals.numel() == 0 and r.rank.item() == 3 and r.singular_values.numel() == 0
    r = LA.lstsq(A, B, driver="gelsd")
    X = r.solution.numpy()
    np.testing.assert_allclose(r.residuals.numpy(), ((A.numpy() @ X - B.numpy()) ** 2).sum(0), atol=1e-12)
    np.testing.assert_allclose(r.singular_values.numpy(), np.linalg.svd(A.numpy(), compute_uv=False), atol=1e-12)
    r = LA.lstsq(A, B, driver="gels")
    assert r.rank.numel() == 0 and r.residuals.numel() == 2
    v = LA.lstsq(A, B[:, 0]).solution
    assert tuple(v.shape) == (3,)
    np.testing.assert_allclose(v.numpy(), X[:, 0], atol=1e-12)


def test_ex_variants_report_instead_of_raising():
    good, bad = np.eye(3) * 2, -np.eye(3)
    L, info = LA.cholesky_ex(_t(np.stack([good, bad]), False))
    assert info.tolist() == [0, 1]
    np.testing.assert_allclose(L.numpy()[0], np.eye(3) * np.sqrt(2))
    assert np.isnan(L.numpy()[1]).all()
    with pytest.raises(LA.LinAlgError):
        LA.cholesky_ex(_t(bad, False), check_errors=True)
    inv, info = LA.inv_ex(_t(np.stack([good, np.zeros((3, 3))]), False))
    assert info[0].item() == 0 and info[1].item() > 0
    np.testing.assert_allclose(inv.numpy()[0], np.eye(3) / 2)


def test_top_level_spellings():
    A = RNG.standard_normal((4, 3))
    U, S, V = pylucid.svd(_t(A, False))
    assert tuple(U.shape) == (4, 3) and tuple(V.shape) == (3, 3)
    np.testing.assert_allclose((U.numpy() * S.numpy()) @ V.numpy().T, A, atol=1e-12)
    U, S, V = pylucid.svd(_t(A, False), some=False)
    assert tuple(U.shape) == (4, 4)
    U, S, V = pylucid.svd(_t(A, False), compute_uv=False)
    assert tuple(U.shape) == (4, 4) and tuple(V.shape) == (3, 3) and not U.numpy().any()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Q, R = pylucid.qr(_t(A, False))
        assert tuple(Q.shape) == (4, 3)
        assert tuple(pylucid.qr(_t(A, False), some=False).Q.shape) == (4, 4)
        Sm = A.T @ A + np.eye(3)
        np.testing.assert_allclose(pylucid.cholesky(_t(Sm, False)).numpy(), np.linalg.cholesky(Sm), atol=1e-12)
        np.testing.assert_allclose(_t(Sm, False).cholesky(upper=True).numpy(), np.linalg.cholesky(Sm).T, atol=1e-12)
    np.testing.assert_allclose(pylucid.pinverse(_t(A, False)).numpy(), np.linalg.pinv(A), atol=1e-12)
    np.testing.assert_allclose(_t(A, False).pinverse().numpy(), np.linalg.pinv(A), atol=1e-12)
    Sm = A.T @ A + np.eye(3)
    L = np.linalg.cholesky(Sm)
    B = RNG.standard_normal((3, 2))
    np.testing.assert_allclose(pylucid.cholesky_solve(_t(B, False), _t(L, False)).numpy(), np.linalg.solve(Sm, B),
                               atol=1e-12)
    np.testing.assert_allclose(pylucid.cholesky_solve(_t(B, False), _t(L.T, False), upper=True).numpy(),
                               np.linalg.solve(Sm, B), atol=1e-12)
    np.testing.assert_allclose(pylucid.cholesky_inverse(_t(L, False)).numpy(), np.linalg.inv(Sm), atol=1e-12)


# ---- gradients ----------------------------------------------------------------------------

def _check(fn, *inputs, double=True):
    assert gradcheck(fn, inputs)
    if double:
        assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("make", [_t, _nc])
def test_cholesky_grad(make):
    X = make(RNG.standard_normal((2, 3, 3)))
    _check(lambda x: LA.cholesky(_spd(x)), X)
    _check(lambda x: LA.cholesky(_spd(x), upper=True), X, double=False)


@pytest.mark.parametrize("make", [_t, _nc])
def test_eigh_grad(make):
    X = make(RNG.standard_normal((2, 3, 3)))
    _check(lambda x: LA.eigh(_sym(x)).eigenvalues, X)
    _check(lambda x: _signfix(LA.eigh(_sym(x)).eigenvectors)[0], X)
    _check(lambda x: LA.eigvalsh(_sym(x), UPLO="U"), X, double=False)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("make", [_t, _nc])
def test_svd_grad(shape, make):
    A = make(RNG.standard_normal(shape))

    def f(a):
        U, S, Vh = LA.svd(a, full_matrices=False)
        U, Vh = _signfix(U, Vh)
        return U, S, Vh
    _check(f, A, double=shape == (4, 3))
    _check(lambda a: LA.svdvals(a), A, double=False)
    _check(lambda a: pylucid.svd(a).V * pylucid.svd(a).U[..., :1, :].sign(), A, double=False)


def test_svd_full_matrices_grad_uses_leading_columns():
    A = _t(RNG.standard_normal((4, 2)))
    U, S, Vh = LA.svd(A)
    assert tuple(U.shape) == (4, 4)
    # The trailing columns (an orthonormal completion) get no gradient; the leading ones do.
    U[..., 2:].sum().backward()
    assert A.grad is None or not A.grad.numpy().any()
    assert gradcheck(lambda a: LA.svd(a)[0][..., :2] * LA.svd(a)[0][..., :1, :2].sign(), (A,))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 2)])
@pytest.mark.parametrize("make", [_t, _nc])
def test_qr_grad(shape, make):
    A = make(RNG.standard_normal(shape))
    _check(lambda a: tuple(LA.qr(a)), A, double=shape in ((4, 3), (3, 5)))


def test_qr_complete_square_grad_and_errors():
    A = _t(RNG.standard_normal((3, 3)))
    assert gradcheck(lambda a: tuple(LA.qr(a, mode="complete")), (A,))
    T = _t(RNG.standard_normal((4, 2)))
    Q, R = LA.qr(T, mode="complete")
    with pytest.raises(pylucid.LucidError, match="mode='complete'"):
        Q.sum().backward()
    Q, R = LA.qr(T, mode="r")
    with pytest.raises(pylucid.LucidError, match="mode='r'"):
        R.sum().backward()


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
@pytest.mark.parametrize("make", [_t, _nc])
def test_pinv_grad(shape, make):
    A = make(RNG.standard_normal(shape))
    _check(lambda a: LA.pinv(a), A, double=shape == (4, 3))
    X = make(RNG.standard_normal((3, 3)))
    _check(lambda a: LA.pinv(_spd(a), hermitian=True), X, double=False)


@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 4, 3), (2, 4, 1)), ((4, 3), (4,))])
def test_lstsq_grad(shapes):
    A, B = _t(RNG.standard_normal(shapes[0])), _t(RNG.standard_normal(shapes[1]))
    _check(lambda a, b: LA.lstsq(a, b).solution, A, B, double=shapes[0] == (5, 3))


def test_cholesky_solve_and_inverse_grad():
    X, B = _t(RNG.standard_normal((2, 3, 3))), _t(RNG.standard_normal((2, 3, 2)))
    _check(lambda x, b: pylucid.cholesky_solve(b, LA.cholesky(_spd(x))), X, B, double=False)
    _check(lambda x: pylucid.cholesky_inverse(LA.cholesky(_spd(x))), X, double=False)


# ---- errors --------------------------------------------------------------------------------

def test_errors_are_typed_and_name_the_op():
    A = _t(-np.eye(3), False)
    with pytest.raises(LA.LinAlgError, match=r"linalg.cholesky: .*leading minor of order 1 is not positive-definite"):
        LA.cholesky(A)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\)"):
        LA.cholesky(_t(np.stack([np.eye(2), np.diag([1.0, -1.0])]), False))
    with pytest.raises(LA.LinAlgError, match="order 2"):
        LA.cholesky(_t(np.diag([1.0, -1.0]), False))
    with pytest.raises(pylucid.ShapeMismatch, match="square"):
        LA.cholesky(_t(np.zeros((2, 3)), False))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        LA.svd(_t(np.zeros(3), False))
    with pytest.raises(TypeError, match="float32 or float64"):
        LA.eigh(pylucid.zeros(2, 2, dtype=pylucid.int64))
    with pytest.raises(pylucid.LucidError, match="UPLO"):
        LA.eigh(_t(np.eye(2), False), UPLO="X")
    with pytest.raises(pylucid.LucidError, match="unrecognized mode"):
        LA.qr(_t(np.eye(2), False), mode="full")
    with pytest.raises(pylucid.LucidError, match="driver"):
        LA.lstsq(_t(np.eye(2), False), _t(np.eye(2), False), driver="magic")
    with pytest.raises(pylucid.ShapeMismatch, match="size"):
        LA.lstsq(_t(np.eye(2), False), _t(np.eye(3), False))
    with pytest.raises(pylucid.DtypeMismatch, match="same dtype"):
        LA.lstsq(_t(np.eye(2), False), pylucid.eye(2))
    with pytest.raises(LA.LinAlgError, match="singular"):
        LA.inv(_t(np.zeros((2, 2)), False))
    assert issubclass(LA.LinAlgError, pylucid.LucidError) and issubclass(LA.LinAlgError, RuntimeError)
    assert A.tolist() == (-np.eye(3)).tolist()


# ---- PyTorch's numbers ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    tol = 2e-5 if dtype == "float32" else 1e-12
    X = RNG.standard_normal((2, 4, 4)).astype(dtype)
    S = (X @ np.swapaxes(X, -1, -2) + 4 * np.eye(4)).astype(dtype)
    A = RNG.standard_normal((2, 5, 3)).astype(dtype)
    W = RNG.standard_normal((3, 5)).astype(dtype)
    B = RNG.standard_normal((5, 2)).astype(dtype)

    def both(fn_t, fn_l, *arrays):
        ts = [torch.tensor(a, requires_grad=True) for a in arrays]
        ls = [pylucid.tensor(a, requires_grad=True) for a in arrays]
        to, lo = fn_t(*ts), fn_l(*ls)
        to = to if isinstance(to, tuple) else (to,)
        lo = lo if isinstance(lo, tuple) else (lo,)
        for a, b in zip(to, lo):
            np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)
        ws = [RNG.standard_normal(tuple(o.shape)).astype(dtype) for o in to]
        sum((o * torch.tensor(w)).sum() for o, w in zip(to, ws)).backward()
        sum((o * pylucid.tensor(w)).sum() for o, w in zip(lo, ws)).backward()
        for a, b in zip(ts, ls):
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=10 * tol, atol=10 * tol)

    def fix(U, Vh=None):
        s = U[..., :1, :].sign()
        return (U * s,) if Vh is None else (U * s, Vh * s.transpose(-2, -1))
    both(torch.linalg.cholesky, LA.cholesky, S)
    both(lambda a: (torch.linalg.eigh(a)[0],) + fix(torch.linalg.eigh(a)[1]),
         lambda a: (LA.eigh(a)[0],) + fix(LA.eigh(a)[1]), S)
    for M in (A, W):
        both(lambda a: (torch.linalg.svd(a, full_matrices=False)[1],) + fix(*torch.linalg.svd(a, full_matrices=False)[::2]),
             lambda a: (LA.svd(a, full_matrices=False)[1],) + fix(*LA.svd(a, full_matrices=False)[::2]), M)
        both(lambda a: tuple(torch.linalg.qr(a)), lambda a: tuple(LA.qr(a)), M)
        both(torch.linalg.pinv, LA.pinv, M)
        both(torch.linalg.svdvals, LA.svdvals, M)
    both(lambda a, b: torch.linalg.lstsq(a, b).solution, lambda a, b: LA.lstsq(a, b).solution, A[0], B)
    both(torch.linalg.eigvalsh, LA.eigvalsh, S)
    np.testing.assert_array_equal(LA.matrix_rank(pylucid.tensor(A)).numpy(), torch.linalg.matrix_rank(torch.tensor(A)).numpy())


# ---- solve_triangular, matrix_norm and norm -------------------------------------------------------

@pytest.mark.parametrize("upper,left,unit", [(False, True, False), (True, True, True), (False, False, False),
                                             (True, False, True)])
def test_solve_triangular(upper, left, unit):
    L = np.tril(RNG.standard_normal((2, 3, 3))) + 3 * np.eye(3)
    T = np.swapaxes(L, -1, -2) if upper else L
    B = RNG.standard_normal((2, 3, 2)) if left else RNG.standard_normal((2, 2, 3))
    X = LA.solve_triangular(_t(T, False), _t(B, False), upper=upper, left=left, unitriangular=unit).numpy()
    Tm = T.copy()
    if unit:
        Tm[..., np.arange(3), np.arange(3)] = 1.0
    np.testing.assert_allclose(Tm @ X if left else X @ Tm, B, atol=1e-12)
    # Only the triangle that is read gets a gradient.
    R = RNG.standard_normal((2, 3, 3))
    A = _nc(T + (np.tril(R, -1) if upper else np.triu(R, 1)))  # values outside the triangle are ignored
    Bt = _t(B)
    assert gradcheck(lambda a, b: LA.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit), (A, Bt))
    LA.solve_triangular(A, Bt, upper=upper, left=left, unitriangular=unit).sum().backward()
    g = A.grad.numpy()
    outside = np.tril(g, -1) if upper else np.triu(g, 1)
    assert not outside.any()
    if unit:
        assert not np.diagonal(g, axis1=-2, axis2=-1).any()
    with pytest.raises(TypeError):
        LA.solve_triangular(_t(T, False), _t(B, False))  # upper is required, as in PyTorch


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")])
def test_matrix_norm_and_norm(ord):
    A = RNG.standard_normal((2, 3, 4))
    ref = np.stack([np.linalg.norm(a, ord) for a in A])
    np.testing.assert_allclose(LA.matrix_norm(_t(A, False), ord).numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(LA.norm(_t(A, False), ord, dim=(1, 2)).numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(LA.norm(_t(A[0], False), ord).item(), np.linalg.norm(A[0], ord), rtol=1e-12)
    r = LA.matrix_norm(_t(A, False), ord, dim=(0, 2), keepdim=True)
    assert tuple(r.shape) == (1, 3, 1)
    assert gradcheck(lambda a: LA.matrix_norm(a, ord), (_t(A),))


def test_norm_errors():
    with pytest.raises(pylucid.LucidError, match="Order 3"):
        LA.matrix_norm(_t(np.eye(2), False), 3)
    with pytest.raises(pylucid.ShapeMismatch, match="1D or 2D"):
        LA.norm(_t(np.ones((2, 2, 2)), False), 2)


def test_solve_triangular_and_matrix_norm_match_torch():
    torch = pytest.importorskip("torch")
    L = (np.tril(RNG.standard_normal((3, 3))) + 3 * np.eye(3)).astype(np.float32)
    B = RNG.standard_normal((3, 2)).astype(np.float32)
    np.testing.assert_allclose(LA.solve_triangular(pylucid.tensor(L), pylucid.tensor(B), upper=False).numpy(),
                               torch.linalg.solve_triangular(torch.tensor(L), torch.tensor(B), upper=False).numpy(),
                               rtol=1e-5, atol=1e-6)
    A = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    for o in ("fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")):
        np.testing.assert_allclose(LA.matrix_norm(pylucid.tensor(A), o).numpy(),
                                   torch.linalg.matrix_norm(torch.tensor(A), o).numpy(), rtol=1e-5)


# ---- matrix_power, multi_dot, cond, vecdot, cross, diagonal ------------------------------------------

def test_small_composites_against_numpy():
    A = RNG.standard_normal((2, 3, 3))
    np.testing.assert_allclose(LA.matrix_power(_t(A, False), 3).numpy(), np.linalg.matrix_power(A, 3), atol=1e-12)
    np.testing.assert_allclose(LA.matrix_power(_t(A, False), -2).numpy(), np.linalg.matrix_power(A, -2), rtol=1e-9)
    np.testing.assert_allclose(pylucid.matrix_power(_t(A, False), -1).numpy(), np.linalg.inv(A), rtol=1e-9)
    v, B, w = RNG.standard_normal(3), RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    r = LA.multi_dot([_t(v, False), _t(A[0], False), _t(B, False), _t(w, False)])
    assert r.dim() == 0
    np.testing.assert_allclose(r.item(), v @ A[0] @ B @ w, rtol=1e-12)
    assert tuple(LA.multi_dot([_t(A[0], False), _t(B, False)]).shape) == (3, 4)
    for p in (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf):
        np.testing.assert_allclose(LA.cond(_t(A, False), p).numpy(), np.linalg.cond(A, p), rtol=1e-9)
    np.testing.assert_allclose(LA.vecdot(_t(A, False), _t(A[0], False)).numpy(), (A * A[0]).sum(-1), atol=1e-12)
    np.testing.assert_allclose(LA.cross(_t(A, False), _t(A[::-1].copy(), False)).numpy(), np.cross(A, A[::-1]),
                               atol=1e-12)
    np.testing.assert_allclose(LA.diagonal(_t(A, False), offset=1).numpy(), np.diagonal(A, 1, -2, -1))
    assert gradcheck(lambda a: LA.matrix_power(a, -2), (_t(A),))
    assert gradcheck(lambda a: LA.cond(a), (_t(A),))
    assert gradcheck(lambda a, b: LA.multi_dot([a, b, a]), (_t(A[0]), _t(RNG.standard_normal((3, 3)))))
    with pytest.raises(pylucid.ShapeMismatch, match="at least 2"):
        LA.multi_dot([_t(A[0], False)])
    with pytest.raises(pylucid.ShapeMismatch, match="cannot be multiplied"):
        LA.multi_dot([_t(A[0], False), _t(w, False)])

def test_det_gradient_of_a_singular_matrix_is_zero_as_in_torch():
    """Guards against det's backward raising on a singular matrix (it inverted A): PyTorch's
    gradient there is det(A) = 0 times a finite matrix."""
    for m in ([[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[1.0, 2.0, 2.0], [3.0, 3.0, 1.0], [0.0, 0.0, 0.0]]):
        x = pylucid.tensor(m, dtype=pylucid.float64, requires_grad=True)
        pylucid.linalg.det(x).backward()
        assert x.grad.abs().sum().item() == 0.0
