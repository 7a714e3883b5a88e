"""Threads (set_num_threads / get_num_threads and the gemm split over the pool) and the caching
allocator (memory_stats, empty_cache, set_cache_limit), with the storage lifetime rules they must
not change."""
import gc
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import pylucid

BIG = (1024, 1024)  # 4 MiB of float32: a cached size class


@pytest.fixture
def threads():
    n = pylucid.get_num_threads()
    yield
    pylucid.set_num_threads(n)


@pytest.fixture
def cache_limit():
    limit = pylucid.memory_stats()["cache_limit_bytes"]
    yield
    pylucid.set_cache_limit(limit)


def usable_cores():
    n = len(os.sched_getaffinity(0))
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except OSError:
        pass
    return n


def run_python(code, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    e.update(env)
    out = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_default_threads_are_the_usable_cores():
    """The default pool is the affinity mask capped by the cgroup quota, not OpenMP's CPU count."""
    assert run_python("import pylucid; print(pylucid.get_num_threads())") == str(usable_cores())


def test_omp_num_threads_wins():
    """A user's OMP_NUM_THREADS sets the default pool size."""
    assert run_python("import pylucid; print(pylucid.get_num_threads())", OMP_NUM_THREADS="3") == "3"


def test_set_num_threads_roundtrip(threads):
    pylucid.set_num_threads(3)
    assert pylucid.get_num_threads() == 3
    pylucid.set_num_threads(1)
    assert pylucid.get_num_threads() == 1


def test_set_num_threads_bad_input(threads):
    """Zero, negative and non-int counts raise typed errors naming the function."""
    with pytest.raises(RuntimeError, match="set_num_threads"):
        pylucid.set_num_threads(0)
    with pytest.raises(RuntimeError, match="set_num_threads"):
        pylucid.set_num_threads(-2)
    with pytest.raises(TypeError, match="set_num_threads"):
        pylucid.set_num_threads(2.0)
    with pytest.raises(TypeError, match="set_num_threads"):
        pylucid.set_num_threads(True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(300, 517, 259), (20, 300, 3000), (1000, 70, 33), (33, 64, 17)])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_split_over_threads(threads, dtype, shape, ta, tb):
    """A product split into row or column blocks over 4 threads (tails not multiples of 16,
    transposed operands) equals the one-thread product and numpy's."""
    m, k, n = shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    A = pylucid.from_numpy(a).t() if ta else pylucid.from_numpy(a)
    B = pylucid.from_numpy(b).t() if tb else pylucid.from_numpy(b)
    ref = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    pylucid.set_num_threads(1)
    one = (A @ B).numpy()
    pylucid.set_num_threads(4)
    four = (A @ B).numpy()
    tol = 1e-3 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(one, ref, rtol=tol, atol=tol * math.sqrt(k))
    np.testing.assert_allclose(four, one, rtol=tol, atol=tol * math.sqrt(k))


def test_linear_backward_split_matches_one_thread(threads):
    """Linear forward and backward (three products with transposed operands) agree at 1 and 2 threads."""
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((128, 784)).astype(np.float32)
    w_np = rng.standard_normal((256, 784)).astype(np.float32)
    out = []
    for nt in (1, 2):
        pylucid.set_num_threads(nt)
        x = pylucid.from_numpy(x_np.copy()).requires_grad_()
        w = pylucid.from_numpy(w_np.copy()).requires_grad_()
        y = pylucid.nn.functional.linear(x, w)
        (y * y).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-2)


def _step_results(seed=0):
    """Outputs and gradients of ops whose kernels split work over threads: reductions of every
    layout (bias-gradient column sums, a long full sum, row sums), norms, softmax, gelu, matmul
    and the gradient-norm clip, in float64 and float32."""
    rng = np.random.default_rng(seed)
    out = []
    for dt in (pylucid.float64, pylucid.float32):
        x = pylucid.tensor(rng.standard_normal((512, 384)), dtype=dt, requires_grad=True)
        w = pylucid.tensor(rng.standard_normal((384, 256)), dtype=dt, requires_grad=True)
        g = pylucid.tensor(rng.standard_normal(384), dtype=dt, requires_grad=True)
        h = pylucid.nn.functional.rms_norm(x, (384,), g) @ w
        y = pylucid.nn.functional.gelu(h).softmax(-1)
        loss = y.sum(0).pow(2).sum() + h.sum() + x.prod(1).sum() + (x * x).mean(1).sum()
        loss.backward()
        norm = pylucid.nn.utils.clip_grad_norm_([x, w, g], 1.0)
        long = pylucid.tensor(rng.standard_normal(300_001), dtype=dt)
        out += [y.detach(), loss.detach(), x.grad, w.grad, g.grad, norm, long.sum(), long.abs().max(),
                long.reshape(1, -1).amax(1), long[:300_000].reshape(3, -1).sum(1)]
    return [t.numpy() for t in out]


def test_contention_hold_changes_no_bits(threads):
    """While the contention guard holds kernels to one thread (another process keeps a core
    busy), every result keeps the bits the whole pool gives: splits depend on shapes only."""
    pylucid.set_num_threads(2)
    pooled = _step_results()
    pylucid._C._hold_one_thread(60.0)
    try:
        assert pylucid.get_num_threads() == 2  # the configured pool, not the held count
        held = _step_results()
    finally:
        pylucid._C._hold_one_thread(0)
    pylucid.set_num_threads(1)
    single = _step_results()
    for a, b, c in zip(pooled, held, single):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_memory_stats_keys():
    s = pylucid.memory_stats()
    assert set(s) == {"allocated_bytes", "peak_allocated_bytes", "cached_bytes", "cache_limit_bytes",
                      "num_allocs", "num_cache_hits", "num_os_allocs", "num_os_frees"}
    assert all(isinstance(v, int) and v >= 0 for v in s.values())


def test_freed_large_buffer_is_reused():
    """A freed large buffer is cached and serves the next request of its size class, so a steady
    loop takes nothing new from the OS."""
    gc.collect()
    x = pylucid.empty(*BIG)
    before = pylucid.memory_stats()
    del x
    after_free = pylucid.memory_stats()
    assert after_free["cached_bytes"] >= before["cached_bytes"] + 4 * BIG[0] * BIG[1]
    assert after_free["allocated_bytes"] <= before["allocated_bytes"] - 4 * BIG[0] * BIG[1]
    for _ in range(5):
        y = pylucid.empty(*BIG).fill_(1.0)
        del y
    s = pylucid.memory_stats()
    assert s["num_os_allocs"] == after_free["num_os_allocs"]
    assert s["num_cache_hits"] >= after_free["num_cache_hits"] + 5


def test_empty_cache_returns_everything():
    x = pylucid.empty(*BIG)
    del x
    assert pylucid.memory_stats()["cached_bytes"] > 0
    frees = pylucid.memory_stats()["num_os_frees"]
    pylucid.empty_cache()
    s = pylucid.memory_stats()
    assert s["cached_bytes"] == 0
    assert s["num_os_frees"] > frees


def test_cache_limit(cache_limit):
    """Above the limit a freed block goes back to the OS at once; lowering the limit trims."""
    x, y = pylucid.empty(*BIG), pylucid.empty(*BIG)
    pylucid.set_cache_limit(6 << 20)  # room for one 4 MiB block
    del x, y
    s = pylucid.memory_stats()
    assert 0 < s["cached_bytes"] <= 6 << 20
    pylucid.set_cache_limit(0)
    assert pylucid.memory_stats()["cached_bytes"] == 0
    z = pylucid.empty(*BIG)
    del z
    assert pylucid.memory_stats()["cached_bytes"] == 0
    with pytest.raises(RuntimeError, match="set_cache_limit"):
        pylucid.set_cache_limit(-1)
    with pytest.raises(TypeError, match="set_cache_limit"):
        pylucid.set_cache_limit("1GB")


def test_peak_stats():
    pylucid.reset_peak_memory_stats()
    base = pylucid.memory_stats()["peak_allocated_bytes"]
    x = pylucid.empty(*BIG)
    del x
    assert pylucid.memory_stats()["peak_allocated_bytes"] >= base + 4 * BIG[0] * BIG[1]


def test_view_keeps_storage_after_base_is_freed():
    """A view holds its storage: freeing the base and reusing the cache never overwrites it."""
    x = pylucid.arange(BIG[0] * BIG[1], dtype=pylucid.float32).reshape(*BIG)
    v = x[512:, ::2]
    expect = v.numpy().copy()
    del x
    others = [pylucid.empty(*BIG).fill_(-7.0) for _ in range(4)]
    np.testing.assert_array_equal(v.numpy(), expect)
    del others


def test_numpy_export_keeps_storage():
    """An array exported with .numpy() stays valid after its tensor is freed and the cache reused."""
    t = pylucid.full(BIG, 3.0)
    a = t.numpy()
    del t
    others = [pylucid.empty(*BIG).fill_(-1.0) for _ in range(4)]
    assert float(a.min()) == 3.0 and float(a.max()) == 3.0
    del others


def test_saved_tensor_survives_cache_reuse():
    """A tensor saved for backward keeps its buffer while the caller's handles are gone and the
    cache hands sizes of its class to new tensors; the gradient is the exact one."""
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal(BIG).astype(np.float32)
    a = pylucid.from_numpy(a_np.copy()).requires_grad_()
    e = a.exp()  # saves its output
    y = e * 1.0
    del e
    others = [pylucid.empty(*BIG).fill_(0.0) for _ in range(4)]
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp(a_np), rtol=1e-6)
    del others
