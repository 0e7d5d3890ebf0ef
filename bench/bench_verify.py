"""verify-seal on long histories, run as a plain script (docs/sealing.md, "How history is read").

    python bench/bench_verify.py [--commits 100000]

Builds two repositories with `git fast-import`: one of 100,000 commits and one of 100, both
holding the same 20 study commits (plan, digest seals of three raters on side branches merged
back, reveals, study notes) spread evenly through history; every other commit changes a file
outside the study. Prints, for each repository, the median wall time of

* `aoven-git verify-seal` as a user runs it (a fresh process: interpreter, imports, git calls),
* the one path-limited `git log` it needs (the same pathspecs: the study dir, the plan, and every
  `scores_*` name anywhere, case-insensitively),

and the target ratio: big verify-seal ÷ (its `git log` on the big repository + verify-seal on the
small one) ≤ 1.3 — what verify-seal adds on top of git's own walk must not grow with history.
It does this twice: as fast-import leaves the repository, and after `git commit-graph write
--reachable --changed-paths` (what `git gc` / `git maintenance` keep up to date). For the second,
it also times the walk of the study dir alone, which git can answer from the commit-graph's Bloom
filters; the case-insensitive glob that finds copies of scores anywhere cannot use them (git uses
Bloom filters only for one literal pathspec), which is the price of catching those copies.

Every verify-seal above is a *first* verify: the history cache (`$GIT_DIR/aoven-git/history.cache`,
docs/sealing.md, "The history cache") is removed before each run. Two more ratios:

* first verify ÷ git's own `git log --raw` of every commit of the big history (target ≤ 1.3);
* re-verify: the big repository's cache at its tip, then 100 new commits (one of them in the
  study) on top; verify-seal of the new tip ÷ (git's `log --raw` of those 100 commits + a first
  verify of the 100-commit study) (target ≤ 1.3): a re-verify costs what is new.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aoven_git import gitio, ledger, verify_cache
from aoven_git.gitio import log_raw
from aoven_git.model import SheetId
from aoven_git.plan import parse_plan
from aoven_git.sealing import verify
from aoven_git.seals import format_seal, sha256

PLAN = """\
version: 1
study: bench
study_dir: study
responses: "test_{condition}/{question}.md"
stripped_responses: "test_{condition}_stripped/{question}.md"
scale: {min: 0, max: 3}
conditions:
  - {id: A, name: Baseline, role: baseline}
  - {id: B, name: Treatment, role: treatment}
transitions:
  - {id: 1, name: "FACT→HYP"}
dimensions:
  - {id: D1, name: One, kind: epistemic, transitions: [1]}
  - {id: D2, name: Two, kind: quality}
questions:
  - {id: Q1, text: "First?", expects: [1]}
raters:
  - {id: cto, name: CTO, emails: [cto@example.org]}
  - {id: logician, name: Logician, emails: [logician@example.org]}
  - {id: redteam, name: Red Team, emails: [redteam@example.org]}
passes:
  - {id: unblinded, conditions: [A, B], dimensions: [D1, D2], primary: true}
markers: [FACT, HYP]
locked: [study_dir, scale, conditions, dimensions, questions, passes]
"""
RATERS = ("cto", "logician", "redteam")
RUNS = 5


def score(rater: str) -> bytes:
    return (f"---\nrater: {rater}\nnonce: bench-{rater}\n---\n\n| Q | Cond | D1 | D2 |\n|---|---|---|---|\n"
            f"| Q1 | A | 1 | 2 |\n| Q1 | B | 0 | 1 |\n").encode()


def study_events() -> list[tuple[str, str, dict[str, bytes]]]:
    """The 20 study commits in order: (kind, author, files). kind "side" = on a branch, merged next."""
    ev: list[tuple[str, str, dict[str, bytes]]] = [("main", "lead", {"aoven.yaml": PLAN.encode()})]
    for r in RATERS:
        digest = sha256(score(r))
        seal = format_seal(digest, f"scores_{r}.md", SheetId(r, "unblinded", "main"))
        ev.append(("side", r, {f"study/seals/scores_{r}.sha256": seal}))
        ev.append(("merge", "lead", {}))
    for r in RATERS:
        ev.append(("main", r, {f"study/scores_{r}.md": score(r)}))
    while len(ev) < 20:
        ev.append(("main", "lead", {f"study/notes/n{len(ev)}.md": f"note {len(ev)}\n".encode()}))
    return ev


def stream(total: int) -> bytes:
    """A fast-import stream of `total` commits with the study commits spread evenly."""
    events = study_events()
    slots = {int(total * (k + 1) / (len(events) + 1)): k for k in range(len(events))}
    out: list[bytes] = []
    mark = 0
    main_tip = 0
    pending_side = 0
    side_files: dict[str, bytes] = {}
    t = 1_600_000_000

    def commit(ref: str, who: str, parent: int, files: dict[str, bytes], merge: int = 0) -> int:
        nonlocal mark, t
        mark += 1
        t += 1
        email = f"{who}@example.org"
        msg = f"c{mark}\n".encode()
        head = (f"commit {ref}\nmark :{mark}\nauthor {who} <{email}> {t} +0000\n"
                f"committer {who} <{email}> {t} +0000\ndata {len(msg)}\n").encode() + msg
        if parent:
            head += f"from :{parent}\n".encode()
        if merge:
            head += f"merge :{merge}\n".encode()
        body = b"".join(f"M 100644 inline {p}\ndata {len(d)}\n".encode() + d + b"\n"
                        for p, d in files.items())
        out.append(head + body + b"\n")
        return mark

    i = 0
    while i < total:
        k = slots.get(i)
        if k is None:
            main_tip = commit("refs/heads/main", "dev", main_tip, {f"src/f{i % 50}.txt": f"{i}\n".encode()})
        else:
            kind, who, files = events[k]
            if kind == "side":
                pending_side = commit(f"refs/heads/seal-{who}", who, main_tip, files)
                side_files = files
            elif kind == "merge":
                # fast-import does not merge trees: the merge commit lists the branch's files itself
                main_tip = commit("refs/heads/main", who, main_tip, side_files, merge=pending_side)
            else:
                main_tip = commit("refs/heads/main", who, main_tip, files)
        i += 1
    return b"".join(out)


def build(path: Path, total: int) -> None:
    path.mkdir(parents=True)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=stream(total), check=True, env=env)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=path, check=True, env=env)


def median_time(fn: object, runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_verify(repo: Path) -> None:
    """verify-seal as a user runs it (a fresh process), with whatever cache the repository has."""
    proc = subprocess.run([sys.executable, "-m", "aoven_git", "verify-seal"], cwd=repo,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"verify-seal failed on {repo}:\n{proc.stdout}{proc.stderr}")


def measure(repo: Path) -> dict[str, float]:
    def cli() -> None:
        (repo / ".git" / verify_cache.FILE).unlink(missing_ok=True)  # a first verify
        run_verify(repo)

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    specs = ledger.pathspecs(parse_plan(PLAN.encode()), "aoven.yaml")

    def log() -> None:
        log_raw(repo, head, specs)

    def study_only() -> None:
        log_raw(repo, head, [":(literal)study"])

    # a blind study once unblinded also searches every commit for copies of each key, by its nonce
    # (blind_corpus.key_copy_violations): timed with a 32-hex-digit nonce, against the same search
    # by git alone, and beside git's walk of every commit with its changes
    nonce = "0123456789abcdef0123456789abcdef"

    def key_copies() -> None:
        gitio.pickaxe_writes(repo, head, nonce)

    def git_search() -> None:
        subprocess.run(["git", "log", "--format=%H", f"-S{nonce}", head], cwd=repo,
                       capture_output=True, check=True)

    def walk() -> None:
        subprocess.run(["git", "log", "--raw", "--no-renames", "--format=%H", head], cwd=repo,
                       capture_output=True, check=True)

    report = verify(repo, "aoven.yaml")  # warm caches once, and check the history verifies cleanly
    assert report.status == "complete", report.as_dict()
    return {"cli": median_time(cli), "log": median_time(log), "study": median_time(study_only),
            "keys": median_time(key_copies), "search": median_time(git_search), "walk": median_time(walk)}


def new_commits(repo: Path, count: int) -> bytes:
    """A fast-import stream of `count` commits on top of main: one adds a study note."""
    out = []
    for k in range(count):
        path = f"study/notes/new{k}.md" if k == count // 2 else f"src/new{k % 50}.txt"
        data = f"new {k}\n".encode()
        msg = f"new {k}\n".encode()
        head = (f"commit refs/heads/main\nauthor dev <dev@example.org> {1_700_000_000 + k} +0000\n"
                f"committer dev <dev@example.org> {1_700_000_000 + k} +0000\ndata {len(msg)}\n").encode()
        head += msg + (b"from refs/heads/main^0\n" if k == 0 else b"")
        out.append(head + f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n\n")
    return b"".join(out)


def measure_reverify(big: Path, small: Path, count: int = 100) -> dict[str, float]:
    """Re-verify after `count` new commits, against the walk of those commits + a first verify of
    the small study. The cache of the old tip is put back before each run."""
    cache = big / ".git" / verify_cache.FILE
    cache.unlink(missing_ok=True)
    run_verify(big)  # the cache at the old tip
    old = subprocess.run(["git", "rev-parse", "HEAD"], cwd=big, capture_output=True, text=True,
                         check=True).stdout.strip()
    kept = cache.read_bytes()
    subprocess.run(["git", "fast-import", "--quiet"], cwd=big, input=new_commits(big, count), check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=big, check=True)

    def warm() -> None:
        cache.write_bytes(kept)
        run_verify(big)

    def walk_new() -> None:
        subprocess.run(["git", "log", "--raw", "--no-renames", "--format=%H", "HEAD", f"^{old}"], cwd=big,
                       capture_output=True, check=True)

    def small_first() -> None:
        (small / ".git" / verify_cache.FILE).unlink(missing_ok=True)
        run_verify(small)

    result = {"warm": median_time(warm), "walk_new": median_time(walk_new), "small": median_time(small_first)}
    subprocess.run(["git", "reset", "-q", "--hard", old], cwd=big, check=True)  # back for the next round
    subprocess.run(["git", "update-ref", "refs/heads/main", old], cwd=big, check=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="aoven-bench-") as tmp:
        big, small = Path(tmp) / "big", Path(tmp) / "small"
        t0 = time.perf_counter()
        build(big, args.commits)
        build(small, 100)
        print(f"built {args.commits}- and 100-commit repositories in {time.perf_counter() - t0:.1f} s")
        for label in ("as built by fast-import", "with commit-graph (--changed-paths)"):
            if "graph" in label:
                for repo in (big, small):
                    subprocess.run(["git", "commit-graph", "write", "--reachable", "--changed-paths"],
                                   cwd=repo, check=True, capture_output=True)
            b, s = measure(big), measure(small)
            floor = b["log"] + s["cli"]
            print(f"\n[{label}] median of {RUNS} runs, seconds")
            print(f"  {'':38} {'100 commits':>12} {args.commits:>12,}")
            for key, name in (("cli", "aoven-git verify-seal (CLI)"), ("log", "its path-limited git log"),
                              ("study", "git log of the study dir alone")):
                print(f"  {name:38} {s[key]:12.3f} {b[key]:12.3f}")
            print(f"  floor = big git log + small verify-seal  {floor:8.3f}")
            print(f"  ratio big verify-seal / floor            {b['cli'] / floor:8.2f}   (target <= 1.3)")
            print(f"  blind key copy search                    {s['keys']:12.3f} {b['keys']:12.3f}")
            print(f"  the same search by git alone (floor)     {s['search']:12.3f} {b['search']:12.3f}")
            print(f"  git log --raw of every commit            {s['walk']:12.3f} {b['walk']:12.3f}")
            ratio = b["keys"] / b["search"]
            print(f"  ratio big key search / floor             {ratio:8.2f}   (target <= 1.3)")
            print(f"  ratio big first verify / git log --raw   {b['cli'] / b['walk']:8.2f}   (target <= 1.3)")
            r = measure_reverify(big, small)
            floor = r["walk_new"] + r["small"]
            print(f"  re-verify after 100 new commits          {r['warm']:21.3f}")
            print(f"  floor = their git log --raw + small first verify {floor:.3f}")
            print(f"  ratio re-verify / floor                  {r['warm'] / floor:8.2f}   (target <= 1.3)")

if __name__ == "__main__":
    main()
