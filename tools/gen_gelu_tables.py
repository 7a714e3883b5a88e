"""Regenerates the float32 GELU kernel's per-interval tables (kMillsTableBwd, kMillsTableFwd in
cpp/kernels/cpu/gelu.cpp) and prints them as C++ initialisers.

    pip install mpmath scipy
    python tools/gen_gelu_tables.py

For each interval [k/2 - 1/4, k/2 + 1/4], k = 0..30, of a = |x|, the kernel evaluates a degree-6
polynomial in w = a - c_k approximating f(a): h(a) = Phi(-a) exp(a^2 / 2) for the backward,
h(a) exp(a^2 g) with g = (ln 2 - float(ln 2)) / (2 ln 2) for the forward (see gelu.cpp). c_k is
the float within 0.004 of k/2 (c_0 = 0) where f is nearest to a float, so the constant term is
that float with no low part. The other coefficients are fitted in turn (weighted least squares
for relative error on 120 Chebyshev nodes, 40-digit arithmetic), each rounded to float before the
next is fitted. Row 0 of a table holds c_k, rows 1..7 the coefficients of w^0..w^6; entry 31
repeats entry 30. The worst relative error of each interval's polynomial (before float
evaluation) is printed to stderr.
"""
import sys

import mpmath as mp
import numpy as np
from scipy.special import erfcx

mp.mp.dps = 40
LN2 = mp.log(2)
G = (LN2 - mp.mpf(float(np.float32(float(LN2))))) / (2 * LN2)


def f_mp(a, fwd):
    h = mp.erfc(a / mp.sqrt(2)) * mp.exp(a * a / 2) / 2
    return h * mp.exp(a * a * G) if fwd else h


def f_double(a, fwd):
    h = 0.5 * erfcx(a / np.sqrt(2.0))
    return h * np.exp(a * a * float(G)) if fwd else h


def centre(k, fwd):
    """The float near k/2 where f is closest to a float (candidates screened in double, the best
    20 checked in 40 digits)."""
    if k == 0:
        return np.float32(0.0)
    mid = np.float32(k / 2)
    u = float(np.spacing(mid))
    n = int(0.004 / u)
    cs = (float(mid) + np.arange(-n, n + 1, max(1, n // 20000)) * u).astype(np.float32)
    fv = f_double(cs.astype(np.float64), fwd)
    dist = np.abs(fv - fv.astype(np.float32)) / np.spacing(fv.astype(np.float32))
    best = None
    for c in cs[np.argsort(dist)[:20]]:
        v = f_mp(mp.mpf(float(c)), fwd)
        v32 = np.float32(float(v))
        d = abs(v - mp.mpf(float(v32))) / float(np.spacing(v32))
        if best is None or d < best[0]:
            best = (d, c)
    return best[1]


def fit(k, fwd, deg=6, nodes=120):
    c = centre(k, fwd)
    lo, hi = (0.0, 0.25) if k == 0 else (k / 2 - 0.25 - float(c), k / 2 + 0.25 - float(c))
    w = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)
    fv = [f_mp(mp.mpf(float(c)) + mp.mpf(float(wi)), fwd) for wi in w]
    coef = [mp.mpf(float(np.float32(float(f_mp(mp.mpf(float(c)), fwd)))))]
    weight = np.array([1 / float(v) for v in fv])
    for j in range(1, deg + 1):
        rest = np.array([float(fv[i] - sum(coef[q] * mp.mpf(float(w[i])) ** q for q in range(j))) for i in range(nodes)])
        cols = np.array([[float(wi) ** p for p in range(j, deg + 1)] for wi in w])
        sol = np.linalg.lstsq(cols * weight[:, None], rest * weight, rcond=None)[0]
        coef.append(mp.mpf(float(np.float32(sol[0]))))
    err = 0.0
    for wi in np.linspace(lo, hi, 2001):
        v = f_mp(mp.mpf(float(c)) + mp.mpf(float(wi)), fwd)
        p = sum(coef[q] * mp.mpf(float(wi)) ** q for q in range(deg + 1))
        err = max(err, float(abs(p - v) / v))
    return float(c), [float(x) for x in coef], err / 2.0**-24


def literal(v):
    v32 = np.float32(v)
    for digits in range(6, 12):
        t = f"{float(v32):.{digits}g}"
        if np.float32(float(t)) == v32:
            break
    return t + ("" if "e" in t or "." in t else ".0") + "f"


def main():
    for name, fwd in (("kMillsTableBwd", False), ("kMillsTableFwd", True)):
        entries = []
        for k in range(31):
            c, coef, err = fit(k, fwd)
            print(f"{name} k={k} c={c!r} max rel err {err:.3f} ulp", file=sys.stderr)
            entries.append([c] + coef)
        entries.append(entries[-1])
        print(f"alignas(64) inline constexpr float {name}[8][32] = {{")
        for row in range(8):
            print("    {" + ", ".join(literal(e[row]) for e in entries) + "},")
        print("};")


if __name__ == "__main__":
    main()
