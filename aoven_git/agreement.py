"""Inter-rater agreement statistics (SPEC §6): weighted Cohen's κ, bootstrap intervals,
pairwise / aggregate κ and Krippendorff's α.

Pure functions over plain data: score lists and ``rater -> item -> score`` mappings in,
frozen :class:`Agreement` values out. No plan objects, no git, no I/O, so every number here
can be checked against independent implementations (scikit-learn, R ``irr``, the
``krippendorff`` package) without building a study.

Conventions that the tests pin down:

* Categories are the *full* scale of the plan (e.g. ``(0, 1, 2, 3)``), never the labels
  that happen to occur. Building the scale from observed labels silently closes gaps: if
  nobody used 2, the labels (0, 1, 3) put 1 and 3 one step apart instead of two, and the
  weighted κ changes (an unused point at either *end* only rescales every weight and
  cancels). R ``irr`` does this; it is how wrong κ get published.
* κ weights treat the categories as equally spaced ordered levels (their rank in the sorted
  list), as scikit-learn's ``labels=`` and R ``irr``'s factor levels do. For the plan's
  contiguous integer scale rank and value coincide. Krippendorff's interval α uses the
  values themselves, as Krippendorff defines it.
* A statistic whose chance term is zero (e.g. both raters constant with the same score) is
  *undefined*: ``value=None`` plus a human ``reason``. Outputs are plain Python floats,
  never numpy scalars, NaN or infinity.
* Malformed input (a score outside the categories, lists of different length, an unknown
  weighting) is a caller bug, not study data, so it raises :class:`ValueError` with a clear
  message; score files are validated against the scale long before they reach this module.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import numpy as np
import numpy.typing as npt

Weights = Literal["none", "linear", "quadratic"]
Level = Literal["nominal", "ordinal", "interval"]

DEFAULT_SEED = 20260426
_WEIGHTS: tuple[str, ...] = ("none", "linear", "quadratic")
_LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval")

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Agreement:
    """One agreement statistic.

    ``value`` is ``None`` when the statistic is undefined, and ``reason`` then says why in
    words a rater understands; ``reason`` is ``None`` whenever ``value`` is a number.
    ``n`` is the number of items the statistic used. ``ci`` is a percentile bootstrap
    interval at the requested confidence (95 % by default), ``None`` when not computed or
    not computable.
    """

    value: float | None
    reason: str | None
    n: int
    ci: tuple[float, float] | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None


def pair_label(a: str, b: str) -> str:
    """The key SPEC §8 uses for a rater pair in JSON (``"r1~r2"``)."""
    return f"{a}~{b}"


# --------------------------------------------------------------------------- helpers


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
    """Positions of ``scores`` in ``cats``; raises on a score that is not on the scale."""
    arr = np.asarray(scores)
    if arr.ndim != 1:
        raise ValueError(f"{who} must be a flat sequence of scores")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        # Python ints arrive as int64; anything else (floats, strings, bools, None) is a bug.
        raise ValueError(f"{who} must contain integer scores, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    pos = np.searchsorted(cats, arr)
    pos_clipped = np.minimum(pos, len(cats) - 1)
    bad = cats[pos_clipped] != arr
    if bad.any():
        offending = sorted({int(x) for x in arr[bad]})
        raise ValueError(f"{who} has scores {offending} outside the categories {cats.tolist()}")
    return pos_clipped.astype(np.int64, copy=False)


def _disagreement_weights(k: int, weights: str) -> IntArray:
    """Integer disagreement weights d_ij (agreement weight w_ij = 1 - d_ij / d_max).

    Kept as integers so that "expected disagreement is zero" is an exact test rather than a
    floating-point comparison; the scaling by d_max cancels in κ = 1 - Σd·O / Σd·E.
    """
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(_WEIGHTS)}; got {weights!r}")
    i = np.arange(k, dtype=np.int64)
    diff = i[:, None] - i[None, :]
    if weights == "none":
        return (diff != 0).astype(np.int64)
    if weights == "linear":
        return np.abs(diff)
    return diff * diff


def _table(ca: IntArray, cb: IntArray, k: int) -> IntArray:
    """kxk confusion counts: rows rater a, columns rater b."""
    return np.bincount(ca * k + cb, minlength=k * k).reshape(k, k)


def _same_score_reason(table: IntArray, cats: IntArray) -> str:
    rows = np.flatnonzero(table.sum(axis=1))
    cols = np.flatnonzero(table.sum(axis=0))
    if len(rows) == 1 and len(cols) == 1 and rows[0] == cols[0]:
        return (
            f"both raters gave every item the same score ({int(cats[rows[0]])}), so chance agreement is total"
        )
    return "expected disagreement is zero, so κ is 0/0"


def _kappa_from_table(table: IntArray, d: IntArray, cats: IntArray) -> Agreement:
    n = int(table.sum())
    if n == 0:
        return Agreement(None, "no items were scored by both raters", 0)
    if len(cats) < 2:
        return Agreement(None, "the scale has a single category, so κ is 0/0", n)
    rows = table.sum(axis=1)
    cols = table.sum(axis=0)
    observed = int((d * table).sum())  # Σ d_ij·O_ij   (counts)
    expected = int(rows @ d @ cols)  # Σ d_ij·r_i·c_j  (= n · Σ d_ij·E_ij)
    if expected == 0:
        return Agreement(None, _same_score_reason(table, cats), n)
    return Agreement(_finite(1.0 - n * observed / expected), None, n)


def _finite(x: float) -> float:
    value = float(x)
    if not math.isfinite(value):  # pragma: no cover - guarded by the exact zero tests
        raise ArithmeticError(f"non-finite agreement value {value!r}")
    return value


# --------------------------------------------------------------------------- Cohen's κ


def _paired(
    a: Sequence[int], b: Sequence[int], categories: Sequence[int], weights: Weights
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Checked category codes of two raters' scores on the same items, and the disagreement
    weights: what both the point estimate and its interval start from."""
    cats = _categories(categories)
    ca = _codes(a, cats, "a")
    cb = _codes(b, cats, "b")
    if len(ca) != len(cb):
        raise ValueError(f"a and b must score the same items: {len(ca)} vs {len(cb)} scores")
    return cats, ca, cb, _disagreement_weights(len(cats), weights)


def weighted_kappa(
    a: Sequence[int],
    b: Sequence[int],
    *,
    categories: Sequence[int],
    weights: Weights,
) -> Agreement:
    """Cohen's κ between two raters' scores of the same items (``a[i]`` and ``b[i]``).

    Weights come from the full category list: quadratic ``w = 1 - (i-j)²/(K-1)²``,
    linear ``w = 1 - |i-j|/(K-1)``, ``none`` the identity, with ``i, j`` the ranks of the
    two scores in the sorted categories and ``K`` their number (so ``K-1 = max-min`` on a
    contiguous scale). Undefined when there are no items or when the expected disagreement
    is zero (both raters constant at the same score).
    """
    cats, ca, cb, d = _paired(a, b, categories, weights)
    return _kappa_from_table(_table(ca, cb, len(cats)), d, cats)


@lru_cache(maxsize=4)
def _resample_counts(n: int, n_resamples: int, seed: int) -> npt.NDArray[np.float32]:
    """R x n multiplicities: how often each of n items is drawn in each bootstrap resample.

    One index matrix per (n, R, seed), drawn with replacement and shared by every pair that
    has n items, so a call over 190 pairs resamples once; cached (read-only) because every
    dimension of a study usually has the same item count. float32 holds the integer counts
    exactly and halves the cost of the matrix product that consumes it.
    """
    rng = np.random.default_rng(seed)
    index = rng.integers(0, n, size=(n_resamples, n))
    offsets = (np.arange(n_resamples, dtype=np.int64) * n)[:, None]
    counts = np.bincount((index + offsets).ravel(), minlength=n_resamples * n)
    out = counts.reshape(n_resamples, n).astype(np.float32)
    out.setflags(write=False)
    return out


def _bootstrap_pairs(
    vectors: Sequence[IntArray],
    pairs: Sequence[tuple[int, int]],
    d: IntArray,
    *,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> list[tuple[float, float] | None]:
    """Percentile intervals of κ for many rater pairs over the same number n of items.

    ``vectors`` are category codes over n items (one per rater, or per rater and item subset);
    ``pairs`` index into them. Each resample redraws the n items with replacement
    (multiplicity matrix M, R x n). A pair's κ only needs, per resample, its two margins and
    its observed disagreement, all linear in the multiplicities: one matrix product M @ X
    yields them for every pair at once, X holding each vector's one-hot codes (shared by all
    pairs of that rater) and each pair's per-item disagreement weight. Resamples with an
    undefined κ are dropped; a pair gets ``None`` when fewer than half of them are defined.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if not pairs:
        return []
    k = d.shape[0]
    n = len(vectors[0])
    # float32 sums of integers are exact below 2**24; fall back to float64 beyond that.
    dtype = np.float32 if n * max(int(d.max()), 1) < 2**24 else np.float64
    x = np.zeros((n, len(vectors) * k + len(pairs)), dtype=dtype)
    items = np.arange(n)
    for v, codes in enumerate(vectors):
        x[items, v * k + codes] = 1.0
    first_pair_col = len(vectors) * k
    for p, (i, j) in enumerate(pairs):
        x[:, first_pair_col + p] = d[vectors[i], vectors[j]]
    counts = _resample_counts(n, n_resamples, seed).astype(dtype, copy=False)
    sums = np.ascontiguousarray((x.T @ counts.T).astype(np.float64))  # columns x R
    margins = sums[:first_pair_col].reshape(len(vectors), k, n_resamples)  # vector x cat x R
    observed = sums[first_pair_col:]  # pairs x R
    left = np.array([i for i, _ in pairs])
    right = np.array([j for _, j in pairs])
    weighted = np.einsum("ij,vir->vjr", d.astype(np.float64), margins)  # Σ_i d_ij·r_i
    expected = (weighted[left] * margins[right]).sum(axis=1)  # pairs x R, integer-valued
    valid = expected > 0
    kappas = 1.0 - n * observed / np.where(valid, expected, 1.0)
    tail = (1.0 - confidence) / 2.0
    quantiles = [tail, 1.0 - tail]
    out: list[tuple[float, float] | None] = [None] * len(pairs)
    complete = valid.all(axis=1)
    if complete.any():  # the usual case, one vectorised quantile over all such pairs
        rows = np.flatnonzero(complete)
        lo, hi = np.quantile(kappas[rows], quantiles, axis=1)
        for r, a, b in zip(rows, lo, hi, strict=True):
            out[r] = (_finite(a), _finite(b))
    for p in np.flatnonzero(~complete):
        ok = valid[p]
        if int(ok.sum()) * 2 >= n_resamples:
            a, b = np.quantile(kappas[p, ok], quantiles)
            out[p] = (_finite(a), _finite(b))
    return out


def kappa_ci(
    a: Sequence[int],
    b: Sequence[int],
    *,
    categories: Sequence[int],
    weights: Weights,
    n_resamples: int = 1000,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval for :func:`weighted_kappa`, reproducible from ``seed``.

    Items are resampled with replacement ``n_resamples`` times: resample r takes the items
    ``numpy.random.default_rng(seed).integers(0, n, size=(R, n))[r]`` (vectorised numpy, see
    :func:`_bootstrap_pairs`; not ``scipy.stats.bootstrap``, so that :func:`pairwise_kappa`
    can share one index matrix across all pairs). Resamples where κ is undefined are
    dropped. ``None`` when the point estimate is undefined or fewer than half of the
    resamples give a defined κ. The interval is the (1-confidence)/2 and (1+confidence)/2
    quantiles of the resampled κ (numpy's default linear interpolation).
    """
    cats, ca, cb, d = _paired(a, b, categories, weights)
    if _kappa_from_table(_table(ca, cb, len(cats)), d, cats).value is None:
        return None
    [ci] = _bootstrap_pairs([ca, cb], [(0, 1)], d, n_resamples=n_resamples, seed=seed, confidence=confidence)
    return ci


# --------------------------------------------------------------------------- many raters


def _score_matrix(
    ratings: Mapping[str, Mapping[Hashable, int]], cats: IntArray
) -> tuple[list[str], IntArray]:
    """Raters x items matrix of category positions, -1 where a rater did not score the item.

    Items are indexed in first-seen order across raters, so no ordering of item keys is
    needed (keys only have to be hashable).
    """
    raters = list(ratings)
    index: dict[Hashable, int] = {}
    for scores in ratings.values():
        for item in scores:
            if item not in index:
                index[item] = len(index)
    matrix = np.full((len(raters), len(index)), -1, dtype=np.int64)
    for r, rater in enumerate(raters):
        scores = ratings[rater]
        if not scores:
            continue
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
) -> dict[tuple[str, str], Agreement]:
    """κ for every unordered rater pair, over the items both raters scored.

    Keys are ``(first, second)`` in the order the raters appear in ``ratings``. With
    ``bootstrap > 0`` each defined κ gets a ``bootstrap``-resample interval. The resample
    matrix depends only on ``seed`` and the pair's item count, so a pair's interval equals
    ``kappa_ci`` on that pair alone (items in the order they first appear across raters) and
    does not change when raters are added to or removed from the study.
    """
    cats = _categories(categories)
    d = _disagreement_weights(len(cats), weights)
    k = len(cats)
    raters, matrix = _score_matrix(ratings, cats)
    complete = (matrix >= 0).all(axis=0) if len(raters) else np.zeros(0, dtype=bool)
    subsets: dict[tuple[str, str], npt.NDArray[np.bool_]] = {}
    out: dict[tuple[str, str], Agreement] = {}
    for i in range(len(raters)):
        for j in range(i + 1, len(raters)):
            both = (matrix[i] >= 0) & (matrix[j] >= 0)
            key = (raters[i], raters[j])
            subsets[key] = both
            out[key] = _kappa_from_table(_table(matrix[i, both], matrix[j, both], k), d, cats)
    if bootstrap <= 0:
        return out
    # Pairs with the same item count share one resample matrix (usually: all of them), and
    # pairs over exactly the items every rater scored share each rater's code vector.
    groups: dict[int, _BootstrapGroup] = {}
    index = {rater: r for r, rater in enumerate(raters)}
    for key, ag in out.items():
        if ag.value is None:
            continue
        group = groups.setdefault(ag.n, _BootstrapGroup())
        both = subsets[key]
        shared = bool(np.array_equal(both, complete))
        ends = [group.vector(rater if shared else (key, rater), matrix[index[rater], both]) for rater in key]
        group.pairs.append((ends[0], ends[1]))
        group.keys.append(key)
    for group in groups.values():
        intervals = _bootstrap_pairs(
            group.vectors, group.pairs, d, n_resamples=bootstrap, seed=seed, confidence=confidence
        )
        for key, ci in zip(group.keys, intervals, strict=True):
            out[key] = Agreement(out[key].value, None, out[key].n, ci)
    return out


@dataclass
class _BootstrapGroup:
    """Pairs resampled together: code vectors (deduplicated by key) and the pairs using them."""

    vectors: list[IntArray] = field(default_factory=list)
    positions: dict[Hashable, int] = field(default_factory=dict)
    pairs: list[tuple[int, int]] = field(default_factory=list)
    keys: list[tuple[str, str]] = field(default_factory=list)

    def vector(self, key: Hashable, codes: IntArray) -> int:
        if key not in self.positions:
            self.positions[key] = len(self.vectors)
            self.vectors.append(codes)
        return self.positions[key]


def aggregate_kappa(
    pairs: Mapping[tuple[str, str], Agreement],
    how: Literal["min", "mean"],
    *,
    undefined: Literal["exclude", "include"] = "exclude",
) -> Agreement:
    """One κ for a dimension from its pairwise κ: the minimum, or the mean (Light's κ).

    Undefined pairs follow ``rules.kappa.undefined`` (SPEC §6):

    * ``"exclude"`` (default): an undefined pair is treated as below any threshold, so the
      aggregate is undefined — for ``min`` *and* ``mean`` — and its reason names every
      undefined pair. The verdict then excludes the dimension. Averaging over the defined
      pairs instead would let a pair with no usable signal silently vanish and could lift a
      dimension over the threshold.
    * ``"include"``: the dimension is kept; undefined pairs are left out and the min / mean
      is over the defined pairs. Undefined only if no pair is defined.

    No pairs at all (fewer than two raters) is undefined. ``n`` is the smallest item count
    among the pairs used, the weakest support behind the aggregate. No interval is computed.
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
    values = [float(ag.value) for ag in good if ag.value is not None]
    value = min(values) if how == "min" else math.fsum(values) / len(values)
    return Agreement(_finite(value), None, min(ag.n for ag in good))


# --------------------------------------------------------------------------- Krippendorff


def krippendorff_alpha(
    ratings: Mapping[str, Mapping[Hashable, int]],
    *,
    categories: Sequence[int],
    level: Level = "ordinal",
) -> Agreement:
    """Krippendorff's α over all raters, with missing ratings allowed.

    Built from the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's
    Alpha-Reliability"): each item scored by m ≥ 2 raters contributes its m(m-1) ordered
    value pairs with weight 1/(m-1); items with fewer than two ratings are not pairable and
    are ignored. Difference functions: nominal ``[c≠k]``; ordinal
    ``(Σ_{g=c..k} n_g - (n_c+n_k)/2)²`` on the coincidence margins (unused categories have
    n_g = 0 and so do not matter); interval ``(c-k)²`` on the category values.
    ``n`` is the number of pairable items. Undefined without pairable items or when all
    pairable values are equal (expected disagreement zero).
    """
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {', '.join(_LEVELS)}; got {level!r}")
    cats = _categories(categories)
    k = len(cats)
    _, matrix = _score_matrix(ratings, cats)
    if matrix.size == 0:
        return Agreement(None, "no item was scored by two or more raters", 0)
    # items x categories: how many raters gave each item each score
    counts = np.zeros((matrix.shape[1], k), dtype=np.int64)
    for row in matrix:
        scored = np.flatnonzero(row >= 0)
        np.add.at(counts, (scored, row[scored]), 1)
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    units = int(pairable.sum())
    if units == 0:
        return Agreement(None, "no item was scored by two or more raters", 0)
    nu = counts[pairable].astype(np.float64)
    inv = 1.0 / (m_u[pairable] - 1.0)
    coincidence = (nu * inv[:, None]).T @ nu - np.diag((nu * inv[:, None]).sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n_total = n_c.sum()

    if level == "nominal":
        delta = 1.0 - np.eye(k)
    elif level == "interval":
        v = cats.astype(np.float64)
        delta = (v[:, None] - v[None, :]) ** 2
    else:
        cum = np.concatenate(([0.0], np.cumsum(n_c)))
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[hi + 1] - cum[lo]  # Σ_{g=lo..hi} n_g
        delta = (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2

    observed = float((coincidence * delta).sum())
    expected = float(n_c @ delta @ n_c)
    # Exact zero test on an integer-valued quantity: n_c are integers (coincidence margins
    # equal the number of pairable values per category), so n_c·δ·n_c is zero exactly when
    # every pairable value is the same category.
    if np.count_nonzero(n_c) < 2:
        only = int(cats[int(np.argmax(n_c))])
        return Agreement(
            None,
            f"every pairable rating is the same score ({only}), so expected disagreement is 0",
            units,
        )
    if expected <= 0.0:  # pragma: no cover - impossible once two categories are used
        return Agreement(None, "expected disagreement is zero, so α is 0/0", units)
    return Agreement(_finite(1.0 - (n_total - 1.0) * observed / expected), None, units)
