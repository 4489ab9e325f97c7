"""verdictpack.render: result objects to files (Markdown, JSON, CSV).

Renders only what a frozen result object holds: nothing is recomputed, nothing parsed back. May
import every floor below it (kinds included, for the result types); never ``verify`` or the CLI.
"""
