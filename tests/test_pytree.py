"""utils._pytree: flatten / unflatten / map over lists, tuples, namedtuples, dicts (plain, ordered,
default), deques and None, the printed TreeSpec and the errors, each against PyTorch's."""
import collections

import pylucid
import pytest
from pylucid.utils import _pytree as lp

Point = collections.namedtuple("Point", "x y")


def _trees():
    return [
        {"b": [1, (2, None)], "a": Point(3, {"z": 4}), "c": collections.OrderedDict(q=5),
         "d": collections.defaultdict(list, {1: 2}), "e": collections.deque([7], maxlen=3)},
        [],
        (),
        None,
        5,
        "text",
        [[1.5], {"k": (2, [3])}],
    ]


def _pytree():
    pytest.importorskip("torch")
    import torch.utils._pytree as tp
    return tp


@pytest.mark.parametrize("i", range(len(_trees())))
def test_flatten_unflatten_match_torch(i):
    tp = _pytree()
    tree = _trees()[i]
    leaves, spec = lp.tree_flatten(tree)
    t_leaves, t_spec = tp.tree_flatten(tree)
    assert leaves == t_leaves
    assert repr(spec) == repr(t_spec)
    assert (spec.num_leaves, spec.num_nodes, spec.is_leaf()) == (t_spec.num_leaves, t_spec.num_nodes, t_spec.is_leaf())
    new = [("v", x) for x in leaves]
    assert repr(lp.tree_unflatten(new, spec)) == repr(tp.tree_unflatten(new, t_spec))
    assert lp.tree_leaves(tree) == tp.tree_leaves(tree)
    assert spec == lp.tree_structure(tree)


def test_map_and_map_only_match_torch():
    tp = _pytree()
    a = {"w": [1, 2.0], "s": Point("u", 3)}
    b = collections.OrderedDict(s=Point("v", 30), w=[10, 20.0])
    for mod in (lp, tp):
        assert mod.tree_map(lambda x, y: x + y, a, b) == {"w": [11, 22.0], "s": Point("uv", 33)}
    assert lp.tree_map_only(int, lambda x: -x, a) == tp.tree_map_only(int, lambda x: -x, a)
    assert lp.tree_map_only((int, float), abs, a) == tp.tree_map_only((int, float), abs, a)
    assert lp.tree_map_only(int | str, str, a) == tp.tree_map_only(int | str, str, a)
    pred = lambda x: x == 2.0
    assert lp.tree_map_only(pred, lambda x: 0, a) == tp.tree_map_only(pred, lambda x: 0, a)
    single = lambda x: isinstance(x, list) and len(x) == 1
    assert lp.tree_leaves([1, [2]], is_leaf=single) == tp.tree_leaves([1, [2]], is_leaf=single)


@pytest.mark.parametrize("args", [([1, 2], [3]), ([1, 2], (3, 4)), ({"a": 1}, {"b": 1}), ({"a": 1}, [3])], ids=repr)
def test_mismatch_errors_match_torch(args):
    tp = _pytree()
    with pytest.raises(ValueError) as ours:
        lp.tree_map(lambda x, y: x, *args)
    with pytest.raises(ValueError) as theirs:
        tp.tree_map(lambda x, y: x, *args)
    assert str(ours.value) == str(theirs.value)


def test_tensors_are_leaves_without_torch():
    x = pylucid.ones(2)
    batch = {"inputs": [x, x * 2], "mask": None, "meta": Point(x * 3, 7)}
    leaves, spec = lp.tree_flatten(batch)
    assert [type(v) for v in leaves] == [pylucid.Tensor] * 2 + [type(None), pylucid.Tensor, int]
    doubled = lp.tree_map_only(pylucid.Tensor, lambda t: t * 2, batch)
    assert doubled["meta"].x.tolist() == [6.0, 6.0] and doubled["meta"].y == 7 and doubled["mask"] is None
    assert lp.tree_structure(doubled) == spec
    with pytest.raises(ValueError, match="has length 1 but the spec refers to a pytree that holds 5 items"):
        lp.tree_unflatten([1], spec)
    with pytest.raises(TypeError, match="TreeSpec"):
        lp.tree_unflatten([1], [1])
