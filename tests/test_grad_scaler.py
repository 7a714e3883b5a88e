"""amp.GradScaler: scaling, unscale_, skipped steps on inf/NaN, growth/backoff, state_dict,
the disabled pass-through (enabled=False and the CUDA spellings), PyTorch's trajectory."""
import pickle
import warnings

import numpy as np
import pytest

import pylucid
from pylucid.amp import GradScaler


def _problem(lib, big=False):
    w = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    x = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    y = lib.tensor([1.0, -1.0])

    def loss_fn(step):
        scale = 1e37 if big and step % 3 == 1 else 1.0  # some steps overflow once scaled
        return (((x @ w) - y) ** 2).mean() * scale
    return w, opt, loss_fn


def _train(lib, scaler, steps=8, big=False, clip=False):
    w, opt, loss_fn = _problem(lib, big)
    scales = []
    for step in range(steps):
        opt.zero_grad()
        scaler.scale(loss_fn(step)).backward()
        if clip:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_([w], 1.0)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return w.detach().numpy(), scales


def test_scale_multiplies_and_unscale_divides():
    w = pylucid.tensor([3.0], requires_grad=True)
    opt = pylucid.optim.SGD([w], lr=1.0)
    s = GradScaler("cpu", init_scale=8.0)
    out = s.scale(w * 2)
    assert out.item() == 48.0
    a, b = s.scale([w, (w, w * 2)])
    assert a.item() == 24.0 and b[1].item() == 48.0 and isinstance(b, tuple)
    assert [t.item() for t in s.scale(iter([w]))] == [24.0]
    s.scale(w * 2).backward()
    assert w.grad.item() == 16.0
    s.unscale_(opt)
    assert w.grad.item() == 2.0
    with pytest.raises(RuntimeError, match="already been called"):
        s.unscale_(opt)
    s.step(opt)
    assert w.item() == 1.0
    with pytest.raises(RuntimeError, match="after step"):
        s.unscale_(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    s.update()
    assert s.get_scale() == 8.0
    with pytest.raises(ValueError, match="Tensor or an iterable"):
        s.scale(3.0)


def test_inf_skips_step_and_backs_off_then_grows():
    w = pylucid.tensor([1.0], requires_grad=True)
    opt = pylucid.optim.SGD([w], lr=0.5)
    s = GradScaler("cpu", init_scale=4.0, growth_interval=2)
    s.scale(w * float("inf")).backward()
    assert s.step(opt) is None
    s.update()
    assert w.item() == 1.0 and s.get_scale() == 2.0 and s.state_dict()["_growth_tracker"] == 0
    for expected_scale, expected_tracker in ((2.0, 1), (4.0, 0), (4.0, 1)):
        opt.zero_grad()
        s.scale(w * 1.0).backward()
        s.step(opt)
        s.update()
        assert s.get_scale() == expected_scale and s.state_dict()["_growth_tracker"] == expected_tracker
    assert w.item() == pytest.approx(1.0 - 3 * 0.5)
    opt.zero_grad()
    s.scale(w * float("nan")).backward()
    s.step(opt)
    s.update()
    assert s.get_scale() == 2.0 and w.item() == pytest.approx(-0.5)
    s.update(new_scale=64.0)
    assert s.get_scale() == 64.0
    s.update(new_scale=pylucid.tensor(32.0))
    assert s.get_scale() == 32.0


def test_state_dict_round_trip_and_pickle():
    s = GradScaler("cpu", init_scale=16.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=5)
    _train(pylucid, s, steps=3)
    sd = s.state_dict()
    assert sd == {"scale": 16.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 5,
                  "_growth_tracker": 3}
    t = GradScaler("cpu")
    t.load_state_dict(sd)
    assert t.state_dict() == sd and t.get_growth_factor() == 3.0 and t.get_growth_interval() == 5
    u = pickle.loads(pickle.dumps(s))
    assert u.state_dict() == sd
    with pytest.raises(RuntimeError, match="empty"):
        t.load_state_dict({})


def test_disabled_is_a_pass_through():
    s = GradScaler("cpu", enabled=False)
    w = pylucid.tensor([2.0], requires_grad=True)
    opt = pylucid.optim.SGD([w], lr=0.5)
    loss = w * 3
    assert s.scale(loss) is loss
    loss.backward()
    s.unscale_(opt)
    assert w.grad.item() == 3.0
    s.step(opt)
    s.update()
    assert w.item() == 0.5
    assert s.get_scale() == 1.0 and s.state_dict() == {} and not s.is_enabled()
    s.load_state_dict({"scale": 2.0})
    assert s.get_scale() == 1.0


def test_cuda_spellings_warn_and_disable_themselves():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        s = GradScaler()
    assert not s.is_enabled()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        s = pylucid.cuda.amp.GradScaler()
    kinds = {type(r.message) for r in rec}
    assert FutureWarning in kinds and UserWarning in kinds and not s.is_enabled()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        GradScaler(enabled=False)
    assert not rec
    with pytest.warns(FutureWarning, match="torch.cpu.amp.GradScaler"):
        c = pylucid.cpu.amp.GradScaler(init_scale=4.0)
    assert c.is_enabled() and c.get_scale() == 4.0


def test_errors():
    with pytest.raises(ValueError, match="growth factor"):
        GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff factor"):
        GradScaler("cpu", backoff_factor=1.0)
    with pytest.raises(pylucid.LucidError, match="device"):
        GradScaler("mps")
    s = GradScaler("cpu")
    opt = pylucid.optim.SGD([pylucid.tensor([1.0], requires_grad=True)], lr=0.1)
    with pytest.raises(RuntimeError, match="did not use scaler.scale"):
        s.step(opt)
    s.scale(pylucid.tensor(1.0))
    with pytest.raises(RuntimeError, match="Closure"):
        s.step(opt, closure=lambda: 0.0)
    with pytest.raises(RuntimeError, match="No inf checks"):
        s.update()


@pytest.mark.parametrize("big,clip", [(False, False), (True, False), (True, True)])
def test_matches_torch(big, clip):
    torch = pytest.importorskip("torch")
    kw = {"init_scale": 2.0 ** 10, "growth_interval": 3}
    tw, ts = _train(torch, torch.amp.GradScaler("cpu", **kw), big=big, clip=clip)
    lw, ls = _train(pylucid, GradScaler("cpu", **kw), big=big, clip=clip)
    assert ls == ts
    assert (min(ts) < kw["init_scale"]) == big  # the overflowing steps were skipped and backed off
    np.testing.assert_allclose(lw, tw, rtol=1e-6, atol=1e-6)


def test_cuda_amp_autocast_warns_and_does_nothing():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ctx = pylucid.cuda.amp.autocast()
        with ctx:
            y = pylucid.ones(2, 2) @ pylucid.ones(2, 2)
            assert not pylucid.amp.is_autocast_enabled()
    assert y.dtype == pylucid.float32
    kinds = {type(r.message) for r in rec}
    assert FutureWarning in kinds and UserWarning in kinds

    @pylucid.cuda.amp.autocast(enabled=False)
    def f(x):
        return x * 2
    assert f(pylucid.ones(1)).tolist() == [2.0]


def test_cpu_amp_spellings():
    with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
        ctx = pylucid.cpu.amp.autocast(True, pylucid.bfloat16)
    with ctx:
        assert (pylucid.ones(2, 2) @ pylucid.ones(2, 2)).dtype == pylucid.bfloat16
    assert pylucid.cpu.is_available() and pylucid.cpu.device_count() == 1
