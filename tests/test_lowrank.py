"""svd_lowrank and pca_lowrank (randomized range finder with subspace iteration): low-rank
reconstructions, PCA's variances against the covariance's eigenvalues, PyTorch's numbers from the
same seed (singular values; vectors up to their signs, which LAPACK builds choose differently),
float64 gradcheck, and typed errors."""
import numpy as np
import pylucid
import pytest
from pylucid.autograd import gradcheck

RNG = np.random.default_rng(11)


def _lowrank(m, n, k):
    return RNG.standard_normal((m, k)) @ RNG.standard_normal((k, n))


@pytest.mark.parametrize("shape", [(30, 12), (12, 30), (2, 20, 9)])
def test_svd_lowrank_reconstructs_a_low_rank_matrix(shape):
    """Guards against a wrong range finder (a wide input must be handled through its transpose)."""
    a = _lowrank(*shape[-2:], 3)
    a = np.broadcast_to(a, shape).copy()
    pylucid.manual_seed(0)
    U, S, V = pylucid.svd_lowrank(pylucid.tensor(a), q=5)
    m, n = shape[-2:]
    assert tuple(U.shape) == (*shape[:-2], m, 5) and tuple(S.shape) == (*shape[:-2], 5)
    assert tuple(V.shape) == (*shape[:-2], n, 5)
    rec = (U.numpy() * S.numpy()[..., None, :]) @ np.swapaxes(V.numpy(), -1, -2)
    np.testing.assert_allclose(rec, a, atol=1e-9)
    np.testing.assert_allclose(S.numpy()[..., :3], np.linalg.svd(a, compute_uv=False)[..., :3], rtol=1e-10)


def test_pca_lowrank_variances_and_mean():
    """Guards against pca_lowrank not centring (or centring over the wrong dim) and against M
    (the mean given to svd_lowrank) being ignored."""
    a = _lowrank(40, 8, 4) + 5.0
    pylucid.manual_seed(1)
    _, S, _ = pylucid.pca_lowrank(pylucid.tensor(a), q=4)
    c = a - a.mean(0)
    w = np.sort(np.linalg.eigvalsh(c.T @ c / 39))[::-1][:4]
    np.testing.assert_allclose(S.numpy() ** 2 / 39, w, rtol=1e-8)
    pylucid.manual_seed(1)
    _, S2, _ = pylucid.svd_lowrank(pylucid.tensor(a), q=4, M=pylucid.tensor(a.mean(0, keepdims=True)))
    np.testing.assert_allclose(S2.numpy(), S.numpy(), rtol=1e-8)
    _, S3, _ = pylucid.pca_lowrank(pylucid.tensor(c), q=4, center=False)
    np.testing.assert_allclose(S3.numpy(), S.numpy(), rtol=1e-8)


def test_matches_torch_from_the_same_seed():
    """Guards against drawing the Gaussian sketch in another shape or order than PyTorch (then
    an inexact low-rank approximation gives other numbers)."""
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((30, 10))  # full rank: the sketch decides the result
    pylucid.manual_seed(3)
    U, S, V = pylucid.pca_lowrank(pylucid.tensor(a), q=4, niter=1)
    torch.manual_seed(3)
    tU, tS, tV = torch.pca_lowrank(torch.tensor(a), q=4, niter=1)
    np.testing.assert_allclose(S.numpy(), tS.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.abs(U.numpy()), np.abs(tU.numpy()), atol=1e-10)
    np.testing.assert_allclose(np.abs(V.numpy()), np.abs(tV.numpy()), atol=1e-10)


def test_gradients():
    """Guards against the factorization losing the graph (it is built from qr, svd and products)."""
    A = pylucid.tensor(_lowrank(8, 5, 2) + 0.1 * RNG.standard_normal((8, 5)), requires_grad=True)

    def top_values(x):
        pylucid.manual_seed(0)
        return pylucid.svd_lowrank(x, q=5, niter=2)[1]

    assert gradcheck(top_values, (A,))


def test_errors():
    """Guards against bad q / niter / input passing silently."""
    with pytest.raises(ValueError, match="pca_lowrank: q"):
        pylucid.pca_lowrank(pylucid.ones(4, 3), q=5)
    with pytest.raises(ValueError, match="niter"):
        pylucid.pca_lowrank(pylucid.ones(4, 3), niter=-1)
    with pytest.raises(ValueError, match="svd_lowrank"):
        pylucid.svd_lowrank(pylucid.ones(4))
