"""Agreement timing at the size the report must handle, run as a plain script.

    python bench/bench_kappa.py

Prints, all measured in this run:

* the time per rater pair of ``weighted_kappa`` against scikit-learn's ``cohen_kappa_score`` on
  the same 1000-item pairs (quadratic weights) and their ratio;
* the whole agreement block of a large report — 20 raters × 500 questions × 2 conditions × 8
  dimensions, i.e. 190 pairs × 8 dimensions of κ — with 1000-resample intervals by BCa and by
  the percentile method, each as a ratio against the floor of the same block without intervals;
* how much one vectorised ``scipy.stats.bootstrap`` call over all pairs saves against calling it
  once per pair (the per-pair time measured on a few pairs, then scaled to all of them).

The report as a whole has a 10 s budget on 2 cores (bench/bench_report.py), so this block has
to stay well inside it. docs/statistics.md records the numbers behind the choice of BCa.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.metrics import cohen_kappa_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aoven_git.agreement import (
    aggregate_kappa,
    krippendorff_alpha,
    pairwise_kappas,
    weighted_kappa,
)

RATERS = 20
QUESTIONS = 500
CONDITIONS = ("A", "B")
DIMENSIONS = tuple(f"D{i}" for i in range(1, 9))
SCALE = (0, 1, 2, 3)
RESAMPLES = 1000
SEED = 20260426
Study = dict[str, dict[str, dict[tuple[str, str], int]]]


def make_study(rng: np.random.Generator) -> Study:
    """dimension -> rater -> (question, condition) -> score; raters noisy around a truth."""
    items = [(f"Q{q}", c) for q in range(1, QUESTIONS + 1) for c in CONDITIONS]
    study: Study = {}
    for dim in DIMENSIONS:
        truth = rng.integers(0, 4, len(items))
        study[dim] = {}
        for r in range(1, RATERS + 1):
            noise = rng.choice([-1, 0, 0, 0, 1], size=len(items))
            scores = np.clip(truth + noise, 0, 3)
            study[dim][f"r{r}"] = dict(zip(items, scores.tolist(), strict=True))
    return study


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def per_pair(study: Study) -> None:
    ratings = study[DIMENSIONS[0]]
    lists = []
    for x, y in itertools.combinations(ratings, 2):
        items = list(ratings[x])
        lists.append(([ratings[x][i] for i in items], [ratings[y][i] for i in items]))

    def run_ours() -> list[float | None]:
        return [weighted_kappa(a, b, categories=SCALE, weights="quadratic").value for a, b in lists]

    def run_sklearn() -> list[float]:
        return [float(cohen_kappa_score(a, b, labels=list(SCALE), weights="quadratic")) for a, b in lists]

    ours_s, sk_s = best_of(run_ours), best_of(run_sklearn)
    worst = max(abs(o - r) for o, r in zip(run_ours(), run_sklearn(), strict=True) if o is not None)
    n = len(lists)
    print(f"per pair, {len(lists[0][0])} items, quadratic κ ({n} pairs, best of 5 runs):")
    print(f"  aoven_git weighted_kappa : {ours_s / n * 1e6:8.1f} µs")
    print(f"  sklearn cohen_kappa_score: {sk_s / n * 1e6:8.1f} µs")
    print(f"  ratio sklearn / ours     : {sk_s / ours_s:8.1f}x")
    print(f"  max |ours - sklearn|     : {worst:.1e}")


def agreement_block(study: Study, resamples: int, method: str) -> float:
    """κ of every pair of every dimension (one bootstrap call), both aggregates; seconds."""
    start = time.perf_counter()
    pairs = pairwise_kappas(study, categories=SCALE, weights="quadratic", bootstrap=resamples, seed=SEED,
                            method=method)  # type: ignore[arg-type]
    for by_pair in pairs.values():
        aggregate_kappa(by_pair, "min")
        aggregate_kappa(by_pair, "mean")
        if resamples:
            assert all(p.ci is not None or p.ci_reason for p in by_pair.values())
    return time.perf_counter() - start


def full_report_block(study: Study) -> None:
    n_pairs = len(DIMENSIONS) * RATERS * (RATERS - 1) // 2
    print(f"full block: {RATERS} raters x {QUESTIONS} questions x {len(CONDITIONS)} conditions"
          f" x {len(DIMENSIONS)} dimensions = {n_pairs} pair κ")
    floor = min(agreement_block(study, 0, "BCa") for _ in range(3))
    print(f"  floor, κ and aggregates without intervals : {floor:6.2f} s")
    for method in ("BCa", "percentile"):
        seconds = min(agreement_block(study, RESAMPLES, method) for _ in range(3))
        print(f"  + {RESAMPLES}-resample {method:<10} intervals    : {seconds:6.2f} s"
              f"  (ratio to floor {seconds / floor:5.1f})")
    start = time.perf_counter()
    for dim in DIMENSIONS:
        krippendorff_alpha(study[dim], categories=SCALE, level="ordinal")
    print(f"  Krippendorff's α (ordinal), 8 dimensions  : {time.perf_counter() - start:6.2f} s")


def one_call_versus_one_per_pair(study: Study, sample: int = 3) -> None:
    """The same intervals from one scipy.stats.bootstrap call per pair (our vectorised statistic
    on the pair alone), timed on a few pairs and scaled to the whole block."""
    ratings = study[DIMENSIONS[0]]
    raters = list(ratings)[: sample + 1]
    start = time.perf_counter()
    for x, y in list(itertools.combinations(raters, 2))[:sample]:
        pairwise_kappas({0: {x: ratings[x], y: ratings[y]}}, categories=SCALE, weights="quadratic",
                        bootstrap=RESAMPLES, seed=SEED, method="BCa")
    per_call = (time.perf_counter() - start) / sample
    n_pairs = len(DIMENSIONS) * RATERS * (RATERS - 1) // 2
    together = agreement_block(study, RESAMPLES, "BCa")
    print(f"one bootstrap call per pair (BCa): {per_call * 1e3:.0f} ms per pair, about "
          f"{per_call * n_pairs:.0f} s for {n_pairs} pairs; one call for all: {together:.2f} s "
          f"(ratio {per_call * n_pairs / together:.0f}x)")


def main() -> None:
    study = make_study(np.random.default_rng(0))
    per_pair(study)
    full_report_block(study)
    one_call_versus_one_per_pair(study)


if __name__ == "__main__":
    main()
