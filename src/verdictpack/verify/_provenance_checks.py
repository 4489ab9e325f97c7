"""Self-audit checks of provenance.json: the seed, the seed commitment, the config hashes
(SHA-256 of the bytes and of an RFC 8785 form written here from the RFC)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from verdictpack.verify._findings import _Auditor, _show, load_config_bytes
from verdictpack.verify._inputs import _audit_echoes

# ==============================================================================================
# Provenance
# ==============================================================================================

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_SAFE_INTEGER = 2**53 - 1  # RFC 8785 numbers are IEEE doubles: larger integers have no one form


def _is_sha256(v: Any) -> bool:
    return isinstance(v, str) and _SHA256_HEX.fullmatch(v) is not None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _expected_commitment(seed: int, config_jcs_sha256: str) -> str:
    """The seed commitment from its definition: SHA-256 of the UTF-8 lines
    ``verdictpack/seed-commitment/v1``, the canonical config's SHA-256 and the decimal seed, each
    ending in a newline (written here again; the audit imports nothing that computed it)."""
    lines = [b"verdictpack/seed-commitment/v1", config_jcs_sha256.encode("ascii"), b"%d" % seed]
    return hashlib.sha256(b"".join(line + b"\n" for line in lines)).hexdigest()


def _es_number(x: float) -> str:
    """ECMAScript's Number::toString of a finite double (RFC 8785 section 3.2.2.3): the shortest
    round-trip digits (Python's repr finds them), placed by the decimal exponent."""
    if x == 0:
        return "0"
    _, digit_tuple, exp = Decimal(repr(abs(x))).as_tuple()
    if not isinstance(exp, int):
        raise ValueError(f"number {x} has no RFC 8785 form")
    all_digits = "".join(map(str, digit_tuple))
    n = exp + len(all_digits)  # value = 0.d1d2... × 10^n
    digits = all_digits.rstrip("0")
    k = len(digits)
    out = "-" if x < 0 else ""
    if k <= n <= 21:
        return out + digits + "0" * (n - k)
    if 0 < n <= 21:
        return out + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return out + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return out + mantissa + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def _es_string(s: Any) -> str:
    """A JSON string with only the mandatory escapes (RFC 8785 section 3.2.2.2): json.dumps's."""
    if not isinstance(s, str):  # a YAML object name that is not a string
        raise ValueError(f"object name {s!r} has no RFC 8785 form")
    return json.dumps(s, ensure_ascii=False)


def _canonical_json(value: Any) -> str:
    """RFC 8785 (JSON Canonicalization Scheme) text of a parsed JSON value, written here from the
    RFC: no whitespace, object members sorted by the UTF-16 code units of their names, numbers in
    ECMAScript form, strings with only the mandatory escapes. ValueError where the RFC has no
    form (non-finite numbers, integers beyond 2^53 - 1, object names that are not strings)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if abs(value) > _SAFE_INTEGER:
            raise ValueError(f"integer {value} has no RFC 8785 form (beyond 2^53 - 1)")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"number {value} has no RFC 8785 form")
        return _es_number(value)
    if isinstance(value, str):
        return _es_string(value)
    if isinstance(value, list):
        return "[" + ",".join(_canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be"))
        return "{" + ",".join(_es_string(k) + ":" + _canonical_json(value[k]) for k in keys) + "}"
    raise ValueError(f"{type(value).__name__} is not a JSON value")


def _audit_provenance(
    A: _Auditor, res: dict[str, Any], prov: dict[str, Any], config: Path | None
) -> None:
    """The seed in results.json and provenance.json agree; the seed commitment is recomputed; the
    config hashes are SHA-256 digests; with the config file, both hashes are recomputed from its
    bytes and its kind and seed are the recorded ones."""
    p = "provenance.json"
    if not A.true(p, "provenance present", bool(prov), "provenance.json", "missing or empty"):
        return
    seed, recorded = res.get("seed"), prov.get("seed")
    A.eq(f"{p} $.seed", "the seed recorded in provenance is results.json $.seed", seed, recorded)
    for key in ("config_sha256", "config_jcs_sha256"):
        v = prov.get(key)
        A.true(f"{p} $.{key}", "a SHA-256 digest", _is_sha256(v), "64 lowercase hex digits", v)
    jcs, commitment = prov.get("config_jcs_sha256"), prov.get("seed_commitment")
    where = f"{p} $.seed_commitment"
    if recorded is None:
        A.eq(where, "no seed, no seed commitment", None, commitment)
    elif _is_int(recorded) and isinstance(jcs, str) and _is_sha256(jcs):
        A.eq(
            where,
            "recomputed from the seed and config_jcs_sha256",
            _expected_commitment(recorded, jcs),
            commitment,
        )
    else:
        A.true(
            where,
            "recomputable",
            False,
            "an integer seed and a well-formed config_jcs_sha256",
            f"seed {_show(recorded)}, config_jcs_sha256 {_show(jcs)}",
        )
    if res.get("kind") == "study" or "data_files" in prov.get("settings", {}):
        _audit_data_files(A, prov, config)
    if config is None:
        A.unverified(
            f"{p} $.config_sha256, $.config_jcs_sha256",
            "the config hashes recomputed from the config file",
            "the config file was not given (verdictpack audit RUN_DIR --config FILE)",
        )
        return
    try:
        raw = config.read_bytes()
        data = load_config_bytes(raw, config.name)
        canonical = _canonical_json(data).encode("utf-8")
    except (OSError, ValueError, UnicodeError) as exc:
        A.true(
            str(config),
            "the config file is JSON or YAML with an RFC 8785 form",
            False,
            "a readable JSON or YAML config",
            f"{type(exc).__name__}: {exc}",
        )
        return
    A.eq(
        f"{p} $.config_sha256",
        f"SHA-256 of the bytes of {config.name}",
        hashlib.sha256(raw).hexdigest(),
        prov.get("config_sha256"),
    )
    A.eq(
        f"{p} $.config_jcs_sha256",
        f"SHA-256 of the RFC 8785 form of {config.name}",
        hashlib.sha256(canonical).hexdigest(),
        jcs,
    )
    fields = data if isinstance(data, dict) else {}
    A.eq(f"{p} $.seed", f"the seed of {config.name}", fields.get("seed"), recorded)
    A.eq(f"{p} $.kind", f"the kind of {config.name}", fields.get("kind"), prov.get("kind"))
    _audit_echoes(A, res, prov, data, config.name)


# "live": a live study's ledger answers on the committed roots (path ledger.sqlite in the study's
# folder; the digest is that of their canonical CSV)
_DATA_ROLES = ("stimuli", "judgments", "reader_audit", "root_order", "live")


def _audit_data_files(A: _Auditor, prov: dict[str, Any], config: Path | None) -> None:
    """The data files a study read (``settings.data_files``): each with a known role, a path
    relative to the config's folder and a 64-hex SHA-256; with the config file, each digest is
    recomputed from the file's bytes in the config's folder (UNVERIFIED where it is gone)."""
    where = "provenance.json $.settings.data_files"
    files = prov.get("settings", {}).get("data_files")
    if not A.true(
        where,
        "the data files read are recorded",
        isinstance(files, list) and bool(files),
        "a non-empty list",
        files,
    ):
        return
    roles = [f.get("role") if isinstance(f, dict) else None for f in files]
    A.true(
        where,
        "one stimulus file, at most one reader audit, at least one judgment file, known roles",
        roles.count("stimuli") == 1
        and roles.count("reader_audit") <= 1
        and roles.count("judgments") >= 1
        and roles.count("root_order") <= 1
        and roles.count("live") <= 1
        and all(r in _DATA_ROLES for r in roles),
        ", ".join(_DATA_ROLES),
        roles,
    )
    for k, f in enumerate(files):
        fw = f"{where}[{k}]"
        f = f if isinstance(f, dict) else {}
        digest, rel = f.get("sha256"), f.get("path")
        A.true(fw + ".sha256", "a SHA-256 digest", _is_sha256(digest), "64 lowercase hex", digest)
        ok_path = isinstance(rel, str) and bool(rel) and not Path(rel).is_absolute()
        A.true(fw + ".path", "a path relative to the config's folder", ok_path, "relative", rel)
        if config is None or not ok_path or f.get("role") == "live":
            continue
        if str(f.get("format")).endswith("(frame)"):  # verdictpack.run(..., frames=...)
            A.unverified(fw + ".sha256", f"SHA-256 of {rel}", "read from a DataFrame, not a file")
            continue
        target = config.parent / str(rel)
        if not target.is_file():
            A.unverified(
                fw + ".sha256",
                f"SHA-256 of {rel} recomputed",
                f"no file {rel} beside the config (moved since the run?)",
            )
            continue
        A.eq(
            fw + ".sha256",
            f"SHA-256 of the bytes of {rel} (beside the config)",
            hashlib.sha256(target.read_bytes()).hexdigest(),
            digest,
        )
