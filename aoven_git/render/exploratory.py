"""The exploratory layer and the blind passes, as tables and sentences for both renderers.

Each amendment (docs/amendments.md, "What the report shows") is drawn beside the pre-registered
verdict, never instead of it: a comparison of the two verdicts and their headline numbers, κ of the
amended dimensions before and after, the rules whose outcome moved, every re-score that changed a
rater's value and every cell whose score after consensus moved. Everything is read from the report
document (`amendments`, `blind_passes`), so Markdown and HTML cannot disagree with the JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from aoven_git import numfmt
from aoven_git.numfmt import DASH
from aoven_git.render.tables import VERDICT_MARKS, Cell, Table, held, labels, pruned

INTRO = ("Each amendment re-scores cells after a rubric ruling made once the data were seen. Its "
         "verdict is exploratory: the pre-registered verdict above stays the verdict. Amendments "
         "apply in plan order, each on top of the ones before it.")

CHANGED_CELLS = "Changed scores: each rater's re-score that differs from their score before"
CONSENSUS_CHANGES = "Cells whose score after consensus moved"

_TONES = {"PASS": "good", "FAIL": "bad", "INCONCLUSIVE": "warn", "CONTESTED": "warn", "NOT-READY": "muted"}
_OUTCOMES = {("pass", "met"): "met", ("pass", "not-met"): "not met", ("fail", "met"): "met: fails",
             ("fail", "not-met"): "not met", ("pass", "not-evaluable"): "not evaluable",
             ("fail", "not-evaluable"): "not evaluable"}


def amendments(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The document's amendment entries (none in a document written before amendments existed)."""
    found = report.get("amendments")
    return [a for a in found if isinstance(a, Mapping)] if isinstance(found, list) else []


def verdict_cell(verdict: Any) -> Cell:
    text = str(verdict or DASH)
    return Cell(text, tone=_TONES.get(text), mark=VERDICT_MARKS.get(text, ""))


def scope_text(entry: Mapping[str, Any], report: Mapping[str, Any]) -> str:
    """``re-scores D8 of B in pass unblinded (10 cells per rater)``."""
    scope = entry.get("scope") or {}
    cells = scope.get("cells") or {}
    passes = ", ".join(f"{p} ({n} cells per rater)" for p, n in cells.items()) or DASH
    conds = scope.get("conditions") or list(labels(report))
    return (f"re-scores {', '.join(scope.get('dimensions') or []) or DASH} of {' and '.join(conds)} "
            f"in pass {passes}")


def status_line(entry: Mapping[str, Any]) -> str:
    """``FAIL (exploratory) beside the pre-registered PASS: <the first reason>``."""
    reasons = [str(r) for r in entry.get("reasons") or [] if r]
    why = reasons[0] if reasons else str(entry.get("summary") or DASH)
    return (f"{entry.get('verdict') or DASH} (exploratory) beside the pre-registered "
            f"{entry.get('preregistered_verdict') or DASH}: {why}")


def comparison_table(report: Mapping[str, Any], entry: Mapping[str, Any]) -> Table:
    """The two verdicts side by side with the numbers they rest on."""
    a, b = labels(report)
    n_dims = len(report.get("dimensions") or [])

    def column(doc: Mapping[str, Any]) -> list[Cell]:
        means, exact = doc.get("means") or {}, doc.get("means_exact") or {}
        return [
            replace(verdict_cell(doc.get("verdict")), num=True),
            Cell(held(doc, doc.get("improvement"),
                      numfmt.percent(doc.get("improvement"), doc.get("improvement_exact"))), num=True),
            Cell(held(doc, means.get(a), numfmt.mean(means.get(a), exact.get(a))), num=True),
            Cell(held(doc, means.get(b), numfmt.mean(means.get(b), exact.get(b))), num=True),
            Cell(f"{len(doc.get('counted_dimensions') or [])} of {n_dims}", num=True),
        ]

    names = ("verdict", "improvement", f"mean aggregate {a}", f"mean aggregate {b}", "counted dimensions")
    pre, amended = column(report), column(entry)
    rows = tuple((Cell(name), pre[i], amended[i]) for i, name in enumerate(names))
    return Table(("", "pre-registered", f"exploratory, with {entry.get('id')}"), rows, frozenset({1, 2}))


def _kappa_cell(k: Mapping[str, Any] | None) -> Cell:
    if not k:
        return Cell(DASH)
    value = k.get("value")
    mark = "" if k.get("counts") else "⛔"
    return Cell(numfmt.kappa(value, k.get("reason")) + ("" if k.get("counts") else " (does not count)"),
                tone=None if k.get("counts") else "bad", mark=mark, num=value is not None)


def kappa_table(report: Mapping[str, Any], entry: Mapping[str, Any]) -> Table:
    """κ of each amended dimension before and after, with the amended pairs."""
    rows = []
    pairs: list[str] = []
    for per_dim in (entry.get("kappa") or {}).values():
        for k in per_dim.values():
            pairs += [p for p in (k or {}).get("pairs") or {} if p not in pairs]
    for pass_id, per_dim in (entry.get("kappa") or {}).items():
        before = ((report.get("kappa") or {}).get(pass_id) or {})
        for did, k in per_dim.items():
            rows.append((Cell(pass_id, code=True), Cell(did, code=True), _kappa_cell(before.get(did)),
                         _kappa_cell(k), *(_pair(k, p) for p in pairs)))
    table = Table(("pass", "dimension", "κ pre-registered", "κ exploratory", *pairs), tuple(rows),
                  frozenset(range(2, 4 + len(pairs))))
    return pruned(table, sentences=[0], keep=(1,))


def _pair(k: Mapping[str, Any] | None, pair: str) -> Cell:
    value = ((k or {}).get("pairs") or {}).get(pair)
    if value is None:
        return Cell("undefined" if pair in ((k or {}).get("pairs") or {}) else DASH, tone="warn")
    return Cell(numfmt.kappa(value), num=True)


def rules_table(entry: Mapping[str, Any]) -> Table:
    """The rules whose outcome moved, with both values."""
    rows = []
    for r in entry.get("rules_changed") or []:
        kind = str(r.get("kind") or "")
        before = _OUTCOMES.get((kind, str(r.get("from"))), str(r.get("from") or DASH))
        after = _OUTCOMES.get((kind, str(r.get("to"))), str(r.get("to") or DASH))
        worse = (kind == "fail" and r.get("to") == "met") or (kind == "pass" and r.get("to") != "met")
        rows.append((
            Cell(str(r.get("id") or DASH), code=True),
            Cell(str(r.get("text") or DASH)),
            Cell(f"{_value(r, 'value_from')} → {_value(r, 'value_to')}", num=True),
            Cell(_value(r, "threshold"), num=True),
            Cell(f"{before} → {after}", tone="bad" if worse else "good"),
        ))
    return Table(("rule", "condition", "value", "threshold", "outcome"), tuple(rows), frozenset({2, 3}))


def _value(rule: Mapping[str, Any], key: str) -> str:
    value, exact = rule.get(key), rule.get(f"{key}_exact")
    q = numfmt.to_fraction(value, exact)
    if q is None:
        return DASH
    if "improvement" in str(rule.get("id", "")):
        return numfmt.percent(value, exact)
    return numfmt.fixed(value, exact, 2, signed=key != "threshold") + numfmt.exact_suffix(
        numfmt.shown_fixed(q, 2), exact)


def changed_cells_table(entry: Mapping[str, Any]) -> Table:
    """Every re-score that changed a rater's value: cell, pass, rater, from → to."""
    rows = tuple((Cell(str(c.get("cell")), code=True), Cell(str(c.get("pass")), code=True),
                  Cell(str(c.get("rater")), code=True), Cell(_score(c.get("from")), num=True),
                  Cell(_score(c.get("to")), num=True))
                 for c in entry.get("changed_cells") or [])
    return pruned(Table(("cell", "pass", "rater", "from", "to"), rows, frozenset({3, 4})), sentences=[1])


def _score(value: Any) -> str:
    return DASH if value is None else str(value)


def consensus_table(entry: Mapping[str, Any]) -> Table:
    """Every cell whose score after consensus moved: value and how it was reached, before and after."""
    rows = []
    for c in entry.get("consensus_changes") or []:
        rows.append((Cell(str(c.get("cell")), code=True), Cell(str(c.get("pass")), code=True),
                     Cell(_resolved(c.get("from"), c.get("from_exact"), c.get("from_resolution")), num=True),
                     Cell(_resolved(c.get("to"), c.get("to_exact"), c.get("to_resolution")), num=True)))
    return pruned(Table(("cell", "pass", "before", "after"), tuple(rows), frozenset({2, 3})), sentences=[1])


def _resolved(value: Any, exact: Any, how: Any) -> str:
    if how in (None, ""):
        return f"{DASH} (no scores)"
    shown = numfmt.mean(value, exact) if value is not None else DASH
    return f"{shown} ({how})"


def means_rows(report: Mapping[str, Any], entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per dimension of the verdict pass: both conditions' means, pre-registered and exploratory,
    and how many of the amendment's cells moved there (for the chart)."""
    a, b = labels(report)
    amended = {str(d.get("id")): d for d in entry.get("dimensions") or [] if isinstance(d, Mapping)}
    moved: dict[str, list[str]] = {}
    for c in entry.get("consensus_changes") or []:
        moved.setdefault(str(c.get("cell", "")).rsplit("/", 1)[-1], []).append(str(c.get("cell")))
    scope = set((entry.get("scope") or {}).get("dimensions") or [])
    out = []
    for d in report.get("dimensions") or []:
        did, new = str(d.get("id")), amended.get(str(d.get("id"))) or {}
        out.append({"id": did, "name": d.get("name"), "amended": did in scope, "moved": moved.get(did, []),
                    "counted": bool(new.get("counted", d.get("counted"))),
                    "pre": {c: _mean_of(d, c) for c in (a, b)}, "new": {c: _mean_of(new, c) for c in (a, b)}})
    return out


def chart_missing(report: Mapping[str, Any], entry: Mapping[str, Any]) -> str | None:
    """Why an amendment's means chart is left out (no mean before or after, in either condition),
    or None when it has data."""
    rows = means_rows(report, entry)
    if any(v is not None for r in rows for side in ("pre", "new") for v in r[side].values()):
        return None
    return "No chart: the means are withheld while the verdicts are NOT-READY."


def _mean_of(dim: Mapping[str, Any], condition: str) -> float | None:
    return numfmt.finite(numfmt.to_fraction(dim.get(f"mean_{condition}"), dim.get(f"mean_{condition}_exact")))


def not_ready_lines(entry: Mapping[str, Any]) -> list[str]:
    return [str(r) for r in entry.get("not_ready") or []]


# --------------------------------------------------------------------------- blind passes


def blind_passes(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = report.get("blind_passes")
    return [b for b in found if isinstance(b, Mapping)] if isinstance(found, list) else []


def blind_state(report: Mapping[str, Any], pass_id: Any) -> Mapping[str, Any] | None:
    return next((b for b in blind_passes(report) if b.get("pass") == pass_id), None)


def blind_sentence(entry: Mapping[str, Any]) -> str:
    """What a reader needs to know about one blind pass."""
    pass_id, key, state = entry.get("pass"), entry.get("key") or "its key", entry.get("state")
    used = ""
    if entry.get("used_by_verdict"):
        used = " The verdict uses this pass, so it stays NOT-READY until then."
    if state == "unblinded":
        return f"Pass {pass_id} was scored blind and is unblinded: its cells are mapped back through {key}."
    if state == "invalid-key":
        problem = entry.get("problem")
        return f"Pass {pass_id} was scored blind, but its key {key} cannot be read ({problem}).{used}"
    return (f"Pass {pass_id} was scored blind and is pending: its key {key} is not committed yet, so its "
            f"cells cannot be mapped back to questions and conditions and its agreement is not computed "
            f"(`aoven-git unblind --pass {pass_id}`).{used}")
