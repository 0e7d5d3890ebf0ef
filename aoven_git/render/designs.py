"""The criteria and the decision of a design (docs/designs.md), as tables and sentences for both renderers.

A plan with `criteria` and `decisions` is judged by its decision table, not by the seed's rules:
the document carries `criteria[]` (each hypothesis with its values, bound and outcome) and
`decision` (the row taken, or what blocks one). Everything here is read from those two keys and
nothing is recomputed (docs/report.md, "Criteria and the decision"); what the document does not
say directly — how many values satisfy the bound, which criteria of an earlier row fail — is
counted from what it does say. A seed document has neither key and none of this is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aoven_git import numfmt
from aoven_git.numfmt import DASH
from aoven_git.render.tables import WITHHELD, Cell, Table, is_design, pruned, rules_table

#: outcome of a criterion → (label, tone, mark): the label is the meaning, colour only repeats it
OUTCOMES = {
    "holds": ("holds", "good", "✅"),
    "fails": ("fails", "bad", "❌"),
    "undecided": ("undecided", "warn", "❔"),
    "contested": ("contested", "warn", "⚖️"),
}
#: outcome of a decision row → (label, tone, mark)
ROW_OUTCOMES = {
    "taken": ("taken", "good", "✅"),
    "fails": ("fails", "muted", "❌"),
    "blocked": ("blocked", "warn", "⏸️"),
    "not-reached": ("not reached", "muted", ""),
}
#: how each bound reads, v being the criterion's value (model.Bound says the same)
BOUND_WORDS = {"within": "|v| ≤", "at_most": "v ≤", "below": "v <", "at_least": "v ≥", "above": "v >"}
#: values written out in the criteria table (a probe study may have dozens; all are listed below it)
MAX_VALUES = 8
#: what a value key is, per kind
KEY_NAMES = {"delta": "dimension", "rate": "question", "seed": "criterion"}


def criteria(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The document's criteria (none in a seed document)."""
    return [c for c in report.get("criteria") or [] if isinstance(c, Mapping)] if is_design(report) else []


def decision(report: Mapping[str, Any]) -> Mapping[str, Any]:
    found = report.get("decision")
    return found if isinstance(found, Mapping) else {}


def not_ready(report: Mapping[str, Any]) -> bool:
    """True while the criteria are withheld: the verdict (or the decision) is NOT-READY."""
    return report.get("verdict") == "NOT-READY" or decision(report).get("status") == "not-ready"


# --------------------------------------------------------------------------- numbers


def value_text(value: Any, exact: Any, *, signed: bool = False) -> str:
    """A criterion value: an integer as is, else two decimals and its exact fraction
    (``+0.33 (1/3)``), so a reader sees what was compared with the bound; ``undefined`` if None."""
    q = numfmt.to_fraction(value, exact)
    if q is None:
        return "undefined"
    if q.denominator == 1:
        return ("+" if signed and q > 0 else "") + str(q.numerator)
    return f"{numfmt.fixed(q, None, 2, signed=signed)} ({q})"


def bound_text(bound: Any) -> str:
    """``|v| ≤ 0.5 (1/2)``; a dash for a seed criterion (it has no bound)."""
    if not isinstance(bound, Mapping):
        return DASH
    q = numfmt.to_fraction(bound.get("value"), bound.get("value_exact"))
    words = BOUND_WORDS.get(str(bound.get("kind")), str(bound.get("kind")))
    if q is None:
        return f"{words} {DASH}"
    shown = numfmt.brief(q)
    return f"{words} {shown}" + ("" if numfmt.to_fraction(None, shown) == q else f" ({q})")


def bound_fraction(bound: Any) -> Any:
    """The bound's exact value, or None."""
    if not isinstance(bound, Mapping):
        return None
    return numfmt.to_fraction(bound.get("value"), bound.get("value_exact"))


def signed(criterion: Mapping[str, Any]) -> bool:
    """A difference of two conditions reads with its sign; a single condition's value does not."""
    return len(criterion.get("of") or []) > 1


def values(criterion: Mapping[str, Any]) -> list[tuple[str, Any, Any, bool | None]]:
    """(key, value, exact, satisfied) per key, in document order."""
    vals = criterion.get("values") or {}
    exact = criterion.get("values_exact") or {}
    sat = criterion.get("satisfied") or {}
    return [(str(k), v, exact.get(k), sat.get(k) if isinstance(sat.get(k), bool) else None)
            for k, v in vals.items()]


def satisfied_text(report: Mapping[str, Any], criterion: Mapping[str, Any]) -> str:
    """``4 of 6 satisfy (all needed)``, ``3 of 5 satisfy (3 needed)``; for a seed criterion how
    many of its pass rules are met."""
    if criterion.get("kind") == "seed":
        if not_ready(report):
            return WITHHELD
        rules = [r for r in criterion.get("rules") or []
                 if isinstance(r, Mapping) and r.get("kind") == "pass"]
        met = sum(1 for r in rules if r.get("outcome") == "met")
        return f"{met} of {len(rules)} pass rules met" if rules else DASH
    sat = [s for _, _, _, s in values(criterion) if s is not None]
    if not sat:
        return DASH
    require = criterion.get("require")
    needed = f"{require} needed" if isinstance(require, int) else "all needed"
    return f"{sum(sat)} of {len(values(criterion))} satisfy ({needed})"


def extremes_text(criterion: Mapping[str, Any]) -> str:
    """``best case holds, worst case fails`` for a criterion whose contested cells matter."""
    ext = criterion.get("extremes")
    if not isinstance(ext, Mapping):
        return ""
    return f"best case {ext.get('best') or DASH}, worst case {ext.get('worst') or DASH}"


def outcome_of(criterion: Mapping[str, Any]) -> tuple[str, str | None, str]:
    """(label, tone, mark) of a criterion's outcome."""
    outcome = str(criterion.get("outcome") or DASH)
    return OUTCOMES.get(outcome, (outcome, None, ""))


def outcome_cell(outcome: Any) -> Cell:
    label, tone, mark = outcome_of({"outcome": outcome})
    return Cell(label, tone=tone, mark=mark)


# --------------------------------------------------------------------------- tables


def _values_cell(report: Mapping[str, Any], criterion: Mapping[str, Any]) -> Cell:
    if criterion.get("kind") == "seed":
        return Cell(DASH)
    shown = values(criterion)
    if not_ready(report) and all(v is None for _, v, _, _ in shown):
        return Cell(WITHHELD, tone="muted")
    text = "; ".join(f"{k} {value_text(v, x, signed=signed(criterion))}" for k, v, x, _ in shown[:MAX_VALUES])
    if len(shown) > MAX_VALUES:  # the table stays readable; every value is in the criterion's own table
        text += f"; and {len(shown) - MAX_VALUES} more (listed below)"
    return Cell(text or DASH)


def criteria_table(report: Mapping[str, Any]) -> Table:
    """One row per criterion: what it tests, its values (exact where not integers), the bound,
    how many values satisfy it, the outcome, and the outcomes at the contested extremes."""
    rows = tuple(
        (Cell(str(c.get("id") or DASH), code=True), Cell(str(c.get("kind") or DASH)),
         Cell(str(c.get("text") or DASH)), _values_cell(report, c),
         Cell(bound_text(c.get("bound")), num=True),
         Cell(satisfied_text(report, c), num=True), outcome_cell(c.get("outcome")),
         Cell(extremes_text(c), tone="warn"))
        for c in criteria(report))
    notes = ("Values are withheld while the verdict is NOT-READY.",) if not_ready(report) else ()
    table = Table(("criterion", "kind", "what it tests", "values", "bound", "satisfy the bound", "outcome",
                   "at the contested extremes"), rows, frozenset({4, 5}), notes)
    return pruned(table, keep=(0, 1, 2, 3, 4, 6))


def values_table(report: Mapping[str, Any], criterion: Mapping[str, Any]) -> Table:
    """One criterion's values, key by key: the value, its exact fraction, and whether it
    satisfies the bound."""
    rows = []
    for key, value, exact, sat in values(criterion):
        q = numfmt.to_fraction(value, exact)
        shown = (WITHHELD if value is None and not_ready(report) else
                 "undefined" if q is None else numfmt.fixed(q, None, 2, signed=signed(criterion)))
        sat_cell = (Cell("yes", tone="good", mark="✅") if sat else Cell("no", tone="bad", mark="❌")
                    if sat is False else Cell(DASH, tone="muted"))
        fraction = str(q) if q is not None and q.denominator != 1 else ""
        rows.append((Cell(key, code=True), Cell(shown, num=True, tone=None if q is not None else "warn"),
                     Cell(fraction, num=True, code=True), sat_cell))
    name = "measure" if list(criterion.get("values") or {}) == ["sum"] else \
        KEY_NAMES.get(str(criterion.get("kind")), "key")
    bound = bound_text(criterion.get("bound"))
    return pruned(Table((name, "value", "exact", f"satisfies {bound}"), tuple(rows), frozenset({1, 2})),
                  keep=(0, 1, 3))


def seed_rules_table(criterion: Mapping[str, Any]) -> Table:
    """A seed criterion's own rules, drawn as the seed report's rules table."""
    return rules_table({"rules": criterion.get("rules") or []})


def decision_rows(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [r for r in decision(report).get("rows") or [] if isinstance(r, Mapping)]


def _outcomes(report: Mapping[str, Any]) -> dict[str, str]:
    return {str(c.get("id")): str(c.get("outcome")) for c in criteria(report)}


def _row_why(report: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    """Why a row has its outcome, from its criteria's outcomes: the ones that fail, block or hold."""
    outcome, ids = str(row.get("outcome")), [str(i) for i in row.get("if") or []]
    found = _outcomes(report)
    if row.get("otherwise"):
        return "no earlier row is taken" if outcome == "taken" else ""
    if outcome == "fails":
        failing = [i for i in ids if found.get(i) == "fails"]
        return "fails: " + ", ".join(failing) if failing else ""
    if outcome == "blocked":
        open_ = [f"{i} ({found.get(i)})" for i in ids if found.get(i) in ("undecided", "contested")]
        return "open: " + ", ".join(open_) if open_ else ""
    if outcome == "taken":
        return "all hold"
    return ""


def decision_table(report: Mapping[str, Any]) -> Table:
    """The decision table as pre-registered, each row with its outcome and why."""
    rows = []
    for row in decision_rows(report):
        outcome = str(row.get("outcome") or DASH)
        label, tone, mark = ROW_OUTCOMES.get(outcome, (outcome, None, ""))
        otherwise = bool(row.get("otherwise"))
        when = "otherwise" if otherwise else ", ".join(str(i) for i in row.get("if") or []) or DASH
        rows.append((Cell(str(row.get("row") or DASH), num=True),
                     Cell(when, code=not otherwise, tone="muted" if otherwise else None),
                     Cell(str(row.get("then") or DASH)), Cell(label, tone=tone, mark=mark),
                     Cell(_row_why(report, row), tone="muted")))
    return pruned(Table(("row", "if every criterion holds", "then", "outcome", "why"), tuple(rows),
                        frozenset({0})), keep=(0, 1, 2, 3))


# --------------------------------------------------------------------------- sentences


def first_upper(text: str) -> str:
    """`text` starting with a capital, the rest as it is (ids keep their case)."""
    return text[:1].upper() + text[1:]


def _ids(ids: list[str]) -> str:
    return ", ".join(ids) if ids else DASH


def decision_line(report: Mapping[str, Any]) -> str | None:
    """The decision in a few words for the top of the report: ``adopt P1+P2 — row 2 of 3``;
    ``undecided — blocked by B2-seed at row 1 of 3``. None for a seed document."""
    if not is_design(report):
        return None
    d, rows = decision(report), decision_rows(report)
    status, n = str(d.get("status") or "undecided"), len(rows)
    if status == "decided":
        return f"{d.get('then') or DASH} — row {d.get('row') or DASH} of {n}"
    if status == "not-ready":
        return "withheld while the verdict is NOT-READY"
    blocked = next((r.get("row") for r in rows if r.get("outcome") == "blocked"), None)
    at = f" at row {blocked} of {n}" if blocked is not None else ""
    return f"{status} — blocked by {_ids([str(b) for b in d.get('blocking') or []])}{at}"


def _failing_rows(report: Mapping[str, Any], before: int) -> str:
    """``row 1 fails on B2-same, B2-lighter``, for the rows before `before`."""
    parts = []
    for row in decision_rows(report):
        if isinstance(row.get("row"), int) and row["row"] < before and row.get("outcome") == "fails":
            why = _row_why(report, row).removeprefix("fails: ")
            parts.append(f"row {row['row']} fails" + (f" on {why}" if why else ""))
    return "; ".join(parts)


#: how the decision table is read (docs/designs.md, "Decisions"), said above it
DECISION_RULE = ("The decision is the first row whose criteria all hold, provided every earlier row "
                 "definitely fails (one of its criteria fails); an earlier row left undecided or contested "
                 "blocks every row after it. The last row, otherwise, is taken when every row above fails.")


def decision_sentence(report: Mapping[str, Any]) -> str | None:
    """The decision in one sentence: which row is taken and why, or what blocks a decision."""
    if not is_design(report):
        return None
    d = decision(report)
    status, row = str(d.get("status") or "undecided"), d.get("row")
    if status == "not-ready":
        return "No decision while the verdict is NOT-READY: the criteria are withheld until it is ready."
    if status == "decided":
        taken = next((r for r in decision_rows(report) if r.get("row") == row), {})
        earlier = _failing_rows(report, row if isinstance(row, int) else 0)
        then = f"“{d.get('then') or DASH}”"
        if taken.get("otherwise"):
            return f"No row's criteria all hold ({earlier or 'no earlier row'}), so the decision is the " \
                   f"otherwise row {row}: {then}."
        ids = _ids([str(i) for i in taken.get("if") or []])
        return f"Row {row} is taken: {ids} all hold" + (f"; {earlier}" if earlier else "") + \
               f"; the decision is {then}."
    blocking = [str(b) for b in d.get("blocking") or []]
    why = "undecided" if status == "undecided" else "contested (they depend on contested cells)"
    verb, whose = ("is", "it belongs") if len(blocking) == 1 else ("are", "they belong")
    return (f"No decision: {_ids(blocking)} {verb} {why}, so the row {whose} to can be neither taken "
            "nor ruled out and no later row is reached.")


def criteria_sentence(report: Mapping[str, Any]) -> str | None:
    """The criteria met and not met, by outcome, in one sentence."""
    found = criteria(report)
    if not is_design(report):
        return None
    if not_ready(report):
        return f"the {len(found) or ''} criteria are withheld until the verdict is ready.".replace("  ", " ")
    groups: dict[str, list[str]] = {}
    for c in found:
        groups.setdefault(str(c.get("outcome")), []).append(str(c.get("id")))
    met = groups.get("holds") or []
    parts = [f"{len(met)} of {len(found)} met" + (f" ({_ids(met)})" if met else "")]
    others = (("fails", "not met"), ("undecided", "undecided"), ("contested", "contested"))
    parts += [f"{said}: {_ids(groups[key])}" for key, said in others if groups.get(key)]
    return "; ".join(parts) + "."


def chart_missing(report: Mapping[str, Any], criterion: Mapping[str, Any]) -> str | None:
    """Why a criterion has no chart, or None when it has one."""
    if criterion.get("kind") == "seed":
        return "No chart: a seed criterion is the seed's verdict; its rules are below."
    if not_ready(report):
        return "No chart: the values are withheld while the verdict is NOT-READY."
    if all(numfmt.finite(numfmt.to_fraction(v, x)) is None for _, v, x, _ in values(criterion)):
        return "No chart: no value is defined."
    return None
