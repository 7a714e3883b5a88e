"""pylucid.nn.utils.rnn (pad_sequence, pack_padded_sequence, pack_sequence, pad_packed_sequence,
unpad/unpack) and RNN/LSTM/GRU on a PackedSequence: layouts and values equal PyTorch's, every
final state is the one at its sequence's own last step, gradients pass float64 gradcheck, bad
input raises typed errors."""
import numpy as np
import pylucid
import pytest
from pylucid.autograd import gradcheck
from pylucid.nn.utils import rnn as R

RNG = np.random.default_rng(8)
LENGTHS = [3, 5, 1, 5, 2]


def _seqs(lib, dtype=np.float32, feat=3):
    return [lib.tensor(RNG.standard_normal((n, feat)).astype(dtype)) for n in LENGTHS]


def _np(t):
    return np.asarray(t.detach().numpy())


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_and_pack_layouts_equal_torch(batch_first):
    """Guards against a wrong padded layout, step order in the packed data or index bookkeeping."""
    torch = pytest.importorskip("torch")
    ours = _seqs(pylucid)
    theirs = [torch.tensor(_np(s)) for s in ours]
    for side in ("right", "left"):
        a = R.pad_sequence(ours, batch_first=batch_first, padding_value=-2.0, padding_side=side)
        b = torch.nn.utils.rnn.pad_sequence(theirs, batch_first=batch_first, padding_value=-2.0, padding_side=side)
        np.testing.assert_array_equal(_np(a), b.numpy())
    padded = R.pad_sequence(ours, batch_first=batch_first)
    pt = torch.nn.utils.rnn.pad_sequence(theirs, batch_first=batch_first)
    p = R.pack_padded_sequence(padded, LENGTHS, batch_first=batch_first, enforce_sorted=False)
    q = torch.nn.utils.rnn.pack_padded_sequence(pt, LENGTHS, batch_first=batch_first, enforce_sorted=False)
    np.testing.assert_array_equal(_np(p.data), q.data.numpy())
    for x, y in ((p.batch_sizes, q.batch_sizes), (p.sorted_indices, q.sorted_indices),
                 (p.unsorted_indices, q.unsorted_indices)):
        assert x.tolist() == y.tolist()
    back, lens = R.pad_packed_sequence(p, batch_first=batch_first, padding_value=9.0, total_length=7)
    tback, tlens = torch.nn.utils.rnn.pad_packed_sequence(q, batch_first=batch_first, padding_value=9.0,
                                                          total_length=7)
    np.testing.assert_array_equal(_np(back), tback.numpy())
    assert lens.tolist() == tlens.tolist() == LENGTHS


def test_round_trips_without_torch():
    """pack_sequence of sorted sequences needs no indices; unpack/unpad give the sequences back."""
    seqs = sorted(_seqs(pylucid), key=lambda s: -s.shape[0])
    p = R.pack_sequence(seqs)
    assert p.sorted_indices is None and p.batch_sizes.tolist() == [5, 4, 3, 2, 2]
    assert p.data.shape == (sum(LENGTHS), 3)
    for a, b in zip(R.unpack_sequence(p), seqs):
        np.testing.assert_array_equal(_np(a), _np(b))
    padded = R.pad_sequence(seqs, batch_first=True)
    for a, b in zip(R.unpad_sequence(padded, [s.shape[0] for s in seqs], batch_first=True), seqs):
        np.testing.assert_array_equal(_np(a), _np(b))
    assert isinstance(p, tuple) and p.to(pylucid.float64).data.dtype == pylucid.float64


@pytest.mark.parametrize("cls,kw", [("LSTM", {}), ("GRU", {"num_layers": 2, "bidirectional": True}),
                                    ("RNN", {"nonlinearity": "relu"}), ("LSTM", {"proj_size": 2, "num_layers": 2})])
def test_rnn_on_packed_equals_torch(cls, kw):
    """Guards against states taken at the padded end instead of each sequence's last step, and
    against a reverse direction that starts in the padding."""
    torch = pytest.importorskip("torch")
    tm = getattr(torch.nn, cls)(3, 4, **kw)
    pm = getattr(pylucid.nn, cls)(3, 4, **kw)
    pm.load_state_dict({k: pylucid.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    ours = _seqs(pylucid)
    theirs = [torch.tensor(_np(s)) for s in ours]
    dirs = 2 if kw.get("bidirectional") else 1
    h_size = kw.get("proj_size") or 4
    h0 = RNG.standard_normal((kw.get("num_layers", 1) * dirs, len(LENGTHS), h_size)).astype(np.float32)
    c0 = RNG.standard_normal((kw.get("num_layers", 1) * dirs, len(LENGTHS), 4)).astype(np.float32)
    hx_p = (pylucid.tensor(h0), pylucid.tensor(c0)) if cls == "LSTM" else pylucid.tensor(h0)
    hx_t = (torch.tensor(h0), torch.tensor(c0)) if cls == "LSTM" else torch.tensor(h0)
    out_p, st_p = pm(R.pack_sequence(ours, enforce_sorted=False), hx_p)
    out_t, st_t = tm(torch.nn.utils.rnn.pack_sequence(theirs, enforce_sorted=False), hx_t)
    assert isinstance(out_p, R.PackedSequence)
    np.testing.assert_allclose(_np(out_p.data), out_t.data.detach().numpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(st_p if cls == "LSTM" else [st_p], st_t if cls == "LSTM" else [st_t]):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    # Gradients through the packed path reach every input step and the weights as in torch.
    xs_p = [s.clone().requires_grad_(True) for s in ours]
    xs_t = [s.clone().requires_grad_(True) for s in theirs]
    o, _ = pm(R.pack_sequence(xs_p, enforce_sorted=False))
    (o.data ** 2).sum().backward()
    o, _ = tm(torch.nn.utils.rnn.pack_sequence(xs_t, enforce_sorted=False))
    (o.data ** 2).sum().backward()
    for a, b in zip(xs_p, xs_t):
        np.testing.assert_allclose(_np(a.grad), b.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_packed_state_is_the_per_sequence_state():
    """Without torch: the packed LSTM's outputs and final states equal running each sequence alone."""
    lstm = pylucid.nn.LSTM(3, 4, bidirectional=True)
    seqs = _seqs(pylucid)
    out, (h, c) = lstm(R.pack_sequence(seqs, enforce_sorted=False))
    padded, _ = R.pad_packed_sequence(out, batch_first=True)
    for i, s in enumerate(seqs):
        o, (hi, ci) = lstm(s.unsqueeze(1))
        np.testing.assert_allclose(_np(padded[i, :s.shape[0]]), _np(o[:, 0]), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(h[:, i]), _np(hi[:, 0]), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(c[:, i]), _np(ci[:, 0]), rtol=1e-5, atol=1e-6)
        assert not _np(padded[i, s.shape[0]:]).any()


def test_gradcheck_through_pack_and_gru():
    """float64 finite differences through pad_sequence, packing, a GRU and unpacking."""
    gru = pylucid.nn.GRU(2, 3, bidirectional=True).double()
    seqs = [s.requires_grad_(True) for s in _seqs(pylucid, np.float64, 2)[:3]]

    def fn(*xs):
        out, h = gru(R.pack_sequence(list(xs), enforce_sorted=False))
        padded, _ = R.pad_packed_sequence(out, batch_first=True, padding_value=0.5)
        return padded.sum(2), h

    assert gradcheck(fn, seqs)


def test_errors():
    """Unsorted lengths with enforce_sorted, zero lengths, wrong counts and types are refused."""
    padded = R.pad_sequence(_seqs(pylucid))
    with pytest.raises(ValueError, match="decreasing"):
        R.pack_padded_sequence(padded, LENGTHS)
    with pytest.raises(ValueError, match="greater than 0"):
        R.pack_padded_sequence(padded, [3, 0, 1, 5, 2], enforce_sorted=False)
    with pytest.raises(ValueError, match="pack_padded_sequence"):
        R.pack_padded_sequence(padded, [3, 2])
    with pytest.raises(ValueError, match="exceeds"):
        R.pack_padded_sequence(padded, [9, 3, 3, 2, 1])
    with pytest.raises(TypeError, match="PackedSequence"):
        R.pad_packed_sequence(padded)
    with pytest.raises(ValueError, match="pad_sequence"):
        R.pad_sequence([pylucid.zeros(2, 3), pylucid.zeros(2, 4)])
    with pytest.raises(ValueError, match="total_length"):
        R.pad_packed_sequence(R.pack_sequence(_seqs(pylucid), enforce_sorted=False), total_length=2)


def test_unsorted_batch_orders_equal_lengths_as_torch():
    """Guards against sorted_indices/unsorted_indices (and so PackedSequence.data's row order)
    differing from PyTorch's past 16 sequences, where its torch.sort of the lengths is not stable."""
    torch = pytest.importorskip("torch")
    lens = [3, 2, 3, 1, 2, 3] * 4
    x = np.arange(3 * 24 * 2, dtype=np.float32).reshape(3, 24, 2)
    ours = pylucid.nn.utils.rnn.pack_padded_sequence(pylucid.tensor(x), pylucid.tensor(lens), enforce_sorted=False)
    theirs = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), torch.tensor(lens), enforce_sorted=False)
    assert ours.sorted_indices.tolist() == theirs.sorted_indices.tolist()
    assert ours.unsorted_indices.tolist() == theirs.unsorted_indices.tolist()
    np.testing.assert_array_equal(ours.data.numpy(), theirs.data.numpy())
