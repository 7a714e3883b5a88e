"""einsum, outer, addmm, baddbmm, diag, trace and one_hot: forward against numpy (and torch),
float64 gradcheck and gradgradcheck through the matmul-based composites, typed errors."""
import numpy as np
import pytest

import pylucid
import pylucid.nn.functional as F
from helpers import check_op

EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->j", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->i", [(5,), (5,)]),
    ("ab,cd->abcd", [(2, 3), (2, 2)]),
    ("ij,jk", [(3, 4), (4, 5)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_forward_gradcheck(eq, shapes):
    """Guards against a wrong permute/reshape around the matmul, diagonals ('ii') and implicit outputs."""
    check_op(lambda *ts: pylucid.einsum(eq, *ts), lambda *arrs: np.asarray(np.einsum(eq, *arrs)), shapes)


def test_einsum_list_operands_broadcast_and_errors():
    """Guards against the list form refused, size-1 batch dims not broadcast, and bad equations accepted."""
    a, b = pylucid.ones(2, 3), pylucid.ones(3, 4)
    assert pylucid.einsum("ij,jk->ik", [a, b]).tolist() == (np.ones((2, 4)) * 3).tolist()
    x = np.random.default_rng(1).standard_normal((1, 3, 4))
    y = np.random.default_rng(2).standard_normal((5, 4, 2))
    out = pylucid.einsum("bij,bjk->bik", pylucid.tensor(x), pylucid.tensor(y))
    np.testing.assert_allclose(np.asarray(out), np.einsum("bij,bjk->bik", np.broadcast_to(x, (5, 3, 4)), y))
    with pytest.raises(pylucid.ShapeMismatch, match="einsum"):
        pylucid.einsum("ij,jk->ik", a, pylucid.ones(4, 4))
    with pytest.raises(pylucid.LucidError, match="einsum"):
        pylucid.einsum("ij->k", a)
    with pytest.raises(pylucid.ShapeMismatch, match="einsum"):
        pylucid.einsum("ijk->i", a)
    with pytest.raises(pylucid.ShapeMismatch, match="einsum"):
        pylucid.einsum("ij,jk->ik", a)
    with pytest.raises(TypeError):
        pylucid.einsum(3, a)
    assert a.tolist() == np.ones((2, 3)).tolist()


def test_einsum_against_torch():
    """Guards against a different implicit-output order than PyTorch's (sorted letters)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    cases = [("ij,jk", [(3, 4), (4, 2)]), ("ji,jk", [(4, 3), (4, 2)]), ("ba,ac", [(4, 3), (3, 5)]),
             ("ij,kj->", [(3, 4), (2, 4)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)])]
    for eq, shapes in cases:
        arrs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        ours = np.asarray(pylucid.einsum(eq, *[pylucid.tensor(a) for a in arrs]))
        theirs = torch.einsum(eq, *[torch.tensor(a) for a in arrs]).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_outer_addmm_baddbmm():
    """Guards against beta/alpha applied to the wrong term and a broadcast input not summed back."""
    check_op(pylucid.outer, np.outer, [(3,), (4,)])
    check_op(lambda i, a, b: pylucid.addmm(i, a, b, beta=0.5, alpha=2.0), lambda i, a, b: 0.5 * i + 2 * a @ b,
             [(4,), (3, 2), (2, 4)])
    check_op(lambda i, a, b: i.baddbmm(a, b), lambda i, a, b: i + a @ b, [(2, 3, 4), (2, 3, 5), (2, 5, 4)])
    nan = pylucid.full((2, 2), float("nan"))
    assert not np.isnan(np.asarray(pylucid.addmm(nan, pylucid.ones(2, 2), pylucid.ones(2, 2), beta=0))).any()
    assert pylucid.ones(3).outer(pylucid.ones(2)).shape == (3, 2)
    with pytest.raises(pylucid.ShapeMismatch, match="outer"):
        pylucid.outer(pylucid.ones(2, 2), pylucid.ones(2))
    with pytest.raises(pylucid.LucidError):
        pylucid.addmm(pylucid.ones(5), pylucid.ones(2, 3), pylucid.ones(3, 4))


def test_diag_and_trace():
    """Guards against diag's offset placing the vector on the wrong side and trace of non-square input."""
    for k in (-2, 0, 1):
        check_op(lambda x: pylucid.diag(x, k), lambda a: np.diag(a, k), [(3,)])
        check_op(lambda x: x.diag(k), lambda a: np.diag(a, k).copy(), [(3, 4)])
    check_op(pylucid.trace, np.trace, [(3, 4)])
    assert pylucid.diag(pylucid.tensor([1, 2])).tolist() == [[1, 0], [0, 2]]
    assert pylucid.tensor([[1, 2], [3, 4]]).trace().item() == 5
    with pytest.raises(pylucid.ShapeMismatch, match="trace"):
        pylucid.trace(pylucid.ones(3))
    with pytest.raises(pylucid.ShapeMismatch, match="diag"):
        pylucid.diag(pylucid.ones(2, 2, 2))


def test_one_hot():
    """Guards against the wrong class count when num_classes=-1 and out-of-range classes accepted."""
    x = pylucid.tensor([0, 2, 1])
    assert F.one_hot(x).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert F.one_hot(x, 4).dtype == pylucid.int64 and F.one_hot(x, 4).shape == (3, 4)
    assert F.one_hot(pylucid.tensor([[1], [0]]), 2).shape == (2, 1, 2)
    with pytest.raises(pylucid.LucidError, match="non-negative"):
        F.one_hot(pylucid.tensor([-1]), 3)
    with pytest.raises(pylucid.LucidError, match="smaller than num_classes"):
        F.one_hot(pylucid.tensor([3]), 3)
    with pytest.raises(pylucid.DtypeMismatch, match="one_hot"):
        F.one_hot(pylucid.tensor([1.0]), 3)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(np.asarray(F.one_hot(x, 5)),
                                  torch.nn.functional.one_hot(torch.tensor([0, 2, 1]), 5).numpy())
