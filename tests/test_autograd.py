"""The engine and the autograd API: accumulation, retain_graph, grad(), grad mode, graph shape."""
import numpy as np
import pytest

import pylucid
from pylucid.autograd import gradcheck, gradgradcheck

F64 = pylucid.float64


def test_gradients_accumulate_across_backward_calls():
    """Guards against .grad being overwritten instead of accumulated."""
    x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(pylucid.ones(2))
    (x * 3.0).backward(pylucid.ones(2))
    assert x.grad.tolist() == [5.0, 7.0]


def test_shared_subexpression_gets_summed_gradient():
    """Guards against a node running before all its incoming gradients are summed."""
    x = pylucid.tensor([2.0], requires_grad=True)
    y = x * x
    z = y * y + y  # dz/dx = (2y + 1) * 2x = 9 * 4 = 36
    z.backward(pylucid.ones(1))
    assert x.grad.tolist() == [36.0]


def test_leaf_grad_is_a_fresh_buffer():
    """Guards against two leaves sharing one gradient buffer (later in-place accumulation
    into one would change the other)."""
    a = pylucid.tensor([1.0], requires_grad=True)
    b = pylucid.tensor([1.0], requires_grad=True)
    (a + b).backward(pylucid.ones(1))
    with pylucid.no_grad():
        a.grad.add_(pylucid.ones(1))
    assert b.grad.tolist() == [1.0]


def test_backward_on_non_scalar_needs_gradient():
    x = pylucid.ones(3, requires_grad=True)
    with pytest.raises(pylucid.ShapeMismatch, match="scalar outputs"):
        (x * 2.0).backward()
    (x * 2.0).backward(pylucid.tensor([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_backward_gradient_shape_checked():
    x = pylucid.ones(3, requires_grad=True)
    with pytest.raises(pylucid.ShapeMismatch, match="Mismatch in shape"):
        (x * 2.0).backward(pylucid.ones(4))


def test_backward_without_grad_raises():
    with pytest.raises(pylucid.LucidError, match="does not require grad"):
        pylucid.ones(2).backward(pylucid.ones(2))


def test_retain_graph_allows_second_backward():
    x = pylucid.tensor([3.0], requires_grad=True)
    y = x * x
    y.backward(pylucid.ones(1), retain_graph=True)
    y.backward(pylucid.ones(1))
    assert x.grad.tolist() == [12.0]
    with pytest.raises(pylucid.LucidError, match="retain_graph=True"):
        y.backward(pylucid.ones(1))


def test_autograd_grad_leaves_dot_grad_alone():
    x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    w = pylucid.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    gx, gw = pylucid.autograd.grad(y, (x, w), grad_outputs=pylucid.ones(2))
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    assert x.grad is None and w.grad is None


def test_autograd_grad_of_intermediate_and_unused():
    x = pylucid.tensor([2.0], requires_grad=True)
    h = x * 3.0
    y = h * h
    (gh,) = pylucid.autograd.grad(y, h, grad_outputs=pylucid.ones(1), retain_graph=True)
    assert gh.tolist() == [12.0]
    z = pylucid.tensor([1.0], requires_grad=True)
    with pytest.raises(pylucid.LucidError, match="appears to not have been used in the graph"):
        pylucid.autograd.grad(y, z, grad_outputs=pylucid.ones(1), retain_graph=True)
    assert pylucid.autograd.grad(y, z, grad_outputs=pylucid.ones(1), allow_unused=True) == (None,)


def test_no_grad_and_enable_grad_nest():
    x = pylucid.ones(2, requires_grad=True)
    with pylucid.no_grad():
        assert not pylucid.is_grad_enabled()
        assert not (x * 2.0).requires_grad
        with pylucid.enable_grad():
            assert (x * 2.0).requires_grad
        assert not (x * 2.0).requires_grad
    assert pylucid.is_grad_enabled()

    @pylucid.no_grad()
    def f(t):
        return t * 2.0
    assert not f(x).requires_grad


def test_set_grad_enabled_as_function_and_context():
    with pylucid.set_grad_enabled(False):
        assert not pylucid.is_grad_enabled()
    assert pylucid.is_grad_enabled()


def test_detach_shares_memory_and_cuts_graph():
    x = pylucid.ones(3, requires_grad=True)
    y = (x * 2.0).detach()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    z = x.detach()
    with pylucid.no_grad():
        z.add_(1.0)
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_graph_introspection():
    x = pylucid.ones(2, requires_grad=True)
    y = x * 2.0 + x
    assert not y.is_leaf and x.is_leaf
    assert y.grad_fn.name() == "AddBackward"
    fns = y.grad_fn.next_functions
    assert fns[0][0].name() == "MulBackward"
    assert fns[1][0].name() == "AccumulateGrad" and fns[1][0].variable is x
    assert y.grad_fn.schema.name == "add"


def test_requires_grad_rules():
    """Guards against integer tensors entering the graph and non-leaves being toggled."""
    with pytest.raises(pylucid.DtypeMismatch, match="floating"):
        pylucid.tensor([1, 2]).requires_grad_(True)
    with pytest.raises(TypeError):
        pylucid.tensor([1, 2]).requires_grad = True
    y = pylucid.ones(2, requires_grad=True) * 2.0
    with pytest.raises(pylucid.LucidError, match="leaf"):
        y.requires_grad = False


def test_retain_grad_on_intermediate():
    x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    h.retain_grad()
    (h * h).backward(pylucid.ones(2))
    assert h.grad.tolist() == [4.0, 8.0]


def test_gradcheck_reports_input_and_element():
    """gradcheck must catch a wrong gradient and say where it is."""
    x = pylucid.tensor([1.0, 2.0], dtype=F64, requires_grad=True)

    def wrong(t):  # detach drops the path through the second factor: half the true gradient
        return t * t.detach()
    with pytest.raises(pylucid.LucidError, match=r"input 0 at element \(0,\)"):
        gradcheck(wrong, (x,))
    assert gradcheck(wrong, (x,), raise_exception=False) is False
    assert gradcheck(lambda t: t * t, (x,))


def test_gradcheck_report_names_values():
    """The failure report gives the numerical and the analytical value, in full and fast mode."""
    x = pylucid.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    wrong = lambda t: t * t.detach()  # noqa: E731
    with pytest.raises(pylucid.autograd.GradcheckError, match=r"element \(0,\).*\nnumerical: 2\.0\d*\nanalytical: 1\.0\n"):
        gradcheck(wrong, (x,))
    with pytest.raises(pylucid.autograd.GradcheckError, match=r"input 0 \(fast mode.*\nnumerical: .*\nanalytical: "):
        gradcheck(wrong, (x,), fast_mode=True)


def test_gradcheck_fast_mode():
    """Guards fast_mode: one projection u^T J v per (output, input) still catches a wrong
    gradient, names the input, and passes correct ones (several inputs and outputs)."""
    x = pylucid.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=F64, requires_grad=True)
    w = pylucid.tensor([0.5, -1.0, 2.0], dtype=F64, requires_grad=True)
    assert gradcheck(lambda a, b: ((a * b).tanh(), (a @ b).exp()), (x, w), fast_mode=True)
    assert gradgradcheck(lambda a, b: (a * b).tanh().sum(1), (x, w), fast_mode=True)
    wrong = lambda a, b: a * b.detach() * b  # noqa: E731
    with pytest.raises(pylucid.autograd.GradcheckError, match="input 1 \\(fast mode"):
        gradcheck(wrong, (x, w), fast_mode=True)
    assert gradcheck(wrong, (x, w), fast_mode=True, raise_exception=False) is False


def _function(backward):
    class Custom(pylucid.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return backward(t, g)
    return Custom.apply


def test_gradcheck_nondet_tol():
    """A backward that differs between two calls fails unless nondet_tol allows the difference."""
    rng = np.random.default_rng(0)
    noisy = _function(lambda t, g: 2 * t * g * pylucid.tensor(1 + rng.uniform(-1e-9, 1e-9, 3), dtype=F64))
    x = pylucid.tensor([0.5, 1.0, -2.0], dtype=F64, requires_grad=True)
    with pytest.raises(pylucid.autograd.GradcheckError, match="not reentrant.*nondet_tol=0.0"):
        gradcheck(noisy, (x,))
    assert gradcheck(noisy, (x,), nondet_tol=1e-7)
    assert gradcheck(noisy, (x,), nondet_tol=1e-7, fast_mode=True)


def test_gradcheck_check_undefined_grad():
    """A backward that returns a gradient for a zero output gradient is caught (and only then)."""
    def bwd(t, g):
        return pylucid.ones_like(t) if float(g.abs().sum()) == 0 else 2 * t * g
    leaky = _function(bwd)
    x = pylucid.tensor([0.5, 1.0], dtype=F64, requires_grad=True)
    with pytest.raises(pylucid.autograd.GradcheckError, match="zero gradient gave a non-zero gradient for input 0"):
        gradcheck(leaky, (x,))
    assert gradcheck(leaky, (x,), check_undefined_grad=False)


def test_gradcheck_check_batched_grad():
    """check_batched_grad: backward must be linear in the output gradient."""
    right = _function(lambda t, g: 2 * t * g)
    squared = _function(lambda t, g: 2 * t * g * g)  # equal to the right one for one-hot g
    x = pylucid.tensor([0.5, 1.0, -2.0], dtype=F64, requires_grad=True)
    assert gradcheck(right, (x,), check_batched_grad=True)
    assert gradcheck(squared, (x,))
    with pytest.raises(pylucid.autograd.GradcheckError, match="input 0: backward is not linear"):
        gradcheck(squared, (x,), check_batched_grad=True)
    assert gradgradcheck(lambda t: (t * t).sin(), (x,), check_batched_grad=True)


def test_gradcheck_refuses_low_precision():
    x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(pylucid.DtypeMismatch, match="float64"):
        gradcheck(lambda t: t * t, (x,))


def test_graph_freed_after_backward():
    """Guards against saved tensors and nodes outliving backward (memory growth in training)."""
    import gc
    gc.collect()
    x = pylucid.ones(1000, requires_grad=True)
    base_t, base_n = pylucid._C._live_counts()
    y = ((x * 2.0) * (x * 3.0)).exp() * x
    during_t, during_n = pylucid._C._live_counts()
    assert during_n - base_n >= 4 and during_t - base_t >= 4
    y.backward(pylucid.ones(1000))
    after_t, after_n = pylucid._C._live_counts()
    # Only y, its own node and x.grad remain: intermediates saved for backward are gone.
    assert after_t - base_t <= 2
    assert after_n - base_n <= 1
    del y
    x.grad = None
    assert pylucid._C._live_counts() == (base_t, base_n)


def test_tensor_kept_by_user_does_not_keep_graph_alive():
    """Guards against a retained output pinning every intermediate after backward."""
    x = pylucid.ones(100, requires_grad=True)
    base_t, _ = pylucid._C._live_counts()
    h = x * 2.0
    keep = h * h
    out = (keep * keep).exp()
    out.backward(pylucid.ones(100))
    del out
    # h is saved by the first MulBackward; after backward that node released it.
    del h
    t_now, _ = pylucid._C._live_counts()
    assert t_now - base_t <= 2  # keep and x.grad
