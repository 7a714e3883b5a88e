"""``poisson``: Poisson samples with the given rates, drawn as PyTorch's CPU sampler draws them, so
a seeded program gets PyTorch's numbers: element by element in order, Knuth's product of uniforms
for rates below 10 and Hormann's transformed rejection (PTRS, 1993) from 10 up, each uniform one
float64 draw of the generator.

>>> import pylucid
>>> _ = pylucid.manual_seed(0)
>>> pylucid.poisson(pylucid.tensor([0.5, 3.0, 20.0, 100.0])).tolist()
[2.0, 4.0, 21.0, 99.0]
"""
import math

import numpy as np

from . import _C
from ._C import Tensor

__all__ = ["poisson"]


class _Uniforms:
    """float64 uniforms from a generator, read ahead in chunks; ``finish`` leaves the generator
    exactly as many draws further as were used."""

    def __init__(self, generator, chunk):
        self.gen = generator if generator is not None else _C.default_generator
        self.start = self.gen.get_state()
        self.chunk = max(64, int(chunk))
        self.buf = np.empty(0)
        self.pos = 0
        self.used = 0

    def __call__(self):
        if self.pos == len(self.buf):
            from ._tensor import empty
            t = _C._uniform_(empty(self.chunk, dtype=_C.dtype.float64), 0.0, 1.0, self.gen)
            self.buf, self.pos = t.numpy().copy(), 0
        u = self.buf[self.pos]
        self.pos += 1
        self.used += 1
        return float(u)

    def finish(self):
        from ._tensor import empty
        self.gen.set_state(self.start)
        if self.used:
            _C._uniform_(empty(self.used, dtype=_C.dtype.float64), 0.0, 1.0, self.gen)


def _sample(lam, uniform):
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = uniform() - 0.5
            V = uniform()
            us = 0.5 - abs(U)
            k = math.floor((2 * a / us + b) * U + lam + 0.43)
            if us >= 0.07 and V <= vr:
                return k
            if k < 0 or (us < 0.013 and V > us):
                continue
            if math.log(V) + math.log(invalpha) - math.log(a / (us * us) + b) <= -lam + k * loglam - math.lgamma(k + 1):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    x, prod = 0, 1.0
    while True:
        prod *= uniform()
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(input, generator=None):
    """A tensor of input's shape and dtype with element ``i`` drawn from Poisson(``input[i]``);
    rates must be non-negative. Its gradient is zero, as in PyTorch."""
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"poisson: input must be a Tensor, got {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"poisson: \"poisson_cpu\" not implemented for {input.dtype} (expected a floating "
                               "dtype)")
    rates = input.detach().double().contiguous().numpy().reshape(-1)
    if not (rates >= 0).all():
        raise _C.LucidError("poisson: invalid Poisson rate, expected rate to be non-negative")
    if np.isinf(rates).any():
        raise _C.LucidError("poisson: invalid Poisson rate, expected a finite rate")
    draws = _Uniforms(generator, 4 * rates.size)
    try:
        out = np.array([_sample(float(lam), draws) for lam in rates], dtype=np.float64)
    finally:
        draws.finish()
    res = _C._from_numpy(out.reshape(tuple(input.shape))).to(input.dtype)
    if input.requires_grad and _C.is_grad_enabled():
        # Zero gradient for the rates (a where that never picks them), as PyTorch's PoissonBackward.
        from ._tensor import zeros
        res = _C.where(zeros(*input.shape, dtype=_C.dtype.bool), input, res)
    return res
