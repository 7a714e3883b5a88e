"""optim.swa_utils: SWALR's rates, AveragedModel's SWA/EMA averages (parameters and, with
use_buffers, buffers) and update_bn's recomputed statistics equal PyTorch's (skipped without
it); without torch, the averages against their closed forms."""
import numpy as np
import pylucid
import pytest
from pylucid.optim import swa_utils as S


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))


def _run(lib, **kw):
    net = _net(lib)
    avg = lib.optim.swa_utils.AveragedModel(net, **kw)
    opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.5)
    sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.02, anneal_epochs=3)
    lrs = []
    x = lib.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3))
    for _ in range(5):
        opt.zero_grad()
        (net(x) - 1).pow(2).mean().backward()
        opt.step()
        avg.update_parameters(net)
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    lib.optim.swa_utils.update_bn([(x, None), (x * 2, None)], avg)
    state = [np.asarray(v.detach().numpy(), dtype=np.float64) for v in avg.state_dict().values()]
    return lrs, state


@pytest.mark.parametrize("kw", [{}, {"use_buffers": True}, {"multi_avg_fn": "ema"}, {"avg_fn": "ema1"}])
def test_equal_torch(kw):
    torch = pytest.importorskip("torch")
    out = []
    for lib in (pylucid, torch):
        k = dict(kw)
        if k.get("multi_avg_fn") == "ema":
            k["multi_avg_fn"] = lib.optim.swa_utils.get_ema_multi_avg_fn(0.8)
        if k.get("avg_fn") == "ema1":
            k["avg_fn"] = lib.optim.swa_utils.get_ema_avg_fn(0.7)
        out.append(_run(lib, **k))
    assert out[0][0] == out[1][0]
    for a, b in zip(out[0][1], out[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_closed_forms_without_torch():
    net = pylucid.nn.Linear(2, 1)
    swa, ema = S.AveragedModel(net), S.AveragedModel(net, multi_avg_fn=S.get_ema_multi_avg_fn(0.5))
    for v in (1.0, 2.0, 6.0):
        with pylucid.no_grad():
            net.weight.fill_(v)
        swa.update_parameters(net)
        ema.update_parameters(net)
    assert swa.module.weight.tolist() == [[3.0, 3.0]] and int(swa.n_averaged) == 3
    assert ema.module.weight.tolist() == [[3.75, 3.75]]  # 1 -> 1.5 -> 3.75
    opt = pylucid.optim.SGD(net.parameters(), lr=1.0)
    sched = S.SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(3):
        opt.step()
        sched.step()
        lrs.append(round(opt.param_groups[0]["lr"], 6))
    assert lrs == [1.0, 0.55, 0.1, 0.1]
    with pytest.raises(ValueError, match="SWALR"):
        S.SWALR(opt, swa_lr=0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="decay"):
        S.get_ema_multi_avg_fn(1.5)
