"""Edge semantics that long training runs and odd inputs hit: NaN/Inf through the norms, very
large rows, element counts beyond 2^31, in-place modification of saved tensors, two Python
threads training at once, and resident memory over many training steps."""
import gc
import os
import threading

import numpy as np
import pytest

import pylucid
import pylucid.nn as nn
import pylucid.nn.functional as F


def test_nan_and_inf_propagate_through_rms_norm():
    """A NaN or Inf in a row poisons that row only; other rows stay finite."""
    x = pylucid.tensor([[1.0, float("nan"), 2.0], [1.0, 2.0, 3.0], [float("inf"), 1.0, 1.0]])
    y = np.asarray(F.rms_norm(x, (3,)))
    assert np.isnan(y[0]).all()
    assert np.isfinite(y[1]).all()
    assert np.isnan(y[2, 0]) or np.isinf(y[2, 0])
    assert (y[2, 1:] == 0).all()  # x / inf -> 0 for the finite entries


def test_all_zero_row_with_eps_zero():
    """Documented: rms = 0 gives rstd = inf and 0 * inf = NaN, as the formula says (PyTorch agrees)."""
    x = pylucid.zeros(2, 4)
    y = np.asarray(F.rms_norm(x, (4,), eps=0.0))
    assert np.isnan(y).all()
    y = np.asarray(F.rms_norm(x, (4,), eps=1e-6))
    assert (y == 0).all()


def test_layer_norm_and_group_norm_nan_rows_are_isolated():
    x = pylucid.tensor([[float("nan"), 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]])
    y = np.asarray(F.layer_norm(x, (4,)))
    assert np.isnan(y[0]).all() and np.isfinite(y[1]).all()
    g = np.asarray(F.group_rms_norm(x, [0, 0, 1, 1]))
    assert np.isnan(g[0, :2]).all() and np.isfinite(g[0, 2:]).all() and np.isfinite(g[1]).all()


def test_million_feature_row():
    """Guards against per-row buffers sized for small N and float32 accumulation drift."""
    n = 1_000_000
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, n)).astype(np.float32)
    x = pylucid.from_numpy(a).requires_grad_()
    w = pylucid.ones(n, requires_grad=True)
    y = F.rms_norm(x, (n,), weight=w)
    ref = a / np.sqrt((a.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(np.asarray(y.detach()), ref, rtol=1e-5, atol=1e-6)
    y.sum().backward()
    assert np.isfinite(np.asarray(x.grad)).all() and w.grad.shape == (n,)


def test_more_than_2_31_elements():
    """Guards against 32-bit index arithmetic: a bool tensor of 2^31 + 7 elements."""
    n = 2 ** 31 + 7
    t = pylucid.zeros(n, dtype=pylucid.bool)
    t[n - 1] = True
    t[2 ** 31 + 1] = True
    assert t.sum().item() == 2
    assert t[n - 1].item() is True
    assert t[2 ** 31:].sum().item() == 2  # a view whose offset is past 2^31
    assert t[: 2 ** 31].sum().item() == 0
    del t
    gc.collect()


def test_element_count_beyond_int64_is_refused():
    """Guards against a wrapped element count: (2^40, 2^40) has 2^80 elements, which wrapped to 0
    in int64, so the tensor was created with an empty buffer and then indexed past it."""
    with pytest.raises(pylucid.LucidError, match=r"empty: shape \[1099511627776, 1099511627776\]"):
        pylucid.ones(2 ** 40, 2 ** 40)
    with pytest.raises(pylucid.LucidError, match="expand"):
        pylucid.ones(1, 1).expand(2 ** 40, 2 ** 40)
    with pytest.raises(pylucid.LucidError, match="empty"):
        pylucid.zeros(2 ** 62, dtype=pylucid.float32)  # 2^64 bytes
    assert pylucid.ones(1).expand(2 ** 62).shape == (2 ** 62,)  # a stride-0 view needs no memory


def test_inplace_on_saved_tensor_raises_at_backward():
    x = pylucid.randn(3, 4, requires_grad=True)
    h = x * 2.0
    y = F.rms_norm(h, (4,))
    with pylucid.no_grad():
        h.mul_(3.0)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        y.sum().backward()


def _setup(seed):
    """Model, optimizer and data for one run. Built before any thread starts: the random
    generator is process-wide (as PyTorch's default one), so seeding inside racing threads
    would interleave the two streams."""
    pylucid.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 32), nn.RMSNorm(32), nn.SiLU(), nn.Linear(32, 4))
    opt = pylucid.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(seed)
    x = pylucid.from_numpy(rng.standard_normal((64, 8)).astype(np.float32))
    y = pylucid.from_numpy(rng.integers(0, 4, 64))
    return model, opt, x, y


def _train(run, steps, out, key):
    model, opt, x, y = run
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out[key] = (losses, [p.detach().numpy().copy() for p in model.parameters()])


def test_two_threads_train_like_one_after_the_other():
    """Guards against shared mutable state (grad mode, autocast, the engine, kernel scratch)
    across threads: two models trained at once end exactly where training them in turn ends."""
    serial = {}
    for s in (1, 2):
        _train(_setup(s), 30, serial, s)
    parallel = {}
    runs = {s: _setup(s) for s in (1, 2)}
    ts = [threading.Thread(target=_train, args=(runs[s], 30, parallel, s)) for s in (1, 2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for s in (1, 2):
        assert serial[s][0] == parallel[s][0]
        for a, b in zip(serial[s][1], parallel[s][1]):
            np.testing.assert_array_equal(a, b)


def _rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2 ** 20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_training_memory_stays_flat():
    """2,000 training steps: resident memory after warm-up may grow by at most 8 MiB, and no
    tensor or graph node is left behind."""
    pylucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.RMSNorm(64), nn.GELU(), nn.Linear(64, 4))
    opt = pylucid.optim.AdamW(model.parameters(), lr=1e-3)
    x = pylucid.randn(32, 16)
    y = pylucid.randint(0, 4, (32,))

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(200):
        step()
    gc.collect()
    rss0 = _rss_mib()
    live0 = pylucid._C._live_counts()
    for _ in range(2000):
        step()
    gc.collect()
    rss1 = _rss_mib()
    live1 = pylucid._C._live_counts()
    print(f"rss after warm-up {rss0:.1f} MiB, after 2000 more steps {rss1:.1f} MiB")
    assert live1 == live0
    if not os.environ.get("PYLUCID_SANITIZE"):  # ASan's quarantine holds freed memory on purpose
        assert rss1 - rss0 < 8.0


def test_found_by_the_api_fuzz():
    """Two inputs the API fuzz test found: a non-tensor histogram weight raises a typed error
    (not AttributeError), and a linalg out= tensor of another shape takes the result's shape."""
    with pytest.raises(pylucid.DtypeMismatch, match="histogram: expected a Tensor for weight"):
        pylucid.histogram(pylucid.tensor([1.0, 2.0]), 2, weight=False)
    out = pylucid.tensor(0.5)
    r = pylucid.linalg.cholesky(pylucid.eye(2) * 4, out=out)
    assert r is out and out.shape == (2, 2) and out.tolist() == [[2.0, 0.0], [0.0, 2.0]]
