"""A live study's folder: kept, never replaced (the ledger of paid judgments lives in it).

The folder's path checks are the output folder's (:func:`verdictpack._output.check_output_path`);
its ``report/`` is an ordinary output folder, rewritten atomically by each run.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from verdictpack._errors import OutputError
from verdictpack._output import REPORT_FOLDER, _fsync_path, _names, _write_all, check_output_path
from verdictpack.evidence._ledger import LEDGER_FILENAME as LEDGER_NAME

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock
    fcntl = None  # type: ignore[assignment]

__all__ = ["LEDGER_NAME", "LIVE_LOCK", "LIVE_MARKER", "REPORT_FOLDER", "LiveFolder", "run_active"]

LIVE_MARKER = ".verdictpack-live.json"
LIVE_LOCK = ".verdictpack-live.lock"
LIVE_MARKER_TMP = LIVE_MARKER + ".tmp"


def _live_marker_text(manifest: str) -> str:
    data = {"format": 1, "manifest": manifest, "written_by": "verdictpack"}
    return json.dumps(data, sort_keys=True, indent=2) + "\n"


def _live_marker_prefix(path: Path) -> bool:
    """The file's bytes are a prefix of a live marker verdictpack writes (any manifest hash):
    a temporary marker of ours, whole or cut short by a kill."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(4096)
    except OSError:
        return False
    template = _live_marker_text("0" * 64).encode()
    start = template.index(b"0" * 64)
    if len(data) > len(template):
        return False
    for i, byte in enumerate(data):
        if start <= i < start + 64:
            if byte not in b"0123456789abcdef":
                return False
        elif byte != template[i]:
            return False
    return True


class LiveFolder:
    """The folder of a live study (``verdictpack STUDY --out DIR`` with live judges).

    Unlike a run's output folder it is never replaced: it holds the evidence ledger
    (``ledger.sqlite``, the paid judgments), the marker ``.verdictpack-live.json`` naming the
    study's manifest hash, and ``report/`` (an ordinary output folder, rewritten atomically by each
    run). A new or empty DIR starts a study; a DIR whose marker names the same manifest resumes it;
    anything else is refused: another manifest ("a study never mixes manifests"), a folder that is
    not a live study's, or ``--force`` (a fresh start needs a new folder). The path checks are the
    output folder's (:func:`check_output_path`). A lock inside DIR (``.verdictpack-live.lock``,
    flock, non-blocking) keeps a second run off the same ledger.

    Crash safety of the start: DIR is made, locked, the marker
    written to ``.verdictpack-live.json.tmp``, fsynced and renamed into place. A run killed at
    any step leaves a folder the next run takes up: a lock file of a dead process is taken
    again (the kernel dropped its flock), and a temporary marker of ours (its bytes a prefix of
    a marker verdictpack writes) is removed under the lock; a folder holding only those is a
    fresh start. Anything else in DIR is never touched.
    """

    def __init__(
        self, out: str | Path, *, config: str | Path, manifest: str, force: bool = False
    ) -> None:
        self.path = check_output_path(out, protect=(config,), label="--out")
        self._fd: int | None = None
        given = os.fspath(out)
        marker = self.path / LIVE_MARKER
        if force:
            raise OutputError(
                f"--out {given}: --force never replaces a live study's folder (it holds the "
                "ledger of paid judgments); rerun without --force to resume, or choose a new "
                "folder for a fresh start"
            )
        if self.path.exists():
            if not self.path.is_dir():
                raise OutputError(f"--out {given}: expected a folder; it is a file")
            # our lock and temporary marker left by a run killed at its start are not a study
            entries = sorted(p.name for p in self.path.iterdir() if not self._ours(p.name))
            if entries and LIVE_MARKER not in entries:
                raise OutputError(
                    f"--out {given}: not empty and not a live study's folder (no {LIVE_MARKER}; "
                    f"found {_names(entries)}); refused: choose a new folder"
                )
            if entries:
                try:
                    data = json.loads(marker.read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    raise OutputError(f"--out {given}: unreadable {LIVE_MARKER} ({exc})") from None
                held = data.get("manifest") if isinstance(data, dict) else None
                if held != manifest:
                    raise OutputError(
                        f"--out {given}: this folder holds another study (manifest "
                        f"{str(held)[:12]}, this config's is {manifest[:12]}: prompts, sampling, "
                        "endpoints, judges or stimuli changed); a study never mixes manifests: "
                        "start the changed study in a new folder"
                    )
        self._created = False
        if not self.path.exists():
            self.path.mkdir(parents=True)
            self._created = True
        self._lock()
        tmp = self.path / LIVE_MARKER_TMP
        if tmp.is_file() and not tmp.is_symlink() and _live_marker_prefix(tmp):
            tmp.unlink()  # ours, left by a run killed while writing it: we hold the lock
        self._fresh = not marker.exists()
        if self._fresh:
            data = _live_marker_text(manifest).encode("utf-8")
            try:
                fd = os.open(
                    tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644
                )
            except FileExistsError:
                self.release()
                raise OutputError(
                    f"--out {given}: {tmp.name} is there and is not verdictpack's temporary "
                    "marker; refused (remove it if it is not yours)"
                ) from None
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, marker)
            _fsync_path(self.path, folder=True)

    @staticmethod
    def _ours(name: str) -> bool:
        """The lock and the temporary marker, which a run killed at its start leaves."""
        return name in (LIVE_LOCK, LIVE_MARKER_TMP)

    def _lock(self) -> None:
        if fcntl is None:  # pragma: no cover - Windows
            return
        fd = os.open(self.path / LIVE_LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0))
        try:
            for wait in (0.05, 0.2, 0.0):  # a `status` probing the lock holds it for microseconds
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    if not wait:
                        raise
                    time.sleep(wait)
        except OSError:
            os.close(fd)
            raise OutputError(
                f"--out {self.path}: another verdictpack run is working on this live study "
                "(its lock is held); refused"
            ) from None
        self._fd = fd

    @property
    def ledger(self) -> Path:
        return self.path / LEDGER_NAME

    @property
    def fresh(self) -> bool:
        """This run wrote the marker: the study starts here (no earlier run began it)."""
        return self._fresh

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> LiveFolder:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.release()
        if exc_type is not None and self._fresh and not self.ledger.exists():
            # refused before anything was asked: leave no half-made study behind
            for name in (LIVE_MARKER, LIVE_LOCK):
                with contextlib.suppress(FileNotFoundError):
                    (self.path / name).unlink()
            if self._created:
                with contextlib.suppress(OSError):
                    self.path.rmdir()


def run_active(folder: Path) -> bool:
    """Whether a verdictpack run holds ``folder``'s lock now (a lock file left by a process that
    is gone holds nothing: the kernel dropped its flock). Never makes the lock file."""
    if fcntl is None:  # pragma: no cover - Windows: no lock
        return False
    try:
        fd = os.open(folder / LIVE_LOCK, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # dropped again as fd closes
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
