"""The reader-audit gate's coverage and pass-rate table (docs/statistics.md §11); seeded.

Run from the repository root: python scripts/kappa_gate_table.py
"""

import numpy as np

from verdictpack._rng import stream
from verdictpack.core._agreement import kappa_lower_bounds


def tables(kappa, m, n, reps, purpose):
    m = np.asarray(m, float)
    cells = ((1 - kappa) * np.outer(m, m) + kappa * np.diag(m)).ravel()
    return (
        stream(20240611, purpose)
        .multinomial(n, cells / cells.sum(), size=reps)
        .reshape(reps, len(m), len(m))
    )


def bounds(t, level=0.95):
    n = int(t[0].sum())
    pe = np.einsum("ri,ri->r", t.sum(2), t.sum(1)) / float(n * n)
    ok = pe < 1 - 1e-12
    b = kappa_lower_bounds(np.trace(t, axis1=1, axis2=2), n, np.where(ok, pe, 0.0), level)
    po = np.trace(t, axis1=1, axis2=2) / n
    return np.where(ok, b, np.nan), np.where(ok, (po - pe) / np.where(ok, 1 - pe, 1), np.nan)


R = 20000
print(
    "| true kappa | n | marginals | coverage of the 95% bound | P(pass) bound gate 0.6 "
    "| P(pass) point-estimate gate 0.6 |"
)
print("|---|---|---|---|---|---|")
for k, n, m in [
    (0.5, 40, [0.5, 0.5]),
    (0.6, 40, [0.5, 0.5]),
    (0.7, 40, [0.5, 0.5]),
    (0.8, 40, [0.5, 0.5]),
    (0.9, 40, [0.5, 0.5]),
    (0.5, 40, [0.8, 0.2]),
    (0.3, 20, [0.9, 0.1]),
    (0.5, 100, [0.5, 0.5]),
    (0.7056, 200, [0.5, 0.5]),
    (0.7, 100, [0.6, 0.3, 0.1]),
    (0.5, 60, [0.25] * 4),
    (0.8, 200, [0.7, 0.3]),
]:
    b, kh = bounds(tables(k, m, n, R, f"doc/{k}/{n}/{m}"))
    ok = ~np.isnan(b)
    print(
        f"| {k} | {n} | {m} | {np.mean(b[ok] <= k):.4f} | {np.mean(b[ok] >= 0.6):.4f} "
        f"| {np.mean(kh[ok] >= 0.6):.4f} |"
    )
