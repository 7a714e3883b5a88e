"""The statistics, shaping, index-building and elementwise extras of pylucid._math_misc against
PyTorch (skipped without it), float64 gradcheck of the differentiable ones (non-contiguous
inputs included), and typed errors."""
import numpy as np
import pylucid
import pytest
from pylucid.autograd import gradcheck

RNG = np.random.default_rng(21)
X = RNG.standard_normal((4, 5))
XN = X.copy()
XN[1, 2] = np.nan
INTS = np.array([[3, 1, 3, 2], [0, 0, 5, 5]])

CASES = {
    "median": lambda L, x: L.median(x),
    "median_dim": lambda L, x: L.median(x, 1, keepdim=True),
    "median_ints": lambda L, x: L.median(L.tensor(INTS), 1),
    "nanmedian": lambda L, x: L.nanmedian(L.tensor(XN), 1),
    "quantile": lambda L, x: L.quantile(x, 0.3),
    "quantile_dim": lambda L, x: L.quantile(x, L.tensor([0.1, 0.5, 0.95], dtype=x.dtype), dim=1, keepdim=True),
    "quantile_modes": lambda L, x: L.stack([L.quantile(x, 0.4, dim=0, interpolation=m)
                                            for m in ("lower", "higher", "midpoint", "nearest")]),
    "nanquantile": lambda L, x: L.nanquantile(L.tensor(XN), 0.5, dim=1),
    "nanmean": lambda L, x: L.nanmean(L.tensor(XN), 1),
    "nansum": lambda L, x: L.nansum(L.tensor(XN)),
    "cov": lambda L, x: L.cov(x),
    "cov_w": lambda L, x: L.cov(x, correction=0, fweights=L.tensor([1, 2, 1, 3, 1]),
                                aweights=L.tensor([0.5, 1.0, 2.0, 1.0, 0.3], dtype=x.dtype)),
    "corrcoef": lambda L, x: L.corrcoef(x),
    "aminmax": lambda L, x: L.stack(list(L.aminmax(x, dim=0))),
    "count_nonzero": lambda L, x: L.count_nonzero(L.tensor(INTS), dim=1),
    "cummax": lambda L, x: L.cummax(L.tensor(INTS), 1).indices,
    "cummax_v": lambda L, x: L.cummax(x, 0).values,
    "cummin": lambda L, x: L.cummin(L.tensor(INTS), 1).indices,
    "logcumsumexp": lambda L, x: L.logcumsumexp(x, 1),
    "diff": lambda L, x: L.diff(x, n=2, dim=0, prepend=x[:1], append=x[-1:]),
    "trapezoid": lambda L, x: L.trapezoid(x, dx=0.5),
    "trapezoid_x": lambda L, x: L.trapezoid(x, L.tensor([0.0, 0.5, 1.5, 2.0, 4.0], dtype=x.dtype)),
    "rot90": lambda L, x: L.rot90(x, 1),
    "rot90_3": lambda L, x: L.rot90(x.reshape(2, 2, 5), -1, (2, 0)),
    "hstack": lambda L, x: L.hstack([x, x[:, :2]]),
    "vstack": lambda L, x: L.vstack([x[0], x]),
    "dstack": lambda L, x: L.dstack([x, x]),
    "column_stack": lambda L, x: L.column_stack([x[0], x.T]),
    "tensor_split": lambda L, x: L.tensor([p.shape[1] for p in L.tensor_split(x, 3, dim=1)]),
    "tensor_split_idx": lambda L, x: L.tensor_split(x, [1, 3], dim=0)[1],
    "block_diag": lambda L, x: L.block_diag(x[:2, :3], x[0, :2], L.tensor(2.0, dtype=x.dtype)),
    "diag_embed": lambda L, x: L.diag_embed(x, offset=1),
    "diag_embed_dims": lambda L, x: L.diag_embed(x[:2, :3], offset=-1, dim1=0, dim2=2),
    "diagflat": lambda L, x: L.diagflat(x[0, :3], -1),
    "take_along_dim": lambda L, x: L.take_along_dim(x, L.argsort(x, dim=1), dim=1),
    "take_along_flat": lambda L, x: L.take_along_dim(x, L.tensor([0, 7, 19])),
    "msort": lambda L, x: L.msort(x),
    "triu_indices": lambda L, x: L.triu_indices(4, 5, 1),
    "tril_indices": lambda L, x: L.tril_indices(5, 3, -1),
    "cartesian_prod": lambda L, x: L.cartesian_prod(L.tensor([1, 2]), L.tensor([3, 4, 5])),
    "combinations": lambda L, x: L.combinations(x[0], 3),
    "combinations_rep": lambda L, x: L.combinations(x[0, :3], 2, with_replacement=True),
    "bucketize": lambda L, x: L.bucketize(x, L.tensor([-1.0, 0.0, 1.0], dtype=x.dtype), right=True),
    "isin": lambda L, x: L.isin(L.tensor(INTS), L.tensor([1, 5])),
    "argwhere": lambda L, x: L.argwhere(x > 0.5),
    "sinc": lambda L, x: L.sinc(L.cat([x.flatten(), L.zeros(1, dtype=x.dtype)])),
    "xlogy": lambda L, x: L.xlogy(L.tensor([0.0, 1.0, 2.0, 0.0], dtype=x.dtype),
                                  L.tensor([0.0, 3.0, 0.5, float("nan")], dtype=x.dtype)),
    "fmax": lambda L, x: L.fmax(L.tensor(XN), x.flip(0)),
    "fmin": lambda L, x: L.fmin(L.tensor(XN), x * 0 + 0.1),
    "heaviside": lambda L, x: L.heaviside(L.tensor([-1.0, 0.0, 2.0]), L.tensor([0.5])),
    "float_power": lambda L, x: L.float_power(x.float(), 2),
    "inner": lambda L, x: L.inner(x, x[:3]),
    "mv": lambda L, x: L.mv(x, x[0]),
    "addmv": lambda L, x: L.addmv(x[:, 0], x, x[0], beta=0.5, alpha=2.0),
    "addr": lambda L, x: L.addr(x, x[:, 0], x[0], beta=2.0),
    "dist": lambda L, x: L.dist(x, x.flip(1), 3),
    "logspace": lambda L, x: L.logspace(-2, 1, 7, base=2.0),
    "unfold": lambda L, x: x.unfold(1, 2, 2),
    "unfold0": lambda L, x: x.unfold(0, 3, 1),
    "sum_to_size": lambda L, x: x.sum_to_size(1, 5),
}


def _arr(t):
    t = t.detach()
    return t.float().numpy() if str(t.dtype).endswith("bfloat16") else t.numpy()


@pytest.mark.parametrize("name", list(CASES))
def test_equals_torch(name):
    """Guards against a different convention (median's lower middle, quantile's interpolation,
    cummax's index among ties, rot90's direction, tensor_split's part sizes, ...)."""
    torch = pytest.importorskip("torch")
    ours = CASES[name](pylucid, pylucid.tensor(X))
    theirs = CASES[name](torch, torch.tensor(X))
    if isinstance(theirs, tuple) and not isinstance(ours, pylucid.Tensor):
        ours, theirs = ours[0], theirs[0]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_arr(ours), _arr(theirs), rtol=1e-12, atol=1e-12, equal_nan=True)


def test_median_returns_indices_like_torch():
    torch = pytest.importorskip("torch")
    a = pylucid.median(pylucid.tensor(X), 0)
    b = torch.median(torch.tensor(X), 0)
    assert type(a).__name__ == "median" and a.indices.tolist() == b.indices.tolist()


def test_gradchecks():
    """float64 finite differences through the differentiable ones, on a non-contiguous input."""
    x = pylucid.tensor(RNG.standard_normal((5, 4)), requires_grad=True).T
    fns = [lambda t: pylucid.median(t, 1).values, lambda t: pylucid.quantile(t, 0.3, dim=0),
           lambda t: pylucid.cov(t), lambda t: pylucid.corrcoef(t), lambda t: pylucid.cummax(t, 1).values,
           lambda t: pylucid.logcumsumexp(t, 0), lambda t: pylucid.diff(t, 2), lambda t: pylucid.trapezoid(t),
           lambda t: pylucid.rot90(t, 3), lambda t: pylucid.block_diag(t, t[:2]), lambda t: pylucid.diag_embed(t, 1),
           lambda t: pylucid.take_along_dim(t, pylucid.tensor([[2, 0, 1, 4, 3]] * 4), 1),
           lambda t: pylucid.sinc(t), lambda t: pylucid.xlogy(t, t.abs() + 0.5), lambda t: pylucid.fmax(t, t.flip(0)),
           lambda t: pylucid.inner(t, t), lambda t: pylucid.dist(t, t.flip(1)), lambda t: t.unfold(1, 3, 1),
           lambda t: t.sum_to_size(4, 1), lambda t: pylucid.nanmean(t, 0)]
    for f in fns:
        assert gradcheck(f, [x])
    z = pylucid.tensor([0.0, 1.0], dtype=pylucid.float64, requires_grad=True)
    pylucid.sinc(z).sum().backward()
    assert z.grad.tolist()[0] == 0.0


def test_info_and_errors():
    assert pylucid.finfo(pylucid.float32).eps == float(np.finfo(np.float32).eps)
    assert pylucid.finfo().max == pylucid.finfo(pylucid.get_default_dtype()).max
    assert pylucid.iinfo(pylucid.int64).max == 2 ** 63 - 1
    with pytest.raises(TypeError, match="finfo"):
        pylucid.finfo(pylucid.int64)
    with pytest.raises(ValueError, match="unfold"):
        pylucid.arange(4).unfold(0, 5, 1)
    with pytest.raises(ValueError, match="quantile"):
        pylucid.quantile(pylucid.ones(3), 1.5)
    with pytest.raises(TypeError, match="quantile"):
        pylucid.quantile(pylucid.arange(3), 0.5)
    with pytest.raises(RuntimeError, match="rot90"):
        pylucid.rot90(pylucid.ones(2, 2), 1, (0, 0))
    with pytest.raises(IndexError, match="median"):
        pylucid.median(pylucid.ones(2, 2), 3)
    torch = pytest.importorskip("torch")
    for d in (torch.float16, torch.float32, torch.float64, torch.bfloat16):
        ours, theirs = pylucid.finfo(getattr(pylucid, str(d).split(".")[1])), torch.finfo(d)
        assert (ours.eps, ours.max, ours.tiny, ours.bits) == (theirs.eps, theirs.max, theirs.tiny, theirs.bits)


def test_top_level_spellings_of_functional_ops_equal_torch():
    """torch.conv2d, torch.layer_norm, torch.batch_norm (its own argument order), torch.dropout, ...
    take PyTorch's top-level signatures and give its numbers (dropout: the same mask for a seed)."""
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 6, 4, 4)).astype(np.float32)
    res = []
    for L in (pylucid, torch):
        L.manual_seed(0)
        a = L.tensor(x)
        w, b, rm, rv = L.ones(6) * 1.5, L.zeros(6) + 0.1, L.zeros(6), L.ones(6)
        outs = [L.layer_norm(a, (4, 4)), L.group_norm(a, 3, w, b, 1e-5, True),
                L.batch_norm(a, w, b, rm, rv, True, 0.1, 1e-5, True), rm, L.conv2d(a, L.ones(2, 6, 3, 3) * 0.1),
                L.max_pool2d(a, 2), L.selu(a), L.dropout(a, 0.3, True), L.pixel_shuffle(a[:, :4], 2),
                L.cosine_similarity(a, a.flip(1)), L.conv_transpose2d(a, L.ones(6, 2, 2, 2) * 0.1, stride=2)]
        res.append([o.numpy() for o in outs])
    for p, q in zip(*res):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-5)
