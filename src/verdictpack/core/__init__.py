"""verdictpack.core: the mathematics, with no config and no I/O.

Owns:

* ``_scales`` — the effect scales, written once: φ, φ⁻¹, Cohen's h, the odds-ratio conversions
  (every Python user imports them from here; only the self-audit keeps its own copy);
* ``_exact`` — the exact statistics of sizing (noncentral-t power, exact binomial regions,
  arcsine power);
* ``_agreement`` — Cohen's κ of two readers and its asymptotic interval;
* the anytime-valid sequential core: ``_mixture`` (mixture e-processes and confidence sequences,
  scalar and batch), ``_hinterval`` (the corners and hybrid h-intervals, the verdict
  classification), ``_tracker`` (the trackers that run a construct's streams to a verdict) and
  the compiled batch kernel ``_kernel.c``;
* ``_sprt`` — Wald's SPRT.
* ``_libm`` — log, exp, arcsin, sin and sums of products with the same bits on every machine
  (numpy's own loops differ on a CPU with AVX-512; every number written goes through these).

May import only the foundations (``verdictpack._errors``, ``_validate``, ``_results``, ``_rng``,
``_parallel``); nothing above it. The statistics are written down in ``docs/statistics.md``.
"""
