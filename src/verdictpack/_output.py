"""The output folder: checked, locked, replaced atomically, and never anyone else's files.

One mechanism for every kind (``verdictpack CONFIG --out DIR``), also used by ``reproduce
--update``; ``reproduce --out`` and ``seal-test --keep`` use the same path checks.

* **Marker.** Every output folder carries ``.verdictpack-output.json``:
  ``{"files": {relative name: sha256}, "format": 1, "written_by": "verdictpack"}`` (sorted keys,
  no timestamps; the marker does not list itself).
* **Refused always**, ``--force`` or not (:func:`check_output_path`): a DIR that is a symlink
  (the path itself), that exists and is not a folder, the root folder, a folder holding the
  config file or any ancestor of it, the working directory or any ancestor of it, the home folder
  or any ancestor of it, a folder with ``.git`` directly inside it. Paths are resolved first
  (relative paths, ``..``, symlinked parents); the config counts at its given and its real place.
* **Refused without ``--force``:** any non-empty DIR. **With ``--force``** only a folder
  verdictpack wrote is replaced: a valid marker, every file in it listed in the marker and
  unchanged (its SHA-256), nothing else (no unlisted file, folder, symlink). Anything else is
  refused, naming the files that are not verdictpack's.
* **When.** :func:`claim_output` runs the checks, takes the lock and recovers leftovers before any
  computation; :meth:`OutputClaim.write` checks again just before the move into place (and, on
  Linux, once more on the old folder right after the exchange, undoing the exchange if a foreign
  file appeared in the meantime).
* **Lock.** ``.<name>.verdictpack.lock`` beside DIR, ``fcntl.flock`` exclusive and non-blocking:
  held from the claim until the folder is in place, so two runs on one DIR never interleave; the
  second is refused at once. The lock file is removed on release, safely: it is unlinked while
  still locked, and a run that locked a file checks that the path still names that very file
  (same device and inode) and otherwise retries, so a run that opened the file before it was
  unlinked never believes it holds the lock. A SIGKILLed run leaves the file behind (unlocked,
  since the kernel drops the lock with the process); the next run takes it and removes it.
  Without ``fcntl`` (Windows) there is no lock.
* **Writing.** A temporary folder ``.<name>.tmp-XXXXXXXX`` (8 hex digits) beside DIR receives the
  marker first (all hashes are known before any file is written), then every file; then files
  and folders are fsynced. Into place:

  - DIR missing or empty: one ``rename(2)`` (atomic; an empty DIR is replaced by it).
  - DIR a verdictpack folder, on Linux: ``renameat2(RENAME_EXCHANGE)`` (through ctypes on libc)
    swaps the two folders atomically; the old one, now at the temporary path and still carrying
    its marker, is then deleted (its listed files first, its marker last).
  - Elsewhere, or when the kernel or filesystem refuses the exchange (``ENOSYS``, ``EINVAL``):
    DIR is renamed to ``.<name>.old-XXXXXXXX``, the temporary folder to DIR, and the old one is
    deleted. A SIGKILL between the two renames leaves DIR missing and the old copy whole beside
    it: the next run on DIR restores it (renames it back) before doing anything else.

  The parent folder is fsynced after the move. Promise for SIGKILL at any point: the previous DIR
  or the new one is there whole, never neither (on the fallback path, between the two renames,
  the previous one is whole beside DIR, and put back by the next run).
* **Leftovers.** ``.<name>.tmp-*`` and ``.<name>.old-*`` beside DIR are cleaned up by the next run
  on DIR, under its lock, when they are verdictpack's: a valid marker with every file in it listed
  (partly written files allowed), or an empty folder, or one holding nothing but the marker (a
  marker cut short by the kill). Anything else is never touched.

The SIGKILL promise is tested from outside: a driver (``tests/kill_driver.py``) kills the run
after each filesystem call that changes the disk; nothing here names a step.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from verdictpack._errors import OutputError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock (see the module docstring)
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "MARKER",
    "REPORT_FOLDER",
    "OutputClaim",
    "check_output_path",
    "claim_output",
    "marker_bytes",
    "marker_difference",
    "read_marker",
    "write_outputs",
]

MARKER = ".verdictpack-output.json"
MARKER_FORMAT = 1
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_SHA256 = re.compile(r"[0-9a-f]{64}")
_MAX_ENTRIES = 100_000  # a folder scan stops here (only folders carrying a marker are scanned)
_MAX_MARKER_BYTES = 16 << 20
_TRIES = 100


# ----------------------------------------------------------------------------------------------
# The marker
# ----------------------------------------------------------------------------------------------


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def marker_bytes(files: Mapping[str, bytes]) -> bytes:
    """The marker of a folder holding ``files`` (relative name -> bytes)."""
    listing = {name: _sha256(data) for name, data in files.items()}
    doc = {"files": listing, "format": MARKER_FORMAT, "written_by": "verdictpack"}
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _valid_name(name: object) -> bool:
    if not isinstance(name, str) or not name or "\\" in name or "\0" in name:
        return False
    parts = name.split("/")
    return name != MARKER and all(p not in ("", ".", "..") for p in parts)


def read_marker(data: bytes) -> dict[str, str] | None:
    """The ``files`` listing of a valid marker, or None when ``data`` is not one."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or set(doc) != {"files", "format", "written_by"}:
        return None
    if doc["written_by"] != "verdictpack" or type(doc["format"]) is not int:
        return None
    files = doc["files"]
    if doc["format"] != MARKER_FORMAT or not isinstance(files, dict):
        return None
    for name, digest in files.items():
        if not _valid_name(name) or not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            return None
    return dict(files)


def marker_difference(a: bytes, b: bytes) -> str | None:
    """None when two markers agree, else the reason. The hash of ``provenance.json`` is left
    out, as its ``wall_clock`` field differs between runs (the file itself is compared apart)."""
    la, lb = read_marker(a), read_marker(b)
    if la is None or lb is None:
        return None if a == b else "not a valid verdictpack marker"
    if sorted(la) != sorted(lb):
        only = sorted(set(la) ^ set(lb))
        return "lists different files: " + ", ".join(only)
    differ = [n for n in sorted(la) if la[n] != lb[n] and Path(n).name != "provenance.json"]
    if differ:
        return "hashes differ for " + ", ".join(differ)
    return None


# ----------------------------------------------------------------------------------------------
# Looking at folders (never following symlinks)
# ----------------------------------------------------------------------------------------------


class _Absent:
    pass


_ABSENT = _Absent()


def _load_marker(folder: Path) -> dict[str, str] | _Absent | None:
    """The folder's marker listing; None when the marker is there but invalid."""
    path = folder / MARKER
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _ABSENT
    if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_MARKER_BYTES:
        return None
    with open(path, "rb") as fh:
        return read_marker(fh.read())


@dataclass
class _Scan:
    files: list[str] = field(default_factory=list)  # regular files, the top-level marker left out
    dirs: list[str] = field(default_factory=list)
    odd: list[str] = field(default_factory=list)  # symlinks, FIFOs, sockets, devices
    truncated: bool = False


def _scan(folder: Path) -> _Scan:
    scan = _Scan()
    stack: list[tuple[str, str]] = [("", str(folder))]
    count = 0
    while stack:
        prefix, path = stack.pop()
        with os.scandir(path) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if rel == MARKER:
                    continue
                count += 1
                if count > _MAX_ENTRIES:
                    scan.truncated = True
                    return scan
                if entry.is_symlink():
                    scan.odd.append(rel)
                elif entry.is_dir(follow_symlinks=False):
                    scan.dirs.append(rel)
                    stack.append((rel + "/", entry.path))
                elif entry.is_file(follow_symlinks=False):
                    scan.files.append(rel)
                else:
                    scan.odd.append(rel)
    scan.files.sort()
    scan.dirs.sort()
    scan.odd.sort()
    return scan


def _ancestors(names: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for name in names:
        parts = name.split("/")
        out.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return out


def _strangers(scan: _Scan, listing: Mapping[str, str]) -> list[str]:
    """Entries a folder holds that the marker does not account for."""
    folders = _ancestors(list(listing))
    out = [f for f in scan.files if f not in listing]
    out += [d + "/" for d in scan.dirs if d not in folders]
    out += scan.odd
    if scan.truncated:
        out.append(f"(more than {_MAX_ENTRIES} entries)")
    return sorted(out)


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _names(items: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _state(folder: Path) -> tuple[str, str | None]:
    """("missing" | "empty" | "ours" | "foreign", why foreign)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return "missing", None
    if not stat.S_ISDIR(st.st_mode):
        return "foreign", "it is not a folder"
    with os.scandir(folder) as entries:
        if next(entries, None) is None:
            return "empty", None
    listing = _load_marker(folder)
    if isinstance(listing, _Absent):
        return "foreign", f"it is not empty and has no {MARKER}, so verdictpack did not write it"
    if listing is None:
        return "foreign", f"its {MARKER} is not a valid verdictpack marker"
    scan = _scan(folder)
    strangers = _strangers(scan, listing)
    if strangers:
        return "foreign", f"it holds files verdictpack did not write: {_names(strangers)}"
    changed = [f for f in scan.files if _file_digest(folder / f) != listing[f]]
    if changed:
        return "foreign", f"files in it changed since verdictpack wrote them: {_names(changed)}"
    return "ours", None


def _leftover_is_ours(folder: Path) -> bool:
    """A temporary or old folder of ours: a valid marker that lists everything in it (partly
    written files allowed), or nothing in it but perhaps a marker cut short."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
        listing = _load_marker(folder)
        scan = _scan(folder)
    except OSError:
        return False
    if isinstance(listing, dict):
        return not _strangers(scan, listing)
    return not (scan.files or scan.dirs or scan.odd or scan.truncated)


def _remove_ours(folder: Path) -> None:
    """Delete a folder of ours: its files, its sub-folders, its marker last, then itself."""
    scan = _scan(folder)
    for name in scan.files:
        os.unlink(folder / name)
    for name in sorted(scan.dirs, key=lambda d: d.count("/"), reverse=True):
        os.rmdir(folder / name)
    with suppress(FileNotFoundError):
        os.unlink(folder / MARKER)
    os.rmdir(folder)


# ----------------------------------------------------------------------------------------------
# fsync, renameat2
# ----------------------------------------------------------------------------------------------


def _write_all(fd: int, content: bytes) -> None:
    view = memoryview(content)
    while view:
        view = view[os.write(fd, view) :]


def _write_file(path: Path, content: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        _write_all(fd, content)
    finally:
        os.close(fd)


def _fsync_path(path: Path, *, folder: bool) -> None:
    if folder and not hasattr(os, "O_DIRECTORY"):
        return  # no directory handles to fsync here (Windows)
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if folder else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(folder: Path) -> None:
    scan = _scan(folder)
    for name in [MARKER, *scan.files]:
        _fsync_path(folder / name, folder=False)
    for name in sorted(scan.dirs, key=lambda d: d.count("/"), reverse=True):
        _fsync_path(folder / name, folder=True)
    _fsync_path(folder, folder=True)


_renameat2_fn: Any = None
_renameat2_looked = False


def _libc_renameat2() -> Callable[..., int] | None:
    """libc's renameat2 (glibc >= 2.28), or None off Linux or where libc lacks it."""
    global _renameat2_fn, _renameat2_looked
    if not _renameat2_looked:
        _renameat2_looked = True
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(None, use_errno=True).renameat2
            except (OSError, AttributeError):
                fn = None
            if fn is not None:
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
                fn.argtypes += [ctypes.c_uint]
                fn.restype = ctypes.c_int
            _renameat2_fn = fn
    return _renameat2_fn  # type: ignore[no-any-return]


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False when the exchange is not available here."""
    fn = _libc_renameat2()
    if fn is None:
        return False
    ctypes.set_errno(0)
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL):
        return False
    raise OSError(err, os.strerror(err), str(b))


# ----------------------------------------------------------------------------------------------
# The path checks
# ----------------------------------------------------------------------------------------------


def _resolve(out: str | Path) -> tuple[Path, bool]:
    """(absolute path with every parent resolved, whether the path itself is a symlink)."""
    raw = os.fspath(out)
    stripped = raw.rstrip("/" + os.sep) or raw[:1]
    head, tail = os.path.split(stripped)
    if tail in ("", ".", ".."):
        return Path(os.path.realpath(stripped)), False
    path = Path(os.path.realpath(head or os.curdir)) / tail
    return path, os.path.islink(path)


def _is_within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def _hazard(path: Path, is_link: bool, protect: Sequence[str | Path]) -> str | None:
    """Why ``path`` may never be an output folder, or None."""
    if is_link:
        return (
            f"the path is a symbolic link (to {os.readlink(path)}); verdictpack never writes "
            "through or replaces a symlink: pass the real folder's path"
        )
    if path == Path(path.anchor):
        return f"{path} is the root folder"
    if os.path.lexists(path) and not path.is_dir():
        return f"{path} exists and is not a folder"
    for item in protect:
        given = Path(os.path.abspath(item))
        places = {Path(os.path.realpath(given.parent)) / given.name, Path(os.path.realpath(given))}
        for place in sorted(places):
            if path == place:
                return f"{path} is the config file {item} itself"
            if path == place.parent:
                return f"{path} is the folder that holds the config file {item}"
            if _is_within(place, path):
                return f"{path} contains the config file {item} (it is an ancestor of its folder)"
    cwd = Path(os.path.realpath(os.getcwd()))
    if path == cwd:
        return f"{path} is the working directory"
    if _is_within(cwd, path):
        return f"{path} is an ancestor of the working directory {cwd}"
    try:
        home = Path(os.path.realpath(Path.home()))
    except (RuntimeError, KeyError):
        home = None
    if home is not None and path == home:
        return f"{path} is the home folder"
    if home is not None and _is_within(home, path):
        return f"{path} contains the home folder {home}"
    if os.path.lexists(path / ".git"):
        return f"{path} holds .git (a repository)"
    return None


def _refusal(label: str, given: str, reason: str, path: Path | None = None) -> OutputError:
    hint = "choose a new or empty folder"
    if path is not None and path != Path(path.anchor):
        # a sub-folder of a folder; beside a file (nothing can be made inside a file)
        inside = os.path.isdir(path)
        new = path / "out" if inside else path.with_name(f"{path.name}-out")
        if not os.path.lexists(new):
            hint += (
                f" (a new {'sub-folder' if inside else 'folder beside it'} such as {new} will do)"
            )
    return OutputError(
        f"{label} {given}: refused, even with --force: {reason}; expected a new or empty folder, "
        f"or one an earlier verdictpack run wrote; {hint}"
    )


def check_output_path(
    out: str | Path, *, protect: Sequence[str | Path] = (), label: str = "--out"
) -> Path:
    """The resolved output path, or OutputError when it may never be written (see the module
    docstring); ``protect`` lists the config files the folder must not hold."""
    given = os.fspath(out)
    if not given:
        raise OutputError(f"{label}: received an empty path; expected a folder path")
    path, is_link = _resolve(given)
    reason = _hazard(path, is_link, protect)
    if reason is not None:
        raise _refusal(label, given, reason, None if is_link else path)
    return path


# ----------------------------------------------------------------------------------------------
# The claim: checks, lock, leftovers; then the write
# ----------------------------------------------------------------------------------------------


class OutputClaim:
    """A checked and locked output folder (or nothing, for ``out=None``); use as a context
    manager and call :meth:`write` once. Made by :func:`claim_output`."""

    def __init__(
        self, out: str | Path | None, protect: Sequence[str | Path], force: bool, label: str
    ) -> None:
        self._given = "" if out is None else os.fspath(out)
        self._protect = tuple(protect)
        self._force = force
        self._label = label
        self._fd: int | None = None
        self._created: list[Path] = []
        self._written = False
        self._pending: Path | None = None  # a folder of ours not (or no longer) in place
        self.path: Path | None = None  # None: nothing to write
        self._path = self._lock = Path()
        if out is None:
            return
        self.path = self._path = check_output_path(out, protect=self._protect, label=label)
        self._lock = self._path.parent / f".{self._path.name}.verdictpack.lock"
        try:
            self._make_parents()
            self._take_lock()
            self._recover()
            self._check_state()
        except BaseException:
            self.release()
            raise

    # -- context manager ------------------------------------------------------------------------

    def __enter__(self) -> OutputClaim:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    # -- messages -------------------------------------------------------------------------------

    def _error(self, what: str, exc: OSError) -> OutputError:
        where = f" ({exc.filename})" if exc.filename else ""
        return OutputError(
            f"{self._label} {self._given}: cannot {what}: {exc.strerror or exc}{where}; "
            "nothing written"
        )

    def _refuse_state(self, state: str, reason: str | None, when: str = "") -> OutputError:
        if state == "ours":
            return OutputError(
                f"{self._label} {self._given}: holds the outputs of an earlier verdictpack run; "
                "expected a new or empty folder (use --force to replace it)"
            )
        force = "even with --force" if self._force else "and --force would not replace it"
        return OutputError(
            f"{self._label} {self._given}: refused {force}{when}: {reason}; a non-empty folder is "
            "replaced only when verdictpack wrote everything in it. Choose a new or empty folder, "
            "or move its files away"
        )

    # -- claim ----------------------------------------------------------------------------------

    def _make_parents(self) -> None:
        missing: list[Path] = []
        p = self._path.parent
        while not p.exists() and p != p.parent:
            missing.append(p)
            p = p.parent
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            except OSError as exc:
                raise self._error("create the folder", exc) from None
            self._created.append(folder)

    def _take_lock(self) -> None:
        if fcntl is None:  # pragma: no cover - Windows
            return
        for _ in range(_TRIES):
            try:
                fd = os.open(self._lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0))
            except OSError as exc:
                raise self._error("create the lock file", exc) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise OutputError(
                        f"{self._label} {self._given}: another verdictpack run is writing this "
                        f"folder (its lock {self._lock} is held); refused. Wait for that run to "
                        "finish, or choose another folder"
                    ) from None
                raise self._error("lock the output folder", exc) from None
            try:
                here = os.stat(self._lock, follow_symlinks=False)
            except FileNotFoundError:
                here = None
            mine = os.fstat(fd)
            if here is not None and (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino):
                self._fd = fd
                return
            os.close(fd)  # the file was unlinked by its previous holder: take the new one
        raise OutputError(f"{self._label} {self._given}: could not take the lock {self._lock}")

    def _leftovers(self) -> list[tuple[str, Path]]:
        pattern = re.compile(rf"\.{re.escape(self._path.name)}\.(tmp|old)-[0-9a-f]{{8}}")
        found: list[tuple[str, Path]] = []
        with os.scandir(self._path.parent) as entries:
            for entry in entries:
                m = pattern.fullmatch(entry.name)
                if m is not None:
                    found.append((m.group(1), Path(entry.path)))
        return sorted(found)

    def _recover(self) -> None:
        """Under the lock: put back a previous folder left beside a missing DIR by a run killed
        between its two renames, then delete every leftover of ours."""
        try:
            ours = [(kind, p) for kind, p in self._leftovers() if _leftover_is_ours(p)]
            if not os.path.lexists(self._path):
                whole = [p for kind, p in ours if kind == "old" and _state(p)[0] == "ours"]
                if len(whole) > 1:
                    raise OutputError(
                        f"{self._label} {self._given}: the folder is missing and several complete "
                        f"earlier copies lie beside it ({_names([p.name for p in whole])}); "
                        "refused. Rename the one to keep to the folder's name"
                    )
                if whole:
                    os.rename(whole[0], self._path)
                    _fsync_path(self._path.parent, folder=True)
                    ours = [(k, p) for k, p in ours if p != whole[0]]
            for _, p in ours:
                _remove_ours(p)
        except OSError as exc:
            raise self._error("clean up the leftovers of an earlier run", exc) from None

    def _check_state(self, when: str = "") -> str:
        try:
            state, reason = _state(self._path)
        except OSError as exc:
            raise self._error("read the output folder", exc) from None
        if state == "foreign" or (state == "ours" and not self._force):
            raise self._refuse_state(state, reason, when)
        return state

    def _recheck(self) -> str:
        """The checks again, just before the move into place."""
        when = " (checked again before moving the new folder into place)"
        if Path(os.path.realpath(self._path.parent)) != self._path.parent:
            raise OutputError(
                f"{self._label} {self._given}: refused{when}: its parent folder "
                f"{self._path.parent} was moved or replaced during the run; nothing written"
            )
        reason = _hazard(self._path, os.path.islink(self._path), self._protect)
        if reason is not None:
            raise _refusal(self._label, self._given, reason + when, self._path)
        return self._check_state(when)

    # -- write ----------------------------------------------------------------------------------

    def write(self, files: Mapping[str, str | bytes]) -> Path | None:
        """Write ``files`` (relative name -> text or bytes) as the folder; release the lock."""
        if self.path is None:
            return None
        if self._fd is None and fcntl is not None:
            raise OutputError(f"{self._label} {self._given}: the claim was already released")
        data = {n: c.encode("utf-8") if isinstance(c, str) else bytes(c) for n, c in files.items()}
        bad = [n for n in data if not _valid_name(n)]
        if bad:
            raise OutputError(f"{self._label}: output file names must be relative: {_names(bad)}")
        try:
            state = self._recheck()
            tmp = self._pending = self._unique("tmp", make=True)
            _write_file(tmp / MARKER, marker_bytes(data))
            for name, content in data.items():
                (tmp / name).parent.mkdir(parents=True, exist_ok=True)
                _write_file(tmp / name, content)
            os.chmod(tmp, 0o755)
            _fsync_tree(tmp)
            state = self._recheck()
            old = self._swap(tmp, state)
            self._written = True
            if old is not None:
                with suppress(OSError):  # the new folder is in place; the next run cleans up
                    _remove_ours(old)
        except OSError as exc:
            raise self._error("write the output folder", exc) from None
        finally:
            if self._pending is not None:
                with suppress(OSError):
                    _remove_ours(self._pending)
                self._pending = None
            self.release()
        return self.path

    def _unique(self, kind: str, *, make: bool) -> Path:
        for _ in range(_TRIES):
            candidate = self._path.parent / f".{self._path.name}.{kind}-{secrets.token_hex(4)}"
            if make:
                try:
                    os.mkdir(candidate, 0o700)
                except FileExistsError:
                    continue
                return candidate
            if not os.path.lexists(candidate):
                return candidate
        raise OutputError(f"{self._label} {self._given}: no free temporary name beside it")

    def _swap(self, new: Path, state: str) -> Path | None:
        """Move ``new`` into place; return the old folder to delete (None when there was none).
        ``self._pending`` always names the folder to drop if this fails."""
        target, parent = self._path, self._path.parent
        when = " (found right after the swap, which was undone)"
        if state in ("missing", "empty"):
            os.rename(new, target)  # fails rather than replace anything that appeared meanwhile
            self._pending = None
            _fsync_path(parent, folder=True)
            return None
        if _exchange(new, target):
            self._pending = None  # the new folder is in place; the old one is at ``new``
            old = new
            state, reason = _state(old)
            if state != "ours":
                _exchange(new, target)
                self._pending = new
                _fsync_path(parent, folder=True)
                raise self._refuse_state("foreign", reason, when)
        else:
            old = self._unique("old", make=False)
            os.rename(target, old)
            state, reason = _state(old)
            if state != "ours":
                os.rename(old, target)
                _fsync_path(parent, folder=True)
                raise self._refuse_state("foreign", reason, when)
            os.rename(new, target)
            self._pending = None
        _fsync_path(parent, folder=True)
        return old

    # -- release --------------------------------------------------------------------------------

    def release(self) -> None:
        """Remove the lock file (while still holding the lock), unlock; on failure also remove
        the parent folders this claim created, if they are still empty. Idempotent."""
        if self._fd is not None:
            with suppress(OSError):
                os.unlink(self._lock)
            if fcntl is not None:
                with suppress(OSError):
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        if not self._written:
            for folder in reversed(self._created):
                with suppress(OSError):
                    folder.rmdir()
        self._created = []


def claim_output(
    out: str | Path | None,
    *,
    config: str | Path | None = None,
    force: bool = False,
    label: str = "--out",
) -> OutputClaim:
    """Check ``out``, take its lock and clean up leftovers, before any computation; refused
    with OutputError (nothing touched). ``out=None`` gives a claim that writes nothing."""
    return OutputClaim(out, () if config is None else (config,), force, label)


def write_outputs(
    out: str | Path,
    files: Mapping[str, str | bytes],
    *,
    force: bool,
    config: str | Path | None = None,
    label: str = "--out",
) -> Path:
    """Claim and write in one step: ``files`` (relative name -> text or bytes) become ``out``."""
    with claim_output(out, config=config, force=force, label=label) as claim:
        claim.write(files)
    return claim._path


REPORT_FOLDER = "report"  # a live study's report folder, inside its folder (evidence._live_folder)
