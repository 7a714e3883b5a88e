"""Random sampling. Every function draws from a :class:`pylucid.Generator` (``generator=``; by default the
one :func:`pylucid.manual_seed` seeds) in PyTorch's CPU order and with its arithmetic, so a program seeded
the same way gets the same numbers as under PyTorch: ``rand``, ``randn``, ``randint``, ``randperm``,
``normal``, ``bernoulli``, ``multinomial``, the in-place fills (``uniform_``, ``normal_``, ...),
``nn.init`` and dropout.

>>> import pylucid
>>> _ = pylucid.manual_seed(0)
>>> pylucid.rand(3).tolist()
[0.49625658988952637, 0.7682217955589294, 0.08847743272781372]
>>> g = pylucid.Generator().manual_seed(0)
>>> pylucid.randperm(5, generator=g).tolist()
[4, 0, 1, 3, 2]
"""
import builtins as _builtins

from . import _C
from ._C import Generator, Tensor, dtype
from ._device import _check_device
from ._tensor import _dtype_arg, _factory_dtype, _finish, _no_out, _shape, _size_kw, _tensor_arg, empty, int64

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "rand", "randn", "randint", "rand_like", "randn_like", "randint_like",
           "randperm", "normal", "bernoulli", "multinomial"]

default_generator = _C.default_generator
multinomial = _C.multinomial
initial_seed = _C.initial_seed


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples, 1 with probability ``input[i]`` (floating, values in [0, 1]), or ``p`` for every
    element when given; same shape and dtype as input. float64 probabilities are compared with
    float64 uniforms, as PyTorch draws them (other dtypes go to the fused kernel)."""
    _no_out(out, "bernoulli")
    if p is None and isinstance(input, Tensor) and input.dtype == dtype.float64:
        probs = input.detach()
        bad = ~((probs >= 0) & (probs <= 1))
        if bool(bad.any()):
            raise _C.ShapeMismatch(f"bernoulli: expected all probabilities in [0, 1], got {probs[bad][0].item()}")
        u = _C._uniform_(empty(*probs.shape, dtype=dtype.float64), 0.0, 1.0, generator)
        return (u < probs).to(dtype.float64)
    return _C.bernoulli(input, p, generator=generator)


def manual_seed(seed):
    """Seeds the default generator (an int in [-2**63, 2**64)) and returns it; the same seed gives
    PyTorch's numbers."""
    return _C._manual_seed(seed)


def seed():
    """Seeds the default generator from the operating system's entropy and returns the seed."""
    return _C._seed()


def get_rng_state():
    """The default generator's state (a 1-d int64 tensor) for :func:`pylucid.set_rng_state`."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the default generator to a state from :func:`pylucid.get_rng_state`."""
    default_generator.set_state(new_state)


def _new(size, dtype, device, op):
    _check_device(device, op)
    return empty(*size, dtype=_factory_dtype(dtype, op))


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
         pin_memory=False, out=None, **kwargs) -> Tensor:
    """Samples uniform in [0, 1) (``rand(2, 3)``, ``rand((2, 3))`` or ``rand(size=(2, 3))``)."""
    size = _size_kw(size, kwargs, "rand")
    _no_out(out, "rand")
    return _finish(_C._uniform_(_new(size, dtype, device, "rand"), 0.0, 1.0, generator), requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
          pin_memory=False, out=None, **kwargs) -> Tensor:
    """Standard normal samples (``randn(2, 3)``, ``randn((2, 3))`` or ``randn(size=(2, 3))``)."""
    size = _size_kw(size, kwargs, "randn")
    _no_out(out, "randn")
    return _finish(_C._normal_(_new(size, dtype, device, "randn"), 0.0, 1.0, generator), requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False,
            layout=None, out=None) -> Tensor:
    """Integers uniform in [low, high): ``randint(low, high, size)`` or ``randint(high, size)``;
    int64 unless ``dtype`` says otherwise."""
    _no_out(out, "randint")
    if size is None:
        if high is None or isinstance(high, int):
            raise _C.LucidError("randint: size is required, e.g. randint(0, 10, (3,))")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    for v in (low, high):
        if isinstance(v, _builtins.bool) or not isinstance(v, int):
            raise _C.DtypeMismatch(f"randint: low and high must be ints, got {type(v).__name__}")
    _check_device(device, "randint")
    _dtype_arg(dtype, "randint")
    t = empty(*_shape((size,)), dtype=dtype or int64)
    return _finish(_C._randint_(t, low, high, generator), requires_grad)


def _memory_order(input, memory_format):
    """The dims of ``input`` from outermost to innermost in memory when it is a permuted dense
    tensor (``x.t()``, a batch_first attention output): PyTorch's ``*_like`` keep such strides
    and draw in memory order. None when logical order is memory order, or another layout (a
    slice, an expand) makes PyTorch fall back to a contiguous result."""
    from ._compat_more import preserve_format
    if input.is_contiguous() or memory_format not in (None, preserve_format):
        return None
    shape, strides = tuple(input.shape), input.stride()
    expected = 1
    for stride, n in sorted((s, n) for s, n in zip(strides, shape) if n != 1):
        if n == 0 or stride != expected:
            return None
        expected *= n
    return sorted(range(len(shape)), key=lambda d: (-strides[d] if shape[d] != 1 else 0, d))


def _like(input, memory_format, dtype, device, requires_grad, op, fill):
    """A tensor of ``input``'s shape filled in place by ``fill``; when ``input`` is a permuted
    dense tensor it gets ``input``'s strides, so the draws follow ``input``'s memory order (and
    the samplers' paths for non-contiguous outputs), as PyTorch's ``*_like``."""
    order = _memory_order(input, memory_format)
    if order is None:
        out = _new(input.shape, dtype, device, op)
    else:
        inverse = [0] * len(order)
        for i, d in enumerate(order):
            inverse[d] = i
        out = _new(tuple(input.shape[d] for d in order), dtype, device, op).permute(inverse)
    return _finish(fill(out), requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
              generator=None) -> Tensor:
    """Uniform [0, 1) samples with ``input``'s shape (and dtype unless given), drawn in
    ``input``'s memory order as PyTorch draws them."""
    _tensor_arg(input, "rand_like")
    return _like(input, memory_format, dtype or input.dtype, device, requires_grad, "rand_like",
                 lambda t: _C._uniform_(t, 0.0, 1.0, generator))


def randn_like(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
               generator=None) -> Tensor:
    """Standard normal samples with ``input``'s shape (and dtype unless given), drawn in
    ``input``'s memory order as PyTorch draws them."""
    _tensor_arg(input, "randn_like")
    return _like(input, memory_format, dtype or input.dtype, device, requires_grad, "randn_like",
                 lambda t: _C._normal_(t, 0.0, 1.0, generator))


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, layout=None,
                 memory_format=None, generator=None) -> Tensor:
    """Integers in [low, high) with ``input``'s shape (``randint_like(x, high)`` also works); the
    dtype is ``input``'s unless given. Drawn in ``input``'s memory order as PyTorch draws them."""
    _tensor_arg(input, "randint_like")
    if high is None:
        low, high = 0, low
    return _like(input, memory_format, dtype or input.dtype, device, requires_grad, "randint_like",
                 lambda t: _C._randint_(t, low, high, generator))


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False, out=None) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` says otherwise)."""
    _no_out(out, "randperm")
    _check_device(device, "randperm")
    _dtype_arg(dtype, "randperm")
    if isinstance(n, Tensor):
        n = n.__index__()
    return _finish(_C._randperm(n, dtype or int64, generator), requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False,
           layout=None, out=None) -> Tensor:
    """Normal samples. With tensor ``mean`` and/or ``std``: one sample per element of their broadcast
    shape; with numbers: a tensor of shape ``size``.

    >>> normal(2.0, 0.0, size=(2,)).tolist()
    [2.0, 2.0]
    """
    _no_out(out, "normal")
    _check_device(device, "normal")
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise _C.LucidError("normal: size is required when mean and std are numbers")
        for v, name in ((mean, "mean"), (std, "std")):
            if isinstance(v, _builtins.bool) or not isinstance(v, (int, float)):
                raise _C.DtypeMismatch(f"normal: {name} must be a number or a Tensor, got {type(v).__name__}")
        t = _new(_shape((size,)), dtype, device, "normal")
        return _finish(_C._normal_(t, _builtins.float(mean), _builtins.float(std), generator), requires_grad)
    if size is not None:
        raise _C.LucidError("normal: size is only accepted when mean and std are numbers")
    ref = mean if mt else std
    if not ref.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"normal: expected a floating mean/std, got {ref.dtype!r}")
    if st and bool((std < 0).any()):
        raise _C.ShapeMismatch("normal: expects all elements of std >= 0")
    shape = (mean + std).shape if mt and st else ref.shape
    # PyTorch draws standard normals for the output and then scales and shifts them.
    z = _C._normal_(empty(*shape, dtype=ref.dtype), 0.0, 1.0, generator)
    return _finish((z * std + mean).detach(), requires_grad)


def _bernoulli_method(self, p=None, *, generator=None):
    """0/1 samples, 1 with probability ``self[i]`` (or ``p``); see :func:`pylucid.bernoulli`."""
    return bernoulli(self, p, generator=generator)


setattr(Tensor, "bernoulli", _bernoulli_method)  # noqa: B010
