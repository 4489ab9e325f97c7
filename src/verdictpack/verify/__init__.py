"""verdictpack.verify: the self-audit, the seal test and the one-command reproduction.

The self-audit re-derives every headline number of output folders by a second, independent
method. Independence is the point, so verify imports only the foundations
(``verdictpack._errors``, ``_results``, ``_output``, ...) and never core/, config/, stimuli/,
simulate/, kinds/ or render/: every formula it checks against is written again here.

Modules of the self-audit (``verdictpack audit``):

* ``_findings``: :class:`Finding`, :class:`AuditReport`, the collecting auditor, tolerances.
* ``_rederive``: the independent mathematics (normal / t / binomial / SPRT / e-process /
  confidence sequence / h-interval / kappa re-derivations, ``_phi`` / ``_phi_inv``).
* ``_kinds``: checks of every kind (construct, labelled quantities) and of the sizing kind.
* ``_kinds_oc``: operating characteristics, the SPRT's exact cells; verdict, judges, battery.
* ``_kinds_engine``: the engine kind (tracks rebuilt from evidence.jsonl, costs, CSV).
* ``_kinds_study``: the study kind (the registered order, M_i and H_i from judgments.csv, the
  tracks rebuilt, kappa from reader_audit.csv, coverage, gate counts and costs).
* ``_worlds``: the simulated worlds held to their names.
* ``_inputs``: the folder's marker (every file listed and unchanged) and, with the config, every
  echoed input compared with it.
* ``_provenance_checks``: provenance.json (seed commitment, config hashes, RFC 8785).
* ``_command``: the driver over run folders and the ``cli``.

The seal test (``_seal``) and the reproduction (``_reproduce``) run the installed command line
in subprocesses.
"""

from verdictpack.verify._command import AuditReport, Finding, audit_run, audit_runs, format_reports

__all__ = ["AuditReport", "Finding", "audit_run", "audit_runs", "format_reports"]
