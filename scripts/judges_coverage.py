"""Coverage of the judges' 95 % intervals with correlated trials (docs/statistics.md, the
judges' intervals): seeded, 1,000 replicates per root count.

One judge, 5 trials per order, both orders on every root. Trial t on root i in order o prefers
the treatment iff 0.5·U_i + 0.6·V_io + √0.39·E_iot < Φ⁻¹(0.7 ± 0.08): a root latent shared by
every judgment on the root and a root-and-order latent shared by the trials of one order (the
simulation of tests/core/test_estimates.py). Printed: the coverage of the root-clustered
intervals of core._estimates, and of the independent-binomial intervals they replaced (exact
Clopper–Pearson on all judgments; Newcombe's square-and-add for the bias), with the mean design
effect of the rate. Run::

    python scripts/judges_coverage.py
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from verdictpack.core._estimates import estimate_panel

RATE, BIAS, TRIALS, REPS = 0.7, 0.08, 5, 1000


def _cp(x: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(x, n).proportion_ci(0.95, method="exact")
    return float(ci.low), float(ci.high)


def main() -> None:
    print(
        "| roots | design effect (rate) | rate: independent | rate: clustered "
        "| bias: independent | bias: clustered |"
    )
    print("|---|---|---|---|---|---|")
    for n_roots in (30, 80, 200):
        rng = np.random.default_rng(20240 + n_roots)  # the test's seeds
        u = rng.standard_normal((REPS, n_roots, 1, 1))
        v = rng.standard_normal((REPS, n_roots, 2, 1))
        e = rng.standard_normal((REPS, n_roots, 2, TRIALS))
        z = 0.5 * u + 0.6 * v + math.sqrt(1 - 0.25 - 0.36) * e
        cut = stats.norm.ppf([RATE + BIAS, RATE - BIAS])[None, None, :, None]
        x = (z < cut).astype(float)
        root = np.repeat(np.arange(n_roots), 2 * TRIALS)
        order = np.tile(np.repeat([0, 1], TRIALS), n_roots)
        trial = np.tile(np.arange(TRIALS), 2 * n_roots)
        rater = np.zeros(root.size, int)
        hits = np.zeros(4)
        deff = []
        for k in range(REPS):
            value = x[k].reshape(-1)
            est = estimate_panel(root, rater, order, value, names=["judge"], trial=trial)
            (r,), (b,) = est.rates, est.position_biases
            assert r.ci_low is not None and r.ci_high is not None
            assert b.ci_low is not None and b.ci_high is not None
            deff.append(r.design_effect)
            n, n1 = value.size, value.size // 2
            lo, hi = _cp(int(value.sum()), n)
            s1, s2 = int(value[order == 0].sum()), int(value[order == 1].sum())
            m1, m2 = s1 / n1, s2 / n1
            (l1, u1), (l2, u2) = _cp(s1, n1), _cp(s2, n1)
            blo = (m1 - m2 - math.hypot(m1 - l1, u2 - m2)) / 2
            bhi = (m1 - m2 + math.hypot(u1 - m1, m2 - l2)) / 2
            hits += [
                lo <= RATE <= hi,
                r.ci_low <= RATE <= r.ci_high,
                blo <= BIAS <= bhi,
                b.ci_low <= BIAS <= b.ci_high,
            ]
        c = hits / REPS
        print(
            f"| {n_roots} | {np.mean(deff):.2f} | {c[0]:.3f} | {c[1]:.3f} | {c[2]:.3f} "
            f"| {c[3]:.3f} |"
        )


if __name__ == "__main__":
    main()
