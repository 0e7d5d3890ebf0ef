"""verify-seal with 100 time-stamp tokens vs without, run as a plain script (docs/sealing.md,
"Independent time anchors").

    python bench/bench_timestamps.py [--tokens 100] [--runs 7]

Builds one study (plan, two digest seals, two reveals) with a local RFC 3161 authority (`openssl
ts` behind HTTP on 127.0.0.1, as in the tests), then `--tokens` more commits, and two copies of
it: one whose plan declares no `security.timestamps` and has no tokens, one that pins the authority
and commits a token over every commit (the seals included). Prints the median wall time of
verify-seal in-process and as a fresh process: without tokens, with tokens cold (the verification
cache `$GIT_DIR/aoven-git/timestamps.cache` removed before each run: every token verified) and
warm (the cache of the run before), each taking turns with the run without tokens, and the
ratios against it, in wall time and in CPU time (this process and its git children: steadier than
wall time on a shared machine)
(target for warm ≤ 1.2×).
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

from aoven_git.sealing import verify
from aoven_git.timestamp_cache import FILE
from aoven_git.timestamps import request_token, token_path
from tests.sealing.conftest import Study
from tests.timestamp_authority import Authorities, start_anchored


def _build(path: Path, authority: object | None, extra: int) -> Path:
    study = Study(path)
    if authority is None:
        study.start()
    else:
        start_anchored(study, [authority], required=True)  # type: ignore[list-item]
    seals = [study.digest_seal(rater) for rater in ("cto", "logician")]
    for rater in ("cto", "logician"):
        study.reveal(rater)
    for i in range(extra):
        study.write("notes.txt", f"note {i}\n")
        study.by("lead", f"note {i}", "notes.txt")
    if authority is not None:
        commits = seals + study.git("rev-list", "HEAD").split()[:extra - len(seals)]
        for c in commits:
            study.write(token_path(c), request_token(authority.url, c))  # type: ignore[attr-defined]
        study.by("lead", "time-stamps", "timestamps")
    return path


def _drop_cache(root: Path) -> None:
    """A cold run: the verification cache (timestamp_cache.py) removed before it."""
    (root / ".git" / FILE).unlink(missing_ok=True)


def _cpu() -> float:
    """User + system CPU seconds of this process and its finished children (git, the CLI): on a
    busy machine wall time mostly measures the neighbours; CPU time is what the run itself costs."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _interleaved(cases: list[tuple[Path, bool]], runs: int, fresh: bool) -> list[tuple[float, float]]:
    """Median (wall, CPU) time of verify-seal per (repository, cold) case, the cases taking turns
    in every round so that a busy machine slows them alike (the ratios are what is compared)."""
    times: list[list[tuple[float, float]]] = [[] for _ in cases]
    for _ in range(runs):
        for i, (root, cold) in enumerate(cases):
            if cold:
                _drop_cache(root)
            t, c = time.perf_counter(), _cpu()
            if fresh:
                subprocess.run([sys.executable, "-m", "aoven_git", "verify-seal"], cwd=root,
                               capture_output=True, check=True)
            else:
                verify(root, "aoven.yaml")
            times[i].append((time.perf_counter() - t, _cpu() - c))
    return [(statistics.median(w for w, _ in t), statistics.median(c for _, c in t)) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=100)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        cfg = base / "gitconfig"
        cfg.write_text("[user]\n\tname = Bench\n\temail = bench@example.org\n[commit]\n\tgpgsign = false\n")
        os.environ.update({"GIT_CONFIG_GLOBAL": str(cfg), "GIT_CONFIG_NOSYSTEM": "1",
                           "AOVEN_GIT_HOME": str(base / "home")})
        pool = Authorities(base / "authorities")
        try:
            plain = _build(base / "plain", None, args.tokens)
            anchored = _build(base / "anchored", pool.start("tsa"), args.tokens)
        finally:
            pool.stop()
        report = verify(anchored, "aoven.yaml")
        assert report.ok and len(report.anchors or []) == args.tokens, report.as_dict()["violations"]
        verify(anchored, "aoven.yaml")  # the warm case starts with this run's cache
        rows = []
        for name, cold in ((f"{args.tokens} tokens, warm", False), (f"{args.tokens} tokens, cold", True)):
            # each case takes turns with the run without tokens (its own baseline): a cold run
            # just before a warm one would slow it (the allocator and caches it leaves behind)
            cases = [(plain, False), (anchored, cold)]
            inproc = _interleaved(cases, args.runs, fresh=False)
            cli = _interleaved(cases, args.runs, fresh=True)
            rows.append((name, inproc, cli))
        for name, inproc, cli in rows:
            for how, (without, tokens) in (("in-process", inproc), ("fresh process", cli)):
                print(f"{name:>20} {how:>13}: wall {tokens[0] * 1000:7.1f} ms vs {without[0] * 1000:7.1f} ms "
                      f"({tokens[0] / without[0]:.2f}x)   CPU {tokens[1] * 1000:7.1f} ms vs "
                      f"{without[1] * 1000:7.1f} ms ({tokens[1] / without[1]:.2f}x)")
        print("target: warm <= 1.2x the run without tokens")

if __name__ == "__main__":
    main()
