"""verify-seal on reconciliation-heavy studies, run as a plain script (docs/sealing.md, "How
history is read").

    python bench/bench_reconciliation.py [--raters 20] [--commits 500] [--profile]

Builds three repositories with `git fast-import`, each a clean study (plan, every rater's digest
seal on a side branch merged back, every reveal) followed by reconciliation commits, each by one
rater, adding or re-wording that rater's own rows of `study/reconciliation.md`:

* the floor: 2 raters, one reconciliation commit each;
* `--raters` raters (default 20), one reconciliation commit each (the file ends with raters × cells
  rows, and every version has up to that many);
* 2 raters and `--commits` (default 500) reconciliation commits (the file re-worded row by row).

Prints the median wall time of `aoven-git verify-seal --format json` as a user runs it (a fresh
process, the history cache removed before each run) on each, and the ratios to the floor measured
in the same run (target ≤ 2). `--profile` prints the top of a cProfile of `sealing.verify` on the
two large studies instead of timing.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aoven_git import verify_cache
from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256

QUESTIONS = 10
DIMS = ("D1", "D2")
RUNS = 5


def plan_text(raters: list[str]) -> str:
    return "\n".join([
        "version: 1", "study: bench", "study_dir: study",
        'responses: "test_{condition}/{question}.md"',
        'stripped_responses: "test_{condition}_stripped/{question}.md"',
        "scale: {min: 0, max: 3}",
        "conditions: [{id: A, name: Baseline, role: baseline}, {id: B, name: Treatment, role: treatment}]",
        'transitions: [{id: 1, name: "FACT→HYP"}]',
        "dimensions: [{id: D1, name: One, kind: epistemic, transitions: [1]},",
        "             {id: D2, name: Two, kind: quality}]",
        "questions:",
        *[f'  - {{id: Q{q}, text: "Question {q}?", expects: [1]}}' for q in range(1, QUESTIONS + 1)],
        "raters:",
        *[f"  - {{id: {r}, name: {r}, emails: [{r}@example.org]}}" for r in raters],
        "passes: [{id: unblinded, conditions: [A, B], dimensions: [D1, D2], primary: true}]",
        "markers: [FACT, HYP]",
        "locked: [study_dir, scale, conditions, dimensions, questions, passes]", ""])


def cells() -> list[str]:
    return [f"Q{q}/{c}/{d}" for q in range(1, QUESTIONS + 1) for c in "AB" for d in DIMS]


def score(rater: str, k: int) -> bytes:
    rows = [f"| Q{q} | {c} | {(q + k) % 4} | {(q * 3 + k) % 4} |"
            for q in range(1, QUESTIONS + 1) for c in "AB"]
    return (f"---\nrater: {rater}\nnonce: bench-{rater}\n---\n\n| Q | Cond | D1 | D2 |\n|---|---|---|---|\n"
            + "\n".join(rows) + "\n").encode()


def reconciliation(rows: dict[tuple[str, str], str]) -> bytes:
    lines = ["| Cell | Rater | Justification | Consensus |", "|---|---|---|---|"]
    lines += [f"| {cell} | {rater} | {text} | 2 |" for (cell, rater), text in sorted(rows.items())]
    return ("\n".join(lines) + "\n").encode()


class Stream:
    """A fast-import stream: one commit per call, marks counted."""

    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.mark = 0
        self.t = 1_600_000_000

    def commit(self, ref: str, who: str, parent: int, files: dict[str, bytes], merge: int = 0) -> int:
        self.mark += 1
        self.t += 1
        msg = f"c{self.mark}\n".encode()
        email = f"{who}@example.org"
        head = (f"commit {ref}\nmark :{self.mark}\nauthor {who} <{email}> {self.t} +0000\n"
                f"committer {who} <{email}> {self.t} +0000\ndata {len(msg)}\n").encode() + msg
        head += f"from :{parent}\n".encode() if parent else b""
        head += f"merge :{merge}\n".encode() if merge else b""
        body = b"".join(f"M 100644 inline {p}\ndata {len(d)}\n".encode() + d + b"\n"
                        for p, d in files.items())
        self.out.append(head + body + b"\n")
        return self.mark


def stream(n_raters: int, n_commits: int) -> bytes:
    """Plan, seals (side branches merged), reveals, then `n_commits` reconciliation commits."""
    raters = [f"r{i:02d}" for i in range(n_raters)]
    s = Stream()
    tip = s.commit("refs/heads/main", "lead", 0, {"aoven.yaml": plan_text(raters).encode()})
    for k, r in enumerate(raters):
        seal = format_seal(sha256(score(r, k)), f"scores_{r}.md", SheetId(r, "unblinded", "main"))
        files = {f"study/seals/scores_{r}.sha256": seal}
        side = s.commit(f"refs/heads/seal-{r}", r, tip, files)
        tip = s.commit("refs/heads/main", "lead", tip, files, merge=side)
    for k, r in enumerate(raters):
        tip = s.commit("refs/heads/main", r, tip, {f"study/scores_{r}.md": score(r, k)})
    rows: dict[tuple[str, str], str] = {}
    all_cells = cells()
    for j in range(n_commits):
        r = raters[j % n_raters]
        if n_commits <= n_raters:  # one commit per rater: all of that rater's rows at once
            rows.update({(c, r): f"{r} agrees on {c}" for c in all_cells})
        else:  # one row added or re-worded per commit
            c = all_cells[(j // n_raters) % len(all_cells)]
            rows[(c, r)] = f"{r} on {c}, version {j}"
        tip = s.commit("refs/heads/main", r, tip, {"study/reconciliation.md": reconciliation(rows)})
    return b"".join(s.out)


def build(path: Path, n_raters: int, n_commits: int) -> None:
    path.mkdir(parents=True)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=stream(n_raters, n_commits),
                   check=True, env=env)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=path, check=True, env=env)


def cli_time(repo: Path) -> float:
    times = []
    for _ in range(RUNS):
        (repo / ".git" / verify_cache.FILE).unlink(missing_ok=True)  # a first verify each time
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "aoven_git", "verify-seal", "--format", "json"],
                              cwd=repo, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"verify-seal failed on {repo}:\n{proc.stdout}{proc.stderr}")
    return statistics.median(times)


def profile(repo: Path) -> None:
    from aoven_git.sealing import verify

    prof = cProfile.Profile()
    prof.enable()
    verify(repo, "aoven.yaml")
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raters", type=int, default=20)
    ap.add_argument("--commits", type=int, default=500)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    shapes = {"floor: 2 raters, 2 reconciliation commits": (2, 2),
              f"{args.raters} raters, {args.raters} reconciliation commits": (args.raters, args.raters),
              f"2 raters, {args.commits} reconciliation commits": (2, args.commits)}
    with tempfile.TemporaryDirectory(prefix="aoven-bench-") as tmp:
        repos = {}
        for k, (label, (n, c)) in enumerate(shapes.items()):
            repos[label] = Path(tmp) / f"r{k}"
            build(repos[label], n, c)
        if args.profile:
            for label in list(shapes)[1:]:
                print(f"\n== {label}")
                profile(repos[label])
            return
        times = {label: cli_time(repo) for label, repo in repos.items()}
        floor = next(iter(times.values()))
        print(f"aoven-git verify-seal --format json, median of {RUNS} runs (fresh process), seconds")
        for label, t in times.items():
            print(f"  {label:48} {t:8.3f}   ratio to floor {t / floor:5.2f}   (target <= 2)")


if __name__ == "__main__":
    main()
