"""Loading the study plan: YAML → schema → semantic checks → `model.Plan`.

All problems are collected before raising, so a user fixing a hand-written plan sees every
error with its line at once instead of one per run.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path
from typing import Any

from aoven_git import schemas
from aoven_git.errors import PlanError
from aoven_git.model import (
    Condition,
    Dimension,
    FailRules,
    KappaRules,
    Pass,
    PassRules,
    Plan,
    Question,
    Rater,
    Refinement,
    Round,
    Rules,
    Scale,
    Security,
    Transition,
)
from aoven_git.yamlio import YamlError, load_yaml

PLAN_FILE = "aoven.yaml"
#: A real plan is a few KiB (the default is ~7 KiB; 500 questions ~40 KiB). The YAML parser needs
#: seconds for a flat plan of a few hundred KiB, and the pre-commit hook parses the plan on every
#: commit, so anything this large is refused up front rather than parsed slowly.
MAX_PLAN_BYTES = 256 * 1024
PLACEHOLDERS = {"condition", "question"}


class PlanProblems(PlanError):
    """Several plan errors at once; `problems` holds (line, message) pairs."""

    def __init__(self, path: str, problems: list[tuple[int | None, str]]) -> None:
        self.problems = sorted(problems, key=lambda p: (p[0] or 0, p[1]))
        lines = [f"{path}:{line}: {msg}" if line else f"{path}: {msg}" for line, msg in self.problems]
        head = "invalid plan" if len(lines) == 1 else f"invalid plan ({len(lines)} problems)"
        super().__init__(head + ":\n  " + "\n  ".join(lines))


def to_fraction(value: Any) -> Fraction:
    """Thresholds are compared exactly: 0.2 in YAML means 1/5, "5/8" means 5/8."""
    if isinstance(value, str):
        return Fraction(value.replace(" ", ""))
    if isinstance(value, float):
        return Fraction(repr(value))
    return Fraction(value)


def load_plan(path: str | Path, *, display: str | None = None) -> Plan:
    """Read and check the plan at `path`; `display` is the name used in messages."""
    p = Path(path)
    shown = display or str(path)
    try:
        if p.is_dir():
            raise PlanError("is a directory, expected the plan file", path=shown)
        data = p.read_bytes()
    except FileNotFoundError:
        raise PlanError(
            "plan file not found (run `aoven-git init` to write one, or pass --plan PATH)", path=shown
        ) from None
    except OSError as exc:
        raise PlanError(f"cannot read plan: {exc.strerror or exc}", path=shown) from None
    return parse_plan(data, display=shown)


def parse_plan(data: bytes, *, display: str = PLAN_FILE) -> Plan:
    if len(data) > MAX_PLAN_BYTES:
        raise PlanError(
            f"plan is {len(data)} bytes, more than the {MAX_PLAN_BYTES} a plan may have", path=display
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PlanError("plan is not valid UTF-8", path=display, line=line) from None
    if "\x00" in text:
        raise PlanError("plan contains a NUL byte (binary file?)", path=display)
    try:
        raw, lines = load_yaml(text)
    except YamlError as exc:
        raise PlanError(exc.message, path=display, line=exc.line) from None
    if not isinstance(raw, dict):
        raise PlanError("the plan must be a YAML mapping of keys (version, study, …)", path=display, line=1)
    return build_plan(raw, lines, display=display)


def _line(lines: dict[str, int], path: Iterable[Any]) -> int | None:
    parts = [str(p) for p in path]
    while parts:
        key = ".".join(parts)
        if key in lines:
            return lines[key]
        parts.pop()
    return None


def _schema_problems(raw: dict[str, Any], lines: dict[str, int]) -> list[tuple[int | None, str]]:
    """Schema errors at the line a user must edit: a misspelt key's own line (not its parent's),
    and line 1 for a key missing from the top level (there is no better place to point at)."""
    out: list[tuple[int | None, str]] = []
    for err in schemas.validator("plan").iter_errors(raw):
        path = list(err.absolute_path)
        where = "/".join(str(p) for p in path) or "(top level)"
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            known = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
            extra = [k for k in err.instance if k not in known]
            if extra:
                for key in extra:
                    line = _line(lines, [*path, key]) or _line(lines, path) or 1
                    out.append((line, f"{where}: unknown key {key!r} (known: {', '.join(known)})"))
                continue
        out.append((_line(lines, path) or 1, f"{where}: {err.message}"))
    return out


def _defaults(node: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
    out = dict(node)
    for key, spec in props.items():
        if key not in out and isinstance(spec, dict) and "default" in spec:
            out[key] = spec["default"]
    return out


def build_plan(raw: dict[str, Any], lines: dict[str, int], *, display: str = PLAN_FILE) -> Plan:
    problems = _schema_problems(raw, lines)
    if problems:
        raise PlanProblems(display, problems)
    props = schemas.schema("plan")["properties"]
    doc = _defaults(raw, props)
    add = problems.append

    def dupes(key: str, items: list[dict[str, Any]]) -> None:
        seen: dict[Any, int] = {}
        for i, item in enumerate(items):
            if item["id"] in seen:
                add(
                    (
                        _line(lines, [key, i]),
                        f"{key}: duplicate id {item['id']!r} (also item {seen[item['id']] + 1})",
                    )
                )
            seen.setdefault(item["id"], i)

    # -- patterns -------------------------------------------------------------------------
    for key in ("responses", "stripped_responses"):
        pattern = doc[key]
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None}
        except ValueError as exc:
            add((_line(lines, [key]), f"{key}: bad pattern {pattern!r}: {exc}"))
            continue
        if fields != PLACEHOLDERS:
            add(
                (
                    _line(lines, [key]),
                    f"{key}: pattern must use exactly {{condition}} and {{question}}, found {sorted(fields)}",
                )
            )
        if pattern.startswith("/") or ".." in Path(pattern).parts:
            add((_line(lines, [key]), f"{key}: must be a path inside study_dir"))
    if doc["responses"] == doc["stripped_responses"]:
        add((_line(lines, ["stripped_responses"]), "stripped_responses must differ from responses"))

    scale_raw = doc.get("scale", {"min": 0, "max": 3})
    if scale_raw["min"] >= scale_raw["max"]:
        add((_line(lines, ["scale"]), "scale: min must be lower than max"))

    # -- conditions -----------------------------------------------------------------------
    conds = doc["conditions"]
    dupes("conditions", conds)
    for role in ("baseline", "treatment"):
        count = sum(1 for c in conds if c["role"] == role)
        if count != 1:
            add(
                (
                    _line(lines, ["conditions"]),
                    f"conditions: need exactly one {role} condition, found {count}",
                )
            )

    # -- transitions, dimensions ----------------------------------------------------------
    transitions = doc.get("transitions", [])
    dupes("transitions", transitions)
    transition_ids = {t["id"] for t in transitions}
    dims = doc["dimensions"]
    dupes("dimensions", dims)
    dim_ids = {d["id"] for d in dims}
    for i, d in enumerate(dims):
        for j, t in enumerate(d.get("transitions", [])):
            if t not in transition_ids:
                add(
                    (
                        _line(lines, ["dimensions", i, "transitions", j]),
                        f"dimension {d['id']} covers unknown transition #{t}",
                    )
                )
        if d.get("annotate") and not d.get("transitions"):
            add(
                (
                    _line(lines, ["dimensions", i]),
                    f"dimension {d['id']} has annotate: true but covers no transition",
                )
            )
    for i, d in enumerate(doc.get("load_dimensions", [])):
        if d not in dim_ids:
            add((_line(lines, ["load_dimensions", i]), f"load_dimensions: unknown dimension {d!r}"))

    # -- questions, rounds, refinements ---------------------------------------------------
    questions, holdout = doc["questions"], doc.get("holdout", [])
    dupes("questions", questions)
    dupes("holdout", holdout)
    main_ids = [q["id"] for q in questions]
    hold_ids = [q["id"] for q in holdout]
    for i, q in enumerate(holdout):
        if q["id"] in main_ids:
            add((_line(lines, ["holdout", i]), f"holdout question {q['id']} is also a main question"))
    for key, qs in (("questions", questions), ("holdout", holdout)):
        for i, q in enumerate(qs):
            for j, t in enumerate(q.get("expects", [])):
                if t not in transition_ids:
                    add(
                        (
                            _line(lines, [key, i, "expects", j]),
                            f"question {q['id']} expects unknown transition #{t}",
                        )
                    )
    refinements = doc.get("refinements", [])
    dupes("refinements", refinements)
    refinement_ids = {r["id"] for r in refinements}
    rounds = doc.get("rounds") or [{"id": "main", "questions": "main"}]
    dupes("rounds", rounds)
    resolved_rounds: list[Round] = []
    for i, r in enumerate(rounds):
        spec = r["questions"]
        if spec == "main":
            ids, source = tuple(main_ids), "main"
        elif spec == "holdout":
            ids, source = tuple(hold_ids), "holdout"
            if not ids:
                add((_line(lines, ["rounds", i]), f"round {r['id']} uses the holdout set, which is empty"))
        else:
            ids, source = tuple(spec), "explicit"
            for j, q in enumerate(spec):
                if q not in main_ids and q not in hold_ids:
                    add(
                        (
                            _line(lines, ["rounds", i, "questions", j]),
                            f"round {r['id']}: unknown question {q!r}",
                        )
                    )
        for j, ref in enumerate(r.get("refinements", [])):
            if ref not in refinement_ids:
                add(
                    (
                        _line(lines, ["rounds", i, "refinements", j]),
                        f"round {r['id']}: unknown refinement {ref!r}",
                    )
                )
        resolved_rounds.append(Round(r["id"], ids, source, tuple(r.get("refinements", []))))

    # -- raters, passes -------------------------------------------------------------------
    raters = doc["raters"]
    dupes("raters", raters)
    passes = doc["passes"]
    dupes("passes", passes)
    cond_ids = {c["id"] for c in conds}
    for i, p in enumerate(passes):
        for j, c in enumerate(p["conditions"]):
            if c not in cond_ids:
                add(
                    (_line(lines, ["passes", i, "conditions", j]), f"pass {p['id']}: unknown condition {c!r}")
                )
        for j, d in enumerate(p["dimensions"]):
            if d not in dim_ids:
                add(
                    (_line(lines, ["passes", i, "dimensions", j]), f"pass {p['id']}: unknown dimension {d!r}")
                )
        if len(set(p["conditions"])) != len(p["conditions"]) or len(set(p["dimensions"])) != len(
            p["dimensions"]
        ):
            add((_line(lines, ["passes", i]), f"pass {p['id']}: a condition or dimension is listed twice"))
    primaries = [p["id"] for p in passes if p.get("primary")]
    if len(primaries) != 1:
        add((_line(lines, ["passes"]), f"passes: need exactly one primary pass, found {len(primaries)}"))
    # File names are scores_<rater>[_<round>][_<pass>].md: an id that could be read two ways
    # would make a file's identity depend on guessing, so round and pass ids must be distinct.
    clash = {r["id"] for r in rounds} & {p["id"] for p in passes}
    if clash:
        add((_line(lines, ["passes"]), f"ids used both as round and pass: {sorted(clash)}"))

    # -- claims, security, locked ---------------------------------------------------------
    for t, q in (doc.get("claims") or {}).get("unique_probes", {}).items():
        where = _line(lines, ["claims", "unique_probes", t])
        if int(t) not in transition_ids:
            add((where, f"claims.unique_probes: unknown transition #{t}"))
        if q not in main_ids and q not in hold_ids:
            add((where, f"claims.unique_probes: unknown question {q!r}"))
    security = _defaults(doc.get("security") or {}, props["security"]["properties"])
    if security["require_signed"] and not security["allowed_signers"]:
        add(
            (
                _line(lines, ["security"]),
                "security.require_signed needs security.allowed_signers (an ssh allowed-signers file)",
            )
        )
    for i, key in enumerate(doc.get("locked", [])):
        if key not in props:
            add((_line(lines, ["locked", i]), f"locked: unknown plan key {key!r}"))
    markers = doc.get("markers", [])

    rules = _rules(doc.get("rules") or {}, props["rules"]["properties"], lines, add)
    if problems:
        raise PlanProblems(display, problems)

    def question(q: dict[str, Any]) -> Question:
        return Question(q["id"], q["text"], q.get("domain", ""), tuple(q.get("expects", [])))

    return Plan(
        version=doc["version"],
        study=doc["study"],
        study_dir=doc["study_dir"].rstrip("/"),
        responses=doc["responses"],
        stripped_responses=doc["stripped_responses"],
        scale=Scale(scale_raw["min"], scale_raw["max"]),
        conditions=tuple(Condition(c["id"], c.get("name", c["id"]), c["role"]) for c in conds),
        transitions=tuple(Transition(t["id"], t["name"]) for t in transitions),
        dimensions=tuple(
            Dimension(d["id"], d["name"], d["kind"], tuple(d.get("transitions", [])), bool(d.get("annotate")))
            for d in dims
        ),
        load_dimensions=tuple(doc.get("load_dimensions", [])),
        questions=tuple(question(q) for q in questions),
        holdout=tuple(question(q) for q in holdout),
        rounds=tuple(resolved_rounds),
        raters=tuple(
            Rater(r["id"], r.get("name", r["id"]), tuple(r.get("emails", [])), r.get("required", True))
            for r in raters
        ),
        passes=tuple(
            Pass(
                p["id"],
                tuple(p["conditions"]),
                tuple(p["dimensions"]),
                p.get("stripped", False),
                p.get("primary", False),
            )
            for p in passes
        ),
        markers=tuple(markers),
        rules=rules,
        refinements=tuple(Refinement(r["id"], r["text"]) for r in refinements),
        retest_cap=doc.get("retest_cap", 1),
        claims=dict(doc.get("claims") or {}),
        security=Security(bool(security["require_signed"]), security["allowed_signers"]),
        locked=tuple(doc.get("locked", [])),
        path=display,
        raw=raw,
        lines=lines,
    )


def _rules(raw: dict[str, Any], props: dict[str, Any], lines: dict[str, int], add: Any) -> Rules:
    r = _defaults(raw, props)
    kappa = _defaults(r.get("kappa", {}), props["kappa"]["properties"])
    pass_ = _defaults(r.get("pass", {}), props["pass"]["properties"])
    fail = _defaults(r.get("fail", {}), props["fail"]["properties"])
    try:
        rules = Rules(
            kappa=KappaRules(
                kappa["weights"], to_fraction(kappa["threshold"]), kappa["aggregate"], kappa["undefined"]
            ),
            flag_spread=r["flag_spread"],
            unflagged=r["unflagged"],
            blinding_divergence=to_fraction(r["blinding_divergence"]),
            pass_=PassRules(
                to_fraction(pass_["improvement"]),
                pass_["questions"],
                to_fraction(pass_["dims_fraction"]),
                to_fraction(pass_["load_tolerance"]),
                to_fraction(pass_["regression_tolerance"]),
            ),
            fail=FailRules(to_fraction(fail["improvement"])),
            require_annotations=r["require_annotations"],
        )
    except (ValueError, ZeroDivisionError) as exc:
        add((_line(lines, ["rules"]), f"rules: {exc}"))
        return Rules()
    if rules.pass_.dims_fraction > 1:
        add((_line(lines, ["rules", "pass", "dims_fraction"]), "rules.pass.dims_fraction must be at most 1"))
    if rules.fail.improvement > rules.pass_.improvement:
        add(
            (_line(lines, ["rules", "fail"]), "rules.fail.improvement must not exceed rules.pass.improvement")
        )
    return rules


RATER_ID = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
