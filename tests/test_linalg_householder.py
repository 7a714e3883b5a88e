"""geqrf / orgqr / ormqr (LAPACK's Householder QR as PyTorch exposes it): Q R == A, Q orthogonal,
ormqr against the explicit Q, PyTorch's numbers, float64 gradcheck of orgqr and ormqr, geqrf's
missing derivative, typed errors."""
import numpy as np
import pylucid
import pytest
from pylucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(5)


def _t(a, grad=False):
    return pylucid.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (2, 6, 3)])
def test_geqrf_orgqr_reconstruct(shape):
    """Guards against reflectors stored transposed (numpy's raw QR is Fortran-ordered) or an R
    taken from the wrong triangle."""
    a = RNG.standard_normal(shape)
    h, tau = pylucid.geqrf(_t(a))
    assert type(pylucid.geqrf(_t(a))).__name__ == "geqrf" and tuple(tau.shape) == (*shape[:-2], shape[-1])
    Q = pylucid.orgqr(h, tau).numpy()
    R = np.triu(h.numpy())[..., : shape[-1], :]
    np.testing.assert_allclose(Q @ R, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(Q, -1, -2) @ Q, np.broadcast_to(np.eye(shape[-1]), Q.shape[:-2] + (shape[-1],) * 2),
                               atol=1e-12)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_is_a_product_with_the_full_q(left, transpose):
    """Guards against ormqr using the thin Q (m x n) where PyTorch multiplies by the full m x m Q."""
    a = RNG.standard_normal((5, 3))
    h, tau = pylucid.geqrf(_t(a))
    Qfull = np.linalg.qr(a, mode="complete")[0]
    # the complete Q of numpy and of the reflectors agree up to the signs of the trailing columns
    Qh = pylucid.ormqr(h, tau, _t(np.eye(5))).numpy()
    np.testing.assert_allclose(np.abs(Qh[:, :3]), np.abs(Qfull[:, :3]), atol=1e-12)
    o = RNG.standard_normal((5, 2) if left else (2, 5))
    Qop = Qh.T if transpose else Qh
    want = Qop @ o if left else o @ Qop
    np.testing.assert_allclose(pylucid.ormqr(h, tau, _t(o), left=left, transpose=transpose).numpy(), want, atol=1e-12)
    H, T, O = _t(h.numpy(), True), _t(tau.numpy(), True), _t(o, True)
    assert gradcheck(lambda x, y, z: pylucid.ormqr(x, y, z, left=left, transpose=transpose), (H, T, O))
    assert gradgradcheck(lambda x, y, z: pylucid.ormqr(x, y, z, left=left, transpose=transpose), (H, T, O))


def test_matches_torch():
    """Guards against other reflector or tau conventions than LAPACK's (which PyTorch returns)."""
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 6, 4))
    h, tau = pylucid.geqrf(_t(a))
    th, ttau = torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(h.numpy(), th.numpy(), atol=1e-12)
    np.testing.assert_allclose(tau.numpy(), ttau.numpy(), atol=1e-12)
    o = RNG.standard_normal((2, 6, 3))
    np.testing.assert_allclose(pylucid.ormqr(h, tau, _t(o), transpose=True).numpy(),
                               torch.ormqr(th, ttau, torch.tensor(o), transpose=True).numpy(), atol=1e-12)


def test_geqrf_has_no_derivative_and_errors():
    """Guards against geqrf silently giving a wrong gradient (PyTorch has none) and bad shapes."""
    A = _t(RNG.standard_normal((3, 3)), True)
    h, tau = pylucid.geqrf(A)
    with pytest.raises(RuntimeError, match="derivative for 'geqrf' is not implemented"):
        h.sum().backward()
    with pytest.raises(ValueError, match="geqrf"):
        pylucid.geqrf(_t(np.ones(3)))
    with pytest.raises(ValueError, match="ormqr"):
        pylucid.ormqr(h.detach(), tau.detach(), _t(np.ones((4, 2))))
