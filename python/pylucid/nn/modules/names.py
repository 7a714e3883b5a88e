"""``RReLU``, ``Dropout3d`` and ``AdaptiveLogSoftmaxWithLoss`` (PyTorch's layers of the same
names: same arguments, state_dict keys and results)."""
import collections

import numpy as np

from ... import _C
from .. import functional as F
from ..module import Module
from .container import ModuleList, Sequential
from .dropout import _DropoutNd
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss", "Dropout3d", "RReLU"]


class RReLU(Module):
    """Randomized leaky ReLU: in training, each ``x <= 0`` gets a slope drawn from
    ``U(lower, upper)``; in eval mode the slope is ``(lower + upper) / 2``
    (see :func:`pylucid.nn.functional.rrelu`).

    >>> import pylucid
    >>> RReLU(0.1, 0.3).eval()(pylucid.tensor([-1.0, 1.0])).tolist()
    [-0.20000000298023224, 1.0]
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Dropout3d(_DropoutNd):
    """Zeroes whole 3-d feature maps of ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``)
    inputs with probability ``p`` while ``training``; see :func:`pylucid.nn.functional.dropout3d`.

    >>> Dropout3d(0.2)
    Dropout3d(p=0.2, inplace=False)
    """

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax over many classes (Grave et al., 2016): frequent classes (below
    ``cutoffs[0]``) sit in a head with one extra logit per tail cluster; each cluster's classes
    are scored by a low-rank projection (``in_features // div_value ** (i + 1)`` wide).

    ``forward(input, target)`` returns the named tuple ``(output, loss)``: the target's
    log-probability per row and the mean negative log-likelihood. ``log_prob(input)`` gives the
    full ``(N, n_classes)`` log-distribution, ``predict(input)`` its argmax. Parameters are
    ``head`` (a Linear) and ``tail`` (a ModuleList of two-Linear Sequentials), as PyTorch's, so
    state_dict keys and seeded initial weights match.

    >>> import pylucid
    >>> asm = AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4])
    >>> out = asm(pylucid.randn(3, 8), pylucid.tensor([0, 5, 9]))
    >>> out.output.shape, out.loss.shape
    (pylucid.Size([3]), pylucid.Size([]))
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self):
        """Draws new initial weights for the head and every tail projection."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise _C.ShapeMismatch("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise _C.ShapeMismatch(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                       f"{input_.size()}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise _C.ShapeMismatch(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                       f"{input_.size()}")
        else:
            raise _C.ShapeMismatch("0D or 1D target tensor expected, multi-target not supported")
        is_batched = targ_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        tgt = target.detach().numpy().astype(np.int64)
        batch_size = tgt.shape[0]
        output = input.new_zeros(batch_size)
        gather_inds = np.zeros(batch_size, dtype=np.int64)
        used_rows = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            rows = np.nonzero((tgt >= low) & (tgt < high))[0]
            if rows.size == 0:
                continue
            if i == 0:
                gather_inds[rows] = tgt[rows]
            else:
                row_idx = _C._from_numpy(np.ascontiguousarray(rows))
                relative = _C._from_numpy(np.ascontiguousarray(tgt[rows] - low))
                cluster_output = self.tail[i - 1](input.index_select(0, row_idx))
                gather_inds[rows] = self.shortlist_size + i - 1
                local = F.log_softmax(cluster_output, dim=1).gather(1, relative.unsqueeze(1)).squeeze(1)
                output = output.index_copy(0, row_idx, local)
            used_rows += rows.size
        if used_rows != batch_size:
            raise _C.IndexOutOfRange(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                                     f"[{tgt.min()}, {tgt.max()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        inds = _C._from_numpy(gather_inds).unsqueeze(1)
        output = output + head_logprob.gather(1, inds).squeeze(1)
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return _C.cat(parts, 1)

    def log_prob(self, input):
        """Log-probabilities of all ``n_classes`` classes, shape ``(N, n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class per row (``log_prob(input).argmax(1)``, computed for the rows
        whose head argmax is a tail cluster only)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not bool(not_in_shortlist.any()):
            return output
        if bool(not_in_shortlist.all()):
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist], head_output[not_in_shortlist])
        output[not_in_shortlist] = log_prob.argmax(dim=1)
        return output


# ---- 3-d padding layers ------------------------------------------------------------------------

from .padding import _ConstantPadNd, _PadNd


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with ``value``: an int, or ``(left, right, top, bottom, front, back)``.

    >>> import pylucid
    >>> ConstantPad3d(1, 2.0)(pylucid.zeros(1, 1, 1, 1)).shape
    pylucid.Size([1, 3, 3, 3])
    """

    _dims = 3


class ZeroPad3d(ConstantPad3d):
    """Pads the last three dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad3d(_PadNd):
    """Mirrors the last three dims of a 4-D or 5-D input without repeating the edge."""

    _dims = 3
    _mode = "reflect"


class ReplicationPad3d(_PadNd):
    """Repeats the edge values of the last three dims of a 4-D or 5-D input."""

    _dims = 3
    _mode = "replicate"


class CircularPad3d(_PadNd):
    """Wraps the last three dims of a 4-D or 5-D input around (periodic boundary)."""

    _dims = 3
    _mode = "circular"


__all__ += ["CircularPad3d", "ConstantPad3d", "ReflectionPad3d", "ReplicationPad3d", "ZeroPad3d"]


# ---- Module methods: to_empty, set_submodule, compile ---------------------------------------------

def _to_empty(self, *, device=None, recurse=True):
    """Replaces every parameter's and buffer's values with uninitialised memory of the same shape
    and dtype (PyTorch's way to materialise a module built without initialisation); the
    Parameter objects stay the same. Returns the module."""
    from ..._device import _check_device
    from ..._tensor import empty_like
    from ...autograd.grad_mode import no_grad

    _check_device(device, "to_empty")
    mods = self.modules() if recurse else [self]
    with no_grad():
        for m in mods:
            for reg in (m._parameters, m._buffers):
                for t in reg.values():
                    if t is not None:
                        t.data = empty_like(t)
    return self


def _set_submodule(self, target, module, strict=False):
    """Puts ``module`` at the dotted path ``target`` (``"encoder.layers.0"``); with ``strict`` the
    attribute must exist already."""
    if not isinstance(target, str):
        raise _C.DtypeMismatch(f"set_submodule: target must be a str, got {type(target).__name__}")
    if target == "":
        raise ValueError("Cannot set the submodule without a target name!")
    if not isinstance(module, Module):
        raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
    parent_path, _, name = target.rpartition(".")
    parent = self.get_submodule(parent_path)
    if strict and not hasattr(parent, name):
        raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
    if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
        raise AttributeError(f"`{name}` is not an nn.Module")
    setattr(parent, name, module)


def _compile(self, *args, **kwargs):
    """PyTorch compiles ``forward`` in place; pylucid's ops are compiled C++ already, so this
    changes nothing (as ``pylucid.compile`` returns its argument)."""


for _name, _fn in (("to_empty", _to_empty), ("set_submodule", _set_submodule), ("compile", _compile)):
    if _name not in vars(Module):
        setattr(Module, _name, _fn)
