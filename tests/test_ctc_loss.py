"""F.ctc_loss / nn.CTCLoss: a brute-force reference (every alignment enumerated), reductions,
padded and concatenated targets, unbatched input, zero_infinity, float64 gradcheck through
log_softmax, PyTorch's numbers and gradient, typed errors."""
import itertools

import numpy as np
import pytest

import pylucid
import pylucid.nn.functional as F
from pylucid.autograd import gradcheck

RNG = np.random.default_rng(17)


def _collapse(path, blank):
    out, prev = [], None
    for c in path:
        if c != prev and c != blank:
            out.append(c)
        prev = c
    return out


def _brute(lp, target, blank=0):
    """-log of the summed probability of every length-T path that collapses to target."""
    T, C = lp.shape
    total = -np.inf
    for path in itertools.product(range(C), repeat=T):
        if _collapse(path, blank) == list(target):
            total = np.logaddexp(total, sum(lp[t, c] for t, c in enumerate(path)))
    return -total


def _log_softmax(x):
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_matches_brute_force():
    T, N, C = 5, 3, 3
    lp = _log_softmax(RNG.standard_normal((T, N, C)))
    targets = pylucid.tensor([[1, 2], [1, 1], [2, 0]])
    il, tl = [5, 4, 3], [2, 2, 1]
    loss = F.ctc_loss(pylucid.tensor(lp), targets, il, tl, reduction="none").numpy()
    for b in range(N):
        np.testing.assert_allclose(loss[b], _brute(lp[:il[b], b], targets.numpy()[b, :tl[b]]), rtol=1e-12)
    # blank elsewhere than 0
    loss = F.ctc_loss(pylucid.tensor(lp), pylucid.tensor([[0, 1]] * 3), il, tl, blank=2, reduction="none").numpy()
    np.testing.assert_allclose(loss[0], _brute(lp[:5, 0], [0, 1], blank=2), rtol=1e-12)


def test_reductions_target_formats_and_module():
    T, N, C = 8, 3, 4
    lp = pylucid.tensor(_log_softmax(RNG.standard_normal((T, N, C))))
    padded = pylucid.tensor([[1, 2, 3], [3, 3, 0], [2, 0, 0]])
    il, tl = pylucid.tensor([8, 6, 5]), pylucid.tensor([3, 2, 1])
    none = F.ctc_loss(lp, padded, il, tl, reduction="none")
    flat = pylucid.tensor([1, 2, 3, 3, 3, 2])
    np.testing.assert_allclose(F.ctc_loss(lp, flat, il, tl, reduction="none").numpy(), none.numpy())
    np.testing.assert_allclose(F.ctc_loss(lp, padded, il, tl, reduction="sum").item(), none.numpy().sum())
    np.testing.assert_allclose(F.ctc_loss(lp, padded, il, tl).item(), (none.numpy() / np.array([3, 2, 1])).mean())
    m = pylucid.nn.CTCLoss(blank=0, reduction="sum")
    np.testing.assert_allclose(m(lp, padded, il, tl).item(), none.numpy().sum())
    one = F.ctc_loss(lp[:, 0], padded[0], (8,), (3,), reduction="none")
    assert one.dim() == 0
    np.testing.assert_allclose(one.item(), none[0].item())


def test_impossible_alignment_and_zero_infinity():
    lp = pylucid.tensor(_log_softmax(RNG.standard_normal((2, 1, 3))), requires_grad=True)
    t = pylucid.tensor([[1, 1]])  # needs a blank between the repeats: 3 frames at least
    assert F.ctc_loss(lp, t, [2], [2], reduction="sum").item() == float("inf")
    loss = F.ctc_loss(lp, t, [2], [2], reduction="sum", zero_infinity=True)
    assert loss.item() == 0.0
    loss.backward()
    assert not lp.grad.numpy().any()
    # reduction='none': the infinite row is zeroed by a where after the loss node, as PyTorch's
    # graph has it (printed grad_fn=<WhereBackward0>); the finite row keeps its loss and gradient.
    lp2 = pylucid.tensor(_log_softmax(RNG.standard_normal((3, 2, 3))), requires_grad=True)
    t2 = pylucid.tensor([[1, 1], [1, 2]])
    rows = F.ctc_loss(lp2, t2, [2, 3], [2, 2], reduction="none", zero_infinity=True)
    ref = F.ctc_loss(lp2.detach(), t2, [2, 3], [2, 2], reduction="none")
    assert rows[0].item() == 0.0 and ref[0].item() == float("inf") and rows[1].item() == ref[1].item()
    assert repr(rows.grad_fn).startswith("<WhereBackward0 object")
    rows.sum().backward()
    assert not lp2.grad[:, 0].numpy().any() and np.isfinite(lp2.grad.numpy()).all() and lp2.grad[:, 1].numpy().any()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_gradcheck_through_log_softmax(reduction):
    x = pylucid.tensor(RNG.standard_normal((6, 2, 4)), requires_grad=True)
    targets = pylucid.tensor([[1, 3, 3], [2, 1, 0]])
    xt = pylucid.from_numpy(np.ascontiguousarray(RNG.standard_normal((2, 6, 4)))).transpose(0, 1).requires_grad_(True)
    for inp in (x, xt):
        assert gradcheck(lambda a: F.ctc_loss(a.log_softmax(2), targets, [6, 5], [3, 2], reduction=reduction), (inp,))


def test_frames_past_the_input_length_get_no_gradient():
    x = pylucid.tensor(RNG.standard_normal((6, 1, 3)), requires_grad=True)
    F.ctc_loss(x.log_softmax(2), pylucid.tensor([[1]]), [4], [1]).backward()
    assert not x.grad.numpy()[4:].any() and x.grad.numpy()[:4].any()


def test_errors():
    lp = pylucid.zeros(4, 2, 3)
    t = pylucid.tensor([[1, 2], [1, 0]])
    with pytest.raises(ValueError, match="at most 4"):
        F.ctc_loss(lp, t, [5, 4], [2, 1])
    with pytest.raises(ValueError, match="batch_size"):
        F.ctc_loss(lp, t, [4], [2, 1])
    with pytest.raises(IndexError, match="blank"):
        F.ctc_loss(lp, t, [4, 4], [2, 1], blank=3)
    with pytest.raises(IndexError, match="differ from blank"):
        F.ctc_loss(lp, pylucid.tensor([[0, 2], [1, 0]]), [4, 4], [2, 1])
    with pytest.raises(TypeError, match="integers"):
        F.ctc_loss(lp, t.float(), [4, 4], [2, 1])
    with pytest.raises(pylucid.LucidError, match="reduction"):
        F.ctc_loss(lp, t, [4, 4], [2, 1], reduction="avg")
    with pytest.raises(ValueError, match="size at least 3"):
        F.ctc_loss(lp, t, [4, 4], [3, 1])
    with pytest.raises(pylucid.LucidError, match="must not be empty"):
        F.ctc_loss(pylucid.zeros(0, 1, 3), pylucid.tensor([[1]]), [0], [1])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_torch(reduction, dtype):
    torch = pytest.importorskip("torch")
    T, N, C = 12, 3, 5
    logits = RNG.standard_normal((T, N, C)).astype(dtype)
    tg = np.array([[1, 1, 2, 4], [3, 2, 1, 0], [0, 0, 0, 0]])
    il, tl = [12, 10, 7], [4, 3, 0]
    res = []
    for lib in (torch, pylucid):
        x = lib.tensor(logits, requires_grad=True)
        lp = x.log_softmax(2)
        lp.retain_grad()
        loss = lib.nn.functional.ctc_loss(lp, lib.tensor(tg), lib.tensor(il), lib.tensor(tl), reduction=reduction)
        (loss * (lib.tensor(np.arange(1.0, N + 1).astype(dtype)) if reduction == "none" else 1.0)).sum().backward()
        res.append([loss.detach().numpy(), x.grad.numpy(), lp.grad.numpy()])
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol)
