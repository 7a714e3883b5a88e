"""``functional_call``: run a module with some of its parameters and buffers replaced by given
tensors, without changing the module (PyTorch's ``torch.func.functional_call``, and the
deprecated ``torch.nn.utils.stateless.functional_call``). The replacements take part in autograd,
so gradients with respect to them come out of an ordinary backward (meta-learning, per-example
weights, ensembling)."""
import contextlib
import warnings

from ... import _C

__all__ = ["functional_call"]


def _owner(module, name):
    prefix, _, attr = name.rpartition(".")
    return (module.get_submodule(prefix) if prefix else module), attr


@contextlib.contextmanager
def _swapped(module, values, tie_weights, strict):
    named = {}
    for kind in ("named_parameters", "named_buffers"):
        for n, t in getattr(module, kind)(remove_duplicate=False):
            named[n] = t
    if strict:
        missing = [n for n in named if n not in values]
        unexpected = [n for n in values if n not in named]
        if missing or unexpected:
            raise _C.LucidError(f"Error(s) in reparametrizing for {type(module).__name__}: missing keys {missing}, "
                                f"unexpected keys {unexpected}")
    values = dict(values)
    if tie_weights:  # a tensor registered under several names is replaced under all of them
        by_id = {id(named[n]): v for n, v in values.items() if n in named and named[n] is not None}
        for n, t in named.items():
            if n not in values and t is not None and id(t) in by_id:
                values[n] = by_id[id(t)]
    saved = []
    try:
        for name, value in values.items():
            owner, attr = _owner(module, name)
            for reg in ("_parameters", "_buffers"):
                d = getattr(owner, reg)
                if attr in d:
                    saved.append((d, attr, d[attr]))
                    d[attr] = value
                    break
            else:
                saved.append((owner.__dict__, attr, owner.__dict__.get(attr, _MISSING)))
                object.__setattr__(owner, attr, value)
        yield
    finally:
        for d, attr, old in reversed(saved):
            if old is _MISSING:
                d.pop(attr, None)
            else:
                d[attr] = old


_MISSING = object()


def _call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (tuple, list)):
        merged: dict = {}
        for d in dicts:
            overlap = set(merged) & set(d)
            if overlap:
                raise ValueError(f"{sorted(overlap)} appeared in multiple dictionaries; behavior of functional "
                                 "call is ambiguous")
            merged.update(d)
        dicts = merged
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, dicts, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Deprecated in PyTorch (warns): use ``pylucid.func.functional_call``, the same function."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _call(module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights, strict=strict)
