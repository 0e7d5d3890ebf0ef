"""check-plan's audit of a design's criteria and decisions (docs/plan.md, "check-plan").

A plan with criteria can load cleanly and still pre-register a hypothesis no data could settle: a
bound outside every value the scale allows never holds (and a decision row asking for it is never
taken), a bound around all of them always holds, and a criterion no decision row names decides
nothing. These are warnings (the plan is valid; it
may simply not mean what its authors meant), each at the line to edit. The summary of the design
(conditions, replicates, scale, criteria, decision rows) is what check-plan prints first.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Literal

from aoven_git.model import Bound, Criterion, Finding, Findings, Plan
from aoven_git.plan import line_of
from aoven_git.plan_designs import fraction_text


def seed_treatments(plan: Plan) -> tuple[str, ...]:
    """The treatments the seed's rule judges against the baseline: the seed verdict's one
    without criteria, else those of the `seed` criteria (possibly none)."""
    if not plan.criteria:
        return (plan.treatment.id,)
    return tuple(c.treatment for c in plan.criteria if c.kind == "seed" and c.treatment)


def value_range(plan: Plan, c: Criterion) -> tuple[Fraction, Fraction]:
    """Every value v of a criterion lies in this interval, and its ends are reached (every
    cell at an end of the scale). delta per dimension: a mean difference within ±(max − min),
    one mean within [min, max]; per sum: n dimensions times that; rate: a share difference
    within ±1, one share within [0, 1]."""
    if c.kind == "rate":
        return (Fraction(-1), Fraction(1)) if len(c.of) == 2 else (Fraction(0), Fraction(1))
    n = len(c.dimensions) if c.per == "sum" else 1
    low, high = plan.scale.min * n, plan.scale.max * n
    return (Fraction(low - high), Fraction(high - low)) if len(c.of) == 2 else (Fraction(low), Fraction(high))


def reach(bound: Bound, low: Fraction, high: Fraction) -> Literal["never", "always"] | None:
    """Whether a bound holds for no v in [low, high], for every v, or for some but not all."""
    nearest = Fraction(0) if low <= 0 <= high else min(abs(low), abs(high))
    farthest = max(abs(low), abs(high))
    m = bound.value
    never, always = {
        "within": (m < nearest, m >= farthest),
        "at_most": (low > m, high <= m),
        "below": (low >= m, high < m),
        "at_least": (high < m, low >= m),
        "above": (high <= m, low > m),
    }[bound.kind]
    return "never" if never else "always" if always else None


def _what(plan: Plan, c: Criterion) -> str:
    """What v is, in a few words, for a message."""
    if c.kind == "rate":
        share = f"share of {c.label} in {c.of[0]}"
        return f"{share} minus that in {c.of[1]}" if len(c.of) == 2 else share
    scale = f"{plan.scale.min}..{plan.scale.max}"
    if c.per == "sum":
        total = " + ".join(c.dimensions)
        of = f"mean {total} of {c.of[0]}"
        return f"{of} − that of {c.of[1]}, scale {scale}" if len(c.of) == 2 else f"{of}, scale {scale}"
    of = f"mean {c.of[0]} − mean {c.of[1]}" if len(c.of) == 2 else f"mean {c.of[0]}"
    return f"{of} on one dimension, scale {scale}"


def _bound_findings(plan: Plan, out: Findings) -> set[str]:
    """Warns about each bound the scale decides; returns the criteria that can never hold."""
    never: set[str] = set()
    for i, c in enumerate(plan.criteria):
        if c.bound is None:
            continue
        low, high = value_range(plan, c)
        verdict = reach(c.bound, low, high)
        if verdict is None:
            continue
        written = f"{c.bound.kind}: {fraction_text(c.bound.value)}"
        where = f"v ({_what(plan, c)}) lies in [{fraction_text(low)}, {fraction_text(high)}]"
        consequence = ("so the criterion fails whatever the scores" if verdict == "never"
                       else "so the criterion holds whatever the scores")
        out.warn(line_of(plan.lines, ["criteria", i, c.bound.kind]), f"bound-{verdict}-holds",
                 f"criterion {c.id}: {written} {verdict} holds: {where}, {consequence}")
        if verdict == "never":
            never.add(c.id)
    return never


def _rows_never_taken(plan: Plan, never: set[str], out: Findings) -> None:
    """A row that asks for a criterion that can never hold can never be taken."""
    for i, row in enumerate(plan.decisions):
        blocked = [cid for cid in row.criteria if cid in never]
        if blocked:
            out.warn(line_of(plan.lines, ["decisions", i]), "row-never-taken",
                     f"decision row {i + 1} ({row.then}) can never be taken: {', '.join(blocked)} never "
                     "holds")


def criteria_findings(plan: Plan) -> tuple[Finding, ...]:
    """Bounds that never or always hold, rows they make unreachable, criteria no decision row
    names, and a labelled plan without any (warnings)."""
    out = Findings(plan.path)
    _rows_never_taken(plan, _bound_findings(plan, out), out)
    if plan.scale.nominal and not plan.criteria:
        out.warn(line_of(plan.lines, ["scale"]), "no-verdict",
                 "a labelled scale has no means, so without criteria the study has no verdict: the "
                 "report gives agreement only (pre-register rate criteria and decisions for one)")
    used = {cid for row in plan.decisions for cid in row.criteria}
    for i, c in enumerate(plan.criteria):
        if c.id not in used:
            out.warn(line_of(plan.lines, ["criteria", i]), "unused-criterion",
                     f"criterion {c.id} is named by no decision row: it is reported but decides nothing")
    return out.sorted()


def design_summary(plan: Plan) -> dict[str, Any]:
    """The design at a glance, for check-plan's JSON (`design`) and its first lines."""
    scale: dict[str, Any] = (
        {"kind": "nominal", "labels": list(plan.scale.labels)} if plan.scale.nominal
        else {"kind": "ordinal", "min": plan.scale.min, "max": plan.scale.max}
    )
    return {
        "conditions": [{"id": c.id, "role": c.role} for c in plan.conditions],
        "replicates": plan.replicates,
        "scale": scale,
        "seed_verdict": None if plan.criteria or plan.scale.nominal else plan.treatment.id,
        "passes": [{"id": p.id, "after": list(p.after)} for p in plan.passes],
        "criteria": [{"id": c.id, "kind": c.kind} for c in plan.criteria],
        "decisions": [{"row": i, "if": list(r.criteria), "then": r.then, "otherwise": r.otherwise}
                      for i, r in enumerate(plan.decisions, start=1)],
    }


def summary_lines(design: dict[str, Any]) -> list[str]:
    """The design in a few lines of text (check-plan's text output)."""
    conds = design["conditions"]
    baseline = next(c["id"] for c in conds if c["role"] == "baseline")
    treatments = [c["id"] for c in conds if c["role"] == "treatment"]
    scale = design["scale"]
    shown = (f"labels {', '.join(scale['labels'])}" if scale["kind"] == "nominal"
             else f"ordinal scale {scale['min']}..{scale['max']}")
    n = design["replicates"]
    head = (f"design: {len(conds)} conditions ({baseline} baseline; {', '.join(treatments)}), "
            f"{n} replicate{'s' if n != 1 else ''}, {shown}")
    if design["seed_verdict"] is not None:
        lines = [f"{head}; the seed's verdict compares {baseline} with {design['seed_verdict']}"]
    elif not design["criteria"]:
        lines = [f"{head}; no criteria, so no verdict"]
    else:
        lines = [head, "  criteria: " + ", ".join(f"{c['id']} ({c['kind']})" for c in design["criteria"])]
    for row in design["decisions"]:
        cond = "otherwise" if row["otherwise"] else "if " + " and ".join(row["if"])
        lines.append(f"  decision row {row['row']}: {cond} → {row['then']}")
    order = [f"{p['id']} after {', '.join(p['after'])}" for p in design["passes"] if p["after"]]
    if order:
        lines.append("  pass order: " + "; ".join(order))
    return lines
