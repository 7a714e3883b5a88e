"""Optimizers, LR schedulers and gradient clipping: updates against hand-computed references
(float64, tight), against torch.optim when installed, state_dict round trips and errors."""
import math

import numpy as np
import pylucid
import pytest
from pylucid import nn, optim
from pylucid.nn.utils import clip_grad_norm_, clip_grad_value_, get_total_norm
from pylucid.optim import lr_scheduler

RNG = np.random.default_rng(7)


def leaf(a, dtype=pylucid.float64):
    return pylucid.tensor(np.asarray(a, dtype=np.float64), dtype=dtype).requires_grad_(True)


def np_of(t):
    return np.asarray(t.detach().double())


def set_grad(p, g):
    p.grad = pylucid.tensor(np.asarray(g, dtype=np.float64), dtype=p.dtype)


# ---- references (PyTorch's single-tensor formulas, in float64) ---------------------------------


def ref_sgd(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    p = p.copy()
    buf = None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def ref_adam(p, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, decoupled=False,
             maximize=False):
    b1, b2 = betas
    p = p.copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vmax = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = m + (1 - b1) * (g - m)
        v = b2 * v + (1 - b2) * g * g
        if amsgrad:
            vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / math.sqrt(1 - b2 ** t) + eps
        p = p - lr / (1 - b1 ** t) * m / denom
    return p, m, v


def run(opt_cls, p0, grads, **kw):
    p = leaf(p0)
    opt = opt_cls([p], **kw)
    for g in grads:
        set_grad(p, g)
        opt.step()
    return p, opt


GRADS = [RNG.standard_normal((3, 4)) for _ in range(5)]
P0 = RNG.standard_normal((3, 4))

SGD_CASES = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "dampening": 0.3},
    {"lr": 0.05, "momentum": 0.8, "nesterov": True},
    {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.01},
    {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1, "maximize": True},
]


@pytest.mark.parametrize("kw", SGD_CASES, ids=str)
def test_sgd_matches_reference(kw):
    """Guards against a momentum buffer that starts at zero instead of the first gradient,
    dampening applied on the first step, or nesterov using the raw buffer."""
    p, _ = run(optim.SGD, P0, GRADS, **kw)
    np.testing.assert_allclose(np_of(p), ref_sgd(P0, GRADS, **kw), rtol=1e-13, atol=1e-14)


ADAM_CASES = [
    {"lr": 0.01},
    {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6},
    {"lr": 0.01, "weight_decay": 0.1},
    {"lr": 0.01, "amsgrad": True},
    {"lr": 0.01, "maximize": True, "weight_decay": 0.05},
    {"lr": 0.5, "betas": (0.3, 0.5)},  # beta1 < 0.5: lerp's other formula
]


@pytest.mark.parametrize("kw", ADAM_CASES, ids=str)
def test_adam_matches_reference(kw):
    """Guards against missing bias correction, eps added inside the sqrt, or weight decay
    applied to the parameter instead of the gradient."""
    p, opt = run(optim.Adam, P0, GRADS, **kw)
    ref_p, ref_m, ref_v = ref_adam(P0, GRADS, **kw)
    np.testing.assert_allclose(np_of(p), ref_p, rtol=1e-12, atol=1e-14)
    s = opt.state[p]
    np.testing.assert_allclose(np_of(s["exp_avg"]), ref_m, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np_of(s["exp_avg_sq"]), ref_v, rtol=1e-12, atol=1e-15)
    assert s["step"].item() == len(GRADS) and s["step"].dtype == pylucid.float32
    assert ("max_exp_avg_sq" in s) == bool(kw.get("amsgrad"))


@pytest.mark.parametrize("wd", [1e-2, 0.3])
def test_adamw_decouples_weight_decay(wd):
    """Guards against AdamW adding weight decay to the gradient (that is Adam's L2 penalty)."""
    p, _ = run(optim.AdamW, P0, GRADS, lr=0.02, weight_decay=wd)
    ref_p, _, _ = ref_adam(P0, GRADS, lr=0.02, weight_decay=wd, decoupled=True)
    np.testing.assert_allclose(np_of(p), ref_p, rtol=1e-12, atol=1e-14)
    assert optim.AdamW([leaf(P0)]).defaults["weight_decay"] == 1e-2
    l2, _, _ = ref_adam(P0, GRADS, lr=0.02, weight_decay=wd)
    assert not np.allclose(ref_p, l2)


def test_adam_one_step_moves_by_lr():
    """Guards against a bias correction that leaves the first step scaled by (1 - beta1)."""
    w = leaf([1.0, -2.0, 3.0])
    opt = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    np.testing.assert_allclose(np_of(w), [0.9, -1.9, 2.9], rtol=1e-7)


# ---- against torch.optim -----------------------------------------------------------------------

TORCH_CASES = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
]


@pytest.mark.parametrize("name,kw", TORCH_CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch_optim(name, kw, dtype):
    """Guards against drifting from PyTorch's update order (torch is the reference users know)."""
    torch = pytest.importorskip("torch")
    shapes = [(5, 3), (3,), (2, 2, 2)]
    inits = [RNG.standard_normal(s) for s in shapes]
    ours = [leaf(a, getattr(pylucid, dtype)) for a in inits]
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in inits]
    o = getattr(optim, name)(ours, **kw)
    t = getattr(torch.optim, name)(theirs, **kw)
    for _ in range(6):
        gs = [RNG.standard_normal(s) for s in shapes]
        for p, q, g in zip(ours, theirs, gs):
            set_grad(p, g)
            q.grad = torch.tensor(g, dtype=q.dtype)
        o.step()
        t.step()
    tol = 1e-6 if dtype == "float32" else 1e-13
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(np_of(p), q.detach().double().numpy(), rtol=tol, atol=tol)


# ---- mechanics ---------------------------------------------------------------------------------


def test_step_is_one_fused_call_per_group(monkeypatch):
    """Guards against step() regressing to a Python loop of per-parameter C++ calls."""
    calls = []
    real = pylucid._C._adam_
    monkeypatch.setattr(pylucid._C, "_adam_", lambda *a: (calls.append(len(a[0])), real(*a))[1])
    ps = [leaf(RNG.standard_normal(4)) for _ in range(5)]
    opt = optim.Adam([{"params": ps[:3]}, {"params": ps[3:], "lr": 0.1}])
    for p in ps:
        set_grad(p, np.ones(4))
    opt.step()
    assert calls == [3, 2]


def test_params_without_grad_are_skipped_then_join():
    """Guards against updating (or creating state for) a parameter that got no gradient."""
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    opt = optim.Adam([a, b], lr=0.1)
    set_grad(a, [1.0, 1.0])
    opt.step()
    assert np_of(b).tolist() == [3.0, 4.0] and b not in opt.state
    set_grad(b, [1.0, -1.0])
    opt.step()
    assert opt.state[b]["step"].item() == 1 and opt.state[a]["step"].item() == 2
    np.testing.assert_allclose(np_of(b), [2.9, 4.1], rtol=1e-7)


def test_param_groups_use_their_own_hyperparameters():
    """Guards against group options being ignored in favour of the defaults."""
    a, b = leaf([1.0]), leaf([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    set_grad(a, [1.0])
    set_grad(b, [1.0])
    opt.step()
    assert np_of(a).tolist() == pytest.approx([0.9]) and np_of(b).tolist() == pytest.approx([0.5])
    assert opt.param_groups[1]["momentum"] == 0


def test_step_bumps_versions_and_invalidates_saved_graph():
    """Guards against an in-place update that a backward saved the old value for not noticing."""
    w = leaf([1.0, 2.0])
    opt = optim.SGD([w], lr=0.1)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    v0 = w._version
    opt.step()
    assert w._version > v0
    with pytest.raises(pylucid.LucidError):
        y.backward()


def test_non_contiguous_param_updates_in_place():
    """Guards against updating a contiguous copy of a strided parameter and dropping it."""
    base = np.arange(6.0).reshape(2, 3)
    p = pylucid.tensor(base.T.copy(), dtype=pylucid.float64).t()  # shape (2, 3), strided
    p.requires_grad_(True)
    assert not p.is_contiguous()
    opt = optim.Adam([p], lr=0.1)
    set_grad(p, np.ones((2, 3)))
    opt.step()
    np.testing.assert_allclose(np_of(p), base - 0.1, rtol=1e-7)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_low_precision_params(dtype):
    """Guards against half-precision state arithmetic done in 16 bits (it must accumulate in
    float32) or state stored in another dtype than the parameter's."""
    dt = getattr(pylucid, dtype)
    # NOTE: gradients kept away from 0: (1 - beta2) * g^2 underflows float16 below |g| ~ 1e-2,
    # and Adam then divides by eps (PyTorch's float16 Adam has the same hazard).
    grads = [np.sign(g) * (0.2 + np.abs(g)) for g in GRADS]
    p = leaf(P0, dt)
    opt = optim.Adam([p], lr=0.01)
    for g in grads:
        set_grad(p, g)
        opt.step()
    assert opt.state[p]["exp_avg"].dtype == dt
    ref_p, _, _ = ref_adam(P0, grads, lr=0.01)
    tol = {"float16": 3e-3, "bfloat16": 2e-2, "float32": 1e-6}[dtype]
    np.testing.assert_allclose(np_of(p), ref_p, rtol=tol, atol=tol)


def test_zero_grad_modes():
    """Guards against zero_grad(set_to_none=False) dropping the tensor or True keeping it."""
    w = leaf([1.0, 2.0])
    opt = optim.SGD([w], lr=0.1)
    set_grad(w, [3.0, 4.0])
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_closure_is_evaluated_with_grad():
    """Guards against step(closure) not returning the loss or running it under no_grad."""
    w = leaf([2.0])
    opt = optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with pylucid.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 4.0 and np_of(w).tolist() == [1.0]


def test_constructor_errors():
    """Guards against optimizers silently accepting unusable arguments."""
    w = leaf([1.0])
    with pytest.raises(pylucid.LucidError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(pylucid.LucidError, match="learning rate"):
        optim.SGD([w], lr=-1)
    with pytest.raises(pylucid.LucidError, match="nesterov"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(pylucid.LucidError, match="betas"):
        optim.Adam([w], betas=(1.0, 0.9))
    with pytest.raises(pylucid.LucidError, match="more than one parameter group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(pylucid.LucidError, match="twice"):
        optim.SGD([w, w], lr=0.1)
    with pytest.raises(pylucid.LucidError, match="non-leaf"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(pylucid.DtypeMismatch, match="wrap it in a list"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(pylucid.DtypeMismatch, match="sets"):
        optim.SGD([{"params": {w}}], lr=0.1)


def test_grad_shape_mismatch_is_rejected_before_any_update():
    """Guards against a half-applied step when one parameter's grad is malformed."""
    a, b = leaf([1.0, 2.0]), leaf([3.0])
    opt = optim.SGD([a, b], lr=0.1)
    set_grad(a, [1.0, 1.0])
    b.grad = None
    opt.step()
    state = opt.state_dict()
    assert state["state"] == {}
    with pytest.raises(pylucid.ShapeMismatch, match="grad of param 1"):
        pylucid._C._sgd_([a, b], [a.grad, a.grad], [None, None], 0.1, 0.0, 0.0, 0.0, False, False)
    np.testing.assert_allclose(np_of(a), [0.9, 1.9])


# ---- state_dict --------------------------------------------------------------------------------


def _train(opt_cls, steps, params, grads_seq, opt=None, **kw):
    opt = opt or opt_cls(params, **kw)
    for gs in grads_seq[:steps]:
        for p, g in zip(params, gs):
            set_grad(p, g)
        opt.step()
    return opt


@pytest.mark.parametrize("opt_cls,kw", [(optim.Adam, {"lr": 0.01, "amsgrad": True}),
                                        (optim.SGD, {"lr": 0.05, "momentum": 0.9}),
                                        (optim.AdamW, {"lr": 0.01})])
def test_state_dict_resume_is_exact(opt_cls, kw):
    """Guards against a resumed run diverging from an uninterrupted one (lost step counts or
    momentum, or state aliased between the two optimizers)."""
    grads = [[RNG.standard_normal(3), RNG.standard_normal((2, 2))] for _ in range(8)]
    inits = [RNG.standard_normal(3), RNG.standard_normal((2, 2))]
    full = [leaf(a) for a in inits]
    _train(opt_cls, 8, full, grads, **kw)

    first = [leaf(a) for a in inits]
    opt1 = _train(opt_cls, 4, first, grads, **kw)
    sd = opt1.state_dict()
    assert sorted(sd) == ["param_groups", "state"] and sd["param_groups"][0]["params"] == [0, 1]
    resumed = [leaf(np_of(p)) for p in first]
    opt2 = opt_cls(resumed, lr=123.0)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == kw["lr"]
    _train(opt_cls, 4, resumed, grads[4:], opt=opt2)
    for p, q in zip(full, resumed):
        np.testing.assert_array_equal(np_of(p), np_of(q))
    # opt1's state must not have advanced with opt2's steps
    key = "exp_avg" if "exp_avg" in opt1.state[first[0]] else "momentum_buffer"
    assert not np.array_equal(np_of(opt1.state[first[0]][key]), np_of(opt2.state[resumed[0]][key]))


def test_state_dict_survives_save_load(tmp_path):
    """Guards against optimizer state that can't go through pylucid.save (int keys, tuples)."""
    p = leaf(RNG.standard_normal(3))
    opt = _train(optim.Adam, 3, [p], [[RNG.standard_normal(3)] for _ in range(3)], lr=0.01)
    pylucid.save(opt.state_dict(), tmp_path / "opt.safetensors")
    sd = pylucid.load(tmp_path / "opt.safetensors")
    assert sd["param_groups"][0]["betas"] == (0.9, 0.999)
    opt2 = optim.Adam([leaf(np_of(p))], lr=0.01)
    opt2.load_state_dict(sd)
    s = next(iter(opt2.state.values()))
    np.testing.assert_array_equal(np_of(s["exp_avg"]), np_of(opt.state[p]["exp_avg"]))
    assert s["step"].item() == 3


def test_load_state_dict_errors():
    """Guards against loading a state dict of another model's optimizer without complaint."""
    a, b = leaf(np.ones(3)), leaf(np.ones((2, 2)))
    opt = _train(optim.Adam, 1, [a, b], [[np.ones(3), np.ones((2, 2))]], lr=0.1)
    sd = opt.state_dict()
    with pytest.raises(pylucid.ShapeMismatch, match="parameter group"):
        optim.Adam([{"params": [leaf(np.ones(3))]}, {"params": [leaf(np.ones((2, 2)))]}]).load_state_dict(sd)
    with pytest.raises(pylucid.ShapeMismatch, match="has 2 params"):
        optim.Adam([leaf(np.ones(3))]).load_state_dict(sd)
    with pytest.raises(pylucid.ShapeMismatch, match="exp_avg"):
        optim.Adam([leaf(np.ones(3)), leaf(np.ones(4))]).load_state_dict(sd)
    with pytest.raises(pylucid.LucidError, match="missing key 'param_groups'"):
        optim.Adam([a, b]).load_state_dict({"state": {}})
    with pytest.raises(pylucid.LucidError, match="unexpected key"):
        optim.Adam([a, b]).load_state_dict(dict(sd, extra=1))
    with pytest.raises(pylucid.LucidError, match="index 5"):
        optim.Adam([a, b]).load_state_dict({"state": {5: {}}, "param_groups": sd["param_groups"]})
    fresh = optim.Adam([a, b], lr=0.5)
    before = fresh.param_groups[0]["lr"]
    with pytest.raises(pylucid.ShapeMismatch):
        fresh.load_state_dict({"state": sd["state"], "param_groups": sd["param_groups"] * 2})
    assert fresh.param_groups[0]["lr"] == before  # untouched on error


def test_load_state_dict_casts_to_param_dtype():
    """Guards against float64 state loaded into a float32 model making step() fail."""
    p64 = leaf(np.ones(3))
    opt = _train(optim.Adam, 2, [p64], [[np.ones(3)], [np.ones(3)]], lr=0.1)
    p32 = leaf(np.ones(3), pylucid.float32)
    opt2 = optim.Adam([p32], lr=0.1)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.state[p32]["exp_avg"].dtype == pylucid.float32
    set_grad(p32, np.ones(3))
    opt2.step()
    assert opt2.state[p32]["step"].item() == 3


# ---- LR schedulers -----------------------------------------------------------------------------


def _lrs(make, steps, lr=1.0):
    opt = optim.SGD([leaf([0.0])], lr=lr)
    sched = make(opt)
    out = []
    for _ in range(steps):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out, sched


def test_step_lambda_cosine_schedules():
    """Guards against off-by-one schedules (the first step must use the base rate)."""
    lrs, _ = _lrs(lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5), 7)
    assert lrs == pytest.approx([1, 1, 1, 0.5, 0.5, 0.5, 0.25])
    lrs, _ = _lrs(lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1)), 4, lr=0.2)
    assert lrs == pytest.approx([0.2, 0.1, 0.2 / 3, 0.05])
    lrs, _ = _lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.1), 9)
    closed = [0.1 + 0.9 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(9)]
    assert lrs == pytest.approx(closed, abs=1e-12)


def test_cosine_with_warmup():
    """Guards against a warmup that starts at base_lr or a decay that ends above zero."""
    make = lambda o: lr_scheduler.get_cosine_schedule_with_warmup(o, 3, 11)
    lrs, _ = _lrs(make, 12, lr=0.6)
    assert lrs[:4] == pytest.approx([0.0, 0.2, 0.4, 0.6])
    assert lrs[7] == pytest.approx(0.3) and lrs[11] == pytest.approx(0.0, abs=1e-12)
    lrs2, sched = _lrs(lambda o: lr_scheduler.CosineWarmupLR(o, 3, 11), 12, lr=0.6)
    assert lrs2 == pytest.approx(lrs)
    assert sched.state_dict()["num_warmup_steps"] == 3


def test_scheduler_state_dict_and_resume():
    """Guards against a scheduler that restarts its schedule after a checkpoint reload."""
    opt = optim.SGD([leaf([0.0])], lr=1.0)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    for _ in range(3):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3
    opt2 = optim.SGD([leaf([0.0])], lr=1.0)
    opt2.load_state_dict(opt.state_dict())
    sched2 = lr_scheduler.StepLR(opt2, step_size=2, gamma=0.1)
    sched2.load_state_dict(sd)
    opt2.step()
    sched2.step()
    assert opt2.param_groups[0]["lr"] == pytest.approx(0.01) and sched2.get_last_lr() == pytest.approx([0.01])
    with pytest.raises(pylucid.LucidError, match="initial_lr"):
        lr_scheduler.StepLR(optim.SGD([leaf([0.0])], lr=1.0), step_size=2, last_epoch=4)


def test_schedulers_match_torch():
    """Guards against differences from torch's recursive schedule formulas."""
    torch = pytest.importorskip("torch")
    makers = [
        (lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
         lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.01)),
        (lambda o: lr_scheduler.StepLR(o, 2, 0.3), lambda o: torch.optim.lr_scheduler.StepLR(o, 2, 0.3)),
    ]
    for ours, theirs in makers:
        lrs, _ = _lrs(ours, 14, lr=0.5)
        topt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.5)
        ts = theirs(topt)
        ref = []
        for _ in range(14):
            ref.append(topt.param_groups[0]["lr"])
            topt.step()
            ts.step()
        assert lrs == pytest.approx(ref, rel=1e-12, abs=1e-15)


# ---- gradient clipping -------------------------------------------------------------------------


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm(norm_type):
    """Guards against a total norm taken per tensor instead of over all gradients together."""
    gs = [RNG.standard_normal((3, 4)), RNG.standard_normal(5)]
    ps = [leaf(np.zeros_like(g)) for g in gs]
    for p, g in zip(ps, gs):
        set_grad(p, g)
    flat = np.concatenate([g.ravel() for g in gs])
    total = np.abs(flat).max() if math.isinf(norm_type) else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    got = clip_grad_norm_(ps, max_norm=0.5, norm_type=norm_type)
    assert got.shape == () and got.item() == pytest.approx(total, rel=1e-12)
    coef = 0.5 / (total + 1e-6)
    for p, g in zip(ps, gs):
        np.testing.assert_allclose(np_of(p.grad), g * coef, rtol=1e-12)
    assert get_total_norm([p.grad for p in ps], norm_type).item() == pytest.approx(0.5, rel=1e-5)


def test_clip_grad_norm_below_threshold_and_edge_cases():
    """Guards against scaling gradients that are already small, and against crashing on
    parameters without grads or a non-finite norm."""
    p, q = leaf([3.0, 4.0]), leaf([1.0])
    set_grad(p, [3.0, 4.0])
    assert clip_grad_norm_([p, q], max_norm=10.0).item() == pytest.approx(5.0)
    assert p.grad.tolist() == [3.0, 4.0]
    assert clip_grad_norm_([q], 1.0).item() == 0.0
    set_grad(p, [math.inf, 1.0])
    with pytest.raises(pylucid.LucidError, match="non-finite"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    with pytest.raises(pylucid.LucidError, match="norm_type"):
        clip_grad_norm_(p, 1.0, norm_type=-1)


def test_clip_grad_norm_against_torch():
    """Guards against a clip coefficient that differs from torch's max_norm / (total + 1e-6)."""
    torch = pytest.importorskip("torch")
    gs = [RNG.standard_normal((4, 4)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]
    ps = [leaf(g, pylucid.float32) for g in gs]
    tps = [torch.zeros(g.shape, requires_grad=True) for g in gs]
    for p, tp, g in zip(ps, tps, gs):
        p.grad = pylucid.tensor(g)
        tp.grad = torch.tensor(g)
    a = clip_grad_norm_(ps, 1.0)
    b = torch.nn.utils.clip_grad_norm_(tps, 1.0)
    assert a.dtype == pylucid.float32 and a.item() == pytest.approx(b.item(), rel=1e-6)
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(np_of(p.grad), tp.grad.double().numpy(), rtol=1e-6)


def test_clip_grad_value():
    """Guards against clip_grad_value_ clamping the parameters instead of their grads."""
    p = leaf([5.0, 5.0, 5.0])
    set_grad(p, [-3.0, 0.5, 2.0])
    clip_grad_value_(p, 1.0)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0] and np_of(p).tolist() == [5.0] * 3


def test_parameters_to_vector_round_trip():
    """Guards against vector_to_parameters writing slices in the wrong order or shape."""
    from pylucid.nn.utils import parameters_to_vector, vector_to_parameters

    net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1)).double()
    vec = parameters_to_vector(net.parameters())
    assert vec.shape == (3 * 2 + 2 + 2 + 1,)
    vector_to_parameters(pylucid.arange(11.0, dtype=pylucid.float64), net.parameters())
    assert net[0].weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and net[1].bias.tolist() == [10.0]
    with pytest.raises(pylucid.ShapeMismatch):
        vector_to_parameters(pylucid.ones(3), net.parameters())


def test_print_optimizer_as_torch():
    """Guards against print(optimizer) running parameter groups together: PyTorch puts an empty
    line between 'Parameter Group 0' and 'Parameter Group 1' and lists each group's keys sorted."""
    m = pylucid.nn.Linear(2, 1)
    opt = pylucid.optim.SGD([{"params": [m.weight]}, {"params": [m.bias], "lr": 0.01}], lr=0.1)
    lines = repr(opt).split("\n")
    assert lines[:3] == ["SGD (", "Parameter Group 0", "    dampening: 0"] and lines[-1] == ")"
    i = lines.index("Parameter Group 1")
    assert lines[i - 1] == "" and lines.count("") == 1 and "    lr: 0.01" in lines[i:]


def run_float32_against_torch(name, kw, n=100_003, steps=4):
    """`steps` steps of optimizer `name` on one float32 parameter of n elements (vector body, tail
    and both threads' chunks), in pylucid and torch from the same values and gradients."""
    torch = pytest.importorskip("torch")
    if pylucid.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("the baseline kernels round each product apart")
    p0 = RNG.standard_normal(n).astype(np.float32)
    ours = leaf(p0, pylucid.float32)
    theirs = torch.tensor(p0, requires_grad=True)
    o, t = getattr(optim, name)([ours], **kw), getattr(torch.optim, name)([theirs], **kw)
    for _ in range(steps):
        g = RNG.standard_normal(n).astype(np.float32)
        set_grad(ours, g)
        theirs.grad = torch.tensor(g)
        o.step()
        t.step()
    return np_of(ours), theirs.detach().numpy()


@pytest.mark.parametrize("kw", [{"lr": 0.1}, {"lr": 0.1, "weight_decay": 0.01},
                                {"lr": 0.1, "momentum": 0.9, "dampening": 0.3},
                                {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}],
                         ids=str)
def test_sgd_same_bits_as_torch(kw):
    """Guards against rounding SGD's `add(alpha=...)` steps differently from PyTorch's CPU kernels
    (fused multiply-adds): with the vector kernels, every float32 parameter has torch's bits."""
    ours, theirs = run_float32_against_torch("SGD", kw)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name,kw", [("Adam", {"lr": 0.01, "weight_decay": 0.1}), ("AdamW", {"lr": 0.01})])
def test_adam_rounds_as_torch(name, kw):
    """Guards against Adam's moments drifting from PyTorch's fused lerp/addcmul rounding: only
    PyTorch's sqrt (not correctly rounded) may leave a last-bit difference, in few elements."""
    a, b = run_float32_against_torch(name, kw)
    assert (a != b).mean() < 0.005, (name, (a != b).mean())
    np.testing.assert_allclose(a, b, rtol=3e-7, atol=1e-7)
