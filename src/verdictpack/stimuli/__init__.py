"""verdictpack.stimuli: what a root event is, and the gates that admit or refuse it.

Owns the stimulus types, the mechanical gates, the built-in template generator for simulated
studies and the gate spot-check sizing. May import the foundations, ``core`` and ``config``.
"""
