"""embedding: row gather forward vs numpy, scatter-add backward (duplicates, padding_idx), any
index shape, strided weights and indices, dtypes, errors, PyTorch."""

import numpy as np
import pylucid
import pylucid.nn.functional as F
import pytest
from helpers import rand_array

F64 = pylucid.float64


def _torch():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(
        1
    )  # tiny calls: torch's thread pool only adds wake-up latency on a busy machine
    return torch


def T(a):
    return pylucid.from_numpy(np.array(a, copy=True))


def scatter_ref(idx, g, V, padding_idx=None):
    gw = np.zeros((V, g.shape[-1]))
    np.add.at(gw, idx.reshape(-1), g.reshape(-1, g.shape[-1]))
    if padding_idx is not None:
        gw[padding_idx] = 0
    return gw


@pytest.mark.parametrize("idx_shape", [(4,), (2, 3), (2, 1, 3), ()])
def test_forward_backward_gradcheck_any_index_shape(idx_shape):
    """Guards against a wrong output shape (index.shape + (D,)) or a gather / scatter off by a row."""
    V, D = 5, 3
    w = rand_array((V, D))
    idx = np.random.default_rng(0).integers(0, V, size=idx_shape)
    out = F.embedding(T(idx), T(w))
    assert out.shape == idx_shape + (D,)
    np.testing.assert_array_equal(np.asarray(out), w[idx])
    assert pylucid.autograd.gradcheck(lambda ww: F.embedding(T(idx), ww), (T(w).requires_grad_(),))


def test_duplicate_indices_accumulate_and_two_backwards_add():
    """Guards against repeated indices overwriting instead of summing their gradients, and
    .grad not accumulating across backward calls."""
    w = T(rand_array((4, 2))).requires_grad_()
    idx = np.array([[1, 1, 3], [1, 0, 3]])
    g = rand_array((2, 3, 2))
    F.embedding(T(idx), w).backward(T(g))
    np.testing.assert_allclose(np.asarray(w.grad), scatter_ref(idx, g, 4), rtol=1e-14)
    F.embedding(T(idx), w).backward(T(g))
    np.testing.assert_allclose(np.asarray(w.grad), 2 * scatter_ref(idx, g, 4), rtol=1e-14)


@pytest.mark.parametrize("padding_idx", [2, -1, 0])
def test_padding_row_gets_no_gradient(padding_idx):
    """Guards against the padding row being trained (or a negative padding_idx not wrapping)."""
    V = 4
    w = T(rand_array((V, 3))).requires_grad_()
    idx = np.array([0, 2, 3, 2, 1, 3])
    out = F.embedding(T(idx), w, padding_idx=padding_idx)
    np.testing.assert_array_equal(
        np.asarray(out.detach()), np.asarray(w.detach())[idx]
    )  # forward unchanged
    g = rand_array((6, 3))
    out.backward(T(g))
    np.testing.assert_allclose(
        np.asarray(w.grad), scatter_ref(idx, g, V, padding_idx % V), rtol=1e-14
    )
    assert out.grad_fn.padding_idx == padding_idx % V


def test_non_contiguous_weight_and_indices():
    """Guards against a transposed (tied) weight or strided indices being read as contiguous."""
    wt = rand_array((3, 6))
    w = T(wt).transpose(0, 1).requires_grad_()  # (6, 3), column stride 6
    assert not w.is_contiguous()
    idx = T(np.array([[5, 0, 2], [1, 1, 4]])).transpose(0, 1)  # (3, 2) strided
    ref = wt.T[np.asarray(idx)]
    np.testing.assert_array_equal(np.asarray(F.embedding(idx, w).detach()), ref)
    assert pylucid.autograd.gradcheck(lambda ww: F.embedding(idx, ww), (w,))


def test_empty_indices_and_size_one_table():
    """Guards against a crash on no indices (the grad must be all zeros) or a one-row table."""
    w = T(rand_array((3, 2))).requires_grad_()
    out = F.embedding(pylucid.zeros(0, dtype=pylucid.int64), w)
    assert out.shape == (0, 2)
    out.sum().backward()
    np.testing.assert_array_equal(np.asarray(w.grad), np.zeros((3, 2)))
    one = T(rand_array((1, 4)))
    np.testing.assert_array_equal(np.asarray(F.embedding(T([0, 0]), one)), np.asarray(one)[[0, 0]])


@pytest.mark.parametrize("dt", [pylucid.float16, pylucid.bfloat16, pylucid.float32])
def test_low_precision_weights(dt):
    """Guards against half gradients accumulated in half (lost updates when many rows share an index)."""
    w = pylucid.zeros(2, 3).to(dt).requires_grad_()
    idx = T(np.zeros(3000, dtype=np.int64))
    out = F.embedding(idx, w)
    assert out.dtype == dt
    out.sum().backward()
    assert w.grad.dtype == dt
    # 3000 is not exact in bfloat16 (3008); summing in half would stall far lower (256 / 2048).
    np.testing.assert_allclose(np.asarray(w.grad.float()), [[3000.0] * 3, [0.0] * 3], rtol=5e-3)
    with pylucid.autocast(dtype=pylucid.bfloat16):
        assert F.embedding(idx, w).dtype == dt  # KeepInput
    assert pylucid.ops.schema("embedding").amp_policy == pylucid._C.AmpPolicy.KeepInput


def test_node_state():
    """Guards against the node losing its indices or schema."""
    w = T(rand_array((5, 2))).requires_grad_()
    out = F.embedding(T([4, 1]), w)
    n = out.grad_fn
    assert isinstance(n, pylucid._C.EmbeddingBackward) and n.name() == "EmbeddingBackward"
    assert n.num_weights == 5 and n.padding_idx is None
    assert n.saved_indices.tolist() == [4, 1]
    assert n.schema == pylucid._C.EmbeddingBackward.schema_v1


def test_indices_modified_in_place_are_caught():
    """Guards against a backward scattering into rows the indices no longer name."""
    w = T(rand_array((5, 2))).requires_grad_()
    idx = T([4, 1])
    out = F.embedding(idx, w)
    idx.add_(-1)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        out.sum().backward()


def test_errors():
    """Guards against out-of-range indices reading outside the table, and bad arguments crashing."""
    w = pylucid.randn(5, 2)
    with pytest.raises(
        pylucid.IndexOutOfRange, match="embedding: index 5 is out of range for 5 embeddings"
    ):
        F.embedding(T([0, 5]), w)
    with pytest.raises(
        pylucid.IndexOutOfRange, match="embedding: index -1 is out of range for 5 embeddings"
    ):
        F.embedding(T([[-1, 0]]), w)
    with pytest.raises(
        pylucid.DtypeMismatch, match="embedding: indices must be int64, got float32"
    ):
        F.embedding(pylucid.zeros(2), w)
    with pytest.raises(pylucid.ShapeMismatch, match="embedding: weight must be 2-D"):
        F.embedding(T([0]), pylucid.randn(5))
    with pytest.raises(
        pylucid.IndexOutOfRange, match="embedding: padding_idx 5 is out of range for 5 embeddings"
    ):
        F.embedding(T([0]), w, padding_idx=5)
    with pytest.raises(pylucid.IndexOutOfRange, match="padding_idx -6"):
        F.embedding(T([0]), w, padding_idx=-6)
    with pytest.raises(TypeError):
        F.embedding(None, w)


def test_against_torch():
    """Guards against drift from torch.nn.functional.embedding (values, grads, padding_idx)."""
    torch = _torch()
    a = rand_array((6, 4))
    idx = np.array([[0, 5, 5], [2, 3, 0]])
    g = rand_array((2, 3, 4))
    for pad in (None, 5, -2):
        w = T(a).requires_grad_()
        tw = torch.tensor(a, requires_grad=True)
        y = F.embedding(T(idx), w, padding_idx=pad)
        ty = torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=pad)
        np.testing.assert_array_equal(np.asarray(y.detach()), ty.detach().numpy())
        y.backward(T(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(np.asarray(w.grad), tw.grad.numpy(), rtol=1e-14)
