"""pylucid.autograd.Function: custom forward/backward, ctx API, checks, double backward."""
import numpy as np
import pytest

import pylucid
from pylucid.autograd import Function, gradcheck, gradgradcheck

F64 = pylucid.float64


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g


class MulConst(Function):  # the setup_context form, a non-tensor argument
    @staticmethod
    def forward(x, c):
        return x * c

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.c = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.c, None


def t64(vals, grad=True):
    return pylucid.tensor(vals, dtype=F64, requires_grad=grad)


def test_forward_backward_gradcheck_and_double_backward():
    x = t64([0.5, -1.5, 2.0])
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward" and y.requires_grad
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))
    (g,) = pylucid.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = pylucid.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(np.asarray(gg), 6 * np.array([0.5, -1.5, 2.0]))


def test_setup_context_form_and_non_tensor_args():
    x = t64([1.0, 2.0])
    MulConst.apply(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_needs_input_grad_and_no_graph_without_grad():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen.append(ctx.needs_input_grad)
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g

    a, b = t64([1.0]), t64([2.0], grad=False)
    assert Probe.apply(a, b).requires_grad
    assert seen[-1] == (True, False)
    with pylucid.no_grad():
        assert not Probe.apply(a, b).requires_grad


def test_saved_tensor_modified_in_place_raises():
    """Guards the version-counter check on ctx.saved_tensors (as built-in nodes do)."""
    x = t64([1.0, 2.0])
    y = x * 1.0
    z = Cube.apply(y)
    with pylucid.no_grad():
        y.add_(1.0)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        z.sum().backward()


def test_second_backward_without_retain_graph_raises():
    x = t64([1.0])
    z = Cube.apply(x).sum()
    z.backward()
    with pytest.raises(pylucid.LucidError, match="second time"):
        z.backward()


def test_wrong_gradient_count_shape_and_type_name_the_function():
    class Bad(Function):
        mode = "count"

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if Bad.mode == "count":
                return g, g
            if Bad.mode == "shape":
                return pylucid.ones(5, dtype=F64)
            if Bad.mode == "dtype":
                return pylucid.ones(2, dtype=pylucid.int64)
            if Bad.mode == "float32":
                return g.float()
            return "nope"

    x = t64([1.0, 2.0])
    with pytest.raises(pylucid.LucidError, match="Bad.backward: returned 2 gradients, expected 1"):
        Bad.apply(x).sum().backward()
    Bad.mode = "shape"
    with pytest.raises(pylucid.ShapeMismatch, match=r"Bad.backward: gradient for input 0 has shape \[5\], expected \[2\]"):
        Bad.apply(x).sum().backward()
    Bad.mode = "type"
    with pytest.raises(TypeError, match="Bad.backward: gradient for input 0 is a str"):
        Bad.apply(x).sum().backward()
    Bad.mode = "dtype"
    with pytest.raises(pylucid.DtypeMismatch, match="Bad.backward: gradient for input 0 has dtype pylucid.int64, "
                       "expected pylucid.float64"):
        Bad.apply(x).sum().backward()
    assert x.grad is None
    Bad.mode = "float32"  # a floating gradient of another dtype is cast to the input's, as in PyTorch
    Bad.apply(x).sum().backward()
    assert x.grad.dtype == F64 and x.grad.tolist() == [1.0, 1.0]


def test_non_differentiable_outputs_and_materialized_grads():
    got = []

    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            idx = pylucid.tensor([1, 0])
            ctx.mark_non_differentiable(idx)
            return x.flip(0) if hasattr(x, "flip") else x[[1, 0]], idx

        @staticmethod
        def backward(ctx, g, g_idx):
            got.append(g_idx)
            return g[[1, 0]]

    x = t64([1.0, 2.0])
    v, i = SortLike.apply(x)
    assert v.requires_grad and not i.requires_grad
    (v * t64([10.0, 20.0], grad=False)).sum().backward()
    assert x.grad.tolist() == [20.0, 10.0]
    assert got[0].tolist() == [0, 0]  # materialized zeros for the output that got no gradient


def test_set_materialize_grads_false_passes_none():
    got = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            got.append((g1 is None, g2 is None))
            return (g1 if g1 is not None else 0) + (2 * g2 if g2 is not None else 0)

    x = t64([1.0])
    a, b = Two.apply(x)
    a.sum().backward()
    assert got == [(False, True)] and x.grad.tolist() == [1.0]


def test_mark_dirty_rebases_history():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1.0)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = t64([1.0, 2.0])
    y = a * 2
    z = AddOneInPlace.apply(y)
    assert z is y and y.grad_fn.name() == "AddOneInPlaceBackward"
    z.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]
    with pytest.raises(pylucid.LucidError, match="leaf"):
        AddOneInPlace.apply(t64([1.0]))


def test_none_gradient_for_an_input():
    class FirstOnly(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * 2 + b * 0

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    a, b = t64([1.0]), t64([1.0])
    FirstOnly.apply(a, b).sum().backward()
    assert a.grad.tolist() == [2.0] and b.grad is None
