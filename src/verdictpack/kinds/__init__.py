"""verdictpack.kinds: one module per config kind (sizing, verdict, judges, engine, battery).

Each kind owns its config model, its run function and its frozen result. A kind never imports
another kind: what two kinds share lives a floor below (``simulate``, ``config``). Kinds never
import ``render`` or ``verify``; the CLI picks the renderer by the result's type.
"""
