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
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from aoven_git.agreement import KappaGate, disagreement
from aoven_git.numfmt import brief, brief_near, brief_percent

#: The κ paradox: κ below the plan's threshold (or undefined) while the weighted percent
#: agreement is at least this (docs/statistics.md, "When κ misleads").
PARADOX_AGREEMENT = Fraction(9, 10)
CONFIDENCE = 0.95
_SINGLE = "the scale has a single category, so there is nothing to agree on"
_NO_ITEMS = "no items were scored by both raters"
_UNORDERED = "the categories are labels without an order, so a bias has no direction"
#: Elements per temporary pairs × items array (as agreement.py's bootstrap budget).
_BUDGET = 2**19

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
    weights: str

    @property
    def q(self) -> int:
        return len(self.labels)

    def total_weight(self) -> Fraction:
        """T_w = Σ_kl w_kl = q² − Σ_kl d_kl / d_max (the sum of the agreement weights)."""
        return Fraction(self.q * self.q) - Fraction(int(self.d.sum()), self.d_max)

    def codes(self, labels: Sequence[Hashable], who: str) -> IntArray:
        """Positions of ``labels`` on the scale; raises on a label that is not on it."""
        if self.ordered and all(type(x) is int for x in labels):
            values = np.asarray(labels, dtype=np.int64)
            cats = np.asarray(self.labels, dtype=np.int64)
            pos = np.minimum(np.searchsorted(cats, values), len(cats) - 1)
            if values.size == 0 or bool((cats[pos] == values).all()):
                return pos.astype(np.int64, copy=False)
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
    return _Scale(tuple(labels), d, int(d.max()) if q > 1 else 0, ordered, weights)


# --------------------------------------------------------------------------- helpers


@lru_cache(maxsize=256)
def _t_quantile(df: int, confidence: float) -> float:
    """The two-sided t quantile of Gwet's intervals (cached: every pair of a study shares n)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, 1.0 - (1.0 - confidence) / 2.0))


def _estimate(exact: Fraction, variance: float | None, n: int, confidence: float) -> Estimate:
    """An exact value with its standard error √variance and interval ± t(n−1)·se (irrCAC: the
    upper bound is capped at 1; a negative variance from rounding is 0)."""
    value = float(exact)
    if variance is None or n < 2:
        return Estimate(value, exact=exact, se_reason="fewer than two items, so no standard error")
    if not math.isfinite(float(variance)):  # pragma: no cover - the formulas are finite for q ≥ 2, n ≥ 2
        return Estimate(value, exact=exact, se_reason="the standard error is not a finite number")
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

    and the prevalence and bias indices (:func:`_exact_two`, :func:`_se_two`). Everything is a function of the
    table, so :func:`pairwise` computes all pairs of a study at once (:func:`_from_tables`).
    """
    scale = _scale(categories, weights)
    if len(a) != len(b):
        raise ValueError(f"a and b must score the same items: {len(a)} vs {len(b)} scores")
    ca, cb = scale.codes(a, "a"), scale.codes(b, "b")
    q = scale.q
    table = np.bincount(ca * q + cb, minlength=q * q).reshape(1, q, q)
    return _from_tables(table, scale, confidence)[0]


def pairwise(
    ratings: Mapping[str, Mapping[Hashable, Hashable]], *, categories: Sequence[Hashable], weights: str,
    confidence: float = CONFIDENCE,
) -> dict[tuple[str, str], Coefficients]:
    """:func:`two_raters` for every pair of raters over the items both scored, keyed
    ``(first, second)`` in the order the raters appear (as :func:`aoven_git.agreement.pairwise_kappa`).

    Every pair's table at once: one ``bincount`` over all pairs' (score a, score b) codes,
    offset per pair, items a rater did not score left out."""
    scale = _scale(categories, weights)
    raters, codes = _code_matrix(ratings, scale)
    return _pairs_from_codes(raters, codes, scale, confidence)


def _code_matrix(
    ratings: Mapping[str, Mapping[Hashable, Hashable]], scale: _Scale
) -> tuple[list[str], IntArray]:
    """Raters × items: each score's position on the scale, −1 where the rater did not score the
    item (items in first-seen order)."""
    raters = list(ratings)
    index: dict[Hashable, int] = {}
    for scores in ratings.values():
        for item in scores:
            index.setdefault(item, len(index))
    codes = np.full((len(raters), len(index)), -1, dtype=np.int64)
    for row, rater in enumerate(raters):
        scores = ratings[rater]
        codes[row, [index[i] for i in scores]] = scale.codes(list(scores.values()), f"rater {rater}")
    return raters, codes


def _pairs_from_codes(raters: list[str], codes: IntArray, scale: _Scale,
                      confidence: float) -> dict[tuple[str, str], Coefficients]:
    """Every pair's table by one ``bincount`` per slice of pairs (slices of at most
    :data:`_BUDGET` pair × item elements, so memory stays flat however many raters), then
    :func:`_from_tables` over all of them."""
    q, count, items = scale.q, len(raters), codes.shape[1]
    firsts = [i for i in range(count) for _ in range(i + 1, count)]
    seconds = [j for i in range(count) for j in range(i + 1, count)]
    tables = np.zeros((len(firsts), q, q), dtype=np.int64)
    step = max(1, _BUDGET // max(items, 1))
    for start in range(0, len(firsts), step):
        left, right = codes[firsts[start:start + step]], codes[seconds[start:start + step]]
        both = (left >= 0) & (right >= 0)
        cell = (np.arange(len(left))[:, None] * q * q + left * q + right)[both]
        tables[start:start + step] = np.bincount(cell, minlength=len(left) * q * q).reshape(-1, q, q)
    keys = [(raters[i], raters[j]) for i, j in zip(firsts, seconds, strict=True)]
    return dict(zip(keys, _from_tables(tables, scale, confidence), strict=True))


def all_coefficients(
    ratings: Mapping[str, Mapping[Hashable, Hashable]], *, categories: Sequence[Hashable], weights: str,
    confidence: float = CONFIDENCE,
) -> tuple[Coefficients, dict[tuple[str, str], Coefficients]]:
    """:func:`several_raters` and :func:`pairwise` of one group, coding the scores once."""
    scale = _scale(categories, weights)
    raters, codes = _code_matrix(ratings, scale)
    return _several_from_codes(codes, scale, confidence), _pairs_from_codes(raters, codes, scale, confidence)


def _from_tables(tables: IntArray, scale: _Scale, confidence: float) -> list[Coefficients]:
    """The coefficients of a stack of two-rater tables (pairs × q × q counts): exact values from
    integer sums per pair, standard errors vectorised over the pairs."""
    q, weights = scale.q, scale.weights
    n = tables.sum(axis=(1, 2))
    if q < 2:
        return [_empty(2, int(m), int(m), weights, _SINGLE if m else _NO_ITEMS) for m in n]
    exact = _exact_two(tables, scale)
    se = _se_two(tables, scale, exact)
    out = []
    for p, m in enumerate(n.tolist()):
        if m == 0:
            out.append(_empty(2, 0, 0, weights, _NO_ITEMS))
            continue
        values = {key: exact[key][p] for key in ("pa", "ac", "bp", "pi", "bi")}
        est = {key: _estimate(value, se[key][p], m, confidence) if value is not None
               else _undefined(_UNORDERED) for key, value in values.items()}
        out.append(Coefficients(
            2, m, m, weights, percent_agreement=est["pa"], gwet=est["ac"], brennan_prediger=est["bp"],
            prevalence_index=est["pi"], bias_index=est["bi"],
            prevalence_category=scale.labels[exact["top"][p]], chance_gwet=exact["pe"][p],
        ))
    return out


def _exact_two(tables: IntArray, scale: _Scale) -> dict[str, list[Any]]:
    """Per table, in integers: D = Σ d_kl·n_kl, s_k = n_k+ + n_+k (so π_k = s_k/2n),
    S = Σ_k s_k(2n − s_k), T = d_max·T_w = q²·d_max − Σ d. Then, exactly,
    p_a = (n·d_max − D)/(n·d_max); p_e = T·S/(d_max·q(q−1)·4n²);
    AC = (L − 4n·q(q−1)·D − T·S)/(L − T·S) with L = d_max·q(q−1)·4n²;
    BP = ((n·d_max − D)·q² − T·n)/(n·d_max·q² − T·n); PI = (s_top − n)/n;
    BI = Σ n_kl(k − l)/(n(q − 1))."""
    q, dmax = scale.q, scale.d_max
    qq, big_t = q * (q - 1), q * q * dmax - int(scale.d.sum())
    ranks = np.arange(q)
    n_all = tables.sum(axis=(1, 2)).tolist()
    d_all = (scale.d * tables).sum(axis=(1, 2)).tolist()
    shares = (tables.sum(axis=2) + tables.sum(axis=1)).tolist()
    diffs = (tables * (ranks[:, None] - ranks[None, :])).sum(axis=(1, 2)).tolist()
    out: dict[str, list[Any]] = {key: [] for key in ("pa", "ac", "bp", "pi", "bi", "pe", "top")}
    for n, dis, s, diff in zip(n_all, d_all, shares, diffs, strict=True):
        if n == 0:
            for key in out:
                out[key].append(None)
            continue
        top = max(range(q), key=lambda k: (s[k], -k))
        spread = sum(x * (2 * n - x) for x in s)
        big_l = dmax * qq * 4 * n * n
        out["pa"].append(Fraction(n * dmax - dis, n * dmax))
        out["pe"].append(Fraction(big_t * spread, big_l))
        out["ac"].append(Fraction(big_l - 4 * n * qq * dis - big_t * spread, big_l - big_t * spread))
        out["bp"].append(Fraction((n * dmax - dis) * q * q - big_t * n, n * dmax * q * q - big_t * n))
        out["pi"].append(Fraction(s[top] - n, n))
        out["bi"].append(Fraction(diff, n * (q - 1)) if scale.ordered else None)
        out["top"].append(top)
    return out


def _se_two(tables: IntArray, scale: _Scale, exact: Mapping[str, list[Any]]) -> dict[str, FloatArray]:
    """Gwet's two-rater variances (see :func:`two_raters`) for every table at once, and the
    variances of the indices as means over items: PI's x_i = [a_i = top] + [b_i = top] − 1 has
    Σ x_i² = n − (n_top+ + n_+top − 2·n_top,top); BI's x_i = (rank a_i − rank b_i)/(q − 1)."""
    q = scale.q
    n = np.maximum(tables.sum(axis=(1, 2)), 1).astype(np.float64)
    p = tables / n[:, None, None]
    w = _agreement_weights(scale)
    val = {key: np.array([np.nan if v is None else float(v) for v in exact[key]]) for key in
           ("pa", "ac", "pe", "pi", "bi")}
    tw = float(scale.total_weight())
    pi = (p.sum(axis=2) + p.sum(axis=1)) / 2.0
    s2 = (p * w * w).sum(axis=(1, 2))
    pa, ac, pe = val["pa"], val["ac"], val["pe"]
    pe_kl = tw * (1.0 - (pi[:, :, None] + pi[:, None, :]) / 2.0) / (q * (q - 1))
    inner = (p * (w - 2.0 * (1.0 - ac)[:, None, None] * pe_kl) ** 2).sum(axis=(1, 2))
    pe_bp = tw / (q * q)
    rows = np.arange(len(tables))
    top = np.array([t if t is not None else 0 for t in exact["top"]], dtype=np.int64)
    off_top = p.sum(axis=2)[rows, top] + p.sum(axis=1)[rows, top] - 2.0 * p[rows, top, top]
    ranks = np.arange(q, dtype=np.float64)
    sq = (p * ((ranks[:, None] - ranks[None, :]) / (q - 1)) ** 2).sum(axis=(1, 2))
    return {
        "pa": (s2 - pa * pa) / n,
        "ac": (inner - (pa - 2.0 * (1.0 - ac) * pe) ** 2) / (n * (1.0 - pe) ** 2),
        "bp": (s2 - pa * pa) / (n * (1.0 - pe_bp) ** 2),
        "pi": (1.0 - off_top - val["pi"] ** 2) / n,
        "bi": (sq - val["bi"] ** 2) / n,
    }


def _agreement_weights(scale: _Scale) -> FloatArray:
    return 1.0 - scale.d.astype(np.float64) / scale.d_max


def _gwet_chance(scale: _Scale, shares: Sequence[Fraction]) -> Fraction:
    """p_e = T_w/(q(q−1))·Σ_k π_k(1 − π_k) (Gwet 2008, eq. 12 with weights: Gwet 2014, §3.4)."""
    q = scale.q
    return scale.total_weight() / (q * (q - 1)) * sum((p * (1 - p) for p in shares), Fraction(0))


def _top(shares: Sequence[Fraction]) -> int:
    """The most frequent category (the first in scale order on a tie)."""
    return max(range(len(shares)), key=lambda k: (shares[k], -k))


def _prevalence(in_top: IntArray, rated: IntArray, shares: Sequence[Fraction], n: int,
                confidence: float) -> Estimate:
    """The prevalence index PI = 2π_k − 1 of the most frequent category k: the share of
    ratings in k minus the share outside it.

    For two raters and two categories this is Byrt, Bishop & Carlin's (1993) (a − d)/n up to
    sign (cell a: both "yes", d: both "no"); one-vs-rest it generalises to any scale and, through
    Gwet's shares π_k = (1/n)Σ_i r_ik/r_i, to several raters. It is a mean over items of
    x_i = 2r_ik/r_i − 1 (``in_top`` = r_ik, ``rated`` = r_i), so its variance is that of a mean:
    Σ(x_i − PI)²/(n(n−1)) here (as Gwet's multi-rater variances), (mean x² − PI²)/n for two
    raters (as the table variances). Near 1: one score dominates, where κ is low despite high
    agreement.
    """
    value = 2 * shares[_top(shares)] - 1
    if n < 2:
        return _estimate(value, None, n, confidence)
    x = 2.0 * in_top / rated - 1.0
    return _estimate(value, float(((x - float(value)) ** 2).sum()) / (n * (n - 1)), n, confidence)


# --------------------------------------------------------------------------- several raters


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
    return _several_from_codes(_code_matrix(ratings, scale)[1], scale, confidence)


def _several_from_codes(codes: IntArray, scale: _Scale, confidence: float) -> Coefficients:
    """:func:`several_raters` on the raters × items code matrix (−1: not scored)."""
    q, weights = scale.q, scale.weights
    scored = codes >= 0
    raters = int(scored.any(axis=1).sum())
    items = np.broadcast_to(np.arange(codes.shape[1]), codes.shape)[scored]
    counts = np.bincount(items * q + codes[scored], minlength=codes.shape[1] * q).reshape(-1, q)
    r = counts.sum(axis=1)
    counts, r = counts[r > 0], r[r > 0]
    n, pairable = len(r), int((r >= 2).sum())
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
        prevalence_index=_prevalence(counts[:, _top(shares)], r, shares, n, confidence),
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
    low = "undefined" if kappa is None else f"{brief_near(kappa, threshold)} below {brief(threshold)}"
    why = f"κ is {low} while weighted agreement is {brief_percent(agreement)}"
    if prevalence is not None:
        why += f" (prevalence index {brief(prevalence)})"
    return Paradox(True, why)


def alpha_gate(alpha: float | None, reason: str | None, *, raters: bool, threshold: Fraction,
               undefined: str) -> KappaGate:
    """The gate when the plan pre-registers Krippendorff's α (``rules.kappa.coefficient:
    krippendorff``): α over all raters ≥ threshold. α is computed in floats, so the comparison is
    exact on the float's own value (``Fraction(alpha)``), the best "exact" there is. Undefined α
    follows ``rules.kappa.undefined`` as κ does; with fewer than two raters nothing was measured
    and the dimension never counts."""
    if not raters:
        return KappaGate(False, None, "alpha undefined: fewer than two raters scored this pass")
    if alpha is None:
        if undefined == "include":
            return KappaGate(True, None, f"alpha undefined ({reason}); counted because rules.kappa.undefined "
                                         "is include")
        return KappaGate(False, None, f"alpha undefined ({reason}), treated as below {brief(threshold)}")
    value = Fraction(alpha)
    if value >= threshold:
        return KappaGate(True, value, None)
    return KappaGate(False, value, f"alpha {brief_near(value, threshold)} below {brief(threshold)}")
