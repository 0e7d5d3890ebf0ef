"""aoven_git.uncertainty and the report's "uncertainty" entry (docs/statistics.md, "Uncertainty a PI
reads first"): descriptive bootstrap intervals over questions, and each rater's means.

The intervals are checked against an independent computation: ``scipy.stats.bootstrap`` on the
raw per-question aggregates with ``paired=True``, not vectorised, same seed and resamples.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from aoven_git.analysis import analyse
from aoven_git.model import CellKey
from aoven_git.plan import load_plan
from aoven_git.uncertainty import question_intervals, rater_means
from tests.test_analysis import COMPLETE, DEFAULT_PLAN, QS, sheet, truth


def _scipy(a: list[Fraction], b: list[Fraction], statistic, seed: int, n: int) -> tuple[float, float]:
    res = stats.bootstrap((np.array([float(x) for x in a]), np.array([float(x) for x in b])), statistic,
                          paired=True, vectorized=False, n_resamples=n, method="percentile",
                          rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


@pytest.mark.parametrize("seed", range(5))
def test_intervals_equal_scipy_paired_bootstrap(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 30)
    a = [Fraction(rng.randint(1, 24)) for _ in range(n)]
    b = [Fraction(rng.randint(0, 24), rng.choice([1, 2, 3])) for _ in range(n)]
    got = question_intervals(a, b, n_resamples=300, seed=seed)
    assert got["mean_A"].bounds == pytest.approx(_scipy(a, b, lambda x, y: np.mean(x), seed, 300), abs=1e-9)
    assert got["mean_B"].bounds == pytest.approx(_scipy(a, b, lambda x, y: np.mean(y), seed, 300), abs=1e-9)
    improvement = _scipy(a, b, lambda x, y: (np.mean(x) - np.mean(y)) / np.mean(x), seed, 300)
    assert got["improvement"].bounds == pytest.approx(improvement, abs=1e-9)


def test_undefined_intervals_say_why() -> None:
    zero = question_intervals([Fraction(0), Fraction(2)], [Fraction(1), Fraction(1)], n_resamples=200, seed=1)
    assert zero["improvement"].bounds is None and "mean A is 0 in" in (zero["improvement"].reason or "")
    assert zero["mean_A"].bounds is not None
    off = question_intervals([Fraction(1)] * 3, [Fraction(0)] * 3, n_resamples=0, seed=1)
    assert off["mean_A"].bounds is None and "--bootstrap 0" in (off["mean_A"].reason or "")
    single = question_intervals([Fraction(1)], [Fraction(0)], n_resamples=100, seed=1)
    assert single["improvement"].bounds is None and "single question" in (single["improvement"].reason or "")
    with pytest.raises(ValueError, match="one aggregate per question"):
        question_intervals([Fraction(1)], [], n_resamples=10, seed=1)


def test_rater_means_are_exact_and_ignore_other_questions() -> None:
    scores = {"r1": {CellKey("Q1", "A", "D1"): 1, CellKey("Q2", "A", "D1"): 2, CellKey("Q9", "A", "D1"): 3,
                     CellKey("Q1", "B", "D1"): 0},
              "r2": {}}
    means = rater_means(scores, conditions=["A", "B"], dimensions=["D1", "D2"], questions=["Q1", "Q2"])
    assert means["r1"]["D1"] == {"A": Fraction(3, 2), "B": Fraction(0)}
    assert means["r1"]["D2"] == {"A": None, "B": None}
    assert means["r2"]["D1"] == {"A": None, "B": None}


def test_report_carries_intervals_and_rater_means_and_withholds_them_while_not_ready() -> None:
    plan = load_plan(DEFAULT_PLAN)
    rng = random.Random(3)
    ub = {"cto": {k: min(3, v + rng.choice((0, 0, 1))) for k, v in truth().items()}, "logician": truth()}
    sheets = [sheet(r, "unblinded", s) for r, s in ub.items()]
    sheets += [sheet(r, "blinded", truth(conds=("B",))) for r in ub]
    doc = analyse(plan, sheets=sheets, seals=COMPLETE, bootstrap=400).as_dict()
    json.dumps(doc, allow_nan=False)
    u = doc["uncertainty"]
    assert u["descriptive"] is True and u["withheld"] is None and u["over"] == "questions"
    questions = doc["questions"]
    a = [Fraction(q["aggregate_A_exact"]) for q in questions]
    b = [Fraction(q["aggregate_B_exact"]) for q in questions]
    want = question_intervals(a, b, n_resamples=400, seed=doc["kappa_settings"]["seed"])
    assert u["intervals"]["improvement"]["interval"] == list(want["improvement"].bounds)
    lo, hi = u["intervals"]["improvement"]["interval"]
    assert lo <= doc["improvement"] <= hi
    cto = [ub["cto"][CellKey(q, "A", "D3")] for q in QS]
    assert Fraction(u["rater_means_exact"]["cto"]["D3"]["A"]) == Fraction(sum(cto), len(cto))
    pending = analyse(plan, sheets=sheets[:1] + sheets[2:], seals=COMPLETE, bootstrap=0).as_dict()
    assert pending["verdict"] == "NOT-READY"
    assert pending["uncertainty"]["intervals"] is None and pending["uncertainty"]["rater_means"] is None
    assert pending["uncertainty"]["withheld"]
