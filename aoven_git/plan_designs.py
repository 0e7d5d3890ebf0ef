"""The plan's design keys beyond the seed's A/B (docs/plan.md, "Criteria and decisions"): their
checks (criteria, the decision table, pass order, the seed verdict's treatment among several),
criteria and decision rows as the model holds them, and `to_fraction`, how every number of the
plan is read exactly (with `fraction_text`, how it is written back in messages).

Each check reads the plan document after the schema (plain data, defaults of the top-level keys
filled in) and reports through `out.at(path, message)`, like every check of `plan.py`, which runs
these after its own (`plan.CHECKS`). Unknown ids are rows of `plan.REFERENCES`; what a table cannot
say is here, one small function per rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any, Protocol

from aoven_git.model import Bound, Criterion, DecisionRow


def to_fraction(value: Any) -> Fraction:
    """Thresholds are compared exactly: 0.2 in YAML means 1/5, "5/8" means 5/8."""
    if isinstance(value, str):
        return Fraction(value.replace(" ", ""))
    if isinstance(value, float):
        return Fraction(repr(value))
    return Fraction(value)


def fraction_text(value: Fraction | int) -> str:
    """The inverse of `to_fraction` for messages: exact decimals as decimals (1/5 → "0.2"),
    anything else as a fraction ("2/3"), never a rounded float."""
    value = Fraction(value)
    d = value.denominator
    twos = fives = 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(twos, fives)
    if places == 0:
        return str(value.numerator)
    scaled = value.numerator * 10**places // value.denominator
    sign = "-" if scaled < 0 else ""
    digits = str(abs(scaled)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


BOUND_KINDS = ("within", "at_most", "below", "at_least", "above")


class Problems(Protocol):
    def at(self, path: Iterable[Any], message: str) -> None: ...


def _ids(doc: dict[str, Any], key: str) -> list[Any]:
    return [item["id"] for item in doc.get(key) or []]


#: The keys each criterion kind takes besides `id`, `kind` and its bound (docs/plan.md, "Criteria").
KIND_KEYS: dict[str, tuple[str, ...]] = {
    "delta": ("of", "dimensions", "per", "pass", "gate"),
    "rate": ("of", "label", "dimension", "questions", "require", "pass", "gate"),
    "seed": ("treatment", "gate"),
}
#: The keys a kind cannot do without (a seed criterion's treatment is checked on its own).
KIND_NEEDS: dict[str, tuple[str, ...]] = {"delta": ("of",), "rate": ("of", "label"), "seed": ()}


def treatment_ids(doc: dict[str, Any]) -> list[Any]:
    return [c["id"] for c in doc["conditions"] if c.get("role", "treatment") == "treatment"]


def _baseline_id(doc: dict[str, Any]) -> Any:
    return next((c["id"] for c in doc["conditions"] if c.get("role") == "baseline"), None)


def _verdict_questions(doc: dict[str, Any]) -> list[Any]:
    """The questions of the first round, where criteria are evaluated (docs/plan.md, "Rounds")."""
    spec = doc["rounds"][0]["questions"]
    if spec in ("main", "holdout"):
        return _ids(doc, "questions" if spec == "main" else "holdout")
    return list(spec)


def blind_pass_gap(p: dict[str, Any], roles: dict[str, Any], treatments: list[Any]) -> str | None:
    """What a blind pass fails to score (for `plan._check_blind_passes`): both conditions of an
    A/B plan (the seed's message), or the baseline and at least one treatment of several."""
    if len(treatments) < 2:
        both = [roles[r] for r in ("baseline", "treatment") if r in roles]
        missing = [c for c in both if c not in p["conditions"]]
        if not missing:
            return None
        return f"a blind pass must score both {' and '.join(both)} (it does not score {', '.join(missing)})"
    baseline = roles.get("baseline")
    gaps = [f"does not score {baseline}"] if baseline is not None and baseline not in p["conditions"] else []
    if not any(t in p["conditions"] for t in treatments):
        gaps.append("scores no treatment")
    if not gaps:
        return None
    return (f"a blind pass must score the baseline {baseline} and at least one treatment of "
            f"{', '.join(treatments)} (it {' and '.join(gaps)})")


def _criteria(doc: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any], str]]:
    """(index, criterion, the name messages use) for every criterion of the plan."""
    for i, c in enumerate(doc.get("criteria") or []):
        yield i, c, f"criterion {c['id']}"


def _check_criterion_keys(doc: dict[str, Any], out: Problems) -> None:
    """Each kind reads its own keys: `per` on a rate or `label` on a delta would be ignored
    silently, and a pre-registration must not say more than is evaluated."""
    for i, c, name in _criteria(doc):
        kind = c["kind"]
        takes = KIND_KEYS[kind]
        for key in c:
            if key not in ("id", "kind", *BOUND_KINDS, *takes):
                out.at(["criteria", i, key],
                       f"{name}: `{key}` does not apply to a {kind} criterion (it takes {', '.join(takes)})")
        for key in KIND_NEEDS[kind]:
            if key not in c:
                out.at(["criteria", i], f"{name}: a {kind} criterion needs `{key}`")


def _finite(value: Any) -> Fraction | None:
    """A bound as an exact fraction; None for what YAML can write but no fraction is (.inf, .nan,
    1e400), which the schema's `number` lets through."""
    try:
        return to_fraction(value)
    except (ValueError, OverflowError, ZeroDivisionError):
        return None


def _check_criterion_bounds(doc: dict[str, Any], out: Problems) -> None:
    """Exactly one bound for delta and rate; none for seed (it holds iff the seed's rule gives
    PASS); `within: m` is |v| ≤ m, so a negative m could never hold."""
    for i, c, name in _criteria(doc):
        bounds = [k for k in BOUND_KINDS if k in c]
        if c["kind"] == "seed":
            for key in bounds:
                out.at(["criteria", i, key], f"{name}: a seed criterion takes no bound (it holds when the "
                                             f"seed's rule gives PASS); remove `{key}`")
        elif len(bounds) != 1:
            found = f": {', '.join(bounds)}" if bounds else ""
            out.at(["criteria", i], f"{name}: needs exactly one bound (within, at_most, below, at_least "
                                    f"or above), found {len(bounds)}{found}")
        for key in bounds:
            value = _finite(c[key])
            if value is None:
                out.at(["criteria", i, key], f"{name}: {key} must be a finite number, found {c[key]!r}")
            elif key == "within" and value < 0:
                out.at(["criteria", i, key],
                       f"{name}: within is {fraction_text(value)}, but |v| ≤ m needs m ≥ 0")


def _check_criterion_scale(doc: dict[str, Any], out: Problems) -> None:
    """Means need numbers and shares need labels: delta and seed read an ordinal scale, rate a
    labelled one, and a rate's label must be one of the scale's labels (written exactly)."""
    labels = doc["scale"].get("labels")
    for i, c, name in _criteria(doc):
        if c["kind"] in ("delta", "seed") and labels:
            out.at(["criteria", i, "kind"],
                   f"{name}: a {c['kind']} criterion needs means, and a labelled scale has none "
                   "(use kind: rate)")
        elif c["kind"] == "rate" and not labels:
            out.at(["criteria", i, "kind"], f"{name}: a rate criterion counts labels, and the scale has none "
                                            "(write scale: {labels: [...]}, or use kind: delta)")
        elif c["kind"] == "rate" and "label" in c and not _is_label(c["label"], labels):
            out.at(["criteria", i, "label"],
                   f"{name}: unknown label {c['label']!r} (the scale's labels: {', '.join(labels)})")


def _is_label(text: Any, labels: list[Any]) -> bool:
    """A label as score cells accept it (model.Scale.value_of): exactly, or ignoring case."""
    return text in labels or str(text).casefold() in {str(x).casefold() for x in labels}


def _check_criterion_conditions(doc: dict[str, Any], out: Problems) -> None:
    """`of: [X, X]` compares a condition with itself; a seed criterion judges a treatment against
    the baseline, so it must name one (when there are several) and it may not be the baseline."""
    baseline, treatments = _baseline_id(doc), treatment_ids(doc)
    for i, c, name in _criteria(doc):
        of = c.get("of") or []
        if len(of) == 2 and of[0] == of[1]:
            out.at(["criteria", i, "of"], f"{name}: of compares {of[0]} with itself")
        if c["kind"] != "seed":
            continue
        if "treatment" not in c and len(treatments) > 1:
            out.at(["criteria", i],
                   f"{name}: a seed criterion needs `treatment:` (one of {', '.join(treatments)})")
        elif c.get("treatment") is not None and c["treatment"] == baseline:
            out.at(["criteria", i, "treatment"],
                   f"{name}: treatment {baseline} is the baseline; the seed's rule judges a treatment "
                   f"against it ({', '.join(treatments)})")


def rate_dimension(c: dict[str, Any], doc: dict[str, Any]) -> Any:
    """The labelled dimension a rate criterion reads: `dimension:`, else the only dimension of
    its pass (`pass:`, else the primary pass); None when that pass scores several (the check
    asks for `dimension:`)."""
    if "dimension" in c:
        return c["dimension"]
    passes = {p["id"]: p for p in doc["passes"]}
    primary = next((p for p in doc["passes"] if p.get("primary")), None)
    chosen = passes.get(c["pass"]) if "pass" in c else primary
    if chosen is None or len(chosen["dimensions"]) != 1:
        return None
    return chosen["dimensions"][0]


def _criterion_dimensions(c: dict[str, Any], doc: dict[str, Any]) -> list[Any]:
    if c["kind"] == "delta":
        primary = next((p for p in doc["passes"] if p.get("primary")), {"dimensions": []})
        return list(c.get("dimensions") or primary["dimensions"])
    if c["kind"] == "rate":
        dim = rate_dimension(c, doc)
        return [dim] if dim is not None else []
    return []


def _read_pass(c: dict[str, Any], dim: Any, doc: dict[str, Any]) -> tuple[Any, str | None]:
    """(pass id, problem) for the cells of `dim` a criterion reads: `pass:` if given, else the
    primary pass if it scores the dimension, else the one pass that does."""
    if "pass" in c:
        return c["pass"], None
    scoring = [p for p in doc["passes"] if dim in p["dimensions"]]
    primary = next((p for p in scoring if p.get("primary")), None)
    if primary is not None:
        return primary["id"], None
    if len(scoring) == 1:
        return scoring[0]["id"], None
    if not scoring:
        return None, f"no pass scores {dim}"
    listed = " and ".join(p["id"] for p in scoring)
    return None, f"passes {listed} both score {dim} and neither is primary: name the one it reads with pass:"


def _check_criterion_passes(doc: dict[str, Any], out: Problems) -> None:
    """Each criterion must read cells that exist: its pass (given or by default) scores each
    dimension it needs and each condition it compares; a rate names its labelled dimension when
    the pass scores several."""
    passes = {p["id"]: p for p in doc["passes"]}
    dims = set(_ids(doc, "dimensions"))
    for i, c, name in _criteria(doc):
        known = "pass" not in c or c["pass"] in passes
        if c["kind"] == "rate" and known and rate_dimension(c, doc) is None:
            shown = f"pass {c['pass']}" if "pass" in c else "the primary pass"
            out.at(["criteria", i], f"{name}: {shown} scores several dimensions: name the labelled one "
                                    "with dimension:")
        for dim in _criterion_dimensions(c, doc):
            if dim not in dims:
                continue  # reported by the reference table
            pass_id, problem = _read_pass(c, dim, doc)
            p = passes.get(pass_id)
            if problem or p is None:
                if problem:
                    out.at(["criteria", i], f"{name}: {problem}")
                continue
            where = ["criteria", i, "pass"] if "pass" in c else ["criteria", i]
            if dim not in p["dimensions"]:
                out.at(where, f"{name}: pass {pass_id} does not score {dim}")
                continue
            known = set(_ids(doc, "conditions"))  # an unknown one is reported by the reference table
            absent = [x for x in c.get("of") or [] if x in known and x not in p["conditions"]]
            if absent:
                out.at(where, f"{name}: pass {pass_id} (read for {dim}) does not score {', '.join(absent)}")


def _check_criterion_questions(doc: dict[str, Any], out: Problems) -> None:
    """A rate is evaluated on questions of the verdict round, and `require: N` asks for at least
    N of them: more than it has could never be met."""
    scored = _verdict_questions(doc)
    round_id = doc["rounds"][0]["id"]
    for i, c, name in _criteria(doc):
        for j, q in enumerate(c.get("questions") or []):
            if q in {*_ids(doc, "questions"), *_ids(doc, "holdout")} and q not in scored:
                out.at(["criteria", i, "questions", j],
                       f"{name}: question {q} is not scored in the verdict round {round_id}")
        if len(set(c.get("questions") or [])) != len(c.get("questions") or []):
            out.at(["criteria", i, "questions"], f"{name}: a question is listed twice")
        require, n = c.get("require", "all"), len(c.get("questions") or scored)
        if require != "all" and require > n:
            out.at(["criteria", i, "require"],
                   f"{name}: require is {require} but it is evaluated on {n} question{'s' if n != 1 else ''}")


def _check_decision_table(doc: dict[str, Any], out: Problems) -> None:
    """Criteria and decisions come together (docs/plan.md, "Criteria and decisions"): a criterion
    no row decides on pre-registers nothing, and a table needs criteria to read. The table ends
    with exactly one `otherwise`, so every outcome decides something."""
    criteria, rows = doc.get("criteria") or [], doc.get("decisions") or []
    if criteria and not rows:
        out.at(["criteria"], "criteria: pre-registered criteria need a decision table: add `decisions:` "
                             "with rows `- {if: [...], then: ...}` and a last `- {otherwise: ...}`")
    if rows and not criteria:
        out.at(["decisions"], "decisions: a decision table needs `criteria` to decide on")
    if not rows:
        return
    others = [i for i, r in enumerate(rows) if "otherwise" in r]
    if not others:
        out.at(["decisions"], "decisions: the last row must be `- {otherwise: ...}` (what is decided when "
                              "no other row is taken)")
    for i in others:
        if i != len(rows) - 1:
            out.at(["decisions", i], f"decisions: row {i + 1} is `otherwise`, which must be the last row "
                                     "(and the only one)")
    for i, row in enumerate(rows):
        if len(set(row.get("if") or [])) != len(row.get("if") or []):
            out.at(["decisions", i, "if"], f"decisions: row {i + 1} lists a criterion twice")


def _check_unreachable_rows(doc: dict[str, Any], out: Problems) -> None:
    """Rows are read in order, so a row whose criteria include all of an earlier row's can never
    be taken: whenever its criteria hold, the earlier row's hold too and it is taken first."""
    rows = [(i, set(r["if"])) for i, r in enumerate(doc.get("decisions") or []) if "if" in r]
    for j, later in rows:
        earlier = next((i for i, wanted in rows if i < j and wanted <= later), None)
        if earlier is not None:
            asked = ", ".join(doc["decisions"][earlier]["if"])
            out.at(["decisions", j],
                   f"decisions: row {j + 1} can never be taken: row {earlier + 1} asks only for {asked}, "
                   f"which row {j + 1} asks for too, so row {earlier + 1} is taken first (put the stricter "
                   "row first)")


def _check_pass_order(doc: dict[str, Any], out: Problems) -> None:
    """`after: [P]`: P is sealed before this pass is scored, so a pass after itself, or a cycle
    of passes each after the next, could never be scored at all."""
    after = {p["id"]: list(p.get("after") or []) for p in doc["passes"]}
    for i, p in enumerate(doc["passes"]):
        if p["id"] in after[p["id"]]:
            j = after[p["id"]].index(p["id"])
            out.at(["passes", i, "after", j], f"pass {p['id']}: after names the pass itself")
    reported: set[Any] = set()
    for i, p in enumerate(doc["passes"]):
        cycle = _order_cycle(p["id"], after)
        if cycle and p["id"] not in reported and len(cycle) > 2:
            reported.update(cycle)
            out.at(["passes", i, "after"], f"pass {p['id']}: the order {' → '.join(map(str, cycle))} is a "
                                           "cycle, so none of these passes could ever be scored first")


def _order_cycle(start: Any, after: dict[Any, list[Any]]) -> list[Any] | None:
    """The shortest path start → … → start through `after` (a cycle through `start`), or None."""
    paths: list[list[Any]] = [[start]]
    seen = {start}
    while paths:
        path = paths.pop(0)
        for nxt in after.get(path[-1], []):
            if nxt == start:
                return [*path, start]
            if nxt not in seen and nxt in after:
                seen.add(nxt)
                paths.append([*path, nxt])
    return None


def _check_seed_verdict(doc: dict[str, Any], out: Problems) -> None:
    """A plan without criteria is decided by the seed's rule, which compares the baseline with one
    treatment: several treatments need `rules.pass.treatment`, which must be a treatment. (A
    labelled scale without criteria has no verdict at all: check-plan warns, `no-verdict`.)"""
    named = ((doc.get("rules") or {}).get("pass") or {}).get("treatment")
    baseline, treatments = _baseline_id(doc), treatment_ids(doc)
    if named is not None and named == baseline:
        out.at(["rules", "pass", "treatment"], f"rules.pass.treatment: {named} is the baseline; name the "
                                               f"treatment the seed's verdict compares with it")
    if doc.get("criteria"):
        return
    if named is None and len(treatments) > 1:
        out.at(["conditions"], f"conditions: {len(treatments)} treatments ({', '.join(treatments)}) and no "
                               f"criteria: name the one the seed's verdict compares with {baseline} under "
                               "rules.pass.treatment, or pre-register criteria and decisions")



# --------------------------------------------------------------------------- model


def criterion(c: dict[str, Any], doc: dict[str, Any]) -> Criterion:
    """A criterion as the model holds it, with the defaults the plan alone decides resolved: a
    rate's labelled dimension, a seed's treatment (the only one). `questions` stays as written
    (empty: every question of the round evaluated). Its checks ran before."""
    bound_key = next((k for k in BOUND_KINDS if k in c), None)
    bound = Bound(bound_key, to_fraction(c[bound_key])) if bound_key else None  # type: ignore[arg-type]
    require = c.get("require", "all")
    rate = c["kind"] == "rate"
    treatments = treatment_ids(doc)
    only = treatments[0] if c["kind"] == "seed" and len(treatments) == 1 else None
    return Criterion(
        id=c["id"],
        kind=c["kind"],
        bound=bound,
        of=tuple(c.get("of", ())),
        dimensions=tuple(c.get("dimensions", ())),
        per=c.get("per", "dimension"),
        questions=tuple(c.get("questions", ())),
        label=c.get("label"),
        dimension=rate_dimension(c, doc) if rate else c.get("dimension"),
        require=None if require == "all" else int(require),
        treatment=c.get("treatment", only),
        pass_id=c.get("pass"),
        gate=c.get("gate", True),
    )


def decision_row(row: dict[str, Any]) -> DecisionRow:
    if "otherwise" in row:
        return DecisionRow(row["otherwise"], (), otherwise=True)
    return DecisionRow(row["then"], tuple(row["if"]))



DESIGN_CHECKS: tuple[Callable[[dict[str, Any], Problems], None], ...] = (
    _check_pass_order,
    _check_seed_verdict,
    _check_criterion_keys,
    _check_criterion_bounds,
    _check_criterion_scale,
    _check_criterion_conditions,
    _check_criterion_passes,
    _check_criterion_questions,
    _check_decision_table,
    _check_unreachable_rows,
)
