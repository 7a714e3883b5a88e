"""nn.utils.spectral_norm / remove_spectral_norm, nn.utils.parametrizations.spectral_norm and
orthogonal (matrix_exp, cayley, householder), and the linalg pieces under them (matrix_exp,
householder_product): state_dict keys as PyTorch's, the math, gradients, PyTorch's numbers."""
import numpy as np
import pytest

import pylucid
import pylucid.nn as nn
from pylucid.autograd import gradcheck, gradgradcheck
from pylucid.nn.utils import parametrizations as P

RNG = np.random.default_rng(11)


def _sigma_max(w):
    return np.linalg.svd(w.reshape(w.shape[0], -1), compute_uv=False)[0]


# ---- old-style spectral_norm -------------------------------------------------------------------

def test_spectral_norm_hook_keys_and_normalisation():
    pylucid.manual_seed(0)
    m = nn.utils.spectral_norm(nn.Linear(6, 4, dtype=pylucid.float64), n_power_iterations=30)
    assert sorted(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight_orig"]
    m(pylucid.ones(1, 6, dtype=pylucid.float64))
    np.testing.assert_allclose(_sigma_max(m.weight.detach().numpy()), 1.0, rtol=1e-8)
    w_orig = m.weight_orig.detach().numpy()
    np.testing.assert_allclose(m.weight.detach().numpy(), w_orig / _sigma_max(w_orig), rtol=1e-8)


def test_spectral_norm_eval_keeps_u_and_gradient_reaches_orig():
    pylucid.manual_seed(1)
    m = nn.utils.spectral_norm(nn.Conv2d(2, 3, 3, dtype=pylucid.float64))
    x = pylucid.tensor(RNG.standard_normal((1, 2, 5, 5)))
    m(x)
    u = m.weight_u.clone()
    m.eval()
    m(x).sum().backward()
    assert m.weight_u.tolist() == u.tolist()
    assert m.weight_orig.grad is not None and np.abs(m.weight_orig.grad.numpy()).sum() > 0


def test_remove_spectral_norm_and_transposed_conv_dim():
    pylucid.manual_seed(2)
    m = nn.utils.spectral_norm(nn.Linear(3, 3))
    m(pylucid.ones(1, 3))
    w = m.weight.detach().clone()
    nn.utils.remove_spectral_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(m.weight.detach().numpy(), w.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="not found"):
        nn.utils.remove_spectral_norm(m)
    t = nn.utils.spectral_norm(nn.ConvTranspose2d(4, 2, 3))
    assert tuple(t.weight_u.shape) == (2,)  # dim 1: the output channels of a transposed conv
    with pytest.raises(pylucid.LucidError, match="two spectral_norm"):
        nn.utils.spectral_norm(t)
    with pytest.raises(ValueError, match="n_power_iterations"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


# ---- parametrizations.spectral_norm -----------------------------------------------------------

def test_parametrized_spectral_norm():
    pylucid.manual_seed(3)
    m = P.spectral_norm(nn.Linear(5, 4, dtype=pylucid.float64))
    assert sorted(m.state_dict()) == ["bias", "parametrizations.weight.0._u", "parametrizations.weight.0._v",
                                      "parametrizations.weight.original"]
    # 15 power iterations at registration already give sigma to a few digits; more in training.
    for _ in range(60):
        m(pylucid.ones(1, 5, dtype=pylucid.float64))
    np.testing.assert_allclose(_sigma_max(m.weight.detach().numpy()), 1.0, rtol=1e-6)
    m.eval()
    orig = m.parametrizations.weight.original
    u, v = m.parametrizations.weight[0]._u, m.parametrizations.weight[0]._v
    assert gradcheck(lambda w: P._SpectralNorm.forward(m.parametrizations.weight[0], w), (orig.detach().clone().requires_grad_(True),))
    assert u.requires_grad is False and v.requires_grad is False
    b = P.spectral_norm(nn.Linear(3, 3), name="bias")
    np.testing.assert_allclose(np.linalg.norm(b.bias.detach().numpy()), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="no parameter or buffer"):
        P.spectral_norm(nn.Linear(2, 2), name="nope")


# ---- orthogonal ------------------------------------------------------------------------------

# Without the trivialization only the householder map can be assigned to.
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("orthogonal_map,trivial", [("matrix_exp", True), ("cayley", True), ("householder", True),
                                                    ("householder", False)])
def test_orthogonal_is_orthogonal_and_trains(shape, orthogonal_map, trivial):
    pylucid.manual_seed(4)
    m = nn.Linear(shape[1], shape[0], dtype=pylucid.float64)
    P.orthogonal(m, orthogonal_map=orthogonal_map, use_trivialization=trivial)
    keys = ["bias", "parametrizations.weight.original"] + (["parametrizations.weight.0.base"] if trivial else [])
    assert sorted(m.state_dict()) == sorted(keys)

    def check():
        W = m.weight.detach().numpy()
        G = W.T @ W if shape[0] >= shape[1] else W @ W.T
        np.testing.assert_allclose(G, np.eye(min(shape)), atol=1e-10)
    check()
    opt = pylucid.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (m(pylucid.tensor(RNG.standard_normal((4, shape[1])))) ** 2).sum().backward()
        opt.step()
    check()
    # Assigning an orthogonal matrix reproduces it.
    Q = np.linalg.qr(RNG.standard_normal((max(shape), min(shape))))[0]
    Q = Q if shape[0] >= shape[1] else Q.T
    m.weight = pylucid.tensor(Q)
    np.testing.assert_allclose(m.weight.detach().numpy(), Q, atol=1e-10)


def test_orthogonal_gradcheck_through_each_map():
    for orthogonal_map in ("matrix_exp", "cayley", "householder"):
        pylucid.manual_seed(5)
        m = P.orthogonal(nn.Linear(3, 4, dtype=pylucid.float64), orthogonal_map=orthogonal_map)
        layer = m.parametrizations.weight[0]
        X = pylucid.tensor(RNG.standard_normal((4, 3)) * 0.3, requires_grad=True)
        if orthogonal_map == "householder":  # the diagonal holds signs (+-1), not differentiated
            X = (X.detach() + pylucid.tensor(np.eye(4, 3) * 2)).requires_grad_(True)
        assert gradcheck(layer, (X,)), orthogonal_map


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="matrix or batch"):
        P.orthogonal(nn.Linear(3, 3), name="bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        P.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    m = P.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError):
        m.weight = pylucid.eye(3)


# ---- linalg.matrix_exp and householder_product --------------------------------------------------

def test_matrix_exp_values_and_grads():
    A = RNG.standard_normal((2, 3, 3))
    for scale in (0.1, 1.0, 8.0):
        E = pylucid.linalg.matrix_exp(pylucid.tensor(A * scale)).numpy()
        w, V = np.linalg.eig(A[0] * scale)
        ref = (V * np.exp(w)) @ np.linalg.inv(V)
        np.testing.assert_allclose(E[0], ref.real, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    S = RNG.standard_normal((3, 3))
    S = S - S.T
    E = pylucid.matrix_exp(pylucid.tensor(S)).numpy()
    np.testing.assert_allclose(E @ E.T, np.eye(3), atol=1e-12)
    X = pylucid.tensor(A, requires_grad=True)
    assert gradcheck(pylucid.linalg.matrix_exp, (X,))
    assert gradgradcheck(pylucid.linalg.matrix_exp, (pylucid.tensor(A[0] * 0.3, requires_grad=True),))


def test_householder_product_values_and_grads():
    A = RNG.standard_normal((5, 3))
    raw, tau = np.linalg.qr(A, mode="raw")
    V = np.ascontiguousarray(raw.T)
    Q = pylucid.linalg.householder_product(pylucid.tensor(V), pylucid.tensor(tau)).numpy()
    np.testing.assert_allclose(Q, np.linalg.qr(A)[0], atol=1e-12)
    Vb, taub = pylucid.tensor(RNG.standard_normal((2, 4, 3)), requires_grad=True), pylucid.tensor(
        RNG.uniform(0.5, 1.5, (2, 2)), requires_grad=True)
    assert gradcheck(pylucid.linalg.householder_product, (Vb, taub))
    with pytest.raises(pylucid.ShapeMismatch, match="greater than or equal"):
        pylucid.linalg.householder_product(pylucid.zeros(2, 3), pylucid.zeros(2))


# ---- PyTorch's numbers ----------------------------------------------------------------------------

def test_matches_torch():
    torch = pytest.importorskip("torch")
    res = {}
    for lib in (torch, pylucid):
        out = []
        lib.manual_seed(0)
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(4, 3))
        out += [m(lib.ones(2, 4)) for _ in range(3)]
        m.eval()
        out.append(m(lib.ones(2, 4)))
        lib.manual_seed(1)
        c = lib.nn.utils.parametrizations.spectral_norm(lib.nn.Conv2d(2, 3, 3))
        out.append(c(lib.ones(1, 2, 5, 5)))
        for mp, (i, o) in (("matrix_exp", (4, 4)), ("cayley", (4, 4)), ("householder", (5, 3))):
            lib.manual_seed(2)
            lin = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(i, o), orthogonal_map=mp)
            out.append(lin.weight)
            (lin(lib.ones(2, i)) ** 2).sum().backward()
            out.append(lin.parametrizations.weight.original.grad)
        res[lib.__name__] = [t.detach().numpy() for t in out]
    for a, b in zip(res["torch"], res["pylucid"]):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=2e-5)


def test_parametrize_cached_and_type_before():
    from pylucid.nn.utils import parametrize
    calls = []

    class Count(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 2

    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Count())
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert parametrize.type_before_parametrizations(nn.Linear(2, 2)) is nn.Linear
    calls.clear()
    with parametrize.cached():
        w1, w2 = m.weight, m.weight
        with parametrize.cached():
            w3 = m.weight
    assert w1 is w2 is w3 and len(calls) == 1
    m.weight
    assert len(calls) == 2
    # Spectral norm in training mode: one power iteration per cached block, not per access.
    pylucid.manual_seed(0)
    s = P.spectral_norm(nn.Linear(3, 3))
    with parametrize.cached():
        s.weight
        u1 = s.parametrizations.weight[0]._u.clone()
        s.weight
        assert s.parametrizations.weight[0]._u.tolist() == u1.tolist()


def test_registration_evaluates_the_parametrization_once():
    """Guards against register_parametrization skipping PyTorch's consistency evaluation: a
    spectral_norm registered in training mode takes 16 power-iteration steps in PyTorch (15 at
    construction, one in the check), so its _u, and every sigma after it, differed; and against
    a parametrization that changes the shape or dtype being accepted without unsafe=True."""
    from pylucid.nn.utils import parametrize

    pylucid.manual_seed(0)
    lin = nn.Linear(5, 4).double()
    w = lin.weight.detach().numpy().copy()
    state = pylucid.get_rng_state()
    u0 = pylucid.empty(4, dtype=pylucid.float64).normal_(0, 1).numpy()
    v = pylucid.empty(5, dtype=pylucid.float64).normal_(0, 1).numpy()
    pylucid.set_rng_state(state)
    P.spectral_norm(lin)
    u, v = u0 / np.linalg.norm(u0), v / np.linalg.norm(v)
    for _ in range(16):
        u = w @ v
        u /= np.linalg.norm(u)
        v = w.T @ u
        v /= np.linalg.norm(v)
    np.testing.assert_allclose(lin.parametrizations.weight[0]._u.numpy(), u, rtol=1e-12)

    class Widen(nn.Module):
        def forward(self, x):
            return pylucid.cat([x, x], 0)

    class Halve(nn.Module):
        def forward(self, x):
            return x.float()

    with pytest.raises(ValueError, match="shape"):
        parametrize.register_parametrization(nn.Linear(2, 3), "weight", Widen())
    with pytest.raises(ValueError, match="dtype"):
        parametrize.register_parametrization(nn.Linear(2, 3).double(), "weight", Halve())
    m = parametrize.register_parametrization(nn.Linear(2, 3), "weight", Widen(), unsafe=True)
    assert m.weight.shape == (6, 2)
    twice = parametrize.register_parametrization(nn.Linear(2, 3), "weight", Halve())
    with pytest.raises(ValueError, match="shape"):
        parametrize.register_parametrization(twice, "weight", Widen())
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    ref = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(5, 4).double())
    np.testing.assert_allclose(lin.parametrizations.weight[0]._u.numpy(),
                               ref.parametrizations.weight[0]._u.numpy(), rtol=1e-10)
