"""RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam: parameters and state equal to
torch.optim's over many steps (float64 tight, float32 to rounding) for every option, param
groups with their own options, add_param_group, state_dict layout and resume, errors."""
import numpy as np
import pylucid
import pylucid.optim as optim
import pytest

RNG = np.random.default_rng(5)
P0 = [RNG.standard_normal((3, 4)), RNG.standard_normal(5)]

CONFIGS = [
    ("RMSprop", {}), ("RMSprop", {"momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"alpha": 0.9, "maximize": True, "eps": 1e-3}),
    ("Adagrad", {}), ("Adagrad", {"lr_decay": 0.1, "weight_decay": 0.05, "initial_accumulator_value": 0.2}),
    ("Adagrad", {"maximize": True}),
    ("Adadelta", {}), ("Adadelta", {"rho": 0.8, "weight_decay": 0.1, "lr": 0.5, "maximize": True}),
    ("Adamax", {}), ("Adamax", {"betas": (0.8, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}), ("NAdam", {"weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {}), ("RAdam", {"weight_decay": 0.1, "betas": (0.8, 0.9)}),
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)]


def _grads(step, shapes):
    r = np.random.default_rng(100 + step)
    return [r.standard_normal(s) for s in shapes]


def _run(lib, cls, kw, dtype, steps=12):
    """Train two params with lib's optimizer on fixed gradient sequences; return params and state."""
    params = [lib.tensor(p.copy(), dtype=dtype, requires_grad=True) for p in P0]
    opt = getattr(lib.optim, cls)(params, **kw)
    for t in range(steps):
        for p, g in zip(params, _grads(t, [p.shape for p in P0])):
            p.grad = lib.tensor(g, dtype=dtype)
        opt.step()
    return [p.detach().numpy() for p in params], opt


@pytest.mark.parametrize("cls,kw", CONFIGS, ids=IDS)
def test_matches_torch_float64_and_float32(cls, kw):
    """Twelve steps on fixed gradients give torch's parameters and state (float64 to 1e-12,
    float32 to a few ulps), and the same state_dict layout."""
    torch = pytest.importorskip("torch")
    for dt, tdt, rtol in ((pylucid.float64, torch.float64, 1e-11), (pylucid.float32, torch.float32, 2e-5)):
        ours, opt = _run(pylucid, cls, kw, dt)
        theirs, topt = _run(torch, cls, kw, tdt)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2)
        sd, tsd = opt.state_dict(), topt.state_dict()
        assert sd["param_groups"] == tsd["param_groups"]
        assert sd["state"].keys() == tsd["state"].keys()
        for k in tsd["state"]:
            assert list(sd["state"][k]) == list(tsd["state"][k]) or set(sd["state"][k]) == set(tsd["state"][k])
            for name, v in tsd["state"][k].items():
                np.testing.assert_allclose(sd["state"][k][name].numpy(), v.numpy(), rtol=rtol, atol=rtol * 1e-2,
                                           err_msg=name)


def _np_reference(cls, p, grads, kw):
    """A numpy transcription of the update rule in float64 (so the tests need no torch)."""
    p = p.copy()
    if cls == "RMSprop":
        v = np.zeros_like(p)
        for g in grads:
            v = 0.99 * v + 0.01 * g * g
            p = p - 0.01 * g / (np.sqrt(v) + 1e-8)
    elif cls == "Adagrad":
        s = np.zeros_like(p)
        for g in grads:
            s = s + g * g
            p = p - 0.01 * g / (np.sqrt(s) + 1e-10)
    elif cls == "Adamax":
        m, u = np.zeros_like(p), np.zeros_like(p)
        for t, g in enumerate(grads, 1):
            m = 0.9 * m + 0.1 * g
            u = np.maximum(0.999 * u, np.abs(g) + 1e-8)
            p = p - 2e-3 / (1 - 0.9 ** t) * m / u
    return p


@pytest.mark.parametrize("cls", ["RMSprop", "Adagrad", "Adamax"])
def test_against_numpy_reference(cls):
    """The default update rules, transcribed in numpy, agree in float64."""
    p0 = RNG.standard_normal(6)
    grads = [RNG.standard_normal(6) for _ in range(8)]
    w = pylucid.tensor(p0.copy(), requires_grad=True)
    opt = getattr(optim, cls)([w])
    for g in grads:
        w.grad = pylucid.tensor(g)
        opt.step()
    np.testing.assert_allclose(w.detach().numpy(), _np_reference(cls, p0, grads, {}), rtol=1e-12)


def test_param_groups_with_own_options_and_add_param_group():
    """Each group uses its own options (falling back to the defaults); a group added later gets
    the defaults and (Adagrad) its state at once; params without grads are skipped."""
    a = pylucid.ones(2, requires_grad=True)
    b = pylucid.ones(2, requires_grad=True)
    c = pylucid.ones(2, requires_grad=True)
    opt = optim.RMSprop([{"params": [a]}, {"params": [b], "lr": 0.1, "momentum": 0.5}], lr=0.01)
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[0]["momentum"] == 0
    opt.add_param_group({"params": [c], "alpha": 0.5})
    a.grad = pylucid.ones(2)
    b.grad = pylucid.ones(2)
    opt.step()
    assert c.tolist() == [1.0, 1.0] and c not in opt.state
    assert "momentum_buffer" in opt.state[b] and "momentum_buffer" not in opt.state[a]
    assert abs(1 - a.tolist()[0]) < abs(1 - b.tolist()[0])
    ag = optim.Adagrad([a], initial_accumulator_value=0.5)
    ag.add_param_group({"params": [c]})
    assert ag.state[c]["sum"].tolist() == [0.5, 0.5]


def test_state_dict_resume_is_exact():
    """Stopping, saving the state_dict and resuming in a fresh optimizer gives the same numbers."""
    for cls in ("NAdam", "RAdam", "Adadelta", "RMSprop"):
        full, _ = _run(pylucid, cls, {}, pylucid.float64, steps=6)
        params = [pylucid.tensor(p.copy(), requires_grad=True, dtype=pylucid.float64) for p in P0]
        opt = getattr(optim, cls)(params)
        for t in range(6):
            if t == 3:
                sd = opt.state_dict()
                opt = getattr(optim, cls)(params)
                opt.load_state_dict(sd)
            for p, g in zip(params, _grads(t, [p.shape for p in P0])):
                p.grad = pylucid.tensor(g)
            opt.step()
        for a, b in zip(params, full):
            np.testing.assert_allclose(a.detach().numpy(), b, rtol=1e-13)


def test_errors():
    """Out-of-range options are ValueErrors naming the optimizer; bad state is refused untouched."""
    w = pylucid.ones(2, requires_grad=True)
    for cls, kw in [("RMSprop", {"lr": -1}), ("RMSprop", {"momentum": -1}), ("Adagrad", {"lr_decay": -1}),
                    ("Adadelta", {"rho": 1.5}), ("Adamax", {"betas": (1.0, 0.9)}), ("NAdam", {"eps": -1}),
                    ("RAdam", {"weight_decay": -1})]:
        with pytest.raises(ValueError, match=cls):
            getattr(optim, cls)([w], **kw)
    with pytest.raises(pylucid.LucidError, match="differentiable"):
        optim.Adamax([w], differentiable=True)
    opt = optim.Adadelta([w])
    w.grad = pylucid.ones(2)
    opt.step()
    opt.state[w]["acc_delta"] = pylucid.zeros(3)
    before = w.tolist()
    with pytest.raises(pylucid.ShapeMismatch, match="adadelta"):
        opt.step()
    assert w.tolist() == before


def test_scalar_state_follows_a_float64_default_dtype():
    """Guards against step/mu_product/eta being float32 in a float64 program: PyTorch keeps them
    in float64 there, and NAdam's mu_product (ASGD's eta) rounded to float32 moved a float64
    Rosenbrock run by 1e-5."""
    def run(lib, make):
        lib.set_default_dtype(lib.float64)
        try:
            p = lib.tensor([-1.5, 2.0], requires_grad=True)
            opt = make(lib, p)
            for _ in range(60):
                opt.zero_grad()
                ((1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2).backward()
                opt.step()
            return p.detach().numpy().copy(), opt.state[p]
        finally:
            lib.set_default_dtype(lib.float32)

    makers = [lambda lib, p: lib.optim.NAdam([p], lr=0.05, weight_decay=0.01, decoupled_weight_decay=True),
              lambda lib, p: lib.optim.ASGD([p], lr=1e-4, t0=20),
              lambda lib, p: lib.optim.Adam([p], lr=0.05),
              lambda lib, p: lib.optim.Rprop([p], lr=1e-3)]
    for make in makers:
        ours, state = run(pylucid, make)
        assert state["step"].dtype == pylucid.float64
        for k in ("mu_product", "eta", "mu"):
            if k in state:
                assert state[k].dtype == pylucid.float64, k
    p = pylucid.zeros(1, requires_grad=True)
    p.grad = pylucid.ones(1)
    opt = optim.Adam([p], fused=True)
    opt.step()
    assert opt.state[p]["step"].dtype == pylucid.float32
    torch = pytest.importorskip("torch")
    for make in makers:
        np.testing.assert_allclose(run(pylucid, make)[0], run(torch, make)[0], rtol=1e-12, atol=1e-12)
