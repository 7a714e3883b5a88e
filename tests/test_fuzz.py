"""A bounded fuzz of the whole Python API: every public function of ``pylucid`` and
``pylucid.nn.functional`` and every public Tensor method, called with drawn arguments (tensors of
every dtype, shape and layout, numbers including NaN/inf and out-of-range ints, None, strings,
lists). Whatever comes in, the call returns or raises one of the Python errors below; the
process never crashes, and a failed call leaves its input tensors intact. About a minute on
two cores (``FUZZ_EXAMPLES`` in the environment changes the number of calls)."""
import os

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import pylucid  # noqa: E402
import pylucid.nn.functional as F  # noqa: E402

ERRORS = (pylucid.LucidError, TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError,
          MemoryError)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "10000"))

# Functions that change process-wide state (grad mode, the RNG seed, files, every set_* switch:
# the cache limit, thread count, print options, ...) are left out: a random call would leak into
# the tests that run after this one.
SKIP = {"manual_seed", "seed", "save", "load", "set_grad_enabled", "no_grad", "enable_grad", "autocast",
        "empty_cache", "use_deterministic_algorithms"}
DTYPES = [pylucid.float32, pylucid.float64, pylucid.float16, pylucid.bfloat16, pylucid.int64,
          pylucid.bool]


def _public_callables(module):
    return sorted(n for n in dir(module) if not n.startswith(("_", "set_")) and n not in SKIP
                  and callable(getattr(module, n)) and not isinstance(getattr(module, n), type))


FUNCTIONS = [(pylucid, n) for n in _public_callables(pylucid)] + [(F, n) for n in _public_callables(F)]
METHODS = sorted(n for n in dir(pylucid.Tensor) if not n.startswith("_") and n not in SKIP
                 and callable(getattr(pylucid.Tensor, n))) + [
    "__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__matmul__", "__rsub__",
    "__rtruediv__", "__rpow__", "__iadd__", "__imul__", "__getitem__", "__setitem__", "__neg__",
    "__lt__", "__eq__", "__len__", "__bool__", "__float__", "__int__", "__array__", "__dlpack__"]


@st.composite
def tensors(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    dt = draw(st.sampled_from(DTYPES))
    values = draw(st.sampled_from(["randn", "special", "zeros"]))
    arr = np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(shape)
    if values == "special" and arr.size:
        arr.flat[:: max(1, arr.size // 3)] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1e30]))
    elif values == "zeros":
        arr[...] = 0
    t = pylucid.from_numpy(arr).to(dt)
    if draw(st.booleans()) and t.ndim >= 2:
        t = t.transpose(0, -1)
    elif draw(st.booleans()) and t.ndim >= 1 and t.shape[-1] > 1:
        t = t[..., ::2]
    if dt.is_floating_point and draw(st.booleans()):
        t = t.detach().requires_grad_()
    return t


VALUES = st.one_of(
    tensors(), tensors(), tensors(),
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([-(2**63), 2**63 - 1, 2**64, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3),
    st.lists(st.integers(-3, 4), max_size=4), st.tuples(st.integers(-3, 4), st.integers(-3, 4)),
    st.sampled_from(DTYPES), st.just(Ellipsis), st.just(slice(None, None, -1)), st.just(slice(0, 2, 0)),
)
KWARGS = st.dictionaries(st.sampled_from(["dim", "keepdim", "dtype", "out", "inplace", "weight",
                                          "reduction", "eps", "approximate", "correction"]),
                         VALUES, max_size=2)


def _snapshot(args):
    return [(a, a._version, a.shape, a.stride()) for a in args if isinstance(a, pylucid.Tensor)]


def _check_intact(snap):
    """A call that raised must not have modified or re-shaped its inputs."""
    for t, version, shape, stride in snap:
        assert (t._version, t.shape, t.stride()) == (version, shape, stride)


def _use(out):
    """Touch what came back: read it, and run backward through it when it has a graph."""
    for o in out if isinstance(out, (tuple, list)) else (out,):
        if isinstance(o, pylucid.Tensor):
            repr(o)
            if o.requires_grad and o.dtype.is_floating_point:
                try:
                    o.float().sum().backward()
                except ERRORS:
                    pass


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True)
@given(call=st.one_of(st.sampled_from(FUNCTIONS).map(lambda f: getattr(*f)),
                      st.tuples(tensors(), st.sampled_from(METHODS))
                      .map(lambda tm: getattr(tm[0], tm[1]))),
       args=st.lists(VALUES, max_size=4), kwargs=KWARGS)
def test_fuzz_the_api_never_crashes(call, args, kwargs):
    """Guards against any input combination reaching C++ unchecked (a segfault, an abort, an
    uncaught C++ exception), a failed call leaving its inputs half-modified, or a named method
    handing back NotImplemented (only operators may, so Python tries the other operand)."""
    snap = _snapshot(args + [getattr(call, "__self__", None)])
    try:
        out = call(*args, **kwargs)
    except ERRORS:
        _check_intact(snap)
        return
    name = getattr(call, "__name__", "")
    assert out is not NotImplemented or name.startswith("__"), f"{name} returned NotImplemented"
    _use(out)


def test_fuzz_covers_the_api():
    """Guards against the fuzz silently covering less of the API as names move around."""
    assert len(FUNCTIONS) > 100 and len(METHODS) > 100
