"""optim.LBFGS: convergence on known minima, PyTorch's iterates, state_dict round trip, errors."""
import numpy as np
import pytest

import pylucid
from pylucid.optim import LBFGS


def _rosenbrock(lib, start=(-1.5, 2.0), dtype=np.float32):
    x = lib.tensor(np.array(start, dtype=dtype), requires_grad=True)

    def f():
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    return [x], f


def _lsq(lib, dtype=np.float32):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((20, 5)).astype(dtype)
    b = rng.standard_normal(20).astype(dtype)
    w = lib.tensor(np.zeros(5, dtype=dtype), requires_grad=True)
    At, bt = lib.tensor(A), lib.tensor(b)

    def f():
        return ((At @ w - bt) ** 2).sum()
    return [w], f, (A, b)


def _mlp(lib):
    rng = np.random.default_rng(0)
    X = lib.tensor(rng.standard_normal((32, 3)).astype(np.float32))
    Y = lib.tensor(rng.standard_normal((32, 1)).astype(np.float32))
    W1 = lib.tensor((rng.standard_normal((3, 8)) * 0.5).astype(np.float32), requires_grad=True)
    b1 = lib.tensor(np.zeros(8, np.float32), requires_grad=True)
    W2 = lib.tensor((rng.standard_normal((8, 1)) * 0.5).astype(np.float32), requires_grad=True)

    def f():
        return ((lib.tanh(X @ W1 + b1) @ W2 - Y) ** 2).mean()
    return [W1, b1, W2], f


def _run(params, f, opt_cls, steps, **kw):
    opt = opt_cls(params, **kw)

    def closure():
        opt.zero_grad()
        loss = f()
        loss.backward()
        return loss
    losses = [float(opt.step(closure)) for _ in range(steps)]
    return opt, losses


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_least_squares_reaches_lstsq_solution(line_search_fn):
    params, f, (A, b) = _lsq(pylucid, np.float64)
    opt, losses = _run(params, f, LBFGS, 3, line_search_fn=line_search_fn)
    expected = np.linalg.lstsq(A, b, rcond=None)[0]
    np.testing.assert_allclose(params[0].detach().numpy(), expected, atol=1e-5)
    assert losses[0] > losses[-1]


def test_rosenbrock_strong_wolfe_reaches_minimum():
    params, f = _rosenbrock(pylucid, dtype=np.float64)
    _run(params, f, LBFGS, 5, line_search_fn="strong_wolfe")
    np.testing.assert_allclose(params[0].detach().numpy(), [1.0, 1.0], atol=1e-5)


def test_returns_first_loss_and_counts_evaluations():
    params, f = _rosenbrock(pylucid)
    opt = LBFGS(params, max_iter=4)
    calls = []

    def closure():
        opt.zero_grad()
        loss = f()
        loss.backward()
        calls.append(float(loss))
        return loss
    first = float(f())
    out = opt.step(closure)
    assert float(out) == pytest.approx(first)
    state = opt.state[params[0]]
    assert state["n_iter"] == 4
    # No line search: one evaluation at the start and one after each move but the last.
    assert state["func_evals"] == len(calls) == 4
    assert opt.defaults["max_eval"] == 5


def test_stops_at_optimum_without_moving():
    x = pylucid.tensor([1.0, 1.0], requires_grad=True)
    opt = LBFGS([x])

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss
    opt.step(closure)
    assert x.tolist() == [1.0, 1.0]
    assert opt.state[x]["n_iter"] == 0


def test_parameter_without_grad_counts_as_zero():
    a = pylucid.tensor([3.0], requires_grad=True)
    unused = pylucid.tensor([5.0, 6.0], requires_grad=True)
    opt = LBFGS([a, unused], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((a - 1) ** 2).sum()
        loss.backward()
        return loss
    opt.step(closure)
    assert a.item() == pytest.approx(1.0, abs=1e-5)
    assert unused.tolist() == [5.0, 6.0]


def test_state_dict_round_trip_continues_identically():
    params, f = _mlp(pylucid)
    opt, _ = _run(params, f, LBFGS, 2, history_size=4, max_iter=5, line_search_fn="strong_wolfe")
    sd = opt.state_dict()
    assert sorted(sd["state"][0]) == sorted(["func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro",
                                              "H_diag", "prev_flat_grad", "prev_loss", "al"])
    assert sd["param_groups"][0]["history_size"] == 4 and sd["param_groups"][0]["params"] == [0, 1, 2]
    assert len(sd["state"][0]["old_dirs"]) <= 4
    params2 = [p.detach().clone().requires_grad_(True) for p in params]
    _, f2 = _mlp(pylucid)
    # f2 closes over its own parameters; rebind it to params2.
    rng = np.random.default_rng(0)
    X = pylucid.tensor(rng.standard_normal((32, 3)).astype(np.float32))
    Y = pylucid.tensor(rng.standard_normal((32, 1)).astype(np.float32))

    def g():
        return ((pylucid.tanh(X @ params2[0] + params2[1]) @ params2[2] - Y) ** 2).mean()
    opt2 = LBFGS(params2, history_size=4, max_iter=5, line_search_fn="strong_wolfe")
    opt2.load_state_dict(sd)

    def closure(o, fn):
        def c():
            o.zero_grad()
            loss = fn()
            loss.backward()
            return loss
        return c
    opt.step(closure(opt, f))
    opt2.step(closure(opt2, g))
    for p, q in zip(params, params2):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_errors():
    x = pylucid.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="learning rate"):
        LBFGS([x], lr=-1.0)
    with pytest.raises(pylucid.LucidError, match="strong_wolfe"):
        LBFGS([x], line_search_fn="backtracking")
    y = pylucid.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="parameter groups"):
        LBFGS([{"params": [x]}, {"params": [y], "lr": 0.1}])
    opt = LBFGS([x])
    with pytest.raises(TypeError):
        opt.step()
    with pytest.raises(pylucid.LucidError, match="closure"):
        opt.step(None)
    assert x.tolist() == [1.0]


# ---- PyTorch's iterates --------------------------------------------------------------------

def _torch_pair(problem):
    torch = pytest.importorskip("torch")
    if problem == "rosenbrock":
        return _rosenbrock(torch), _rosenbrock(pylucid)
    if problem == "lsq":
        return _lsq(torch)[:2], _lsq(pylucid)[:2]
    return _mlp(torch), _mlp(pylucid)


@pytest.mark.parametrize("problem,kw,steps,tol", [
    ("rosenbrock", {"line_search_fn": "strong_wolfe"}, 5, 1e-4),
    ("rosenbrock", {"line_search_fn": "strong_wolfe", "max_iter": 6}, 3, 1e-4),
    ("rosenbrock", {"max_iter": 3, "lr": 0.5}, 2, 1e-5),
    ("lsq", {}, 3, 1e-5),
    ("lsq", {"line_search_fn": "strong_wolfe"}, 3, 1e-5),
    ("lsq", {"history_size": 3, "max_iter": 4, "lr": 0.5}, 2, 1e-4),
    ("mlp", {"max_iter": 5}, 2, 1e-4),
    ("mlp", {"max_iter": 5, "line_search_fn": "strong_wolfe"}, 2, 1e-4),
    ("mlp", {"history_size": 3, "max_iter": 7, "lr": 0.5}, 3, 1e-3),
])
def test_matches_torch_iterates(problem, kw, steps, tol):
    torch = pytest.importorskip("torch")
    (tp, tf), (lp, lf) = _torch_pair(problem)
    topt, tl = _run(tp, tf, torch.optim.LBFGS, steps, **kw)
    lopt, ll = _run(lp, lf, LBFGS, steps, **kw)
    np.testing.assert_allclose(ll, tl, rtol=tol, atol=tol)
    for a, b in zip(tp, lp):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)
    ts, ls = topt.state_dict()["state"][0], lopt.state_dict()["state"][0]
    assert sorted(ts) == sorted(ls)
    assert ts["n_iter"] == ls["n_iter"] and ts["func_evals"] == ls["func_evals"]
    assert len(ts["old_dirs"]) == len(ls["old_dirs"])


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_matches_torch_in_float64_over_many_iterations(line_search_fn):
    torch = pytest.importorskip("torch")
    out = []
    for lib in (torch, pylucid):
        params, f = _rosenbrock(lib, dtype=np.float64)
        opt, losses = _run(params, f, lib.optim.LBFGS if lib is torch else LBFGS, 1, max_iter=50,
                           line_search_fn=line_search_fn)
        out.append((params[0].detach().numpy(), opt.state_dict()["state"][0]["n_iter"]))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-7, atol=1e-9)
    assert out[1][1] == out[0][1]
