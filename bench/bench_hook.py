"""The pre-commit hook's cost on a commit staging one score file (issue 3), run as a plain script.

    python bench/bench_hook.py

Builds a study repository where the other required rater has sealed, stages one valid score
file, and times `aoven-git hook pre-commit` (a fresh interpreter each run, as git runs it)
against `python -c "import click, git, jsonschema, ruamel.yaml, markdown_it"` in the same run.
Target: median hook time ≤ 2 × the import baseline. Also checks, with `-X importtime`, that the
hook imports neither numpy nor scipy.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256

RUNS = 15
TEMPLATE = Path(__file__).resolve().parents[1] / "aoven_git" / "templates" / "aoven.yaml"


def score_file(rater: str) -> str:
    """A complete, valid wide score file for the default plan (all zeros: no annotations needed)."""
    questions = [f"Q{i}" for i in range(1, 11)]
    rows = "".join(f"| {q} | {c} | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |\n"
                   for q in questions for c in ("A", "B"))
    return (f"---\nrater: {rater}\npass: unblinded\nround: main\n---\n\n"
            "| Q | Cond | D1 | D2 | D3 | D4 | D5 | D6 | D7 | D8 | Σ |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n" + rows)


def git(repo: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="aoven-hook-bench-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
               "GIT_AUTHOR_NAME": "L", "GIT_AUTHOR_EMAIL": "logician@example.org",
               "GIT_COMMITTER_NAME": "L", "GIT_COMMITTER_EMAIL": "logician@example.org"}
        git(repo, "init", "-q", "-b", "main", env=env)
        (repo / "aoven.yaml").write_text(TEMPLATE.read_text("utf-8"), "utf-8")
        study = repo / "tests" / "phase2"
        for cond in ("a", "b"):
            (study / f"test_{cond}").mkdir(parents=True)
            for i in range(1, 11):
                (study / f"test_{cond}" / f"q{i}.md").write_text(f"# Q{i}\n\nResponse {cond.upper()}.\n")
        git(repo, "add", "-A", env=env)
        git(repo, "commit", "-q", "-m", "plan", env=env)
        (study / "seals").mkdir()
        for pass_id, stem in (("unblinded", "scores_logician"), ("blinded", "scores_logician_blinded")):
            text = score_file("logician")  # what is sealed does not matter here, only that it is
            seal = format_seal(sha256(text.encode()), f"{stem}.md", SheetId("logician", pass_id, "main"))
            (study / "seals" / f"{stem}.sha256").write_bytes(seal)
        git(repo, "add", "-A", env=env)
        git(repo, "commit", "-q", "-m", "seal logician (both passes)", env=env)
        # the other required rater has sealed every pass: cto may commit a content seal
        (study / "scores_cto.md").write_text(score_file("cto"), "utf-8")
        env = {**env, "GIT_AUTHOR_NAME": "C", "GIT_AUTHOR_EMAIL": "cto@example.org",
               "GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "cto@example.org"}
        git(repo, "add", "tests/phase2/scores_cto.md", env=env)

        hook = [sys.executable, "-m", "aoven_git", "hook", "pre-commit"]
        baseline = [sys.executable, "-c", "import click, git, jsonschema, ruamel.yaml, markdown_it"]
        probe = subprocess.run([sys.executable, "-X", "importtime", *hook[1:]], cwd=repo, env=env,
                               capture_output=True, text=True, check=False)
        if probe.returncode != 0:
            raise SystemExit(f"hook refused the commit:\n{probe.stderr}")
        modules = {line.split("|")[-1].strip() for line in probe.stderr.splitlines()
                   if line.startswith("import time:")}
        heavy = sorted(m for m in modules if m.split(".")[0] in ("numpy", "scipy"))
        if "markdown_it" not in modules:
            raise SystemExit("the hook did not parse the staged score file")

        def timed(cmd: list[str]) -> float:
            start = time.perf_counter()
            subprocess.run(cmd, cwd=repo, env=env, check=True, capture_output=True)
            return time.perf_counter() - start

        hook_times, base_times = [], []
        for _ in range(RUNS):  # interleaved, so machine load hits both alike
            hook_times.append(timed(hook))
            base_times.append(timed(baseline))
        h, b = statistics.median(hook_times), statistics.median(base_times)
        print(f"hook pre-commit, one staged score file: median {h:.3f} s over {RUNS} runs")
        print(f"import baseline (click, git, jsonschema, ruamel.yaml, markdown_it): median {b:.3f} s")
        print(f"ratio hook / baseline: {h / b:.2f}   (target <= 2)")
        print(f"numpy/scipy imported by the hook: {heavy or 'none'}")


if __name__ == "__main__":
    main()
