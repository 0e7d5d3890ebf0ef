"""Report at scale: 20 raters × 500 questions × 2 conditions × 8 dimensions.

Targets: `aoven-git report --format json` in ≤ 10 s and < 300 MB peak memory on a 2-core
machine, and our κ per rater pair no slower than scikit-learn's `cohen_kappa_score` on the same
pairs. The report runs three times: with the default BCa intervals, with percentile intervals
(the module's default method switched in the child process), and without intervals
(`--bootstrap 0`) as the floor the interval cost is measured against. Everything is measured in
this run; nothing is compared with numbers from elsewhere. docs/statistics.md records the numbers
behind the choice of BCa.

    python bench/bench_report.py [--raters 20] [--questions 500]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DIMS = [f"D{i}" for i in range(1, 9)]


def write_study(root: Path, raters: int, questions: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    rater_ids = [f"r{i:02d}" for i in range(raters)]
    qs = [f"Q{i}" for i in range(1, questions + 1)]
    plan = [
        "version: 1",
        "study: bench",
        "study_dir: study",
        "conditions: [{id: A, role: baseline}, {id: B, role: treatment}]",
        "transitions: [" + ", ".join(f'{{id: {i}, name: "T{i}"}}' for i in range(1, 13)) + "]",
        "dimensions:",
        *[
            f"  - {{id: {d}, name: {d}, kind: {'epistemic' if i < 6 else 'quality'}, "
            f"transitions: [{2 * i + 1}, {2 * i + 2}]}}"
            if i < 6
            else f"  - {{id: {d}, name: {d}, kind: quality}}"
            for i, d in enumerate(DIMS)
        ],
        "load_dimensions: [D8]",
        "questions:",
        *[f'  - {{id: {q}, text: "question {q}", expects: [{(i % 12) + 1}]}}' for i, q in enumerate(qs)],
        "raters:",
        *[f"  - {{id: {r}}}" for r in rater_ids],
        "passes: [{id: main-pass, conditions: [A, B], dimensions: [" + ", ".join(DIMS) + "], primary: true}]",
    ]
    (root / "aoven.yaml").write_text("\n".join(plan) + "\n")
    study = root / "study"
    study.mkdir()
    truth = {(q, c, d): rng.randint(0, 3) for q in qs for c in "AB" for d in DIMS}
    for r in rater_ids:
        lines = ["| Question | Condition | Dimension | Score |", "|---|---|---|---|"]
        for (q, c, d), t in truth.items():
            s = min(3, max(0, t + rng.choice((0, 0, 0, 0, 0, 1, -1))))
            lines.append(f"| {q} | {c} | {d} | {s} |")
        (study / f"scores_{r}.md").write_text("# scores\n\n" + "\n".join(lines) + "\n")
    return rater_ids


#: Runs the CLI with another default interval method: what `report` would do if that were chosen.
WITH_METHOD = (
    "import sys, aoven_git.agreement as a; a.DEFAULT_CI_METHOD = sys.argv.pop(1); "
    "from aoven_git.cli import main; sys.exit(main(sys.argv[1:]))"
)


def time_report(root: Path, method: str = "BCa", *extra: str) -> tuple[float, float, str]:
    """Seconds, peak RSS in MB (of this child alone, from wait4) and the last stderr line."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", WITH_METHOD, method, "report", "--format", "json",
             "-o", str(root / f"r-{method}.json"), *extra],
            cwd=root, stdout=subprocess.DEVNULL, stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode not in (0, 1):
        raise SystemExit(f"report failed ({proc.returncode}): {stderr}")
    return elapsed, usage.ru_maxrss / 1024, stderr.strip().splitlines()[-1] if stderr else ""  # KiB on Linux


def kappa_per_pair(root: Path, rater_ids: list[str]) -> tuple[float, float, int]:
    from sklearn.metrics import cohen_kappa_score

    from aoven_git.agreement import weighted_kappa

    scores: dict[str, list[int]] = {}
    for r in rater_ids:
        rows = (root / "study" / f"scores_{r}.md").read_text().splitlines()[4:]
        scores[r] = [int(line.split("|")[4]) for line in rows if line.startswith("| Q")]
    pairs = [(a, b) for i, a in enumerate(rater_ids) for b in rater_ids[i + 1 :]]
    t0 = time.perf_counter()
    for a, b in pairs:
        weighted_kappa(scores[a], scores[b], categories=(0, 1, 2, 3), weights="quadratic")
    ours = (time.perf_counter() - t0) / len(pairs)
    t0 = time.perf_counter()
    for a, b in pairs:
        cohen_kappa_score(scores[a], scores[b], labels=[0, 1, 2, 3], weights="quadratic")
    theirs = (time.perf_counter() - t0) / len(pairs)
    return ours, theirs, len(scores[rater_ids[0]])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raters", type=int, default=20)
    ap.add_argument("--questions", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rater_ids = write_study(root, args.raters, args.questions)
        cells = args.questions * 2 * len(DIMS)
        print(f"study: {args.raters} raters × {args.questions} questions × 2 conditions × 8 dimensions "
              f"= {cells} cells per rater")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import aoven_git.cli"], check=True)
        startup = time.perf_counter() - t0
        floor, floor_mb, _ = time_report(root, "BCa", "--bootstrap", "0")
        print(f"  interpreter + CLI import in the same run: {startup:.2f} s; report without intervals "
              f"(--bootstrap 0), the floor: {floor:.2f} s, peak RSS {floor_mb:.0f} MB")
        for method in ("BCa", "percentile"):
            elapsed, peak_mb, summary = time_report(root, method)
            print(f"report --format json, {method} intervals: {elapsed:.2f} s (target ≤ 10 s; ratio "
                  f"{elapsed / 10:.2f}; {elapsed / floor:.2f}x the floor), peak RSS {peak_mb:.0f} MB "
                  f"(target < 300 MB; ratio {peak_mb / 300:.2f})")
        print(f"  {summary}")
        ours, theirs, n = kappa_per_pair(root, rater_ids)
        print(f"kappa per rater pair ({n} items, quadratic): ours {ours * 1e3:.3f} ms, "
              f"scikit-learn {theirs * 1e3:.3f} ms, ours/sklearn = {ours / theirs:.2f} (target ≤ 1)")


if __name__ == "__main__":
    main()
