"""verdictpack.simulate: simulated worlds and the operating characteristics of routes.

Owns judges as character sheets, panels and the Gaussian copula, the human layer's simulations
(reader audit, baseline sizing), the simulated evidence source and the vectorised operating
characteristics of every route. May import the foundations, ``core``, ``config``, ``stimuli`` and
``evidence``; never a kind.
"""
