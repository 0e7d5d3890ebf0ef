"""Uncertainty a PI reads first: how much the headline numbers would move with other questions,
and how each rater scored — descriptive, beside the exact rules, never deciding anything.

* :func:`question_intervals` — a 95 % percentile bootstrap interval over *questions* for each
  condition's mean aggregate and for the improvement (mean A − mean B)/mean A: the questions are
  resampled with replacement, each keeping both conditions' aggregates (a paired bootstrap;
  Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13), with
  ``scipy.stats.bootstrap`` and a fixed seed, so it is reproducible.
* :func:`rater_means` — each rater's mean score per condition and dimension, exactly.

docs/statistics.md, "Uncertainty a PI reads first". Pure functions over plain data.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from aoven_git.model import CellKey

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    """A percentile interval, or ``None`` with the reason."""

    bounds: tuple[float, float] | None
    reason: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"interval": list(self.bounds) if self.bounds else None, "reason": self.reason}


def question_intervals(
    aggregates_a: Sequence[Fraction], aggregates_b: Sequence[Fraction], *, n_resamples: int, seed: int,
    confidence: float = 0.95,
) -> dict[str, Interval]:
    """Intervals for ``mean_A``, ``mean_B`` and ``improvement`` over the questions (one aggregate
    per question and condition, in the same question order).

    Per resample of the n questions: mean A* = Σ m_i·A_i/n, mean B* likewise (m_i: how often
    question i was drawn), improvement* = (mean A* − mean B*)/mean A*. The interval holds the
    (1 ± confidence)/2 quantiles of the resamples (percentile method). The improvement has no
    interval if any resample has mean A* = 0 (the improvement is undefined there).
    """
    n = len(aggregates_a)
    if n != len(aggregates_b):
        raise ValueError(f"one aggregate per question and condition: {n} vs {len(aggregates_b)}")
    if n_resamples <= 0:
        none = Interval(None, "no bootstrap resamples were asked for (--bootstrap 0)")
        return {"mean_A": none, "mean_B": none, "improvement": none}
    if n < 2:
        one = Interval(None, "a single question cannot be resampled")
        return {"mean_A": one, "mean_B": one, "improvement": one}
    values = np.array([[float(x) for x in aggregates_a], [float(x) for x in aggregates_b]])
    draws = _resampled(values, n_resamples=n_resamples, seed=seed, confidence=confidence)
    out = {name: _interval(draws[row], confidence) for row, name in enumerate(("mean_A", "mean_B"))}
    zero = int(np.isnan(draws[2]).sum())
    out["improvement"] = (Interval(None, f"mean A is 0 in {zero} of {n_resamples} resamples, where the "
                                         "improvement is undefined") if zero
                          else _interval(draws[2], confidence))
    return out


def _resampled(values: FloatArray, *, n_resamples: int, seed: int, confidence: float) -> FloatArray:
    """Mean A*, mean B* and the improvement (NaN where mean A* = 0) in every resample
    (3 × resamples): one vectorised ``scipy.stats.bootstrap`` call on the question indices with
    ``numpy.random.default_rng(seed)``; the statistic's three outputs are its extra leading
    dimension."""
    from scipy import stats

    def statistic(index: npt.ArrayLike, axis: int = -1) -> FloatArray:
        idx = np.asarray(index, dtype=np.int64)
        mean_a, mean_b = values[0, idx].mean(axis=-1), values[1, idx].mean(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (mean_a - mean_b) / np.where(mean_a != 0, mean_a, 1.0)
        improvement = np.where(mean_a != 0, ratio, np.nan)
        return np.stack([mean_a, mean_b, improvement])

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap((np.arange(values.shape[1]),), statistic, n_resamples=n_resamples,
                                 vectorized=True, method="percentile", confidence_level=confidence,
                                 rng=np.random.default_rng(seed))
    return np.asarray(result.bootstrap_distribution, dtype=np.float64)


def _interval(draws: FloatArray, confidence: float) -> Interval:
    """The percentile interval: the (1 − confidence)/2 and (1 + confidence)/2 quantiles."""
    alpha = (1.0 - confidence) / 2.0
    low, high = (float(np.quantile(draws, q)) for q in (alpha, 1.0 - alpha))
    if not (math.isfinite(low) and math.isfinite(high)):  # pragma: no cover - guarded by the caller
        return Interval(None, "the resampled values are not finite")
    return Interval((low, high))


def rater_means(
    scores: Mapping[str, Mapping[CellKey, int]], *, conditions: Sequence[str], dimensions: Sequence[str],
    questions: Sequence[str],
) -> dict[str, dict[str, dict[str, Fraction | None]]]:
    """rater → dimension → condition → the rater's mean score over the round's questions (exact;
    ``None`` where the rater scored none). Shows at a glance whose scale runs high or low."""
    wanted = set(questions)
    out: dict[str, dict[str, dict[str, Fraction | None]]] = {}
    for rater, cells in scores.items():
        sums: dict[tuple[str, str], list[int]] = {}
        for key, value in cells.items():
            if key.question in wanted:
                sums.setdefault((key.dimension, key.condition), []).append(value)
        out[rater] = {
            d: {c: (Fraction(sum(v), len(v)) if (v := sums.get((d, c))) else None) for c in conditions}
            for d in dimensions
        }
    return out
