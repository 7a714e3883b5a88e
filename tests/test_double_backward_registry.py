"""Second order for every op that records a backward node, keyed by the schema registry.

Each family's own table runs gradgradcheck through tests/helpers.py check_op; this table is the
registry-wide net: ``test_every_recording_op_has_a_case`` compares it with
``pylucid.ops.schemas()``, so an op registered with ``produces_grad`` cannot join without a
float64 gradgradcheck case here, and each case must record the op it is named after. The fused
double-backward nodes themselves (``<op>_backward``) are not differentiable again: third order
through them raises, naming the node (tests/test_double_backward.py)."""
import numpy as np
import pytest

import pylucid
from pylucid.autograd import gradgradcheck

F = pylucid.nn.functional
F64 = pylucid.float64

THIRD_ORDER = {"rms_norm_backward", "group_rms_norm_backward", "layer_norm_backward", "softmax_backward",
               "log_softmax_backward", "cross_entropy_backward", "convolution_backward"}

IDX = pylucid.tensor([0, 2, 0])
IDX2 = pylucid.tensor([[0, 2], [1, 1]])
MASK = pylucid.tensor([[True, False, True], [False, True, False]])
TGT = pylucid.tensor([2, 0])
GROUPS = pylucid.tensor([0, 1, 1, 0])


def _const(shape, positive=False, seed=3):
    a = np.random.default_rng(seed).uniform(-1, 1, shape)
    return pylucid.tensor(np.abs(a) + 0.5 if positive else a, dtype=F64)


def _dropout(a):
    pylucid.manual_seed(0)  # the same mask on every call, so finite differences see one function
    return F.dropout(a, 0.5, True)


_RNN = {}


def _index_put(a, b):
    out = a * 1.0
    out[pylucid.tensor([0, 2, 3])] = b  # recorded: IndexPutBackward in a and b
    return out


def _lstm(a):
    if "m" not in _RNN:
        pylucid.manual_seed(0)
        _RNN["m"] = pylucid.nn.LSTM(3, 2).double()
    return _RNN["m"](a)[0]


S23, S3 = (2, 3), (3,)
P = "positive"
# schema name -> (function, input shapes); ("positive", shape) draws values in [0.5, 1.5].
CASES = {
    "abs": (lambda a: a.abs(), [S23]),
    "add": (lambda a, b: a + b, [S23, S3]),
    "amax": (lambda a: a.amax(dim=1), [S23]),
    "amin": (lambda a: a.amin(dim=1), [S23]),
    "batch_norm": (lambda a, w, b: F.batch_norm(a, None, None, w, b, True), [(4, 3), S3, S3]),
    "binary_cross_entropy_with_logits": (
        lambda a: F.binary_cross_entropy_with_logits(a, _const(S23, True) / 2), [S23]),
    "cat": (lambda a, b: pylucid.cat([a, b], 0), [S23, (1, 3)]),
    "ceil": (lambda a: a.ceil() * a, [S23]),
    "celu": (lambda a: F.celu(a), [S23]),
    "chunk": (lambda a: a.chunk(3, 1), [S23]),
    "clamp": (lambda a: a.clamp(-0.5, 0.5) * a, [S23]),
    "clone": (lambda a: a.clone() * a, [S23]),
    "contiguous": (lambda a: a.t().contiguous() * a.t(), [S23]),
    "convolution": (lambda a, w: F.conv2d(a, w), [(1, 2, 4, 4), (3, 2, 2, 2)]),
    "cos": (lambda a: a.cos(), [S23]),
    "cross_entropy": (lambda a: F.cross_entropy(a, TGT, label_smoothing=0.1), [S23]),
    "cumprod": (lambda a: a.cumprod(1), [S23]),
    "cumsum": (lambda a: a.cumsum(1) * a, [S23]),
    "diagonal": (lambda a: a.diagonal() ** 2, [(3, 3)]),
    "div": (lambda a, b: a / b, [S23, (P, S3)]),
    "dropout": (_dropout, [S23]),
    "elu": (lambda a: F.elu(a), [S23]),
    "embedding": (lambda w: F.embedding(IDX, w) ** 2, [(4, 2)]),
    "erf": (lambda a: a.erf(), [S23]),
    "exp": (lambda a: a.exp(), [S23]),
    "expand": (lambda a: a.expand(2, 3) ** 2, [(1, 3)]),
    "expm1": (lambda a: a.expm1(), [S23]),
    "flatten": (lambda a: a.flatten() ** 2, [S23]),
    "floor": (lambda a: a.floor() * a, [S23]),
    "sign": (lambda a: a.sign() * a, [S23]),
    "fmod": (lambda a: pylucid.fmod(a, 0.7) * a, [S23]),
    "gather": (lambda a: a.gather(1, IDX2) ** 2, [S23]),
    "gelu": (lambda a: F.gelu(a), [S23]),
    "getitem": (lambda a: a[0, 1:] ** 2, [S23]),
    "group_norm": (lambda a, w, b: F.group_norm(a, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    "group_rms_norm": (lambda a, w: F.group_rms_norm(a, GROUPS, w, 1e-6), [(2, 4, 3), (2,)]),
    "hardshrink": (lambda a: F.hardshrink(a) * a, [S23]),
    "hardsigmoid": (lambda a: F.hardsigmoid(a * 4) * a, [S23]),
    "hardswish": (lambda a: F.hardswish(a * 4), [S23]),
    "hardtanh": (lambda a: F.hardtanh(a * 0.9) * a, [S23]),
    "index": (lambda a: a[IDX] ** 2, [(4, 2)]),
    "index_select": (lambda a: a.index_select(0, IDX) ** 2, [(4, 2)]),
    "l1_loss": (lambda a: F.l1_loss(a, _const(S23)) * a.sum(), [S23]),
    "layer_norm": (lambda a, w, b: F.layer_norm(a, (3,), w, b), [S23, S3, S3]),
    "leaky_relu": (lambda a: F.leaky_relu(a, 0.1) * a, [S23]),
    "linear": (lambda a, w, b: F.linear(a, w, b) ** 2, [S23, (4, 3), (4,)]),
    "log": (lambda a: a.log(), [(P, S23)]),
    "log1p": (lambda a: a.log1p(), [(P, S23)]),
    "log_softmax": (lambda a: F.log_softmax(a, 1), [S23]),
    "logsigmoid": (lambda a: F.logsigmoid(a), [S23]),
    "logsumexp": (lambda a: a.logsumexp(1), [S23]),
    "masked_fill": (lambda a: a.masked_fill(MASK, 0.5) ** 2, [S23]),
    "matmul": (lambda a, b: a @ b, [S23, (3, 2)]),
    "max": (lambda a: a.max(dim=1).values ** 2, [S23]),
    "maximum": (lambda a, b: pylucid.maximum(a, b) ** 2, [S23, S23]),
    "mean": (lambda a: a.mean(1) ** 2, [S23]),
    "min": (lambda a: a.min(dim=1).values ** 2, [S23]),
    "minimum": (lambda a, b: pylucid.minimum(a, b) ** 2, [S23, S23]),
    "mish": (lambda a: F.mish(a), [S23]),
    "movedim": (lambda a: a.movedim(0, 1) ** 2, [S23]),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [S23, S23]),
    "mul": (lambda a, b: a * b, [S23, S3]),
    "narrow": (lambda a: a.narrow(1, 0, 2) ** 2, [S23]),
    "unfold": (lambda a: a.unfold(1, 2, 1) ** 2, [S23]),
    "neg": (lambda a: -a * a, [S23]),
    "nll_loss": (lambda a: F.nll_loss(F.log_softmax(a, 1), TGT), [S23]),
    "norm": (lambda a: a.norm(), [S23]),
    "pad": (lambda a: F.pad(a, (1, 2)) ** 2, [S23]),
    "permute": (lambda a: a.permute(1, 0) ** 2, [S23]),
    "pool": (lambda a: (F.avg_pool2d(a, 2) ** 2, F.max_pool2d(a, 2) ** 2), [(1, 1, 4, 4)]),
    "pow": (lambda a, b: a ** b, [(P, S23), S23]),
    "prod": (lambda a: a.prod(1), [S23]),
    "relu": (lambda a: F.relu(a) * a, [S23]),
    "remainder": (lambda a: pylucid.remainder(a, 0.7) * a, [S23]),
    "reshape": (lambda a: a.reshape(3, 2) ** 2, [S23]),
    "rms_norm": (lambda a, w: F.rms_norm(a, (3,), w, 1e-6, 0.5), [S23, S3]),
    "rnn": (_lstm, [(2, 1, 3)]),
    "round": (lambda a: a.round() * a, [S23]),
    "rsqrt": (lambda a: a.rsqrt(), [(P, S23)]),
    "scaled_dot_product_attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
                                     [(1, 2, 3), (1, 2, 3), (1, 2, 3)]),
    "scatter_add": (lambda a, b: a.scatter_add(1, IDX2, b) ** 2, [S23, (2, 2)]),
    "select": (lambda a: a.select(1, 0) ** 2, [S23]),
    "sigmoid": (lambda a: a.sigmoid(), [S23]),
    "silu": (lambda a: F.silu(a), [S23]),
    "sin": (lambda a: a.sin(), [S23]),
    "softmax": (lambda a: F.softmax(a, 0), [S23]),
    "softplus": (lambda a: F.softplus(a), [S23]),
    "softshrink": (lambda a: F.softshrink(a) * a, [S23]),
    "softsign": (lambda a: F.softsign(a), [S23]),
    "sort": (lambda a: a.sort(1).values ** 2, [S23]),
    "kthvalue": (lambda a: a.kthvalue(2, 1).values ** 2, [S23]),
    "median": (lambda a: (a.median(1).values ** 2, a.median() ** 2), [S23]),
    "mode": (lambda a: a.mode(1).values ** 2, [S23]),
    "nanmedian": (lambda a: (a.nanmedian(1).values ** 2, a.nanmedian() ** 2), [S23]),
    "split": (lambda a: tuple(p ** 2 for p in a.split(1, 1)), [S23]),
    "sqrt": (lambda a: a.sqrt(), [(P, S23)]),
    "squeeze": (lambda a: a.squeeze(0) ** 2, [(1, 3)]),
    "stack": (lambda a, b: pylucid.stack([a, b]) ** 2, [S23, S23]),
    "std": (lambda a: a.std(1), [S23]),
    "sub": (lambda a, b: (a - b) ** 2, [S23, S3]),
    "sum": (lambda a: a.sum(1) ** 2, [S23]),
    "tanh": (lambda a: a.tanh(), [S23]),
    "tanhshrink": (lambda a: F.tanhshrink(a), [S23]),
    "threshold": (lambda a: F.threshold(a, 0.1, 0.0) * a, [S23]),
    "to": (lambda a: a.to(F64, copy=True) ** 2, [S23]),
    "topk": (lambda a: a.topk(2, 1).values ** 2, [S23]),
    "transpose": (lambda a: a.transpose(0, 1) ** 2, [S23]),
    "tril": (lambda a: a.tril() ** 2, [(3, 3)]),
    "triu": (lambda a: a.triu() ** 2, [(3, 3)]),
    "trunc": (lambda a: a.trunc() * a, [S23]),
    "unbind": (lambda a: tuple(p ** 2 for p in a.unbind(1)), [S23]),
    "unflatten": (lambda a: a.flatten().unflatten(0, (3, 2)) ** 2, [S23]),
    "unsqueeze": (lambda a: a.unsqueeze(0) ** 2, [S23]),
    "var": (lambda a: a.var(1), [S23]),
    "view": (lambda a: a.view(3, 2) ** 2, [S23]),
    "where": (lambda a, b: pylucid.where(MASK, a, b) ** 2, [S23, S23]),
    "tan": (lambda a: a.tan(), [S23]),
    "asin": (lambda a: (a * 0.9).asin(), [S23]),
    "acos": (lambda a: (a * 0.9).acos(), [S23]),
    "atan": (lambda a: a.atan(), [S23]),
    "sinh": (lambda a: a.sinh(), [S23]),
    "cosh": (lambda a: a.cosh(), [S23]),
    "asinh": (lambda a: a.asinh(), [S23]),
    "acosh": (lambda a: (a + 1.0).acosh(), [(P, S23)]),
    "atanh": (lambda a: (a * 0.9).atanh(), [S23]),
    "log2": (lambda a: a.log2(), [(P, S23)]),
    "log10": (lambda a: a.log10(), [(P, S23)]),
    "exp2": (lambda a: a.exp2(), [S23]),
    "erfc": (lambda a: a.erfc(), [S23]),
    "atan2": (lambda a, b: pylucid.atan2(a, b), [S23, (P, S3)]),
    "index_put": (lambda a, b: _index_put(a, b) ** 2, [(4, 2), (3, 2)]),
    "copy_slices": (lambda a, b: _write_through_view(a, b)[0] ** 2, [(3, 4), (3,)]),
    "as_strided": (lambda a, b: _write_through_view(a, b)[1] ** 2, [(3, 4), (3,)]),
}


def _write_through_view(a, b):
    """(base, older view) after an in-place op through a view of a's copy: the base records
    copy_slices, the view taken before the write as_strided."""
    x = a * 1.0
    row = x[0]
    x[:, 1].mul_(b)
    return x, row + 0.0


def _leaves(shapes):
    rng = np.random.default_rng(5)
    out = []
    for s in shapes:
        positive = isinstance(s[0], str)
        a = rng.uniform(-1, 1, s[1] if positive else s)
        out.append(pylucid.tensor(np.abs(a) + 0.5 if positive else a, dtype=F64, requires_grad=True))
    return out


def _schemas_in_graph(outs):
    seen, stack, visited, keep = set(), [o.grad_fn for o in outs if o.grad_fn is not None], set(), []
    while stack:
        n = stack.pop()
        keep.append(n)  # node wrappers are transient: keep them alive so their ids stay unique
        if id(n) in visited or len(keep) > 10000:
            continue
        visited.add(id(n))
        if n.schema is not None:
            seen.add(n.schema.name)
        stack.extend(f for f, _ in n.next_functions if f is not None)
    return seen


def test_every_recording_op_has_a_case():
    """Guards against an op joining the registry (produces_grad) without a second-order case."""
    names = {s.name for s in pylucid.ops.schemas() if s.produces_grad}
    assert names - THIRD_ORDER - set(CASES) == set(), "ops without a gradgradcheck case"
    assert set(CASES) - names == set(), "cases for ops that are not registered"


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck_every_op(name):
    """float64 gradgradcheck of each registered op, on a case that records that op."""
    fn, shapes = CASES[name]
    leaves = _leaves(shapes)
    outs = fn(*leaves)
    outs = outs if isinstance(outs, tuple) else (outs,)
    assert name in _schemas_in_graph(outs), f"the case for {name} does not record it"
    assert gradgradcheck(fn, leaves)
