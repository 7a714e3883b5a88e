"""Elementwise outputs are laid out as their inputs (PyTorch's TensorIterator rule): a transposed
or permuted input gives a transposed/permuted output, which decides the memory order a later
random op draws in and what stride()/is_contiguous()/view() see (NOTE [elementwise output layout])."""
import numpy as np
import pylucid
import pytest
from pylucid.nn import functional as F

RNG = np.random.default_rng(3)


def t(*shape):
    return pylucid.tensor(RNG.standard_normal(shape).astype(np.float32))


def test_unary_and_binary_keep_a_transposed_layout():
    b = t(4, 3)
    for r in (b.t() * 2, 2 - b.t(), b.t() + b.t(), b.t().exp(), -b.t(), F.gelu(b.t()), b.t().clamp(min=0),
              pylucid.maximum(b.t(), b.t()), F.leaky_relu(b.t()), b.t().clone(), b.t().double()):
        assert r.shape == (3, 4) and r.stride() == (1, 3) and not r.is_contiguous()
    np.testing.assert_array_equal((b.t() * 2).numpy(), b.numpy().T * 2)
    np.testing.assert_allclose(b.t().exp().numpy(), np.exp(b.numpy().T), rtol=1e-6)
    assert b.t().contiguous().stride() == (4, 1)
    assert b.t().clone(memory_format=pylucid.contiguous_format).is_contiguous()


def test_mixed_layouts_follow_the_first_input_that_orders_the_dims():
    a, b = t(4, 3), t(3, 4)
    assert (a.t() + b).stride() == (1, 3)  # the first input decides
    assert (b + a.t()).stride() == (4, 1)
    assert (a.t() + t(4)).stride() == (1, 3)  # a broadcast operand orders nothing
    assert (t(4) + a.t()).stride() == (1, 3)
    x = t(2, 3, 4).permute(2, 0, 1)
    assert x.exp().stride() == x.stride()
    s = t(4, 6)[:, ::2]  # not dense: the output is dense in the input's order
    assert (s * 3).stride() == (3, 1)
    np.testing.assert_allclose((a.t() + b).numpy(), a.numpy().T + b.numpy(), rtol=1e-6)


def test_view_of_a_permuted_result_raises_as_in_pytorch():
    y = t(4, 3).t() * 2
    with pytest.raises(RuntimeError):
        y.view(12)
    assert y.reshape(12).shape == (12,)


def test_gradients_of_permuted_outputs():
    x = pylucid.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    y = (x.t() * x.t()).exp().sum()
    y.backward()
    xn = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * xn * np.exp(xn * xn), rtol=1e-12)


@pytest.mark.parametrize("case", ["vit_pos_dropout", "gelu_t", "clone_t", "bias_t", "slice", "perm3", "where_t",
                                  "where_scalar_t", "masked_fill_t"])
def test_strides_and_dropout_masks_match_torch(case):
    torch = pytest.importorskip("torch")

    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(2, 8, 16)
        exprs = {
            "vit_pos_dropout": lambda: x.transpose(1, 2) + lib.zeros(1, 16, 8),
            "gelu_t": lambda: lib.nn.functional.gelu(x.transpose(0, 2)),
            "clone_t": lambda: x.transpose(1, 2).clone(),
            "bias_t": lambda: x.transpose(1, 2) * lib.ones(8),
            "slice": lambda: x[:, ::2].exp(),
            "perm3": lambda: x.permute(2, 0, 1) - x.permute(2, 0, 1).sin(),
            "where_t": lambda: lib.where(x.transpose(1, 2) > 0, x.transpose(1, 2), lib.zeros(16, 8)),
            "where_scalar_t": lambda: lib.where(x.transpose(0, 2) > 0, x.transpose(0, 2), 0.0),
            "masked_fill_t": lambda: x.transpose(1, 2).masked_fill(x.transpose(1, 2) > 0, 1.0),  # row-major
        }
        y = exprs[case]()
        lib.manual_seed(1)
        mask = lib.nn.functional.dropout(y, 0.5) == 0
        return y.stride(), y.is_contiguous(), mask.numpy()

    ours, theirs = run(pylucid), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_array_equal(ours[2], theirs[2])
