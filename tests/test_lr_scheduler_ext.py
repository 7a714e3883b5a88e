"""The PyTorch learning-rate schedules: the exact float sequence of every group's rate (and
momentum/betas for OneCycleLR) over many steps equals torch.optim.lr_scheduler's, including
SequentialLR switching, ChainedScheduler composition, ReduceLROnPlateau on a metric sequence,
state_dict round trips; and without torch, closed-form checks of the same schedules."""
import math

import pylucid
import pylucid.optim as optim
import pytest
from pylucid.optim import lr_scheduler as L


def _opt(lib, cls="SGD", **kw):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    return getattr(lib.optim, cls)([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, **kw)


def _lambda(e):
    return 0.9 ** e + 0.01 * e


def _mult(e):
    return 0.95


SCHEDULES = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": _lambda}),
    ("MultiplicativeLR", {"lr_lambda": _mult}),
    ("LinearLR", {"start_factor": 0.25, "end_factor": 0.9, "total_iters": 6}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 4}),
    ("PolynomialLR", {"total_iters": 8, "power": 2.0}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.001}),
    ("OneCycleLR", {"max_lr": [1.0, 2.0], "total_steps": 25}),
    ("OneCycleLR", {"max_lr": 1.0, "epochs": 5, "steps_per_epoch": 5, "anneal_strategy": "linear",
                    "three_phase": True}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": [0.1, 0.2], "step_size_up": 4, "step_size_down": 3}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3, "mode": "triangular2"}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 5, "mode": "exp_range", "gamma": 0.9}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "scale_fn": _mult, "scale_mode": "iterations",
                  "cycle_momentum": False}),
]


def _trace(lib, name, kw, steps=24, cls="SGD", okw=None):
    opt = _opt(lib, cls, **({"momentum": 0.9} if okw is None else okw))
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kw)
    out = []
    for _ in range(steps):
        out.append([(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups])
        opt.step()
        sched.step()
    out.append(sched.get_last_lr())
    return out


@pytest.mark.parametrize("name,kw", SCHEDULES, ids=[f"{s[0]}-{i}" for i, s in enumerate(SCHEDULES)])
def test_sequence_equals_torch(name, kw):
    """Every rate of every group, over 24 steps, is the same float as PyTorch's."""
    torch = pytest.importorskip("torch")
    assert _trace(pylucid, name, kw) == _trace(torch, name, kw)


def test_onecycle_cycles_adam_betas_like_torch():
    """With Adam, OneCycleLR cycles beta1 instead of momentum, as PyTorch does."""
    torch = pytest.importorskip("torch")
    kw = {"max_lr": 0.01, "total_steps": 20, "pct_start": 0.25}
    assert _trace(pylucid, "OneCycleLR", kw, 20, "Adam", {}) == _trace(torch, "OneCycleLR", kw, 20, "Adam", {})


def test_cyclic_cycles_adam_betas_like_torch():
    """With Adam, CyclicLR cycles beta1 inversely to the rate, as PyTorch does."""
    torch = pytest.importorskip("torch")
    kw = {"base_lr": 0.001, "max_lr": 0.01, "step_size_up": 3}
    assert _trace(pylucid, "CyclicLR", kw, 20, "Adam", {}) == _trace(torch, "CyclicLR", kw, 20, "Adam", {})


def test_cyclic_closed_form_without_torch():
    """The triangular policy climbs linearly to max_lr and back, momentum moving the other way;
    triangular2 halves the height each cycle; the state_dict round trip continues the sequence."""
    opt = _opt(pylucid)
    sched = L.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2, mode="triangular2")
    lrs, moms = [], []
    for _ in range(9):
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
        opt.step()
        sched.step()
    assert [round(v, 6) for v in lrs] == [0.1, 0.3, 0.5, 0.3, 0.1, 0.2, 0.3, 0.2, 0.1]
    assert [round(v, 6) for v in moms[:3]] == [0.9, 0.85, 0.8]
    sd = sched.state_dict()
    again = L.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2, mode="triangular2")
    again.load_state_dict(sd)
    again.step()
    assert math.isclose(opt.param_groups[0]["lr"], 0.1 + 0.4 / 4)  # step 10: top of cycle 3


def _sequential(lib):
    opt = _opt(lib)
    S = lib.optim.lr_scheduler
    warm = S.LinearLR(opt, start_factor=0.1, total_iters=4)
    cos = S.CosineAnnealingLR(opt, T_max=10)
    seq = S.SequentialLR(opt, [warm, cos], milestones=[4])
    out = []
    for _ in range(16):
        out.append([g["lr"] for g in opt.param_groups])
        opt.step()
        seq.step()
    chained_opt = _opt(lib)
    ch = S.ChainedScheduler([S.ExponentialLR(chained_opt, 0.9), S.StepLR(chained_opt, 3, 0.5)])
    for _ in range(10):
        out.append(ch.get_last_lr())
        chained_opt.step()
        ch.step()
    return out


def test_sequential_and_chained_equal_torch():
    """Warmup then cosine through SequentialLR, and two chained schedules, as in PyTorch."""
    torch = pytest.importorskip("torch")
    assert _sequential(pylucid) == _sequential(torch)


def _plateau(lib, **kw):
    opt = _opt(lib)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.96, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.6, 0.6, 0.6]
    out = []
    for m in metrics:
        opt.step()
        sched.step(m)
        out.append(sched.get_last_lr())
    return out


def test_reduce_on_plateau_equals_torch():
    """Patience, cooldown, threshold modes and min_lr follow PyTorch."""
    torch = pytest.importorskip("torch")
    for kw in ({"patience": 2}, {"patience": 1, "cooldown": 2, "factor": 0.5, "min_lr": [0.02, 0.1]},
               {"mode": "max", "patience": 0, "threshold_mode": "abs", "threshold": 0.01}):
        assert _plateau(pylucid, **kw) == _plateau(torch, **kw)


def test_closed_forms_without_torch():
    """The recursive rates agree with the closed forms (to rounding) and step(epoch) jumps."""
    opt = _opt(pylucid)
    sched = L.MultiStepLR(opt, milestones=[2, 4], gamma=0.1)
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert [round(v, 6) for v in lrs] == [0.1, 0.1, 0.01, 0.01, 0.001, 0.001]
    opt = _opt(pylucid)
    sched = L.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    assert math.isclose(opt.param_groups[0]["lr"], 1.0 / 25)
    assert opt.param_groups[0]["momentum"] == 0.95
    for _ in range(9):
        opt.step()
        sched.step()
    assert math.isclose(opt.param_groups[0]["lr"], 1.0 / 25 / 1e4, rel_tol=1e-9)
    sched.step()  # step 10 of 10 is still allowed (PyTorch's off-by-one)
    with pytest.raises(ValueError, match="total steps"):
        sched.step()
    opt = _opt(pylucid)
    sched = L.ExponentialLR(opt, 0.5)
    sched.step(3)
    assert math.isclose(opt.param_groups[0]["lr"], 0.1 * 0.125)


def test_state_dict_round_trip():
    """A scheduler rebuilt from state_dict continues the same sequence (SequentialLR included)."""
    def run(split):
        opt = _opt(pylucid)
        mk = lambda: L.SequentialLR(opt, [L.ConstantLR(opt, 0.5, 3), L.ExponentialLR(opt, 0.8)], [3])  # noqa: E731
        sched = mk()
        out = []
        for t in range(10):
            if t == split:
                sd, osd = sched.state_dict(), opt.state_dict()
                sched = mk()
                opt.load_state_dict(osd)
                sched.load_state_dict(sd)
            out.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        return out

    assert run(99) == run(5)


def test_errors():
    """Bad options are ValueErrors naming the schedule."""
    opt = _opt(pylucid)
    with pytest.raises(ValueError, match="LinearLR"):
        L.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="OneCycleLR"):
        L.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="SequentialLR"):
        L.SequentialLR(opt, [L.StepLR(opt, 2)], milestones=[3])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        L.ReduceLROnPlateau(opt, factor=2.0)
    with pytest.raises(ValueError, match="OneCycleLR"):
        L.OneCycleLR(optim.Adagrad([pylucid.zeros(1, requires_grad=True)]), max_lr=1.0, total_steps=3)
    with pytest.raises(ValueError, match="CyclicLR"):
        L.CyclicLR(opt, base_lr=0.1, max_lr=1.0, mode="sawtooth")
    with pytest.raises(ValueError, match="CyclicLR"):
        L.CyclicLR(optim.Adagrad([pylucid.zeros(1, requires_grad=True)]), base_lr=0.1, max_lr=1.0)


class _Warmup:
    """A callable object as lr_lambda (its __dict__ is what PyTorch's state_dict saves)."""

    def __init__(self, steps):
        self.steps = steps

    def __call__(self, e):
        return min(1.0, (e + 1) / self.steps)


def test_state_dict_keys_and_callable_lambdas_as_torch():
    """Guards against scheduler state_dicts missing PyTorch's keys (_get_lr_called_within_step,
    LambdaLR/MultiplicativeLR lr_lambdas, CyclicLR _scale_fn_custom) or saving a callable
    object's attributes differently, and against load_state_dict not restoring them."""
    makers = {
        "StepLR": lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 2),
        "LambdaLR": lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, [_lambda, _Warmup(4)]),
        "MultiplicativeLR": lambda lib, o: lib.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.9),
        "CyclicLR": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1),
        "CosineAnnealingWarmRestarts": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 3),
    }
    states = {}
    for name, make in makers.items():
        o = _opt(pylucid, momentum=0.9)
        s = make(pylucid, o)
        for _ in range(3):
            o.step()
            s.step()
        states[name] = s.state_dict()
        assert states[name]["_get_lr_called_within_step"] is False
    assert states["LambdaLR"]["lr_lambdas"] == [None, {"steps": 4}]
    assert states["MultiplicativeLR"]["lr_lambdas"] == [None, None]
    assert list(states["CyclicLR"])[-1] == "_scale_fn_custom" and states["CyclicLR"]["_scale_fn_custom"] is None
    fresh = L.LambdaLR(_opt(pylucid), [_lambda, _Warmup(9)])
    fresh.load_state_dict(states["LambdaLR"])
    assert fresh.lr_lambdas[1].steps == 4 and fresh.last_epoch == 3 and "lr_lambdas" in states["LambdaLR"]
    torch = pytest.importorskip("torch")
    for name, make in makers.items():
        o = _opt(torch, momentum=0.9)
        s = make(torch, o)
        for _ in range(3):
            o.step()
            s.step()
        theirs = s.state_dict()
        assert list(states[name]) == list(theirs), name
        assert states[name]["_last_lr"] == theirs["_last_lr"]
        if "lr_lambdas" in theirs:
            assert states[name]["lr_lambdas"] == theirs["lr_lambdas"]
