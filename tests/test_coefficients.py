"""aoven_git.coefficients against published worked examples and an independent implementation.

Published: the R package irrCAC's documented outputs (Gwet 2014, Handbook of Inter-Rater
Reliability, 4th ed.; the README of github.com/kgwet/irrCAC) for the two-rater table
``cont3x3abstractors`` and the four-rater data with missing ratings ``cac.raw4raters`` (Handbook
p. 120), to the printed precision. Independent: the formulas written out again here as explicit
loops over subjects, categories and weights, in the shape of irrCAC's R source (agree.coeff2.r,
agree.coeff3.raw.r) — no numpy, no shared helper — compared to 1e-9 on random data with ties,
constant raters, missing cells, 2–20 raters and nominal labels.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from aoven_git.agreement import krippendorff_alpha, weighted_kappa
from aoven_git.coefficients import (
    PARADOX_AGREEMENT,
    all_coefficients,
    kappa_paradox,
    pairwise,
    several_raters,
    two_raters,
)

ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
NA = None
RAW4RATERS = [
    [1, 1, NA, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [NA, 5, 5, 5], [NA, NA, 1, 1], [NA, NA, 3, NA],
]


def _from_table(table: list[list[int]]) -> tuple[list[int], list[int]]:
    a: list[int] = []
    b: list[int] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return a, b


def _ratings(rows: list[list[object]]) -> dict[str, dict[int, object]]:
    raters = len(rows[0])
    return {f"r{j + 1}": {i: row[j] for i, row in enumerate(rows) if row[j] is not None}
            for j in range(raters)}


# --------------------------------------------------------------------------- published examples


def test_two_raters_reproduce_irrcac_cont3x3abstractors() -> None:
    """irrCAC README: pa2.table 0.89 (se 0.03128898, (0.828,0.952)); gwet.ac1.table 0.8493305
    (0.04321747, (0.764,0.935)); bp2.table 0.835 (0.04693346, (0.742,0.928))."""
    a, b = _from_table(ABSTRACTORS)
    c = two_raters(a, b, categories=[0, 1, 2], weights="none")
    assert c.gwet_name == "AC1"
    for est, value, se, ci in (
        (c.percent_agreement, 0.89, 0.03128898, (0.828, 0.952)),
        (c.gwet, 0.8493305, 0.04321747, (0.764, 0.935)),
        (c.brennan_prediger, 0.835, 0.04693346, (0.742, 0.928)),
    ):
        assert est.value == pytest.approx(value, abs=5e-8)
        assert est.se == pytest.approx(se, abs=5e-9)
        assert est.ci is not None
        assert (round(est.ci[0], 3), round(est.ci[1], 3)) == ci
    assert c.percent_agreement.exact == Fraction(89, 100)
    assert c.brennan_prediger.exact == Fraction(167, 200)


def test_existing_kappa_reproduces_irrcac_and_sklearn_on_cont3x3abstractors() -> None:
    """Where the coefficients overlap with κ: kappa2.table prints 0.7964094; scikit-learn agrees."""
    a, b = _from_table(ABSTRACTORS)
    kappa = weighted_kappa(a, b, categories=[0, 1, 2], weights="none")
    assert kappa.value == pytest.approx(0.7964094, abs=5e-8)
    assert kappa.value == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2]), abs=1e-12)


def test_several_raters_reproduce_irrcac_cac_raw4raters() -> None:
    """irrCAC README (Gwet 2014, p. 120): pa.coeff.raw 0.8181818 (se 0.12561, (0.542,1));
    gwet.ac1.raw 0.77544 (pe 0.1903212, se 0.14295, (0.461,1)); bp.coeff.raw 0.77273 (pe 0.2,
    se 0.14472, (0.454,1))."""
    c = several_raters(_ratings(RAW4RATERS), categories=[1, 2, 3, 4, 5], weights="none")
    assert (c.raters, c.n, c.pairable) == (4, 12, 11)
    assert c.chance_gwet is not None and float(c.chance_gwet) == pytest.approx(0.1903212, abs=5e-8)
    for est, value, places, se, ci in (
        (c.percent_agreement, 0.8181818, 7, 0.12561, (0.542, 1.0)),
        (c.gwet, 0.77544, 5, 0.14295, (0.461, 1.0)),
        (c.brennan_prediger, 0.77273, 5, 0.14472, (0.454, 1.0)),
    ):
        assert est.value is not None and est.se is not None and est.ci is not None
        assert round(est.value, places) == value
        assert round(est.se, 5) == se
        assert (round(est.ci[0], 3), round(est.ci[1], 3)) == ci
    assert c.percent_agreement.exact == Fraction(9, 11)


def test_existing_alpha_reproduces_irrcac_and_krippendorff_on_cac_raw4raters() -> None:
    """krippen.alpha.raw prints 0.74342 (unweighted = nominal); the krippendorff package agrees."""
    ratings = _ratings(RAW4RATERS)
    alpha = krippendorff_alpha(ratings, categories=[1, 2, 3, 4, 5], level="nominal")
    assert alpha.value is not None and round(alpha.value, 5) == 0.74342
    data = np.array([[np.nan if v is None else v for v in row] for row in RAW4RATERS], dtype=float).T
    assert alpha.value == pytest.approx(krippendorff.alpha(data, level_of_measurement="nominal"), abs=1e-12)


# --------------------------------------------------------------------------- independent loops


def _loop_weights(labels: list[object], weights: str) -> list[list[float]]:
    """irrCAC's identity/linear/quadratic weights, written on category positions 1..q."""
    q = len(labels)
    out = [[0.0] * q for _ in range(q)]
    for k in range(q):
        for m in range(q):
            if weights == "none":
                out[k][m] = 1.0 if k == m else 0.0
            elif weights == "linear":
                out[k][m] = 1.0 - abs(k - m) / (q - 1)
            else:
                out[k][m] = 1.0 - (k - m) ** 2 / (q - 1) ** 2
    return out


def _tq(df: int) -> float:
    return float(stats.t.ppf(0.975, df))


def _loop_raw(rows: list[list[object]], labels: list[object], weights: str) -> dict[str, tuple[float, float]]:
    """gwet.ac1.raw, bp.coeff.raw and pa.coeff.raw of irrCAC, as loops: value and se."""
    q = len(labels)
    w = _loop_weights(labels, weights)
    rows = [row for row in rows if any(v is not None for v in row)]
    n = len(rows)
    agree = [[sum(1 for v in row if v == labels[k]) for k in range(q)] for row in rows]
    r = [sum(a) for a in agree]
    n2 = sum(1 for x in r if x >= 2)
    sum_q = []
    for i in range(n):
        total = 0.0
        for k in range(q):
            star = sum(w[k][m] * agree[i][m] for m in range(q))
            total += agree[i][k] * (star - 1)
        sum_q.append(total)
    pa_i = [sum_q[i] / (r[i] * (r[i] - 1)) if r[i] >= 2 else 0.0 for i in range(n)]
    pa = sum(pa_i) / n2
    pi = [sum(agree[i][k] / r[i] for i in range(n)) / n for k in range(q)]
    tw = sum(sum(row) for row in w)
    pe_ac = tw * sum(p * (1 - p) for p in pi) / (q * (q - 1))
    pe_bp = tw / q**2
    ac = (pa - pe_ac) / (1 - pe_ac)
    bp = (pa - pe_bp) / (1 - pe_bp)
    var_pa = var_ac = var_bp = 0.0
    for i in range(n):
        two = 1.0 if r[i] >= 2 else 0.0
        var_pa += ((n / n2) * pa_i[i] - pa) ** 2
        pe_i = tw / (q * (q - 1)) * sum(agree[i][k] * (1 - pi[k]) for k in range(q)) / r[i]
        ac_i = (n / n2) * (pa_i[i] - pe_ac * two) / (1 - pe_ac) - 2 * (1 - ac) * (pe_i - pe_ac) / (1 - pe_ac)
        var_ac += (ac_i - ac) ** 2
        var_bp += ((n / n2) * (pa_i[i] - pe_bp * two) / (1 - pe_bp) - bp) ** 2
    scale = n * (n - 1)
    top = max(range(q), key=lambda k: (pi[k], -k))
    xs = [2 * agree[i][top] / r[i] - 1 for i in range(n)]
    prevalence = 2 * pi[top] - 1
    var_pi = sum((x - prevalence) ** 2 for x in xs) / scale
    return {"pa": (pa, math.sqrt(var_pa / scale)), "ac": (ac, math.sqrt(var_ac / scale)),
            "bp": (bp, math.sqrt(var_bp / scale)), "pi": (prevalence, math.sqrt(var_pi))}


def _loop_table(
    a: list[object], b: list[object], labels: list[object], weights: str
) -> dict[str, tuple[float, float]]:
    """pa2.table, gwet.ac1.table, bp2.table of irrCAC, as loops over the q×q table; and Byrt's
    indices generalised as documented (prevalence 2π_k − 1, bias mean rank difference/(q−1))."""
    q, n = len(labels), len(a)
    w = _loop_weights(labels, weights)
    p = [[0.0] * q for _ in range(q)]
    for x, y in zip(a, b, strict=True):
        p[labels.index(x)][labels.index(y)] += 1 / n
    pa = sum(w[k][m] * p[k][m] for k in range(q) for m in range(q))
    rows = [sum(p[k]) for k in range(q)]
    cols = [sum(p[m][k] for m in range(q)) for k in range(q)]
    pi = [(rows[k] + cols[k]) / 2 for k in range(q)]
    tw = sum(sum(row) for row in w)
    pe = tw * sum(x * (1 - x) for x in pi) / (q * (q - 1))
    ac = (pa - pe) / (1 - pe)
    s1 = s2 = 0.0
    for k in range(q):
        for m in range(q):
            s1 += p[k][m] * (w[k][m] - 2 * (1 - ac) * tw * (1 - (pi[k] + pi[m]) / 2) / (q * (q - 1))) ** 2
            s2 += p[k][m] * w[k][m] ** 2
    var_ac = (s1 - (pa - 2 * (1 - ac) * pe) ** 2) / (n * (1 - pe) ** 2)
    pe_bp = tw / q**2
    bp = (pa - pe_bp) / (1 - pe_bp)
    top = max(range(q), key=lambda k: (pi[k], -k))
    xs = [(int(x == labels[top]) + int(y == labels[top])) - 1 for x, y in zip(a, b, strict=True)]
    prev = 2 * pi[top] - 1
    out = {"pa": (pa, math.sqrt(max(s2 - pa**2, 0) / n)), "ac": (ac, math.sqrt(max(var_ac, 0))),
           "bp": (bp, math.sqrt(max(s2 - pa**2, 0) / n) / (1 - pe_bp)),
           "pi": (prev, math.sqrt(max(sum(x * x for x in xs) / n - prev**2, 0) / n))}
    if all(isinstance(x, int) for x in labels):
        ds = [(labels.index(x) - labels.index(y)) / (q - 1) for x, y in zip(a, b, strict=True)]
        bias = sum(ds) / n
        out["bi"] = (bias, math.sqrt(max(sum(d * d for d in ds) / n - bias**2, 0) / n))
    return out


def _close(est: object, expected: tuple[float, float], n: int) -> None:
    value, se = expected
    assert est.value == pytest.approx(value, abs=1e-9)  # type: ignore[attr-defined]
    assert est.se == pytest.approx(se, abs=1e-9)  # type: ignore[attr-defined]
    half = _tq(n - 1) * se
    assert est.ci == pytest.approx((value - half, min(1.0, value + half)), abs=1e-9)  # type: ignore[attr-defined]


def _random_rows(rng: random.Random, labels: list[object]) -> list[list[object]]:
    raters, items = rng.randint(2, 20), rng.randint(2, 40)
    skew = rng.random()
    constant = {j: rng.choice(labels) for j in range(raters) if rng.random() < 0.15}
    rows = []
    for _ in range(items):
        truth = labels[0] if rng.random() < skew else rng.choice(labels)
        row: list[object] = []
        for j in range(raters):
            value = constant.get(j, truth if rng.random() < 0.6 else rng.choice(labels))
            row.append(None if rng.random() < 0.2 else value)
        rows.append(row)
    return rows


@pytest.mark.parametrize("seed", range(60))
def test_several_raters_equal_independent_loops(seed: int) -> None:
    rng = random.Random(seed)
    nominal = seed % 4 == 3
    labels: list[object] = (["yes", "no", "maybe"] if nominal
                            else list(range(rng.choice([0, 1]), rng.randint(3, 6))))
    weights = "none" if nominal else ("none", "linear", "quadratic")[seed % 3]
    rows = _random_rows(rng, labels)
    got = several_raters(_ratings(rows), categories=labels, weights=weights)
    if got.pairable == 0 or got.n < 2:
        assert got.gwet.value is None or got.gwet.se is None
        return
    want = _loop_raw(rows, labels, weights)
    for key, est in (("pa", got.percent_agreement), ("ac", got.gwet), ("bp", got.brennan_prediger),
                     ("pi", got.prevalence_index)):
        _close(est, want[key], got.n)


@pytest.mark.parametrize("seed", range(60))
def test_two_raters_equal_independent_loops(seed: int) -> None:
    rng = random.Random(1000 + seed)
    nominal = seed % 5 == 4
    labels: list[object] = ["a", "b", "c", "d"] if nominal else list(range(0, rng.randint(2, 5)))
    weights = "none" if nominal else ("none", "linear", "quadratic")[seed % 3]
    n = rng.randint(2, 60)
    a = [labels[0] if rng.random() < 0.5 else rng.choice(labels) for _ in range(n)]
    b = [x if rng.random() < 0.7 else rng.choice(labels) for x in a]
    if seed % 7 == 0:
        b = [labels[-1]] * n  # a constant rater
    got = two_raters(a, b, categories=labels, weights=weights)
    want = _loop_table(a, b, labels, weights)
    for key, est in (("pa", got.percent_agreement), ("ac", got.gwet), ("bp", got.brennan_prediger),
                     ("pi", got.prevalence_index)):
        _close(est, want[key], n)
    if nominal:
        assert got.bias_index.value is None and got.bias_index.reason
    else:
        _close(got.bias_index, want["bi"], n)


def test_two_rater_and_several_rater_forms_agree_on_complete_pairs() -> None:
    """The same two complete raters: equal values; the multi-rater variance divides by n(n−1)
    where the table's divides by n², so se² differ by exactly n/(n−1) (Gwet 2014, ch. 5)."""
    rng = random.Random(7)
    a = [rng.randint(0, 3) for _ in range(30)]
    b = [x if rng.random() < 0.7 else rng.randint(0, 3) for x in a]
    pair = two_raters(a, b, categories=[0, 1, 2, 3], weights="quadratic")
    many = several_raters({"a": dict(enumerate(a)), "b": dict(enumerate(b))}, categories=[0, 1, 2, 3],
                          weights="quadratic")
    for x, y in ((pair.gwet, many.gwet), (pair.brennan_prediger, many.brennan_prediger),
                 (pair.percent_agreement, many.percent_agreement)):
        assert x.exact == y.exact
        assert y.se**2 == pytest.approx(x.se**2 * 30 / 29, rel=1e-12)  # type: ignore[operator]


@pytest.mark.parametrize("seed", range(6))
def test_pairwise_and_all_coefficients_equal_one_call_per_pair(seed: int) -> None:
    """The vectorised pair tables (missing cells, a rater with no common item) give exactly what
    two_raters gives on each pair's common items, and all_coefficients what the two entry
    points give."""
    rng = random.Random(500 + seed)
    rows = _random_rows(rng, [0, 1, 2, 3])
    ratings = _ratings(rows)
    ratings["late"] = {10_000: 2}  # shares no item with anyone
    pairs = pairwise(ratings, categories=[0, 1, 2, 3], weights="quadratic")
    raters = list(ratings)
    assert list(pairs) == [(a, b) for i, a in enumerate(raters) for b in raters[i + 1:]]
    for (a, b), got in pairs.items():
        common = [i for i in ratings[a] if i in ratings[b]]
        want = two_raters([ratings[a][i] for i in common], [ratings[b][i] for i in common],
                          categories=[0, 1, 2, 3], weights="quadratic")
        assert got == want
    assert pairs[(raters[0], "late")].gwet.reason == "no items were scored by both raters"
    several, again = all_coefficients(ratings, categories=[0, 1, 2, 3], weights="quadratic")
    assert again == pairs
    assert several == several_raters(ratings, categories=[0, 1, 2, 3], weights="quadratic")


def test_pairs_sliced_for_memory_give_the_same_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    from aoven_git import coefficients

    rows = _random_rows(random.Random(99), [0, 1, 2, 3])
    ratings = _ratings(rows)
    whole = pairwise(ratings, categories=[0, 1, 2, 3], weights="linear")
    assert len(whole) == 14 * 13 // 2
    monkeypatch.setattr(coefficients, "_BUDGET", 1)  # one pair per slice
    assert pairwise(ratings, categories=[0, 1, 2, 3], weights="linear") == whole


# --------------------------------------------------------------------------- degenerate data


def test_constant_raters_keep_ac_and_bp_defined_where_kappa_is_not() -> None:
    """Both raters give every item 0: κ is 0/0; AC2, BP and agreement are 1, with a zero se."""
    a = b = [0] * 12
    assert weighted_kappa(a, b, categories=[0, 1, 2, 3], weights="quadratic").value is None
    c = two_raters(a, b, categories=[0, 1, 2, 3], weights="quadratic")
    assert c.gwet.exact == 1 and c.brennan_prediger.exact == 1 and c.percent_agreement.exact == 1
    assert c.gwet.se == 0.0 and c.gwet.ci == (1.0, 1.0)
    assert c.prevalence_index.exact == 1 and c.prevalence_category == 0
    assert c.bias_index.exact == 0


def test_paradox_shape_ac2_high_kappa_negative() -> None:
    """The real team's D8 shape: 18 of 20 items scored 0 by both raters, the other two 0 vs 1 and
    1 vs 0 — 90 % raw agreement, κ = −1/19; AC1 stays high, the flag is raised and the
    prevalence index (0.9) says why."""
    a = [0] * 18 + [0, 1]
    b = [0] * 18 + [1, 0]
    kappa = weighted_kappa(a, b, categories=[0, 1, 2, 3], weights="none")
    c = two_raters(a, b, categories=[0, 1, 2, 3], weights="none")
    assert kappa.exact == Fraction(-1, 19)
    assert c.percent_agreement.exact == PARADOX_AGREEMENT
    flag = kappa_paradox(kappa.exact, c.percent_agreement.exact, threshold=Fraction(3, 5),
                         prevalence=c.prevalence_index.exact)
    assert flag.flagged and flag.reason is not None and "prevalence index 0.9)" in flag.reason
    assert c.prevalence_index.exact == Fraction(9, 10) and c.prevalence_category == 0
    assert c.bias_index.exact == 0
    assert c.gwet.value is not None and c.gwet.value > 0.85
    weighted = two_raters(a, b, categories=[0, 1, 2, 3], weights="quadratic")
    assert weighted.gwet.exact is not None and weighted.gwet.exact > Fraction(3, 5)


def test_paradox_flag_edges_are_exact() -> None:
    t = Fraction(3, 5)
    assert kappa_paradox(None, Fraction(9, 10), threshold=t).flagged
    assert not kappa_paradox(None, Fraction(9, 10) - Fraction(1, 10**12), threshold=t).flagged
    assert not kappa_paradox(t, Fraction(1), threshold=t).flagged
    assert kappa_paradox(t - Fraction(1, 10**12), Fraction(1), threshold=t).flagged
    assert not kappa_paradox(Fraction(0), None, threshold=t).flagged


def test_undefined_cases_give_reasons_not_nan() -> None:
    empty = two_raters([], [], categories=[0, 1], weights="none")
    assert empty.gwet.value is None and "no items" in (empty.gwet.reason or "")
    single = two_raters([0, 0], [0, 0], categories=[0], weights="none")
    assert single.gwet.value is None and "single category" in (single.gwet.reason or "")
    lonely = several_raters({"a": {1: 0}, "b": {2: 1}}, categories=[0, 1], weights="none")
    assert lonely.gwet.value is None and "two or more raters" in (lonely.gwet.reason or "")
    one_item = two_raters([1], [1], categories=[0, 1], weights="none")
    assert one_item.gwet.value == 1.0 and one_item.gwet.se is None and one_item.gwet.se_reason
    for c in (empty, single, lonely, one_item):
        for est in (c.percent_agreement, c.gwet, c.brennan_prediger, c.prevalence_index):
            d = est.as_dict()
            assert all(not (isinstance(v, float) and math.isnan(v)) for v in d.values())


def test_one_rater_or_none_has_no_pairs_and_no_agreement() -> None:
    for ratings in ({"solo": {1: 0, 2: 1}}, {}, {"a": {}, "b": {}}):
        several, pairs = all_coefficients(ratings, categories=[0, 1], weights="none")
        assert several.gwet.value is None and several.gwet.reason
        assert all(c.gwet.value is None for c in pairs.values())
    assert list(all_coefficients({"a": {}, "b": {}}, categories=[0, 1], weights="none")[1]) == [("a", "b")]


def test_bad_input_is_a_caller_bug() -> None:
    with pytest.raises(ValueError, match="outside the categories"):
        two_raters([0, 5], [0, 1], categories=[0, 1], weights="none")
    with pytest.raises(ValueError, match="same items"):
        two_raters([0], [0, 1], categories=[0, 1], weights="none")
    with pytest.raises(ValueError, match="weights"):
        two_raters([0], [0], categories=[0, 1], weights="cubic")
