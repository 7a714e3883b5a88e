"""Binary ops: forward vs numpy, gradients, broadcasting, promotion, in-place rules."""
import numpy as np
import pytest

import pylucid
from helpers import check_op, rand_array

F64 = pylucid.float64


@pytest.mark.parametrize("op,ref", [
    (lambda a, b: a + b, np.add),
    (lambda a, b: a - b, np.subtract),
    (lambda a, b: a * b, np.multiply),
    (lambda a, b: a / b, np.divide),
    (lambda a, b: pylucid.maximum(a, b), np.maximum),
    (lambda a, b: pylucid.minimum(a, b), np.minimum),
])
@pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((5,), ())])
def test_binary_forward_and_grad(op, ref, sa, sb):
    """Guards against wrong gradients for broadcast operands (must be summed back to their shape)."""
    check_op(op, ref, [sa, sb], positive=True)


def test_pow_grad_both_operands():
    """Guards against the exponent's gradient (a^b log a) being dropped or NaN."""
    check_op(lambda a, b: a ** b, np.power, [(3, 2), (2,)], positive=True)


def test_pow_zero_base_gradient_is_finite():
    """Guards against 0 * log(0) = NaN in d(a^b)/db at a == 0."""
    a = pylucid.tensor([0.0, 2.0], dtype=F64, requires_grad=True)
    b = pylucid.tensor([2.0, 3.0], dtype=F64, requires_grad=True)
    (a ** b).backward(pylucid.ones(2, dtype=F64))
    assert np.isfinite(np.asarray(b.grad)).all()
    np.testing.assert_allclose(np.asarray(a.grad), [0.0, 12.0])


def test_scalar_operands_follow_pytorch_promotion():
    """Guards against Python floats widening float32 tensors (or ints turning int tensors float)."""
    x = pylucid.ones(2)
    assert (x + 1.5).dtype == pylucid.float32
    assert (2 * x).dtype == pylucid.float32
    i = pylucid.tensor([1, 2])
    assert (i + 1).dtype == pylucid.int64
    assert (i + 0.5).dtype == pylucid.float32
    assert (i / 2).dtype == pylucid.float32
    assert (pylucid.ones(2, dtype=pylucid.float16) + pylucid.ones(2)).dtype == pylucid.float32
    assert (1 - x).tolist() == [0.0, 0.0]
    assert (2 ** pylucid.tensor([1.0, 3.0])).tolist() == [2.0, 8.0]


def test_comparisons_give_bool_and_no_grad():
    x = pylucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = x > 1.5
    assert c.dtype == pylucid.bool and not c.requires_grad
    assert c.tolist() == [False, True, True]
    assert (x == pylucid.tensor([1.0, 0.0, 3.0])).tolist() == [True, False, True]


def test_broadcast_error_names_op_and_shapes():
    with pytest.raises(pylucid.ShapeMismatch, match=r"mul: shapes \[2, 3\] and \[4\]"):
        pylucid.ones(2, 3) * pylucid.ones(4)
    with pytest.raises(ValueError):  # ShapeMismatch is also a ValueError
        pylucid.ones(2, 3) + pylucid.ones(2)


def test_inplace_on_leaf_requiring_grad_is_refused():
    """Guards against silently corrupting a leaf that autograd tracks."""
    x = pylucid.ones(3, requires_grad=True)
    with pytest.raises(pylucid.LucidError, match="in-place operation"):
        x.add_(1.0)
    with pylucid.no_grad():
        x.add_(1.0)
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_saved_tensor_modified_in_place_raises_at_backward():
    """Guards against wrong gradients after a saved input was overwritten (version counter)."""
    a = pylucid.tensor([1.0, 2.0], requires_grad=True)
    b = pylucid.tensor([3.0, 4.0])
    y = (a * b).sum() if hasattr(pylucid.Tensor, "sum") else None
    y = a * b
    b.mul_(2.0)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        y.backward(pylucid.ones(2))


def test_second_backward_without_retain_graph_raises():
    a = pylucid.tensor([1.0, 2.0], requires_grad=True)
    y = a * a
    y.backward(pylucid.ones(2), retain_graph=True)
    y.backward(pylucid.ones(2))
    np.testing.assert_allclose(np.asarray(a.grad), [4.0, 8.0])
    with pytest.raises(pylucid.LucidError, match="second time"):
        y.backward(pylucid.ones(2))


def test_float16_and_bfloat16_arithmetic_close_to_float32():
    a, b = rand_array((64,)), rand_array((64,))
    for dt in (pylucid.float16, pylucid.bfloat16):
        x = pylucid.tensor(a, dtype=dt) * pylucid.tensor(b, dtype=dt)
        assert x.dtype == dt
        np.testing.assert_allclose(np.asarray(x.float()), a * b, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("method", ["add_", "sub_", "mul_", "div_"])
def test_inplace_methods_refuse_non_numbers(method):
    """Guards against x.sub_("a") returning NotImplemented (the operators' protocol value) instead
    of raising, which left x unchanged without telling the caller."""
    x = pylucid.ones(3)
    with pytest.raises(pylucid.DtypeMismatch, match=f"{method}: expected a Tensor or a number, got str"):
        getattr(x, method)("a")
    assert x.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError):
        x -= "a"


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow"])
def test_module_functions_refuse_non_numbers(name):
    """Guards against pylucid.add(x, "a") returning NotImplemented instead of raising."""
    with pytest.raises(pylucid.DtypeMismatch, match=f"{name}: expected a Tensor or a number for other, got str"):
        getattr(pylucid, name)(pylucid.ones(2), "a")


def test_int_tensor_to_negative_int_power_raises_as_torch():
    """Guards `int_tensor ** -1` silently giving 0s: PyTorch refuses a negative Python-int power of
    an integer tensor, but computes an integer tensor exponent and float powers."""
    i = pylucid.tensor([5, -7, 9])
    for f in (lambda: i ** -1, lambda: pylucid.pow(i, -2), lambda: pylucid.tensor([True]) ** -1):
        with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
            f()
    assert (i ** pylucid.tensor(-1)).tolist() == [0, 0, 0] and (i ** 2).tolist() == [25, 49, 81]
    assert (pylucid.tensor([1, 2]) ** -1.0).tolist() == [1.0, 0.5] and (i ** 0).tolist() == [1, 1, 1]
