"""Agreement coefficients that stay meaningful where κ misleads: weighted percent agreement,
Gwet's AC1/AC2, Brennan–Prediger, and the prevalence and bias indices, each with Gwet's analytic
standard error and a t interval; and the "κ paradox" flag.

Why: κ divides by chance disagreement estimated from the raters' own margins. When almost every
item gets the same score (the real team's D8: 90 % raw agreement, κ = −0.08), the margins are
skewed, chance agreement approaches the observed agreement, and κ collapses or is 0/0 although
the raters agree (Feinstein & Cicchetti 1990, "High agreement but low kappa"). AC1/AC2 and
Brennan–Prediger estimate chance agreement differently and stay defined and stable there; the
prevalence and bias indices (Byrt, Bishop & Carlin 1993, "Bias, prevalence and kappa", J. Clin.
Epidemiol. 46(5), 423–429) say which of the two effects is at work. docs/statistics.md, "When κ
misleads", explains every formula and the flag.

Two forms, both from Gwet (2014), *Handbook of Inter-Rater Reliability*, 4th ed., and Gwet
(2008), "Computing inter-rater reliability and its variance in the presence of high agreement",
BJMSP 61, 29–48, as implemented in the R package irrCAC:

* :func:`two_raters` — two raters over the items both scored, from their q×q table (the
  contingency-table variances, divisor n);
* :func:`several_raters` — any number of raters, missing ratings allowed (an item counts for
  agreement when two or more raters scored it, for the category shares when one did; divisor
  n(n−1)).

Weights are the agreement weights w_kl = 1 − d_kl/d_max of the *full* scale, with d from
:func:`aoven_git.agreement.disagreement` — the same weights as the weighted κ. Values are exact
fractions (rational weights, rational shares), so a plan gating on AC2 compares exactly with its
threshold; standard errors and intervals are floats. Undefined → ``None`` with a reason; never
NaN. Pure functions over plain data; numpy only (scipy.special for the t quantile).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from aoven_git.agreement import disagreement

#: The κ paradox: κ below the plan's threshold (or undefined) while the weighted percent
#: agreement is at least this (SPEC §6, docs/statistics.md "When κ misleads").
PARADOX_AGREEMENT = Fraction(9, 10)
CONFIDENCE = 0.95
_SINGLE = "the scale has a single category, so there is nothing to agree on"

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Estimate:
    """One coefficient: its value (``exact`` too where it is rational), Gwet's standard error
    and the interval value ± t(n−1)·se (upper bound capped at 1, as irrCAC does). ``reason`` says
    why the value is undefined, ``se_reason`` why the standard error is."""

    value: float | None
    reason: str | None = None
    se: float | None = None
    ci: tuple[float, float] | None = None
    exact: Fraction | None = None
    se_reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "value_exact": None if self.exact is None else str(self.exact),
            "se": self.se,
            "ci": list(self.ci) if self.ci else None,
            "reason": self.reason or self.se_reason,
        }


@dataclass(frozen=True)
class Coefficients:
    """The coefficients of one group of ratings (a pair of raters, or all raters).

    ``n`` is the number of items used (scored by both raters; or by at least one rater), and
    ``pairable`` those scored by two or more. ``prevalence_category`` is the category whose
    share defines the prevalence index. ``chance_gwet`` is AC's chance agreement p_e.
    """

    raters: int
    n: int
    pairable: int
    weights: str
    percent_agreement: Estimate
    gwet: Estimate
    brennan_prediger: Estimate
    prevalence_index: Estimate
    bias_index: Estimate
    prevalence_category: Hashable | None = None
    chance_gwet: Fraction | None = None

    @property
    def gwet_name(self) -> str:
        """AC1 when unweighted, AC2 with weights (Gwet 2014, ch. 3)."""
        return "AC1" if self.weights == "none" else "AC2"

    def as_dict(self) -> dict[str, Any]:
        return {
            "raters": self.raters,
            "n": self.n,
            "pairable": self.pairable,
            "percent_agreement": self.percent_agreement.as_dict(),
            "gwet": {"name": self.gwet_name, **self.gwet.as_dict()},
            "brennan_prediger": self.brennan_prediger.as_dict(),
            "prevalence_index": {"category": self.prevalence_category, **self.prevalence_index.as_dict()},
            "bias_index": self.bias_index.as_dict(),
        }


# --------------------------------------------------------------------------- the scale


@dataclass(frozen=True)
class _Scale:
    """The categories in scale order, their integer disagreement d_kl and d_max."""

    labels: tuple[Hashable, ...]
    d: IntArray
    d_max: int
    ordered: bool

    @property
    def q(self) -> int:
        return len(self.labels)

    def total_weight(self) -> Fraction:
        """T_w = Σ_kl w_kl = q² − Σ_kl d_kl / d_max (the sum of the agreement weights)."""
        return Fraction(self.q * self.q) - Fraction(int(self.d.sum()), self.d_max)

    def codes(self, labels: Sequence[Hashable], who: str) -> IntArray:
        index = {label: k for k, label in enumerate(self.labels)}
        bad = sorted({repr(x) for x in labels if x not in index})
        if bad:
            raise ValueError(f"{who} has scores {', '.join(bad)} outside the categories {list(self.labels)}")
        return np.fromiter((index[x] for x in labels), dtype=np.int64, count=len(labels))


def _scale(categories: Sequence[Hashable], weights: str) -> _Scale:
    """The scale in the order given (integers are sorted, as for κ), with the weights of
    :func:`aoven_git.agreement.disagreement` on category ranks. Bad input is a caller bug."""
    labels = list(categories)
    if not labels:
        raise ValueError("categories must list at least one score")
    if len(set(labels)) != len(labels):
        raise ValueError(f"categories must be distinct, got {labels!r}")
    ordered = all(isinstance(x, int) and not isinstance(x, bool) for x in labels)
    if ordered:
        labels.sort()
    q = len(labels)
    d = np.array([[disagreement(i, j, weights) for j in range(q)] for i in range(q)], dtype=np.int64)
    return _Scale(tuple(labels), d, int(d.max()) if q > 1 else 0, ordered)


# --------------------------------------------------------------------------- helpers


def _t_quantile(df: int, confidence: float) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, 1.0 - (1.0 - confidence) / 2.0))


def _estimate(exact: Fraction, variance: float | None, n: int, confidence: float) -> Estimate:
    """An exact value with its standard error √variance and interval ± t(n−1)·se (irrCAC: the
    upper bound is capped at 1; a negative variance from rounding is 0)."""
    value = float(exact)
    if variance is None or n < 2:
        return Estimate(value, exact=exact, se_reason="fewer than two items, so no standard error")
    se = math.sqrt(max(float(variance), 0.0))
    half = _t_quantile(n - 1, confidence) * se
    return Estimate(value, se=se, ci=(value - half, min(1.0, value + half)), exact=exact)


def _undefined(reason: str) -> Estimate:
    return Estimate(None, reason=reason)


def _chance_coefficient(pa: Fraction, pe: Fraction) -> Fraction:
    """(p_a − p_e)/(1 − p_e), the form shared by κ, AC and BP; p_e < 1 is the caller's check."""
    return (pa - pe) / (1 - pe)


def _empty(raters: int, n: int, pairable: int, weights: str, reason: str) -> Coefficients:
    none = _undefined(reason)
    return Coefficients(raters, n, pairable, weights, none, none, none, none, none)


# --------------------------------------------------------------------------- two raters


def two_raters(
    a: Sequence[Hashable], b: Sequence[Hashable], *, categories: Sequence[Hashable], weights: str,
    confidence: float = CONFIDENCE,
) -> Coefficients:
    """The coefficients of two raters over the same items (``a[i]`` and ``b[i]``).

    From the q×q table of proportions p_kl with margins p_k+ and p_+l, π_k = (p_k+ + p_+k)/2 and
    T_w = Σ w_kl (Gwet 2014, ch. 2–3; Gwet 2008, §3; irrCAC ``pa2.table``, ``gwet.ac1.table``,
    ``bp2.table``):

        p_a  = Σ_kl w_kl·p_kl                          var = (Σ w²·p − p_a²)/n
        AC   = (p_a − p_e)/(1 − p_e),  p_e = T_w/(q(q−1))·Σ_k π_k(1 − π_k)
             var = [Σ_kl p_kl·(w_kl − 2(1−AC)·T_w(1 − (π_k+π_l)/2)/(q(q−1)))² − (p_a − 2(1−AC)p_e)²]
                   / (n(1 − p_e)²)
        BP   = (p_a − T_w/q²)/(1 − T_w/q²)             var = (Σ w²·p − p_a²)/(n(1 − T_w/q²)²)

    and the prevalence and bias indices of :func:`_prevalence` and :func:`_bias`.
    """
    scale = _scale(categories, weights)
    if len(a) != len(b):
        raise ValueError(f"a and b must score the same items: {len(a)} vs {len(b)} scores")
    ca, cb = scale.codes(a, "a"), scale.codes(b, "b")
    n, q = len(ca), scale.q
    if n == 0:
        return _empty(2, 0, 0, weights, "no items were scored by both raters")
    if q < 2:
        return _empty(2, n, n, weights, _SINGLE)
    table = np.bincount(ca * q + cb, minlength=q * q).reshape(q, q)
    pa = 1 - Fraction(int((scale.d * table).sum()), n * scale.d_max)
    shares = [Fraction(int(table[k].sum() + table[:, k].sum()), 2 * n) for k in range(q)]
    return Coefficients(
        2, n, n, weights,
        percent_agreement=_estimate(pa, _pa_variance_two(table, scale, pa), n, confidence),
        gwet=_gwet_two(table, scale, pa, shares, confidence),
        brennan_prediger=_bp_two(table, scale, pa, confidence),
        prevalence_index=_prevalence(np.eye(q, dtype=np.int64)[ca] + np.eye(q, dtype=np.int64)[cb],
                                     shares, n, confidence, two=True),
        bias_index=_bias(ca, cb, scale, confidence),
        prevalence_category=scale.labels[_top(shares)],
        chance_gwet=_gwet_chance(scale, shares),
    )


def _agreement_weights(scale: _Scale) -> FloatArray:
    return 1.0 - scale.d.astype(np.float64) / scale.d_max


def _pa_variance_two(table: IntArray, scale: _Scale, pa: Fraction) -> float:
    n = int(table.sum())
    w = _agreement_weights(scale)
    return float(((w * w) * table).sum() / n - float(pa) ** 2) / n


def _gwet_chance(scale: _Scale, shares: Sequence[Fraction]) -> Fraction:
    """p_e = T_w/(q(q−1))·Σ_k π_k(1 − π_k) (Gwet 2008, eq. 12 with weights: Gwet 2014, §3.4)."""
    q = scale.q
    return scale.total_weight() / (q * (q - 1)) * sum((p * (1 - p) for p in shares), Fraction(0))


def _gwet_two(table: IntArray, scale: _Scale, pa: Fraction, shares: Sequence[Fraction],
              confidence: float) -> Estimate:
    """AC1/AC2 of a two-rater table with Gwet's (2008, eq. 30; 2014, §5.2) variance."""
    n, q = int(table.sum()), scale.q
    pe = _gwet_chance(scale, shares)
    ac = _chance_coefficient(pa, pe)
    acf, pef, paf = float(ac), float(pe), float(pa)
    tw = float(scale.total_weight())
    pi = np.array([float(s) for s in shares])
    w = _agreement_weights(scale)
    pe_kl = tw * (1.0 - (pi[:, None] + pi[None, :]) / 2.0) / (q * (q - 1))
    inner = float((table / n * (w - 2.0 * (1.0 - acf) * pe_kl) ** 2).sum())
    variance = (inner - (paf - 2.0 * (1.0 - acf) * pef) ** 2) / (n * (1.0 - pef) ** 2)
    return _estimate(ac, variance, n, confidence)


def _bp_two(table: IntArray, scale: _Scale, pa: Fraction, confidence: float) -> Estimate:
    """Brennan & Prediger (1981), "Coefficient kappa: some uses, misuses, and alternatives",
    Educ. Psychol. Meas. 41, 687–699: chance agreement T_w/q² (uniform margins)."""
    n, q = int(table.sum()), scale.q
    pe = scale.total_weight() / (q * q)
    variance = _pa_variance_two(table, scale, pa) / (1.0 - float(pe)) ** 2
    return _estimate(_chance_coefficient(pa, pe), variance, n, confidence)


def _top(shares: Sequence[Fraction]) -> int:
    """The most frequent category (the first in scale order on a tie)."""
    return max(range(len(shares)), key=lambda k: (shares[k], -k))


def _prevalence(per_item: IntArray, shares: Sequence[Fraction], n: int, confidence: float, *,
                two: bool) -> Estimate:
    """The prevalence index PI = 2π_k − 1 of the most frequent category k: the share of
    ratings in k minus the share outside it.

    For two raters and two categories this is Byrt, Bishop & Carlin's (1993) |a − d|/n (cell a:
    both "yes", d: both "no"); one-vs-rest it generalises to any scale and, through Gwet's shares
    π_k = (1/n)Σ_i r_ik/r_i, to several raters. It is a mean over items of x_i = 2r_ik/r_i − 1,
    so its standard error is that of a mean: divisor n² for two raters (as the table variances),
    n(n−1) for several (as Gwet's multi-rater variances). Near 1: one score dominates, the
    situation in which κ is low despite high agreement.
    """
    k = _top(shares)
    value = 2 * shares[k] - 1
    rated = per_item.sum(axis=1)
    x = 2.0 * per_item[:, k] / np.maximum(rated, 1) - 1.0
    if n < 2:
        return _estimate(value, None, n, confidence)
    centred = float(((x - float(value)) ** 2).sum())
    variance = centred / (n * n) if two else centred / (n * (n - 1))
    return _estimate(value, variance, n, confidence)


def _bias(ca: IntArray, cb: IntArray, scale: _Scale, confidence: float) -> Estimate:
    """The bias index BI = (mean rank of a − mean rank of b)/(q − 1): how far the two raters'
    score levels differ, on [−1, 1]. For two categories this is Byrt, Bishop & Carlin's (1993)
    (b − c)/n (the difference of the raters' "yes" rates). A mean of per-item differences, so its
    variance is (mean of x² − BI²)/n. Needs an ordered scale (integer scores)."""
    if not scale.ordered:
        return _undefined("the categories are labels without an order, so a bias has no direction")
    n, q = len(ca), scale.q
    diff = ca - cb
    value = Fraction(int(diff.sum()), n * (q - 1))
    x = diff / (q - 1)
    variance = (float((x * x).mean()) - float(value) ** 2) / n
    return _estimate(value, variance, n, confidence)


# --------------------------------------------------------------------------- several raters


def rating_counts(
    ratings: Mapping[str, Mapping[Hashable, Hashable]], *, categories: Sequence[Hashable]
) -> IntArray:
    """Items × categories: r_ik, how many raters put item i in category k (items nobody scored
    do not appear; items in first-seen order). Scale order as in :func:`two_raters`."""
    scale = _scale(categories, "none")
    index: dict[Hashable, int] = {}
    for scores in ratings.values():
        for item in scores:
            index.setdefault(item, len(index))
    counts = np.zeros((len(index), scale.q), dtype=np.int64)
    for rater, scores in ratings.items():
        codes = scale.codes(list(scores.values()), f"rater {rater}")
        np.add.at(counts, ([index[i] for i in scores], codes), 1)
    return counts


def several_raters(
    ratings: Mapping[str, Mapping[Hashable, Hashable]], *, categories: Sequence[Hashable], weights: str,
    confidence: float = CONFIDENCE,
) -> Coefficients:
    """The coefficients of any number of raters, missing ratings allowed (Gwet 2014, ch. 5;
    irrCAC ``pa.coeff.raw``, ``gwet.ac1.raw``, ``bp.coeff.raw``).

    With r_ik raters putting item i in category k, r_i = Σ_k r_ik, r*_ik = Σ_l w_kl·r_il, n items
    with r_i ≥ 1 and n₂ with r_i ≥ 2:

        p_a|i = Σ_k r_ik(r*_ik − 1) / (r_i(r_i − 1))        (items with r_i ≥ 2, else 0)
        p_a   = (1/n₂) Σ_i p_a|i,    π_k = (1/n) Σ_i r_ik/r_i
        AC    = (p_a − p_e)/(1 − p_e),  p_e = T_w/(q(q−1))·Σ_k π_k(1 − π_k)
        BP    = (p_a − T_w/q²)/(1 − T_w/q²)

    Variances by linearisation, v = Σ_i (c_i − c)²/(n(n−1)) over per-item terms c_i:
    p_a: (n/n₂)·p_a|i; BP: (n/n₂)(p_a|i − p_e·[r_i≥2])/(1 − p_e); AC: the same minus
    2(1 − AC)(p_e|i − p_e)/(1 − p_e) with p_e|i = T_w/(q(q−1))·Σ_k r_ik(1 − π_k)/r_i.
    No bias index (a two-rater quantity: see the pairs).
    """
    scale = _scale(categories, weights)
    counts = rating_counts(ratings, categories=scale.labels)
    r = counts.sum(axis=1)
    counts, r = counts[r > 0], r[r > 0]
    n, pairable, q = len(r), int((r >= 2).sum()), scale.q
    raters = sum(1 for scores in ratings.values() if scores)
    if pairable == 0:
        return _empty(raters, n, 0, weights, "no item was scored by two or more raters")
    if q < 2:
        return _empty(raters, n, pairable, weights, _SINGLE)
    pa, pa_i = _several_pa(counts, r, scale)
    shares = _several_shares(counts, r, n)
    ac, bp = _several_gwet(counts, r, scale, pa, pa_i, shares, confidence), \
        _several_bp(r, scale, pa, pa_i, confidence)
    pa_terms = n / pairable * pa_i
    pa_var = float(((pa_terms - float(pa)) ** 2).sum()) / (n * (n - 1)) if n >= 2 else None
    return Coefficients(
        raters, n, pairable, weights,
        percent_agreement=_estimate(pa, pa_var, n, confidence),
        gwet=ac, brennan_prediger=bp,
        prevalence_index=_prevalence(counts, shares, n, confidence, two=False),
        bias_index=_undefined("the bias index compares two raters; see each pair"),
        prevalence_category=scale.labels[_top(shares)],
        chance_gwet=_gwet_chance(scale, shares),
    )


def _several_pa(counts: IntArray, r: IntArray, scale: _Scale) -> tuple[Fraction, FloatArray]:
    """p_a exactly, and p_a|i as floats. With w = 1 − d/d_max, Σ_k r_ik(r*_ik − 1) =
    r_i(r_i − 1) − D_i/d_max where D_i = Σ_kl r_ik·d_kl·r_il, so p_a|i = 1 − D_i/(d_max·r_i(r_i−1)):
    integers grouped by r_i make the exact sum cheap."""
    dis = np.einsum("ik,kl,il->i", counts, scale.d, counts)
    pairs = r * (r - 1)
    ok = r >= 2
    total = Fraction(0)
    for m in np.unique(r[ok]):
        total += Fraction(int(dis[r == m].sum()), int(m * (m - 1)))
    pa = 1 - total / (int(ok.sum()) * scale.d_max)
    pa_i = np.where(ok, 1.0 - dis / (scale.d_max * np.maximum(pairs, 1)), 0.0)
    return pa, pa_i


def _several_shares(counts: IntArray, r: IntArray, n: int) -> list[Fraction]:
    """π_k = (1/n) Σ_i r_ik/r_i, exactly (grouped by r_i)."""
    shares = [Fraction(0)] * counts.shape[1]
    for m in np.unique(r):
        sums = counts[r == m].sum(axis=0)
        shares = [s + Fraction(int(c), int(m)) for s, c in zip(shares, sums, strict=True)]
    return [s / n for s in shares]


def _several_gwet(counts: IntArray, r: IntArray, scale: _Scale, pa: Fraction, pa_i: FloatArray,
                  shares: Sequence[Fraction], confidence: float) -> Estimate:
    """AC1/AC2 over several raters with Gwet's (2008, §4; 2014, §5.3) linearised variance."""
    n, q = len(r), scale.q
    pairable = int((r >= 2).sum())
    pe = _gwet_chance(scale, shares)
    ac = _chance_coefficient(pa, pe)
    acf, pef = float(ac), float(pe)
    pi = np.array([float(s) for s in shares])
    tw = float(scale.total_weight())
    ac_i = n / pairable * (pa_i - pef * (r >= 2)) / (1.0 - pef)
    pe_i = tw / (q * (q - 1)) * (counts @ (1.0 - pi)) / r
    terms = ac_i - 2.0 * (1.0 - acf) * (pe_i - pef) / (1.0 - pef)
    variance = float(((terms - acf) ** 2).sum()) / (n * (n - 1)) if n >= 2 else None
    return _estimate(ac, variance, n, confidence)


def _several_bp(r: IntArray, scale: _Scale, pa: Fraction, pa_i: FloatArray, confidence: float) -> Estimate:
    """Brennan–Prediger over several raters (Gwet 2014, §5.3): p_e = T_w/q²."""
    n, q = len(r), scale.q
    pairable = int((r >= 2).sum())
    pe = scale.total_weight() / (q * q)
    bp = _chance_coefficient(pa, pe)
    terms = n / pairable * (pa_i - float(pe) * (r >= 2)) / (1.0 - float(pe))
    variance = float(((terms - float(bp)) ** 2).sum()) / (n * (n - 1)) if n >= 2 else None
    return _estimate(bp, variance, n, confidence)


# --------------------------------------------------------------------------- the κ paradox


@dataclass(frozen=True)
class Paradox:
    """Whether κ misleads here, and a sentence saying why (None when not flagged)."""

    flagged: bool
    reason: str | None = None


def kappa_paradox(kappa: Fraction | None, agreement: Fraction | None, *, threshold: Fraction,
                  prevalence: Fraction | None = None) -> Paradox:
    """The κ paradox flag: κ is below ``threshold`` (or undefined, which the gate treats as
    below) while the weighted percent agreement p_a is at least :data:`PARADOX_AGREEMENT` (9/10).

    Both comparisons are exact. Then the raters agree on almost every item and κ is low only
    because chance agreement, estimated from skewed margins, is nearly as high (Feinstein &
    Cicchetti 1990; Byrt et al. 1993) — the prevalence index, when given, says how skewed. Not
    flagged when p_a is undefined (nothing was compared).
    """
    if agreement is None or agreement < PARADOX_AGREEMENT:
        return Paradox(False)
    if kappa is not None and kappa >= threshold:
        return Paradox(False)
    low = "undefined" if kappa is None else f"{float(kappa):.3f} below {float(threshold):g}"
    why = f"κ is {low} while weighted agreement is {float(agreement):.1%}"
    if prevalence is not None:
        why += f" (prevalence index {float(prevalence):.2f})"
    return Paradox(True, why)
