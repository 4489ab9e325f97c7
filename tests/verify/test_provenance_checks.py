"""The self-audit of provenance.json (verify/_provenance_checks.py): seeds agree, the commitment
is recomputed, the hashes are digests (and, with the config file, its hashes); tampering is named;
the audit's own commitment formula and RFC 8785 form agree with the tool's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from audit_runs import config_of, copy_run, edit_json, failed, runs

from conftest import ROOT
from verdictpack._cli import main
from verdictpack.verify import _provenance_checks, audit_run

__all__ = ["copy_run", "runs"]  # the fixtures, imported by name

_PROV = "provenance.json"


def test_untouched_provenance_passes_with_and_without_the_config(runs: dict[str, Path]) -> None:
    for kind in runs:
        report = audit_run(runs[kind], config_of(runs, kind))
        assert report.failed == 0, "\n".join(f.line() for f in report.failures())
        checks = {f.where + " — " + f.what for f in report.findings if f.status == "pass"}
        for expected in (
            f"{_PROV} $.seed — the seed recorded in provenance is results.json $.seed",
            f"{_PROV} $.seed_commitment — recomputed from the seed and config_jcs_sha256",
            f"{_PROV} $.config_sha256 — a SHA-256 digest",
            f"{_PROV} $.config_jcs_sha256 — a SHA-256 digest",
            f"{_PROV} $.config_sha256 — SHA-256 of the bytes of {kind}.json",
            f"{_PROV} $.config_jcs_sha256 — SHA-256 of the RFC 8785 form of {kind}.json",
            f"{_PROV} $.seed — the seed of {kind}.json",
        ):
            assert expected in checks, (kind, expected)
    # without the config file its hashes are UNVERIFIED, with the reason, never passed
    report = audit_run(runs["sizing"])
    assert report.failed == 0
    assert [f.what for f in report.findings if f.where.startswith(f"{_PROV} $.config_sha256,")] == [
        "the config hashes recomputed from the config file"
    ]
    assert any("--config FILE" in f.expected for f in report.findings if f.status == "unverified")


def _flip(digest: str) -> str:
    """Another well-formed digest: the last hex digit changed."""
    return digest[:-1] + ("0" if digest[-1] != "0" else "1")


# name -> (file, edit, whether --config is given, the checks that must fail)
_TAMPER: dict[str, tuple[str, Callable[[Any], None], bool, tuple[str, ...]]] = {
    "results seed": (
        "results.json",
        lambda d: d.__setitem__("seed", d["seed"] + 1),
        False,
        (f"{_PROV} $.seed — the seed recorded in provenance",),
    ),
    "provenance seed": (
        _PROV,
        lambda d: d.__setitem__("seed", d["seed"] + 1),
        False,
        (f"{_PROV} $.seed — the seed recorded", f"{_PROV} $.seed_commitment — recomputed"),
    ),
    "provenance seed, config given": (
        _PROV,
        lambda d: d.__setitem__("seed", d["seed"] + 1),
        True,
        (f"{_PROV} $.seed — the seed of sizing.json",),
    ),
    "seed as a string": (
        _PROV,
        lambda d: d.__setitem__("seed", str(d["seed"])),
        False,
        (f"{_PROV} $.seed — the seed recorded", f"{_PROV} $.seed_commitment — recomputable"),
    ),
    "seed commitment": (
        _PROV,
        lambda d: d.__setitem__("seed_commitment", _flip(d["seed_commitment"])),
        False,
        (f"{_PROV} $.seed_commitment — recomputed",),
    ),
    "seed commitment removed": (
        _PROV,
        lambda d: d.__setitem__("seed_commitment", None),
        False,
        (f"{_PROV} $.seed_commitment — recomputed",),
    ),
    "config_sha256 upper case": (
        _PROV,
        lambda d: d.__setitem__("config_sha256", d["config_sha256"].upper()),
        False,
        (f"{_PROV} $.config_sha256 — a SHA-256 digest",),
    ),
    "config_sha256 truncated": (
        _PROV,
        lambda d: d.__setitem__("config_sha256", d["config_sha256"][:63]),
        False,
        (f"{_PROV} $.config_sha256 — a SHA-256 digest",),
    ),
    "config_sha256 another digest, config given": (
        _PROV,
        lambda d: d.__setitem__("config_sha256", _flip(d["config_sha256"])),
        True,
        (f"{_PROV} $.config_sha256 — SHA-256 of the bytes of sizing.json",),
    ),
    "config_jcs_sha256 not hex": (
        _PROV,
        lambda d: d.__setitem__("config_jcs_sha256", "g" * 64),
        False,
        (
            f"{_PROV} $.config_jcs_sha256 — a SHA-256 digest",
            f"{_PROV} $.seed_commitment — recomputable",
        ),
    ),
    "config_jcs_sha256 another digest": (
        _PROV,
        lambda d: d.__setitem__("config_jcs_sha256", _flip(d["config_jcs_sha256"])),
        False,
        (f"{_PROV} $.seed_commitment — recomputed",),
    ),
    "config_jcs_sha256 and commitment forged together, config given": (
        _PROV,
        lambda d: d.update(
            config_jcs_sha256=_flip(d["config_jcs_sha256"]),
            seed_commitment=_provenance_checks._expected_commitment(
                d["seed"], _flip(d["config_jcs_sha256"])
            ),
        ),
        True,
        (f"{_PROV} $.config_jcs_sha256 — SHA-256 of the RFC 8785 form of sizing.json",),
    ),
}


@pytest.mark.parametrize("name", list(_TAMPER))
def test_tampered_provenance_fails_naming_the_check(
    runs: dict[str, Path],
    copy_run: Callable[[str], Path],
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    file, edit, with_config, expected = _TAMPER[name]
    run = copy_run("sizing")
    edit_json(run / file, edit)
    argv = ["audit", str(run)] + (
        ["--config", str(config_of(runs, "sizing"))] if with_config else []
    )
    assert main(argv) == 1
    out = capsys.readouterr().out
    failed = [line.strip() for line in out.splitlines() if line.strip().startswith("FAIL ")]
    for check in expected:
        assert any(line.startswith("FAIL " + check) for line in failed), (check, failed)
    assert "AUDIT FAIL" in out


def test_missing_provenance_fails(copy_run: Callable[[str], Path]) -> None:
    run = copy_run("sizing")
    (run / _PROV).unlink()
    report = audit_run(run)
    assert [f.what for f in failed(report, _PROV) if f.where == _PROV] == ["provenance present"]


def test_another_config_fails_its_hashes(
    runs: dict[str, Path], write_config: Callable[..., Path]
) -> None:
    data = json.loads(config_of(runs, "sizing").read_text())
    data["seed"] += 1
    other = write_config(data, "sizing.json")
    report = audit_run(runs["sizing"], other)
    names = {f.where + " — " + f.what for f in report.failures()}
    assert f"{_PROV} $.config_sha256 — SHA-256 of the bytes of sizing.json" in names
    assert f"{_PROV} $.config_jcs_sha256 — SHA-256 of the RFC 8785 form of sizing.json" in names
    assert f"{_PROV} $.seed — the seed of sizing.json" in names
    # the same content, formatted differently: the bytes differ, the canonical form does not
    same = other.parent / "reformatted" / "sizing.json"
    same.parent.mkdir()
    same.write_text(json.dumps(json.loads(config_of(runs, "sizing").read_text()), indent=3))
    report = audit_run(runs["sizing"], same)
    assert [f.where for f in report.failures()] == [f"{_PROV} $.config_sha256"]


def test_the_seed_commitment_and_rfc8785_are_rewritten_alike() -> None:
    """The audit's own formula and canonical form agree with the tool's (tests may import it)."""
    import rfc8785
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from verdictpack.config._provenance import seed_commitment

    for seed, digest in [(0, "0" * 64), (20261130, "ab" * 32), (2**63 - 1, "f" * 64)]:
        assert _provenance_checks._expected_commitment(seed, digest) == seed_commitment(
            seed, digest
        )
    for path in sorted((ROOT / "examples").glob("*.json")):
        data = json.loads(path.read_text())
        assert _provenance_checks._canonical_json(data).encode() == rfc8785.dumps(data), path.name
    for x in (1e21, 1e20, 1e-7, 1e-6, 1.5e-7, 123456789012345680000.0, 5e-324, -0.0, 0.1, 100.0):
        assert _provenance_checks._canonical_json(x).encode() == rfc8785.dumps(x), x

    floats = st.floats(allow_nan=False, allow_infinity=False)
    ints = st.integers(-(2**53) + 1, 2**53 - 1)
    scalars = st.none() | st.booleans() | ints | floats | st.text(max_size=8)
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=12,
    )

    @settings(max_examples=400, derandomize=True, deadline=None, database=None)
    @given(values)
    def agree(v: Any) -> None:
        assert _provenance_checks._canonical_json(v).encode() == rfc8785.dumps(v)

    agree()
    for bad in (float("nan"), float("inf"), 2**53, -(2**60), {1: "a name not a string"}):
        with pytest.raises(ValueError):
            _provenance_checks._canonical_json(bad)


# ----------------------------------------------------------------------------------------------
