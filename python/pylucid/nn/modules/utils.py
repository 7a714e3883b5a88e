"""``torch.nn.modules.utils``: the argument-normalising helpers custom layers import
(``_pair(3) == (3, 3)``) and ``consume_prefix_in_state_dict_if_present``, which strips the
``module.`` prefix a DataParallel/DDP checkpoint's keys carry before ``load_state_dict``."""
import collections.abc
import itertools

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(itertools.repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``t`` reversed with each element repeated ``n`` times: a conv layer's per-dim padding as
    ``F.pad`` takes it (last dim first, both sides)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with each None replaced by the input's size there."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strips ``prefix`` from the keys of ``state_dict`` that start with it, in place (the keys
    keep their order relative to each other; the renamed ones move to the end, as PyTorch's)."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if not key:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                metadata[key[len(prefix):]] = metadata.pop(key)
