"""verdictpack.core: the mathematics, with no config and no I/O.

Owns the exact statistics of sizing (effect scales, noncentral-t power, exact binomial regions,
arcsine power), the anytime-valid sequential core (mixture e-processes, confidence sequences, the
corners and hybrid h-intervals, the verdict classification, the compiled batch kernel
``_kernel.c``) and Wald's SPRT. May import only the foundations (``verdictpack._errors``,
``_results``, ``_rng``, ``_parallel``); nothing above it. The statistics are written down in
``docs/statistics.md``.
"""
