"""verdictpack.kinds: one module per config kind (sizing, verdict, judges, engine, battery).

Each kind owns its config model, its run function and its frozen result. A kind never imports
another kind: what two kinds share lives a floor below (``simulate._routes``,
``simulate._panels``, ``config._blocks``). Kinds never import ``render`` or ``verify``; the CLI
runs the kind's ``LAYER.run`` and renders the result with :func:`verdictpack.render.render`, which
picks the renderer by the result's type. ``_base`` (the Layer contract) is the only kinds module
a kind imports besides its own parts (the study's: ``_study_config``, ``_study_judges``,
``_study_live``).
"""
