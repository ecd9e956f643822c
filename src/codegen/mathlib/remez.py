"""Minimax polynomial fits for the math library's native f32 kernels (gen_f32.py uses it; needs
mpmath and numpy from PyPI).

A fit minimizes max |w(x) (f(x) - p(x))| over a grid of [a, b] for p(x) = sum of c_k x^k over
the free powers, some powers' coefficients held fixed. The function and the weight are computed
once per grid point at high precision (mpmath) and rounded to float64, which is plenty: the
errors of interest are near 2^-22 .. 2^-36 of values near 1. The fit is Lawson's algorithm
(least squares with weights multiplied by the error at each step, which converges to the minimax
solution), then Remez exchange steps from its extrema. fit_f32 rounds the free coefficients to
f32 one at a time, lowest power first, refitting the ones not yet rounded after each rounding so
that the later coefficients absorb the earlier ones' rounding errors, then nudges single
coefficients by an ulp or two while that lowers the error."""
import struct

import mpmath as M
import numpy as np

M.mp.dps = 40


def f32(x):
    """x rounded to the nearest float (through double: the tables here do not need more)."""
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def c_float(v):
    """A C float literal that round-trips (hex)."""
    return float(v).hex() + "f"


class Grid:
    """f and |w| sampled at npts Chebyshev-distributed points of [a, b] (endpoints included;
    points where w is 0 left out: the weighted error is 0 there whatever p is)."""

    def __init__(self, f, w, a, b, npts=1000):
        a, b = M.mpf(a), M.mpf(b)
        xs = [a + (b - a) * (1 - M.cos(M.pi * k / (npts - 1))) / 2 for k in range(npts)]
        ws = [abs(w(x)) for x in xs]
        keep = [i for i in range(npts) if ws[i] != 0]
        self.x = np.array([float(xs[i]) for i in keep])
        self.w = np.array([float(ws[i]) for i in keep])
        self.f = np.array([float(f(xs[i])) for i in keep])

    def errors(self, coefs):
        """w_i (f_i - p(x_i)) for every grid point."""
        acc = self.f.copy()
        for p, c in coefs.items():
            acc -= float(c) * self.x ** p
        return self.w * acc


def _alternating(errs):
    """Indices of the largest |err| in each run of one sign."""
    out = []
    for i, e in enumerate(errs):
        s = e >= 0
        if out and (errs[out[-1]] >= 0) == s:
            if abs(e) > abs(errs[out[-1]]):
                out[-1] = i
        else:
            out.append(i)
    return out


def minimax(g, powers, fixed=None, lawson_iters=400, remez_iters=20):
    """Minimax coefficients for `powers` (a list) with the coefficients in `fixed` ({power: value})
    held. Returns ({power: coefficient} including the fixed ones, max weighted error)."""
    fixed = dict(fixed or {})
    r = g.f.copy()
    for p, c in fixed.items():
        r -= float(c) * g.x ** p
    m = len(powers)
    if m == 0:
        return dict(fixed), float(np.max(np.abs(g.w * r)))
    A = np.stack([g.x ** p for p in powers], axis=1)
    scale = np.max(np.abs(A), axis=0)
    scale[scale == 0] = 1
    A = A / scale
    wa, wr = A * g.w[:, None], r * g.w
    best = None

    def consider(c):
        nonlocal best
        e = wr - wa @ c
        mx = float(np.max(np.abs(e)))
        if best is None or mx < best[1]:
            best = (c.copy(), mx)
        return e, mx

    # Lawson: weighted least squares, weights multiplied by |error| each step
    u = np.full(len(r), 1.0 / len(r))
    for _ in range(lawson_iters):
        s = np.sqrt(u)
        c = np.linalg.lstsq(wa * s[:, None], wr * s, rcond=None)[0]
        e, _ = consider(c)
        u = u * np.abs(e)
        tot = np.sum(u)
        if not tot > 0:
            break
        u /= tot
    # Remez exchange from the best point so far
    for _ in range(remez_iters):
        e = wr - wa @ best[0]
        ext = _alternating(e)
        while len(ext) > m + 1:
            j = min(range(len(ext)), key=lambda k: abs(e[ext[k]]))
            if j == 0 or j == len(ext) - 1:
                ext.pop(j)
            else:
                a, b = ext[j - 1], ext[j + 1]
                ext[j - 1:j + 2] = [a if abs(e[a]) >= abs(e[b]) else b]
        if len(ext) < m + 1:
            break
        sys_ = np.zeros((m + 1, m + 1))
        sys_[:, :m] = wa[ext]
        sys_[:, m] = [(-1) ** j for j in range(m + 1)]
        try:
            sol = np.linalg.solve(sys_, wr[ext])
        except np.linalg.LinAlgError:
            break
        before = best[1]
        consider(sol[:m])
        if best[1] >= before * (1 - 1e-6):
            break
    coefs = dict(fixed)
    coefs.update({p: best[0][k] / scale[k] for k, p in enumerate(powers)})
    return coefs, best[1]


def _ulp_step(v, n):
    """The float n representable steps away from float v (toward larger magnitude for n > 0)."""
    u = struct.unpack("<I", struct.pack("<f", v))[0]
    return struct.unpack("<f", struct.pack("<I", (u + n) & 0xffffffff))[0]


def fit_f32(g, powers, fixed=None, split=()):
    """minimax(), then each free coefficient rounded to f32, lowest power first, refitting the
    rest after each. A power in `split` becomes a pair of floats (hi, lo). Returns
    ({power: float or (hi, lo)}, max weighted error of the rounded polynomial)."""
    fixed = dict(fixed or {})
    done = dict(fixed)
    out = {}
    free = sorted(powers)
    for k, p in enumerate(free):
        coefs, _ = minimax(g, free[k:], done)
        c = coefs[p]
        if p in split:
            hi = f32(c)
            lo = f32(c - hi)
            out[p] = (hi, lo)
            done[p] = hi + lo
        else:
            out[p] = f32(c)
            done[p] = out[p]
    err = float(np.max(np.abs(g.errors(done))))
    # Polish: move single rounded coefficients by a few ulps while that lowers the error.
    improved = True
    while improved:
        improved = False
        for p in free:
            if p in split:
                continue
            for step in (1, -1, 2, -2, 4, -4):
                trial = dict(done)
                trial[p] = _ulp_step(out[p], step)
                e = float(np.max(np.abs(g.errors(trial))))
                if e < err:
                    err, done, out[p], improved = e, trial, trial[p], True
                    break
    for p, c in fixed.items():
        out[p] = float(c)
    return out, err
