"""Gamma, Dirichlet and binomial samples drawn as PyTorch's CPU samplers draw them, so a seeded
program gets PyTorch's numbers: element by element in row-major order, each uniform one float64
draw of the generator and each normal PyTorch's cached Box-Muller pair.

- gamma: Marsaglia and Tsang (2000), with PyTorch's boost ``U ** (1 / alpha)`` for alpha < 1
  (drawn first) and its squeeze test ``u < 1 - 0.0331 x^4`` before the log test;
- binomial: inversion by sums of geometric waiting times when ``n min(p, 1 - p) < 10``, else
  Hormann's BTRS (1993) with Stirling-tail corrections;
- the reparameterised gamma gradient is the implicit one, ``dx/da = -(dP(a, x)/da) / p(x; a)``
  with P the regularised lower incomplete gamma function (:func:`gammainc`), computed here to
  float64 accuracy (PyTorch uses a rational approximation of the same derivative).
NOTE: PyTorch's constants ``1/3`` and ``0.0331`` are float literals even in the double sampler, and
with float32 parameters ``alpha + 1`` and ``alpha - 1/3`` round to float32: mirrored below.
"""
import math
import struct

import numpy as np

from pylucid import _C
from pylucid.special import _lgamma_np

__all__ = ["Draws", "binomial", "gammainc", "gammainc_grad_a", "sample_dirichlet_gammas", "standard_gamma"]

_THIRD_F = float(np.float32(1.0) / np.float32(3.0))
_SQUEEZE_F = float(np.float32(0.0331))


# Byte offsets in the generator's state image (PyTorch's CPUGeneratorImplState, one byte per
# element): the cached second Box-Muller normal and its valid flag.
_NORMAL_Y, _NORMAL_VALID = 5024, 5040


def _cached_normal(image):
    if not struct.unpack("<i", bytes(image[_NORMAL_VALID:_NORMAL_VALID + 4]))[0]:
        return None
    return struct.unpack("<d", bytes(image[_NORMAL_Y:_NORMAL_Y + 8]))[0]


class Draws:
    """float64 uniforms and normals from a generator, read ahead in chunks; ``finish`` leaves the
    generator exactly as far on as the draws used (and with the normal cache they leave)."""

    def __init__(self, chunk=256, generator=None):
        self.gen = generator if generator is not None else _C.default_generator
        self.start = self.gen.get_state()
        self.cache = _cached_normal(self.start.tolist())
        self.chunk = max(64, int(chunk))
        self.buf: list = []
        self.pos = 0
        self.used = 0

    def uniform(self):
        if self.pos == len(self.buf):
            from pylucid._tensor import empty
            t = _C._uniform_(empty(self.chunk, dtype=_C.dtype.float64), 0.0, 1.0, self.gen)
            self.buf, self.pos = t.tolist(), 0
        self.pos += 1
        self.used += 1
        return self.buf[self.pos - 1]

    def normal(self):
        if self.cache is not None:
            v, self.cache = self.cache, None
            return v
        u1 = self.uniform()
        u2 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self.cache = r * math.sin(theta)
        return r * math.cos(theta)

    def finish(self):
        from pylucid._tensor import empty
        self.gen.set_state(self.start)
        if self.used:
            _C._uniform_(empty(self.used, dtype=_C.dtype.float64), 0.0, 1.0, self.gen)
        image = self.gen.get_state().tolist()
        image[_NORMAL_Y:_NORMAL_Y + 8] = struct.pack("<d", self.cache if self.cache is not None else 0.0)
        image[_NORMAL_VALID:_NORMAL_VALID + 4] = struct.pack("<i", int(self.cache is not None))
        from pylucid._tensor import tensor
        self.gen.set_state(tensor(image, dtype=_C.dtype.int64))


def _gamma_one(alpha, draws, f32):
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        exponent = float(np.float32(1.0) / np.float32(alpha)) if f32 else 1.0 / alpha
        scale *= (1.0 - draws.uniform()) ** exponent
        alpha = float(np.float32(alpha) + np.float32(1.0)) if f32 else alpha + 1.0
    d = float(np.float32(alpha) - np.float32(_THIRD_F)) if f32 else alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = draws.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - draws.uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def standard_gamma(alpha, out_dtype, generator=None):
    """Gamma(alpha, 1) samples for the numpy array ``alpha`` (one per element, row-major), as
    ``out_dtype`` (numpy float32 or float64), each at least that dtype's smallest normal."""
    f32 = out_dtype == np.float32
    flat = np.ascontiguousarray(alpha, dtype=out_dtype).ravel()
    draws = Draws(2 * flat.size + 8, generator)
    try:
        out = np.array([_gamma_one(float(a), draws, f32) for a in flat], dtype=np.float64).astype(out_dtype)
    finally:
        draws.finish()
    return np.maximum(out, np.finfo(out_dtype).tiny).reshape(np.shape(alpha))


def sample_dirichlet_gammas(alpha, generator=None):
    """The float64 gamma draws behind Dirichlet samples of concentrations ``alpha`` (..., K)."""
    flat = np.ascontiguousarray(alpha, dtype=np.float64).ravel()
    draws = Draws(2 * flat.size + 8, generator)
    try:
        out = np.array([_gamma_one(float(a), draws, False) for a in flat], dtype=np.float64)
    finally:
        draws.finish()
    return np.maximum(out, np.finfo(np.float64).tiny).reshape(np.shape(alpha))


def _stirling_tail(k):
    """log(k!) minus Stirling's approximation of it, (k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2."""
    if k <= 9:
        return math.lgamma(k + 1.0) - (k + 0.5) * math.log(k + 1.0) + (k + 1.0) - 0.5 * math.log(2 * math.pi)
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(n, p, draws, rnd):
    stddev = math.sqrt(rnd(rnd(n * p) * rnd(1 - p)))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = rnd(n * p) + 0.5
    v_r = 0.92 - 4.2 / b
    r = rnd(p / rnd(1 - p))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(rnd(rnd(n + 1) * p))
    while True:
        u = draws.uniform() - 0.5
        v = draws.uniform()
        us = 0.5 - abs(u)
        k = rnd(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1))) + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1)) + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(k) - _stirling_tail(n - k))
        if v <= bound:
            return k


def _inversion(n, p, draws):
    logq = math.log1p(-p)
    total, count = 0.0, 0
    while True:
        u = draws.uniform()
        total += math.ceil(math.log(u) / logq) if u > 0 else math.inf
        if total > n:
            return count
        count += 1


def _binomial_one(n, p, draws, rnd):
    if n <= 0.0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return n
    if p <= 0.5:
        return _btrs(n, p, draws, rnd) if rnd(n * p) >= 10.0 else _inversion(n, p, draws)
    if p > 0.5:
        q = rnd(1.0 - p)
        return n - (_btrs(n, q, draws, rnd) if rnd(n * q) >= 10.0 else _inversion(n, q, draws))
    return math.nan


def binomial(count, prob, out_dtype, generator=None):
    """Binomial(count, prob) samples for numpy arrays of one shape, as ``out_dtype``."""
    rnd = (lambda x: float(np.float32(x))) if out_dtype == np.float32 else (lambda x: x)
    ns = np.ascontiguousarray(count, dtype=out_dtype).ravel()
    ps = np.ascontiguousarray(prob, dtype=out_dtype).ravel()
    draws = Draws(4 * ns.size + 8, generator)
    try:
        out = [_binomial_one(float(n), float(p), draws, rnd) for n, p in zip(ns, ps)]
    finally:
        draws.finish()
    return np.array(out, dtype=out_dtype).reshape(np.shape(count))


def _log_prefactor(a, x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return a * np.log(x) - x - _lgamma_np(a)


def gammainc(a, x, upper=False):
    """The regularised lower incomplete gamma function P(a, x) for float64 numpy arrays (of one
    shape): its power series below ``x = a + 1``, a Lentz continued fraction for 1 - P above.
    With ``upper``, Q = 1 - P, taken from the continued fraction itself where it is used (so a
    tiny upper tail keeps its relative precision)."""
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.zeros(a.shape)
    eps = np.finfo(np.float64).eps
    series = (x > 0) & (x < a + 1)
    if series.any():
        aa, xx = a[series], x[series]
        term = 1.0 / aa
        total = term.copy()
        n = 0
        while n < 100000:
            n += 1
            term = term * xx / (aa + n)
            total += term
            if np.all(np.abs(term) < np.abs(total) * eps):
                break
        out[series] = total * np.exp(_log_prefactor(aa, xx))
    frac = (x >= a + 1) & np.isfinite(x)
    if frac.any():
        aa, xx = a[frac], x[frac]
        tiny = 1e-300
        b = xx + 1.0 - aa
        c = np.full(aa.shape, 1.0 / tiny)
        d = 1.0 / b
        h = d.copy()
        for i in range(1, 100000):
            an = -i * (i - aa)
            b = b + 2.0
            d = an * d + b
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1.0 / d
            delta = d * c
            h = h * delta
            if np.all(np.abs(delta - 1.0) < eps):
                break
        q = np.exp(_log_prefactor(aa, xx)) * h
        out[frac] = q if upper else 1.0 - q
    if upper:
        rest = ~frac
        out[rest] = 1.0 - out[rest]
    out[np.isposinf(x)] = 0.0 if upper else 1.0
    out[np.isnan(a) | np.isnan(x)] = np.nan
    return out


def gammainc_grad_a(a, x):
    """dP(a, x)/da by a central difference of :func:`gammainc` (step relative to a)."""
    h = 1e-5 * np.maximum(np.asarray(a, dtype=np.float64), 1e-3)
    return (gammainc(a + h, x) - gammainc(a - h, x)) / (2 * h)


def standard_gamma_grad(alpha, x):
    """dx/dalpha of a Gamma(alpha, 1) sample x held at a fixed quantile: ``-dP/da / density``."""
    alpha = np.asarray(alpha, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    log_density = (alpha - 1) * np.log(x) - x - _lgamma_np(alpha)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return -gammainc_grad_a(alpha, x) / np.exp(log_density)
