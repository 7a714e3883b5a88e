"""``GradScaler``: dynamic loss scaling, PyTorch's ``torch.amp.GradScaler``.

The loss is multiplied by a scale before ``backward()`` so that small float16 gradients do not
flush to zero; ``step`` divides the gradients by the scale again and skips the optimizer step when
any of them is inf or NaN; ``update`` halves the scale after such a step (``backoff_factor``) and
doubles it (``growth_factor``) after ``growth_interval`` clean steps in a row.

pylucid runs on the CPU: ``GradScaler("cpu")`` is the working scaler. ``GradScaler()`` (device
``"cuda"``, PyTorch's default) warns that CUDA is not available and disables itself, exactly as
PyTorch does on a machine without a GPU; a disabled scaler (also ``enabled=False``) passes
everything through: ``scale(loss)`` is ``loss``, ``step(opt)`` is ``opt.step()``, ``update()``
does nothing, ``get_scale()`` is 1.0 and ``state_dict()`` is empty.

>>> import pylucid
>>> w = pylucid.tensor([1.0, 2.0], requires_grad=True)
>>> opt = pylucid.optim.SGD([w], lr=0.1)
>>> scaler = pylucid.amp.GradScaler("cpu", init_scale=1024.0)
>>> scaler.scale((w * w).sum()).backward()
>>> w.grad.tolist()
[2048.0, 4096.0]
>>> scaler.step(opt); scaler.update()
>>> w.tolist(), scaler.get_scale()
([0.800000011920929, 1.600000023841858], 1024.0)
"""
import warnings
from collections import defaultdict
from enum import Enum
from typing import Any

from . import _C
from ._C import Tensor

__all__ = ["GradScaler", "OptState", "cuda_autocast"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf": None}


class GradScaler:
    """PyTorch's ``torch.amp.GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)``."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = str(device)
        self._enabled = bool(enabled)
        if self._device.startswith("cuda") and self._enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=_stacklevel(self))
            self._enabled = False
        elif not self._device.startswith(("cuda", "cpu")):
            raise _C.LucidError(f"GradScaler: device must be 'cpu' (or 'cuda', which disables the scaler), "
                                f"got {device!r}")
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("GradScaler: The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("GradScaler: The backoff factor must be < 1.0.")
            self._init_scale = float(init_scale)
            self._scale: Any = None  # a float32 0-d tensor, made by the first scale()
            self._growth_factor = float(growth_factor)
            self._backoff_factor = float(backoff_factor)
            self._growth_interval = int(growth_interval)
            self._init_growth_tracker = 0
            self._growth_tracker: Any = None  # consecutive steps without inf/NaN
            self._per_optimizer_states: Any = defaultdict(_fresh_state)

    # ---- scaling ------------------------------------------------------------------------------

    def _lazy_init(self):
        if self._scale is None:
            from ._tensor import full
            self._scale = full((), self._init_scale, dtype=_C.dtype.float32)
            self._growth_tracker = int(self._init_growth_tracker)

    def _require_scale(self, funcname):
        if self._scale is None:
            raise _C.LucidError(f"GradScaler: Attempted {funcname} but _scale is None.  This may indicate your "
                                "script did not use scaler.scale(loss or outputs) earlier in the iteration.")

    def scale(self, outputs):
        """``outputs`` (a Tensor, or an iterable of them, nested) multiplied by the scale."""
        if not self._enabled:
            return outputs
        self._lazy_init()

        def apply(v):
            if isinstance(v, Tensor):
                return v * self._scale
            if isinstance(v, (list, tuple)):
                out = [apply(e) for e in v]
                return type(v)(out) if not hasattr(v, "_fields") else type(v)(*out)
            if hasattr(v, "__iter__") and not isinstance(v, (str, bytes, dict)):
                return map(apply, v)
            raise ValueError("GradScaler.scale: outputs must be a Tensor or an iterable of Tensors, got "
                             f"{type(v).__name__}")
        return apply(outputs)

    def unscale_(self, optimizer):
        """Divides ``optimizer``'s gradients by the scale in place (once per iteration) and notes
        whether any of them is inf or NaN; call it before clipping gradients."""
        if not self._enabled:
            return
        self._require_scale("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise _C.LucidError("GradScaler: unscale_() has already been called on this optimizer since the last "
                                "update().")
        if state["stage"] is OptState.STEPPED:
            raise _C.LucidError("GradScaler: unscale_() is being called after step().")
        # PyTorch: the reciprocal in float64, rounded to float32.
        inv_scale = float(_to_f32(1.0 / float(self._scale.item())))
        found = False
        from .autograd.grad_mode import no_grad
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype == _C.dtype.float16:
                        raise ValueError("GradScaler: Attempting to unscale FP16 gradients.")
                    if not found and not bool(g.isfinite().all()):
                        found = True
                    g.mul_(inv_scale)
        state["found_inf"] = 1.0 if found else 0.0
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``unscale_(optimizer)`` (unless done already this iteration), then ``optimizer.step()``
        unless a gradient was inf or NaN. Returns what ``optimizer.step`` returned, or None."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise _C.LucidError("GradScaler: Closure use is not currently supported if GradScaler is enabled.")
        self._require_scale("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise _C.LucidError("GradScaler: step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """End of iteration: set the scale to ``new_scale`` if given; else back off after an
        inf/NaN step or grow after ``growth_interval`` clean steps."""
        if not self._enabled:
            return
        self._require_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise _C.LucidError("GradScaler.update: new_scale should be a float or a 1-element tensor with "
                                        "requires_grad=False.")
                new_scale = new_scale.item()
            self._scale.fill_(float(new_scale))
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values() if s["found_inf"] is not None]
            if not found:
                raise _C.LucidError("GradScaler: No inf checks were recorded prior to update.")
            if sum(found):
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    grown = float(_to_f32(self._scale.item() * self._growth_factor))
                    if grown != float("inf"):
                        self._scale.fill_(grown)
                    successful = 0
                self._growth_tracker = successful
        self._per_optimizer_states = defaultdict(_fresh_state)

    # ---- accessors and state ------------------------------------------------------------------

    def get_scale(self):
        """The current scale as a float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """``{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}``
        (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Loads a ``state_dict()`` (a no-op when disabled)."""
        if not self._enabled:
            return
        if not isinstance(state_dict, dict):
            raise _C.DtypeMismatch(f"GradScaler.load_state_dict: expected a dict, got {type(state_dict).__name__}")
        if len(state_dict) == 0:
            raise _C.LucidError("GradScaler.load_state_dict: The source state dict is empty, possibly because it was "
                                "saved from a disabled instance of GradScaler.")
        missing = [k for k in ("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker")
                   if k not in state_dict]
        if missing:
            raise _C.LucidError(f"GradScaler.load_state_dict: missing key(s) {missing}")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise _C.LucidError("GradScaler: A GradScaler instance may only be pickled at the beginning of an "
                                    "iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_fresh_state)


def _to_f32(x):
    import numpy as np
    return np.float32(x)


def _stacklevel(obj):
    # Warn at the caller's line: one frame more when constructed through a deprecated alias.
    return 3 if type(obj) is not GradScaler else 2


def _deprecated_scaler(device, qualname):
    class _Scaler(GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            warnings.warn(f"`{qualname}(args...)` is deprecated. Please use `torch.amp.GradScaler('{device}', "
                          "args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
    _Scaler.__name__ = _Scaler.__qualname__ = "GradScaler"
    _Scaler.__doc__ = f"``{qualname}``: ``GradScaler('{device}', ...)``, deprecated in PyTorch."
    return _Scaler


cuda_GradScaler = _deprecated_scaler("cuda", "torch.cuda.amp.GradScaler")
cpu_GradScaler = _deprecated_scaler("cpu", "torch.cpu.amp.GradScaler")


class cuda_autocast:
    """``torch.cuda.amp.autocast(enabled=True, dtype=float16, cache_enabled=True)``: deprecated in
    PyTorch, and on a machine without CUDA it warns and does nothing, which is what it does here
    (a context manager and decorator that leaves autocast as it is)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        if enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
        self.enabled = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn
