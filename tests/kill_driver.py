"""Run verdictpack's CLI with its filesystem calls watched from outside, and SIGKILL it at one.

The package names no crash steps: this driver replaces the ``os`` functions that change what
is on disk (``open`` with ``O_CREAT``, ``write``, ``mkdir``, ``rmdir``, ``unlink``, ``rename``,
``replace``, ``chmod``) and libc's ``renameat2`` as the output writer finds it, and counts each
successful call on a watched path (``fnmatch`` patterns on absolute paths). At the ``kill``-th
call the process SIGKILLs itself right after the call, or, for a ``write``, after writing the
first half of its bytes (a torn write). ``fsync`` is not counted: a killed process loses no
written page (it guards against power loss, which no test here makes). ``kill`` 0 kills
nowhere; ``trace`` names a file that receives one JSON line ``[call, relative path]`` per
counted call, so a clean run tells how many kill points there are and what each one is.

Usage: ``python tests/kill_driver.py`` with a JSON list of cases on stdin, each
``{"cwd", "args", "watch", "kill", "trace", "no_exchange"}``; one forked child per case runs
``main(args)`` in ``cwd`` (verdictpack imported once, before the forks); prints the exit codes as
a JSON list (a SIGKILLed child: -9). With ``--module`` and one case, that case runs in this
process as ``python -m verdictpack ARGS`` does (the console entry point, unforked).
"""

from __future__ import annotations

import fnmatch
import json
import os
import signal
import sys
from typing import Any


def watch_calls(case: dict[str, Any]) -> None:
    """Install the counting wrappers of ``case`` in this process (for good)."""
    from verdictpack import _output

    cwd = os.getcwd()
    patterns = [os.path.abspath(p) for p in case["watch"]]
    kill_at, trace = int(case["kill"]), case.get("trace")
    real = {name: getattr(os, name) for name in ("open", "write", "close")}
    counted = [0]
    fds: dict[int, str] = {}

    def watched(*paths: Any) -> bool:
        full = [os.path.abspath(os.fsdecode(p)) for p in paths]
        return any(fnmatch.fnmatchcase(p, w) for p in full for w in patterns)

    def after(call: str, path: Any) -> None:
        counted[0] += 1
        if trace:
            with open(trace, "a", encoding="utf-8") as fh:
                fh.write(json.dumps([call, os.path.relpath(os.fsdecode(path), cwd)]) + "\n")
        if counted[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def open_(path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> int:
        fd = real["open"](path, flags, mode, dir_fd=dir_fd)
        if watched(path) and flags & (os.O_WRONLY | os.O_RDWR):
            fds[fd] = os.fsdecode(path)
        if watched(path) and flags & os.O_CREAT:
            after("open", path)
        return fd

    def write(fd: int, data: Any) -> int:
        if fd not in fds:
            return int(real["write"](fd, data))
        if counted[0] + 1 == kill_at:  # torn: half of it, then the kill
            real["write"](fd, bytes(data)[: len(data) // 2])
            after("write", fds[fd])
        n = int(real["write"](fd, data))
        after("write", fds[fd])
        return n

    def close(fd: int) -> None:
        fds.pop(fd, None)
        real["close"](fd)

    def changes(name: str, paths: int) -> Any:
        fn = getattr(os, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            if watched(*args[:paths]):
                after(name, args[0])
            return out

        return call

    for name, paths in (("mkdir", 1), ("rmdir", 1), ("unlink", 1), ("chmod", 1)):
        setattr(os, name, changes(name, paths))
    for name in ("rename", "replace"):
        setattr(os, name, changes(name, 2))
    os.open, os.write, os.close = open_, write, close  # type: ignore[assignment]

    exchange = None if case.get("no_exchange") else _output._libc_renameat2()
    if exchange is None:
        _output._libc_renameat2 = lambda: None
    else:

        def renameat2(fd_a: int, a: bytes, fd_b: int, b: bytes, flags: int) -> int:
            code = int(exchange(fd_a, a, fd_b, b, flags))
            if code == 0 and watched(a, b):
                after("renameat2", a)
            return code

        _output._libc_renameat2 = lambda: renameat2


def _child(case: dict[str, Any]) -> int:
    from verdictpack._cli import main

    os.chdir(case["cwd"])
    watch_calls(case)
    return main(case["args"])


def run_cases(cases: list[dict[str, Any]]) -> list[int]:
    """Each case in a forked child; their exit codes (-signal for a killed one)."""
    os.environ["VERDICTPACK_NO_FORK"] = "1"  # one process per case: its calls, in one order
    from verdictpack._cli import run_config

    run_config(os.path.join(cases[0]["cwd"], "cfg.json"))  # import everything before the forks
    codes = []
    for case in cases:
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(case)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        codes.append(-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
    return codes


if __name__ == "__main__":
    jobs = json.loads(sys.stdin.read())
    if sys.argv[1:] == ["--module"]:
        import runpy

        (only,) = jobs
        os.environ["VERDICTPACK_NO_FORK"] = "1"
        os.chdir(only["cwd"])
        sys.argv = ["verdictpack", *only["args"]]
        watch_calls(only)
        runpy.run_module("verdictpack", run_name="__main__", alter_sys=True)
    else:
        print(json.dumps(run_cases(jobs)))
