"""Agreement on a labelled (nominal) scale with replicates (docs/statistics.md, "Labels and
replicates"): unweighted κ and nominal α whatever `rules.kappa.weights` says, each (question,
condition, replicate) one item. Oracles: scikit-learn's cohen_kappa_score (weights=None) and the
``krippendorff`` package (level_of_measurement="nominal"), on the same label positions."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from aoven_git.analysis import analyse
from aoven_git.model import CellKey, Plan
from tests.design_studies import PROBE_PLAN, PROBES, probes, sheets
from tests.report_documents import check_report

THREE = PROBE_PLAN.replace("labels: [PASS, FAIL]", "labels: [PASS, PARTIAL, FAIL]")
ITEMS = [CellKey(q, c, "V", r) for q in PROBES for c in ("CTRL", "TRT") for r in (1, 2, 3)]


def two_raters(seed: int) -> tuple[dict[CellKey, int], dict[CellKey, int]]:
    """Ann labels every response at random; Bob agrees on about 70 % of them."""
    rng = random.Random(seed)
    ann = {k: rng.randrange(3) for k in ITEMS}
    bob = {k: v if rng.random() < 0.7 else rng.randrange(3) for k, v in ann.items()}
    return ann, bob


def report(plan: Plan, ann: dict[CellKey, int], bob: dict[CellKey, int]) -> dict[str, Any]:
    doc = analyse(plan, sheets=sheets(plan, {"ann": ann, "bob": bob}), bootstrap=0).as_dict()
    check_report(doc)
    return doc


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kappa_on_labels_is_unweighted_and_alpha_nominal_over_every_replicate(seed: int) -> None:
    plan = probes(THREE)
    assert plan.rules.kappa.weights == "quadratic"  # the plan asks for weights; labels get none
    ann, bob = two_raters(seed)
    doc = report(plan, ann, bob)
    entry = doc["kappa"]["labels"]["V"]
    a, b = [ann[k] for k in ITEMS], [bob[k] for k in ITEMS]
    assert entry["n"] == 36 == len(ITEMS)  # 6 probes × 2 conditions × 3 replicates
    assert entry["value"] == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2], weights=None), abs=1e-12)
    weighted = cohen_kappa_score(a, b, labels=[0, 1, 2], weights="quadratic")
    assert entry["value"] != pytest.approx(weighted, abs=1e-6)
    nominal = krippendorff.alpha(reliability_data=np.array([a, b], dtype=float),
                                 level_of_measurement="nominal", value_domain=[0, 1, 2])
    ordinal = krippendorff.alpha(reliability_data=np.array([a, b], dtype=float),
                                 level_of_measurement="ordinal", value_domain=[0, 1, 2])
    assert entry["alpha"] == pytest.approx(nominal, abs=1e-12)
    assert entry["alpha"] != pytest.approx(ordinal, abs=1e-6)
    agree = sum(x == y for x, y in zip(a, b, strict=True))
    assert entry["coefficients"]["percent_agreement"]["value_exact"] == str(Fraction(agree, 36))
    assert entry["coefficients"]["gwet"]["name"] == "AC1"
    assert doc["kappa_settings"]["weights"] == "none"


def test_a_labelled_report_has_no_means_and_no_improvement() -> None:
    plan = probes()
    ann = {k: 0 for k in ITEMS}
    doc = report(plan, ann, dict(ann))
    assert doc["means"] == {} and doc["means_exact"] == {}
    assert doc["improvement"] is None
    assert doc["rules"] == []
    assert doc["kappa"]["labels"]["V"]["value"] is None  # every label PASS: κ undefined …
    assert "reason" in doc["kappa"]["labels"]["V"] and doc["kappa"]["labels"]["V"]["reason"]
    assert doc["kappa"]["labels"]["V"]["coefficients"]["percent_agreement"]["value_exact"] == "1"


def test_replicates_are_separate_items_not_averaged_before_agreement() -> None:
    # Ann and Bob disagree only on replicate 2 of every response: 24 of 36 items agree.
    plan = probes(THREE)
    ann = {k: 0 for k in ITEMS}
    bob = {k: (1 if k.replicate == 2 else 0) for k in ITEMS}
    entry = report(plan, ann, bob)["kappa"]["labels"]["V"]
    assert entry["n"] == 36
    assert entry["coefficients"]["percent_agreement"]["value_exact"] == "2/3"
