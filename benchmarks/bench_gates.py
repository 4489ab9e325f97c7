"""Speed of the real-text gates: ``gate_counts`` over ``real_text_gates`` on user-like pairs.

Workload (fixed, seeded): ``--pairs`` stimuli (default 1,000 then 100,000), each with its own source
paragraph of about 150 words (news-like sentences with names, figures and topical words, and
filler phrases of function words), a null partner of 40-80 words (the source's sentences without
the filler), and a treatment that differs from the null partner in a few words (one or two
register words inserted; one pair in ten also adds a figure, one in ten is padded past the length
tolerance, one in twenty-five is identical, one in twenty-five has a source that repeats a
sentence). Built before timing. Timed, the median of ``--repeats`` runs of
``gate_counts(stimuli, real_text_gates(length_tolerance=0.10, max_diff_tokens=6))``, each from
a cold state (the per-text caches cleared before the clock starts, so every text is analysed as
a real import would analyse it); the per-gate refusals are printed so a change that alters
outcomes shows. Wall and CPU time (``time.process_time``) are both reported: on a shared
machine the wall time swings with the load, the CPU time much less.

Usage: python benchmarks/bench_gates.py [--repeats 3] [--pairs 1000 100000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, report

from verdictpack.stimuli import Stimulus
from verdictpack.stimuli._realtext import clear_caches, gate_counts, real_text_gates

_WORDS_TEXT = (
    "council budget school teachers hospital patients railway station harbour ferry market "
    "prices farmers harvest energy power plant factory workers union contract police officers "
    "court judge ruling election voters campaign minister ministry report study researchers "
    "university students housing rents tenants bridge tunnel highway traffic airport flights "
    "weather storm flood river water supply drought forest fires museum exhibition festival "
    "theatre library opening closure investment company shares profit losses growth inflation "
    "interest rates bank loans taxes reform proposal agreement talks meeting summit border "
    "trade exports imports fishing quotas climate emissions targets vaccine clinic doctors "
    "nurses wages strike protest crowd residents neighbourhood district region province"
)
_GLUE_TEXT = "the a of in on at to for and with by from after over near its their"
_VERBS_TEXT = "approved rejected announced opened closed raised cut funded delayed expanded"
_NAMES_TEXT = (
    "Bergen Oslo Lyon Porto Turin Ghent Malmo Tartu Ingrid Dahl Pierre Martin Ana Silva Marco "
    "Rossi Reuters Eurostat Siemens Nordea"
)
_WORDS, _GLUE, _VERBS, _NAMES = (
    t.split() for t in (_WORDS_TEXT, _GLUE_TEXT, _VERBS_TEXT, _NAMES_TEXT)
)
_REGISTER = ("formally", "officially", "reportedly", "indeed", "notably", "swiftly")


_FILLER = (
    "which was",
    "according to those who were there",
    "as it said",
    "more or less",
    "in any case",
    "at least for now",
    "as they have done before",
    "so to speak",
    "which many had said would never happen",
    "for what it was worth",
    "as was expected",
    "it was said on the day",
    "by all accounts",
    "if only for a while",
)


def _core(rng: random.Random) -> list[str]:
    """The content of one news-like sentence: 6-14 words with a verb, names, maybe a figure."""
    words = [rng.choice(_NAMES), rng.choice(_WORDS), rng.choice(_VERBS)]
    for _ in range(rng.randrange(3, 12)):
        u = rng.random()
        if u < 0.3:
            words.append(rng.choice(_GLUE))
        elif u < 0.42:
            words.append(rng.choice(_NAMES))
        elif u < 0.5:
            words.append(str(rng.randrange(2, 900)) if u < 0.47 else f"{rng.uniform(1, 9):.1f}")
        else:
            words.append(rng.choice(_WORDS))
    return words


def _text(sentences: list[list[str]]) -> str:
    return " ".join(" ".join(s) + "." for s in sentences)


def make_pairs(count: int, seed: int = 3) -> list[Stimulus]:
    """``count`` seeded stimuli (module docstring).

    The source's sentences are the null partner's sentences with filler phrases of function
    words added (so the partners keep the source's content units in 40-80 words); the treatment
    is the null partner with one or two register words inserted, and by pair kind a changed
    figure, a padded first sentence or no change at all.
    """
    rng = random.Random(seed)
    out = []
    for k in range(count):
        null: list[list[str]] = []
        size = rng.randrange(40, 81)
        while sum(map(len, null)) < size - 6:
            null.append(_core(rng))
        source = []
        for s in null:
            s2 = list(s)
            while len(s2) < len(s) * 2 + 3:
                s2[rng.randrange(3, len(s2) + 1) : 0] = rng.choice(_FILLER).split()
            source.append(s2)
        treat = [list(s) for s in null]
        for _ in range(rng.randrange(1, 3)):  # a register word or two
            s = rng.choice(treat)
            s.insert(rng.randrange(1, len(s)), rng.choice(_REGISTER))
        kind = k % 50
        if kind % 10 == 1:  # a changed figure
            treat[-1].append(str(rng.randrange(2, 900)))
        if kind % 10 == 2:  # padded past the length tolerance
            treat[0][1:1] = rng.sample(_WORDS, 9)
        if kind in (3, 28):  # identical texts
            treat = null
        if kind in (4, 29):  # the source repeats its first sentence (a near-duplicate fragment)
            source.append(list(source[0]))
        out.append(
            Stimulus(
                id=f"pair-{k:06d}",
                source=_text(source),
                treatment=_text(treat),
                null_partner=_text(null),
            )
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pairs", type=int, nargs="+", default=[1_000, 100_000])
    args = ap.parse_args()
    print(machine())
    gates = real_text_gates(length_tolerance=0.10, max_diff_tokens=6)
    for size in args.pairs:
        stimuli = make_pairs(size)
        words = [len(s.treatment.split()) for s in stimuli[:1000]]
        source_words = [len((s.source or "").split()) for s in stimuli[:1000]]
        print(
            f"{len(stimuli)} pairs; treatment words (first 1000) {min(words)}-{max(words)}, "
            f"source words median {statistics.median(source_words):.0f}"
        )
        times, cpu = [], []
        for _ in range(args.repeats):
            clear_caches()
            t0, c0 = time.perf_counter(), time.process_time()
            counts = gate_counts(stimuli, gates)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        report(f"gate_counts, {len(stimuli)} pairs, 4 real-text gates", times)
        report(f"gate_counts, {len(stimuli)} pairs, CPU time (process_time)", cpu)
        print(f"admitted {len(counts.admitted)}, refused {len(counts.refused)}")
        print("refusals:", dict(counts.refusals))
        print("first failing:", dict(counts.first_failing))
        per = [statistics.median(t) / len(stimuli) * 1e6 for t in (times, cpu)]
        print(f"per pair: {per[0]:.1f} us wall, {per[1]:.1f} us CPU")


if __name__ == "__main__":
    main()
