"""``Optimizer``: the base class holding param groups and per-parameter state (PyTorch's API).

A param group is a dict with ``"params"`` (a list of leaf tensors) and every hyperparameter;
hyperparameters missing from a group are filled from the optimizer's defaults, so
``SGD([{"params": a}, {"params": b, "lr": 1e-2}], lr=1e-1)`` trains ``b`` ten times slower.
``state`` maps each parameter to a dict of its tensors (e.g. ``exp_avg``), created on the
first ``step()`` that sees a gradient for it.

``state_dict()`` returns ``{"state": {index: {...}}, "param_groups": [{..., "params": [index,
...]}]}`` with parameters replaced by their position across all groups, so it can be saved with
:func:`pylucid.save` and loaded into a fresh optimizer over equivalent parameters.
"""
from collections import defaultdict
from itertools import chain
from typing import Any

from .. import _C
from .._C import Tensor
from .._errors import InvalidValue as _InvalidValue

__all__ = ["Optimizer", "required"]


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


def _scalar_dtype(fused=False):
    """The dtype of an optimizer's scalar state (``step``, NAdam's ``mu_product``, ASGD's ``eta``
    and ``mu``), as PyTorch's ``_get_scalar_dtype``: float64 when the default dtype is float64
    (so a float64 program's NAdam/ASGD coefficients are not rounded to float32), else float32;
    always float32 for ``fused=True``."""
    from .._tensor import get_default_dtype  # noqa: PLC0415

    return _C.dtype.float64 if not fused and get_default_dtype() == _C.dtype.float64 else _C.dtype.float32


class Optimizer:
    """Base class: subclasses pass their defaults and implement ``step()``."""

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise _C.DtypeMismatch(f"{type(self).__name__}: params must be an iterable of Tensors or of "
                                   "dicts, got a Tensor (wrap it in a list)")
        param_groups = list(params)
        if not param_groups:
            raise _InvalidValue(f"{type(self).__name__}: optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a group (a dict with ``"params"`` and optional hyperparameters)."""
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise _C.DtypeMismatch(f"{name}: a param group must be a dict, got {type(param_group).__name__}")
        if "params" not in param_group:
            raise _C.LucidError(f"{name}: a param group needs a 'params' entry")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise _C.DtypeMismatch(f"{name}: params must be an ordered collection; sets change order "
                                   "between runs, use a list")
        else:
            params = list(params)
        seen = set()
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise _C.DtypeMismatch(f"{name}: can only optimize Tensors, but param {i} is a "
                                       f"{type(p).__name__}")
            if not p.is_leaf:
                raise _InvalidValue(f"{name}: can't optimize a non-leaf Tensor (param {i}); use a "
                                    "Parameter or a tensor created with requires_grad=True")
            if not p.dtype.is_floating_point:
                raise _C.DtypeMismatch(f"{name}: param {i} has dtype {p.dtype}, expected a floating dtype")
            if id(p) in seen:
                raise _C.LucidError(f"{name}: param {i} appears twice in the same param group")
            seen.add(id(p))
        group = dict(param_group)
        group["params"] = params
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise _InvalidValue(f"{name}: parameter group didn't specify a value of required "
                                    f"optimization parameter {k}")
            group.setdefault(k, v)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if existing & seen:
            raise _InvalidValue(f"{name}: some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Reset every parameter's gradient: to None (default: the next backward allocates a
        fresh one) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def step(self, closure=None):
        """Update the parameters from their gradients (subclasses implement this)."""
        raise _C.LucidError(f"{type(self).__name__}: step() is not implemented")

    def _run_closure(self, closure):
        if closure is None:
            return None
        from ..autograd.grad_mode import enable_grad

        with enable_grad():
            return closure()

    def _with_grads(self, group):
        """(parameter, gradient, state) for each parameter of `group` that has a gradient; the
        gradient is negated when the group maximizes (the Python-side optimizers' step loop)."""
        for p in group["params"]:
            if p.grad is None:
                continue
            yield p, (-p.grad if group["maximize"] else p.grad), self.state[p]

    # ---- state ---------------------------------------------------------------------------

    def state_dict(self):
        """``{"state": {param index: {...}}, "param_groups": [...]}`` (tensors shared, not copied)."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {}
        for p, s in self.state.items():
            if isinstance(p, Tensor) and id(p) in index:
                state[index[id(p)]] = s
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()`` of an optimizer over parameters of the same shapes, in the
        same group structure. Floating state tensors are copied and cast to their parameter's
        dtype (``step`` counters keep theirs); hyperparameters come from the saved groups.
        Nothing changes unless every check passes."""
        name = type(self).__name__
        if not isinstance(state_dict, dict):
            raise _C.DtypeMismatch(f"{name}.load_state_dict: expected a dict, got {type(state_dict).__name__}")
        for key in ("state", "param_groups"):
            if key not in state_dict:
                raise _InvalidValue(f"{name}.load_state_dict: missing key {key!r} (expected the output of "
                                    "Optimizer.state_dict())")
        unexpected = [k for k in state_dict if k not in ("state", "param_groups")]
        if unexpected:
            raise _InvalidValue(f"{name}.load_state_dict: unexpected key(s) "
                                + ", ".join(repr(k) for k in unexpected))
        saved_groups = state_dict["param_groups"]
        groups = self.param_groups
        if len(saved_groups) != len(groups):
            raise _C.ShapeMismatch(f"{name}.load_state_dict: loaded state dict has {len(saved_groups)} "
                                   f"parameter group(s), the optimizer has {len(groups)}")
        for i, (g, sg) in enumerate(zip(groups, saved_groups)):
            if not isinstance(sg, dict) or "params" not in sg:
                raise _InvalidValue(f"{name}.load_state_dict: param group {i} is not a dict with 'params'")
            if len(g["params"]) != len(sg["params"]):
                raise _C.ShapeMismatch(f"{name}.load_state_dict: param group {i} has {len(sg['params'])} "
                                       f"params in the state dict, the optimizer's has {len(g['params'])}")
        id_map = dict(zip(chain.from_iterable(sg["params"] for sg in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        saved_state = state_dict["state"]
        if not isinstance(saved_state, dict):
            raise _C.DtypeMismatch(f"{name}.load_state_dict: 'state' must be a dict, got "
                                   f"{type(saved_state).__name__}")
        new_state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for k, v in saved_state.items():
            if k not in id_map:
                raise _InvalidValue(f"{name}.load_state_dict: state for param index {k!r}, which is in "
                                    "no param group")
            p = id_map[k]
            if not isinstance(v, dict):
                raise _C.DtypeMismatch(f"{name}.load_state_dict: state of param {k!r} must be a dict, got "
                                       f"{type(v).__name__}")
            new_state[p] = {key: self._load_state_value(p, key, val, k) for key, val in v.items()}
        new_groups = []
        for g, sg in zip(groups, saved_groups):
            ng = {key: val for key, val in sg.items() if key != "params"}
            for key, val in self.defaults.items():  # options added since the save keep defaults
                ng.setdefault(key, g.get(key, val))
            if "betas" in ng:
                ng["betas"] = tuple(ng["betas"])
            ng["params"] = g["params"]
            new_groups.append(ng)
        self.state = new_state
        self.param_groups[:] = new_groups

    def _load_state_value(self, p, key, value, index):
        if not isinstance(value, Tensor):
            return value
        if key == "step" or (value.ndim == 0 and p.ndim != 0):  # scalar state: step, NAdam's mu_product
            return value.detach().clone()
        if tuple(value.shape) != tuple(p.shape):
            raise _C.ShapeMismatch(f"{type(self).__name__}.load_state_dict: state {key!r} of param {index} "
                                   f"has shape {list(value.shape)}, the param has {list(p.shape)}")
        out = value.detach()
        if out.dtype.is_floating_point:
            out = out.to(p.dtype)
        return out.contiguous().clone()

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")  # PyTorch separates the groups by an empty line
            lines.append(f"Parameter Group {i}")
            for k in sorted(group):
                if k != "params":
                    lines.append(f"    {k}: {group[k]}")
        lines.append(")")
        return "\n".join(lines)
