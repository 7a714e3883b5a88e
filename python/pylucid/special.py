"""``pylucid.special`` (PyTorch's ``torch.special``) and the special functions PyTorch also has at
its top level: ``lgamma``, ``digamma``, ``polygamma``, ``i0``, ``sinc``, ``xlogy``, ...

The gamma family and the Bessel functions are ``autograd.Function`` subclasses whose forward
is a numpy evaluation and whose backward calls the next function of the family (``lgamma' =
digamma``, ``polygamma(n)' = polygamma(n + 1)``, ``i0' = i1``, ``i1' = i0 - i1 / x``), so they have
gradients of every order; the rest are composites of differentiable ops.

>>> import pylucid
>>> pylucid.special.gammaln(pylucid.tensor([1.0, 2.0, 4.0])).exp().tolist()  # Gamma(n) = (n - 1)!
[1.0, 1.0, 6.0]
>>> pylucid.special.xlogy(pylucid.tensor([0.0, 2.0]), pylucid.tensor([0.0, 1.0])).tolist()
[0.0, 0.0]
"""
import math as _math

import numpy as _np

from . import _C
from . import _compat
from ._compat import _method
from ._index_ext import erfinv
from ._math_more import _as_tensor, _float_of, _tensor_arg, logit
from ._tensor import arange, from_numpy, full_like, ones_like, zeros_like
from .autograd.function import Function as _Function

__all__ = ["lgamma", "gammaln", "digamma", "psi", "polygamma", "multigammaln", "i0", "i1", "i0e", "i1e", "sinc", "entr",
           "xlogy", "xlog1py", "float_power", "positive", "expit", "logit", "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "exp2",
           "expm1", "log1p", "round", "softmax", "log_softmax", "logsumexp", "gammainc", "gammaincc"]


def _numpy64(x):
    return _np.asarray(x.detach().to(_C.dtype.float64).contiguous().numpy())


def _like(arr, x):
    return from_numpy(_np.array(arr, dtype=_np.float64, order="C")).to(x.dtype)  # keeps 0-d arrays 0-d


# Bernoulli numbers B_2k, k = 1..7, for the asymptotic series of polygamma at large x.
_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _polygamma_np(n, x):
    """The n-th derivative of digamma at float64 x: shift x up past ``20 + n`` with the recurrence
    psi_n(x) = psi_n(x + 1) - (-1)^n n! / x^(n+1), then the asymptotic series; digamma of x < 0.5
    by the reflection psi(x) = psi(1 - x) - pi / tan(pi x). Past n = 170, n! overflows float64 and
    the result is (-1)^(n+1) inf; for n >= 1 the shift is capped, giving NaN below x = -10000."""
    x = _np.asarray(x, dtype=_np.float64)
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    if n > 170:
        return _np.where(_np.isnan(x), _np.nan, sign * _np.inf)
    with _np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if n == 0:
            refl = x < 0.5
            xr = _np.where(refl, 1.0 - x, x)
        else:
            refl, xr = _np.zeros(x.shape, bool), x.copy()
        fact = float(_math.factorial(n))
        acc = _np.zeros_like(xr)
        big = 20.0 + n
        far = xr < -10000.0  # n >= 1 only: digamma reflects negative x first
        xr = _np.where(far, _np.nan, xr)
        steps = int(_np.ceil(_np.nanmax(big - xr[_np.isfinite(xr)], initial=0.0)))
        for _ in range(max(steps, 0)):
            low = xr < big
            acc = _np.where(low, acc + sign * fact / xr ** (n + 1), acc)
            xr = _np.where(low, xr + 1.0, xr)
        if n == 0:
            series = _np.log(xr) - 0.5 / xr - sum(b / (2 * k) / xr ** (2 * k) for k, b in enumerate(_B2K, 1))
        else:
            series = _math.factorial(n - 1) / xr**n + fact / (2.0 * xr ** (n + 1))
            series += sum(b * (_math.factorial(2 * k + n - 1) / _math.factorial(2 * k)) / xr ** (2 * k + n)
                          for k, b in enumerate(_B2K, 1))
            series *= sign
        out = series + acc
        if n == 0:
            out = _np.where(refl, out - _np.pi / _np.tan(_np.pi * x), out)
            out = _np.where(x == 0, _np.copysign(_np.inf, -x), _np.where((x < 0) & (x == _np.floor(x)), _np.nan, out))
        else:
            out = _np.where((x <= 0) & (x == _np.floor(x)), _np.inf, out)
        return _np.where(x == _np.inf, 0.0 if n else _np.inf, out)


class _Polygamma(_Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return _like(_polygamma_np(n, _numpy64(x)), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _Polygamma.apply(x, ctx.n + 1), None


def _lgamma_np(a):
    # math.lgamma raises at the poles (0, -1, -2, ...), where lgamma is +inf, as it is at -inf.
    f = _np.vectorize(lambda v: _math.inf if _math.isinf(v) or (v <= 0 and v == _math.floor(v)) else _math.lgamma(v),
                      otypes=[float])
    return f(a) if a.size else a


class _Lgamma(_Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _like(_lgamma_np(_numpy64(x)), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _Polygamma.apply(x, 0)


def _i1_np(a):
    """I1 by its power series sum (x/2)^(2k+1) / (k! (k+1)!), summed until the terms stop counting."""
    h = a / 2.0
    term, total = h.copy(), h.copy()
    with _np.errstate(over="ignore", invalid="ignore"):  # past ~713 the result is inf, as PyTorch's
        for k in range(1, 2000):
            term = term * h * h / (k * (k + 1))
            total = total + term
            if not _np.any(_np.abs(term) > 1e-17 * _np.abs(total)):
                break
    return total


class _I0(_Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with _np.errstate(over="ignore"):
            return _like(_np.i0(_numpy64(x)), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _I1.apply(x)


class _I1(_Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _like(_i1_np(_numpy64(x)), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        zero = x == 0
        xs = _C.where(zero, ones_like(x), x)
        # I1'(x) = I0(x) - I1(x) / x, which tends to 1/2 at 0.
        return g * _C.where(zero, full_like(x, 0.5), _I0.apply(x) - _I1.apply(xs) / xs)


def _scaled_bessel_np(nu, a):
    """exp(-|x|) I_nu(x) for nu = 0 or 1: directly up to |x| = 700, beyond (where I_nu overflows)
    by the asymptotic series 1/sqrt(2 pi x) sum_k c_k / x^k, c_k = -c_{k-1} (4 nu^2 - (2k-1)^2) / (8k)."""
    ax = _np.abs(a)
    small = ax <= 700
    with _np.errstate(over="ignore", invalid="ignore"):
        direct = _np.exp(-ax) * (_np.i0(a) if nu == 0 else _i1_np(a))
        big = _np.where(small, 1000.0, ax)
        term, total = _np.ones_like(big), _np.ones_like(big)
        for k in range(1, 12):
            term = -term * (4 * nu * nu - (2 * k - 1) ** 2) / (8 * k * big)
            total = total + term
        asym = total / _np.sqrt(2 * _np.pi * big) * (_np.sign(a) if nu else 1.0)
    return _np.where(small, direct, asym)


class _I0e(_Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _like(_scaled_bessel_np(0, _numpy64(x)), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (_I1e.apply(x) - _C.sign(x) * _I0e.apply(x))


class _I1e(_Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _like(_scaled_bessel_np(1, _numpy64(x)), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        zero = x == 0
        xs = _C.where(zero, ones_like(x), x)
        # (e^-|x| I1)' = e^-|x| (I0 - I1 / x) - sign(x) e^-|x| I1, which is 1/2 at 0.
        d = _I0e.apply(x) - _I1e.apply(xs) / xs - _C.sign(x) * _I1e.apply(x)
        return g * _C.where(zero, full_like(x, 0.5), d)


def _unary(op, input):
    return _float_of(_tensor_arg(op, "input", input))


def lgamma(input):
    """``log|Gamma(x)|`` elementwise (+inf at 0, -1, -2, ...); its gradient is :func:`digamma`."""
    return _Lgamma.apply(_unary("lgamma", input))


gammaln = lgamma


def digamma(input):
    """The logarithmic derivative of Gamma, ``Gamma'(x) / Gamma(x)`` (-inf at 0, NaN at negative integers)."""
    return _Polygamma.apply(_unary("digamma", input), 0)


psi = digamma


def polygamma(n, input):
    """The ``n``-th derivative of :func:`digamma` (``n >= 0``)."""
    if not isinstance(n, int) or n < 0:
        raise _C.LucidError(f"polygamma(n, x) does not support negative n, got {n}")
    return _Polygamma.apply(_unary("polygamma", input), n)


def multigammaln(input, p):
    """The multivariate log-gamma of dimension ``p``: ``p(p-1)/4 log(pi) + sum_j lgamma(x - j/2)``;
    every element must be greater than ``(p - 1) / 2``."""
    x = _unary("multigammaln", input)
    if not isinstance(p, int) or p < 1:
        raise ValueError(f"multigammaln: p has to be an int greater than or equal to 1, got {p!r}")
    if bool((x <= (p - 1) / 2).any()):
        raise _C.LucidError(f"multigammaln: all elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    halves = arange(p, dtype=x.dtype) * 0.5  # j / 2 for j = 0 .. p-1, summed in one op
    return lgamma(x.unsqueeze(-1) - halves).sum(-1) + p * (p - 1) / 4 * _math.log(_math.pi)


def i0(input):
    """The modified Bessel function of the first kind of order 0; its gradient is ``i1``."""
    return _I0.apply(_unary("i0", input))


def i1(input):
    """The modified Bessel function of the first kind of order 1."""
    return _I1.apply(_unary("i1", input))


def i0e(input):
    """The exponentially scaled ``i0``: ``exp(-|x|) * i0(x)``, finite for every x."""
    return _I0e.apply(_unary("i0e", input))


def i1e(input):
    """The exponentially scaled ``i1``: ``exp(-|x|) * i1(x)``, finite for every x."""
    return _I1e.apply(_unary("i1e", input))


def sinc(input):
    """The normalised sinc, ``sin(pi x) / (pi x)``, 1 at 0."""
    x = _unary("sinc", input)
    zero = x == 0
    px = _C.where(zero, ones_like(x), x) * _math.pi
    return _C.where(zero, ones_like(x), _C.sin(px) / px)


def entr(input):
    """The elementwise entropy ``-x log(x)``: 0 at 0, -inf for negative x."""
    x = _unary("entr", input)
    pos = x > 0
    xs = _C.where(pos, x, ones_like(x))
    rest = _C.where(x == 0, zeros_like(x), full_like(x, -_math.inf))
    return _C.where(pos, -xs * _C.log(xs), _C.where(_C.isnan(x), x, rest))


def _pair(op, input, other):
    """Two operands as floating tensors (one may be a number), in their promoted dtype."""
    if not isinstance(input, _C.Tensor):
        _tensor_arg(op, "other", other)
        input = _as_tensor(input, _float_of(other))
    other = _as_tensor(other, _float_of(input))
    dt = _C.promote_types(input.dtype, other.dtype)
    dt = dt if dt.is_floating_point else _float_of(input.to(dt)).dtype
    return input.to(dt), other.to(dt)


def _xlog(op, input, other, log):
    x, y = _pair(op, input, other)
    # At x == 0 the log's argument is replaced by a harmless value, so that neither the value nor
    # the gradient picks up 0 * inf; NaN in y still propagates, as PyTorch's.
    harmless = _C.where(_C.isnan(y), y, full_like(y, 1.0 if log is _C.log else 0.0))
    return x * log(_C.where(x == 0, harmless, y))


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN); either may be a number."""
    return _xlog("xlogy", input, other, _C.log)


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    return _xlog("xlog1py", input, other, _C.log1p)


def float_power(input, exponent):
    """``input ** exponent`` computed in float64 (either may be a number)."""
    if not isinstance(input, _C.Tensor):
        _tensor_arg("float_power", "exponent", exponent)
        return _C.pow(_as_tensor(input, exponent).to(_C.dtype.float64), exponent.to(_C.dtype.float64))
    base = input.to(_C.dtype.float64)
    return _C.pow(base, exponent.to(_C.dtype.float64) if isinstance(exponent, _C.Tensor) else float(exponent))


def positive(input):
    """``input`` itself (``+input``); bool tensors are refused, as PyTorch's unary plus."""
    _tensor_arg("positive", "input", input)
    if input.dtype == _C.dtype.bool:
        raise _C.DtypeMismatch("positive: the `+` operator, on a bool tensor is not supported")
    return input


def expit(input):
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    return _C.sigmoid(_unary("expit", input))


def erf(input):
    """The error function."""
    return _C.erf(_unary("erf", input))


def erfc(input):
    """The complementary error function ``1 - erf(x)``."""
    return _C.erfc(_unary("erfc", input))


def ndtr(input):
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2``."""
    return 0.5 * _C.erfc(_unary("ndtr", input) * (-1.0 / _math.sqrt(2.0)))


_LOG_SQRT_2PI = 0.5 * _math.log(2.0 * _math.pi)


def _log_ndtr_np(x):
    """log Phi(x) in float64 without underflow: log1p(-Phi(-x)) above 0, log(erfc) down to -20 and
    the asymptotic series ``log Phi(x) = -x^2/2 - log(-x) - log sqrt(2 pi) + log(1 - 1/x^2 + 3/x^4 - ...)``
    below (13 terms: their last is under 1e-17 there)."""
    out = _np.empty_like(x)
    erfc = _np.vectorize(_math.erfc, otypes=[float])
    hi, mid, lo = x > 0, (x <= 0) & (x > -20), x <= -20
    out[hi] = _np.log1p(-0.5 * erfc(x[hi] / _math.sqrt(2.0)))
    out[mid] = _np.log(0.5 * erfc(-x[mid] / _math.sqrt(2.0)))
    t, term, series = x[lo], _np.ones_like(x[lo]), _np.ones_like(x[lo])
    for k in range(1, 13):
        term = term * -(2 * k - 1) / (t * t)
        series = series + term
    out[lo] = -0.5 * t * t - _np.log(-t) - _LOG_SQRT_2PI + _np.log(series)
    out[_np.isnan(x)] = _np.nan
    return out


def _ndtri_np(p):
    """Phi^-1(p) in float64: a rational start, then Newton steps on ``log Phi(x) = log q`` with
    ``q = min(p, 1 - p)`` (accurate however small q is; ``1 - p`` is exact for p above 0.5) and the
    upper half by symmetry."""
    q = _np.minimum(p, 1.0 - p)
    ok = q > 0
    qs = _np.where(ok, q, 0.25)
    t = _np.sqrt(-2.0 * _np.log(qs))
    # Abramowitz & Stegun 26.2.23 (error below 4.5e-4): the start for Newton's method.
    x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t
                                                               + 0.001308 * t ** 3))
    # log Phi is concave and increasing, so Newton's steps on it converge monotonically after the
    # first, quadratically; five are ample from the start's accuracy.
    for _ in range(5):
        lp = _log_ndtr_np(x)
        x = x - (lp - _np.log(qs)) * _np.exp(lp + 0.5 * x * x + _LOG_SQRT_2PI)
    x = _np.where(ok, x, -_np.inf)
    x = _np.where(p > 0.5, -x, x)
    # NOTE: near p = 0.5 the answer is small and log p carries only p's absolute accuracy, so two
    # more steps solve erf(x / sqrt 2) / 2 = p - 0.5 instead (that difference is exact there).
    mid = _np.abs(p - 0.5) < 0.25
    if mid.any():
        erf = _np.vectorize(_math.erf, otypes=[float])
        xm, r = x[mid], p[mid] - 0.5
        for _ in range(2):
            xm = xm - (0.5 * erf(xm / _math.sqrt(2.0)) - r) * _np.exp(0.5 * xm * xm + _LOG_SQRT_2PI)
        x[mid] = xm
    return _np.where((p < 0) | (p > 1) | _np.isnan(p), _np.nan, _np.where(p == 0.5, 0.0, x))


class _LogNdtr(_Function):
    _builtin_node = "SpecialLogNdtr"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _like(_log_ndtr_np(_numpy64(x)), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        # phi(x) / Phi(x), formed in logs so that it stays finite far in the lower tail (~ -x).
        return g * _C.exp(-0.5 * x * x - _LOG_SQRT_2PI - _LogNdtr.apply(x))


class _Ndtri(_Function):
    _builtin_node = "SpecialNdtri"

    @staticmethod
    def forward(ctx, p):
        ctx.save_for_backward(p)
        return _like(_ndtri_np(_numpy64(p)), p)

    @staticmethod
    def backward(ctx, g):
        (p,) = ctx.saved_tensors
        x = _Ndtri.apply(p)  # recomputed through the Function, so that double backward works
        return g * _C.exp(0.5 * x * x + _LOG_SQRT_2PI)


def _check_float_or_int(op, x):
    if x.dtype in (_C.dtype.float16, _C.dtype.bfloat16, _C.dtype.bool):
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'{_compat_dtype_name(x.dtype)}\'')
    return _float_of(x)


def _compat_dtype_name(dt):
    return {"float16": "Half", "bfloat16": "BFloat16", "bool": "Bool"}[str(dt).rsplit(".", 1)[-1]]


def log_ndtr(input):
    """``log(ndtr(x))``, accurate in both tails (about ``-x^2/2`` far below 0, ``-ndtr(-x)`` far above);
    differentiable. Integers give float32, as PyTorch; float16 and bfloat16 are not supported (as PyTorch's CPU)."""
    return _LogNdtr.apply(_check_float_or_int("log_ndtr", _tensor_arg("log_ndtr", "input", input)))


def ndtri(input):
    """The inverse of :func:`ndtr` (the standard normal quantile function): ``-inf`` at 0, ``inf`` at
    1, NaN outside ``[0, 1]``; accurate for p down to the smallest float64; differentiable."""
    return _Ndtri.apply(_check_float_or_int("ndtri", _tensor_arg("ndtri", "input", input)))


def exp2(input):
    """``2 ** x`` elementwise."""
    return _C.exp2(_unary("exp2", input))


def expm1(input):
    """``exp(x) - 1`` elementwise, exact near 0."""
    return _C.expm1(_unary("expm1", input))


def log1p(input):
    """``log(1 + x)`` elementwise, exact near 0."""
    return _C.log1p(_unary("log1p", input))


def round(input, *, decimals=0):  # noqa: A001
    """Rounds half to even (to ``decimals`` places)."""
    return _C.round(_tensor_arg("round", "input", input), decimals=decimals)


def softmax(input, dim, *, dtype=None):
    """``softmax`` along ``dim`` (``dtype`` casts the input first)."""
    return _compat.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``log_softmax`` along ``dim`` (``dtype`` casts the input first)."""
    return _compat.log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` without overflow."""
    return _C.logsumexp(input, dim, keepdim)



class _Igamma(_Function):
    """P(a, x) (``upper``: Q = 1 - P) elementwise; differentiable in x only, as PyTorch's (whose
    derivative in a is not implemented)."""

    _builtin_node = "Igamma"

    @staticmethod
    def forward(ctx, a, x, upper):
        from .distributions._sampling import gammainc as _gammainc_np  # noqa: PLC0415

        ctx.save_for_backward(a, x)
        ctx.upper = upper
        return _like(_gammainc_np(_numpy64(a), _numpy64(x), upper), x)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        density = _C.exp((a - 1) * _C.log(x) - x - lgamma(a))
        return None, (-grad if ctx.upper else grad) * density, None


class _Igammac(_Igamma):
    _builtin_node = "Igammac"


def _igamma(op, input, other, upper):
    a, x = _pair(op, input, other)
    from ._math_more import broadcast_tensors  # noqa: PLC0415

    a, x = broadcast_tensors(a, x)
    return (_Igammac if upper else _Igamma).apply(a.detach() if a.requires_grad else a, x, upper)


def gammainc(input, other):
    """The regularised lower incomplete gamma function ``P(input, other)`` (PyTorch's
    ``igamma``); differentiable in ``other``."""
    return _igamma("gammainc", input, other, False)


def gammaincc(input, other):
    """The regularised upper incomplete gamma function ``Q = 1 - P`` (PyTorch's ``igammac``);
    differentiable in ``other``."""
    return _igamma("gammaincc", input, other, True)


def mvlgamma(input, p):
    """``multigammaln(input, p)`` under PyTorch's top-level name."""
    return multigammaln(input, p)


def _polygamma_method(self, n):
    """``polygamma(n, self)``: the ``n``-th derivative of :func:`digamma`."""
    return polygamma(n, self)


def _attach():
    for name in ["lgamma", "digamma", "i0", "sinc", "xlogy", "float_power", "positive"]:
        if name not in vars(_C.Tensor):
            setattr(_C.Tensor, name, _method(globals()[name], name, globals()[name].__doc__))
    for name, fn in [("igamma", gammainc), ("igammac", gammaincc), ("mvlgamma", mvlgamma)]:
        if name not in vars(_C.Tensor):
            setattr(_C.Tensor, name, _method(fn, name, fn.__doc__))
    if "polygamma" not in vars(_C.Tensor):
        _polygamma_method.__name__ = _polygamma_method.__qualname__ = "polygamma"
        setattr(_C.Tensor, "polygamma", _polygamma_method)


_attach()
