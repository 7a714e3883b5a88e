"""The LU family (linalg.lu, lu_factor, lu_factor_ex, lu_solve, lu_unpack, and the older torch.lu,
torch.lu_solve, Tensor.lu, Tensor.lu_solve): identities (P L U == A, partial pivoting's |L| <= 1),
singular matrices reported in info, float64 gradcheck and gradgradcheck on square, wide, tall
and batched inputs, node names, typed errors, and PyTorch's numbers where it is installed."""
import warnings

import numpy as np
import pylucid
import pytest
from pylucid import linalg as LA
from pylucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)
SHAPES = [(4, 4), (3, 5), (5, 3), (2, 4, 4), (2, 1, 3, 2)]


def _t(a, grad=False, dtype=np.float64):
    return pylucid.tensor(np.asarray(a, dtype=dtype), requires_grad=grad)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plu_reconstructs_a_with_partial_pivoting(shape, dtype):
    """Guards against factors that multiply back to A but were not pivoted as getrf pivots (an
    entry of L above 1 in magnitude), and against P, L, U of the wrong shapes for wide/tall A."""
    a = RNG.standard_normal(shape)
    P, L, U = LA.lu(_t(a, dtype=dtype))
    m, n = shape[-2:]
    k = min(m, n)
    assert tuple(P.shape) == (*shape[:-2], m, m) and tuple(L.shape) == (*shape[:-2], m, k)
    assert tuple(U.shape) == (*shape[:-2], k, n) and P.dtype == L.dtype == U.dtype == _t(a, dtype=dtype).dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=tol)
    Ln, Un = L.numpy(), U.numpy()
    np.testing.assert_array_equal(Ln, np.tril(Ln))
    np.testing.assert_array_equal(np.diagonal(Ln, axis1=-2, axis2=-1), 1.0)
    np.testing.assert_array_equal(Un, np.triu(Un))
    assert np.abs(Ln).max() <= 1.0
    LU, piv = LA.lu_factor(_t(a, dtype=dtype))
    assert tuple(piv.shape) == (*shape[:-2], k) and piv.dtype == pylucid.int64
    P2, L2, U2 = pylucid.lu_unpack(LU, piv)
    np.testing.assert_array_equal(P2.numpy(), P.numpy())
    np.testing.assert_array_equal(L2.numpy(), Ln)
    np.testing.assert_array_equal(U2.numpy(), Un)


def test_values_match_torch():
    """Guards against pivots, factors or solutions that differ from PyTorch's (getrf's choice of
    the first largest pivot, 1-based pivots, the order of the row swaps)."""
    torch = pytest.importorskip("torch")
    for shape in SHAPES:
        a = RNG.standard_normal(shape)
        LU, piv, info = LA.lu_factor_ex(_t(a))
        tLU, tpiv, tinfo = torch.linalg.lu_factor_ex(torch.tensor(a))
        np.testing.assert_allclose(LU.numpy(), tLU.numpy(), atol=1e-12)
        np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())
        np.testing.assert_array_equal(info.numpy(), tinfo.numpy())
        for x, y in zip(LA.lu(_t(a)), torch.linalg.lu(torch.tensor(a))):
            np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-12)
    a = RNG.standard_normal((3, 4, 4))
    b = RNG.standard_normal((3, 4, 2))
    LU, piv = LA.lu_factor(_t(a))
    tLU, tpiv = torch.linalg.lu_factor(torch.tensor(a))
    for left in (True, False):
        for adjoint in (True, False):
            bb = b if left else np.swapaxes(b, -1, -2)
            x = LA.lu_solve(LU, piv, _t(bb), left=left, adjoint=adjoint)
            tx = torch.linalg.lu_solve(tLU, tpiv, torch.tensor(bb), left=left, adjoint=adjoint)
            np.testing.assert_allclose(x.numpy(), tx.numpy(), atol=1e-10)
    # A singular matrix: the same partial factor and info.
    s = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    LU, piv, info = LA.lu_factor_ex(_t(s))
    tLU, tpiv, tinfo = torch.linalg.lu_factor_ex(torch.tensor(s))
    np.testing.assert_allclose(LU.numpy(), tLU.numpy(), atol=1e-12)
    assert piv.tolist() == tpiv.tolist() and info.item() == tinfo.item() == 3


def test_lu_solve_solves_every_variant_and_broadcasts():
    """Guards against left=False / adjoint=True solving the wrong system, and against batch
    dims of LU and B that broadcast being refused or summed wrongly in the gradient."""
    a = RNG.standard_normal((2, 4, 4)) + 3 * np.eye(4)
    b = RNG.standard_normal((4, 3))
    LU, piv = LA.lu_factor(_t(a))
    np.testing.assert_allclose(LA.lu_solve(LU, piv, _t(b)).numpy(), np.linalg.solve(a, b), atol=1e-12)
    at = np.swapaxes(a, -1, -2)
    np.testing.assert_allclose(LA.lu_solve(LU, piv, _t(b), adjoint=True).numpy(), np.linalg.solve(at, b), atol=1e-12)
    bt = b.T
    right = np.swapaxes(np.linalg.solve(at, np.swapaxes(np.broadcast_to(bt, (2, 3, 4)), -1, -2)), -1, -2)
    np.testing.assert_allclose(LA.lu_solve(LU, piv, _t(bt), left=False).numpy(), right, atol=1e-12)
    B = _t(b, grad=True)
    LU1, piv1 = LA.lu_factor(_t(a[0]))
    assert gradcheck(lambda lu, x: LA.lu_solve(lu.unsqueeze(0).expand(3, 4, 4), piv1, x), (LU1.requires_grad_(), B))


def test_singular_matrices_give_info_not_an_exception():
    """Guards against a singular matrix raising from lu / lu_factor_ex / torch.lu (PyTorch
    reports it in info), and against lu_factor not raising for one."""
    s = np.stack([np.eye(3), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])])
    info = LA.lu_factor_ex(_t(s)).info
    assert info.tolist() == [0, 3]
    P, L, U = LA.lu(_t(s))
    np.testing.assert_allclose((P @ L @ U).numpy(), s, atol=1e-12)
    with pytest.raises(LA.LinAlgError, match=r"lu_factor: \(Batch element 1\): U\[3,3\] is zero"):
        LA.lu_factor(_t(s))
    with pytest.raises(LA.LinAlgError, match="lu_factor_ex"):
        LA.lu_factor_ex(_t(s), check_errors=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = pylucid.lu(_t(s), get_infos=True)
        assert type(r).__name__ == "_lu_with_info" and r.info.tolist() == [0, 3]
        assert type(pylucid.lu(_t(s))) is tuple and len(pylucid.lu(_t(s))) == 2


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3), (2, 3, 3), (2, 2, 4)])
def test_lu_gradients(shape):
    """Guards against a wrong linalg_lu / lu_factor_ex backward (square, wide and tall blocks)
    and against a backward that is not itself differentiable."""
    A = _t(RNG.standard_normal(shape), grad=True)
    assert gradcheck(lambda a: LA.lu(a)[1:], (A,))
    assert gradcheck(lambda a: LA.lu(a).L, (A,))
    assert gradcheck(lambda a: LA.lu(a).U, (A,))
    assert gradcheck(lambda a: LA.lu_factor(a)[0], (A,))
    assert gradcheck(lambda a: pylucid.lu_unpack(*LA.lu_factor(a))[1:], (A,))
    assert gradgradcheck(lambda a: LA.lu(a)[1:], (A,))
    assert gradgradcheck(lambda a: LA.lu_factor_ex(a).LU, (A,))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_gradients(left, adjoint):
    """Guards against a wrong gradient of lu_solve in LU or B for any of its four systems."""
    A = _t(RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3), grad=True)
    LU0, piv = LA.lu_factor(A.detach())
    LU = LU0.clone().requires_grad_()
    B = _t(RNG.standard_normal((2, 3, 2) if left else (2, 2, 3)), grad=True)
    assert gradcheck(lambda lu, b: LA.lu_solve(lu, piv, b, left=left, adjoint=adjoint), (LU, B))
    assert gradgradcheck(lambda lu, b: LA.lu_solve(lu, piv, b, left=left, adjoint=adjoint), (LU, B))
    assert gradcheck(lambda a, b: LA.lu_solve(*LA.lu_factor(a), b, left=left, adjoint=adjoint), (A, B))


def test_gradients_match_torch():
    """Guards against gradients that pass gradcheck's tolerance but differ from PyTorch's."""
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((4, 3))
    g1, g2 = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 3))
    A, tA = _t(a, grad=True), torch.tensor(a, requires_grad=True)
    _, L, U = LA.lu(A)
    ((L * _t(g1)).sum() + (U * _t(g2)).sum()).backward()
    _, tL, tU = torch.linalg.lu(tA)
    ((tL * torch.tensor(g1)).sum() + (tU * torch.tensor(g2)).sum()).backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), atol=1e-10)
    s = RNG.standard_normal((3, 3))
    b = RNG.standard_normal((3, 2))
    S, B, tS, tB = _t(s, True), _t(b, True), torch.tensor(s, requires_grad=True), torch.tensor(b, requires_grad=True)
    LA.lu_solve(*LA.lu_factor(S), B, adjoint=True).pow(2).sum().backward()
    torch.linalg.lu_solve(*torch.linalg.lu_factor(tS), tB, adjoint=True).pow(2).sum().backward()
    np.testing.assert_allclose(S.grad.numpy(), tS.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(B.grad.numpy(), tB.grad.numpy(), atol=1e-10)


def test_node_names_and_return_types():
    """Guards against node names or named tuples that print differently from PyTorch's."""
    A = _t(RNG.standard_normal((3, 3)), grad=True)
    r = LA.lu(A)
    assert type(r).__name__ == "linalg_lu" and r._fields == ("P", "L", "U")
    assert type(r.L.grad_fn).__name__ == "LinalgLuBackward0" and r.P.grad_fn is None and not r.P.requires_grad
    f = LA.lu_factor(A)
    assert type(f).__name__ == "linalg_lu_factor" and f._fields == ("LU", "pivots")
    assert type(f.LU.grad_fn).__name__ == "LinalgLuFactorExBackward0"
    assert LA.lu_factor_ex(A)._fields == ("LU", "pivots", "info")
    u = pylucid.lu_unpack(*f)
    assert type(u).__name__ == "lu_unpack" and type(u.L.grad_fn).__name__ == "LuUnpackBackward0"
    x = LA.lu_solve(f.LU, f.pivots, _t(np.ones((3, 1))))
    assert type(x.grad_fn).__name__ == "LinalgLuSolveBackward0"
    P, L, U = pylucid.lu_unpack(*f, unpack_data=False)
    assert L.numel() == U.numel() == 0 and P.shape == (3, 3)
    assert pylucid.lu_unpack(*f, unpack_pivots=False).P.numel() == 0


def test_deprecated_spellings():
    """Guards against torch.lu / Tensor.lu / torch.lu_solve (b first) / Tensor.lu_solve
    disagreeing with the linalg functions they stand for."""
    a = RNG.standard_normal((3, 3)) + 2 * np.eye(3)
    b = RNG.standard_normal((3, 2))
    LU, piv = LA.lu_factor(_t(a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        LU2, piv2 = pylucid.lu(_t(a))
        LU3, piv3, info = _t(a).lu(get_infos=True)
        x1 = pylucid.lu_solve(_t(b), LU2, piv2)
        x2 = _t(b).lu_solve(LU3, piv3)
    assert LU2.tolist() == LU.tolist() == LU3.tolist() and piv2.tolist() == piv.tolist() and info.item() == 0
    np.testing.assert_allclose(x1.numpy(), np.linalg.solve(a, b), atol=1e-12)
    np.testing.assert_allclose(x2.numpy(), x1.numpy(), atol=0)


def test_empty_batches():
    """Guards against an empty batch crashing the elimination."""
    LU, piv, info = LA.lu_factor_ex(pylucid.zeros(0, 3, 3))
    assert tuple(LU.shape) == (0, 3, 3) and tuple(piv.shape) == (0, 3) and tuple(info.shape) == (0,)


def test_errors():
    """Guards against bad input crashing or raising an untyped error without the op's name."""
    with pytest.raises(pylucid.ShapeMismatch, match="linalg.lu: Expected tensor with 2 or more dimensions"):
        LA.lu(pylucid.ones(3))
    with pytest.raises(RuntimeError, match="linalg.lu_factor"):
        LA.lu_factor(pylucid.ones(3))
    with pytest.raises(pylucid.DtypeMismatch, match="linalg.lu_factor_ex"):
        LA.lu_factor_ex(pylucid.ones(3, 3, dtype=pylucid.int64))
    with pytest.raises(pylucid.LucidError, match="without pivoting"):
        LA.lu(pylucid.ones(3, 3), pivot=False)
    LU, piv = LA.lu_factor(_t(np.eye(3)))
    with pytest.raises(pylucid.ShapeMismatch, match=r"lu_solve: Incompatible shapes .* \(3x3 and 2x1\)"):
        LA.lu_solve(LU, piv, _t(np.ones((2, 1))))
    with pytest.raises(pylucid.ShapeMismatch, match="B must have at least 2 dimensions"):
        LA.lu_solve(LU, piv, _t(np.ones(3)))
    with pytest.raises(pylucid.DtypeMismatch, match="same dtype"):
        LA.lu_solve(LU, piv, pylucid.ones(3, 1))
    with pytest.raises(pylucid.DtypeMismatch, match="pivots"):
        LA.lu_solve(LU, piv.double(), _t(np.ones((3, 1))))
    with pytest.raises(pylucid.ShapeMismatch, match="square"):
        LA.lu_solve(_t(np.ones((3, 4))), piv, _t(np.ones((3, 1))))
    with pytest.raises(IndexError, match="lu_unpack"):
        pylucid.lu_unpack(LU, piv * 5)
    with pytest.raises(ValueError, match="lu_unpack"):
        pylucid.lu_unpack(LU, piv[:2])


@pytest.mark.parametrize("shape", [(70, 70), (2, 90, 40), (40, 90)])
def test_blocked_elimination_matches_column_by_column(shape):
    """Guards against the recursive (blocked) elimination of matrices wider than one panel
    choosing other pivots than column-by-column partial pivoting, or misplacing a block's swaps."""
    from pylucid import _linalg_lu as M
    a = RNG.standard_normal(shape)
    lu, piv, _ = M._getrf(a)
    m, n = shape[-2:]
    w = a.reshape(-1, m, n).copy()
    ref_piv = np.zeros((w.shape[0], min(m, n)), dtype=np.int64)
    M._getf2(w, ref_piv, np.zeros(w.shape[0], dtype=np.int64), 0)
    np.testing.assert_array_equal(piv.reshape(-1, min(m, n)), ref_piv + 1)
    np.testing.assert_allclose(lu, w.reshape(shape), atol=1e-11)
    P, L, U = LA.lu(_t(a))
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-11)
    s = a.reshape(-1, m, n)[0].copy()
    s[:, 30] = 0.0  # a zero column past the first panel: info names it
    assert LA.lu_factor_ex(_t(s)).info.item() == 31


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lapack_factorization_matches_the_numpy_reference(dtype):
    """Guards against the LAPACK path (_C._lu_factor_ex: row-major data through column-major
    getrf) transposing the problem, misreading a non-contiguous input, or losing a batch."""
    from pylucid import _C
    from pylucid import _linalg_lu as M
    for shape in [(2, 3, 6, 5), (5, 7), (1, 1)]:
        a = RNG.standard_normal(shape).astype(dtype)
        t = pylucid.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
        assert not t.is_contiguous() or min(shape[-2:]) == 1
        LU, piv, info = _C._lu_factor_ex(t)
        ref_lu, ref_piv, ref_info = M._getrf(a)
        np.testing.assert_array_equal(piv.numpy(), ref_piv)
        np.testing.assert_array_equal(info.numpy(), ref_info)
        np.testing.assert_allclose(LU.numpy(), ref_lu, atol=1e-5 if dtype == np.float32 else 1e-12)
        np.testing.assert_array_equal(t.numpy(), a)  # the input is not overwritten
    for shape in [(0, 3, 3), (3, 0), (0, 4)]:
        LU, piv, info = _C._lu_factor_ex(pylucid.zeros(*shape))
        assert tuple(LU.shape) == shape and tuple(piv.shape) == (*shape[:-2], min(shape[-2:]))
    with pytest.raises(pylucid.DtypeMismatch, match="lu_factor_ex"):
        _C._lu_factor_ex(pylucid.ones(2, 2, dtype=pylucid.int64))
    with pytest.raises(pylucid.ShapeMismatch, match="lu_factor_ex"):
        _C._lu_factor_ex(pylucid.ones(3))
