"""Variable-length sequences for the recurrent layers, as PyTorch's ``torch.nn.utils.rnn``:
``pad_sequence`` (a list of ``(L_i, *)`` tensors to one padded tensor), ``pack_padded_sequence``
/ ``pack_sequence`` (to a :class:`PackedSequence`, the time-major concatenation of the steps each
sequence still has), ``pad_packed_sequence`` (back to padded, with the lengths) and
``unpad_sequence`` / ``unpack_sequence``. ``RNN``, ``LSTM`` and ``GRU`` accept a
``PackedSequence`` and return one; their final states are those at each sequence's own last step.
All of it is differentiable (built from ``cat``, ``index_select`` and slicing).

>>> import pylucid
>>> from pylucid.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> p = pack_sequence([pylucid.tensor([1, 2, 3]), pylucid.tensor([4, 5])])
>>> p.data.tolist(), p.batch_sizes.tolist()
([1, 4, 2, 5, 3], [2, 2, 1])
>>> padded, lengths = pad_packed_sequence(p, batch_first=True)
>>> padded.tolist(), lengths.tolist()
([[1, 2, 3], [4, 5, 0]], [3, 2])
"""
from typing import NamedTuple, Optional

import numpy as _np

from ... import _C
from ..._C import Tensor
from ..._shape import cat, stack

__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence", "pad_sequence",
           "unpack_sequence", "unpad_sequence"]


def _long(values):
    return _C._from_numpy(_np.asarray(values, dtype=_np.int64, order="C"))


def _invert(perm):
    inv = _np.empty_like(perm)
    inv[perm] = _np.arange(len(perm), dtype=perm.dtype)
    return inv


class PackedSequence(NamedTuple):
    """The steps of a batch of sequences, time-major: ``data`` holds step 0 of every sequence,
    then step 1 of those at least 2 long, ...; ``batch_sizes[t]`` is how many sequences have step
    ``t``. Sequences are ordered longest first; ``sorted_indices`` maps that order to the original
    batch order (``None`` when the batch was already sorted) and ``unsorted_indices`` back."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor] = None
    unsorted_indices: Optional[Tensor] = None

    def to(self, *args, **kwargs):
        """The same sequence with ``data`` converted by ``Tensor.to`` (the index tensors stay)."""
        return self._replace(data=self.data.to(*args, **kwargs))

    def cpu(self):
        """Itself: pylucid's tensors live on the CPU."""
        return self

    def double(self):
        """The sequence with float64 data."""
        return self.to(_C.dtype.float64)

    def float(self):
        """The sequence with float32 data."""
        return self.to(_C.dtype.float32)

    @property
    def is_cuda(self):
        """Always False (pylucid's tensors live on the CPU)."""
        return False

    def is_pinned(self):
        """False: there is no pinned memory on pylucid's CPU-only device."""
        return False


def _lengths_np(lengths, op):
    if isinstance(lengths, Tensor):
        if lengths.dtype not in (_C.dtype.int64,) or lengths.dim() != 1:
            raise _C.DtypeMismatch(f"{op}: lengths must be a 1-d int64 tensor or a list of ints, got "
                                   f"{lengths.dtype!r} of {lengths.dim()} dims")
        return lengths.numpy().astype(_np.int64)
    return _np.asarray([int(n) for n in lengths], dtype=_np.int64)


def _pack_sorted(x, lengths, sorted_indices):
    """x time-major (T, B, *) in sorted order, lengths descending: the PackedSequence."""
    T = int(lengths[0])
    batch_sizes = _np.array([int((lengths > t).sum()) for t in range(T)], dtype=_np.int64)
    data = cat([x[t, :int(b)] for t, b in enumerate(batch_sizes)], 0)
    unsorted = None if sorted_indices is None else _long(_invert(sorted_indices))
    return PackedSequence(data, _long(batch_sizes), None if sorted_indices is None else _long(sorted_indices),
                          unsorted)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences with the
    given ``lengths`` (a list or 1-d int64 tensor). With ``enforce_sorted`` the lengths must be in
    decreasing order; otherwise the batch is sorted here and the order kept in the result."""
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"pack_padded_sequence: expected a Tensor input, got {type(input).__name__}")
    lens = _lengths_np(lengths, "pack_padded_sequence")
    x = input.transpose(0, 1) if batch_first else input
    if input.dim() < 2 or len(lens) != x.shape[1]:
        raise _C.ShapeMismatch(f"pack_padded_sequence: expected {len(lens)} sequences (one length each) along the "
                               f"batch dim of input of shape {tuple(input.shape)}")
    if len(lens) and lens.min() <= 0:
        raise _C.ShapeMismatch("pack_padded_sequence: length of all samples has to be greater than 0, but found "
                               "an element in 'lengths' that is <= 0")
    if len(lens) and lens.max() > x.shape[0]:
        raise _C.ShapeMismatch(f"pack_padded_sequence: a length ({int(lens.max())}) exceeds the padded length "
                               f"{x.shape[0]}")
    sorted_indices = None
    if enforce_sorted:
        if (_np.diff(lens) > 0).any():
            raise _C.ShapeMismatch("pack_padded_sequence: `lengths` array must be sorted in decreasing order when "
                                   "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                                   "pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
                                   "you do not need ONNX exportability.")
    else:
        # PyTorch orders the batch with torch.sort(lengths, descending=True): equal lengths in
        # its sort's order (stable up to 16 sequences, introsort's order past that).
        sorted_indices = _C.sort(_long(lens), 0, True).indices.numpy()
        lens = lens[sorted_indices]
        x = x.index_select(1, _long(sorted_indices))
    return _pack_sorted(x, lens, sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undoes :func:`pack_padded_sequence`: ``(padded, lengths)``, padded ``(T, B, *)`` (or
    ``(B, T, *)``) in the original batch order, ``T`` the longest length or ``total_length``."""
    if not isinstance(sequence, PackedSequence):
        raise _C.DtypeMismatch(f"pad_packed_sequence: expected a PackedSequence, got {type(sequence).__name__}")
    data, sizes = sequence.data, sequence.batch_sizes.numpy()
    B, T = int(sizes[0]) if len(sizes) else 0, len(sizes)
    if total_length is not None:
        if total_length < T:
            raise _C.ShapeMismatch(f"pad_packed_sequence: expected total_length to be at least the length of the "
                                   f"longest sequence ({T}), got total_length={total_length}")
    rest = tuple(data.shape[1:])
    steps, offset = [], 0
    for b in sizes:
        b = int(b)
        chunk = data[offset:offset + b]
        offset += b
        if b < B:
            chunk = cat([chunk, _C._full((B - b,) + rest, float(padding_value), data.dtype)], 0)
        steps.append(chunk)
    if total_length is not None and total_length > T:
        steps += [_C._full((B,) + rest, float(padding_value), data.dtype)] * (total_length - T)
    padded = stack(steps, 0)
    lengths = _np.array([int((sizes > i).sum()) for i in range(B)], dtype=_np.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.numpy()]
    return (padded.transpose(0, 1) if batch_first else padded), _long(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors of shape ``(L_i, *)`` into ``(L_max, B, *)`` (``(B, L_max, *)`` with
    ``batch_first``), padding each with ``padding_value`` on ``padding_side``."""
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences or not all(isinstance(s, Tensor) for s in sequences):
        raise _C.DtypeMismatch("pad_sequence: expected a non-empty sequence of Tensors")
    if padding_side not in ("left", "right"):
        raise _C.ShapeMismatch(f"pad_sequence: padding_side must be 'left' or 'right', got {padding_side!r}")
    rest = tuple(sequences[0].shape[1:])
    if any(s.dim() == 0 or tuple(s.shape[1:]) != rest for s in sequences):
        raise _C.ShapeMismatch(f"pad_sequence: every sequence must have shape (L, {', '.join(map(str, rest))}), "
                               f"got {[tuple(s.shape) for s in sequences]}")
    L = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        n = L - s.shape[0]
        if n:
            pad = _C._full((n,) + rest, float(padding_value), s.dtype)
            s = cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return stack(rows, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of tensors ``(L_i, *)`` (decreasing lengths unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences ``(L_i, *)`` of a padded batch."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(_lengths_np(lengths, "unpad_sequence"))]


def unpack_sequence(packed_sequences):
    """The list of sequences ``(L_i, *)`` in a :class:`PackedSequence`, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def _run_packed(rnn, packed, hx):
    """``rnn`` (an RNN, LSTM or GRU) over a PackedSequence: the sequences of each length run as one
    batch through the ordinary forward (so every state is the one at its sequence's own last step),
    and the outputs are packed again in the input's order. ``hx`` is in the original batch order,
    as are the returned states."""
    padded, lengths = pad_packed_sequence(packed)
    lens = lengths.numpy()
    lstm = rnn.mode == "LSTM"
    outs, states, order = [], [], []
    T = padded.shape[0]
    for n in sorted(set(lens.tolist()), reverse=True):
        idx = _np.nonzero(lens == n)[0].astype(_np.int64)
        sel = _long(idx)
        h = None
        if hx is not None:
            h = (hx[0].index_select(1, sel), hx[1].index_select(1, sel)) if lstm else hx.index_select(1, sel)
        out, state = rnn._forward_padded(padded[:n].index_select(1, sel), h, False)
        if n < T:
            out = cat([out, _C._full((T - n,) + tuple(out.shape[1:]), 0.0, out.dtype)], 0)
        outs.append(out)
        states.append(state)
        order.append(idx)
    back = _long(_invert(_np.concatenate(order)))  # group order -> original batch order
    out = cat(outs, 1).index_select(1, back)
    if lstm:
        state = tuple(cat([s[i] for s in states], 1).index_select(1, back) for i in range(2))
    else:
        state = cat(states, 1).index_select(1, back)
    sorted_indices = packed.sorted_indices
    x = out if sorted_indices is None else out.index_select(1, sorted_indices)
    data = cat([x[t, :int(b)] for t, b in enumerate(packed.batch_sizes.numpy())], 0)
    return packed._replace(data=data), state
