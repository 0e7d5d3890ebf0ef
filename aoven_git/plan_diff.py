"""Where two plans differ, key path by key path, for messages a person can act on.

- `plan_differences(old_raw, new_raw, keys)`: what changed between two revisions of a plan, so a
  sealing message can say `rules.pass.questions: 6 → 4` instead of "`rules` changed".
- `deviations(plan)`: where a plan departs from the published defaults `aoven-git init` writes,
  for the report a PI decides from (a shortened round, a lowered threshold, a dropped pass…).

Both are pure and share one walk (`_walk`). Paths are written as a user reads the YAML: keys
joined by dots, list items by id when every item has one (`raters[logician].required`; numeric
ids as `transitions[#3]`), by position otherwise (`markers[2]`). Values are short YAML-ish text.
See docs/plan.md, "Plan differences and deviations".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

from aoven_git.coverage import PLACEHOLDER
from aoven_git.model import Criterion, Plan
from aoven_git.plan import DEFAULT_PLAN_TEMPLATE, DESIGN_TEMPLATES, fraction_text, line_of, parse_plan

#: Longest value text; a longer value is cut with "…" (the `detail` names what changed in a list).
MAX_TEXT = 80
_MISSING: Any = object()
_PLAIN = re.compile(r"^[^\s,:\[\]{}#&*!|>'\"%@`][^,:\[\]{}#]*(?<!\s)$")
#: Key paths of descriptive text: names, titles, question wording, the study's name. Editing them
#: changes no rule, no score and no cell, so the report lists them apart and briefly.
_DESCRIPTIVE = re.compile(r"(^study$|\.(name|text|title|domain|rationale|reason)$)")
_RESERVED = re.compile(r"^(true|false|null|~|yes|no|on|off|[-+]?[0-9][0-9_.eE+-]*)$", re.IGNORECASE)


@dataclass(frozen=True)
class PlanDifference:
    """One changed key path between two plans; `old`/`new` are None where the key is absent,
    `line` is the line in the new plan (of the nearest enclosing key when the path is gone)."""

    path: str
    old: str | None
    new: str | None
    line: int | None = None
    detail: str = ""  # for lists of ids: "added X; removed Y" or "reordered"

    def __str__(self) -> str:
        tail = f" ({self.detail})" if self.detail else ""
        return f"{self.path}: {_shown(self.old)} → {_shown(self.new)}{tail}"

    @property
    def descriptive(self) -> bool:
        return descriptive(self.path)


@dataclass(frozen=True)
class Deviation:
    """One place a plan departs from the defaults `init` writes; `line` is in the plan."""

    path: str
    default: str | None
    value: str | None
    line: int | None = None
    detail: str = ""

    def __str__(self) -> str:
        tail = f" ({self.detail})" if self.detail else ""
        return f"{self.path}: {_shown(self.value)} (default {_shown(self.default)}){tail}"

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "default": self.default, "value": self.value, "line": self.line,
                "detail": self.detail, "descriptive": descriptive(self.path)}


def descriptive(path: str) -> bool:
    """Whether a key path holds descriptive text (a name, a title, a question's wording) rather
    than the protocol: such edits are listed apart, briefly (docs/report.md, "Deviations")."""
    return bool(_DESCRIPTIVE.search(path))


def _shown(text: str | None) -> str:
    return "(absent)" if text is None else text


# --------------------------------------------------------------------------- short text


def short_text(value: Any) -> str | None:
    """A value as compact flow YAML (`{min: 0, max: 3}`, `[Q1, Q2]`, `0.2`), cut at MAX_TEXT."""
    if value is _MISSING:
        return None
    text = _flow(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _flow(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, Fraction)):
        return fraction_text(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        plain = _PLAIN.match(value) and not _RESERVED.match(value)
        return value if plain else json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_flow(str(k))}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _flow(str(value))


# --------------------------------------------------------------------------- the walk


@dataclass(frozen=True)
class _Change:
    path: str
    old: Any
    new: Any
    where: tuple[Any, ...]  # index path in the new document, for its line
    detail: str = ""


def _keyed(items: list[Any]) -> bool:
    """Items addressable by id: every item a mapping with a unique scalar id."""
    ids = [item.get("id") if isinstance(item, Mapping) else None for item in items]
    scalar = all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids)
    return scalar and len(set(ids)) == len(ids)


def _item_path(at: str, item_id: Any) -> str:
    return f"{at}[#{item_id}]" if isinstance(item_id, int) else f"{at}[{item_id}]"


def _list_detail(old: list[Any], new: list[Any]) -> str:
    added = [_flow(x) for x in new if x not in old]
    removed = [_flow(x) for x in old if x not in new]
    parts = ([f"added {', '.join(added)}"] if added else []) + (
        [f"removed {', '.join(removed)}"] if removed else []
    )
    if not parts and sorted(map(_flow, old)) == sorted(map(_flow, new)):
        return "reordered"
    return "; ".join(parts)


def _walk_keyed(old: list[Any], new: list[Any], at: str, where: tuple[Any, ...], out: list[_Change]) -> None:
    before = {item["id"]: item for item in old}
    for i, item in enumerate(new):
        _walk(before.get(item["id"], _MISSING), item, _item_path(at, item["id"]), (*where, i), out)
    after = {item["id"] for item in new}
    for item in old:
        if item["id"] not in after:
            _walk(item, _MISSING, _item_path(at, item["id"]), where, out)
    common_old = [item["id"] for item in old if item["id"] in after]
    common_new = [item["id"] for item in new if item["id"] in before]
    if common_old != common_new:
        ids = ([item["id"] for item in old], [item["id"] for item in new])
        out.append(_Change(at, *ids, where, "reordered"))


def _walk_list(old: list[Any], new: list[Any], at: str, where: tuple[Any, ...], out: list[_Change]) -> None:
    if _keyed(old) and _keyed(new):
        _walk_keyed(old, new, at, where, out)
    elif all(not isinstance(x, (Mapping, list)) for x in (*old, *new)):
        out.append(_Change(at, old, new, where, _list_detail(old, new)))
    else:
        for i in range(max(len(old), len(new))):
            o = old[i] if i < len(old) else _MISSING
            n = new[i] if i < len(new) else _MISSING
            _walk(o, n, f"{at}[{i}]", (*where, i) if i < len(new) else where, out)


def _walk(old: Any, new: Any, at: str, where: tuple[Any, ...], out: list[_Change]) -> None:
    """Append every differing leaf (or whole added/removed subtree) between `old` and `new`."""
    if old is new or (old is not _MISSING and new is not _MISSING and old == new):
        return  # equal, or absent on both sides
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in dict.fromkeys([*new, *old]):
            _walk(old.get(key, _MISSING), new.get(key, _MISSING), f"{at}.{key}", (*where, key), out)
    elif isinstance(old, list) and isinstance(new, list):
        _walk_list(old, new, at, where, out)
    else:
        out.append(_Change(at, old, new, where))


def _changes(old: Mapping[str, Any], new: Mapping[str, Any], keys: Iterable[str]) -> list[_Change]:
    out: list[_Change] = []
    for key in dict.fromkeys(keys):
        _walk(old.get(key, _MISSING), new.get(key, _MISSING), key, (key,), out)
    return out


def plan_differences(
    old_raw: Mapping[str, Any],
    new_raw: Mapping[str, Any],
    keys: Iterable[str],
    *,
    new_lines: Mapping[str, int] | None = None,
) -> list[PlanDifference]:
    """Every changed key path under the top-level `keys`, in the new plan's order (removed
    entries after the ones kept). `new_lines` is the new plan's `Plan.lines`, for lines."""
    lines = dict(new_lines or {})
    return [
        PlanDifference(c.path, short_text(c.old), short_text(c.new), line_of(lines, c.where), c.detail)
        for c in _changes(old_raw, new_raw, keys)
    ]


# --------------------------------------------------------------------------- deviations


@cache
def default_plan() -> Plan:
    """The plan `aoven-git init` writes: the published defaults."""
    return parse_plan(DEFAULT_PLAN_TEMPLATE.read_bytes(), display="aoven.yaml (init defaults)")


def design_plans() -> list[Plan]:
    """The plans `init --design` writes for designs with criteria (arms, probes)."""
    return [parse_plan(path.read_bytes(), display=f"{path.name} (init --design {name})")
            for name, path in DESIGN_TEMPLATES.items() if name != "seed"]


def _rules_view(plan: Plan) -> dict[str, Any]:
    r = plan.rules
    return {
        "kappa": {"weights": r.kappa.weights, "threshold": r.kappa.threshold,
                  "aggregate": r.kappa.aggregate, "undefined": r.kappa.undefined,
                  "coefficient": r.kappa.coefficient},
        "flag_spread": r.flag_spread,
        "unflagged": r.unflagged,
        "blinding_divergence": r.blinding_divergence,
        "pass": {"improvement": r.pass_.improvement, "questions": r.pass_.questions,
                 "dims_fraction": r.pass_.dims_fraction, "load_tolerance": r.pass_.load_tolerance,
                 "regression_tolerance": r.pass_.regression_tolerance},
        "fail": {"improvement": r.fail.improvement},
        "require_annotations": r.require_annotations,
    }


def effective_view(plan: Plan) -> dict[str, Any]:
    """The plan as it is applied (defaults filled in, rounds resolved to their questions,
    thresholds as exact fractions), keyed as the YAML is. Identity that every real study changes
    (the study name, rater names and e-mails) is left out: it is not a departure from the protocol."""
    return {
        "version": plan.version,
        "study_dir": plan.study_dir,
        "responses": plan.responses,
        "stripped_responses": plan.stripped_responses,
        "scale": ({"labels": list(plan.scale.labels)} if plan.scale.nominal
                  else {"min": plan.scale.min, "max": plan.scale.max}),
        "conditions": [{"id": c.id, "name": c.name, "role": c.role} for c in plan.conditions],
        "replicates": plan.replicates,
        "transitions": [{"id": t.id, "name": t.name} for t in plan.transitions],
        "dimensions": [{"id": d.id, "name": d.name, "kind": d.kind, "transitions": list(d.transitions),
                        "annotate": d.annotate} for d in plan.dimensions],
        "load_dimensions": list(plan.load_dimensions),
        "questions": [{"id": q.id, "domain": q.domain, "text": q.text, "expects": list(q.expects)}
                      for q in plan.questions],
        "holdout": [{"id": q.id, "domain": q.domain, "text": q.text, "expects": list(q.expects)}
                    for q in plan.holdout],
        "rounds": [{"id": r.id, "questions": list(r.questions), "refinements": list(r.refinements)}
                   for r in plan.rounds],
        "raters": [{"id": r.id, "required": r.required} for r in plan.raters],
        "passes": [{"id": p.id, "conditions": list(p.conditions), "dimensions": list(p.dimensions),
                    "stripped": p.stripped, "primary": p.primary, "blind": p.blind, "after": list(p.after)}
                   for p in plan.passes],
        "markers": list(plan.markers),
        "rules": _rules_view(plan),
        "refinements": [{"id": r.id, "text": r.text} for r in plan.refinements],
        "retest_cap": plan.retest_cap,
        "claims": plan.claims,
        "security": {"require_signed": plan.security.require_signed,
                     "allowed_signers": plan.security.allowed_signers},
        "blind": {"leak_patterns": list(plan.leak_patterns)},
        "criteria": [_criterion_view(c) for c in plan.criteria],
        "decisions": [{"if": list(r.criteria), "then": r.then, "otherwise": r.otherwise}
                      for r in plan.decisions],
        # amendments are no deviation from the pre-registered plan: they are a declared exploratory
        # layer the report shows in its own section (docs/amendments.md)
        "locked": list(plan.locked),
    }


def _criterion_view(c: Criterion) -> dict[str, Any]:
    """A criterion as applied, keyed by its id (so a changed bound reads as one change)."""
    bound = {c.bound.kind: c.bound.value} if c.bound else {}
    return {"id": c.id, "kind": c.kind, "of": list(c.of), "dimensions": list(c.dimensions), "per": c.per,
            "questions": list(c.questions), "label": c.label, "dimension": c.dimension,
            "require": c.require, "treatment": c.treatment, "pass": c.pass_id, "gate": c.gate, **bound}


def _expected(change: _Change) -> bool:
    """A placeholder the template asks to replace (the hold-out texts) is no deviation."""
    old = change.old
    return change.path.endswith(".text") and isinstance(old, str) and bool(PLACEHOLDER.search(old))


def deviations(plan: Plan, defaults: Plan | None = None) -> list[Deviation]:
    """Every place `plan` departs from `defaults` (the plan `init` writes; for a plan with
    criteria, the `init --design` template it departs from least), in plan order."""
    if defaults is None and plan.criteria:
        return min((deviations(plan, t) for t in design_plans()), key=len)
    base, mine = effective_view(defaults or default_plan()), effective_view(plan)
    keys = [k for k in plan.raw if k in mine] + list(mine)
    return [
        Deviation(c.path, short_text(c.old), short_text(c.new), line_of(plan.lines, c.where), c.detail)
        for c in _changes(base, mine, keys)
        if not _expected(c)
    ]
