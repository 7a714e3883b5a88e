"""split / chunk / unbind record ONE backward node shared by all their pieces (a node with several
outputs, as PyTorch's SplitBackward0, SplitWithSizesBackward0 and UnbindBackward0): piece i is
output i of that node (``output_nr``), its backward gets every piece's gradient at once (None for
a piece no gradient reached) and writes them into one buffer of the input's shape. Compared with
PyTorch where it is installed; gradients also checked by finite differences in float64."""
import itertools

import numpy as np
import pytest

import pylucid
from pylucid.autograd import gradcheck, gradgradcheck

from helpers import check_double_backward, rand_array

F64 = pylucid.float64

# (name, op): the op applied to a pylucid or torch tensor of shape (4, 6).
OPS = [
    ("chunk2", lambda t: t.chunk(2, 1)),
    ("chunk4_uneven", lambda t: t.chunk(4, 1)),  # ceil(6 / 4) = 2: three pieces
    ("split_int", lambda t: t.split(4, 1)),  # pieces of 4 and 2
    ("split_sizes", lambda t: t.split([1, 0, 5], 1)),  # a size-0 piece in the middle
    ("split_with_sizes", lambda t: t.split_with_sizes([3, 1], 0)),
    ("unbind0", lambda t: t.unbind(0)),
    ("unbind1", lambda t: t.unbind(1)),
    ("chunk1", lambda t: t.chunk(1, 0)),  # a single piece: still a split node
]


def _loss(pieces, used):
    """sum over the used pieces of (i + 1) * piece ** 2 (a different weight per piece)."""
    return sum(((p ** 2) * (i + 1)).sum() for i, p in enumerate(pieces) if i in used)


def _subsets(n):
    return [set(c) for k in range(1, n + 1) for c in itertools.combinations(range(n), k)]


@pytest.mark.parametrize("name,op", OPS, ids=[n for n, _ in OPS])
def test_graph_structure_matches_torch(name, op):
    """Guards against a piece getting a node of its own (PyTorch shares one), a wrong output_nr,
    or next_functions of a consumer not naming (node, output_nr) as PyTorch does."""
    torch = pytest.importorskip("torch")
    arr = rand_array((4, 6))
    x = pylucid.tensor(arr, dtype=F64, requires_grad=True)
    tx = torch.tensor(arr, requires_grad=True)
    ps, tps = op(x), op(tx)
    assert len(ps) == len(tps)
    assert type(ps[0].grad_fn).__name__ == type(tps[0].grad_fn).__name__
    assert all(p.grad_fn is ps[0].grad_fn for p in ps)
    assert [p.output_nr for p in ps] == [p.output_nr for p in tps]
    assert [(type(n).__name__, nr) for n, nr in ps[0].grad_fn.next_functions] == \
        [(type(n).__name__, nr) for n, nr in tps[0].grad_fn.next_functions]
    # A consumer of the last and first pieces names the shared node with each piece's output_nr.
    y, ty = ps[-1].sum() * ps[0].sum(), tps[-1].sum() * tps[0].sum()
    y, ty = y + ps[-1].mean(), ty + tps[-1].mean()
    def inputs(node, shared):  # two levels of (name, output_nr, is the shared node)
        return [(type(n).__name__, nr, n is shared, inputs(n, shared) if n is not shared else None)
                for n, nr in node.next_functions]

    assert inputs(y.grad_fn, ps[0].grad_fn) == inputs(ty.grad_fn, tps[0].grad_fn)


def test_lstm_cell_graph_node_count_matches_torch():
    """Guards against one node per chunk piece: a program walking next_functions counts nodes."""
    torch = pytest.importorskip("torch")

    def cell(mod, gates, c):
        i, f, g, o = gates.chunk(4, 1)
        c2 = mod.sigmoid(f) * c + mod.sigmoid(i) * mod.tanh(g)
        return mod.sigmoid(o) * mod.tanh(c2)

    def count(t):
        seen, stack = [], [t.grad_fn]  # the nodes themselves: a freed wrapper's id may be reused
        while stack:
            n = stack.pop()
            if n is None or any(n is m for m in seen):
                continue
            seen.append(n)
            stack.extend(m for m, _ in n.next_functions)
        return len(seen)

    g, c = rand_array((2, 8)), rand_array((2, 2))
    h = cell(pylucid, pylucid.tensor(g, requires_grad=True), pylucid.tensor(c, requires_grad=True))
    th = cell(torch, torch.tensor(g, requires_grad=True), torch.tensor(c, requires_grad=True))
    assert count(h) == count(th)


@pytest.mark.parametrize("name,op", OPS, ids=[n for n, _ in OPS])
def test_gradients_of_every_piece_combination_match_torch(name, op):
    """Guards against the shared backward dropping, misplacing or not zeroing a piece when only
    some pieces receive a gradient; on a contiguous and a non-contiguous input."""
    torch = pytest.importorskip("torch")
    arr = rand_array((4, 6))
    n = len(op(pylucid.tensor(arr)))
    for used in _subsets(n):
        for noncontig in (False, True):
            if noncontig:  # a transposed view as the input of the split
                x = pylucid.tensor(arr.T.copy(), dtype=F64, requires_grad=True)
                tx = torch.tensor(arr.T.copy(), requires_grad=True)
                xs, txs = x.t(), tx.t()
                assert not xs.is_contiguous()
            else:
                x = pylucid.tensor(arr, dtype=F64, requires_grad=True)
                tx = torch.tensor(arr, requires_grad=True)
                xs, txs = x * 1, tx * 1
            loss, tloss = _loss(op(xs), used), _loss(op(txs), used)
            if not tloss.requires_grad:  # only size-0 pieces used
                continue
            loss.backward()
            tloss.backward()
            np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,op", OPS, ids=[n for n, _ in OPS])
def test_gradcheck_and_gradgradcheck(name, op):
    """float64 finite differences: first and second order through the shared node, with the
    first piece unused (its gradient is missing) and the pieces as separate outputs."""
    x = pylucid.tensor(rand_array((4, 6)), dtype=F64, requires_grad=True)

    def fn(t):
        ps = op(t * 1.5)
        return tuple(p ** 2 for p in ps[1:]) if len(ps) > 1 else (ps[0] ** 2,)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))
    check_double_backward(fn, [x])


def test_double_backward_matches_torch():
    """Guards against the create_graph backward losing the missing pieces' zeros or the graph."""
    torch = pytest.importorskip("torch")
    arr = rand_array((3, 6))
    res = []
    for mod in (pylucid, torch):
        x = mod.tensor(arr, requires_grad=True)
        a, b, c = x.chunk(3, 1)
        y = (a ** 2 * c).sum()  # b unused
        (g,) = mod.autograd.grad(y, x, create_graph=True)
        (g ** 2).sum().backward()
        res.append((g.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)


def test_size_zero_pieces():
    """Guards against empty pieces (an empty dim, or zero sizes) breaking the shared backward."""
    x = pylucid.tensor(rand_array((2, 3)), dtype=F64, requires_grad=True)
    ps = x.split([0, 3, 0], 1)
    assert [tuple(p.shape) for p in ps] == [(2, 0), (2, 3), (2, 0)]
    (ps[1] * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 2.0))
    e = pylucid.zeros(0, 3, dtype=F64, requires_grad=True)
    ps = e.chunk(2, 0)
    assert len(ps) == 2 and ps[0].grad_fn is ps[1].grad_fn
    (ps[0].sum() + ps[1].sum()).backward()
    assert tuple(e.grad.shape) == (0, 3)
    assert e.unbind(0) == ()


def test_two_backward_calls_accumulate():
    """Guards against the shared node's buffer being reused or released between calls."""
    arr = rand_array((4, 6))
    x = pylucid.tensor(arr, dtype=F64, requires_grad=True)
    for _ in range(2):
        a, b, c = x.chunk(3, 1)
        (a * 2 + c * 3).sum().backward()
    want = np.zeros((4, 6))
    want[:, :2], want[:, 4:] = 4.0, 6.0
    np.testing.assert_allclose(x.grad.numpy(), want)
    # retain_graph: the same graph run twice adds twice
    x.grad = None
    a, b = x.chunk(2, 1)
    y = (a * b).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.concatenate([arr[:, 3:], arr[:, :3]], 1))


def test_backward_twice_without_retain_graph_raises():
    """Guards against a released shared node running again (PyTorch's freed-graph error)."""
    x = pylucid.tensor(rand_array((2, 4)), dtype=F64, requires_grad=True)
    a, b = (x * 1).chunk(2, 1)
    y = (a * b).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_tensor_hooks_and_retain_grad_see_only_their_piece():
    """Guards against a hook on piece i seeing or replacing another piece's gradient (the hooks
    of a node with several outputs are kept per output)."""
    torch = pytest.importorskip("torch")
    arr = rand_array((2, 6))
    seen = {}
    res = []
    for mod in (pylucid, torch):
        x = mod.tensor(arr, requires_grad=True)
        a, b, c = (x * 1).chunk(3, 1)
        a.retain_grad()
        b.retain_grad()
        c.retain_grad()
        b.register_hook(lambda g, mod=mod: seen.__setitem__(mod.__name__, g.numpy().copy()) or g * 10)
        ((a * 2).sum() + (b * 3).sum()).backward()  # c unused
        res.append((x.grad.numpy(), a.grad.numpy(), b.grad.numpy(), c.grad))
    for got, want in zip(res[0][:3], res[1][:3]):
        np.testing.assert_allclose(got, want)
    assert res[0][3] is None and res[1][3] is None
    np.testing.assert_allclose(seen["pylucid"], seen["torch"])


def test_hook_removal_on_a_piece():
    """Guards against removing a piece's hook searching the wrong output's hooks."""
    x = pylucid.tensor(rand_array((2, 4)), dtype=F64, requires_grad=True)
    a, b = x.chunk(2, 1)
    h = b.register_hook(lambda g: g * 100)
    h.remove()
    (a.sum() + b.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((2, 4)))


def test_node_hooks_see_every_output_like_torch():
    """Guards against Node.register_prehook / register_hook on the shared node seeing only one
    output: PyTorch passes one entry per output, None where no gradient came."""
    torch = pytest.importorskip("torch")
    arr = rand_array((2, 6))
    logs = []
    for mod in (pylucid, torch):
        log = []
        x = mod.tensor(arr, requires_grad=True)
        a, b, c = (x * 1).chunk(3, 1)
        node = a.grad_fn

        def pre(gout, log=log):
            log.append(("pre", [None if g is None else tuple(g.shape) for g in gout]))
            return tuple(None if g is None else g * 2 for g in gout)

        def post(gin, gout, log=log):
            log.append(("post", [None if g is None else g.numpy().round(12).tolist() for g in gin],
                        [None if g is None else g.numpy().round(12).tolist() for g in gout]))

        node.register_prehook(pre)
        node.register_hook(post)
        ((a * 3).sum() + c.sum()).backward()
        log.append(("grad", x.grad.numpy().tolist()))
        logs.append(log)
    assert logs[0] == logs[1]


def test_autograd_grad_wrt_pieces():
    """Guards against autograd.grad(inputs=pieces) capturing the wrong output of the shared node."""
    torch = pytest.importorskip("torch")
    arr = rand_array((3, 6))
    res = []
    for mod in (pylucid, torch):
        x = mod.tensor(arr, requires_grad=True)
        a, b, c = (x * 1).unbind(0)
        y = (a * b * 2 + c ** 2).sum()
        gs = mod.autograd.grad(y, (c, a, x), retain_graph=True)
        res.append([g.numpy() for g in gs])
        gb = mod.autograd.grad(y, b)[0]
        res[-1].append(gb.numpy())
    for got, want in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_pieces_as_roots():
    """Guards against several roots that are outputs of one node losing all but one gradient."""
    x = pylucid.tensor(rand_array((2, 4)), dtype=F64, requires_grad=True)
    a, b = x.chunk(2, 1)
    pylucid.autograd.backward([b, a], [pylucid.full((2, 2), 3.0, dtype=F64), pylucid.ones(2, 2, dtype=F64)])
    np.testing.assert_allclose(x.grad.numpy(), [[1, 1, 3, 3], [1, 1, 3, 3]])


def test_anomaly_mode_through_the_shared_node():
    """Guards against anomaly mode breaking (or blaming) the shared node: a NaN made upstream of
    it is reported by the node that made it."""
    x = pylucid.tensor([[1.0, -1.0, 2.0, 3.0]], dtype=F64, requires_grad=True)
    with pylucid.autograd.detect_anomaly():
        a, b = x.chunk(2, 1)
        (a * b).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [[2.0, 3.0, 1.0, -1.0]])
        a, b = x.chunk(2, 1)
        with pytest.raises(RuntimeError, match="SqrtBackward"):
            (a.sqrt() + b).sum().backward()


def test_inplace_on_a_piece_rewrites_the_base_like_torch():
    """Guards against an in-place op on a piece losing the rewrite of its base's history, or the
    other pieces (made before it) reading the old history. PyTorch refuses in-place writes into
    the outputs of split (its unsafe_split allows them without view tracking); pylucid keeps
    tracking them, so the reference is the same computation written out of place."""
    torch = pytest.importorskip("torch")
    arr = rand_array((2, 6))
    x = pylucid.tensor(arr, requires_grad=True)
    base = x * 1
    a, b, c = base.chunk(3, 1)
    b.mul_(2)
    loss = (base ** 2).sum() + (c * a).sum()
    loss.backward()
    tx = torch.tensor(arr, requires_grad=True)
    ta, tb, tc = (tx * 1).chunk(3, 1)
    tbase = torch.cat([ta, tb * 2, tc], 1)
    ((tbase ** 2).sum() + (tc * ta).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_inplace_on_a_piece_of_a_leaf_is_refused():
    """Guards against writing in place into a view of a leaf that requires grad (PyTorch refuses)."""
    x = pylucid.tensor(rand_array((2, 4)), requires_grad=True)
    a, _ = x.chunk(2, 1)
    with pytest.raises(RuntimeError):
        a.mul_(2)


def test_no_node_without_grad():
    """Guards against recording the shared node when nothing requires grad."""
    x = pylucid.tensor(rand_array((2, 4)), requires_grad=True)
    assert all(p.grad_fn is None for p in pylucid.tensor(rand_array((2, 4))).chunk(2, 1))
    with pylucid.no_grad():
        assert all(p.grad_fn is None and p.output_nr == 0 for p in x.chunk(2, 1))
