"""Report at scale for a design (SPEC §3.1): 4 conditions × 500 questions × 3 replicates ×
8 dimensions × 10 raters.

Targets (issue 21): `aoven-git report --format json` in ≤ 10 s and < 400 MB peak memory on a
2-core machine. The plan has four conditions (A the baseline, B the long form, B1 and B2 two
compressed variants), `replicates: 3`, criteria of every numeric kind (`delta` per dimension,
`delta` per sum, `seed`) and a decision table; each rater's sheet is written in the wide layout
with a `Rep` column (docs/score-files.md, "Replicates"), 6,000 rows of 8 scores. The scores are
made so that the report decides: raters differ by at most one point (nothing is flagged), B1
matches B on D1–D6 and is lighter on D7+D8, B2 is heavier, so row 1 fails and row 2 is taken.
The bench asserts that decision. It then runs the report as a user does (a fresh process) with
intervals and, as the floor measured in the same run, without them (`--bootstrap 0`), and prints
wall time, CPU time and peak RSS of each.

    python bench/bench_report_designs.py [--raters 10] [--questions 500] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DIMS = [f"D{i}" for i in range(1, 9)]
ARMS = ("A", "B", "B1", "B2")
REPLICATES = 3
TARGET_S, TARGET_MB = 10.0, 400.0

CRITERIA = """\
criteria:
  - {id: B1-same, kind: delta, of: [B1, B], dimensions: [D1, D2, D3, D4, D5, D6], per: dimension, within: 0.5}
  - {id: B1-lighter, kind: delta, of: [B1, B], dimensions: [D7, D8], per: sum, below: 0}
  - {id: B1-seed, kind: seed, treatment: B1}
  - {id: B2-same, kind: delta, of: [B2, B], dimensions: [D1, D2, D3, D4, D5, D6], per: dimension, within: 0.5}
  - {id: B2-lighter, kind: delta, of: [B2, B], dimensions: [D7, D8], per: sum, below: 0}
  - {id: B2-seed, kind: seed, treatment: B2}
decisions:
  - {if: [B1-same, B1-lighter, B1-seed, B2-same, B2-lighter, B2-seed], then: "adopt P1+P2+P3"}
  - {if: [B1-same, B1-lighter, B1-seed], then: "adopt P1+P2"}
  - {otherwise: "defer R1"}
"""


def plan_text(rater_ids: list[str], qs: list[str]) -> str:
    """The four-arm plan: the seed bench's dimensions and transitions, four conditions, three
    replicates, the criteria and decision table above."""
    lines = [
        "version: 1",
        "study: bench-designs",
        "study_dir: study",
        'responses: "{condition}/{question}_{replicate}.md"',
        'stripped_responses: "{condition}_stripped/{question}_{replicate}.md"',
        f"replicates: {REPLICATES}",
        "conditions: [{id: A, role: baseline}, {id: B, role: treatment}, {id: B1}, {id: B2}]",
        "transitions: [" + ", ".join(f'{{id: {i}, name: "T{i}"}}' for i in range(1, 13)) + "]",
        "dimensions:",
        *[
            f"  - {{id: {d}, name: {d}, kind: epistemic, transitions: [{2 * i + 1}, {2 * i + 2}]}}"
            if i < 6
            else f"  - {{id: {d}, name: {d}, kind: quality}}"
            for i, d in enumerate(DIMS)
        ],
        "load_dimensions: [D8]",
        "questions:",
        *[f'  - {{id: {q}, text: "question {q}", expects: [{(i % 12) + 1}]}}' for i, q in enumerate(qs)],
        "raters:",
        *[f"  - {{id: {r}}}" for r in rater_ids],
        "passes: [{id: main-pass, conditions: [" + ", ".join(ARMS) + "], dimensions: ["
        + ", ".join(DIMS) + "], primary: true}]",
        "rules: {pass: {treatment: B}}",
    ]
    return "\n".join(lines) + "\n" + CRITERIA


def truth(qs: list[str], rng: random.Random) -> dict[tuple[str, str, int, str], int]:
    """Each response's true score: B one point below A on D1–D6 (the treatment improves), B1 and
    B2 equal to B there; on D7/D8 B1 one point below B (lighter), B2 one point above (heavier)."""
    out = {}
    for q in qs:
        for r in range(1, REPLICATES + 1):
            for d in DIMS:
                a = rng.randint(1, 3) if d in DIMS[:6] else rng.randint(0, 2)
                b = a - 1 if d in DIMS[:6] else a
                b1 = b if d in DIMS[:6] else max(0, b - 1)
                b2 = b if d in DIMS[:6] else b + 1
                for c, v in zip(ARMS, (a, b, b1, b2), strict=True):
                    out[(q, c, r, d)] = v
    return out


def write_study(root: Path, raters: int, questions: int, seed: int = 7) -> list[str]:
    """The plan and one wide sheet per rater (`| Q | Cond | Rep | D1 … D8 |`); a rater's score is
    the truth or, one time in eight, one point above it (never flagged: spread ≤ 1)."""
    rng = random.Random(seed)
    rater_ids = [f"r{i:02d}" for i in range(raters)]
    qs = [f"Q{i}" for i in range(1, questions + 1)]
    (root / "aoven.yaml").write_text(plan_text(rater_ids, qs))
    study = root / "study"
    study.mkdir()
    true = truth(qs, rng)
    head = "| Q | Cond | Rep | " + " | ".join(DIMS) + " |"
    for rater in rater_ids:
        lines = [head, "|" + "---|" * (3 + len(DIMS))]
        for q in qs:
            for c in ARMS:
                for r in range(1, REPLICATES + 1):
                    scores = [min(3, true[(q, c, r, d)] + (rng.random() < 0.125)) for d in DIMS]
                    lines.append(f"| {q} | {c} | {r} | " + " | ".join(map(str, scores)) + " |")
        (study / f"scores_{rater}.md").write_text("# scores\n\n" + "\n".join(lines) + "\n")
    return rater_ids


def time_report(root: Path, out: str, *extra: str) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS in MB (of this child alone, from wait4)
    and the last stderr line of `aoven-git report --format json` in a fresh process."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "aoven_git", "report", "--format", "json", "-o", str(root / out), *extra],
            cwd=root, stdout=subprocess.DEVNULL, stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if code not in (0, 1):
        raise SystemExit(f"report failed ({code}): {stderr}")
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, last  # KiB on Linux


def check_decided(path: Path) -> str:
    """The bench measures a report that decides: row 2 ("adopt P1+P2"), verdict PASS."""
    doc = json.loads(path.read_text())
    decision = doc["decision"]
    assert decision["status"] == "decided", decision
    assert (decision["row"], decision["then"], doc["verdict"]) == (2, "adopt P1+P2", "PASS"), decision
    return doc["summary"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raters", type=int, default=10)
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each measurement (interleaved)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_study(root, args.raters, args.questions)
        cells = args.questions * len(ARMS) * REPLICATES * len(DIMS)
        print(f"design study: {args.raters} raters × {args.questions} questions × {len(ARMS)} conditions × "
              f"{REPLICATES} replicates × {len(DIMS)} dimensions = {cells} cells per rater; "
              f"load average {os.getloadavg()[0]:.1f}")
        for _ in range(args.repeat):
            floor, floor_cpu, floor_mb, _ = time_report(root, "floor.json", "--bootstrap", "0")
            print(f"  floor (--bootstrap 0): {floor:.2f} s wall, {floor_cpu:.2f} s CPU, "
                  f"peak RSS {floor_mb:.0f} MB")
            elapsed, cpu, peak_mb, _ = time_report(root, "report.json")
            print(f"report --format json: {elapsed:.2f} s wall, {cpu:.2f} s CPU (target ≤ {TARGET_S:.0f} s; "
                  f"ratio {elapsed / TARGET_S:.2f}; {elapsed / floor:.2f}x the floor), peak RSS "
                  f"{peak_mb:.0f} MB (target < {TARGET_MB:.0f} MB; ratio {peak_mb / TARGET_MB:.2f})")
        print(f"  {check_decided(root / 'report.json')}")
        check_decided(root / "floor.json")


if __name__ == "__main__":
    main()
