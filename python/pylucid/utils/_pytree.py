"""PyTorch's ``torch.utils._pytree``: nested containers as a flat list of leaves plus a structure.

A pytree is a leaf or a container node holding pytrees. The nodes are ``list``, ``tuple``,
namedtuples, ``dict``, ``OrderedDict``, ``defaultdict`` and ``deque``; everything else (tensors,
numbers, strings, ``None``) is a leaf. Dicts keep their insertion order, as PyTorch's.

>>> from pylucid.utils._pytree import tree_flatten, tree_map, tree_unflatten
>>> leaves, spec = tree_flatten({"x": [1, 2], "y": (3, None)})
>>> leaves
[1, 2, 3, None]
>>> tree_unflatten([10, 20, 30, 40], spec)
{'x': [10, 20], 'y': (30, 40)}
>>> tree_map(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)])
[11, (22, 33)]
"""
import collections
from typing import Any

__all__ = ["LeafSpec", "TreeSpec", "tree_all", "tree_any", "tree_flatten", "tree_leaves", "tree_map",
           "tree_map_only", "tree_structure", "tree_unflatten"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_kind(x):
    """The node kind of ``x`` (its name in a TreeSpec) or None for a leaf."""
    if _is_namedtuple(x):
        return "namedtuple"
    for t in (collections.OrderedDict, collections.defaultdict, dict, list, tuple, collections.deque):
        if type(x) is t:
            return t.__name__
    return None


def _children_and_context(x, kind):
    if kind == "namedtuple":
        return list(x), type(x)
    if kind == "defaultdict":
        return list(x.values()), [x.default_factory, list(x)]
    if kind in ("dict", "OrderedDict"):
        return list(x.values()), list(x)
    if kind == "deque":
        return list(x), x.maxlen
    return list(x), None


_DICT_KINDS = ("dict", "OrderedDict", "defaultdict")
_KIND_TYPES = {"OrderedDict": collections.OrderedDict, "defaultdict": collections.defaultdict, "dict": dict,
               "list": list, "tuple": tuple, "deque": collections.deque}


def _rebuild(kind, context, children):
    if kind == "namedtuple":
        return context(*children)
    if kind == "defaultdict":
        return collections.defaultdict(context[0], zip(context[1], children))
    if kind in ("dict", "OrderedDict"):
        return _KIND_TYPES[kind](zip(context, children))
    if kind == "deque":
        return collections.deque(children, maxlen=context)
    return _KIND_TYPES[kind](children)


class TreeSpec:
    """The structure of a pytree: the node's type, its context (dict keys, the namedtuple class)
    and one TreeSpec per child; a leaf's spec has ``type`` None and prints as ``*``."""

    def __init__(self, type, context, children_specs, kind=None):
        self.type = type
        self.context = context
        self._children = list(children_specs)
        self._kind = kind if kind is not None else (type.__name__ if type is not None else None)
        self.num_leaves: int = 1 if self.is_leaf() else sum(c.num_leaves for c in self._children)
        self.num_nodes: int = 1 + sum(c.num_nodes for c in self._children)
        self.num_children: int = len(self._children)

    def is_leaf(self):
        return self.type is None

    def children(self):
        return list(self._children)

    def child(self, index):
        return self._children[index]

    @property
    def children_specs(self):
        return list(self._children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type is other.type and self.context == other.context
                and self._children == other._children)

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self._children)))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        indent += 2
        parts = [c.__repr__(indent) for c in self._children]
        inner = (",\n" + " " * indent).join(parts)
        return f"TreeSpec({self._kind}, {self.context}, [{inner}])"

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this structure down to them)."""
        out: list = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, tree, out):
        if self.is_leaf():
            out.append(tree)
            return
        kind = _node_kind(tree)
        node_type = type(tree) if kind == "namedtuple" else _KIND_TYPES.get(kind)
        if self._kind in _DICT_KINDS and kind in _DICT_KINDS:
            keys = self.context if self._kind != "defaultdict" else self.context[1]
            if set(keys) != set(tree):
                raise ValueError(f"Node keys mismatch; missing key(s): {set(keys) - set(tree)}; "
                                 f"extra key(s): {set(tree) - set(keys)}.")
            children = [tree[k] for k in keys]
        else:
            if kind != self._kind or (kind == "namedtuple" and node_type is not self.type):
                raise ValueError(f"Node type mismatch; expected {self.type}, but got {node_type}.")
            children = _children_and_context(tree, kind)[0]
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
        for spec, child in zip(self._children, children):
            spec._flatten_up_to(child, out)

    def unflatten(self, leaves):
        """The pytree with this structure and ``leaves`` in order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                             f"refers to a pytree that holds {self.num_leaves} items ({self}).")
        it = iter(leaves)
        return self._build(it)

    def _build(self, it):
        if self.is_leaf():
            return next(it)
        return _rebuild(self._kind, self.context, [c._build(it) for c in self._children])


def LeafSpec():
    """The spec of a single leaf (PyTorch's deprecated spelling of a leaf TreeSpec)."""
    return TreeSpec(None, None, [])


def _flatten(tree, is_leaf, leaves):
    kind = None if (is_leaf is not None and is_leaf(tree)) else _node_kind(tree)
    if kind is None:
        leaves.append(tree)
        return LeafSpec()
    children, context = _children_and_context(tree, kind)
    node_type = type(tree) if kind == "namedtuple" else _KIND_TYPES[kind]
    return TreeSpec(node_type, context, [_flatten(c, is_leaf, leaves) for c in children], kind=kind)


def tree_flatten(tree: Any, is_leaf=None) -> tuple[list[Any], TreeSpec]:
    """``(leaves, spec)``: the leaves of ``tree`` in order and its structure. ``is_leaf(x)`` True
    stops the descent at ``x``."""
    leaves: list = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def tree_unflatten(leaves, treespec: TreeSpec) -> Any:
    """The pytree with ``treespec``'s structure holding ``leaves`` (inverse of tree_flatten)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec "
                        f"but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf=None) -> list[Any]:
    """The leaves of ``tree`` in order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf=None) -> TreeSpec:
    """The TreeSpec of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree: Any, *rests: Any, is_leaf=None) -> Any:
    """``tree``'s structure with ``func(leaf, *matching leaves of rests)`` at every leaf; each of
    ``rests`` must have ``tree``'s structure (or a leaf where ``tree`` has one)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*columns))


def _only(type_or_types_or_pred, func):
    if isinstance(type_or_types_or_pred, (type, tuple)) or hasattr(type_or_types_or_pred, "__args__"):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError(f"tree_map_only: expected a type, a tuple of types or a predicate, got "
                        f"{type(type_or_types_or_pred).__name__}")
    return lambda x: func(x) if pred(x) else x


def tree_map_only(type_or_types_or_pred, /, func, tree: Any, is_leaf=None) -> Any:
    """tree_map applying ``func`` only to the leaves that are instances of the type(s) (or pass
    the predicate); the other leaves are kept."""
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree: Any, is_leaf=None) -> bool:
    """Whether ``pred`` holds for every leaf."""
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any(pred, tree: Any, is_leaf=None) -> bool:
    """Whether ``pred`` holds for some leaf."""
    return any(pred(x) for x in tree_leaves(tree, is_leaf))
