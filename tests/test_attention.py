"""scaled_dot_product_attention: the fused op against a numpy composite (masks, causal, scale,
broadcast and grouped heads, fully masked rows, dropout through its saved mask), float64
gradcheck, non-contiguous inputs, accumulation, empty dims, dtypes, errors, and PyTorch."""

import numpy as np
import pylucid
import pylucid.nn.functional as F
import pytest
from helpers import check_op

RNG = np.random.default_rng(7)


def _torch():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    return torch


def sdpa_ref(q, k, v, mask=None, causal=False, scale=None, gqa=False, keep=None, p=0.0):
    """The composite in numpy (float64): softmax(scale q k^T + mask) v, zero rows where no key
    is attended; `keep` is a dropout keep mask applied to the probabilities."""
    if gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k, v = np.repeat(k, rep, axis=-3), np.repeat(v, rep, axis=-3)
    L, S = q.shape[-2], k.shape[-2]
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    dead = ~np.isfinite(m)
    e = np.exp(s - np.where(dead, 0, m))
    pr = np.where(dead, 0, e / np.where(dead, 1, e.sum(-1, keepdims=True)))
    if keep is not None:
        pr = pr * keep / (1 - p)
    return np.matmul(pr, v)


def t64(a, grad=False):
    t = pylucid.from_numpy(np.ascontiguousarray(a, dtype=np.float64))
    return t.requires_grad_() if grad else t


@pytest.mark.parametrize(
    "qs,ks,vs",
    [((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6)), ((5, 4), (7, 4), (7, 3)), ((2, 1, 6, 3), (3, 6, 3), (1, 3, 6, 2)),
     ((1, 40, 8), (1, 37, 8), (1, 37, 8))],
)
@pytest.mark.parametrize("causal", [False, True])
def test_matches_composite_with_gradcheck(qs, ks, vs, causal):
    """Guards against a wrong probability recompute in the backward, a causal triangle cut at the
    wrong block edge (L = 40 spans two blocks), or batch dims that do not broadcast."""
    check_op(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
             lambda q, k, v: sdpa_ref(q, k, v, causal=causal), [qs, ks, vs])


@pytest.mark.parametrize("mshape", [(5, 7), (2, 1, 1, 7), (3, 5, 1), (7,)])
def test_bool_mask(mshape):
    """Guards against a mask broadcast along the wrong axis (key padding (B, 1, 1, S), per-head
    row masks, a 1-d mask over keys)."""
    mask = RNG.random(mshape) > 0.3
    mt = pylucid.from_numpy(mask)
    check_op(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mt),
             lambda q, k, v: sdpa_ref(q, k, v, mask=mask), [(2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6)])


def test_float_mask_gets_its_gradient_and_scale():
    """Guards against an additive mask read with the wrong strides or missing its gradient."""
    mask = RNG.standard_normal((3, 5, 7))
    q, k, v = (RNG.standard_normal(s) for s in [(2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6)])
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=t64(mask), scale=0.3)
    np.testing.assert_allclose(np.asarray(out), sdpa_ref(q, k, v, mask=mask, scale=0.3), atol=1e-12)
    leaves = [t64(q, True), t64(k, True), t64(v, True), t64(mask, True)]
    assert pylucid.autograd.gradcheck(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3, is_causal=True), leaves)
    # a mask transposed in memory (non-contiguous) gives the same result
    mt = pylucid.from_numpy(np.ascontiguousarray(np.swapaxes(mask, -1, -2))).transpose(-1, -2)
    out2 = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=mt, scale=0.3)
    np.testing.assert_allclose(np.asarray(out2), np.asarray(out), atol=1e-14)


def test_grouped_query_heads():
    """Guards against key/value heads paired with the wrong query heads under enable_gqa, and
    their gradients not summed over the group."""
    mask = RNG.standard_normal((4, 5, 7))
    mt = pylucid.from_numpy(mask)
    check_op(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mt, enable_gqa=True),
             lambda q, k, v: sdpa_ref(q, k, v, mask=mask, gqa=True), [(2, 4, 5, 4), (2, 2, 7, 4), (2, 2, 7, 6)])


def test_fully_masked_rows_give_zeros():
    """Guards against NaN from a row with no attended key (PyTorch's CPU kernel gives 0 and a zero
    gradient)."""
    q, k, v = t64(RNG.standard_normal((1, 3, 4)), True), t64(RNG.standard_normal((1, 5, 4)), True), \
        t64(RNG.standard_normal((1, 5, 2)), True)
    mask = np.ones((3, 5), bool)
    mask[1] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=pylucid.from_numpy(mask))
    o = np.asarray(out.detach())
    assert np.all(o[0, 1] == 0) and np.all(np.isfinite(o))
    out.sum().backward()
    assert np.all(np.asarray(q.grad)[0, 1] == 0) and np.all(np.isfinite(np.asarray(k.grad)))
    fm = np.zeros((3, 5))
    fm[1] = -np.inf
    out2 = F.scaled_dot_product_attention(q, k, v, attn_mask=pylucid.from_numpy(fm))
    np.testing.assert_array_equal(np.asarray(out2.detach()), o)


def test_noncontiguous_transposed_heads():
    """Guards against row strides ignored: q/k/v as (B, L, H, E).transpose(1, 2), as attention
    modules produce them."""
    q, k, v = (RNG.standard_normal(s) for s in [(2, 6, 3, 4), (2, 5, 3, 4), (2, 5, 3, 4)])
    leaves = [t64(a, True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*(t.transpose(1, 2) for t in leaves), is_causal=True)
    ref = sdpa_ref(*(np.swapaxes(a, 1, 2) for a in (q, k, v)), causal=True)
    np.testing.assert_allclose(np.asarray(out.detach()), ref, atol=1e-12)
    assert pylucid.autograd.gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)),
        leaves)


def test_dropout_uses_generator_and_saved_mask():
    """Guards against dropout applied after the wrong product, not reproducible under
    manual_seed, or a backward that ignores the mask."""
    q, k, v = (RNG.standard_normal(s) for s in [(2, 2, 6, 4), (2, 2, 9, 4), (2, 2, 9, 3)])
    leaves = [t64(a, True) for a in (q, k, v)]
    pylucid.manual_seed(3)
    out = F.scaled_dot_product_attention(*leaves, dropout_p=0.4)
    keep = np.asarray(out.grad_fn.saved_dropout_mask)
    assert keep.shape == (2, 2, 6, 9) and 0 < keep.mean() < 1
    np.testing.assert_allclose(np.asarray(out.detach()), sdpa_ref(q, k, v, keep=keep, p=0.4), atol=1e-12)
    pylucid.manual_seed(3)
    again = F.scaled_dot_product_attention(*leaves, dropout_p=0.4)
    np.testing.assert_array_equal(np.asarray(again.detach()), np.asarray(out.detach()))
    # the backward of the same mask, against finite differences of the composite
    g = RNG.standard_normal(out.shape)
    out.backward(pylucid.from_numpy(g))
    eps = 1e-6
    num = np.zeros_like(q)
    for idx in np.ndindex(q.shape):
        qp, qm = q.copy(), q.copy()
        qp[idx] += eps
        qm[idx] -= eps
        num[idx] = ((sdpa_ref(qp, k, v, keep=keep, p=0.4) - sdpa_ref(qm, k, v, keep=keep, p=0.4)) * g).sum() / (2 * eps)
    np.testing.assert_allclose(np.asarray(leaves[0].grad), num, atol=1e-6)
    zero = F.scaled_dot_product_attention(*leaves, dropout_p=1.0)
    assert np.all(np.asarray(zero.detach()) == 0)


@pytest.mark.parametrize("qs,ks,vs", [((2, 0, 4), (2, 3, 4), (2, 3, 5)), ((2, 3, 4), (2, 0, 4), (2, 0, 5)),
                                      ((0, 3, 4), (0, 2, 4), (0, 2, 5)), ((1, 3, 0), (1, 2, 0), (1, 2, 2))])
def test_empty_dims(qs, ks, vs):
    """Guards against a crash or NaN on empty query/key/batch dims (no key: zeros, as PyTorch) and
    E = 0 (every score 0: the mean of v)."""
    q, k, v = (RNG.standard_normal(s) for s in (qs, ks, vs))
    leaves = [t64(a, True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*leaves)
    assert out.shape == qs[:-1] + vs[-1:]
    ref = np.zeros(out.shape) if ks[-2] == 0 else np.broadcast_to(v.mean(-2, keepdims=True), out.shape) \
        if qs[-1] == 0 else sdpa_ref(q, k, v)
    np.testing.assert_allclose(np.asarray(out.detach()), ref, atol=1e-12)
    out.sum().backward()
    for t, a in zip(leaves, (q, k, v)):
        assert t.grad.shape == a.shape and np.all(np.isfinite(np.asarray(t.grad)))


def test_half_types_compute_in_float32():
    """Guards against half inputs computed (and accumulated) in 16 bits."""
    q, k, v = (RNG.standard_normal(s).astype(np.float32) for s in [(2, 8, 16), (2, 8, 16), (2, 8, 16)])
    ref = sdpa_ref(*(a.astype(np.float64) for a in (q, k, v)), causal=True)
    for dt, tol in ((pylucid.float16, 1e-2), (pylucid.bfloat16, 6e-2), (pylucid.float32, 1e-5)):
        args = [pylucid.from_numpy(a).to(dt).requires_grad_() for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*args, is_causal=True)
        assert out.dtype == dt
        np.testing.assert_allclose(np.asarray(out.detach().float()), ref, atol=tol)
        out.float().sum().backward()
        assert all(a.grad.dtype == dt for a in args)


def test_inplace_change_of_output_is_caught():
    """Guards against a backward that reads an output modified in place since the forward."""
    q = t64(RNG.standard_normal((2, 3, 4)), True)
    out = F.scaled_dot_product_attention(q, q, q)
    with pylucid.no_grad():
        out.mul_(2)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        out.sum().backward()


def test_errors_are_typed():
    """Guards against bad input reaching the kernel (a crash) instead of a typed error."""
    a = pylucid.ones(2, 3, 4)
    with pytest.raises(pylucid.DtypeMismatch, match="scaled_dot_product_attention"):
        F.scaled_dot_product_attention(a, a.double(), a)
    with pytest.raises(TypeError):
        F.scaled_dot_product_attention(a.long(), a.long(), a.long())
    with pytest.raises(pylucid.ShapeMismatch, match="last dim"):
        F.scaled_dot_product_attention(a, pylucid.ones(2, 3, 5), a)
    with pytest.raises(ValueError, match="rows"):
        F.scaled_dot_product_attention(a, a, pylucid.ones(2, 4, 4))
    with pytest.raises(pylucid.ShapeMismatch, match="at least 2 dims"):
        F.scaled_dot_product_attention(pylucid.ones(4), a, a)
    with pytest.raises(pylucid.ShapeMismatch, match="attn_mask"):
        F.scaled_dot_product_attention(a, a, a, attn_mask=pylucid.ones(2, 3, dtype=pylucid.bool))
    with pytest.raises(pylucid.ShapeMismatch, match="attn_mask"):
        F.scaled_dot_product_attention(a, a, a, attn_mask=pylucid.ones(5, 3, 3, dtype=pylucid.bool))
    with pytest.raises(pylucid.DtypeMismatch, match="attn_mask"):
        F.scaled_dot_product_attention(a, a, a, attn_mask=pylucid.ones(3, 3, dtype=pylucid.int64))
    with pytest.raises(pylucid.DtypeMismatch, match="attn_mask"):
        F.scaled_dot_product_attention(a, a, a, attn_mask=pylucid.ones(3, 3, dtype=pylucid.float64))
    with pytest.raises(pylucid.LucidError, match="dropout"):
        F.scaled_dot_product_attention(a, a, a, dropout_p=1.5)
    with pytest.raises(pylucid.ShapeMismatch):
        F.scaled_dot_product_attention(pylucid.ones(2, 4, 3, 4), pylucid.ones(2, 3, 3, 4), pylucid.ones(2, 3, 3, 4),
                                       enable_gqa=True)
    with pytest.raises(pylucid.ShapeMismatch):  # grouped heads without enable_gqa do not broadcast
        F.scaled_dot_product_attention(pylucid.ones(2, 4, 3, 4), pylucid.ones(2, 2, 3, 4), pylucid.ones(2, 2, 3, 4))


def test_node_and_schema():
    """Guards against the op recording a composite graph instead of its one node."""
    q = t64(RNG.standard_normal((1, 2, 3, 4)), True)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True, scale=0.5)
    n = out.grad_fn
    assert n.name() == "ScaledDotProductAttentionBackward"
    assert n.is_causal and n.scale == 0.5 and n.saved_dropout_mask is None
    assert n.saved_logsumexp.shape == (1, 2, 3)
    s = pylucid.ops.schema("scaled_dot_product_attention")
    assert s.produces_grad and s.amp_policy == pylucid.ops.AmpPolicy.Promote
    with pylucid.no_grad():
        assert F.scaled_dot_product_attention(q, q, q).grad_fn is None


@pytest.mark.parametrize("causal,mask_kind", [(False, None), (True, None), (False, "bool"), (False, "float"),
                                              (False, "pad")])
def test_matches_torch_float32(causal, mask_kind):
    """Guards against drifting from PyTorch's numbers (float32, a benchmark-sized case that spans
    several row blocks and both threads)."""
    torch = _torch()
    shapes = [(3, 4, 70, 32), (3, 4, 50, 32), (3, 4, 50, 24)]
    q, k, v = (RNG.standard_normal(s).astype(np.float32) for s in shapes)
    g = RNG.standard_normal((3, 4, 70, 24)).astype(np.float32)
    mask = {None: None, "bool": RNG.random((70, 50)) > 0.2,
            "float": RNG.standard_normal((4, 70, 50)).astype(np.float32),
            "pad": RNG.random((3, 1, 1, 50)) > 0.3}[mask_kind]
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    lq, lk, lv = (pylucid.from_numpy(a.copy()).requires_grad_() for a in (q, k, v))
    to = torch.nn.functional.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=None if mask is None else torch.tensor(mask), is_causal=causal)
    lo = F.scaled_dot_product_attention(lq, lk, lv, attn_mask=None if mask is None else pylucid.from_numpy(mask),
                                        is_causal=causal)
    to.backward(torch.tensor(g))
    lo.backward(pylucid.from_numpy(g))
    np.testing.assert_allclose(np.asarray(lo.detach()), to.detach().numpy(), atol=2e-5)
    for a, b in ((lq, tq), (lk, tk), (lv, tv)):
        np.testing.assert_allclose(np.asarray(a.grad), b.grad.numpy(), atol=5e-5)


def _grads(out, leaves, g, create_graph):
    return [np.asarray(t.detach()) for t in pylucid.autograd.grad(out, leaves, g, create_graph=create_graph)]


@pytest.mark.parametrize(
    "L,S,E,Ev,causal,mask_kind",
    [(130, 128, 32, 32, True, None), (150, 77, 20, 40, True, None), (45, 200, 33, 7, True, "float"),
     (129, 67, 48, 17, False, "bool"), (70, 70, 64, 64, False, "keys"), (3, 150, 5, 70, True, "rows")],
)
def test_blocked_kernel_matches_composite(L, S, E, Ev, causal, mask_kind):
    """Guards against the blocked kernels (register tiles with masked edges, several query blocks,
    causal tiles skipped or trimmed, keys first reached in a later block) drifting from the
    composite: float64 against the numpy forward and the recorded (create_graph) gradients, float32
    against float64."""
    shapes = [(2, L, E), (2, S, E), (2, S, Ev)]
    q, k, v = (RNG.standard_normal(s) for s in shapes)
    g = RNG.standard_normal((2, L, Ev))
    mask = {None: None, "float": RNG.standard_normal((L, S)), "bool": RNG.random((2, L, S)) > 0.2,
            "keys": RNG.random((2, 1, S)) > 0.3, "rows": RNG.standard_normal((L, 1))}[mask_kind]
    ref = None
    for dt, atol in ((np.float64, 1e-11), (np.float32, 2e-4)):
        leaves = [pylucid.from_numpy(a.astype(dt)).requires_grad_() for a in (q, k, v)]
        m = None if mask is None else pylucid.from_numpy(mask if mask.dtype == bool else mask.astype(dt))
        out = F.scaled_dot_product_attention(*leaves, attn_mask=m, is_causal=causal)
        go = pylucid.from_numpy(g.astype(dt))
        fused = _grads(out, leaves, go, create_graph=False) if dt == np.float32 else None
        if dt == np.float64:
            np.testing.assert_allclose(np.asarray(out.detach()), sdpa_ref(q, k, v, mask=mask, causal=causal),
                                       atol=atol)
            ref = [np.asarray(out.detach())] + _grads(out, leaves, go, create_graph=True)
            fused = _grads(F.scaled_dot_product_attention(*leaves, attn_mask=m, is_causal=causal), leaves, go,
                           create_graph=False)
            for a, b in zip(fused, ref[1:]):
                np.testing.assert_allclose(a, b, atol=atol)
        else:
            np.testing.assert_allclose(np.asarray(out.detach()), ref[0], atol=atol)
            for a, b in zip(fused, ref[1:]):
                np.testing.assert_allclose(a, b, atol=atol * 5)


def test_saved_logsumexp_is_the_row_logsumexp():
    """Guards against a wrong lse (the vectorised log, a row with no attended key) that the
    backward's recomputed probabilities would silently inherit."""
    q, k, v = (RNG.standard_normal(s) for s in [(3, 37, 16), (3, 41, 16), (3, 41, 8)])
    mask = np.ones((37, 41), bool)
    mask[5] = False
    s = np.matmul(q, np.swapaxes(k, -1, -2)) / 4 + np.where(mask, 0, -np.inf)
    with np.errstate(invalid="ignore"):
        mx = s.max(-1, keepdims=True)
        want = (mx + np.log(np.exp(s - mx).sum(-1, keepdims=True)))[..., 0]
    want[:, 5] = -np.inf
    for dt, rtol in ((np.float64, 1e-13), (np.float32, 2e-6)):
        leaves = [pylucid.from_numpy(a.astype(dt)).requires_grad_() for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*leaves, attn_mask=pylucid.from_numpy(mask))
        lse = np.asarray(out.grad_fn.saved_logsumexp)
        assert np.all(lse[:, 5] == -np.inf)
        np.testing.assert_allclose(lse, want, rtol=rtol)
