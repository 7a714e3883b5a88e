"""pylucid.nn.functional's activations and linear: PyTorch's functional signatures over the C++
elementwise ops (whose own kernels are tested in test_unary.py and test_matmul.py)."""
import math

import numpy as np
import pytest

import pylucid
import pylucid.nn.functional as F
from helpers import check_op

erf = np.vectorize(math.erf, otypes=[np.float64])

CASES = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "sigmoid": (F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (F.tanh, np.tanh),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("shape", [(3, 4), (1,), (0, 5), ()])
def test_activation_matches_numpy_and_finite_differences(name, shape):
    """Guards against a functional wrapper that passes the wrong op or argument to the kernel."""
    fn, ref = CASES[name]
    check_op(fn, ref, [shape])


def test_linear_matches_numpy_with_broadcast_bias():
    """Guards against F.linear dropping the bias or transposing the wrong operand."""
    check_op(F.linear, lambda x, w, b: x @ w.T + b, [(2, 3, 4), (5, 4), (5,)])
    check_op(lambda x, w: F.linear(x, w), lambda x, w: x @ w.T, [(3, 4), (5, 4)])


def test_inplace_forms_overwrite_input():
    """Guards against inplace=True returning a new tensor and leaving the input unchanged."""
    for fn, ref in ((F.relu, lambda v: max(v, 0.0)), (F.silu, lambda v: v / (1 + math.exp(-v)))):
        x = pylucid.tensor([-1.0, 0.5, 2.0])
        y = fn(x, inplace=True)
        assert y.data_ptr() == x.data_ptr()
        np.testing.assert_allclose(x.tolist(), [ref(v) for v in (-1.0, 0.5, 2.0)], rtol=1e-6)


def test_inplace_refused_on_tensor_requiring_grad():
    """Guards against an in-place activation silently breaking autograd of a leaf."""
    x = pylucid.randn(3, requires_grad=True)
    for fn in (F.relu, F.silu):
        with pytest.raises(pylucid.LucidError, match="a leaf Variable that requires grad is being used in an in-place"):
            fn(x, inplace=True)
    assert x.grad is None


def test_gelu_refuses_unknown_approximation():
    """Guards against a typo in approximate= silently giving the exact GELU."""
    with pytest.raises(pylucid.LucidError, match="gelu"):
        F.gelu(pylucid.randn(3), approximate="fast")


def test_matches_torch():
    """Guards against differences from PyTorch's F in float32 (where users compare results)."""
    torch = pytest.importorskip("torch")
    tF = torch.nn.functional
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    pairs = [(F.relu, tF.relu), (F.gelu, tF.gelu), (F.silu, tF.silu), (F.sigmoid, torch.sigmoid),
             (F.tanh, torch.tanh), (lambda t: F.gelu(t, approximate="tanh"),
                                    lambda t: tF.gelu(t, approximate="tanh"))]
    for ours, theirs in pairs:
        np.testing.assert_allclose(np.asarray(ours(pylucid.from_numpy(x))),
                                   theirs(torch.from_numpy(x)).numpy(), rtol=2e-6, atol=2e-7)
