"""optim.Rprop: parameters and state equal PyTorch's over many steps with per-group options and
maximize (skipped without torch); without torch, the step-size rule on a known gradient sequence."""
import numpy as np
import pylucid
import pytest


def _run(lib, maximize=False):
    lib.manual_seed(0)
    w = lib.randn(5, requires_grad=True)
    v = lib.randn(2, 3, requires_grad=True)
    opt = lib.optim.Rprop([{"params": [w]}, {"params": [v], "lr": 0.05, "etas": (0.3, 1.5),
                                             "step_sizes": (1e-3, 0.2)}], lr=0.1, maximize=maximize)
    for _ in range(15):
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum() + (v.sin() * v).sum()
        (-loss if maximize else loss).backward()
        opt.step()
    st = opt.state_dict()["state"]
    return [np.asarray(t.detach().numpy()) for t in (w, v, st[0]["step_size"], st[1]["prev"], st[1]["step"])]


@pytest.mark.parametrize("maximize", [False, True])
def test_equals_torch(maximize):
    torch = pytest.importorskip("torch")
    for a, b in zip(_run(pylucid, maximize), _run(torch, maximize)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_step_size_rule_without_torch():
    """Same sign: step grows by etaplus; sign flip: it shrinks by etaminus and the step is skipped."""
    w = pylucid.tensor([0.0], requires_grad=True)
    opt = pylucid.optim.Rprop([w], lr=0.1, etas=(0.5, 2.0))
    moves = []
    for g in (1.0, 1.0, -1.0, -1.0):
        w.grad = pylucid.tensor([g])
        before = w.item()
        opt.step()
        moves.append(round(w.item() - before, 6))
    assert moves == [-0.1, -0.2, 0.0, 0.1]
    with pytest.raises(RuntimeError, match="Rprop"):
        pylucid.optim.Rprop([w], etas=(1.5, 1.2))
