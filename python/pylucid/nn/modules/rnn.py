"""Recurrent layers with PyTorch's arguments, weight names and layouts (``weight_ih_l0``,
``weight_hh_l0_reverse``, ``weight_hr_l0``, ...), initialisation and return conventions:
``RNN``, ``LSTM`` (with ``proj_size``), ``GRU`` and the cells ``RNNCell``, ``LSTMCell``, ``GRUCell``.

Each layer and direction runs as one C++ op over the whole sequence (one input-projection GEMM,
then per step one hidden GEMM and one fused gate kernel) with one backward-through-time node
(``RnnBackward``); layers, directions and inter-layer dropout are composed here.
"""
import math

from ... import _C
from ..._shape import cat, stack
from .. import _functional_train as F_train
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _run_packed

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _check_device(device, layer):
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise _C.LucidError(f"{layer}: pylucid runs on the CPU only, got device {device!r}")


def _positive(name, v, layer, minimum=1):
    if isinstance(v, bool) or not isinstance(v, int):
        raise _C.DtypeMismatch(f"{layer}: {name} must be an int, got {type(v).__name__}")
    if v < minimum:
        raise _C.ShapeMismatch(f"{layer}: {name} must be at least {minimum}, got {v}")
    return v


def _zeros(shape, like):
    return _C._full(tuple(shape), 0.0, like.dtype)


class RNNBase(Module):
    """Shared by :class:`RNN`, :class:`LSTM` and :class:`GRU`: parameters named and shaped as
    PyTorch's, ``uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size))`` initialisation, and the
    forward over layers and directions."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        layer = type(self).__name__
        _check_device(device, layer)
        _positive("input_size", input_size, layer, 0)
        _positive("hidden_size", hidden_size, layer)
        _positive("num_layers", num_layers, layer)
        _positive("proj_size", proj_size, layer, 0)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise _C.ShapeMismatch(f"{layer}: dropout should be a number in range [0, 1] representing the "
                                   f"probability of an element being zeroed, got {dropout!r}")
        if proj_size and mode != "LSTM":
            raise _C.ShapeMismatch(f"{layer}: proj_size argument is only supported for LSTM, not RNN or GRU")
        if proj_size >= hidden_size:
            raise _C.ShapeMismatch(f"{layer}: proj_size ({proj_size}) has to be smaller than hidden_size "
                                   f"({hidden_size})")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        gate_size = _GATES[mode] * hidden_size
        dt = _C.dtype.float32 if dtype is None else dtype
        self._flat_weights_names = []
        for lay in range(num_layers):
            for d in range(dirs):
                in_size = input_size if lay == 0 else real_hidden * dirs
                sfx = f"_l{lay}" + ("_reverse" if d == 1 else "")
                shapes: list = [("weight_ih", (gate_size, in_size)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + sfx, Parameter(_C._full(shape, 0.0, dt)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw every weight and bias from ``uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    @property
    def all_weights(self):
        """The parameters per layer and direction, ``[[w_ih, w_hh, b_ih, b_hh(, w_hr)], ...]``."""
        dirs = 2 if self.bidirectional else 1
        per = len(self._flat_weights_names) // (self.num_layers * dirs)
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def _weights(self, lay, d):
        sfx = f"_l{lay}" + ("_reverse" if d == 1 else "")
        get = lambda n: getattr(self, n + sfx, None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def _check_hidden(self, h, expected, what):
        if not isinstance(h, _C.Tensor):
            raise _C.DtypeMismatch(f"{type(self).__name__}: {what} must be a Tensor, got {type(h).__name__}")
        if tuple(h.shape) != tuple(expected):
            raise _C.ShapeMismatch(f"{type(self).__name__}: expected {what} of size {tuple(expected)}, got "
                                   f"{tuple(h.shape)}")

    def forward(self, input, hx=None):
        """Run the layers over ``input`` ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``, or
        unbatched ``(L, H_in)``), or over a :class:`~pylucid.nn.utils.rnn.PackedSequence` (then the
        output is one too, and each state is taken at its sequence's last step). Returns
        ``(output, h_n)``, or ``(output, (h_n, c_n))`` for the LSTM."""
        if isinstance(input, PackedSequence):
            return _run_packed(self, input, hx)
        return self._forward_padded(input, hx, self.batch_first)

    def _forward_padded(self, input, hx, batch_first):
        layer = type(self).__name__
        lstm = self.mode == "LSTM"
        if not isinstance(input, _C.Tensor):
            raise _C.DtypeMismatch(f"{layer}: expected a Tensor input, got {type(input).__name__}")
        if input.dim() not in (2, 3):
            raise _C.ShapeMismatch(f"{layer}: expected input to be 2D or 3D, got {input.dim()}D input of shape "
                                   f"{tuple(input.shape)}")
        if input.shape[-1] != self.input_size:
            raise _C.ShapeMismatch(f"{layer}: input.size(-1) must be equal to input_size. Expected "
                                   f"{self.input_size}, got {input.shape[-1]}")
        unbatched = input.dim() == 2
        x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if batch_first else input)
        T, B = int(x.shape[0]), int(x.shape[1])
        dirs = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        h_shape = (self.num_layers * dirs, B, real_hidden)
        c_shape = (self.num_layers * dirs, B, self.hidden_size)
        if hx is None:
            h0 = _zeros(h_shape, x)
            c0 = _zeros(c_shape, x) if lstm else None
        else:
            if lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise _C.DtypeMismatch(f"{layer}: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
                h0, c0 = hx
            else:
                h0, c0 = hx, None
            if unbatched:
                for h, what in ((h0, "hx"), (c0, "cx")):
                    if h is not None and isinstance(h, _C.Tensor) and h.dim() != 2:
                        raise _C.ShapeMismatch(f"{layer}: for unbatched 2-D input, {what} should also be 2-D but "
                                               f"got {h.dim()}-D tensor")
                h0 = h0.unsqueeze(1) if isinstance(h0, _C.Tensor) else h0
                c0 = c0.unsqueeze(1) if isinstance(c0, _C.Tensor) else c0
            self._check_hidden(h0, h_shape, "hidden size")
            if lstm:
                self._check_hidden(c0, c_shape, "cell size")
        hs, cs = [], []
        for lay in range(self.num_layers):
            outs = []
            for d in range(dirs):
                idx = lay * dirs + d
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(lay, d)
                packed = _C._rnn_layer(self.mode, x, h0[idx], c0[idx] if c0 is not None else None, w_ih, w_hh, b_ih, b_hh,
                                       w_hr, d == 1, layer)
                n = T * B * real_hidden
                out = packed[:n].view(T, B, real_hidden)
                outs.append(out)
                hs.append(out[T - 1] if d == 0 else out[0])
                if lstm:
                    cs.append(packed[n:].view(B, self.hidden_size))
            x = outs[0] if dirs == 1 else cat(outs, 2)
            if self.dropout > 0 and self.training and lay < self.num_layers - 1:
                x = F_train.dropout(x, self.dropout, True)
        h_n = stack(hs, 0)
        c_n = stack(cs, 0) if lstm else None
        if unbatched:
            x = x.squeeze(1)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        elif batch_first:
            x = x.transpose(0, 1)
        return (x, (h_n, c_n)) if lstm else (x, h_n)

    def flatten_parameters(self):
        """A no-op kept for PyTorch compatibility (the weights are always used in place)."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    r"""Elman RNN (PyTorch's ``RNN``): :math:`h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})`
    (or ReLU with ``nonlinearity='relu'``), stacked ``num_layers`` deep.

    Args: ``input_size``, ``hidden_size``, ``num_layers=1``, ``nonlinearity='tanh'``, ``bias=True``,
    ``batch_first=False``, ``dropout=0.0`` (between layers, in training), ``bidirectional=False``.

    Returns ``(output, h_n)``: ``output`` ``(L, N, D * H_out)``, ``h_n`` ``(D * num_layers, N, H_out)``.

    >>> import pylucid
    >>> rnn = pylucid.nn.RNN(4, 3, num_layers=2)
    >>> out, h = rnn(pylucid.randn(5, 2, 4))
    >>> out.shape, h.shape
    (pylucid.Size([5, 2, 3]), pylucid.Size([2, 2, 3]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise _C.ShapeMismatch("RNN: proj_size argument is only supported for LSTM, not RNN or GRU")
        rest = list(args)
        nonlinearity = rest.pop(3) if len(rest) > 3 else kwargs.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise _C.ShapeMismatch(f"RNN: unknown nonlinearity '{nonlinearity}', select from 'tanh' or 'relu'")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *rest, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    r"""Long short-term memory (PyTorch's ``LSTM``), gates ``(i, f, g, o)`` in that order in the
    weights: :math:`c_t = f c_{t-1} + i g`, :math:`h_t = o \tanh(c_t)`; with ``proj_size > 0``
    :math:`h_t` is projected by ``weight_hr_l{k}`` to ``proj_size`` features.

    Args: ``input_size``, ``hidden_size``, ``num_layers=1``, ``bias=True``, ``batch_first=False``,
    ``dropout=0.0``, ``bidirectional=False``, ``proj_size=0``.

    Returns ``(output, (h_n, c_n))``.

    >>> import pylucid
    >>> lstm = pylucid.nn.LSTM(4, 6, proj_size=3, bidirectional=True)
    >>> out, (h, c) = lstm(pylucid.randn(5, 2, 4))
    >>> out.shape, h.shape, c.shape
    (pylucid.Size([5, 2, 6]), pylucid.Size([2, 2, 3]), pylucid.Size([2, 2, 6]))
    >>> [n for n, _ in lstm.named_parameters()][:5]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_hr_l0']
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    r"""Gated recurrent unit (PyTorch's ``GRU``), gates ``(r, z, n)``:
    :math:`n = \tanh(W_{in} x + b_{in} + r (W_{hn} h + b_{hn}))`, :math:`h' = (1 - z) n + z h`.

    Args as :class:`RNN` without ``nonlinearity``. Returns ``(output, h_n)``.

    >>> import pylucid
    >>> out, h = pylucid.nn.GRU(4, 3, batch_first=True)(pylucid.randn(2, 5, 4))
    >>> out.shape, h.shape
    (pylucid.Size([2, 5, 3]), pylucid.Size([1, 2, 3]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise _C.ShapeMismatch("GRU: proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """Shared by the cells: ``weight_ih`` ``(chunks * hidden, input)``, ``weight_hh``
    ``(chunks * hidden, hidden)``, ``bias_ih``/``bias_hh``, PyTorch's uniform initialisation."""

    _mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        layer = type(self).__name__
        _check_device(device, layer)
        _positive("input_size", input_size, layer, 0)
        _positive("hidden_size", hidden_size, layer)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        dt = _C.dtype.float32 if dtype is None else dtype
        self.weight_ih = Parameter(_C._full((num_chunks * hidden_size, input_size), 0.0, dt))
        self.weight_hh = Parameter(_C._full((num_chunks * hidden_size, hidden_size), 0.0, dt))
        if bias:
            self.bias_ih = Parameter(_C._full((num_chunks * hidden_size,), 0.0, dt))
            self.bias_hh = Parameter(_C._full((num_chunks * hidden_size,), 0.0, dt))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw every weight and bias from ``uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _step(self, input, hx, cx):
        layer = type(self).__name__
        if not isinstance(input, _C.Tensor):
            raise _C.DtypeMismatch(f"{layer}: expected a Tensor input, got {type(input).__name__}")
        if input.dim() not in (1, 2):
            raise _C.ShapeMismatch(f"{layer}: expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise _C.ShapeMismatch(f"{layer}: input has inconsistent input_size: got {input.shape[-1]} expected "
                                   f"{self.input_size}")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        B, H = int(x.shape[0]), self.hidden_size
        states: list = []
        for h, what in ((hx, "hx"), (cx, "cx")):
            if what == "cx" and self._mode != "LSTM":
                states.append(None)
                continue
            if h is None:
                h = _zeros((B, H), x)
            elif not isinstance(h, _C.Tensor):
                raise _C.DtypeMismatch(f"{layer}: {what} must be a Tensor, got {type(h).__name__}")
            elif unbatched:
                h = h.unsqueeze(0)
            if tuple(h.shape) != (B, H):
                raise _C.ShapeMismatch(f"{layer}: {what} has inconsistent size: got {tuple(h.shape)}, expected "
                                       f"{(B, H)}")
            states.append(h)
        packed = _C._rnn_layer(self._mode, x.unsqueeze(0), states[0], states[1], self.weight_ih, self.weight_hh,
                               self.bias_ih, self.bias_hh, None, False, layer)
        h = packed[:B * H].view(B, H)
        c = packed[B * H:].view(B, H) if self._mode == "LSTM" else None
        if unbatched:
            h = h.squeeze(0)
            c = c.squeeze(0) if c is not None else None
        return h, c

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nl = getattr(self, "nonlinearity", "tanh")
        return s + (f", nonlinearity={nl}" if nl != "tanh" else "")


class RNNCell(RNNCellBase):
    r"""One Elman RNN step (PyTorch's ``RNNCell``): :math:`h' = \tanh(W_{ih} x + b_{ih} + W_{hh} h + b_{hh})`.

    >>> import pylucid
    >>> pylucid.nn.RNNCell(4, 3)(pylucid.randn(2, 4)).shape
    pylucid.Size([2, 3])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise _C.ShapeMismatch(f"RNNCell: unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"

    def forward(self, input, hx=None):
        """One step: ``input`` ``(N, H_in)`` or ``(H_in,)``, ``hx`` like the output (zeros if None)."""
        return self._step(input, hx, None)[0]


class LSTMCell(RNNCellBase):
    r"""One LSTM step (PyTorch's ``LSTMCell``); returns ``(h', c')``.

    >>> import pylucid
    >>> h, c = pylucid.nn.LSTMCell(4, 3)(pylucid.randn(2, 4))
    >>> h.shape, c.shape
    (pylucid.Size([2, 3]), pylucid.Size([2, 3]))
    """

    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        """One step: ``hx`` is ``(h, c)`` or None (zeros)."""
        if hx is None:
            return self._step(input, None, None)
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise _C.DtypeMismatch(f"LSTMCell: hx must be a tuple (h, c), got {type(hx).__name__}")
        return self._step(input, hx[0], hx[1])


class GRUCell(RNNCellBase):
    r"""One GRU step (PyTorch's ``GRUCell``).

    >>> import pylucid
    >>> pylucid.nn.GRUCell(4, 3)(pylucid.randn(4)).shape
    pylucid.Size([3])
    """

    _mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        """One step: ``input`` ``(N, H_in)`` or ``(H_in,)``, ``hx`` like the output (zeros if None)."""
        return self._step(input, hx, None)[0]
