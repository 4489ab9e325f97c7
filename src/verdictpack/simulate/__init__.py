"""verdictpack.simulate: simulated worlds and the operating characteristics of routes.

Owns judges as character sheets, panels and the Gaussian copula, the human layer's simulations
(reader audit, baseline sizing), the simulated evidence source and the vectorised operating
characteristics of every route; what several kinds share to simulate routes (``_routes``: the
route design, one scenario under every route) and the ``panel`` config block built into the
generative model (``_panels``: panels, their cross rule, their summaries). May import the
foundations, ``core``, ``config``, ``stimuli`` and ``evidence``; never a kind.
"""
