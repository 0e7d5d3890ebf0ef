"""verify-seal with 100 time-stamp tokens vs without, run as a plain script (docs/sealing.md,
"Independent time anchors").

    python bench/bench_timestamps.py [--tokens 100] [--runs 7]

Builds one study (plan, two digest seals, two reveals) with a local RFC 3161 authority (`openssl
ts` behind HTTP on 127.0.0.1, as in the tests), then `--tokens` more commits, and two copies of
it: one whose plan declares no `security.timestamps` and has no tokens, one that pins the authority
and commits a token over every commit (the seals included). Prints the median wall time of
verify-seal in-process and as a fresh process: without tokens, with tokens cold (the verification
cache `$GIT_DIR/aoven-git/timestamps.cache` removed before each run: every token verified) and
warm (the cache of the run before), and the ratios against the run without tokens measured here
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


def _median(fn: object, runs: int, before: object = None) -> float:
    times = []
    for _ in range(runs):
        if before is not None:
            before()  # type: ignore[operator]
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _drop_cache(root: Path) -> None:
    """A cold run: the verification cache (timestamp_cache.py) removed before it."""
    (root / ".git" / FILE).unlink(missing_ok=True)


def _measure(root: Path, runs: int, cold: bool) -> tuple[float, float]:
    """Median in-process and fresh-process wall time of verify-seal on `root`."""
    before = (lambda: _drop_cache(root)) if cold else None
    inproc = _median(lambda: verify(root, "aoven.yaml"), runs, before)
    cli = _median(lambda: subprocess.run([sys.executable, "-m", "aoven_git", "verify-seal"], cwd=root,
                                         capture_output=True, check=True), runs, before)
    return inproc, cli


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
        rows = [("without tokens", *_measure(plain, args.runs, cold=False)),
                (f"{args.tokens} tokens, cold", *_measure(anchored, args.runs, cold=True)),
                (f"{args.tokens} tokens, warm", *_measure(anchored, args.runs, cold=False))]
        for name, inproc, cli in rows:
            print(f"{name:>20}: in-process {inproc * 1000:7.1f} ms   fresh process {cli * 1000:7.1f} ms")
        for name, inproc, cli in rows[1:]:
            print(f"ratio {name} / without: in-process {inproc / rows[0][1]:.2f}x, "
                  f"fresh process {cli / rows[0][2]:.2f}x (target for warm <= 1.2x)")


if __name__ == "__main__":
    main()
