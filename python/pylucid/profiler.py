"""``torch.profiler`` for pylucid: where does a step's time go.

``profile()`` is a context manager that, while active, times every call a program makes through
pylucid's public surface: the functions of ``pylucid`` and ``pylucid.nn.functional`` and the
methods and operators of ``Tensor`` (``x @ w``, ``x.relu()``, ``loss.backward()``), plus the
ranges named with ``record_function``. Times are wall-clock, taken with ``time.perf_counter_ns``
around each call; a call made inside another (``F.linear`` calling ``Tensor.t``) is its child,
and ``self`` time is a call's time less its children's. The C++ ops that pylucid's Python code
calls are timed too, named ``lucid::<op>`` (as PyTorch names its kernels ``aten::<op>``).
``key_averages().table()`` prints them as PyTorch's table does. Calls that pylucid's own code
makes through names it imported earlier are not wrapped, so their time counts as the caller's
``self`` time.

Only the CPU exists: ``ProfilerActivity.CUDA`` is accepted and records nothing more.
``record_shapes``, ``profile_memory``, ``with_stack``, ``with_flops`` and ``with_modules`` are
accepted and ignored.

>>> import pylucid
>>> from pylucid.profiler import profile, record_function
>>> with profile() as prof:
...     with record_function("my_block"):
...         y = pylucid.ones(4, 4) @ pylucid.ones(4, 4)
>>> sorted(e.key for e in prof.key_averages())
['__matmul__', 'lucid::full', 'my_block', 'ones']
"""
import builtins
import enum
import functools
import json
import threading
import time

from . import _C

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


class ProfilerActivity(enum.Enum):
    """What to profile: ``CPU`` (the only device pylucid has) or ``CUDA`` (accepted, nothing to time)."""

    CPU = 0
    CUDA = 1


def supported_activities():
    """The activities that record something here: ``{ProfilerActivity.CPU}``."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What a ``schedule`` asks of a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """PyTorch's step schedule: after ``skip_first`` steps, cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps (the last one saves), ``repeat`` times (0:
    forever). Returns ``fn(step) -> ProfilerAction``."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")

    def fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:  # start recording right away instead of waiting first
            step += wait
        period = wait + warmup + active
        if repeat > 0 and step / period >= repeat:
            return ProfilerAction.NONE
        mod = step % period
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < period - 1 else ProfilerAction.RECORD_AND_SAVE
    return fn


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` handler writing each saved trace as a Chrome trace JSON file in
    ``dir_name`` (what TensorBoard's profiler plugin reads)."""
    import os

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{os.uname().nodename}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(dir_name, f"{name}.{time.time_ns() // 1000000}.pt.trace.json"))
    return handler


# ---- events -----------------------------------------------------------------------------------

class FunctionEvent:
    """One timed call: ``name``, start and end (microseconds since the profile began),
    ``cpu_time_total`` and ``self_cpu_time_total`` (microseconds) and its ``cpu_children``."""

    def __init__(self, name, start_us, thread):
        self.name = self.key = name
        self.start_us = start_us
        self.end_us = start_us
        self.thread = thread
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - builtins.sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    def __repr__(self):
        return f"<FunctionEvent name={self.name} cpu_time_total={_format_time(self.cpu_time_total)}>"


class FunctionEventAvg:
    """The events of one name added up: ``key``, ``count``, ``cpu_time_total``,
    ``self_cpu_time_total`` and the average ``cpu_time`` (microseconds)."""

    def __init__(self, key):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, ev):
        self.count += 1
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time_total)} count={self.count}>")


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


_SORT_KEYS = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total": "self_cpu_time_total",
              "cpu_time": "cpu_time", "count": "count", "cuda_time_total": "cpu_time_total",
              "self_cuda_time_total": "self_cpu_time_total", "device_time_total": "cpu_time_total",
              "self_device_time_total": "self_cpu_time_total", "cpu_memory_usage": "cpu_time_total",
              "self_cpu_memory_usage": "self_cpu_time_total"}


class EventList(list):
    """A list of events (``FunctionEvent`` or ``FunctionEventAvg``) with PyTorch's ``table()``."""

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """The events as PyTorch's text table: Name, Self CPU %, Self CPU, CPU total %, CPU total,
        CPU time avg, # of Calls; sorted by ``sort_by`` (e.g. ``"cpu_time_total"``) descending."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise _C.LucidError(f"table: unknown sort_by {sort_by!r}; expected one of {sorted(_SORT_KEYS)}")
            attr = _SORT_KEYS[sort_by]
            rows.sort(key=lambda e: getattr(e, attr), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        self_total = builtins.sum(e.self_cpu_time_total for e in self) or 1.0
        name_w = builtins.min(builtins.max([len("Name")] + [len(e.key) for e in rows]) + 4, max_name_column_width + 4)
        cols = [("Name", name_w), ("Self CPU %", 12), ("Self CPU", 12), ("CPU total %", 12), ("CPU total", 12),
                ("CPU time avg", 14), ("# of Calls", 12)]
        sep = "-" * (name_w - 2) + "  " + "  ".join("-" * (w - 2) for _, w in cols[1:])

        def line(vals):
            first = vals[0][:name_w - 2]
            return first.ljust(name_w - 2) + "  " + "  ".join(str(v).rjust(w - 2) for v, (_, w) in zip(vals[1:], cols[1:]))

        out = []
        if header:
            out.append("=" * len(sep))
            out.append(header)
        out += [sep, line([c for c, _ in cols]), sep]
        for e in rows:
            out.append(line([e.key, f"{100.0 * e.self_cpu_time_total / self_total:.2f}%",
                             _format_time(e.self_cpu_time_total),
                             f"{100.0 * e.cpu_time_total / self_total:.2f}%", _format_time(e.cpu_time_total),
                             _format_time(e.cpu_time), e.count]))
        out.append(sep)
        out.append(f"Self CPU time total: {_format_time(self_total if self else 0.0)}")
        return "\n".join(out) + "\n"

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One ``FunctionEventAvg`` per event name, in first-seen order."""
        avgs: dict = {}
        for e in self:
            avgs.setdefault(e.key, FunctionEventAvg(e.key)).add(e)
        return EventList(avgs.values())

    @property
    def self_cpu_time_total(self):
        return builtins.sum(e.self_cpu_time_total for e in self)


# ---- recording --------------------------------------------------------------------------------

_local = threading.local()
_ACTIVE: list = []  # the recording profilers (innermost last); the wrappers read it on every call
_LOCK = threading.Lock()


def _record(name):
    """Opens an event on every recording profiler; returns the closer."""
    profs = [p for p in _ACTIVE if p._recording]
    if not profs:
        return None
    now = time.perf_counter_ns()
    opened = []
    for p in profs:
        stack = p._stack()
        ev = FunctionEvent(name, (now - p._t0) / 1000.0, threading.get_ident())
        if stack:
            ev.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(ev)
        stack.append(ev)
        with _LOCK:
            p._events.append(ev)
        opened.append((p, ev))
    return opened


def _close(opened):
    now = time.perf_counter_ns()
    for p, ev in opened:
        ev.end_us = (now - p._t0) / 1000.0
        stack = p._stack()
        if stack and stack[-1] is ev:
            stack.pop()


class record_function:
    """Names a range of code in the profile (context manager or decorator)."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise _C.DtypeMismatch(f"record_function: name must be a str, got {type(name).__name__}")
        self.name = name
        self.args = args
        self._opened = None

    def __enter__(self):
        self._opened = _record(self.name)
        return self

    def __exit__(self, *exc):
        if self._opened:
            _close(self._opened)
            self._opened = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with record_function(self.name, self.args):
                return fn(*a, **k)
        return wrapper


def _timed(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        opened = _record(name) if _ACTIVE else None
        if not opened:
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        finally:
            _close(opened)
    wrapper._profiled = fn  # type: ignore[attr-defined]
    return wrapper


# Tensor attributes that are not operations (metadata, conversions to Python, object protocol);
# wrapping them would only add noise or break the object model.
_SKIP_METHODS = frozenset(["__init__", "__new__", "__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__dir__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__init_subclass__", "__subclasshook__", "__class_getitem__", "__sizeof__", "__format__", "__repr__", "__str__", "__hash__", "__len__", "__iter__", "__bool__", "__array__", "__array_wrap__", "__dlpack__", "__dlpack_device__", "__index__", "__int__", "__float__", "__complex__", "__contains__", "__deepcopy__", "__copy__", "__class__", "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "storage_offset", "data_ptr", "is_contiguous", "is_floating_point", "is_complex", "is_signed", "tolist", "item", "numpy", "type", "register_hook", "retain_grad", "requires_grad_", "register_post_accumulate_grad_hook", "_version"])


# Functions of the C++ module that read or set state rather than compute.
_SKIP_C_WORDS = ("state", "hook", "grad_enabled", "threads", "seed", "rng", "memory", "cache", "live", "schema",
                 "inplace_records", "version", "default", "printoptions", "is_", "dtype")


class _Patcher:
    """Replaces the public callables with timing wrappers while a profile is open (once, however
    many profiles nest) and puts the originals back after."""

    def __init__(self):
        self.depth = 0
        self.saved = []

    def _targets(self):
        import pylucid
        from pylucid.nn import functional as F

        for ns, skip in ((pylucid, {"profiler"}), (F, set())):
            for name, obj in list(vars(ns).items()):
                if name.startswith("_") or name in skip or isinstance(obj, type) or not callable(obj):
                    continue
                if type(obj).__name__ not in ("function", "builtin_function_or_method"):
                    continue
                yield ns, name, obj, False
        for name, obj in list(vars(_C).items()):
            if isinstance(obj, type) or type(obj).__name__ != "builtin_function_or_method":
                continue
            if any(w in name for w in _SKIP_C_WORDS) or name.startswith("__"):
                continue
            yield _C, name, obj, False
        for name, obj in list(vars(_C.Tensor).items()):
            if name in _SKIP_METHODS or (name.startswith("_") and not name.startswith("__")):
                continue
            if isinstance(obj, (property, staticmethod, classmethod)) or not callable(obj):
                continue
            yield _C.Tensor, name, obj, True

    def enter(self):
        self.depth += 1
        if self.depth > 1:
            return
        for owner, name, obj, _ in self._targets():
            if getattr(obj, "_profiled", None) is not None:
                continue
            wrapped = _timed("lucid::" + name.lstrip("_") if owner is _C else name, obj)
            try:
                setattr(owner, name, wrapped)
            except (AttributeError, TypeError):
                continue
            self.saved.append((owner, name, obj))

    def exit(self):
        self.depth -= 1
        if self.depth > 0:
            return
        for owner, name, obj in reversed(self.saved):
            setattr(owner, name, obj)
        self.saved = []


_PATCHER = _Patcher()


class profile:
    """Times pylucid calls and ``record_function`` ranges while active (see the module docstring).

    Args:
        activities: ``ProfilerActivity`` values; CPU is what is timed.
        schedule: a :func:`schedule` function of the step number; without one, every step records.
        on_trace_ready: called with the profiler when a scheduled cycle ends (and on exit).
        record_shapes, profile_memory, with_stack, with_flops, with_modules: accepted, ignored.
    """

    def __init__(self, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 use_cuda=None, enabled=True, **kwargs):
        for a in activities or ():
            if not isinstance(a, ProfilerActivity):
                raise _C.DtypeMismatch(f"profile: activities must be ProfilerActivity values, got {a!r}")
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.step_num = 0
        self._events = EventList()
        self._saved = None
        self._recording = False
        self._open = False
        self._t0 = time.perf_counter_ns()

    def _stack(self):
        stacks = getattr(_local, "stacks", None)
        if stacks is None:
            stacks = _local.stacks = {}
        return stacks.setdefault(id(self), [])

    def _action(self):
        return ProfilerAction.RECORD if self.schedule is None else self.schedule(self.step_num)

    def start(self):
        """Begins profiling (what entering the context does)."""
        if not self.enabled or self._open:
            return
        self._open = True
        _PATCHER.enter()
        self._t0 = time.perf_counter_ns()
        _ACTIVE.append(self)
        self._recording = self._action() in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def stop(self):
        """Ends profiling; calls ``on_trace_ready`` if events were recorded since the last save."""
        if not self._open:
            return
        self._open = False
        self._recording = False
        _ACTIVE.remove(self)
        _PATCHER.exit()
        if self.schedule is None or self._events:
            self._save()

    def _save(self):
        self._saved = EventList(self._events)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self):
        """Marks the end of a training step; the schedule decides whether the next one records."""
        if not self._open:
            return
        prev = self._action()
        self.step_num += 1
        if prev == ProfilerAction.RECORD_AND_SAVE:
            self._save()
            self._events = EventList()
        self._recording = self._action() in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def events(self):
        """Every recorded call, in the order they started (an ``EventList``)."""
        return self._saved if self._saved is not None else EventList(self._events)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One entry per name (calls, total and self time): ``key_averages().table(...)``."""
        return self.events().key_averages()

    def export_chrome_trace(self, path):
        """Writes the events as a Chrome trace (``chrome://tracing``, Perfetto) JSON file."""
        trace = {"traceEvents": [{"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total,
                                  "pid": 0, "tid": e.thread, "cat": "cpu_op"} for e in self.events()]}
        with open(path, "w") as f:
            json.dump(trace, f)
        return path
