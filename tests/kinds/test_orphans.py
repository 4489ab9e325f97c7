"""No orphans: a ``--workers 2`` battery's worker processes die with their parent.

The parent (``python -m verdictpack`` on the battery example, in a new session) is killed once
both workers have run their start-up (their stdout is then /dev/null); every process of the
session must be gone within 10 s and the caller's pipes must reach end-of-file. SIGKILL exercises
the workers' own guards (the parent gets no chance to clean up); SIGTERM the parent's handler.
The watchdog thread (the guard where prctl is missing) is tested on its own, without prctl.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES, load_example

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc and Linux's parent-death semantics"
)

BATTERY = EXAMPLES / "battery_summarization.json"
GONE_WITHIN = 10.0  # seconds


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, session) of a process from /proc, None when it no longer exists."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[3])


def _alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")  # a zombie holds no pipe and runs nothing


def _session(sid: int) -> list[int]:
    """Every live process of session ``sid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None and st[2] == sid and st[0] not in ("Z", "X"):
                out.append(int(entry.name))
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _started_workers(parent: int) -> list[int]:
    """The parent's pool workers that have run their start-up (stdout on /dev/null)."""
    out = []
    for pid in _session(parent):
        st = _stat(pid)
        if st is None or st[1] != parent or "spawn_main" not in _cmdline(pid):
            continue
        try:
            if os.readlink(f"/proc/{pid}/fd/1") == os.devnull:
                out.append(pid)
        except OSError:
            continue
    return out


def _wait_until(cond, timeout: float, step: float = 0.05) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return bool(cond())


class _Drain:
    """Reads a pipe to end-of-file in a thread; ``eof`` is set when every writer has closed it."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self.data = b""
        self.eof = threading.Event()
        self._stream = stream
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while chunk := self._stream.read1(65536):
            self.data += chunk
        self.eof.set()


def _kill_parent_and_watch(tmp_path: Path, sig: signal.Signals) -> tuple[int, str]:
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "verdictpack", str(BATTERY), "--out", str(out), "--workers", "2"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    stdout, stderr = _Drain(proc.stdout), _Drain(proc.stderr)
    session: list[int] = []
    try:
        started = _wait_until(
            lambda: len(_started_workers(proc.pid)) >= 2 or proc.poll() is not None, 120.0
        )
        assert started and proc.poll() is None, (
            f"the battery's two workers never started: exit {proc.poll()}, "
            f"stderr {stderr.data[-2000:]!r}"
        )
        workers = _started_workers(proc.pid)
        session = _session(proc.pid)
        assert set(workers) <= set(session) and len(workers) == 2
        proc.send_signal(sig)
        proc.wait(timeout=GONE_WITHIN)
        left = _wait_until(lambda: not any(_alive(p) for p in session), GONE_WITHIN)
        survivors = {p: _cmdline(p) for p in session if _alive(p)}
        assert left, f"processes still alive {GONE_WITHIN} s after {sig.name}: {survivors}"
        assert stdout.eof.wait(GONE_WITHIN), "the caller's stdout pipe is still held open"
        assert stderr.eof.wait(GONE_WITHIN), "the caller's stderr pipe is still held open"
        assert not out.exists(), "a killed run left its output folder"
        return proc.returncode, stderr.data.decode(errors="replace")
    finally:
        for p in [proc.pid, *session]:  # bounded clean-up of anything this test started
            if _alive(p):
                os.kill(p, signal.SIGKILL)
        proc.wait(timeout=GONE_WITHIN)


def test_sigkill_of_the_parent_ends_every_worker(tmp_path: Path) -> None:
    code, _ = _kill_parent_and_watch(tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL


def test_sigterm_of_the_parent_ends_the_pool_cleanly(tmp_path: Path) -> None:
    code, err = _kill_parent_and_watch(tmp_path, signal.SIGTERM)
    assert code == 128 + signal.SIGTERM, err
    assert "verdictpack: terminated (SIGTERM); workers ended, nothing written" in err
    assert "Traceback" not in err, err


def test_the_death_signal_is_armed_in_a_worker() -> None:
    """prctl(PR_SET_PDEATHSIG, SIGKILL) really takes: read back with PR_GET_PDEATHSIG."""
    code = (
        "import ctypes, sys\n"
        "from verdictpack._parallel import set_parent_death_signal\n"
        "ok = set_parent_death_signal()\n"
        "sig = ctypes.c_int(-1)\n"
        "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)\n"
        "print(ok, sig.value)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", str(int(signal.SIGKILL))]


def test_the_watchdog_alone_ends_an_orphan() -> None:
    """Without prctl (other platforms), the polling thread ends a worker whose parent died."""
    grandchild = (
        "import sys, time\n"
        "from verdictpack.kinds._battery_exec import _watch_parent\n"
        "_watch_parent(int(sys.argv[1]), 0.05)\n"
        "print('armed', flush=True)\n"
        "time.sleep(60)\n"
    )
    middle = (
        "import os, subprocess, sys, time\n"
        f"g = subprocess.Popen([sys.executable, '-c', {grandchild!r}, str(os.getpid())],\n"
        "                     stdout=subprocess.PIPE, text=True)\n"
        "assert g.stdout.readline().strip() == 'armed'\n"
        "print(g.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", middle], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    grand = -1
    try:
        assert proc.stdout is not None
        grand = int(proc.stdout.readline())
        assert _alive(grand)
        time.sleep(0.3)
        assert _alive(grand), "the watchdog ended a process whose parent is alive"
        proc.kill()
        proc.wait(timeout=GONE_WITHIN)
        assert _wait_until(lambda: not _alive(grand), GONE_WITHIN), "the orphan kept running"
    finally:
        for p in (proc.pid, grand):
            if p > 0 and _alive(p):
                os.kill(p, signal.SIGKILL)
        proc.wait(timeout=GONE_WITHIN)


def test_a_pool_started_off_the_main_thread_runs_to_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The death signal follows the *thread* that spawned a worker. Workers are spawned by the
    thread running the pool (or by the pool's manager thread), both alive until the pool is shut
    down: a pool run from a helper thread completes with the numbers of one process, and the
    SIGTERM handler (main thread only) is untouched."""
    from concurrent.futures.process import _ExecutorManagerThread
    from multiprocessing.context import SpawnProcess

    from test_battery import _design_and_jobs

    from verdictpack._results import to_jsonable
    from verdictpack.kinds._base import RunOptions
    from verdictpack.kinds._battery import battery_tasks, execute_tasks

    data = copy.deepcopy(load_example("battery_summarization.json"))
    data.update(replicates=200, block_size=100)
    data["sequential"]["cap_roots"] = 200
    data["scenarios"] = [{"name": "null"}]
    data.pop("true_h_grid", None)
    data.pop("designs", None)
    path = tmp_path / "battery_small.json"
    path.write_text(json.dumps(data))
    cfg, jobs = _design_and_jobs(path)

    def tasks():  # type: ignore[no-untyped-def]
        return battery_tasks(jobs, cfg.seed, cfg.replicates, cfg.block_size)  # fresh generators

    handler = signal.getsignal(signal.SIGTERM)
    result: dict[str, object] = {}
    spawners: list[threading.Thread] = []
    start = SpawnProcess.start

    def recording_start(self: SpawnProcess) -> None:
        spawners.append(threading.current_thread())
        start(self)

    monkeypatch.setattr(SpawnProcess, "start", recording_start)

    def run() -> None:
        try:
            result["pool"] = execute_tasks(tasks(), RunOptions(workers=2))
        except BaseException as exc:
            result["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join(120)
    assert not t.is_alive() and "error" not in result, result
    assert len(spawners) == 2, spawners  # two workers (and no replacement)
    assert all(th is t or isinstance(th, _ExecutorManagerThread) for th in spawners), spawners
    assert to_jsonable(result["pool"]) == to_jsonable(execute_tasks(tasks(), RunOptions()))
    assert signal.getsignal(signal.SIGTERM) is handler
