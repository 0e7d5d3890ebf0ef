"""Agreement statistics against independent references (docs/statistics.md).

Every expected number here comes from outside this package: scikit-learn, the
``krippendorff`` package, scipy, or a value printed in a stored public source (cited next to
it). The study's predecessors published two wrong hand-computed κ; nothing in this file is
computed by hand or by the code under test.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import krippendorff
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from aoven_git.agreement import (
    Agreement,
    aggregate_kappa,
    disagreement,
    exact_kappa,
    kappa_ci,
    kappa_gate,
    krippendorff_alpha,
    pair_label,
    pairwise_kappa,
    pairwise_kappas,
    weighted_kappa,
)

SCALE = (0, 1, 2, 3)
WEIGHTS = ("none", "linear", "quadratic")
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def sk_kappa(a, b, weights, labels=SCALE):
    """scikit-learn's κ, or None where sklearn calls it undefined (nan)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(a, b, labels=list(labels), weights=None if weights == "none" else weights)
    return None if math.isnan(value) else float(value)


def assert_plain(ag: Agreement) -> None:
    """Outputs must be plain Python floats or None: JSON-safe, never NaN/inf/numpy."""
    assert type(ag.n) is int
    if ag.value is None:
        assert isinstance(ag.reason, str) and ag.reason
        assert ag.ci is None
    else:
        assert type(ag.value) is float and math.isfinite(ag.value)
        assert ag.reason is None
    if ag.ci is not None:
        assert all(type(x) is float and math.isfinite(x) for x in ag.ci)
        assert ag.ci_method in ("BCa", "percentile") and ag.ci_reason is None
    if ag.exact is not None:
        assert ag.value == float(ag.exact)


# --------------------------------------------------------------------------- κ vs sklearn

paired_scores = st.integers(min_value=0, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
    )
)


@st.composite
def degenerate_scores(draw):
    """Constant raters, raters confined to one or two scale points, near-constant lists."""
    n = draw(st.integers(1, 30))
    kind = draw(st.sampled_from(["same-constant", "two-constants", "subset", "one-off"]))
    if kind == "same-constant":
        v = draw(st.integers(0, 3))
        return [v] * n, [v] * n
    if kind == "two-constants":
        return [draw(st.integers(0, 3))] * n, [draw(st.integers(0, 3))] * n
    if kind == "subset":
        pts = draw(st.lists(st.integers(0, 3), min_size=1, max_size=2, unique=True))
        return (
            draw(st.lists(st.sampled_from(pts), min_size=n, max_size=n)),
            draw(st.lists(st.sampled_from(pts), min_size=n, max_size=n)),
        )
    v = draw(st.integers(0, 3))
    a, b = [v] * n, [v] * n
    b[draw(st.integers(0, n - 1))] = draw(st.integers(0, 3))
    return a, b


@pytest.mark.parametrize("weights", WEIGHTS)
@FUZZ
@given(data=st.one_of(paired_scores, degenerate_scores()))
def test_kappa_matches_sklearn_full_scale(weights, data):
    a, b = data
    ours = weighted_kappa(a, b, categories=SCALE, weights=weights)
    assert_plain(ours)
    assert ours.n == len(a)
    if not a:
        assert ours.value is None  # sklearn cannot even be asked about zero items
        return
    ref = sk_kappa(a, b, weights)
    if ref is None:
        assert ours.value is None
    else:
        assert ours.value is not None
        assert abs(ours.value - ref) <= 1e-9


def test_kappa_constant_raters_undefined_with_reason():
    ours = weighted_kappa([2] * 7, [2] * 7, categories=SCALE, weights="quadratic")
    assert ours.value is None
    assert ours.n == 7
    assert "same score" in ours.reason and "2" in ours.reason
    assert sk_kappa([2] * 7, [2] * 7, "quadratic") is None  # sklearn agrees it is undefined


def test_kappa_no_items_undefined():
    ours = weighted_kappa([], [], categories=SCALE, weights="linear")
    assert ours == Agreement(None, ours.reason, 0)
    assert "no items" in ours.reason


def test_kappa_different_constants_is_zero_like_sklearn():
    ours = weighted_kappa([1] * 5, [3] * 5, categories=SCALE, weights="quadratic")
    assert ours.value == pytest.approx(sk_kappa([1] * 5, [3] * 5, "quadratic"), abs=1e-12)


def test_kappa_accepts_numpy_input_and_returns_plain_float():
    a = np.array([0, 1, 2, 3, 3, 1])
    b = np.array([0, 2, 2, 3, 2, 1])
    ours = weighted_kappa(a, b, categories=SCALE, weights="quadratic")
    assert_plain(ours)
    assert ours.value == pytest.approx(sk_kappa(a, b, "quadratic"), abs=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "categories", "weights", "match"),
    [
        ([0, 4], [0, 1], SCALE, "none", "outside the categories"),
        ([0, 1], [0, 1, 2], SCALE, "none", "same items"),
        ([0, 1], [0, 1], SCALE, "cubic", "weights must be one of"),
        ([0.5, 1], [0, 1], SCALE, "none", "integer scores"),
        ([0, 1], [0, 1], (), "none", "at least one"),
        ([0, 1], [0, 1], (0, 1, 1), "none", "distinct"),
    ],
)
def test_kappa_rejects_malformed_input(a, b, categories, weights, match):
    with pytest.raises(ValueError, match=match):
        weighted_kappa(a, b, categories=categories, weights=weights)


# --------------------------------------------------------------------------- the pitfall


def test_unused_category_pitfall():
    """Weights come from the full 0..3 scale, not from the labels that occur.

    Raters who never use score 2 (they use 0, 1, 3): a scale built from the observed labels
    (sklearn labels=[0,1,3]) treats 1→3 as one step instead of two, and the linear and
    quadratic κ change. Ours must equal the full-scale value and differ from the other.
    """
    a = [0, 1, 3, 3, 1, 0, 3, 1, 1, 0, 3, 3]
    b = [0, 3, 3, 1, 1, 0, 3, 0, 1, 1, 3, 1]
    for weights in ("linear", "quadratic"):
        ours = weighted_kappa(a, b, categories=SCALE, weights=weights).value
        full = sk_kappa(a, b, weights, labels=[0, 1, 2, 3])
        observed_only = sk_kappa(a, b, weights, labels=[0, 1, 3])
        assert abs(ours - full) <= 1e-9
        assert abs(full - observed_only) > 0.01  # the data really do expose the pitfall
        assert abs(ours - observed_only) > 0.01
    # Unweighted κ does not depend on unused categories: a control on the test itself.
    assert weighted_kappa(a, b, categories=SCALE, weights="none").value == pytest.approx(
        sk_kappa(a, b, "none", labels=[0, 1, 3]), abs=1e-12
    )


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_unused_end_category_cannot_change_weighted_kappa(weights):
    # An unused category at the END of the scale (data in 0..2 of 0..3) only rescales every
    # disagreement weight by the same factor, which cancels in κ. The pitfall needs an
    # interior gap (above); this pins the invariance so nobody "fixes" it into a difference.
    a = [0, 1, 2, 2, 1, 0, 2, 1, 1, 0, 2, 2]
    b = [0, 2, 2, 1, 1, 0, 2, 0, 1, 1, 2, 1]
    ours = weighted_kappa(a, b, categories=SCALE, weights=weights).value
    assert abs(ours - sk_kappa(a, b, weights, labels=[0, 1, 2, 3])) <= 1e-9
    assert abs(ours - sk_kappa(a, b, weights, labels=[0, 1, 2])) <= 1e-9


# --------------------------------------------------------------------------- published κ

# R package irr, data(anxiety): 20 subjects, 3 raters, scores 1..6. Data as stored in the
# statsmodels test suite (statsmodels/stats/tests/test_inter_rater.py, `anxiety`), which
# matches the per-rater tables printed on https://rdrr.io/cran/irr/man/anxiety.html.
ANX1 = [3, 3, 3, 4, 5, 5, 2, 3, 5, 2, 2, 6, 1, 5, 2, 2, 1, 2, 4, 3]
ANX2 = [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4]
ANX3 = [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2]


def test_irr_anxiety_rater1_rater2_squared():
    # irr::kappa2(anxiety[,1:2], "squared") prints "Kappa = 0.297" (irr's own example;
    # output quoted in the stored pyirr test and source comments). Raters 1 and 2 together
    # use all of 1..6, so irr's factor levels are the full scale.
    ours = weighted_kappa(ANX1, ANX2, categories=range(1, 7), weights="quadratic")
    assert round(ours.value, 3) == 0.297


def test_irr_anxiety_rater2_rater3_observed_levels():
    # R output stored in statsmodels' test_inter_rater.py (test_cohens_kappa_irr):
    #   kappa2(anxiety[,2:3])             -> -0.006289308
    #   kappa2(anxiety[,2:3], "equal")    ->  0.1459075
    #   kappa2(anxiety[,2:3], "squared")  ->  0.2520325
    # Raters 2 and 3 never use score 5, and irr builds its scale from the observed levels
    # (1,2,3,4,6) — exactly the pitfall docs/statistics.md warns about. Given those levels as categories
    # we reproduce irr; given the full 1..6 scale the weighted values move.
    observed_levels = (1, 2, 3, 4, 6)
    published = {"none": -0.006289308, "linear": 0.1459075, "quadratic": 0.2520325}
    for weights, value in published.items():
        ours = weighted_kappa(ANX2, ANX3, categories=observed_levels, weights=weights)
        assert ours.value == pytest.approx(value, abs=5e-7)
    full = weighted_kappa(ANX2, ANX3, categories=range(1, 7), weights="quadratic").value
    assert abs(full - published["quadratic"]) > 0.01
    assert abs(full - sk_kappa(ANX2, ANX3, "quadratic", labels=range(1, 7))) <= 1e-9


def test_artstein_poesio_tables():
    # Artstein & Poesio (2008), "Inter-coder agreement for computational linguistics",
    # Table 1 (2 categories) and Table 4 (3 categories); κ as stored in scikit-learn's
    # sklearn/metrics/tests/test_classification.py (test_cohen_kappa): 0.348 and 0.8013.
    a1 = [0] * 40 + [1] * 60
    b1 = [0] * 20 + [1] * 20 + [0] * 10 + [1] * 50
    assert round(weighted_kappa(a1, b1, categories=(0, 1), weights="none").value, 3) == 0.348
    a4 = [0] * 46 + [1] * 44 + [2] * 10
    b4 = [0] * 52 + [1] * 32 + [2] * 16
    assert round(weighted_kappa(a4, b4, categories=(0, 1, 2), weights="none").value, 4) == 0.8013
    # Same file, weighting example: none 0.9315, linear 0.9412, quadratic 0.9541.
    bw = [0] * 50 + [1] * 40 + [2] * 10
    for weights, value in (("none", 0.9315), ("linear", 0.9412), ("quadratic", 0.9541)):
        ours = weighted_kappa(a4, bw, categories=(0, 1, 2), weights=weights).value
        assert round(ours, 4) == value


def test_quadratic_kappa_equals_moment_closed_form():
    # Independent identity: quadratic κ = 2·cov(a,b) / (var a + var b + (mean a - mean b)²)
    # with population moments (Cohen 1968 / Fleiss & Cohen 1973).
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 300)
    b = np.clip(a + rng.integers(-1, 2, 300), 0, 3)
    cov = np.mean((a - a.mean()) * (b - b.mean()))
    closed = 2 * cov / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    ours = weighted_kappa(a, b, categories=SCALE, weights="quadratic").value
    assert abs(ours - closed) <= 1e-12


# --------------------------------------------------------------------------- bootstrap


def _correlated(seed: int, n: int = 120):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = np.clip(a + rng.integers(-1, 2, n), 0, 3)
    return a.tolist(), b.tolist()


def _sk_statistic(weights):
    """sklearn's κ as a plain (non-vectorised) statistic of two score arrays.

    Rounded to 12 decimals: BCa's bias correction counts the resamples below and *at* κ̂, and
    sklearn's float arithmetic can put two resamples with the same κ (as a fraction) an ulp
    apart. Distinct κ of these sizes differ by far more than 1e-12, so nothing else changes.
    """

    def statistic(x, y):
        kappa = cohen_kappa_score(x, y, labels=list(SCALE), weights=None if weights == "none" else weights)
        return round(float(kappa), 12)

    return statistic


def scipy_sklearn_interval(a, b, weights, *, n_resamples, seed, method, confidence=0.95):
    """The independent computation: scipy.stats.bootstrap on the raw (a, b) pairs, paired, not
    vectorised, statistic = sklearn's cohen_kappa_score, numpy default_rng(seed)."""
    res = stats.bootstrap(
        (np.asarray(a), np.asarray(b)), _sk_statistic(weights), paired=True, vectorized=False,
        n_resamples=n_resamples, method=method, confidence_level=confidence,
        rng=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_ci_reproducible_and_seed_sensitive(weights):
    a, b = _correlated(1)
    first = kappa_ci(a, b, categories=SCALE, weights=weights)
    again = kappa_ci(a, b, categories=SCALE, weights=weights)
    other = kappa_ci(a, b, categories=SCALE, weights=weights, seed=1)
    assert first == again
    assert first != other
    assert all(type(x) is float for x in first)


@pytest.mark.parametrize("method", ["BCa", "percentile"])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weights", WEIGHTS)
def test_ci_contains_point_estimate(weights, seed, method):
    a, b = _correlated(seed, n=60 + 20 * seed)
    point = weighted_kappa(a, b, categories=SCALE, weights=weights).value
    lo, hi = kappa_ci(a, b, categories=SCALE, weights=weights, method=method)
    assert -1.0 <= lo < point < hi <= 1.0


@pytest.mark.parametrize(
    ("weights", "method"),
    [("quadratic", "BCa"), ("quadratic", "percentile"), ("linear", "BCa"), ("none", "percentile")],
)
def test_differential_intervals_equal_scipy_bootstrap_of_sklearn_kappa(weights, method):
    """The grouped, vectorised computation must equal the plain one pair by pair: same rng, same
    resample indices, same method, a different κ implementation (sklearn) — to 1e-9."""
    rng = np.random.default_rng(17)
    truth = rng.integers(0, 4, 45)
    ratings = {r: {f"Q{i}": int(v) for i, v in enumerate(np.clip(truth + rng.integers(-1, 2, 45), 0, 3))}
               for r in ("r1", "r2", "r3", "r4")}
    del ratings["r4"]["Q3"]  # r4's pairs run over 44 items: a second resampling group
    pairs = pairwise_kappa(ratings, categories=SCALE, weights=weights, bootstrap=300, seed=31,
                           method=method)
    for x, y in [("r1", "r2"), ("r2", "r3"), ("r3", "r4")]:
        common = [i for i in ratings[x] if i in ratings[y]]
        a, b = [ratings[x][i] for i in common], [ratings[y][i] for i in common]
        ref = scipy_sklearn_interval(a, b, weights, n_resamples=300, seed=31, method=method)
        ours = pairs[(x, y)]
        assert ours.ci_method == method
        assert ours.ci == pytest.approx(ref, abs=1e-9), (x, y)


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_differential_with_vectorised_closed_form_statistic(method):
    # Another independent statistic: quadratic κ = 2·cov / (var a + var b + (mean a − mean b)²),
    # vectorised numpy moments; scipy's own paired resampling, same rng.
    a, b = _correlated(3, n=200)

    def kappa_q(x, y, axis=-1):
        mx, my = x.mean(axis=axis, keepdims=True), y.mean(axis=axis, keepdims=True)
        cov = ((x - mx) * (y - my)).mean(axis=axis)
        vx, vy = x.var(axis=axis), y.var(axis=axis)
        return 2 * cov / (vx + vy + (mx - my).squeeze(axis) ** 2)

    ref = stats.bootstrap((np.array(a, float), np.array(b, float)), kappa_q, paired=True, vectorized=True,
                          n_resamples=2000, method=method, rng=np.random.default_rng(5)).confidence_interval
    lo, hi = kappa_ci(a, b, categories=SCALE, weights="quadratic", n_resamples=2000, seed=5, method=method)
    assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-9)


def test_ci_none_when_undefined():
    assert kappa_ci([1] * 9, [1] * 9, categories=SCALE, weights="quadratic") is None
    assert kappa_ci([], [], categories=SCALE, weights="none") is None


def test_undefined_resample_makes_the_interval_undefined_with_a_reason():
    # Two items, (0,0) and (1,1): a resample drawing one item twice has both raters constant,
    # κ undefined. The count in the reason is checked against numpy's own draws.
    for seed in range(5):
        draws = np.random.default_rng(seed).integers(0, 2, size=(7, 2))
        degenerate = int((draws[:, 0] == draws[:, 1]).sum())
        [ag] = pairwise_kappa({"a": {1: 0, 2: 1}, "b": {1: 0, 2: 1}}, categories=SCALE, weights="none",
                              bootstrap=7, seed=seed).values()
        assert ag.value == 1.0
        if degenerate:
            assert ag.ci is None and ag.ci_method is None
            assert f"undefined in {degenerate} of 7 bootstrap resamples" in ag.ci_reason
        else:
            assert ag.ci == (1.0, 1.0)


def test_bca_undefined_falls_back_to_percentile():
    # Perfect agreement over all four scores: every resample that is defined has κ = 1, so BCa's
    # bias correction and acceleration are 0/0; the percentile interval of the same resamples
    # is [1, 1]. (Five copies of each score: no resample of 20 items is constant.)
    scores = [0, 1, 2, 3] * 5
    [ag] = pairwise_kappa({"a": dict(enumerate(scores)), "b": dict(enumerate(scores))}, categories=SCALE,
                          weights="quadratic", bootstrap=200, method="BCa").values()
    assert ag.ci == (1.0, 1.0) and ag.ci_method == "percentile" and ag.ci_reason is None


def test_single_item_pair_has_a_reason_instead_of_an_interval():
    pairs = pairwise_kappa({"a": {1: 0}, "b": {1: 2}}, categories=SCALE, weights="linear", bootstrap=50)
    ag = pairs[("a", "b")]
    assert ag.value == 0.0 and ag.ci is None and "single item" in ag.ci_reason


def test_ci_confidence_narrows_interval():
    a, b = _correlated(4)
    lo95, hi95 = kappa_ci(a, b, categories=SCALE, weights="linear")
    lo80, hi80 = kappa_ci(a, b, categories=SCALE, weights="linear", confidence=0.8)
    assert lo95 < lo80 < hi80 < hi95


def test_ci_rejects_bad_parameters():
    a, b = _correlated(5)
    with pytest.raises(ValueError, match="n_resamples"):
        kappa_ci(a, b, categories=SCALE, weights="none", n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        kappa_ci(a, b, categories=SCALE, weights="none", confidence=1.5)
    with pytest.raises(ValueError, match="method"):
        kappa_ci(a, b, categories=SCALE, weights="none", method="basic")  # type: ignore[arg-type]


def test_one_bootstrap_for_many_groups_equals_one_per_group():
    # Every pass × dimension of a study is resampled in one call; each group's intervals must
    # be exactly those of the group alone.
    rng = np.random.default_rng(23)
    groups = {}
    for dim in ("D1", "D2", "D3"):
        truth = rng.integers(0, 4, 50)
        groups[dim] = {r: {i: int(v) for i, v in enumerate(np.clip(truth + rng.integers(-1, 2, 50), 0, 3))}
                       for r in ("x", "y", "z")}
    together = pairwise_kappas(groups, categories=SCALE, weights="quadratic", bootstrap=300, seed=4)
    for dim, ratings in groups.items():
        alone = pairwise_kappa(ratings, categories=SCALE, weights="quadratic", bootstrap=300, seed=4)
        assert together[dim] == alone


@st.composite
def sparse_ratings(draw):
    """2–4 raters over up to 12 items, each rating missing or on the scale (often nearly constant)."""
    raters = draw(st.integers(2, 4))
    items = draw(st.integers(0, 12))
    values = st.sampled_from(draw(st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True)))
    cell = st.one_of(st.none(), values)
    return {f"r{r}": {i: v for i in range(items) if (v := draw(cell)) is not None} for r in range(raters)}


@pytest.mark.parametrize("method", ["BCa", "percentile"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ratings=sparse_ratings(), weights=st.sampled_from(WEIGHTS))
def test_bootstrap_never_crashes_warns_or_leaks_nan(method, ratings, weights):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's degenerate-data and numpy's 0/0 warnings included
        pairs = pairwise_kappa(ratings, categories=SCALE, weights=weights, bootstrap=40, seed=3,
                               method=method)
    for ag in pairs.values():
        assert_plain(ag)
        if ag.ci is not None:
            assert -1.0 <= ag.ci[0] <= ag.ci[1] <= 1.0
        elif ag.value is not None:
            assert isinstance(ag.ci_reason, str) and ag.ci_reason


# --------------------------------------------------------------------------- exact κ and the gate


def test_float_and_exact_kappa_share_one_weight_definition():
    # The textbook form with agreement weights w = 1 − d/d_max on the full scale, in fractions:
    # κ = (p_o(w) − p_e(w)) / (1 − p_e(w)). Computed here from `disagreement` alone.
    a, b = _correlated(6, n=50)
    for weights in WEIGHTS:
        d_max = max(disagreement(i, j, weights) for i in range(4) for j in range(4))
        w = {(i, j): 1 - Fraction(disagreement(i, j, weights), d_max) for i in range(4) for j in range(4)}
        n = len(a)
        p_o = sum(w[(x, y)] for x, y in zip(a, b, strict=True)) / n
        p_e = sum(w[(i, j)] * Fraction(a.count(i) * b.count(j), n * n) for i in range(4) for j in range(4))
        textbook = (p_o - p_e) / (1 - p_e)
        ours = weighted_kappa(a, b, categories=SCALE, weights=weights)
        assert ours.exact == textbook
        assert ours.value == float(textbook)
        assert exact_kappa(list(zip(a, b, strict=True)), categories=SCALE, weights=weights) == textbook
    assert [disagreement(0, j, "quadratic") for j in range(4)] == [0, 1, 4, 9]
    with pytest.raises(ValueError, match="weights must be one of"):
        disagreement(0, 1, "cubic")


def sk(a, b, weights="quadratic"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights=None if weights == "none" else weights)


def test_kappa_exactly_at_threshold_counts():
    # Each score once per rater, every pair off by one: Σd·O = 4, Σd·r·c = Σ_ij (i-j)² = 40,
    # κ = 1 - 4·4/40 = 3/5. The float route would say 0.59999999999999997780 < 3/5.
    a, b = [0, 2, 3, 1], [1, 3, 2, 0]
    assert exact_kappa(
        list(zip(a, b, strict=True)), categories=[0, 1, 2, 3], weights="quadratic"
    ) == Fraction(3, 5)
    assert sk(a, b) == pytest.approx(0.6)
    assert Fraction(float(sk(a, b))) < Fraction(3, 5)
    gate = kappa_gate({("x", "y"): Fraction(3, 5)}, threshold=Fraction(3, 5))
    assert gate.counts and gate.value == Fraction(3, 5)
    below = kappa_gate({("x", "y"): Fraction(3, 5) - Fraction(1, 10**9)}, threshold=Fraction(3, 5))
    assert not below.counts and "below 0.6" in below.reason and "0.6 below" not in below.reason


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=30),
    st.sampled_from(["none", "linear", "quadratic"]),
)
def test_exact_kappa_matches_sklearn(pairs, weights):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ours = exact_kappa(pairs, categories=[0, 1, 2, 3], weights=weights)
    ref = sk(a, b, weights)
    if math.isnan(ref):
        assert ours is None
    else:
        assert ours is not None and float(ours) == pytest.approx(ref, abs=1e-12)


def test_kappa_gate_aggregates_and_undefined_rules():
    pairs = {("a", "b"): Fraction(4, 5), ("a", "c"): Fraction(1, 2), ("b", "c"): Fraction(9, 10)}
    assert kappa_gate(pairs, threshold=Fraction(3, 5), aggregate="min").counts is False
    mean = kappa_gate(pairs, threshold=Fraction(3, 5), aggregate="mean")
    assert mean.value == Fraction(11, 15) and mean.counts  # (4/5 + 1/2 + 9/10) / 3
    undef = {("a", "b"): None, ("a", "c"): Fraction(9, 10)}
    assert not kappa_gate(undef, threshold=Fraction(3, 5)).counts  # exclude: below threshold
    inc = kappa_gate(undef, threshold=Fraction(3, 5), undefined="include")
    assert inc.counts and inc.value == Fraction(9, 10)
    assert kappa_gate({("a", "b"): None}, threshold=Fraction(3, 5), undefined="include").counts
    assert not kappa_gate({}, threshold=Fraction(3, 5), undefined="include").counts
    constant = pairwise_kappa({"a": {1: 2, 2: 2}, "b": {1: 2, 2: 2}}, categories=SCALE, weights="quadratic")
    assert constant[("a", "b")].exact is None and constant[("a", "b")].value is None


# --------------------------------------------------------------------------- pairwise


def test_pairwise_uses_items_both_scored_in_rater_order():
    ratings = {
        "r2": {"q1": 0, "q2": 1, "q3": 2, "q4": 3, "q5": 3},
        "r1": {"q2": 1, "q3": 3, "q4": 3, "q5": 2, "q6": 0},
        "r3": {"q5": 3, "q1": 1, "q3": 2, "q2": 0},
    }
    pairs = pairwise_kappa(ratings, categories=SCALE, weights="quadratic")
    assert list(pairs) == [("r2", "r1"), ("r2", "r3"), ("r1", "r3")]
    for (x, y), ag in pairs.items():
        common = [item for item in ratings[x] if item in ratings[y]]
        a = [ratings[x][i] for i in common]
        b = [ratings[y][i] for i in common]
        assert ag.n == len(common)
        ref = sk_kappa(a, b, "quadratic")
        assert (ag.value is None) if ref is None else abs(ag.value - ref) <= 1e-9
        assert_plain(ag)


def test_pairwise_bootstrap_matches_kappa_ci_per_pair():
    rng = np.random.default_rng(11)
    truth = rng.integers(0, 4, 80)
    ratings = {
        r: {f"Q{i}": int(np.clip(t + rng.integers(-1, 2), 0, 3)) for i, t in enumerate(truth)}
        for r in ("a", "b", "c")
    }
    pairs = pairwise_kappa(ratings, categories=SCALE, weights="linear", bootstrap=500, seed=9)
    for (x, y), ag in pairs.items():
        items = list(ratings[x])
        a = [ratings[x][i] for i in items]
        b = [ratings[y][i] for i in items]
        assert ag.ci == kappa_ci(a, b, categories=SCALE, weights="linear", n_resamples=500, seed=9)
        assert ag.ci is not None and ag.ci[0] < ag.value < ag.ci[1]
    # a pair's interval does not depend on which other raters are in the study
    alone = pairwise_kappa(
        {"a": ratings["a"], "c": ratings["c"]},
        categories=SCALE,
        weights="linear",
        bootstrap=500,
        seed=9,
    )
    assert alone[("a", "c")] == pairs[("a", "c")]


def test_pairwise_bootstrap_with_missing_items():
    # r1 lacks Q1, r2 lacks Q2: pairs over different item subsets, some of equal size,
    # one pair (r1, r2) over exactly the items every rater scored. Each interval must equal
    # kappa_ci over that pair's common items, in the order items first appear.
    rng = np.random.default_rng(21)
    truth = rng.integers(0, 4, 60)
    ratings = {}
    for r in ("r1", "r2", "r3", "r4"):
        noisy = np.clip(truth + rng.integers(-1, 2, 60), 0, 3)
        ratings[r] = {f"Q{i}": int(v) for i, v in enumerate(noisy)}
    del ratings["r1"]["Q1"], ratings["r2"]["Q2"]
    order: list[str] = []
    for scores in ratings.values():
        order += [item for item in scores if item not in order]
    pairs = pairwise_kappa(ratings, categories=SCALE, weights="quadratic", bootstrap=400, seed=5)
    assert {ag.n for ag in pairs.values()} == {58, 59, 60}
    for (x, y), ag in pairs.items():
        common = [i for i in order if i in ratings[x] and i in ratings[y]]
        a = [ratings[x][i] for i in common]
        b = [ratings[y][i] for i in common]
        assert ag.n == len(common)
        assert ag.ci == kappa_ci(a, b, categories=SCALE, weights="quadratic", n_resamples=400, seed=5)
        assert ag.ci[0] < ag.value < ag.ci[1]


def test_pairwise_undefined_pairs_and_disjoint_raters():
    ratings = {
        "r1": {"x": 0, "y": 0, "z": 0},
        "r2": {"x": 0, "y": 0, "z": 0},
        "r3": {"w": 1},
    }
    pairs = pairwise_kappa(ratings, categories=SCALE, weights="quadratic", bootstrap=100)
    assert pairs[("r1", "r2")].value is None and pairs[("r1", "r2")].n == 3
    assert "same score" in pairs[("r1", "r2")].reason
    assert pairs[("r1", "r3")] == Agreement(None, pairs[("r1", "r3")].reason, 0)
    assert "no items" in pairs[("r1", "r3")].reason
    for ag in pairs.values():
        assert_plain(ag)


def test_pairwise_rejects_off_scale_score():
    with pytest.raises(ValueError, match=r"rater 'r2'.*outside"):
        pairwise_kappa({"r1": {"q": 1}, "r2": {"q": 7}}, categories=SCALE, weights="none")


def test_pair_label():
    assert pair_label("r1", "r2") == "r1~r2"


# --------------------------------------------------------------------------- aggregate


def _ag(v, n=10):
    return Agreement(v, None, n) if v is not None else Agreement(None, "both constant", n)


def test_aggregate_min_and_light_mean():
    pairs = {("a", "b"): _ag(0.8, 10), ("a", "c"): _ag(0.5, 12), ("b", "c"): _ag(0.65, 9)}
    low = aggregate_kappa(pairs, "min")
    mean = aggregate_kappa(pairs, "mean")
    assert low == Agreement(0.5, None, 9)
    assert mean.value == pytest.approx((0.8 + 0.5 + 0.65) / 3, abs=1e-15)
    assert_plain(low)
    assert_plain(mean)


@pytest.mark.parametrize("how", ["min", "mean"])
def test_aggregate_exclude_makes_any_undefined_pair_fatal(how):
    pairs = {("a", "b"): _ag(0.9), ("a", "c"): _ag(None, 7), ("b", "c"): _ag(0.7)}
    result = aggregate_kappa(pairs, how)  # undefined="exclude" is the default
    assert result.value is None
    assert "a~c" in result.reason and "both constant" in result.reason
    assert "a~b" not in result.reason


def test_aggregate_include_uses_defined_pairs_only():
    pairs = {("a", "b"): _ag(0.9, 20), ("a", "c"): _ag(None, 7), ("b", "c"): _ag(0.7, 15)}
    assert aggregate_kappa(pairs, "min", undefined="include") == Agreement(0.7, None, 15)
    mean = aggregate_kappa(pairs, "mean", undefined="include")
    assert mean.value == pytest.approx(0.8, abs=1e-15)
    assert mean.n == 15


def test_aggregate_all_undefined_or_empty():
    pairs = {("a", "b"): _ag(None), ("a", "c"): _ag(None)}
    assert aggregate_kappa(pairs, "mean", undefined="include").value is None
    empty = aggregate_kappa({}, "min")
    assert empty.value is None and "fewer than two raters" in empty.reason


def test_aggregate_rejects_unknown_modes():
    with pytest.raises(ValueError):
        aggregate_kappa({("a", "b"): _ag(0.5)}, "max")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        aggregate_kappa({("a", "b"): _ag(0.5)}, "min", undefined="skip")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Krippendorff


def _as_ratings(rows):
    """Coder rows with None for missing → rater -> unit -> score."""
    return {f"c{i}": {u: v for u, v in enumerate(row) if v is not None} for i, row in enumerate(rows)}


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers
# x 12 units with missing values (also R irr's kripp.alpha example "C" data, `nmm`).
# Published alphas: nominal 0.743, ordinal 0.815, interval 0.849 — as quoted in stored
# public test suites, e.g. pln-fing-udelar/fast-krippendorff tests/test_krippendorff.py
# (ordinal 0.815 on this matrix) and several agreement libraries citing the paper.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, None],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize(
    ("level", "published"),
    [
        ("nominal", 0.743),
        ("ordinal", 0.815),
        ("interval", 0.849),
    ],
)
def test_krippendorff_2011_published_example(level, published):
    ours = krippendorff_alpha(_as_ratings(K2011), categories=range(1, 6), level=level)
    assert round(ours.value, 3) == published
    assert ours.n == 11  # unit 12 has a single rating and is not pairable
    assert_plain(ours)


def test_krippendorff_wikipedia_example():
    # Wikipedia "Krippendorff's alpha", computational example (3 coders x 15 units): nominal
    # alpha 0.691 — stated in the stored dallascard/krippendorff_alpha README; interval
    # 0.811 (0.810845 in pln-fing-udelar/fast-krippendorff tests/test_krippendorff.py).
    rows = [
        [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
        [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
        [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
    ]
    ratings = _as_ratings(rows)
    assert round(krippendorff_alpha(ratings, categories=range(1, 5), level="nominal").value, 3) == 0.691
    assert round(krippendorff_alpha(ratings, categories=range(1, 5), level="interval").value, 3) == 0.811


def _kpkg(rows, level):
    data = np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = krippendorff.alpha(
                reliability_data=data, level_of_measurement=level, value_domain=list(SCALE)
            )
        except ValueError:  # "at least one unit with values assigned by at least two coders"
            return None
    return None if math.isnan(value) else float(value)


@st.composite
def reliability_rows(draw):
    coders = draw(st.integers(2, 5))
    units = draw(st.integers(1, 15))
    cell = st.one_of(st.none(), st.integers(0, 3))
    if draw(st.booleans()):  # degenerate: few distinct values
        vals = draw(st.lists(st.integers(0, 3), min_size=1, max_size=2, unique=True))
        cell = st.one_of(st.none(), st.sampled_from(vals))
    return [draw(st.lists(cell, min_size=units, max_size=units)) for _ in range(coders)]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@FUZZ
@given(rows=reliability_rows())
def test_alpha_matches_krippendorff_package(level, rows):
    ours = krippendorff_alpha(_as_ratings(rows), categories=SCALE, level=level)
    assert_plain(ours)
    ref = _kpkg(rows, level)
    if ref is None:
        assert ours.value is None
    else:
        assert ours.value is not None
        assert abs(ours.value - ref) <= 1e-9
    pairable = sum(1 for u in range(len(rows[0])) if sum(r[u] is not None for r in rows) >= 2)
    assert ours.n == pairable


def test_alpha_undefined_cases():
    same = krippendorff_alpha({"a": {1: 2, 2: 2}, "b": {1: 2, 2: 2}}, categories=SCALE)
    assert same.value is None and "same score (2)" in same.reason
    lonely = krippendorff_alpha({"a": {1: 2}, "b": {2: 3}}, categories=SCALE)
    assert lonely == Agreement(None, lonely.reason, 0)
    assert krippendorff_alpha({}, categories=SCALE).value is None
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha({"a": {1: 2}}, categories=SCALE, level="ratio")  # type: ignore[arg-type]
