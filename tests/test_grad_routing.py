"""Where the gradient of a selecting op goes (ties, NaN), its node's name, and autograd's error
messages: the same as PyTorch's, so "unit-test gradients" scripts give the same numbers and
errors with ``import pylucid as torch``. Compared with torch where it is installed, else with
hand values."""
import math
import warnings

import numpy as np
import pylucid
import pytest

NAN = math.nan
F64 = pylucid.float64
TIES = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]
WITH_NAN = [[1.0, NAN, 3.0], [NAN, NAN, 0.0]]
FLAT = [1.0, 3.0, 3.0, 0.0, 3.0]

OPS = [      ("max()", lambda t, m: t.max(), False),
    ("min()", lambda t, m: t.min(), False),
    ("max(-1)", lambda t, m: tuple(t.max(-1)), False),
    ("min(0)", lambda t, m: tuple(t.min(0)), False),
    ("max(1, keepdim)", lambda t, m: tuple(m.max(t, 1, keepdim=True)), True),
    ("amax()", lambda t, m: t.amax(), False),
    ("amax(-1)", lambda t, m: t.amax(-1), False),
    ("amin(0)", lambda t, m: t.amin(0), False),
    ("median()", lambda t, m: t.median(), False),
    ("median(-1)", lambda t, m: tuple(t.median(-1)), False),
    ("median(0)", lambda t, m: tuple(m.median(t, 0)), False),
    ("nanmedian()", lambda t, m: t.nanmedian(), False),
    ("nanmedian(-1)", lambda t, m: tuple(t.nanmedian(-1)), False),
    ("kthvalue(2)", lambda t, m: tuple(t.kthvalue(2)), False),
    ("kthvalue(1, 0)", lambda t, m: tuple(m.kthvalue(t, 1, 0)), False),
    ("mode()", lambda t, m: tuple(t.mode()), False),
    ("mode(0, keepdim)", lambda t, m: tuple(t.mode(0, keepdim=True)), False),
]


def _run(mod, op, data, dtype):
    x = mod.tensor(data, dtype=dtype, requires_grad=True)
    out = op(x, mod)
    v, idx = (out[0], out[1].tolist()) if isinstance(out, tuple) else (out, None)
    node = v.grad_fn
    (v.sum() if v.dim() else v).backward()
    return np.array(v.tolist(), dtype=float), idx, type(node).__name__, node.name(), np.array(x.grad.tolist())


def _same(a, b):
    np.testing.assert_array_equal(a, b)  # NaN equals NaN here


@pytest.mark.parametrize("label,op,two_d", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("data", [TIES, WITH_NAN, FLAT, 2.0], ids=["ties", "nan", "flat", "0d"])
def test_values_indices_gradients_and_names_match_torch(label, op, two_d, data):
    """Guards against a tie or a NaN sending the gradient elsewhere than PyTorch does, against
    picking another index among equal values, and against other node names."""
    torch = pytest.importorskip("torch")
    for pd, td in ((pylucid.float32, torch.float32), (F64, torch.float64)):
        try:
            want = _run(torch, op, data, td)
        except (RuntimeError, IndexError) as e:  # not defined for this input: pylucid refuses it too
            with pytest.raises(IndexError if isinstance(e, IndexError) else RuntimeError):
                _run(pylucid, op, data, pd)
            continue
        got = _run(pylucid, op, data, pd)
        _same(got[0], want[0])
        assert got[1] == want[1]
        assert got[2:4] == want[2:4]
        np.testing.assert_allclose(got[4], want[4], rtol=0, atol=0)


def test_hand_values_of_the_two_routing_rules():
    """Guards against max(dim) splitting among ties (it goes to the index) and against max()
    giving everything to one maximum (it splits evenly, among the NaNs when there is one)."""
    x = pylucid.tensor(TIES, dtype=F64, requires_grad=True)
    x.max(1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    x = pylucid.tensor(TIES, dtype=F64, requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]]
    x = pylucid.tensor(WITH_NAN, dtype=F64, requires_grad=True)
    x.min().backward()
    assert x.grad.tolist() == [[0.0, 1 / 3, 0.0], [1 / 3, 1 / 3, 0.0]]
    x = pylucid.tensor([[4.0, 1.0, 4.0, 2.0]], dtype=F64, requires_grad=True)
    x.median().backward()  # the lower median 2.0 occurs once
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 1.0]]
    x = pylucid.tensor([[5.0, 5.0, 1.0, 9.0]], dtype=F64, requires_grad=True)
    v, i = x.median(1)
    v.sum().backward()
    assert v.tolist() == [5.0] and i.tolist() == [0] and x.grad.tolist() == [[1.0, 0.0, 0.0, 0.0]]
    names = (x.max().grad_fn.name(), x.max(1).values.grad_fn.name(), x.median().grad_fn.name(),
             x.median(1).values.grad_fn.name(), x.kthvalue(1).values.grad_fn.name(), x.mode().values.grad_fn.name())
    assert names == ("MaxBackward1", "MaxBackward0", "MedianBackward0", "MedianBackward1", "KthvalueBackward0",
                     "ModeBackward0")
    assert type(x.min(1).values.grad_fn).__name__ == "MinBackward0"


@pytest.mark.parametrize("n", [3, 8, 17, 40, 300])
def test_tie_choice_matches_torch_on_long_rows(n):
    """Guards against kthvalue/median/mode returning another index among equal values (or NaNs)
    in rows long enough for the selection algorithms to reorder them."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n)
    a = rng.integers(0, 4, size=(6, n)).astype(np.float64)
    a[rng.random(a.shape) < 0.15] = NAN
    a[5] = NAN
    x, t = pylucid.tensor(a), torch.tensor(a)
    for k in (1, (n + 1) // 2, n):
        for dim in (0, 1):
            if k > a.shape[dim]:
                continue
            got, want = x.kthvalue(k, dim), t.kthvalue(k, dim)
            _same(np.array(got.values.tolist()), want.values.numpy())
            assert got.indices.tolist() == want.indices.tolist()
    for name in ("median", "nanmedian", "mode"):
        for dim in (0, 1):
            got, want = getattr(x, name)(dim), getattr(t, name)(dim)
            _same(np.array(got.values.tolist()), want.values.numpy())
            assert got.indices.tolist() == want.indices.tolist(), name
    for name in ("median", "nanmedian"):
        _same(np.array(getattr(x, name)().item()), np.array(getattr(t, name)().item()))


@pytest.mark.parametrize("op", [lambda t: t.kthvalue(2, 1).values, lambda t: t.median(0).values,
                                lambda t: t.median(), lambda t: t.nanmedian(1).values, lambda t: t.mode(1).values,
                                lambda t: t.max(0).values, lambda t: t.min(), lambda t: t.max(1, keepdim=True).values])
def test_gradcheck_away_from_ties(op):
    """Guards against a wrong scatter of the selected element's gradient (float64, no ties)."""
    x = pylucid.tensor(np.random.default_rng(1).permutation(12).reshape(3, 4) * 0.37, dtype=F64,
                       requires_grad=True)
    assert pylucid.autograd.gradcheck(op, (x,))
    assert pylucid.autograd.gradgradcheck(op, (x,))


def test_kthvalue_and_median_errors():
    """Guards against k out of range or an empty dim passing silently."""
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension 0"):
        pylucid.ones(3).kthvalue(4)
    with pytest.raises(IndexError, match=r"kthvalue\(\): Expected reduction dim 0 to have non-zero size."):
        pylucid.ones(0).kthvalue(1)
    with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 1 to have non-zero size."):
        pylucid.ones(2, 0).median(1)
    assert math.isnan(pylucid.ones(0).median().item())


# ---- autograd error messages -----------------------------------------------------------------

def _mistakes(m):
    def twice():
        x = m.ones(3, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()

    def non_scalar():
        (m.ones(3, requires_grad=True) * 2).backward()

    def no_grad_fn():
        m.ones(3).sum().backward()

    def grad_of_constant():
        m.autograd.grad(m.ones(3).sum(), m.ones(3, requires_grad=True))

    def input_without_grad():
        x = m.ones(3, requires_grad=True)
        m.autograd.grad((x * 2).sum(), [x, m.ones(3)])

    def unused():
        x, z = m.ones(3, requires_grad=True), m.ones(3, requires_grad=True)
        m.autograd.grad((x * 2).sum(), [x, z])

    def saved_input_modified():
        x = m.ones(3, requires_grad=True)
        y = x * 2
        z = y * y
        y.add_(1)
        z.sum().backward()

    def saved_output_modified():
        x = m.ones(3, 2, requires_grad=True)
        z = (x.t() * 1).exp()
        z.mul_(2)
        z.sum().backward()

    def saved_constant_modified():
        a = m.ones(3, 2, dtype=m.float64)
        y = a @ m.ones(2, 2, dtype=m.float64, requires_grad=True)
        a.add_(1)
        y.sum().backward()

    def leaf_in_place():
        m.ones(3, requires_grad=True).add_(1)

    def view_of_leaf_in_place():
        m.ones(3, requires_grad=True).view(3).mul_(2)

    def leaf_setitem():
        m.ones(3, requires_grad=True)[0] = 2.0

    def leaf_masked_setitem():
        x = m.ones(3, requires_grad=True)
        x[m.tensor([True, False, True])] = 2.0

    def leaf_random_fill():
        m.ones(3, requires_grad=True).uniform_()

    def grad_shape():
        (m.ones(3, requires_grad=True) * 2).backward(m.ones(2))

    def non_leaf_requires_grad():
        (m.ones(3, requires_grad=True) * 2).requires_grad_(False)

    def int_requires_grad():
        m.ones(3, dtype=m.int64).requires_grad_(True)

    def expanded_add():
        m.ones(4).expand(3, 4).add_(1)

    def expanded_copy():
        m.ones(1, 4).expand(3, 4).copy_(m.zeros(3, 4))

    def expanded_unary():
        m.ones(4).expand(3, 4).exp_()

    def expanded_out():
        m.add(m.ones(3, 4), 1, out=m.ones(4).expand(3, 4))

    return [twice, non_scalar, no_grad_fn, grad_of_constant, input_without_grad, unused, saved_input_modified,
            saved_output_modified, saved_constant_modified, leaf_in_place, view_of_leaf_in_place, leaf_setitem,
            leaf_masked_setitem, leaf_random_fill, grad_shape,
            non_leaf_requires_grad, int_requires_grad, expanded_add, expanded_copy, expanded_unary, expanded_out]


def _error(f):
    with pytest.raises(Exception) as e:
        f()
    return e.value


@pytest.mark.parametrize("i", range(len(_mistakes(pylucid))), ids=[f.__name__ for f in _mistakes(pylucid)])
def test_autograd_mistakes_raise_torchs_error(i):
    """Guards against messages drifting from PyTorch's: scripts match on them."""
    torch = pytest.importorskip("torch")
    want, got = _error(_mistakes(torch)[i]), _error(_mistakes(pylucid)[i])
    assert isinstance(got, type(want))
    assert str(got) == str(want)


def test_autograd_mistakes_hand_messages():
    """The messages without torch installed (the most common three)."""
    twice, non_scalar, no_grad_fn = _mistakes(pylucid)[:3]
    assert str(_error(twice)).startswith("Trying to backward through the graph a second time")
    assert str(_error(non_scalar)) == "grad can be implicitly created only for scalar outputs"
    assert str(_error(no_grad_fn)) == "element 0 of tensors does not require grad and does not have a grad_fn"
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
        pylucid.ones(4).expand(3, 4).add_(1)


def test_non_leaf_grad_access_warns():
    """Guards against .grad of a non-leaf silently reading None (PyTorch warns), and against
    warning where PyTorch does not (a leaf, a retained non-leaf)."""
    x = pylucid.ones(3, requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match=r"The \.grad attribute of a Tensor that is not a leaf Tensor"):
        assert y.grad is None
    y.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad is None and x.grad is None


def test_saved_attributes_as_torch():
    """Guards against the nodes' saved state differing from PyTorch's attributes, or staying
    readable after a backward freed it."""
    x = pylucid.tensor(TIES, requires_grad=True)
    v, i = x.kthvalue(2, 1, keepdim=True)
    n = v.grad_fn
    assert (n._saved_dim, n._saved_keepdim, n._saved_self_sym_sizes) == (1, True, (2, 3))
    assert n._saved_indices.tolist() == i.tolist() == [[1], [0]]
    m = x.max()
    assert m.grad_fn._saved_self.tolist() == TIES and m.grad_fn._saved_result.item() == 3.0
    v.sum().backward()
    m.backward()
    for read in (lambda: n._saved_indices, lambda: m.grad_fn._saved_self):
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            read()


def test_masked_fill_on_expanded_view_warns():
    """Guards against silently writing one element many times (PyTorch warns, deprecated)."""
    x = pylucid.zeros(4)
    with pytest.warns(UserWarning, match="Use of masked_fill_ on expanded tensors is deprecated"):
        x.expand(3, 4).masked_fill_(pylucid.ones(3, 4, dtype=pylucid.bool), 1.0)
    assert x.tolist() == [1.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize("dims,keepdim", [((0, 2), True), ((0, 2), False), ((1,), False), (-1, True)])
def test_amax_amin_over_dims_match_torch_bit_for_bit(dims, keepdim):
    """Guards against another split of a non-uniform gradient among ties over several dims."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).integers(0, 3, size=(3, 4, 5)).astype(np.float64)
    for name in ("amax", "amin"):
        grads = []
        for m in (torch, pylucid):
            x = m.tensor(a, requires_grad=True)
            y = getattr(x, name)(dims, keepdim)
            y.backward(m.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)) + 0.7))
            grads.append(np.array(x.grad.tolist()))
        np.testing.assert_array_equal(grads[1], grads[0])
