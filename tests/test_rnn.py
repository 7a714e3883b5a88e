"""RNN / LSTM / GRU and their cells (one fused RnnBackward node per layer and direction): parity
with PyTorch on copied weights (outputs, states, input/state/parameter gradients, float32 and
float64), numpy references, float64 gradcheck and gradgradcheck, empty/size-1 batches and strided
inputs, PyTorch's names/shapes/init, typed errors."""
import numpy as np
import pylucid
import pytest
from helpers import check_double_backward
from pylucid.autograd import gradcheck

RNG = np.random.default_rng(4)
CONFIGS = [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("LSTM", {"proj_size": 2}), ("GRU", {}),
]
LAYOUTS = [{}, {"num_layers": 2, "bidirectional": True, "batch_first": True}, {"num_layers": 3, "bias": False}]


def _copy(tm, pm):
    pm.load_state_dict({k: pylucid.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


def _np_lstm(x, h, c, w_ih, w_hh, b_ih, b_hh):
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    outs = []
    for xt in x:
        i, f, g, o = np.split(xt @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def test_lstm_matches_numpy_reference():
    """Guards against a wrong gate order or cell update in the fused step kernel."""
    lstm = pylucid.nn.LSTM(3, 4).double()
    x = RNG.standard_normal((5, 2, 3))
    out, (h, c) = lstm(pylucid.tensor(x))
    ref = _np_lstm(x, np.zeros((2, 4)), np.zeros((2, 4)), *[np.asarray(p.detach()) for p in lstm.parameters()])
    for a, b in zip((out, h[0], c[0]), ref):
        np.testing.assert_allclose(np.asarray(a.detach()), b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("cls,kw", CONFIGS)
def test_gradcheck(cls, kw):
    """Guards against a wrong backward through time for inputs, initial states and every weight
    (float64 finite differences, bidirectional, two layers)."""
    m = getattr(pylucid.nn, cls)(3, 3, num_layers=2, bidirectional=True, **kw).double()
    params = list(m.parameters())
    hs = 2 if kw.get("proj_size") else 3
    x = pylucid.tensor(RNG.standard_normal((4, 2, 3)), requires_grad=True)
    h0 = pylucid.tensor(RNG.standard_normal((4, 2, hs)), requires_grad=True)
    if cls == "LSTM":
        c0 = pylucid.tensor(RNG.standard_normal((4, 2, 3)), requires_grad=True)

        def fn(x, h0, c0, *ps):
            out, (h, c) = m(x, (h0, c0))
            return out.sum() + (h * h).sum() + (c * 0.5).sum()
        assert gradcheck(fn, [x, h0, c0] + params)
    else:
        def fn(x, h0, *ps):
            out, h = m(x, h0)
            return (out * out).sum() + h.sum()
        assert gradcheck(fn, [x, h0] + params)


@pytest.mark.parametrize("cls,kw", CONFIGS)
def test_double_backward(cls, kw):
    """Guards against create_graph=True raising or giving a wrong second derivative through the
    fused node (gradgradcheck over input, initial states and every weight, both directions; a
    stacked layer is the same node), and recorded gradients that differ from the fused ones."""
    m = getattr(pylucid.nn, cls)(2, 3, bidirectional=True, **kw).double()
    hs = 2 if kw.get("proj_size") else 3
    x = pylucid.tensor(RNG.standard_normal((3, 2, 2)), requires_grad=True)
    h0 = pylucid.tensor(RNG.standard_normal((2, 2, hs)), requires_grad=True)
    params = list(m.parameters())
    if cls == "LSTM":
        c0 = pylucid.tensor(RNG.standard_normal((2, 2, 3)), requires_grad=True)

        def fn(x, h0, c0, *ps):
            out, (h, c) = m(x, (h0, c0))
            return out, h, c
        leaves = [x, h0, c0] + params
    else:
        def fn(x, h0, *ps):
            return m(x, h0)
        leaves = [x, h0] + params
    check_double_backward(fn, leaves)


def test_double_backward_of_input_gradient_norm():
    """Guards against a gradient penalty through an LSTM (d/dw of |dL/dx|^2) differing from PyTorch."""
    torch = pytest.importorskip("torch")
    tm, pm = torch.nn.LSTM(3, 4, num_layers=2).double(), pylucid.nn.LSTM(3, 4, num_layers=2).double()
    _copy(tm, pm)
    x = RNG.standard_normal((5, 2, 3))
    tx, px = torch.tensor(x, requires_grad=True), pylucid.tensor(x, requires_grad=True)
    (tg,) = torch.autograd.grad(tm(tx)[0].pow(2).sum(), [tx], create_graph=True)
    (pg,) = pylucid.autograd.grad(pm(px)[0].pow(2).sum(), [px], create_graph=True)
    np.testing.assert_allclose(np.asarray(pg.detach()), tg.detach().numpy(), rtol=1e-10, atol=1e-12)
    tg.pow(2).sum().backward()
    pg.pow(2).sum().backward()
    np.testing.assert_allclose(np.asarray(px.grad), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    pp = dict(pm.named_parameters())
    for n, p in tm.named_parameters():
        np.testing.assert_allclose(np.asarray(pp[n].grad), p.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=n)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cls,kw", CONFIGS)
@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_matches_torch(dtype, cls, kw, layout):
    """Guards against any difference from PyTorch in output, final states or any gradient."""
    torch = pytest.importorskip("torch")
    extra = LAYOUTS[layout]
    tdt, pdt = getattr(torch, dtype), getattr(pylucid, dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    tm = getattr(torch.nn, cls)(4, 5, **kw, **extra).to(tdt)
    pm = getattr(pylucid.nn, cls)(4, 5, **kw, **extra).to(pdt)
    _copy(tm, pm)
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in pm.named_parameters()]
    shape = (2, 6, 4) if extra.get("batch_first") else (6, 2, 4)
    x = RNG.standard_normal(shape)
    tx, px = torch.tensor(x, dtype=tdt, requires_grad=True), pylucid.tensor(x, dtype=pdt, requires_grad=True)
    (to, th), (po, ph) = tm(tx), pm(px)
    if cls == "LSTM":
        (th, tc), (ph, pc) = th, ph
        np.testing.assert_allclose(np.asarray(pc.detach()), tc.detach().numpy(), **tol)
        tl, pl_ = (to * to).sum() + th.sum() + (tc * tc).sum(), (po * po).sum() + ph.sum() + (pc * pc).sum()
    else:
        tl, pl_ = (to * to).sum() + th.sum(), (po * po).sum() + ph.sum()
    np.testing.assert_allclose(np.asarray(po.detach()), to.detach().numpy(), **tol)
    np.testing.assert_allclose(np.asarray(ph.detach()), th.detach().numpy(), **tol)
    tl.backward()
    pl_.backward()
    np.testing.assert_allclose(np.asarray(px.grad), tx.grad.numpy(), **tol)
    pp = dict(pm.named_parameters())
    for n, p in tm.named_parameters():
        np.testing.assert_allclose(np.asarray(pp[n].grad), p.grad.numpy(), err_msg=n, **tol)


def _np_gru(x, h, w_ih, w_hh, b_ih, b_hh):
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    outs = []
    for xt in x:
        xr, xz, xn = np.split(xt @ w_ih.T + b_ih, 3, axis=1)
        hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=1)
        r, z = sig(xr + hr), sig(xz + hz)
        n = np.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        outs.append(h)
    return np.stack(outs), h


def _np_rnn(x, h, w_ih, w_hh, b_ih, b_hh, relu):
    outs = []
    for xt in x:
        a = xt @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        h = np.maximum(a, 0) if relu else np.tanh(a)
        outs.append(h)
    return np.stack(outs), h


@pytest.mark.parametrize("cls,kw", [("GRU", {}), ("RNN", {}), ("RNN", {"nonlinearity": "relu"})])
def test_gru_and_rnn_match_numpy_reference(cls, kw):
    """Guards against a wrong GRU gate order (r, z, n), b_hn applied outside r * (.), or a
    wrong nonlinearity in the fused step kernels; also a non-zero initial state."""
    m = getattr(pylucid.nn, cls)(3, 4, **kw).double()
    x, h0 = RNG.standard_normal((5, 2, 3)), RNG.standard_normal((1, 2, 4))
    out, h = m(pylucid.tensor(x), pylucid.tensor(h0))
    ps = [np.asarray(p.detach()) for p in m.parameters()]
    ref = _np_gru(x, h0[0], *ps) if cls == "GRU" else _np_rnn(x, h0[0], *ps, relu=bool(kw))
    np.testing.assert_allclose(np.asarray(out.detach()), ref[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(h.detach())[0], ref[1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_empty_and_size_one_batches_and_noncontiguous_input(cls):
    """Guards against an empty batch crashing, a batch of one or a sequence of one step taking
    a different path, and a strided input (a transposed batch_first tensor) being read as if it
    were contiguous (outputs and gradients)."""
    m = getattr(pylucid.nn, cls)(3, 4, num_layers=2, bidirectional=True).double()
    out, h = m(pylucid.zeros(5, 0, 3, dtype=pylucid.float64))
    h = h[0] if cls == "LSTM" else h
    assert out.shape == (5, 0, 8) and h.shape == (4, 0, 4)
    x = RNG.standard_normal((2, 5, 3))  # (B, T, I) memory, read time-major through a transpose
    strided = pylucid.tensor(x).transpose(0, 1).requires_grad_()
    dense = pylucid.tensor(np.ascontiguousarray(x.transpose(1, 0, 2))).requires_grad_()
    assert not strided.is_contiguous()
    a, b = m(strided)[0], m(dense)[0]
    np.testing.assert_array_equal(np.asarray(a.detach()), np.asarray(b.detach()))
    (a * a).sum().backward()
    (b * b).sum().backward()
    np.testing.assert_allclose(np.asarray(strided.grad), np.asarray(dense.grad), rtol=1e-13, atol=1e-15)
    for xs in [(1, 1, 3), (5, 1, 3), (1, 2, 3)]:
        xx = RNG.standard_normal(xs)
        full = m(pylucid.tensor(xx))[0]
        assert full.shape == (xs[0], xs[1], 8)
        if xs[1] == 2:  # each batch row alone gives its row of the batched result
            one = m(pylucid.tensor(xx[:, 1:]))[0]
            np.testing.assert_allclose(np.asarray(one.detach()), np.asarray(full.detach())[:, 1:], rtol=1e-12)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(cls):
    """Guards against the cells' gates, state handling or unbatched input differing from PyTorch."""
    torch = pytest.importorskip("torch")
    tm, pm = getattr(torch.nn, cls)(3, 4).double(), getattr(pylucid.nn, cls)(3, 4).double()
    _copy(tm, pm)
    x, h, c = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4)), RNG.standard_normal((2, 4))
    tx, px = torch.tensor(x, requires_grad=True), pylucid.tensor(x, requires_grad=True)
    if cls == "LSTMCell":
        th, tc = tm(tx, (torch.tensor(h), torch.tensor(c)))
        ph, pc = pm(px, (pylucid.tensor(h), pylucid.tensor(c)))
        np.testing.assert_allclose(np.asarray(pc.detach()), tc.detach().numpy(), rtol=1e-12)
        (th.sum() + tc.pow(2).sum()).backward()
        (ph.sum() + pc.pow(2).sum()).backward()
        assert pm(pylucid.tensor(x[0]))[0].shape == (4,)
    else:
        th, ph = tm(tx, torch.tensor(h)), pm(px, pylucid.tensor(h))
        th.pow(2).sum().backward()
        ph.pow(2).sum().backward()
        np.testing.assert_allclose(np.asarray(pm(pylucid.tensor(x[0]))), tm(torch.tensor(x[0])).detach().numpy(),
                                   rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ph.detach()), th.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(px.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (n, p), q in zip(tm.named_parameters(), pm.parameters()):
        np.testing.assert_allclose(np.asarray(q.grad), p.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=n)


def test_unbatched_and_names_and_init():
    """Guards against unbatched input/state handling, torch's parameter names and layouts, and an
    init outside uniform(-1/sqrt(hidden), 1/sqrt(hidden))."""
    m = pylucid.nn.LSTM(3, 16, num_layers=2, bidirectional=True, proj_size=4)
    names = [n for n, _ in m.named_parameters()]
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert "weight_hh_l1_reverse" in names and m.weight_ih_l1.shape == (64, 8) and m.weight_hh_l0.shape == (64, 4)
    assert all(float(p.abs().max()) <= 0.25 for p in m.parameters())
    out, (h, c) = m(pylucid.randn(5, 3))
    assert out.shape == (5, 8) and h.shape == (4, 4) and c.shape == (4, 16)
    rnn = pylucid.nn.RNN(3, 2, 1, "relu")
    assert rnn.nonlinearity == "relu" and repr(rnn) == "RNN(3, 2)"  # PyTorch does not print it
    out, h = pylucid.nn.GRU(3, 2)(pylucid.randn(4, 3), pylucid.zeros(1, 2))
    assert out.shape == (4, 2) and h.shape == (1, 2)


def test_inter_layer_dropout():
    """Guards against dropout between layers being ignored in training or applied in eval."""
    m = pylucid.nn.LSTM(3, 8, num_layers=2, dropout=0.5).double()
    x = pylucid.randn(4, 2, 3, dtype=pylucid.float64)
    pylucid.manual_seed(0)
    a = m(x)[0]
    pylucid.manual_seed(1)
    b = m(x)[0]
    assert not np.allclose(np.asarray(a.detach()), np.asarray(b.detach()))
    m.eval()
    np.testing.assert_array_equal(np.asarray(m(x)[0].detach()), np.asarray(m(x)[0].detach()))


@pytest.mark.parametrize("make,args,match", [
    (lambda: pylucid.nn.LSTM(3, 4), ((5, 2, 2),), r"LSTM: input.size\(-1\) must be equal to input_size. Expected 3"),
    (lambda: pylucid.nn.GRU(3, 4), ((5, 2, 3), (2, 2, 4)), r"GRU: expected hidden size of size \(1, 2, 4\)"),
    (lambda: pylucid.nn.RNN(3, 4), ((1, 5, 2, 3),), r"RNN: expected input to be 2D or 3D, got 4D"),
    (lambda: pylucid.nn.GRUCell(3, 4), ((2, 3), (2, 5)), r"GRUCell: hx has inconsistent size"),
    (lambda: pylucid.nn.RNNCell(3, 4), ((2, 2),), r"RNNCell: input has inconsistent input_size"),
])
def test_errors_name_the_layer(make, args, match):
    """Guards against a wrong input or state size reaching the kernel or an untyped error."""
    with pytest.raises(pylucid.ShapeMismatch, match=match):
        make()(*[pylucid.randn(*s) for s in args])
    with pytest.raises(pylucid.ShapeMismatch, match="proj_size"):
        pylucid.nn.GRU(3, 4, proj_size=2)
    with pytest.raises(pylucid.ShapeMismatch, match="dropout"):
        pylucid.nn.LSTM(3, 4, dropout=1.5)
    with pytest.raises(pylucid.ShapeMismatch, match=r"LSTM: expected cell size"):
        pylucid.nn.LSTM(3, 4)(pylucid.randn(2, 1, 3), (pylucid.zeros(1, 1, 4), pylucid.zeros(1, 2, 4)))


def test_training_parity_with_torch():
    """Guards against a 2-layer LSTM language model drifting from PyTorch over training steps
    (forward, cross_entropy, backward through time, Adam) from the same weights."""
    torch = pytest.importorskip("torch")

    def build(lib):
        class LM(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = lib.nn.Embedding(11, 8)
                self.lstm = lib.nn.LSTM(8, 16, num_layers=2, batch_first=True)
                self.head = lib.nn.Linear(16, 11)

            def forward(self, idx):
                return self.head(self.lstm(self.embed(idx))[0])
        return LM().double()

    tm, pm = build(torch), build(pylucid)
    _copy(tm, pm)
    topt, popt = torch.optim.Adam(tm.parameters(), lr=1e-2), pylucid.optim.Adam(pm.parameters(), lr=1e-2)
    losses = []
    x, y = RNG.integers(0, 11, (4, 12)), RNG.integers(0, 11, (4, 12))
    for step in range(6):
        step_losses = []
        for lib, m, opt in ((torch, tm, topt), (pylucid, pm, popt)):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(m(lib.tensor(x)).reshape(-1, 11), lib.tensor(y).reshape(-1))
            loss.backward()
            opt.step()
            step_losses.append(loss.item())
        losses.append(step_losses)
    t, p = np.array(losses).T
    np.testing.assert_allclose(p, t, rtol=1e-10)
    assert t[-1] < t[0]
