"""verdictpack.config: configs in, compiled constructs out.

Owns the config loader (strict JSON: duplicate keys, non-finite numbers, deep nesting refused by
JSON path), the construct compiler, the config blocks shared by several kinds (sequential settings,
panels of character sheets, human layer, routes), the mapping of statistics refusals back to config
fields, and provenance (what produced an output folder). May import the foundations and
``verdictpack.core``.
"""
