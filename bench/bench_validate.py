"""Time `aoven-git validate` on 100 score files of 160 cells against bare interpreter start-up.

    python bench/bench_validate.py [--files 100] [--repeat 3]

The hook runs `validate` on every commit, so what matters is the work beyond importing the
package: the script prints both times, their difference and their ratio.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "aoven_git" / "templates" / "aoven.yaml"


def build(root: Path, files: int) -> None:
    """`files` distinct raters, each scoring the full unblinded pass (10 questions x 2 x 8 = 160)."""
    from aoven_git.commands.sheet import render_sheet
    from aoven_git.model import SheetId
    from aoven_git.plan import load_plan

    text = PLAN.read_text("utf-8")
    raters = "\n".join(f"  - {{id: r{i:03d}, name: Rater {i}}}" for i in range(files))
    head, _, tail = text.partition("\nraters:\n")
    _, sep, rest = tail.partition("\n\n")
    plan_text = f"{head}\nraters:\n{raters}\n{sep}{rest}"
    (root / "aoven.yaml").write_text(plan_text, "utf-8")
    plan = load_plan(root / "aoven.yaml")
    study = root / plan.study_dir
    study.mkdir(parents=True)
    rng = random.Random(7)
    for i in range(files):
        blank = render_sheet(plan, SheetId(f"r{i:03d}", "unblinded", "main"), "wide")
        out = []
        for line in blank.splitlines():
            if line.startswith("| Q") and "| Cond |" not in line:
                cells = line.split("|")[1:-1]
                q, c = cells[0].strip(), cells[1].strip()
                scores = [rng.randint(0, 3) for _ in range(8)]
                shown = [
                    f"{s} #8" if d == 0 and s else f"{s} #5" if d == 4 and s else str(s)
                    for d, s in enumerate(scores)
                ]
                line = f"| {q} | {c} | " + " | ".join(shown) + f" | {sum(scores)} |  |"
            out.append(line)
        (study / f"scores_r{i:03d}.md").write_text("\n".join(out) + "\n", "utf-8")


def timed(cmd: list[str], cwd: Path, repeat: int) -> tuple[float, subprocess.CompletedProcess[str]]:
    times = []
    proc = None
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
    assert proc is not None
    return statistics.median(times), proc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="aoven-bench-"))
    try:
        build(tmp, args.files)
        base, _ = timed([sys.executable, "-c", "import aoven_git"], tmp, args.repeat)
        empty = tmp / "empty"
        (empty / "tests" / "phase2").mkdir(parents=True)
        shutil.copy(tmp / "aoven.yaml", empty / "aoven.yaml")
        idle, _ = timed([sys.executable, "-m", "aoven_git", "validate"], empty, args.repeat)
        run, proc = timed([sys.executable, "-m", "aoven_git", "validate"], tmp, args.repeat)
        if proc.returncode != 0:
            print(proc.stdout[-2000:], proc.stderr[-2000:], sep="\n")
            print(f"validate exited {proc.returncode}")
            return 1
        print(proc.stdout.strip().splitlines()[-1])
        print(f"python -c 'import aoven_git': {base:.3f} s")
        print(f"aoven-git validate, empty study dir (imports + plan): {idle:.3f} s")
        print(f"aoven-git validate ({args.files} files x 160 cells): {run:.3f} s")
        print(
            f"beyond `import aoven_git`: {run - base:.3f} s (ratio {run / base:.1f}x); "
            f"for the files alone: {run - idle:.3f} s"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
