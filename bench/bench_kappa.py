"""Agreement timing at the size the report must handle (SPEC §6), run as a plain script.

    python bench/bench_kappa.py

Prints the time per rater pair of ``weighted_kappa`` against scikit-learn's
``cohen_kappa_score`` on the same 1000-item pairs (quadratic weights), their ratio, and the
time of the whole agreement block of a large report: 20 raters x 500 questions x
2 conditions x 8 dimensions, i.e. 190 pairs x 8 dimensions of κ with 1000-resample
intervals, plus min / mean aggregates and Krippendorff's α per dimension. The report as a
whole has a 10 s budget on 2 cores, so this block has to stay well inside it.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import cohen_kappa_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aoven_git.agreement import (
    aggregate_kappa,
    krippendorff_alpha,
    pairwise_kappa,
    weighted_kappa,
)

RATERS = 20
QUESTIONS = 500
CONDITIONS = ("A", "B")
DIMENSIONS = tuple(f"D{i}" for i in range(1, 9))
SCALE = (0, 1, 2, 3)
RESAMPLES = 1000
SEED = 20260426


def make_study(rng: np.random.Generator) -> dict[str, dict[str, dict[tuple[str, str], int]]]:
    """dimension -> rater -> (question, condition) -> score; raters noisy around a truth."""
    items = [(f"Q{q}", c) for q in range(1, QUESTIONS + 1) for c in CONDITIONS]
    study: dict[str, dict[str, dict[tuple[str, str], int]]] = {}
    for dim in DIMENSIONS:
        truth = rng.integers(0, 4, len(items))
        study[dim] = {}
        for r in range(1, RATERS + 1):
            noise = rng.choice([-1, 0, 0, 0, 1], size=len(items))
            scores = np.clip(truth + noise, 0, 3)
            study[dim][f"r{r}"] = dict(zip(items, scores.tolist(), strict=True))
    return study


def per_pair(study: dict[str, dict[str, dict[tuple[str, str], int]]]) -> None:
    ratings = study[DIMENSIONS[0]]
    pairs = list(itertools.combinations(ratings, 2))
    lists = []
    for x, y in pairs:
        items = list(ratings[x])
        lists.append(([ratings[x][i] for i in items], [ratings[y][i] for i in items]))

    def run_ours() -> list[float | None]:
        return [weighted_kappa(a, b, categories=SCALE, weights="quadratic").value for a, b in lists]

    def run_sklearn() -> list[float]:
        return [float(cohen_kappa_score(a, b, labels=list(SCALE), weights="quadratic")) for a, b in lists]

    ours_s = best_of(run_ours)
    sk_s = best_of(run_sklearn)
    ours, ref = run_ours(), run_sklearn()
    worst = max(abs(o - r) for o, r in zip(ours, ref, strict=True) if o is not None)
    n = len(lists)
    print(f"per pair, {len(lists[0][0])} items, quadratic κ ({n} pairs, best of 5 runs):")
    print(f"  aoven_git weighted_kappa : {ours_s / n * 1e6:8.1f} µs")
    print(f"  sklearn cohen_kappa_score: {sk_s / n * 1e6:8.1f} µs")
    print(f"  ratio sklearn / ours     : {sk_s / ours_s:8.1f}x")
    print(f"  max |ours - sklearn|     : {worst:.1e}")


def full_report_block(study: dict[str, dict[str, dict[tuple[str, str], int]]]) -> None:
    start = time.perf_counter()
    n_pairs = 0
    for dim in DIMENSIONS:
        pairs = pairwise_kappa(
            study[dim], categories=SCALE, weights="quadratic", bootstrap=RESAMPLES, seed=SEED
        )
        n_pairs += len(pairs)
        aggregate_kappa(pairs, "min")
        aggregate_kappa(pairs, "mean")
        assert all(p.ci is not None for p in pairs.values())
    kappa_s = time.perf_counter() - start
    for dim in DIMENSIONS:
        krippendorff_alpha(study[dim], categories=SCALE, level="ordinal")
    total_s = time.perf_counter() - start
    print(
        f"full block: {RATERS} raters x {QUESTIONS} questions x {len(CONDITIONS)} conditions"
        f" x {len(DIMENSIONS)} dimensions"
    )
    print(f"  {n_pairs} pair κ with {RESAMPLES}-resample intervals + min/mean: {kappa_s:6.2f} s")
    print(f"  + Krippendorff's α (ordinal) per dimension, total          : {total_s:6.2f} s")


def best_of(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    study = make_study(np.random.default_rng(0))
    per_pair(study)
    full_report_block(study)


if __name__ == "__main__":
    main()
