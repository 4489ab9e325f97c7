"""Speed of the evidence ledger: appending answers, and resuming a large ledger.

Workload (fixed, seeded): a live study of ``--roots`` roots (default 12,500) x 4 judges x 2
presentation orders = 100,000 judgments. Each judgment is a request (its JSON body, ~0.5 KB),
one attempt (``--no-attempts`` leaves it out) and an answer carrying a realistic raw
chat.completion body with logprobs (~1 KB); each root is committed after its eight answers
(12,500 commits). Written to a temporary folder (the system's, or ``--dir``): fsync costs what
it costs on that disk, so point ``--dir`` at the disk the study folders live on.

Timed:

* appending with one transaction per record (``synchronous`` FULL for answers and commits,
  NORMAL for requests and attempts: the ledger's own choice) over the first ``--single`` roots,
  reported as answers/s (the acceptance asks for well over 1,000 answers/s);
* appending the remaining roots in ``with ledger.batch():`` groups of one root (8 judgments and
  the root's commit per transaction), as answers/s;
* resume: ``Ledger.open`` + ``answers_by_key()`` + ``committed()`` on the closed ledger, the
  median of ``--repeats`` runs (the acceptance asks for at most 5 s), with ``spend()``.

Usage: python benchmarks/bench_ledger.py [--repeats 3] [--roots 12500] [--single 1250]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, report, time_call

from verdictpack.evidence._ledger import LEDGER_FILENAME, Ledger

JUDGES = ("judge-a", "judge-b", "judge-c", "judge-d")
ORDERS = ("treatment_first", "null_first")
MANIFEST = {
    "format": 1,
    "config_sha256": "0" * 64,
    "judges": [{"name": j, "base_url": "http://127.0.0.1:8000/v1", "model": j} for j in JUDGES],
    "sampling": {"temperature": 0.0, "max_tokens": 8, "seed": 7, "top_logprobs": 5},
    "root_order_sha256": "1" * 64,
}
FILLER = "The quick brown fox jumps over the lazy dog. " * 5


def body(root: str, judge: str, order: str) -> dict[str, object]:
    return {
        "model": judge,
        "messages": [
            {"role": "system", "content": "Which response is better? Answer with A or B only."},
            {"role": "user", "content": f"[{root}] A: {FILLER} B: {FILLER} ({order})"},
        ],
        "temperature": 0.0,
        "max_tokens": 8,
        "seed": 7,
        "logprobs": True,
        "top_logprobs": 5,
    }


def raw_answer(rng: random.Random, label: str) -> str:
    tops = [
        {"token": t, "logprob": round(rng.uniform(-9, 0), 6)} for t in ("A", "B", " A", "C", "")
    ]
    return json.dumps(
        {
            "id": f"chatcmpl-{rng.getrandbits(64):016x}",
            "object": "chat.completion",
            "created": 1764600000,
            "model": "judge-model-2026-11",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": label},
                    "logprobs": {
                        "content": [{"token": label, "logprob": -0.1, "top_logprobs": tops}]
                    },
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 187, "completion_tokens": 1, "total_tokens": 188},
        },
        separators=(",", ":"),
    )


def write_root(led: Ledger, rng: random.Random, r: int, attempts: bool) -> None:
    root = f"root-{r:06d}"
    total = 0.0
    for judge in JUDGES:
        for order in ORDERS:
            b = body(root, judge, order)
            key = led.request_key({"judge": judge, "trial": 0, "body": b})
            led.record_request(key, root, judge, order, 0, b)
            if attempts:
                led.record_attempt(key, 1, 200, 0.2, 1100)
            label = "A" if rng.random() < 0.55 else "B"
            p = rng.random()
            total += p
            led.record_answer(
                key,
                raw=raw_answer(rng, label),
                prompt_tokens=187,
                completion_tokens=1,
                cost=187 * 2.5e-7 + 1e-5,
                model_id="judge-model-2026-11",
                latency=0.2,
                choice="treatment" if p > 0.5 else "null_partner",
                path="logprobs",
                p_treatment=p,
            )
    led.commit_root(r + 1, root, total / 8, None, '{"registered":"continue"}')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--roots", type=int, default=12_500)
    ap.add_argument("--single", type=int, default=1_250, help="roots written record by record")
    ap.add_argument("--no-attempts", action="store_true")
    ap.add_argument("--dir", type=Path, default=None, help="where the temporary ledger goes")
    args = ap.parse_args()
    print(machine())
    attempts = not args.no_attempts
    per_root = len(JUDGES) * len(ORDERS)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench_ledger_") as tmp:
        folder = Path(tmp)
        rng = random.Random(15)
        led = Ledger.open(folder, MANIFEST)
        single = min(args.single, args.roots)
        t0 = time.perf_counter()
        for r in range(single):
            write_root(led, rng, r, attempts)
        dt = time.perf_counter() - t0
        print(
            f"append, one transaction per record: {single * per_root:,} answers "
            f"(+ requests{', attempts' if attempts else ''}, {single:,} commits) in {dt:.2f} s "
            f"= {single * per_root / dt:,.0f} answers/s"
        )
        t0 = time.perf_counter()
        for r in range(single, args.roots):
            with led.batch():
                write_root(led, rng, r, attempts)
        dt = time.perf_counter() - t0
        rest = args.roots - single
        if rest:
            print(
                f"append, one batch per root: {rest * per_root:,} answers in {dt:.2f} s "
                f"= {rest * per_root / dt:,.0f} answers/s"
            )
        led.close()
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(
            f"ledger: {args.roots * per_root:,} answers, {args.roots:,} commits, "
            f"{size / 1e6:.1f} MB"
        )

        def resume() -> None:
            with Ledger.open(folder / LEDGER_FILENAME, MANIFEST) as again:
                answers = again.answers_by_key()
                commits = again.committed()
                again.spend()
            if len(answers) != args.roots * per_root or len(commits) != args.roots:
                raise SystemExit(f"unexpected: {len(answers)} answers, {len(commits)} commits")

        report("resume: open + answers_by_key + committed", time_call(resume, args.repeats), 5.0)


if __name__ == "__main__":
    main()
