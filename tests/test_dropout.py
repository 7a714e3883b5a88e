"""dropout: inverted scaling, seeded masks, the p = 0 / p = 1 / eval cases, the saved-mask
backward (gradcheck with the seed fixed inside the function), dtypes and errors."""

import numpy as np
import pylucid
import pylucid.nn.functional as F
import pytest
from helpers import non_contiguous, rand_array

F64 = pylucid.float64


def test_inverted_scaling_and_keep_rate():
    """Guards against forgetting the 1 / (1 - p) scale or dropping with probability 1 - p instead of p."""
    x = pylucid.ones(200_000)
    y = np.asarray(F.dropout(x, p=0.3))
    assert set(np.unique(y).tolist()) <= {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.005
    assert abs(y.mean() - 1.0) < 0.01


def test_same_seed_same_mask():
    """Guards against masks that do not follow pylucid.manual_seed (irreproducible training)."""
    x = pylucid.randn(64, 32)
    pylucid.manual_seed(123)
    a = np.asarray(F.dropout(x, 0.5))
    b = np.asarray(F.dropout(x, 0.5))
    pylucid.manual_seed(123)
    c = np.asarray(F.dropout(x, 0.5))
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a == 0, b == 0)


def test_eval_and_p_zero_return_the_input():
    """Guards against eval-mode dropout copying or scaling the input."""
    x = pylucid.randn(3, 4, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout(pylucid.tensor([1, 2]), 0.5, training=False).tolist() == [1, 2]


def test_p_one_gives_zeros_and_zero_grad():
    """Guards against 1 / (1 - p) = inf turning p == 1 into NaNs."""
    x = pylucid.randn(5, 3, requires_grad=True)
    y = F.dropout(x, p=1.0)
    np.testing.assert_array_equal(np.asarray(y.detach()), np.zeros((5, 3)))
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), np.zeros((5, 3)))


def _seeded(p):
    def fn(x):
        pylucid.manual_seed(11)  # the same mask for every finite-difference evaluation
        return F.dropout(x, p)

    return fn


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_gradcheck_with_fixed_mask(p):
    """Guards against a backward that does not reuse the forward's mask and scale."""
    a = rand_array((4, 5))
    assert pylucid.autograd.gradcheck(_seeded(p), (pylucid.from_numpy(a).requires_grad_(),))
    assert pylucid.autograd.gradcheck(_seeded(p), (non_contiguous(a).requires_grad_(),))


def test_backward_is_mask_times_scale_and_accumulates():
    """Guards against the gradient using a fresh mask, and .grad not accumulating over two backwards."""
    x = pylucid.from_numpy(rand_array((6, 7)) + 3.0).requires_grad_()
    y = F.dropout(x, 0.4)
    g = rand_array((6, 7))
    y.backward(pylucid.from_numpy(g), retain_graph=True)
    mask = np.asarray(y.grad_fn.saved_mask)
    assert y.grad_fn.scale == pytest.approx(1 / 0.6)
    np.testing.assert_allclose(np.asarray(x.grad), g * mask / 0.6, rtol=1e-14)
    np.testing.assert_array_equal(np.asarray(y.detach()) != 0, mask)
    y.backward(pylucid.from_numpy(g))
    np.testing.assert_allclose(np.asarray(x.grad), 2 * g * mask / 0.6, rtol=1e-14)


def test_non_contiguous_and_empty_inputs():
    """Guards against a strided input being masked in the wrong order, or a crash on no elements."""
    a = rand_array((5, 6)) + 3.0
    pylucid.manual_seed(5)
    y = np.asarray(F.dropout(non_contiguous(a), 0.5))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 2 * a[kept], rtol=1e-14)
    e = pylucid.zeros(0, 3, requires_grad=True)
    out = F.dropout(e, 0.5)
    assert out.shape == (0, 3)
    out.sum().backward()
    assert e.grad.shape == (0, 3)


@pytest.mark.parametrize("dt", [pylucid.float16, pylucid.bfloat16, F64])
def test_dtypes(dt):
    """Guards against dropout changing dtype (it is KeepInput, also under autocast)."""
    x = pylucid.ones(100).to(dt).requires_grad_()
    with pylucid.autocast(dtype=pylucid.bfloat16):
        y = F.dropout(x, 0.5)
    assert y.dtype == dt
    assert set(np.unique(np.asarray(y.detach().float())).tolist()) <= {0.0, 2.0}
    y.sum().backward()
    assert x.grad.dtype == dt
    assert pylucid.ops.schema("dropout").amp_policy == pylucid._C.AmpPolicy.KeepInput


def test_nan_stays_nan_when_dropped():
    """Guards against dropout hiding NaNs (PyTorch multiplies by the mask, so NaN * 0 stays NaN)."""
    y = np.asarray(F.dropout(pylucid.full((64,), float("nan")), 0.5))
    assert np.isnan(y).all()


def test_errors():
    """Guards against a probability outside [0, 1] (or NaN) being accepted, and integer input crashing."""
    x = pylucid.ones(3)
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(
            pylucid.LucidError, match="dropout probability has to be between 0 and 1"
        ):
            F.dropout(x, p)
    with pytest.raises(pylucid.LucidError):
        F.dropout(x, 2.0, training=False)
    with pytest.raises(
        pylucid.DtypeMismatch, match="dropout: expected a floating input, got int64"
    ):
        F.dropout(pylucid.tensor([1, 2]), 0.5)
    with pytest.raises(TypeError):
        F.dropout(None)


@pytest.mark.parametrize("module,shape", [
    (pylucid.nn.Dropout, (2, 6)), (pylucid.nn.Dropout1d, (2, 4, 3)), (pylucid.nn.Dropout2d, (2, 4, 2, 2)),
    (pylucid.nn.Dropout3d, (2, 4, 1, 2, 2))])
def test_dropout_modules_inplace_write_into_their_input(module, shape):
    """Guards against ``nn.Dropout(p, inplace=True)`` (as in ``Sequential(..., ReLU(inplace=True),
    Dropout(0.5, inplace=True))``) raising: it writes the masked result into its input with the
    same mask and gradient as the out-of-place module, and refuses a leaf that requires grad."""
    m = module(0.5, inplace=True)
    assert repr(m).endswith("inplace=True)")
    w = pylucid.randn(*shape, requires_grad=True)
    pylucid.manual_seed(3)
    ref = module(0.5)(w * 2)
    (ref * pylucid.arange(ref.numel()).view(ref.shape)).sum().backward()
    ref_grad, w.grad = w.grad.clone(), None
    pylucid.manual_seed(3)
    h = w * 2
    out = m(h)
    assert out is h and pylucid.equal(out, ref)
    (out * pylucid.arange(out.numel()).view(out.shape)).sum().backward()
    assert pylucid.equal(w.grad, ref_grad)
    x = pylucid.ones(*shape)
    assert m.eval()(x) is x and pylucid.equal(x, pylucid.ones(*shape))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        m.train()(pylucid.ones(*shape, requires_grad=True))


def test_alpha_dropout_inplace_functional_only():
    """Guards against F.alpha_dropout(inplace=True) returning a new tensor (PyTorch writes into the
    input) and nn.AlphaDropout(inplace=True) writing into it (PyTorch's module ignores inplace)."""
    x = pylucid.ones(8)
    assert F.alpha_dropout(x, 0.5, True, inplace=True) is x and not pylucid.equal(x, pylucid.ones(8))
    x = pylucid.ones(2, 3, 2)
    assert F.feature_alpha_dropout(x, 0.5, True, inplace=True) is x
    x = pylucid.ones(8)
    assert pylucid.nn.AlphaDropout(0.5, inplace=True)(x) is not x and pylucid.equal(x, pylucid.ones(8))


def test_mask_follows_the_memory_order_of_a_permuted_input():
    """Guards against dropout drawing its mask in logical order for a transposed/permuted input
    (the output of a batch_first MultiheadAttention): PyTorch draws into empty_like(x), which
    keeps x's strides, so its draws follow x's memory order; a slice keeps logical order."""
    x = pylucid.randn(4, 6)
    pylucid.manual_seed(5)
    a = F.dropout(x.t(), 0.5)
    pylucid.manual_seed(5)
    assert pylucid.equal(a, F.dropout(x, 0.5).t())
    y = pylucid.randn(2, 3, 4)
    pylucid.manual_seed(6)
    b = F.dropout(y.permute(2, 0, 1), 0.3)
    pylucid.manual_seed(6)
    assert pylucid.equal(b, F.dropout(y, 0.3).permute(2, 0, 1))
    z = x[:, ::2]
    pylucid.manual_seed(7)
    c = F.dropout(z, 0.5)
    pylucid.manual_seed(7)
    assert pylucid.equal(c, F.dropout(z.contiguous(), 0.5))


def test_permuted_dropout_and_like_samplers_match_torch():
    """Guards against a batch_first Transformer layer in training mode (dropout after the
    attention's transposed output) and randn_like/rand_like/randint_like of a permuted tensor
    giving numbers different from PyTorch's for the same seed."""
    torch = pytest.importorskip("torch")
    base = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    ours, theirs = [], []
    for lib, out in ((pylucid, ours), (torch, theirs)):
        x = lib.tensor(base)
        for f in (lambda: lib.nn.functional.dropout(x.transpose(0, 1), 0.4),
                  lambda: lib.randn_like(x.transpose(0, 1)), lambda: lib.rand_like(x.permute(2, 0, 1)),
                  lambda: lib.randint_like(x.transpose(1, 2), 10), lambda: lib.randn_like(x[:, :2])):
            lib.manual_seed(3)
            out.append((f().numpy().copy(), lib.rand(1).item()))
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2, batch_first=True)
        lib.manual_seed(1)
        out.append((layer(x).detach().numpy(), lib.rand(1).item()))
    for (a, ra), (b, rb) in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        assert ra == rb
