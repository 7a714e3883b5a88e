"""autograd.Function with several outputs that save tensors: every output's gradient reaches the
one backward (each output has its own node; the saved tensors are freed after the last), and a
second backward without retain_graph still raises."""
import pytest

import pylucid


class _Two(pylucid.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * x

    @staticmethod
    def backward(ctx, ga, gb):
        (x,) = ctx.saved_tensors
        return ga * 2 + gb * 2 * x


def test_both_outputs_contribute():
    x = pylucid.tensor([1.0, 3.0], requires_grad=True)
    a, b = _Two.apply(x)
    (a + b).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_one_output_then_the_other():
    x = pylucid.tensor([2.0], requires_grad=True)
    a, b = _Two.apply(x)
    a.sum().backward()
    b.sum().backward()
    assert x.grad.tolist() == [2.0 + 4.0]


def test_second_backward_through_the_same_output_raises():
    x = pylucid.tensor([2.0], requires_grad=True)
    a, b = _Two.apply(x)
    a.sum().backward()
    with pytest.raises(pylucid.LucidError, match="second time"):
        a.sum().backward()


def test_retain_graph_and_double_backward():
    x = pylucid.tensor([1.5], requires_grad=True, dtype=pylucid.float64)
    a, b = _Two.apply(x)
    (g,) = pylucid.autograd.grad((a + b).sum(), x, create_graph=True)
    assert g.item() == pytest.approx(2 + 2 * 1.5)
    (h,) = pylucid.autograd.grad(g.sum(), x)
    assert h.item() == pytest.approx(2.0)
