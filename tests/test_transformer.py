"""MultiheadAttention, TransformerEncoder/DecoderLayer, TransformerEncoder/Decoder and Transformer:
a numpy reference for multi-head attention, float64 gradcheck, PyTorch with copied weights where
installed (outputs, weights, input and parameter gradients, masks, batch_first, kdim/vdim,
norm_first, activations), state_dict keys, and typed errors naming the layer."""
import numpy as np
import pylucid
import pytest
from pylucid import nn

RNG = np.random.default_rng(31)


def ref_mha(q, k, v, w_in, b_in, w_out, b_out, H, mask=None):
    """(L, N, E) multi-head attention in numpy; returns output and head-averaged weights."""
    L, N, E = q.shape
    d = E // H
    wq, wk, wv = np.split(w_in, 3)
    bq, bk, bv = np.split(b_in, 3)

    def heads(x, w, b):
        y = x @ w.T + b  # (T, N, E)
        return y.reshape(y.shape[0], N, H, d).transpose(1, 2, 0, 3)  # (N, H, T, d)

    Q, K, V = heads(q, wq, bq), heads(k, wk, bk), heads(v, wv, bv)
    s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d)
    if mask is not None:
        s = s + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ V).transpose(2, 0, 1, 3).reshape(L, N, E)
    return o @ w_out.T + b_out, p.mean(1)


def _mha_params(m):
    return [np.asarray(t.detach()) for t in (m.in_proj_weight, m.in_proj_bias, m.out_proj.weight, m.out_proj.bias)]


def test_mha_matches_numpy_with_masks():
    """Guards against heads split along the wrong axis, a missing 1/sqrt(d), and bool masks
    read the wrong way round (True must mean 'not attended', as PyTorch)."""
    m = nn.MultiheadAttention(8, 2, dtype=pylucid.float64)
    pylucid.nn.init.normal_(m.in_proj_bias)
    q, k = RNG.standard_normal((4, 3, 8)), RNG.standard_normal((6, 3, 8))
    kpm = RNG.random((3, 6)) < 0.3
    kpm[:, 0] = False
    am = RNG.standard_normal((4, 6))
    out, w = m(pylucid.tensor(q), pylucid.tensor(k), pylucid.tensor(k), key_padding_mask=pylucid.tensor(kpm),
               attn_mask=pylucid.tensor(am))
    mask = am[None, None] + np.where(kpm, -np.inf, 0.0)[:, None, None, :]
    ro, rw = ref_mha(q, k, k, *_mha_params(m), H=2, mask=mask)
    np.testing.assert_allclose(np.asarray(out.detach()), ro, atol=1e-12)
    np.testing.assert_allclose(np.asarray(w.detach()), rw, atol=1e-12)
    # the fused path (need_weights=False) gives the same output
    out2, w2 = m(pylucid.tensor(q), pylucid.tensor(k), pylucid.tensor(k), key_padding_mask=pylucid.tensor(kpm),
                 attn_mask=pylucid.tensor(am), need_weights=False)
    assert w2 is None
    np.testing.assert_allclose(np.asarray(out2.detach()), ro, atol=1e-12)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_gradcheck(need_weights):
    """Guards against a wrong gradient through the packed projection slices and either path."""
    m = nn.MultiheadAttention(4, 2, dtype=pylucid.float64, batch_first=True)
    q = pylucid.tensor(RNG.standard_normal((2, 3, 4))).requires_grad_()
    kv = pylucid.tensor(RNG.standard_normal((2, 5, 4))).requires_grad_()
    params = [m.in_proj_weight, m.out_proj.weight]
    assert pylucid.autograd.gradcheck(lambda a, b, *_: m(a, b, b, need_weights=need_weights)[0], [q, kv, *params])


def test_mha_unbatched_and_state_dict_layout():
    """Guards against unbatched (L, E) inputs and a parameter layout that differs from PyTorch's."""
    m = nn.MultiheadAttention(6, 3)
    assert list(m.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert m.in_proj_weight.shape == (18, 6)
    out, w = m(pylucid.randn(4, 6), pylucid.randn(5, 6), pylucid.randn(5, 6), average_attn_weights=False)
    assert out.shape == (4, 6) and w.shape == (3, 4, 5)
    kv = nn.MultiheadAttention(6, 3, kdim=2, vdim=5, bias=False)
    assert list(kv.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"]
    assert kv(pylucid.randn(4, 2, 6), pylucid.randn(3, 2, 2), pylucid.randn(3, 2, 5))[0].shape == (4, 2, 6)


def test_mha_bias_kv_and_zero_attn_state_dict_and_gradcheck():
    """Guards against bias_k/bias_v missing from (or misplaced in) the state dict, a wrong
    initialisation, and a wrong gradient into them through either attention path."""
    m = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, dtype=pylucid.float64)
    assert list(m.state_dict()) == ["in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight",
                                    "out_proj.bias"]
    assert m.bias_k.shape == m.bias_v.shape == (1, 1, 4) and m.add_zero_attn is True
    assert float(m.bias_k.abs().sum()) > 0
    q = pylucid.tensor(RNG.standard_normal((3, 2, 4))).requires_grad_()
    kv = pylucid.tensor(RNG.standard_normal((5, 2, 4))).requires_grad_()
    kpm = pylucid.tensor(np.array([[False] * 4 + [True], [True] + [False] * 4]))
    for nw in (True, False):
        out, w = m(q, kv, kv, key_padding_mask=kpm, need_weights=nw)
        assert out.shape == (3, 2, 4) and (w is None or w.shape == (2, 3, 7))
        assert pylucid.autograd.gradcheck(
            lambda a, b, bk, bv: m(a, b, b, key_padding_mask=kpm, need_weights=nw)[0], [q, kv, m.bias_k, m.bias_v])


def test_errors_name_the_layer():
    """Guards against crashes or untyped errors on bad input."""
    with pytest.raises(pylucid.ShapeMismatch, match="MultiheadAttention: embed_dim .5. must be divisible"):
        nn.MultiheadAttention(5, 2)
    m = nn.MultiheadAttention(4, 2)
    with pytest.raises(pylucid.ShapeMismatch, match="MultiheadAttention: was expecting embedding dimension of 4"):
        m(pylucid.randn(3, 2, 5), pylucid.randn(3, 2, 5), pylucid.randn(3, 2, 5))
    x = pylucid.randn(3, 2, 4)
    with pytest.raises(pylucid.ShapeMismatch, match="2D attn_mask"):
        m(x, x, x, attn_mask=pylucid.zeros(2, 3))
    with pytest.raises(pylucid.ShapeMismatch, match="key_padding_mask"):
        m(x, x, x, key_padding_mask=pylucid.zeros(3, 3, dtype=pylucid.bool))
    with pytest.raises(pylucid.DtypeMismatch, match="bool and floating"):
        m(x, x, x, attn_mask=pylucid.zeros(3, 3, dtype=pylucid.int64))
    with pytest.raises(pylucid.LucidError, match="is_causal"):
        m(x, x, x, is_causal=True)
    with pytest.raises(pylucid.LucidError, match="TransformerEncoderLayer: activation"):
        nn.TransformerEncoderLayer(4, 2, activation="swish")
    t = nn.Transformer(4, 2, 1, 1, 8)
    with pytest.raises(pylucid.ShapeMismatch, match="batch number of src and tgt"):
        t(pylucid.randn(3, 2, 4), pylucid.randn(3, 1, 4))


def test_generate_square_subsequent_mask():
    """Guards against the causal mask off by one diagonal."""
    m = nn.Transformer.generate_square_subsequent_mask(4)
    a = np.asarray(m)
    assert np.all(np.isneginf(a[np.triu_indices(4, 1)])) and np.all(a[np.tril_indices(4)] == 0)


def _copy(tm, lm):
    lm.load_state_dict({k: pylucid.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def _compare(torch, tm, lm, t_inputs, l_inputs, kwargs_t, kwargs_l, tol):
    assert list(lm.state_dict()) == list(tm.state_dict())
    to, lo = tm(*t_inputs, **kwargs_t), lm(*l_inputs, **kwargs_l)
    if isinstance(to, tuple):
        (to, tw), (lo, lw) = to, lo
        if tw is not None:
            np.testing.assert_allclose(np.asarray(lw.detach()), tw.detach().numpy(), atol=tol, rtol=tol)
    g = RNG.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g, dtype=to.dtype))
    lo.backward(pylucid.tensor(g, dtype=lo.dtype))
    np.testing.assert_allclose(np.asarray(lo.detach()), to.detach().numpy(), atol=tol, rtol=tol)
    np.testing.assert_allclose(np.asarray(l_inputs[0].grad), t_inputs[0].grad.numpy(), atol=tol, rtol=tol)
    for (n, p), (n2, q) in zip(tm.named_parameters(), lm.named_parameters()):
        assert n == n2
        np.testing.assert_allclose(np.asarray(q.grad), p.grad.numpy(), atol=tol * 10, rtol=tol * 10, err_msg=n)


@pytest.mark.parametrize("kw,masks", [
    (dict(), {}),
    (dict(batch_first=True), dict(kpm="bool")),
    (dict(kdim=3, vdim=7), dict(am="float")),
    (dict(bias=False), dict(am="bool3", kpm="bool")),
    (dict(add_bias_kv=True), dict(am="float")),
    (dict(add_zero_attn=True, batch_first=True), dict(am="bool3")),
    (dict(add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5), dict(kpm="bool")),
    (dict(add_bias_kv=True, add_zero_attn=True, bias=False), {}),
])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_matches_torch(kw, masks, need_weights, average):
    """Guards against any difference from PyTorch's MultiheadAttention with copied weights."""
    torch = pytest.importorskip("torch")
    for dtype, tdtype, tol in [(pylucid.float32, torch.float32, 1e-5), (pylucid.float64, torch.float64, 1e-12)]:
        tm = torch.nn.MultiheadAttention(8, 2, **kw).to(tdtype)
        lm = nn.MultiheadAttention(8, 2, **kw)
        _copy(tm, lm)
        lm = lm.to(dtype)
        N, L, S = 3, 4, 6
        bf = kw.get("batch_first", False)

        def shape(T, f):
            return (N, T, f) if bf else (T, N, f)

        arrs = [RNG.standard_normal(shape(L, 8)), RNG.standard_normal(shape(S, kw.get("kdim", 8))),
                RNG.standard_normal(shape(S, kw.get("vdim", 8)))]
        tk, lk = {}, {}
        if masks.get("kpm") == "bool":
            m = RNG.random((N, S)) < 0.3
            m[:, 0] = False
            tk["key_padding_mask"], lk["key_padding_mask"] = torch.tensor(m), pylucid.tensor(m)
        if masks.get("am") == "float":
            m = RNG.standard_normal((L, S))
            tk["attn_mask"], lk["attn_mask"] = torch.tensor(m, dtype=tdtype), pylucid.tensor(m, dtype=dtype)
        if masks.get("am") == "bool3":
            m = RNG.random((N * 2, L, S)) < 0.3
            m[..., 0] = False
            tk["attn_mask"], lk["attn_mask"] = torch.tensor(m), pylucid.tensor(m)
        for d in (tk, lk):
            d.update(need_weights=need_weights, average_attn_weights=average)
        ti = [torch.tensor(a, dtype=tdtype, requires_grad=True) for a in arrs]
        li = [pylucid.tensor(a, dtype=dtype).requires_grad_() for a in arrs]
        _compare(torch, tm, lm, ti, li, tk, lk, tol)


@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True, norm_first=True, activation="gelu"), dict(bias=False)])
def test_transformer_matches_torch(kw):
    """Guards against a wrong residual/norm order, decoder cross-attention wiring, mask plumbing
    (causal tgt mask, src and memory key padding) or state_dict key differing from PyTorch's."""
    torch = pytest.importorskip("torch")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.Transformer(16, 2, 2, 2, 32, dropout=0.0, **kw).double()
    lm = nn.Transformer(16, 2, 2, 2, 32, dropout=0.0, **kw)
    _copy(tm, lm)
    lm = lm.double()
    bf = kw.get("batch_first", False)
    src = RNG.standard_normal((3, 7, 16) if bf else (7, 3, 16))
    tgt = RNG.standard_normal((3, 5, 16) if bf else (5, 3, 16))
    kpm = RNG.random((3, 7)) < 0.3
    kpm[:, 0] = False
    tk = dict(tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64),
              src_key_padding_mask=torch.tensor(kpm), memory_key_padding_mask=torch.tensor(kpm))
    lk = dict(tgt_mask=nn.Transformer.generate_square_subsequent_mask(5, dtype=pylucid.float64),
              src_key_padding_mask=pylucid.tensor(kpm), memory_key_padding_mask=pylucid.tensor(kpm))
    ti = [torch.tensor(src, requires_grad=True), torch.tensor(tgt)]
    li = [pylucid.tensor(src).requires_grad_(), pylucid.tensor(tgt)]
    _compare(torch, tm, lm, ti, li, tk, lk, 1e-10)


def test_encoder_and_decoder_layers_match_torch():
    """Guards against the standalone layers and stacks (with a final norm) drifting from PyTorch."""
    torch = pytest.importorskip("torch")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tenc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                           norm=torch.nn.LayerNorm(8)).double()
    lenc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2, norm=nn.LayerNorm(8))
    _copy(tenc, lenc)
    lenc = lenc.double()
    x = RNG.standard_normal((5, 2, 8))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    _compare(torch, tenc, lenc, [torch.tensor(x, requires_grad=True)], [pylucid.tensor(x).requires_grad_()],
             dict(mask=mask, is_causal=True), dict(mask=pylucid.tensor(mask.numpy()), is_causal=True), 1e-10)
    tdec = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=True).double()
    ldec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=True)
    _copy(tdec, ldec)
    ldec = ldec.double()
    mem = RNG.standard_normal((6, 2, 8))
    _compare(torch, tdec, ldec, [torch.tensor(x, requires_grad=True), torch.tensor(mem)],
             [pylucid.tensor(x).requires_grad_(), pylucid.tensor(mem)], {}, {}, 1e-10)


def test_dropout_is_active_only_in_training():
    """Guards against attention/feed-forward dropout left on in eval mode."""
    pylucid.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = pylucid.randn(4, 2, 8)
    layer.eval()
    a, b = layer(x), layer(x)
    np.testing.assert_array_equal(np.asarray(a.detach()), np.asarray(b.detach()))
    layer.train()
    assert not np.allclose(np.asarray(layer(x).detach()), np.asarray(a.detach()))


def test_mha_returns_the_weights_after_dropout():
    """Guards against MultiheadAttention(dropout=p) in training returning the weights before
    dropout: PyTorch returns the dropped, rescaled weights that multiplied the values (averaged
    over heads unless average_attn_weights=False)."""
    mha = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    x = pylucid.randn(2, 3, 8)
    pylucid.manual_seed(4)
    out, w = mha(x, x, x, average_attn_weights=False)
    vals = set(round(v, 5) for v in w.flatten().tolist())
    assert 0.0 in vals and w.shape == (2, 2, 3, 3)
    mha.eval()
    _, w_eval = mha(x, x, x, average_attn_weights=False)
    kept = w != 0
    assert pylucid.allclose(w[kept], 2 * w_eval[kept])
    # and they are the weights that multiplied the values
    vp = (x @ mha.in_proj_weight[16:].t() + mha.in_proj_bias[16:]).reshape(2, 3, 2, 4).transpose(1, 2)
    heads = (w @ vp).transpose(1, 2).reshape(2, 3, 8)
    assert pylucid.allclose(out, mha.out_proj(heads), atol=1e-6)
