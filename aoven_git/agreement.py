"""Inter-rater agreement: weighted Cohen's κ (float and exact), its bootstrap interval, the
aggregate over rater pairs, the exact κ gate, and Krippendorff's α.

The weighted κ of two raters over the same N items (Cohen 1968, "Weighted kappa: Nominal scale
agreement with provision for scaled disagreement or partial credit", Psychological Bulletin
70(4), 213–220) is

    κ_w = 1 − Σ_ij w_ij·o_ij / Σ_ij w_ij·e_ij

with o_ij the observed share of items rated i by one rater and j by the other, e_ij = r_i·c_j the
share expected by chance from the two margins, and w_ij the *disagreement* weight of the pair of
categories. The weights come from the full scale of the plan (e.g. 0…3), never from the scores
that happen to occur: :func:`disagreement` is the one definition, on category ranks, and both the
float κ (numpy) and the exact κ (fractions, which the verdict's gate compares with its threshold)
are built from it. Everything is explained in docs/statistics.md ("Weighted kappa", "Bootstrap
intervals", "The exact gate", "Krippendorff's alpha").

Pure functions over plain data: score lists and ``rater -> item -> score`` mappings in, frozen
:class:`Agreement` values out, so every number can be checked against independent implementations
(scikit-learn, scipy, the ``krippendorff`` package). A statistic whose chance term is zero is
*undefined*: ``value=None`` plus a reason, never NaN. Malformed input (a score outside the scale,
lists of different length, an unknown weighting) is a caller bug and raises :class:`ValueError`.

numpy and scipy are imported here and in analysis.py only; the verdict and the pre-commit hook
never import this module.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt

from aoven_git.numfmt import brief, brief_near

Weights = Literal["none", "linear", "quadratic"]
Level = Literal["nominal", "ordinal", "interval"]
CiMethod = Literal["BCa", "percentile"]
Pair = tuple[str, str]
G = TypeVar("G", bound=Hashable)

DEFAULT_SEED = 20260426
#: The interval method: measured and chosen in docs/statistics.md ("Bootstrap intervals").
DEFAULT_CI_METHOD: CiMethod = "BCa"
_WEIGHTS: tuple[str, ...] = ("none", "linear", "quadratic")
_LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval")
_CI_METHODS: tuple[str, ...] = ("BCa", "percentile")
#: Elements per temporary array of the bootstrap (4 MB of float64): scipy keeps several
#: pairs × resamples arrays per call and the statistic several rows × pairs × categories arrays
#: per chunk, so both are sliced to this size and memory stays flat however large the study.
_BUDGET = 2**19

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Agreement:
    """One agreement statistic.

    ``value`` is ``None`` when the statistic is undefined, and ``reason`` then says why in words
    a rater understands. ``exact`` is the same κ as a fraction when it was computed exactly.
    ``n`` is the number of items used. ``ci`` is the bootstrap interval (``ci_method`` says
    which), ``None`` when not asked for or not computable — ``ci_reason`` then says why.
    """

    value: float | None
    reason: str | None
    n: int
    ci: tuple[float, float] | None = None
    exact: Fraction | None = None
    ci_method: CiMethod | None = None
    ci_reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None


def scale_weights(nominal: bool, weights: str) -> Weights:
    """The weights agreement uses on a scale: none on a nominal (labelled) scale, whatever the
    plan's `rules.kappa.weights` says — labels have no distance, so partial credit would be
    invented (docs/statistics.md, "Labels and replicates"); the plan's weights otherwise."""
    return "none" if nominal else weights  # type: ignore[return-value]


def alpha_level(nominal: bool) -> Level:
    """Krippendorff's level of measurement: nominal on a labelled scale, else ordinal."""
    return "nominal" if nominal else "ordinal"


def pair_label(a: str, b: str) -> str:
    """The key of a rater pair in the report JSON (``"r1~r2"``)."""
    return f"{a}~{b}"


# --------------------------------------------------------------------------- the scale and weights


def disagreement(i: int, j: int, weights: str) -> int:
    """Disagreement between the categories of rank ``i`` and ``j`` on the full scale, as an integer.

    ``none``: 0 on the diagonal, 1 elsewhere; ``linear``: |i−j|; ``quadratic``: (i−j)². The
    agreement weight is w_ij = 1 − d_ij / d_max (quadratic: 1 − (i−j)²/(K−1)²); the scaling by
    d_max cancels in κ, and integers make "expected disagreement is zero" an exact test.
    """
    if weights == "none":
        return int(i != j)
    if weights == "linear":
        return abs(i - j)
    if weights == "quadratic":
        return (i - j) ** 2
    raise ValueError(f"weights must be one of {', '.join(_WEIGHTS)}; got {weights!r}")


@lru_cache(maxsize=16)
def _disagreement_matrix(k: int, weights: str) -> IntArray:
    """The k×k matrix of :func:`disagreement` (read-only, cached per scale and weighting)."""
    out = np.array([[disagreement(i, j, weights) for j in range(k)] for i in range(k)], dtype=np.int64)
    out.setflags(write=False)
    return out


def _weights_matrix(k: int, weights: str) -> IntArray:
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(_WEIGHTS)}; got {weights!r}")
    return _disagreement_matrix(k, weights)


def _categories(categories: Sequence[int]) -> IntArray:
    """The scale as a sorted int array; rejects what would make weights meaningless."""
    values = list(categories)
    if not values:
        raise ValueError("categories must list at least one score")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"categories must be integers, got {v!r}")
    cats = np.asarray(sorted(int(v) for v in values), dtype=np.int64)
    if len(np.unique(cats)) != len(cats):
        raise ValueError(f"categories must be distinct, got {list(values)!r}")
    return cats


def _codes(scores: Sequence[int] | npt.ArrayLike, cats: IntArray, who: str) -> IntArray:
    """Ranks of ``scores`` on the scale ``cats``; raises on a score that is not on it."""
    arr = np.asarray(scores)
    if arr.ndim != 1:
        raise ValueError(f"{who} must be a flat sequence of scores")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{who} must contain integer scores, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    pos = np.minimum(np.searchsorted(cats, arr), len(cats) - 1)
    bad = cats[pos] != arr
    if bad.any():
        offending = sorted({int(x) for x in arr[bad]})
        raise ValueError(f"{who} has scores {offending} outside the categories {cats.tolist()}")
    return pos.astype(np.int64, copy=False)


# --------------------------------------------------------------------------- Cohen's κ


def _kappa_from_codes(ca: IntArray, cb: IntArray, cats: IntArray, d: IntArray) -> Agreement:
    """κ of two aligned code vectors, exactly: 1 − N·Σd·O / Σd·r·c on integer counts."""
    n, k = len(ca), len(cats)
    if n == 0:
        return Agreement(None, "no items were scored by both raters", 0)
    if k < 2:
        return Agreement(None, "the scale has a single category, so κ is 0/0", n)
    table = np.bincount(ca * k + cb, minlength=k * k).reshape(k, k)
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    observed = int((d * table).sum())  # Σ d_ij·O_ij (counts)
    expected = int(rows @ d @ cols)  # Σ d_ij·r_i·c_j (= N·Σ d_ij·E_ij)
    if expected == 0:
        return Agreement(None, _same_score_reason(rows, cols, cats), n)
    exact = 1 - Fraction(n * observed, expected)
    return Agreement(float(exact), None, n, exact=exact)


def _same_score_reason(rows: IntArray, cols: IntArray, cats: IntArray) -> str:
    used_a, used_b = np.flatnonzero(rows), np.flatnonzero(cols)
    if len(used_a) == 1 and len(used_b) == 1 and used_a[0] == used_b[0]:
        score = int(cats[used_a[0]])
        return f"both raters gave every item the same score ({score}), so chance agreement is total"
    return "expected disagreement is zero, so κ is 0/0"


def _paired(
    a: Sequence[int], b: Sequence[int], categories: Sequence[int], weights: str
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Checked codes of two raters' scores on the same items, the scale and the weights."""
    cats = _categories(categories)
    d = _weights_matrix(len(cats), weights)
    ca, cb = _codes(a, cats, "a"), _codes(b, cats, "b")
    if len(ca) != len(cb):
        raise ValueError(f"a and b must score the same items: {len(ca)} vs {len(cb)} scores")
    return cats, ca, cb, d


def weighted_kappa(
    a: Sequence[int], b: Sequence[int], *, categories: Sequence[int], weights: Weights
) -> Agreement:
    """Cohen's κ_w between two raters' scores of the same items (``a[i]`` and ``b[i]``).

    ``exact`` holds κ as a fraction and ``value`` is its correctly rounded float. Undefined when
    there are no items or the expected disagreement is zero (both raters constant at one score).
    """
    cats, ca, cb, d = _paired(a, b, categories, weights)
    return _kappa_from_codes(ca, cb, cats, d)


def exact_kappa(
    pairs: Sequence[tuple[int, int]], *, categories: Sequence[int], weights: str
) -> Fraction | None:
    """κ_w of ``(a, b)`` score pairs as an exact fraction, ``None`` when undefined.

    The verdict's gate compares κ with the threshold exactly: a float κ of a study sitting on
    0.6 can come out as 0.59999…, which would silently drop a dimension.
    """
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    return weighted_kappa(a, b, categories=categories, weights=weights).exact  # type: ignore[arg-type]


def kappa_ci(
    a: Sequence[int],
    b: Sequence[int],
    *,
    categories: Sequence[int],
    weights: Weights,
    n_resamples: int = 1000,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
    method: CiMethod = DEFAULT_CI_METHOD,
) -> tuple[float, float] | None:
    """Bootstrap interval of :func:`weighted_kappa` for one pair (see :func:`pairwise_kappas`);
    ``None`` when κ or the interval is undefined."""
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    _paired(a, b, categories, weights)
    ratings = {"a": dict(enumerate(a)), "b": dict(enumerate(b))}
    pairs = pairwise_kappa(ratings, categories=categories, weights=weights, bootstrap=n_resamples,
                           seed=seed, confidence=confidence, method=method)
    return pairs[("a", "b")].ci


# --------------------------------------------------------------------------- many raters


def _score_matrix(
    ratings: Mapping[str, Mapping[Hashable, int]], cats: IntArray
) -> tuple[list[str], IntArray]:
    """Raters × items matrix of category ranks, −1 where a rater did not score the item.

    Items are indexed in first-seen order across raters (keys only have to be hashable).
    """
    raters = list(ratings)
    index: dict[Hashable, int] = {}
    for scores in ratings.values():
        for item in scores:
            index.setdefault(item, len(index))
    matrix = np.full((len(raters), len(index)), -1, dtype=np.int64)
    for r, rater in enumerate(raters):
        scores = ratings[rater]
        if scores:
            cols = np.fromiter((index[item] for item in scores), dtype=np.int64, count=len(scores))
            matrix[r, cols] = _codes(list(scores.values()), cats, f"rater {rater!r}")
    return raters, matrix


def pairwise_kappa(
    ratings: Mapping[str, Mapping[Hashable, int]],
    *,
    categories: Sequence[int],
    weights: Weights,
    bootstrap: int = 0,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
    method: CiMethod = DEFAULT_CI_METHOD,
) -> dict[Pair, Agreement]:
    """κ for every unordered rater pair over the items both scored (one group of
    :func:`pairwise_kappas`)."""
    groups = pairwise_kappas(
        {0: ratings}, categories=categories, weights=weights, bootstrap=bootstrap, seed=seed,
        confidence=confidence, method=method,
    )
    return groups[0]


def pairwise_kappas(
    groups: Mapping[G, Mapping[str, Mapping[Hashable, int]]],
    *,
    categories: Sequence[int],
    weights: Weights,
    bootstrap: int = 0,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
    method: CiMethod = DEFAULT_CI_METHOD,
) -> dict[G, dict[Pair, Agreement]]:
    """κ for every rater pair of every group (e.g. every pass × dimension), with intervals.

    Keys are ``(first, second)`` in the order raters appear in a group. With ``bootstrap > 0``
    each defined κ gets a ``bootstrap``-resample interval at ``confidence``. All pairs with the
    same number of items — usually every pair of the study — are resampled in ONE call of
    ``scipy.stats.bootstrap``; since the resample indices depend only on ``seed`` and the item
    count, a pair's interval equals that of ``scipy.stats.bootstrap`` run on the pair alone
    (items in first-seen order, ``paired=True``) and does not change when raters are added.
    """
    _check_bootstrap(bootstrap, confidence, method)
    cats = _categories(categories)
    d = _weights_matrix(len(cats), weights)
    out: dict[G, dict[Pair, Agreement]] = {}
    resampled: dict[int, _ResampleGroup] = {}
    for key, ratings in groups.items():
        raters, matrix = _score_matrix(ratings, cats)
        out[key] = _pairs_of(key, raters, matrix, cats, d, resampled if bootstrap > 0 else None)
    for group in resampled.values():
        intervals = _bootstrap(group, d, n_resamples=bootstrap, seed=seed, confidence=confidence,
                               method=method)
        for (key, pair), extra in zip(group.keys, intervals, strict=True):
            out[key][pair] = replace(out[key][pair], **extra)
    return out


def _pairs_of(
    key: Hashable,
    raters: list[str],
    matrix: IntArray,
    cats: IntArray,
    d: IntArray,
    resampled: dict[int, _ResampleGroup] | None,
) -> dict[Pair, Agreement]:
    """Every pair's κ of one group; defined pairs are registered for resampling by item count."""
    complete = (matrix >= 0).all(axis=0)
    out: dict[Pair, Agreement] = {}
    for i in range(len(raters)):
        for j in range(i + 1, len(raters)):
            both = (matrix[i] >= 0) & (matrix[j] >= 0)
            pair = (raters[i], raters[j])
            ag = _kappa_from_codes(matrix[i, both], matrix[j, both], cats, d)
            out[pair] = ag
            if resampled is None or ag.value is None:
                continue
            if ag.n < 2:
                out[pair] = replace(ag, ci_reason="a single item cannot be resampled")
                continue
            group = resampled.setdefault(ag.n, _ResampleGroup(ag.n))
            shared = bool(np.array_equal(both, complete))  # same items: share the rater's column
            ends = [group.vector((key, r) if shared else (key, pair, r), matrix[raters.index(r), both])
                    for r in pair]
            group.pairs.append((ends[0], ends[1]))
            group.keys.append((key, pair))
    return out


# --------------------------------------------------------------------------- bootstrap


def _check_bootstrap(bootstrap: int, confidence: float, method: str) -> None:
    if bootstrap < 0:
        raise ValueError(f"n_resamples must be positive, got {bootstrap}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if method not in _CI_METHODS:
        raise ValueError(f"method must be one of {', '.join(_CI_METHODS)}; got {method!r}")


@dataclass
class _ResampleGroup:
    """Pairs over the same number of items, resampled together: code vectors (deduplicated by
    key, so a rater's vector is shared by all its pairs) and the pairs indexing into them."""

    n: int
    vectors: list[IntArray] = field(default_factory=list)
    positions: dict[Hashable, int] = field(default_factory=dict)
    pairs: list[tuple[int, int]] = field(default_factory=list)
    keys: list[tuple[Hashable, Pair]] = field(default_factory=list)

    def vector(self, key: Hashable, codes: IntArray) -> int:
        if key not in self.positions:
            self.positions[key] = len(self.vectors)
            self.vectors.append(codes)
        return self.positions[key]

    def subset(self, start: int, stop: int) -> _ResampleGroup:
        """The pairs ``start:stop`` with only the vectors they use."""
        part = _ResampleGroup(self.n)
        for i, j in self.pairs[start:stop]:
            part.pairs.append((part.vector(i, self.vectors[i]), part.vector(j, self.vectors[j])))
        part.keys = self.keys[start:stop]
        return part


class _KappaStatistic:
    """The vectorised statistic ``scipy.stats.bootstrap`` calls with rows of item indices.

    Per row (a resample, a jackknife sample, or all items) a pair's κ needs its two margins and
    its observed disagreement, all linear in the item multiplicities m (how often each item was
    drawn): one product m @ X gives them for every pair at once, X holding each vector's one-hot
    codes and each pair's per-item disagreement. float32 holds these integer sums exactly below
    2**24. The output has one row per pair (extra leading dimension) and NaN where κ is
    undefined; the caller turns those into reasons.
    """

    def __init__(self, group: _ResampleGroup, d: IntArray) -> None:
        k, n, n_vec = d.shape[0], group.n, len(group.vectors)
        self.k, self.n, self.n_vectors, self.n_pairs = k, n, n_vec, len(group.pairs)
        self.dtype = np.float32 if n * max(int(d.max()), 1) < 2**24 else np.float64
        x = np.zeros((n, n_vec * k + self.n_pairs), dtype=self.dtype)
        items = np.arange(n)
        for v, codes in enumerate(group.vectors):
            x[items, v * k + codes] = 1.0
        for p, (i, j) in enumerate(group.pairs):
            x[:, n_vec * k + p] = d[group.vectors[i], group.vectors[j]]
        self.x = x
        self.totals: FloatArray | None = None
        self.d = d.astype(np.float64)
        self.left = np.array([i for i, _ in group.pairs], dtype=np.int64)
        self.right = np.array([j for _, j in group.pairs], dtype=np.int64)
        self.rows_per_chunk = max(1, _BUDGET // max(x.shape[1], self.n_pairs * k, n))

    def __call__(self, index: npt.ArrayLike, axis: int = -1) -> FloatArray:
        idx = np.asarray(index, dtype=np.int64)
        rows = idx.reshape(-1, idx.shape[-1])
        out = np.empty((self.n_pairs, rows.shape[0]), dtype=np.float64)
        for start in range(0, rows.shape[0], self.rows_per_chunk):
            stop = start + self.rows_per_chunk
            out[:, start:stop] = self._kappas(rows[start:stop])
        return out.reshape(self.n_pairs, *idx.shape[:-1])

    def _kappas(self, rows: IntArray) -> FloatArray:
        b, m = rows.shape
        offsets = (np.arange(b, dtype=np.int64) * self.n)[:, None]
        counts = np.bincount((rows + offsets).ravel(), minlength=b * self.n).reshape(b, self.n)
        sums = self._sums(counts, m)  # rows × columns
        split = self.n_vectors * self.k
        margins = sums[:, :split].reshape(b, self.n_vectors, self.k)
        observed = sums[:, split:]  # rows × pairs: Σ d·O
        weighted = margins @ self.d  # Σ_i r_i·d_ij, per vector
        expected = np.einsum("bpk,bpk->bp", weighted[:, self.left], margins[:, self.right])
        kappas = np.full_like(observed, np.nan)
        ok = expected > 0
        kappas[ok] = 1.0 - m * observed[ok] / expected[ok]
        return kappas.T

    def _sums(self, counts: IntArray, m: int) -> FloatArray:
        """counts @ X as float64. BCa's jackknife hands n rows of n − 1 distinct items (each
        leaves one item out): there the product is the column totals minus the left-out item's
        row, O(n) per row instead of O(n · columns) — the same integers, so the same κ. With
        n items the jackknife was n matrix rows against 1000 resamples: most of the interval
        cost (docs/statistics.md, "Performance")."""
        if m == self.n - 1 and counts.size and int(counts.max()) <= 1:
            if self.totals is None:
                self.totals = self.x.sum(axis=0, dtype=np.float64)
            return np.subtract(self.totals[None, :], self.x[np.argmin(counts, axis=1)], dtype=np.float64)
        return (counts.astype(self.dtype) @ self.x).astype(np.float64)


def _bootstrap(
    group: _ResampleGroup, d: IntArray, *, n_resamples: int, seed: int, confidence: float, method: str
) -> list[dict[str, object]]:
    """Intervals for every pair of ``group``, in as few ``scipy.stats.bootstrap`` calls as the
    memory budget allows: scipy keeps a pairs × resamples (and pairs × items) array several times
    over, so pairs go in slices of at most ``_BUDGET`` such elements. Every call draws the same
    resample indices (same seed, same item count), so slicing changes no interval."""
    per_call = max(1, _BUDGET // max(n_resamples, group.n))
    out: list[dict[str, object]] = []
    for start in range(0, len(group.pairs), per_call):
        part = group.subset(start, start + per_call)
        out += _bootstrap_call(part, d, n_resamples=n_resamples, seed=seed, confidence=confidence,
                               method=method)
    return out


def _bootstrap_call(
    group: _ResampleGroup, d: IntArray, *, n_resamples: int, seed: int, confidence: float, method: str
) -> list[dict[str, object]]:
    """One ``scipy.stats.bootstrap`` call for the pairs of ``group``.

    The data are the item indices 0…n−1 (a paired bootstrap of the raters' scores); the rng is
    ``numpy.random.default_rng(seed)``. BCa where it is defined; where its jackknife or bias
    correction is not (e.g. every resample gives the same κ), the percentile interval of the
    same resamples. A pair whose κ is undefined in any resample gets no interval, with a reason.
    """
    from scipy import stats

    statistic = _KappaStatistic(group, d)
    items = (np.arange(group.n),)
    batch = max(1, 4 * _BUDGET // group.n)  # resample index rows per draw
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap(
            items, statistic, n_resamples=n_resamples, batch=batch, vectorized=True,
            confidence_level=confidence, method=method, rng=np.random.default_rng(seed),
        )
        low, high = (np.atleast_1d(v) for v in result.confidence_interval)
        percentile = None
        if method == "BCa" and not (np.isfinite(low) & np.isfinite(high)).all():
            percentile = stats.bootstrap(
                items, statistic, n_resamples=0, bootstrap_result=result, vectorized=True,
                confidence_level=confidence, method="percentile",
            ).confidence_interval
    undefined = np.isnan(np.atleast_2d(result.bootstrap_distribution)).sum(axis=1)
    out: list[dict[str, object]] = []
    for p in range(len(group.pairs)):
        if undefined[p]:
            out.append({"ci_reason": _undefined_resamples(int(undefined[p]), n_resamples)})
        elif math.isfinite(low[p]) and math.isfinite(high[p]):
            out.append({"ci": (float(low[p]), float(high[p])), "ci_method": method})
        else:
            assert percentile is not None
            lo, hi = np.atleast_1d(percentile.low)[p], np.atleast_1d(percentile.high)[p]
            out.append({"ci": (float(lo), float(hi)), "ci_method": "percentile"})
    return out


def _undefined_resamples(count: int, total: int) -> str:
    return (
        f"κ is undefined in {count} of {total} bootstrap resamples (both raters at one score "
        "throughout), so no interval is given"
    )


# --------------------------------------------------------------------------- aggregate and gate


def _combine(values: Sequence[Fraction], how: str) -> Fraction:
    """The aggregate of pairwise κ: the minimum, or the mean (Light's κ)."""
    return min(values) if how == "min" else sum(values, Fraction(0)) / len(values)


def aggregate_kappa(
    pairs: Mapping[Pair, Agreement],
    how: Literal["min", "mean"],
    *,
    undefined: Literal["exclude", "include"] = "exclude",
) -> Agreement:
    """One κ for a dimension from its pairwise κ: the minimum, or the mean (Light's κ).

    ``undefined: exclude`` (default) treats an undefined pair as below any threshold, so the
    aggregate is undefined and its reason names every undefined pair; averaging over the defined
    pairs instead would let a pair without usable signal vanish and lift the dimension.
    ``include`` leaves undefined pairs out. No pairs at all is undefined. Computed on the exact
    values when every pair has one (then ``exact`` is set); ``n`` is the smallest item count of
    the pairs used. No interval.
    """
    if how not in ("min", "mean"):
        raise ValueError(f"how must be 'min' or 'mean', got {how!r}")
    if undefined not in ("exclude", "include"):
        raise ValueError(f"undefined must be 'exclude' or 'include', got {undefined!r}")
    if not pairs:
        return Agreement(None, "fewer than two raters, so there is no pair to compare", 0)
    bad = [(key, ag) for key, ag in pairs.items() if ag.value is None]
    good = [ag for ag in pairs.values() if ag.value is not None]
    if bad and undefined == "exclude":
        detail = "; ".join(f"{pair_label(*key)}: {ag.reason}" for key, ag in bad)
        return Agreement(None, f"κ is undefined for {detail}", min(ag.n for _, ag in bad))
    if not good:
        return Agreement(None, "κ is undefined for every rater pair", 0)
    values = [ag.exact if ag.exact is not None else Fraction(ag.value or 0.0) for ag in good]
    combined = _combine(values, how)
    exact = combined if all(ag.exact is not None for ag in good) else None
    return Agreement(float(combined), None, min(ag.n for ag in good), exact=exact)


@dataclass(frozen=True)
class KappaGate:
    """Whether a dimension counts toward the verdict, decided exactly."""

    counts: bool
    value: Fraction | None  # the plan's aggregate, exact
    reason: str | None  # why it does not count (or why it counts although undefined)


def kappa_gate(
    pairs: Mapping[Pair, Fraction | None],
    *,
    threshold: Fraction,
    aggregate: str = "min",
    undefined: str = "exclude",
    name: str = "kappa",
) -> KappaGate:
    """Does a dimension count? Aggregate the exact pairwise κ, then compare with the threshold.

    ``undefined: exclude`` treats any undefined pair as below the threshold; ``include`` ignores
    undefined pairs, and a dimension whose every pair is undefined (raters constant at the same
    score: agreement, not noise) counts. With no pair at all nothing was measured: never counts.
    ``name`` is the coefficient the reasons speak of: the same gate serves any pairwise
    coefficient the plan gates on (``rules.kappa.coefficient``: Gwet's AC, Brennan–Prediger).
    """
    if not pairs:
        return KappaGate(False, None, f"{name} undefined: fewer than two raters scored this pass")
    bad = [p for p, v in pairs.items() if v is None]
    good = [v for v in pairs.values() if v is not None]
    if bad and undefined == "exclude":
        names = ", ".join(pair_label(a, b) for a, b in bad)
        return KappaGate(False, None, f"{name} undefined for {names} (treated as below {brief(threshold)})")
    if not good:
        return KappaGate(
            True, None, f"{name} undefined for every pair; counted because rules.kappa.undefined is include"
        )
    value = _combine(good, aggregate)
    if value >= threshold:
        return KappaGate(True, value, None)
    return KappaGate(False, value, f"{name} {brief_near(value, threshold)} below {brief(threshold)}")


# --------------------------------------------------------------------------- Krippendorff


def _value_counts(matrix: IntArray, k: int) -> IntArray:
    """Items × categories: how many raters gave each item each score."""
    counts = np.zeros((matrix.shape[1], k), dtype=np.int64)
    for row in matrix:
        scored = np.flatnonzero(row >= 0)
        np.add.at(counts, (scored, row[scored]), 1)
    return counts


def _alpha_delta(level: str, cats: IntArray, n_c: FloatArray) -> FloatArray:
    """Krippendorff's difference function δ²(c, k) for the level of measurement."""
    k = len(cats)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "interval":
        v = cats.astype(np.float64)
        return (v[:, None] - v[None, :]) ** 2
    cum = np.concatenate(([0.0], np.cumsum(n_c)))
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    between = cum[hi + 1] - cum[lo]  # Σ_{g=lo..hi} n_g
    return (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2


def krippendorff_alpha(
    ratings: Mapping[str, Mapping[Hashable, int]],
    *,
    categories: Sequence[int],
    level: Level = "ordinal",
) -> Agreement:
    """Krippendorff's α over all raters, with missing ratings allowed.

    From the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"):
    each item scored by m ≥ 2 raters contributes its m(m−1) ordered value pairs with weight
    1/(m−1); items with fewer than two ratings are not pairable. α = 1 − (n−1)·Σ o·δ / Σ n_c·δ·n_k.
    Ordinal δ uses the coincidence margins (unused categories have n_g = 0), interval δ the
    values. ``n`` is the number of pairable items.
    """
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {', '.join(_LEVELS)}; got {level!r}")
    cats = _categories(categories)
    _, matrix = _score_matrix(ratings, cats)
    counts = _value_counts(matrix, len(cats))
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    units = int(pairable.sum())
    if units == 0:
        return Agreement(None, "no item was scored by two or more raters", 0)
    nu = counts[pairable].astype(np.float64)
    weighted = nu / (m_u[pairable] - 1.0)[:, None]
    coincidence = weighted.T @ nu - np.diag(weighted.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    if np.count_nonzero(n_c) < 2:  # n_c are integers: one used category means δ-expected is 0
        only = int(cats[int(np.argmax(n_c))])
        reason = f"every pairable rating is the same score ({only}), so expected disagreement is 0"
        return Agreement(None, reason, units)
    delta = _alpha_delta(level, cats, n_c)
    observed = float((coincidence * delta).sum())
    expected = float(n_c @ delta @ n_c)
    if expected <= 0.0:  # pragma: no cover - impossible once two categories are used
        return Agreement(None, "expected disagreement is zero, so α is 0/0", units)
    return Agreement(_finite(1.0 - (n_c.sum() - 1.0) * observed / expected), None, units)


def _finite(x: float) -> float:
    value = float(x)
    if not math.isfinite(value):  # pragma: no cover - guarded by the exact zero tests
        raise ArithmeticError(f"non-finite agreement value {value!r}")
    return value
