"""The report's tables as plain data, drawn by both the Markdown and the HTML renderer.

Every table is built once here from the report document (analysis.py's contract), so the two
formats cannot drift apart, and the renderers can be tested on hand-made documents. Numbers are
formatted by numfmt.py, from the exact ``*_exact`` fractions when present.

Noise is removed here too (docs/statistics.md, "Reading the report"): a column that every row
leaves empty is dropped, and a sentence that every row of a table would repeat is said once above
the table instead (:attr:`Table.notes`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from aoven_git import numfmt
from aoven_git.numfmt import DASH

VERDICT_MARKS = {
    "PASS": "🟢",
    "FAIL": "🔴",
    "INCONCLUSIVE": "🟡",
    "CONTESTED": "🟠",
    "NOT-READY": "⚪",
}


@dataclass(frozen=True)
class Cell:
    """One table cell: raw text (each renderer escapes it), plus presentation hints."""

    text: str
    tone: str | None = None  # "good" | "bad" | "warn" | "muted": colour in HTML
    mark: str = ""  # a leading symbol, used by Markdown (HTML colours instead)
    code: bool = False  # an identifier from the study: monospace
    num: bool = False  # right-aligned number

    @property
    def empty(self) -> bool:
        return self.text in ("", DASH) and not self.mark


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric: frozenset[int] = field(default_factory=frozenset)  # right-aligned columns
    notes: tuple[str, ...] = ()  # said once above the table


def pruned(table: Table, *, sentences: Iterable[int] = (), keep: Iterable[int] = (0,)) -> Table:
    """``table`` without the columns every row leaves empty; a ``sentences`` column whose every
    row says the same thing becomes a note above the table. Columns in ``keep`` always stay."""
    if not table.rows:
        return table
    kept, notes = set(keep), list(table.notes)
    drop = set()
    for col in range(len(table.headers)):
        if col in kept:
            continue
        texts = {row[col].text for row in table.rows}
        if all(row[col].empty for row in table.rows):
            drop.add(col)
        elif col in set(sentences) and len(texts) == 1:
            drop.add(col)
            notes.append(f"{table.headers[col].capitalize()} for every row: {texts.pop()}.")
    if not drop:
        return replace(table, notes=tuple(notes))
    cols = [c for c in range(len(table.headers)) if c not in drop]
    return Table(
        tuple(table.headers[c] for c in cols),
        tuple(tuple(row[c] for c in cols) for row in table.rows),
        frozenset(i for i, c in enumerate(cols) if c in table.numeric),
        tuple(notes),
    )


def _text(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _c(value: Any, **hints: Any) -> Cell:
    return Cell(_text(value), **hints)


def _n(text: str, **hints: Any) -> Cell:
    return Cell(text, num=True, **hints)


def labels(report: Mapping[str, Any]) -> tuple[str, str]:
    """The baseline and treatment condition ids."""
    cond = report.get("conditions") or {}
    return str(cond.get("baseline") or "A"), str(cond.get("treatment") or "B")


def is_design(report: Mapping[str, Any]) -> bool:
    """True for a document of a plan with criteria and decisions (docs/designs.md): it carries
    `criteria` and `decision`, and its verdict summarises the decision. A seed document has
    neither key and renders exactly as before."""
    return isinstance(report.get("criteria"), list)


def nominal(report: Mapping[str, Any]) -> bool:
    """True for a labelled (nominal) scale: the document has no means (`means` is `{}`, not a
    mapping of withheld ones), so no mean table, improvement or aggregate is shown."""
    means = report.get("means")
    return isinstance(means, Mapping) and not means


def mean_conditions(report: Mapping[str, Any]) -> tuple[str, ...]:
    """The conditions whose means the tables show: baseline and treatment for a seed document;
    for a design, every condition of `means` that the dimensions carry a `mean_<id>` for (the
    baseline and treatment when none does)."""
    a, b = labels(report)
    if not is_design(report):
        return a, b
    dims = report.get("dimensions") or []
    found = tuple(str(c) for c in report.get("means") or {} if any(f"mean_{c}" in d for d in dims))
    return found or (a, b)


def short_commit(commit: Any) -> str:
    text = str(commit or "").strip()
    return text[:7] if re.fullmatch(r"[0-9a-fA-F]{8,64}", text) else text


def describe(item: Any) -> str:
    """Text of a forced reveal or other loosely specified record (dict or string)."""
    if isinstance(item, Mapping):
        parts = [f"{k} {short_commit(item[k]) if k == 'commit' else item[k]}"
                 for k in ("rater", "pass", "round", "commit") if item.get(k) not in (None, "")]
        msg = item.get("message") or item.get("reason")
        return ", ".join(parts) + (f": {msg}" if msg else "") if parts or msg else str(dict(item))
    return _text(item)


def withheld(report: Mapping[str, Any]) -> bool:
    """True when the verdict numbers are withheld (NOT-READY): say so once, not per cell."""
    return report.get("verdict") == "NOT-READY" and report.get("improvement") is None


#: what a figure held back because the study is not ready reads as: not "undefined" (a
#: computation that failed) nor a dash (nothing there)
WITHHELD = "withheld"


def held(doc: Mapping[str, Any], value: Any, shown: str) -> str:
    """`shown`, or "withheld" when `doc` (the report, or an amendment's layer) is NOT-READY and
    computed no `value`."""
    return WITHHELD if value is None and doc.get("verdict") == "NOT-READY" else shown


# --------------------------------------------------------------------------- charts without data


#: what stands for the questions chart on a labelled scale, which has no aggregates
NOMINAL_QUESTIONS = "No chart: a labelled scale has no aggregates; each question's rate is under Criteria."


def means_missing(report: Mapping[str, Any]) -> str | None:
    """Why the means chart is left out, or None when it has data: a chart of empty bars says
    nothing, a sentence says why (docs/report.md)."""
    a, b = labels(report)
    if any(d.get(f"mean_{c}") is not None for d in report.get("dimensions") or [] for c in (a, b)):
        return None
    return ("No chart: the means are withheld while the verdict is NOT-READY." if withheld(report)
            else "No chart: no dimension has a mean.")


def questions_missing(report: Mapping[str, Any]) -> str | None:
    """Why the questions chart is left out, or None when some question has an aggregate."""
    if nominal(report):
        return NOMINAL_QUESTIONS
    a, b = labels(report)
    if any(q.get(f"aggregate_{c}") is not None for q in report.get("questions") or [] for c in (a, b)):
        return None
    return ("No chart: the aggregates are withheld while the verdict is NOT-READY." if withheld(report)
            else "No chart: no question has an aggregate.")


def kappa_missing(report: Mapping[str, Any], pass_id: str) -> str | None:
    """Why a pass's κ chart is left out — no dimension and no rater pair has a κ — or None. The
    reason is the dimensions' own (they share it: most often fewer than two raters scored)."""
    per_dim = [k or {} for k in ((report.get("kappa") or {}).get(pass_id) or {}).values()]
    if any(k.get("value") is not None or any(v is not None for v in (k.get("pairs") or {}).values())
           for k in per_dim):
        return None
    reasons = list(dict.fromkeys(str(k["reason"]) for k in per_dim if k.get("reason")))
    why = "; ".join(reasons) if reasons else "no rater pair has scored it"
    return f"No κ for pass {pass_id} yet: {why}."


# --------------------------------------------------------------------------- rules


def _rule_number(rule: Mapping[str, Any], key: str) -> str:
    """Improvement rules read as percentages, question counts as integers, the rest as numbers;
    the exact fraction follows when the decimal shown is not the value compared."""
    value, exact = rule.get(key), rule.get(f"{key}_exact")
    q = numfmt.to_fraction(value, exact)
    if q is None:
        return DASH
    rid = str(rule.get("id", "")).lower()
    if "improvement" in rid:
        return numfmt.percent(value, exact) + numfmt.exact_suffix(numfmt.shown_fixed(q * 100, 1) / 100, exact)
    if "question" in rid and q.denominator == 1:
        return str(q.numerator)
    return numfmt.fixed(value, exact, 2) + numfmt.exact_suffix(numfmt.shown_fixed(q, 2), exact)


_OUTCOME = {
    # (kind, outcome) -> (label, tone, mark); a fail rule that is "met" is what makes the verdict FAIL
    ("pass", "met"): ("met", "good", "✅"),
    ("pass", "not-met"): ("not met", "bad", "❌"),
    ("fail", "met"): ("met: fails", "bad", "⛔"),
    ("fail", "not-met"): ("not met", "good", "✅"),
}


def rules_table(report: Mapping[str, Any]) -> Table:
    rows = []
    for rule in report.get("rules") or []:
        kind, outcome = str(rule.get("kind", "")), str(rule.get("outcome", ""))
        if outcome == "not-evaluable":
            label, tone, mark = "not evaluable", "warn", "⚪"
        else:
            label, tone, mark = _OUTCOME.get((kind, outcome), (outcome or DASH, None, ""))
        rows.append((
            _c(rule.get("id"), code=True),
            _c(kind or None),
            _c(rule.get("text")),
            _n(_rule_number(rule, "value")),
            _n(_rule_number(rule, "threshold")),
            Cell(label, tone=tone, mark=mark),
            _c(rule.get("reason") or "", tone="muted"),
        ))
    table = Table(("rule", "kind", "condition", "value", "threshold", "outcome", "reason"), tuple(rows),
                  frozenset({3, 4}))
    return pruned(table, sentences=[6])


# --------------------------------------------------------------------------- means and questions


def means_table(report: Mapping[str, Any]) -> Table:
    a, b = labels(report)
    conds = mean_conditions(report)
    excluded = report.get("excluded_dimensions") or {}
    rows = []
    for dim in report.get("dimensions") or []:
        did = str(dim.get("id", ""))
        kind = str(dim.get("kind") or DASH) + (" · load" if dim.get("load") else "")
        if dim.get("counted", did not in excluded):
            status = Cell("counted", tone="good")
        else:
            status = Cell("excluded: " + str(excluded.get(did) or "does not count"), tone="bad", mark="⛔")
        muted = None if dim.get("counted", True) else "muted"
        rows.append((
            _c(did, code=True),
            _c(dim.get("name")),
            _c(kind),
            *(_n(numfmt.mean(dim.get(f"mean_{c}"), dim.get(f"mean_{c}_exact")), tone=muted) for c in conds),
            _n(numfmt.mean(dim.get("delta"), dim.get("delta_exact"), signed=True), tone=muted),
            status,
        ))
    notes = ("Means are withheld while the verdict is NOT-READY.",) if withheld(report) else ()
    table = Table(("dimension", "name", "kind", *(f"mean {c}" for c in conds), f"Δ ({b} − {a})", "status"),
                  tuple(rows), frozenset(range(3, 4 + len(conds))), notes)
    return pruned(table)


def uncertainty_sentence(report: Mapping[str, Any]) -> str | None:
    """One sentence with the descriptive bootstrap intervals over questions of both condition
    means and the improvement; None when the document has none (older, or withheld)."""
    u = report.get("uncertainty") or {}
    intervals = u.get("intervals")
    if not intervals or not u.get("bootstrap"):  # withheld, or --bootstrap 0: nothing to say
        return None
    a, b = labels(report)
    parts = []
    for key, label, fmt in ((f"mean_{a}", f"mean {a}", numfmt.mean), (f"mean_{b}", f"mean {b}", numfmt.mean),
                            ("improvement", "improvement", numfmt.percent)):
        entry = intervals.get(key) or {}
        bounds = entry.get("interval")
        shown = f"[{fmt(bounds[0])}, {fmt(bounds[1])}]" if bounds else f"none ({entry.get('reason')})"
        parts.append(f"{label} {shown}")
    level = numfmt.brief_percent(u.get("confidence") or 0.95)
    return (f"Uncertainty (descriptive, not a rule): {level} percentile bootstrap intervals over questions "
            f"({u.get('bootstrap')} resamples, seed {u.get('seed')}): " + "; ".join(parts) + ".")


def rater_means_table(report: Mapping[str, Any]) -> Table:
    """Each rater's mean per dimension and condition in the verdict pass: whose scale runs high or
    low, which the cell-by-cell disagreements do not show."""
    u = report.get("uncertainty") or {}
    means, exact = u.get("rater_means") or {}, u.get("rater_means_exact") or {}
    a, b = labels(report)
    raters = list(means)
    dims = list(next(iter(means.values()), {}))
    rows = tuple(
        (_c(d, code=True), *(_n(numfmt.mean(means[r][d].get(c), (exact.get(r) or {}).get(d, {}).get(c)))
                             for r in raters for c in (a, b)))
        for d in dims
    )
    headers = ("dimension", *(f"{r} {c}" for r in raters for c in (a, b)))
    return Table(headers, rows, frozenset(range(1, len(headers))))


def _improves(value: Any) -> Cell:
    if value is None:
        return _c(None)
    return Cell("yes", tone="good", mark="✅") if value else Cell("no", tone="muted")


def questions_table(report: Mapping[str, Any]) -> Table:
    """Per question: the plan's wording, both aggregates, Δ and how many counted dimensions improve."""
    a, b = labels(report)
    rows = []
    n_counted = len(report.get("counted_dimensions") or [])
    for q in report.get("questions") or []:
        qa, qb = q.get(f"aggregate_{a}"), q.get(f"aggregate_{b}")
        qa_x, qb_x = q.get(f"aggregate_{a}_exact"), q.get(f"aggregate_{b}_exact")
        fa, fb = numfmt.to_fraction(qa, qa_x), numfmt.to_fraction(qb, qb_x)
        delta = numfmt.mean(fb - fa, signed=True) if fa is not None and fb is not None else DASH
        improved = q.get("improved_dimensions")
        rows.append((
            _c(q.get("id"), code=True),
            _c(q.get("text") or ""),
            _n(numfmt.mean(qa, qa_x)),
            _n(numfmt.mean(qb, qb_x)),
            _n(delta),
            _n(f"{improved} of {n_counted}" if n_counted and improved is not None else _text(improved)),
            _improves(q.get("improves")),
        ))
    notes = ("Aggregates are withheld while the verdict is NOT-READY.",) if withheld(report) else ()
    table = Table(("question", "text", f"aggregate {a}", f"aggregate {b}", f"Δ ({b} − {a})",
                   "improved dimensions", "improves"), tuple(rows), frozenset({2, 3, 4, 5}), notes)
    return pruned(table)


# --------------------------------------------------------------------------- agreement


def ordered_passes(report: Mapping[str, Any]) -> list[str]:
    """The verdict pass first, then the others in report order."""
    kappa = report.get("kappa") or {}
    first = report.get("verdict_pass")
    return ([first] if first in kappa else []) + [p for p in kappa if p != first]


def pair_names(per_dim: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    for entry in per_dim.values():
        for pair in (entry or {}).get("pairs") or {}:
            if pair not in names:
                names.append(pair)
    return names


def _pair_cell(k: Mapping[str, Any], pair: str) -> Cell:
    pairs = k.get("pairs") or {}
    if pair not in pairs:
        return _n(DASH, tone="muted")
    if pairs[pair] is None:
        return Cell("undefined", tone="warn")
    iv = numfmt.interval((k.get("intervals") or {}).get(pair))
    return _n(numfmt.kappa(pairs[pair]) + (f" {iv}" if iv else ""))


def _kappa_row(did: str, k: Mapping[str, Any], pairs: list[str], gates: bool, other: str) -> tuple[Cell, ...]:
    value, counts = k.get("value"), bool(k.get("counts"))
    if gates:
        status = Cell("yes", tone="good") if counts else Cell("no", tone="bad", mark="⛔")
    else:
        status = Cell("yes", tone="good") if counts else Cell("no")
    return (
        _c(did, code=True),
        Cell(numfmt.kappa(value, k.get("reason")), num=value is not None,
             tone=None if value is not None else "warn"),
        status,
        _n(numfmt.kappa(k.get(other)) if k.get(other) is not None else DASH),
        _n(numfmt.kappa(k.get("alpha")) if k.get("alpha") is not None else DASH),
        _n(_text(k.get("n"))),
        *(_pair_cell(k, pair) for pair in pairs),
    )


def kappa_tables(report: Mapping[str, Any]) -> list[tuple[str, Table]]:
    """One κ table per pass. κ is the plan's aggregate over pairs (its other aggregate follows in
    its own column, not the same number twice). Only the verdict pass gates dimensions, so only
    its column says "counts"; another pass's column says whether κ reaches the threshold."""
    settings = report.get("kappa_settings") or {}
    aggregate = "mean" if settings.get("aggregate") == "mean" else "min"
    other = "min" if aggregate == "mean" else "mean"
    threshold = settings.get("threshold")
    reach = f"≥ {numfmt.kappa(threshold)}" if threshold is not None else "≥ threshold"
    out = []
    for pass_id in ordered_passes(report):
        per_dim = (report.get("kappa") or {}).get(pass_id) or {}
        pairs = pair_names(per_dim)
        gates = pass_id == report.get("verdict_pass")
        rows = tuple(_kappa_row(did, k or {}, pairs, gates, other) for did, k in per_dim.items())
        headers = ("dimension", f"κ ({aggregate})", "counts" if gates else reach, other, "α", "n", *pairs)
        out.append((pass_id, Table(headers, rows, frozenset({3, 4, 5}))))
    return out


def coefficient_tables(report: Mapping[str, Any]) -> dict[str, Table]:
    """Per pass, the coefficients beside κ (docs/statistics.md, "When κ misleads"): weighted
    agreement, Gwet's AC, Brennan–Prediger over all raters with their intervals, the prevalence
    index, the largest bias index over pairs, and the κ paradox flag. A document written before
    these coefficients existed has none, and gets no table."""
    settings = report.get("kappa_settings") or {}
    out = {}
    for pass_id in ordered_passes(report):
        per_dim = (report.get("kappa") or {}).get(pass_id) or {}
        rows = tuple(_coefficient_row(did, k) for did, k in per_dim.items() if (k or {}).get("coefficients"))
        if not rows:
            continue
        names = {((k or {}).get("coefficients") or {}).get("gwet", {}).get("name") for k in per_dim.values()}
        gwet = next((n for n in names if n), "AC")
        headers = ("dimension", "agreement (weighted)", gwet, "Brennan–Prediger", "prevalence index",
                   "bias index (largest pair)", "κ paradox")
        gate = _gate_note(per_dim, settings) if pass_id == report.get("verdict_pass") else None
        table = Table(headers, rows, frozenset({1, 2, 3, 4, 5}), (gate,) if gate else ())
        out[pass_id] = pruned(table, keep=(0, 1, 2, 3))
    return out


def _estimate_cell(e: Mapping[str, Any] | None) -> Cell:
    e = e or {}
    if e.get("value") is None:
        return Cell(numfmt.kappa(None, e.get("reason")), tone="warn")
    iv = numfmt.interval(e.get("ci"))
    return _n(numfmt.kappa(e.get("value")) + (f" {iv}" if iv else ""))


def _coefficient_row(did: str, k: Mapping[str, Any]) -> tuple[Cell, ...]:
    c = k.get("coefficients") or {}
    prevalence = c.get("prevalence_index") or {}
    pi = _estimate_cell(prevalence)
    if prevalence.get("value") is not None:
        pi = replace(pi, text=f"{pi.text} (score {_text(prevalence.get('category'))})")
    biases = [(abs(b["value"]), pair, b) for pair, pc in (k.get("pair_coefficients") or {}).items()
              for b in [pc.get("bias_index") or {}] if b.get("value") is not None]
    bias = _n(DASH)
    if biases:
        _, pair, worst = max(biases, key=lambda t: t[0])
        bias = replace(_estimate_cell(worst), text=f"{_estimate_cell(worst).text} ({pair})")
    paradox = k.get("paradox") or {}
    flag = Cell(str(paradox.get("reason")), tone="warn", mark="⚠️") if paradox.get("flagged") else Cell(DASH)
    return (_c(did, code=True), _estimate_cell(c.get("percent_agreement")), _estimate_cell(c.get("gwet")),
            _estimate_cell(c.get("brennan_prediger")), pi, bias, flag)


def _gate_note(per_dim: Mapping[str, Any], settings: Mapping[str, Any]) -> str | None:
    """Said above the table when the plan gates on another coefficient than Cohen's κ."""
    gates = {((k or {}).get("gate") or {}).get("coefficient") for k in per_dim.values()} - {None, "cohen"}
    if not gates:
        return None
    which = gates.pop()
    over = "Krippendorff's α over all raters" if which == "krippendorff" else (
        f"{which} per rater pair, the {settings.get('aggregate') or 'min'} over pairs")
    return (f"The plan gates dimensions on {over} (rules.kappa.coefficient: {which}), "
            f"threshold {numfmt.kappa(settings.get('threshold'))}; the counts column follows it.")


def kappa_notes(report: Mapping[str, Any], pass_id: str) -> list[str]:
    """What to keep in mind reading a pass's κ table, one sentence per kind instead of one per
    cell: κ on few items, wide intervals (the document's caveats), and missing intervals."""
    per_dim = (report.get("kappa") or {}).get(pass_id) or {}
    caveats = [c for c in report.get("caveats") or [] if c.get("pass") == pass_id]
    notes = []
    few: dict[Any, list[str]] = {}
    for c in caveats:
        if c.get("kind") == "few-items":
            few.setdefault(c.get("n"), []).append(str(c.get("dimension")))
    for n, dims in few.items():
        where = "every dimension" if dims == list(per_dim) else ", ".join(dims)
        notes.append(f"κ rests on {n} item{'s' if n != 1 else ''} for {where}: a small sample, where one "
                     "item more or less can move κ a lot.")
    wide = {str(c.get("dimension")): list(c.get("pairs") or [])
            for c in caveats if c.get("kind") == "wide-interval"}
    if wide:
        width = (report.get("kappa_settings") or {}).get("caveat_max_width", 0.5)
        notes.append(f"The interval of κ is wider than {numfmt.brief(width)} for {_where(per_dim, wide)}.")
    missing: dict[str, list[str]] = {}
    for did, k in per_dim.items():
        for pair, why in ((k or {}).get("interval_reasons") or {}).items():
            if why and (k.get("pairs") or {}).get(pair) is not None:
                missing.setdefault(str(did), []).append(pair)
    if missing:
        notes.append(f"No interval for {_where(per_dim, missing)}: κ is undefined in some bootstrap "
                     "resamples (both raters gave every item drawn the same score), so the resampled "
                     "distribution has no quantiles.")
    return notes


def _where(per_dim: Mapping[str, Any], pairs: Mapping[str, list[str]]) -> str:
    """``D3 (a~b), D7 (every pair)``: dimensions with the pairs concerned."""
    parts = []
    for did, names in pairs.items():
        defined = [p for p, v in ((per_dim.get(did) or {}).get("pairs") or {}).items() if v is not None]
        parts.append(f"{did} ({'every pair' if names == defined and len(names) > 1 else ', '.join(names)})")
    return ", ".join(parts)


def caveat_summary(report: Mapping[str, Any]) -> str | None:
    """One line for the verdict block: the verdict pass's caveats, by kind, naming dimensions."""
    vp = report.get("verdict_pass")
    kinds: dict[str, list[str]] = {}
    for c in report.get("caveats") or []:
        if c.get("pass") == vp:
            kinds.setdefault(str(c.get("kind")), []).append(str(c.get("dimension")))
    if not kinds:
        return None
    words = {"few-items": "κ on few items", "wide-interval": "wide κ interval"}
    parts = [f"{words.get(kind, kind)} for {', '.join(dims)}" for kind, dims in kinds.items()]
    return f"agreement caveats in the verdict pass {vp}: " + "; ".join(parts) + " (see Agreement)"


# --------------------------------------------------------------------------- raters


def excluded_raters(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Optional raters whose seal violations exclude their sheets: ``{rater, codes, messages}``
    from the document, or from verify-seal's part of it (codes only) in an older document."""
    entries = report.get("excluded_raters")
    if not isinstance(entries, list):
        entries = (report.get("seals") or {}).get("excluded_raters") or []
    out = []
    for e in entries:
        if isinstance(e, Mapping) and e.get("rater") is not None:
            out.append({"rater": str(e["rater"]), "codes": [str(c) for c in e.get("codes") or []],
                        "messages": [str(m) for m in e.get("messages") or [] if m]})
    return out


def excluded_ids(report: Mapping[str, Any]) -> set[str]:
    return {e["rater"] for e in excluded_raters(report)}


def raters_table(report: Mapping[str, Any]) -> Table:
    """Which raters each pass needs and who scored: required raters missing from a pass are
    pending (they block the verdict); optional ones are simply absent; optional raters with seal
    violations are excluded (their sheets count nowhere)."""
    scored = report.get("raters") or {}
    pending = report.get("pending_raters") or {}
    excluded = excluded_ids(report)
    roster = list(report.get("rater_roster") or [])
    known = {str(r.get("id")) for r in roster}
    for rater in [*_raters(report, []), *sorted(excluded)]:
        if rater not in known:
            known.add(rater)
            roster.append({"id": rater, "name": None, "required": None})
    passes = list(scored)
    rows = []
    for r in roster:
        rid, required = str(r.get("id")), r.get("required")
        role = {True: Cell("required"), False: Cell("optional", tone="muted")}.get(required, _c(None))
        row = [_c(rid, code=True), _c(r.get("name") or ""), role]
        for p in passes:
            if rid in excluded:
                row.append(Cell("excluded", tone="bad", mark="⛔"))
            elif rid in (scored.get(p) or []):
                row.append(Cell("scored", tone="good", mark="✅"))
            elif rid in (pending.get(p) or []):
                row.append(Cell("pending", tone="bad", mark="⏳"))
            else:
                row.append(Cell("not scored", tone="muted"))
        rows.append(tuple(row))
    headers = ("rater", "name", "role", *(f"pass {p}" for p in passes))
    notes = ("Excluded: an optional rater whose seal violations leave their sheets out of agreement "
             "and consensus (see Seals); the verdict is not blocked by them.",) if excluded else ()
    return pruned(Table(headers, tuple(rows), notes=notes))


def _raters(report: Mapping[str, Any], cells: Iterable[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    for group in (report.get("raters") or {}).values():
        for r in group or []:
            if r not in names:
                names.append(r)
    for cell in cells:
        for r in cell.get("scores") or {}:
            if r not in names:
                names.append(r)
    return names


# --------------------------------------------------------------------------- cells


def _score(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return numfmt.fixed(value, None, 2) if isinstance(value, float) else _text(value)


def _cells_with_listed_ids(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The document's disagreeing cells, plus any flagged or contested id listed without one."""
    cells = list(report.get("cells") or [])
    flagged_ids = set(report.get("flagged_cells") or [])
    contested_ids = set(report.get("contested_cells") or [])
    known = {c.get("cell") for c in cells}
    for cid in sorted((flagged_ids | contested_ids) - known):
        cells.append({"cell": cid, "pass": None, "scores": {}, "flagged": cid in flagged_ids,
                      "resolution": "contested" if cid in contested_ids else "missing", "value": None})
    return cells


_RESOLUTION = {"consensus": ("good", ""), "agreed": ("good", ""), "contested": ("warn", "⚖️"),
               "missing": ("bad", "❗")}


def cell_tables(report: Mapping[str, Any]) -> tuple[Table, Table]:
    """(flagged or contested cells, other disagreements resolved by the plan's rule)."""
    cells = _cells_with_listed_ids(report)
    key_ids = set(report.get("flagged_cells") or []) | set(report.get("contested_cells") or [])
    raters = _raters(report, cells)

    def row(c: Mapping[str, Any]) -> tuple[Cell, ...]:
        res = str(c.get("resolution") or DASH)
        scores = c.get("scores") or {}
        tone, mark = _RESOLUTION.get(res, (None, ""))
        return (
            _c(c.get("cell"), code=True),
            _c(c.get("pass"), code=c.get("pass") is not None),
            *(_n(_score(scores.get(r)), tone=None if r in scores else "muted") for r in raters),
            Cell(res, tone=tone, mark=mark),
            _n(numfmt.mean(c.get("value"), c.get("value_exact")) if c.get("value") is not None else DASH),
        )

    def is_key(c: Mapping[str, Any]) -> bool:
        open_cell = c.get("resolution") in ("contested", "missing")
        return bool(c.get("flagged")) or c.get("cell") in key_ids or open_cell

    headers = ("cell", "pass", *raters, "resolution", "value")
    numeric = frozenset(range(2, 2 + len(raters))) | {len(headers) - 1}
    return (Table(headers, tuple(row(c) for c in cells if is_key(c)), numeric),
            Table(headers, tuple(row(c) for c in cells if not is_key(c)), numeric))


# --------------------------------------------------------------------------- checks


def self_bias_table(report: Mapping[str, Any]) -> Table:
    a, b = labels(report)
    rows = []
    for entry in report.get("self_bias") or []:
        flagged = bool(entry.get("flagged"))
        rows.append((
            _c(entry.get("rater"), code=True),
            _c(entry.get("pass"), code=True),
            _n(_text(entry.get("b_worse"))),
            Cell("flagged for re-audit" if flagged else "ok", tone="warn" if flagged else "good",
                 mark="🚩" if flagged else ""),
        ))
    return Table(("rater", "pass", f"cells with {b} worse than {a}", "self-bias"), tuple(rows),
                 frozenset({2}))


def violations_table(report: Mapping[str, Any]) -> Table:
    """Every violation; when some rater is excluded or a violation lies in an amendment, a column
    says what each one does: exclude an optional rater, block the verdict, or block (or exclude a
    rater from) one amendment only."""
    seals = report.get("seals") or {}
    found = [v for v in seals.get("violations") or [] if isinstance(v, Mapping)]
    excluded = excluded_ids(report)
    scoped = {str(e.get("id")): {str(r.get("rater")) for r in e.get("excluded_raters") or []}
              for e in report.get("amendments") or [] if isinstance(e, Mapping)}
    shown = bool(excluded) or any(v.get("amendment") for v in found)

    def effect(v: Mapping[str, Any]) -> tuple[Cell, ...]:
        amendment = v.get("amendment")
        if not shown:
            return ()
        if amendment and v.get("rater") in scoped.get(str(amendment), ()):
            return (Cell(f"excludes {v.get('rater')} from amendment {amendment}", tone="warn"),)
        if amendment:
            return (Cell(f"blocks amendment {amendment} only", tone="warn"),)
        if v.get("rater") in excluded:
            return (Cell(f"excludes {v.get('rater')}", tone="warn"),)
        return (Cell("blocks the verdict", tone="bad"),)

    rows = tuple(
        (_c(v.get("code"), code=True), _c(v.get("rater"), code=v.get("rater") is not None),
         _c(short_commit(v.get("commit")) or None, code=bool(v.get("commit"))), _c(v.get("message")),
         *effect(v))
        for v in found
    )
    return Table(("code", "rater", "commit", "message", *(("effect",) if shown else ())), rows)


def validation_table(report: Mapping[str, Any]) -> Table:
    rows = []
    for f in (report.get("validation") or {}).get("files") or []:
        for level in ("errors", "warnings"):
            for issue in f.get(level) or []:
                if isinstance(issue, Mapping):
                    line, code, msg = issue.get("line"), issue.get("code"), issue.get("message")
                else:
                    line, code, msg = None, None, issue
                rows.append((
                    _c(f.get("path"), code=True),
                    _n(_text(line)),
                    Cell(level[:-1], tone="bad" if level == "errors" else "warn",
                         mark="❌" if level == "errors" else "⚠️"),
                    _c(code, code=code is not None),
                    _c(msg),
                ))
    return Table(("file", "line", "level", "code", "message"), tuple(rows), frozenset({1}))


# --------------------------------------------------------------------------- headline sentence

#: How a rule's outcome reads in the headline sentence (a fail rule "met" is what fails a study).
_SAID = {"met": "met", "not-met": "not met", "not-evaluable": "not evaluable"}


def _rule_brief(rule: Mapping[str, Any]) -> str:
    """One rule as the headline reads it: its condition, its value, its outcome."""
    q = numfmt.to_fraction(rule.get("value"), rule.get("value_exact"))
    rid = str(rule.get("id", "")).lower()
    value = (None if q is None else numfmt.percent(q) if "improvement" in rid
             else str(q.numerator) if "question" in rid and q.denominator == 1 else numfmt.fixed(q, None, 2))
    shown = f" ({value})" if value else ""
    said = _SAID.get(str(rule.get("outcome")), str(rule.get("outcome")))
    return f"{rule.get('text') or rule.get('id')}{shown} {said}"


def _family_brief(family: str, rules: list[Mapping[str, Any]]) -> str:
    """A family of per-dimension rules (load, regression) in a few words: all one outcome, or
    which dimensions have which."""
    if len(rules) == 1:
        return _rule_brief(rules[0])
    by_outcome: dict[str, list[str]] = {}
    for rule in rules:
        dim = str(rule.get("id", "")).rsplit(".", 1)[-1]
        by_outcome.setdefault(_SAID.get(str(rule.get("outcome")), str(rule.get("outcome"))), []).append(dim)
    if len(by_outcome) == 1:
        return f"{family} on all {len(rules)} dimensions {next(iter(by_outcome))}"
    return f"{family} " + ", ".join(f"{said} on {' '.join(dims)}" for said, dims in by_outcome.items())


def rules_sentence(report: Mapping[str, Any]) -> str | None:
    """The headline's one sentence on which rules were met and which were not (docs/report.md,
    "The verdict"), read from the rule results the document holds (nothing is recomputed);
    while NOT-READY it says the rules are withheld. None when the document has no rules."""
    rules = [r for r in report.get("rules") or [] if isinstance(r, Mapping)]
    if not rules:
        return None
    verdict = str(report.get("verdict") or "UNKNOWN")
    if verdict == "NOT-READY":
        return f"{verdict}: the {len(rules)} rules are withheld until the verdict is ready."
    families: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for rule in rules:
        parts = str(rule.get("id", "")).split(".")
        family = parts[1] if len(parts) > 1 else parts[0]
        families.setdefault((str(rule.get("kind")), family), []).append(rule)
    passed = [_family_brief(f, rs) for (kind, f), rs in families.items() if kind == "pass"]
    failing = [r for r in rules if r.get("kind") == "fail"]
    met = [_rule_brief(r) for r in failing if r.get("outcome") == "met"]
    open_ = [_rule_brief(r) for r in failing if r.get("outcome") == "not-evaluable"]
    fail_part = "; ".join(met + open_) if met or open_ else f"none of {len(failing)} met"
    return f"{verdict}: pass rules: {'; '.join(passed) or 'none'}. Fail rules: {fail_part}."


def checklist_table(report: Mapping[str, Any]) -> Table:
    """The reporting checklist (GRRAS): each item, its value or what would fill it, and where the
    report shows it."""
    rows = tuple(
        (_c(e.get("item")),
         Cell("reported", tone="good", mark="✅") if e.get("status") == "reported"
         else Cell("missing", tone="warn", mark="⚠️"),
         _c(e.get("value")), _c(e.get("where"), tone="muted"))
        for e in report.get("reporting_checklist") or [] if isinstance(e, Mapping))
    return Table(("item", "status", "value", "where"), rows)


def checklist_sentence(report: Mapping[str, Any]) -> str:
    """How many checklist items the report fills, and which are missing."""
    items = [e for e in report.get("reporting_checklist") or [] if isinstance(e, Mapping)]
    missing = [str(e.get("item")) for e in items if e.get("status") != "reported"]
    said = f"missing: {', '.join(missing)}" if missing else "none missing"
    return ("Items that reliability reporting guidelines ask for (GRRAS, Kottner et al. 2011; "
            f"Hallgren 2012): {len(items) - len(missing)} of {len(items)} reported, {said}.")
