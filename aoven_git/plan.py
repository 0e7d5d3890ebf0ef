"""Loading the study plan: YAML → schema → semantic checks → `model.Plan`.

Every key, its default and its checks are described in docs/plan.md; the schema
(`schemas/plan.schema.json`) describes each key for editors.

The semantic checks come in two kinds. `REFERENCES` is a table of the plan's foreign keys
("every `passes[].dimensions[]` must be a `dimensions[].id`"); the `_check_*` functions say what a
table cannot (exactly one baseline, one primary pass, id clashes, response patterns, blind passes,
amendment scopes…). Both report through `_Problems.at(path, message)`, the one place that turns a
YAML path into a line. All problems are collected before raising, so a user fixing a hand-written
plan sees every error with its line at once instead of one per run.
"""

from __future__ import annotations

import math
import posixpath
import re
import string
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from aoven_git import schemas
from aoven_git.errors import PlanError
from aoven_git.model import (
    Amendment,
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
    TimestampAuthority,
    Timestamps,
    Transition,
    Withdrawal,
)
from aoven_git.plan_designs import (
    DESIGN_CHECKS,
    blind_pass_gap,
    criterion,
    decision_row,
    fraction_text,
    to_fraction,
    treatment_ids,
)
from aoven_git.yamlio import YamlError, load_yaml

PLAN_FILE = "aoven.yaml"
#: The plan `aoven-git init` writes: the published defaults (see `plan_diff.deviations`).
DEFAULT_PLAN_TEMPLATE = Path(__file__).resolve().parent / "templates" / "aoven.yaml"
#: The plan each `init --design` writes (docs/plan.md, "Criteria and decisions"): the seed's A/B,
#: the four-arm comparison with a decision table, the probe study with labels and replicates.
DESIGN_TEMPLATES = {
    "seed": DEFAULT_PLAN_TEMPLATE,
    "arms": DEFAULT_PLAN_TEMPLATE.with_name("aoven-arms.yaml"),
    "probes": DEFAULT_PLAN_TEMPLATE.with_name("aoven-probes.yaml"),
}
#: A real plan is a few KiB (the default is ~7 KiB; 500 questions ~40 KiB). The YAML parser needs
#: seconds for a flat plan of a few hundred KiB, and the pre-commit hook parses the plan on every
#: commit, so anything this large is refused up front rather than parsed slowly.
MAX_PLAN_BYTES = 256 * 1024
#: Widest score scale (max − min). Rubrics anchor a handful of levels; every agreement table and
#: weight matrix is (span + 1)² per dimension, so 0..100000 would make `report` allocate gigabytes.
MAX_SCALE_SPAN = 10
PLACEHOLDERS = {"condition", "question"}
#: Lists whose items carry an `id` that must be unique within the list.
ID_LISTS = (
    "conditions", "transitions", "dimensions", "questions", "holdout", "refinements", "rounds",
    "raters", "passes", "amendments", "criteria",
)
#: Keys that change after the first seal by design, so `locked` may not name them.
UNLOCKABLE = {"amendments": "the list grows after the first seal (append an entry, never edit one)",
              "withdrawals": "the list grows after the first seal (a rater who drops out; docs/plan.md)"}
#: The categories of a deviation from the protocol (Lakens 2024), for withdrawals and the report.
DEVIATION_CATEGORIES = ("unforeseen", "error", "missing-information", "violated-assumption",
                        "falsified-auxiliary")


class PlanProblems(PlanError):
    """Several plan errors at once; `problems` holds (line, message) pairs."""

    def __init__(self, path: str, problems: list[tuple[int | None, str]]) -> None:
        self.problems = sorted(problems, key=lambda p: (p[0] or 0, p[1]))
        lines = [f"{path}:{line}: {msg}" if line else f"{path}: {msg}" for line, msg in self.problems]
        head = "invalid plan" if len(lines) == 1 else f"invalid plan ({len(lines)} problems)"
        super().__init__(head + ":\n  " + "\n  ".join(lines))


class _Problems:
    """Collects (line, message) pairs while a plan is checked; `at` finds the line of a path."""

    def __init__(self, lines: dict[str, int]) -> None:
        self.lines = lines
        self.items: list[tuple[int | None, str]] = []

    def at(self, path: Iterable[Any], message: str) -> None:
        self.items.append((line_of(self.lines, path), message))

    def __bool__(self) -> bool:
        return bool(self.items)


def load_plan(path: str | Path, *, display: str | None = None) -> Plan:
    """Read and check the plan at `path`; `display` is the name used in messages."""
    p = Path(path)
    shown = display or str(path)
    try:
        if p.is_dir():
            raise PlanError("is a directory, expected the plan file", path=shown)
        data = p.read_bytes()
    except FileNotFoundError:
        # Say where we looked and what that folder is, so nobody runs `init` in the wrong place.
        from aoven_git.gitio import find_root

        looked = p.absolute()
        folder = looked.parent
        existing = next((d for d in (folder, *folder.parents) if d.is_dir()), None)
        root = find_root(existing) if existing is not None else None
        if not folder.is_dir():
            where = f"{folder} does not exist"
        elif root is None:
            where = f"{folder} is not inside a git repository"
        elif root.resolve() == folder.resolve():
            where = f"{folder} is the root of a git repository"
        else:
            where = f"{folder} is inside the git repository {root} (not at its root)"
        start = ("run `git init`, then `aoven-git init`, in the folder that is to hold it" if root is None
                 else f"run `aoven-git init` in {root} (it writes the plan there)")
        raise PlanError(
            f"plan file not found: looked for {looked}\n  {where}.\n"
            "  A study elsewhere: run the command there, or point to it with --repo DIR (its repository) "
            "or --plan FILE.\n"
            f"  To start a new study: {start}.", path=shown
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


def line_of(lines: dict[str, int], path: Iterable[Any]) -> int | None:
    """Line of the deepest part of `path` the plan writes (a default has no line of its own)."""
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
                    line = line_of(lines, [*path, key]) or line_of(lines, path) or 1
                    out.append((line, f"{where}: unknown key {key!r} (known: {', '.join(known)})"))
                continue
        out.append((line_of(lines, path) or 1, f"{where}: {err.message}"))
    return out


def _defaults(node: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
    out = dict(node)
    for key, spec in props.items():
        if key not in out and isinstance(spec, dict) and "default" in spec:
            out[key] = spec["default"]
    return out


def build_plan(raw: dict[str, Any], lines: dict[str, int], *, display: str = PLAN_FILE) -> Plan:
    """Schema first (a document of the wrong shape cannot be checked further), then every
    semantic check, then the model; raises `PlanProblems` listing every problem found."""
    schema_problems = _schema_problems(raw, lines)
    if schema_problems:
        raise PlanProblems(display, schema_problems)
    doc = _defaults(raw, schemas.schema("plan")["properties"])
    problems = _Problems(lines)
    for check in CHECKS:
        check(doc, problems)
    rules = _rules(doc, problems)
    if problems:
        raise PlanProblems(display, problems.items)
    return _build(doc, rules, raw=raw, lines=lines, display=display)


# --------------------------------------------------------------------------- references


@dataclass(frozen=True)
class Reference:
    """Every value at `where` must be an id of `target`. In `where`, `[]` stands for every item
    of a list; `{owner}` in `message` is the id of the enclosing item, `{value}` the value."""

    where: str
    target: str
    message: str


REFERENCES = (
    Reference(
        "dimensions[].transitions[]", "transitions", "dimension {owner} covers unknown transition #{value}"
    ),
    Reference("load_dimensions[]", "dimensions", "load_dimensions: unknown dimension {value!r}"),
    Reference("questions[].expects[]", "transitions", "question {owner} expects unknown transition #{value}"),
    Reference("holdout[].expects[]", "transitions", "question {owner} expects unknown transition #{value}"),
    Reference("rounds[].questions[]", "questions", "round {owner}: unknown question {value!r}"),
    Reference("rounds[].refinements[]", "refinements", "round {owner}: unknown refinement {value!r}"),
    Reference("passes[].conditions[]", "conditions", "pass {owner}: unknown condition {value!r}"),
    Reference("passes[].dimensions[]", "dimensions", "pass {owner}: unknown dimension {value!r}"),
    Reference("amendments[].dimensions[]", "dimensions", "amendment {owner}: unknown dimension {value!r}"),
    Reference("amendments[].conditions[]", "conditions", "amendment {owner}: unknown condition {value!r}"),
    Reference("amendments[].passes[]", "passes", "amendment {owner}: unknown pass {value!r}"),
    Reference("locked[]", "plan keys", "locked: unknown plan key {value!r}"),
    Reference("withdrawals[].rater", "raters", "withdrawals: unknown rater {value!r}"),
    Reference("passes[].after[]", "passes", "pass {owner}: after names unknown pass {value!r}"),
    Reference("rules.pass.treatment", "conditions", "rules.pass.treatment: unknown condition {value!r}"),
    Reference("criteria[].of[]", "conditions", "criterion {owner}: unknown condition {value!r}"),
    Reference("criteria[].treatment", "conditions", "criterion {owner}: unknown condition {value!r}"),
    Reference("criteria[].dimensions[]", "dimensions", "criterion {owner}: unknown dimension {value!r}"),
    Reference("criteria[].dimension", "dimensions", "criterion {owner}: unknown dimension {value!r}"),
    Reference("criteria[].questions[]", "questions", "criterion {owner}: unknown question {value!r}"),
    Reference("criteria[].pass", "passes", "criterion {owner}: unknown pass {value!r}"),
    Reference("decisions[].if[]", "criteria", "decisions: unknown criterion {value!r}"),
)


def _ids(doc: dict[str, Any], key: str) -> list[Any]:
    return [item["id"] for item in doc.get(key) or []]


_TARGETS: dict[str, Callable[[dict[str, Any]], set[Any]]] = {
    "transitions": lambda doc: set(_ids(doc, "transitions")),
    "dimensions": lambda doc: set(_ids(doc, "dimensions")),
    "questions": lambda doc: {*_ids(doc, "questions"), *_ids(doc, "holdout")},
    "refinements": lambda doc: set(_ids(doc, "refinements")),
    "conditions": lambda doc: set(_ids(doc, "conditions")),
    "passes": lambda doc: set(_ids(doc, "passes")),
    "raters": lambda doc: set(_ids(doc, "raters")),
    "criteria": lambda doc: set(_ids(doc, "criteria")),
    "plan keys": lambda doc: set(schemas.schema("plan")["properties"]),
}


def _walk(node: Any, steps: Sequence[str], path: tuple[Any, ...], owner: Any) -> Iterator[tuple[Any, ...]]:
    """(value, path, owner) for every value a reference path reaches; absent parts yield nothing
    (a round whose `questions` is `main` has no list to check)."""
    if not steps:
        yield node, path, owner
        return
    step, rest = steps[0], steps[1:]
    if step == "[]":
        if isinstance(node, list):
            for i, item in enumerate(node):
                inner = item.get("id", owner) if isinstance(item, dict) else owner
                yield from _walk(item, rest, (*path, i), inner)
    elif isinstance(node, dict) and step in node:
        yield from _walk(node[step], rest, (*path, step), owner)


def _check_references(doc: dict[str, Any], out: _Problems) -> None:
    for ref in REFERENCES:
        known = _TARGETS[ref.target](doc)
        for value, path, owner in _walk(doc, re.findall(r"\[\]|[^.\[\]]+", ref.where), (), None):
            if value not in known:
                out.at(path, ref.message.format(owner=owner, value=value))


# --------------------------------------------------------------------------- checks


def _check_unique_ids(doc: dict[str, Any], out: _Problems) -> None:
    for key in ID_LISTS:
        seen: dict[Any, int] = {}
        for i, item_id in enumerate(_ids(doc, key)):
            if item_id in seen:
                out.at([key, i], f"{key}: duplicate id {item_id!r} (also item {seen[item_id] + 1})")
            seen.setdefault(item_id, i)
    main = set(_ids(doc, "questions"))
    for i, q in enumerate(_ids(doc, "holdout")):
        if q in main:
            out.at(["holdout", i], f"holdout question {q} is also a main question")


def clean_path(text: str) -> str:
    """A repository-relative folder or pattern as git writes paths: `./study/` and `study/.` are
    `study` (every rule compares paths as strings, so one spelling must stand for each)."""
    return posixpath.normpath(text.replace("\\", "/")) if text else text


def _check_study_dir(doc: dict[str, Any], out: _Problems) -> None:
    """The study lives in a folder inside the repository: not its root (every file of the
    repository would be a study file), not outside it."""
    folder = clean_path(str(doc["study_dir"]))
    if folder in ("", ".") or folder.startswith(("/", "../")) or folder == "..":
        out.at(["study_dir"], f"study_dir: {doc['study_dir']!r} must name a folder inside the repository "
                              "(e.g. tests/phase2), not the repository's root or a path outside it")


def _check_patterns(doc: dict[str, Any], out: _Problems) -> None:
    for key in ("responses", "stripped_responses"):
        pattern = doc[key]
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None}
        except ValueError as exc:
            out.at([key], f"{key}: bad pattern {pattern!r}: {exc}")
            continue
        want = PLACEHOLDERS | ({"replicate"} if doc.get("replicates", 1) > 1 else set())
        if fields != want:
            order = ["condition", "question", "replicate"]
            names = " and ".join(f"{{{f}}}" for f in sorted(want, key=order.index))
            extra = " (replicates: above 1 needs {replicate})" if "replicate" in want - fields else ""
            if "replicate" in fields - want:
                extra = " ({replicate} needs replicates: above 1)"
            out.at([key], f"{key}: pattern must use exactly {names}, found {sorted(fields)}{extra}")
        if pattern.startswith("/") or ".." in Path(pattern).parts:
            out.at([key], f"{key}: must be a path inside study_dir")
    if clean_path(doc["responses"]) == clean_path(doc["stripped_responses"]):
        out.at(["stripped_responses"], "stripped_responses must differ from responses")


def _check_scale(doc: dict[str, Any], out: _Problems) -> None:
    spec = doc["scale"]
    if "labels" in spec:
        if "min" in spec or "max" in spec:
            out.at(["scale"], "scale: write either min and max (ordinal) or labels (nominal), not both")
        folded = [str(x).casefold() for x in spec["labels"]]
        twins = sorted({x for x in spec["labels"] if folded.count(str(x).casefold()) > 1})
        if twins:  # sheets read a label in any letter case, so these could not be told apart
            out.at(["scale", "labels"], f"scale: labels {', '.join(twins)} differ only in letter case; "
                   "sheets read labels in any case, so a cell could not say which is meant")
        return  # a nominal scale: the schema bounds its labels
    if "min" not in spec or "max" not in spec:
        out.at(["scale"], "scale: needs min and max (an ordinal scale) or labels (a nominal one)")
        return
    low, high = spec["min"], spec["max"]
    if low >= high:
        out.at(["scale"], "scale: min must be lower than max")
    elif high - low > MAX_SCALE_SPAN:
        out.at(
            ["scale", "max"],
            f"scale: {low}..{high} has {high - low + 1} points; a scale may have at most "
            f"{MAX_SCALE_SPAN + 1} (max − min ≤ {MAX_SCALE_SPAN})",
        )


def _check_roles(doc: dict[str, Any], out: _Problems) -> None:
    """Exactly one baseline and at least one treatment (`role` defaults to treatment)."""
    roles = [c.get("role", "treatment") for c in doc["conditions"]]
    baselines = roles.count("baseline")
    if baselines != 1:
        out.at(["conditions"], f"conditions: need exactly one baseline condition, found {baselines}")
    if not roles.count("treatment"):
        out.at(["conditions"], "conditions: need at least one treatment condition, found 0")


def _check_annotations(doc: dict[str, Any], out: _Problems) -> None:
    for i, d in enumerate(doc["dimensions"]):
        if d.get("annotate") and not d.get("transitions"):
            out.at(["dimensions", i], f"dimension {d['id']} has annotate: true but covers no transition")


def _check_rounds(doc: dict[str, Any], out: _Problems) -> None:
    for i, r in enumerate(doc["rounds"]):
        if r["questions"] == "holdout" and not doc.get("holdout"):
            out.at(["rounds", i], f"round {r['id']} uses the holdout set, which is empty")


def _check_passes(doc: dict[str, Any], out: _Problems) -> None:
    passes = doc["passes"]
    for i, p in enumerate(passes):
        if any(len(set(p[key])) != len(p[key]) for key in ("conditions", "dimensions")):
            out.at(["passes", i], f"pass {p['id']}: a condition or dimension is listed twice")
    primaries = [p["id"] for p in passes if p.get("primary")]
    if len(primaries) != 1:
        out.at(["passes"], f"passes: need exactly one primary pass, found {len(primaries)}")
    # File names are scores_<rater>[_<round>][_<pass>].md: an id that could be read two ways
    # would make a file's identity depend on guessing, so round and pass ids must be distinct.
    clash = set(_ids(doc, "rounds")) & set(_ids(doc, "passes"))
    if clash:
        out.at(["passes"], f"ids used both as round and pass: {sorted(clash)}")


def _check_blind_passes(doc: dict[str, Any], out: _Problems) -> None:
    """A blind pass hides the condition, so it needs conditions to hide one among (the baseline
    and a treatment), the stripped treatment text (markers would give a treatment away), and may
    not decide the verdict alone."""
    roles = {c.get("role", "treatment"): c["id"] for c in doc["conditions"]}
    treatments = treatment_ids(doc)
    for i, p in enumerate(doc["passes"]):
        if not p.get("blind"):
            continue
        name = f"pass {p['id']}"
        missing = blind_pass_gap(p, roles, treatments)
        if missing:
            out.at(["passes", i, "conditions"], f"{name}: {missing}")
        if not p.get("stripped"):
            shown = roles.get("treatment", "the treatment") if len(treatments) < 2 else "the treatments"
            why = f"the markers would reveal {shown}"
            out.at(["passes", i], f"{name}: a blind pass must be stripped: true ({why})")
        if p.get("primary"):
            out.at(["passes", i], f"{name}: a blind pass may not be the primary pass")


def _check_amendment_scopes(doc: dict[str, Any], out: _Problems) -> None:
    """Each pass an amendment re-scores must score its dimensions and some of its conditions:
    otherwise the amendment names cells that do not exist."""
    passes = {p["id"]: p for p in doc["passes"]}
    dims, conds = set(_ids(doc, "dimensions")), _ids(doc, "conditions")
    for i, a in enumerate(doc.get("amendments") or []):
        listed = "passes" in a
        for j, pass_id in enumerate(a.get("passes", list(passes))):
            p = passes.get(pass_id)
            if p is None:
                continue  # an unknown pass is reported by the reference table
            where = ["amendments", i, "passes", j] if listed else ["amendments", i]
            hint = "" if listed else " (list the passes it re-scores under `passes`)"
            missing = [d for d in a["dimensions"] if d in dims and d not in p["dimensions"]]
            if missing:
                out.at(
                    where, f"amendment {a['id']}: pass {pass_id} does not score {', '.join(missing)}{hint}"
                )
            wanted = [c for c in a.get("conditions", conds) if c in conds]
            if wanted and not any(c in p["conditions"] for c in wanted):
                out.at(
                    where,
                    f"amendment {a['id']}: pass {pass_id} scores none of its conditions "
                    f"({', '.join(wanted)}){hint}",
                )


def _check_claims(doc: dict[str, Any], out: _Problems) -> None:
    transitions, questions = _TARGETS["transitions"](doc), _TARGETS["questions"](doc)
    for t, q in ((doc.get("claims") or {}).get("unique_probes") or {}).items():
        if int(t) not in transitions:
            out.at(["claims", "unique_probes", t], f"claims.unique_probes: unknown transition #{t}")
        if q not in questions:
            out.at(["claims", "unique_probes", t], f"claims.unique_probes: unknown question {q!r}")


def _check_security(doc: dict[str, Any], out: _Problems) -> None:
    security = doc.get("security") or {}
    if security.get("require_signed") and not security.get("allowed_signers"):
        out.at(
            ["security"],
            "security.require_signed needs security.allowed_signers (an ssh allowed-signers file)",
        )
    stamps = security.get("timestamps") or {}
    if stamps.get("required") and not stamps.get("authorities"):
        out.at(["security", "timestamps"],
               "security.timestamps.required needs at least one authority (url and certificate)")


def _check_locked(doc: dict[str, Any], out: _Problems) -> None:
    for i, key in enumerate(doc.get("locked") or []):
        if key in UNLOCKABLE:
            out.at(["locked", i], f"locked: {key} may not be locked: {UNLOCKABLE[key]}")


def _check_withdrawals(doc: dict[str, Any], out: _Problems) -> None:
    """A rater withdraws once: a second entry would leave two reasons and two withdrawal commits
    for one dropout (docs/plan.md, "Withdrawals")."""
    seen: dict[str, int] = {}
    for i, w in enumerate(doc.get("withdrawals") or []):
        rater = w.get("rater")
        if rater in seen:
            out.at(["withdrawals", i, "rater"],
                   f"withdrawals: rater {rater!r} is withdrawn twice (also item {seen[rater] + 1})")
        seen.setdefault(rater, i)


def _check_leak_patterns(doc: dict[str, Any], out: _Problems) -> None:
    """Each pattern must compile, and must not match an empty line: it would flag every text."""
    for i, pattern in enumerate((doc.get("blind") or {}).get("leak_patterns") or []):
        where = ["blind", "leak_patterns", i]
        try:
            compiled = re.compile(pattern)
        except (re.error, OverflowError, RecursionError, ValueError) as exc:
            out.at(where, f"blind.leak_patterns: {pattern!r} is not a valid regular expression: {exc}")
            continue
        if compiled.search("") is not None:
            out.at(where, f"blind.leak_patterns: {pattern!r} matches an empty line, so it flags every text")


CHECKS: tuple[Callable[[dict[str, Any], _Problems], None], ...] = (
    _check_study_dir,
    _check_unique_ids,
    _check_references,
    _check_patterns,
    _check_scale,
    _check_roles,
    _check_annotations,
    _check_rounds,
    _check_passes,
    _check_blind_passes,
    _check_amendment_scopes,
    _check_claims,
    _check_security,
    _check_locked,
    _check_leak_patterns,
    _check_withdrawals,
    *DESIGN_CHECKS,
)


# --------------------------------------------------------------------------- rules


def _rules(doc: dict[str, Any], out: _Problems) -> Rules:
    props = schemas.schema("plan")["properties"]["rules"]["properties"]
    r = _defaults(doc.get("rules") or {}, props)
    kappa = _defaults(r.get("kappa", {}), props["kappa"]["properties"])
    pass_ = _defaults(r.get("pass", {}), props["pass"]["properties"])
    fail = _defaults(r.get("fail", {}), props["fail"]["properties"])
    try:
        rules = Rules(
            kappa=KappaRules(
                kappa["weights"], to_fraction(kappa["threshold"]), kappa["aggregate"], kappa["undefined"],
                kappa["coefficient"],
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
                pass_.get("treatment"),
            ),
            fail=FailRules(to_fraction(fail["improvement"])),
            require_annotations=r["require_annotations"],
        )
    except (ValueError, ZeroDivisionError) as exc:
        out.at(["rules"], f"rules: {exc}")
        return Rules()
    if rules.pass_.dims_fraction > 1:
        out.at(["rules", "pass", "dims_fraction"], _dims_fraction_problem(doc, rules.pass_.dims_fraction))
    if rules.fail.improvement > rules.pass_.improvement:
        out.at(["rules", "fail"], "rules.fail.improvement must not exceed rules.pass.improvement")
    return rules


def _dims_fraction_problem(doc: dict[str, Any], fraction: Fraction) -> str:
    """A share above 1 asks a question to improve on more dimensions than it is scored on."""
    text = f"rules.pass.dims_fraction is {fraction_text(fraction)} but must be at most 1"
    primaries = [p for p in doc["passes"] if p.get("primary")]
    if len(primaries) != 1:
        return text
    p, n = primaries[0], len(primaries[0]["dimensions"])
    need = math.ceil(fraction * n)
    return f"{text}: a question would have to improve on {need} of the {n} dimensions pass {p['id']} scores"


# --------------------------------------------------------------------------- model


def _question(q: dict[str, Any]) -> Question:
    return Question(q["id"], q["text"], q.get("domain", ""), tuple(q.get("expects", [])))


def _round(r: dict[str, Any], doc: dict[str, Any]) -> Round:
    spec = r["questions"]
    if spec in ("main", "holdout"):
        ids = tuple(_ids(doc, "questions" if spec == "main" else "holdout"))
        return Round(r["id"], ids, spec, tuple(r.get("refinements", [])))
    return Round(r["id"], tuple(spec), "explicit", tuple(r.get("refinements", [])))


def _pass(p: dict[str, Any]) -> Pass:
    return Pass(
        p["id"],
        tuple(p["conditions"]),
        tuple(p["dimensions"]),
        p.get("stripped", False),
        p.get("primary", False),
        p.get("blind", False),
        tuple(p.get("after", ())),
    )


def _scale(doc: dict[str, Any]) -> Scale:
    """An ordinal scale as written, or a nominal one stored as label positions (model.Scale)."""
    spec = doc["scale"]
    if "labels" in spec:
        return Scale(0, len(spec["labels"]) - 1, tuple(spec["labels"]))
    return Scale(spec["min"], spec["max"])


def _amendment(a: dict[str, Any], doc: dict[str, Any]) -> Amendment:
    return Amendment(
        a["id"],
        a["title"],
        a["rationale"],
        tuple(a["dimensions"]),
        tuple(a.get("conditions", _ids(doc, "conditions"))),
        tuple(a.get("passes", _ids(doc, "passes"))),
    )


def _build(
    doc: dict[str, Any], rules: Rules, *, raw: dict[str, Any], lines: dict[str, int], display: str
) -> Plan:
    security = doc.get("security") or {}
    return Plan(
        version=doc["version"],
        study=doc["study"],
        study_dir=clean_path(doc["study_dir"]),
        responses=clean_path(doc["responses"]),
        stripped_responses=clean_path(doc["stripped_responses"]),
        scale=_scale(doc),
        conditions=tuple(
            Condition(c["id"], c.get("name", c["id"]), c.get("role", "treatment")) for c in doc["conditions"]
        ),
        transitions=tuple(Transition(t["id"], t["name"]) for t in doc.get("transitions", [])),
        dimensions=tuple(
            Dimension(d["id"], d["name"], d["kind"], tuple(d.get("transitions", [])), bool(d.get("annotate")))
            for d in doc["dimensions"]
        ),
        load_dimensions=tuple(doc.get("load_dimensions", [])),
        questions=tuple(_question(q) for q in doc["questions"]),
        holdout=tuple(_question(q) for q in doc.get("holdout", [])),
        rounds=tuple(_round(r, doc) for r in doc["rounds"]),
        raters=tuple(
            Rater(r["id"], r.get("name", r["id"]), tuple(r.get("emails", [])), r.get("required", True))
            for r in doc["raters"]
        ),
        passes=tuple(_pass(p) for p in doc["passes"]),
        markers=tuple(doc.get("markers", [])),
        rules=rules,
        refinements=tuple(Refinement(r["id"], r["text"]) for r in doc.get("refinements", [])),
        retest_cap=doc.get("retest_cap", 1),
        claims=dict(doc.get("claims") or {}),
        security=Security(bool(security.get("require_signed", False)), security.get("allowed_signers"),
                          _timestamps(security.get("timestamps"))),
        locked=tuple(doc.get("locked", [])),
        amendments=tuple(_amendment(a, doc) for a in doc.get("amendments") or []),
        leak_patterns=tuple((doc.get("blind") or {}).get("leak_patterns") or []),
        withdrawals=tuple(Withdrawal(w["rater"], w["reason"], w["category"])
                          for w in doc.get("withdrawals") or []),
        replicates=doc.get("replicates", 1),
        criteria=tuple(criterion(c, doc) for c in doc.get("criteria") or []),
        decisions=tuple(decision_row(r) for r in doc.get("decisions") or []),
        path=display,
        raw=raw,
        lines=lines,
    )


def _timestamps(doc: dict[str, Any] | None) -> Timestamps | None:
    """security.timestamps: the pinned RFC 3161 authorities (docs/plan.md)."""
    if doc is None:
        return None
    return Timestamps(tuple(TimestampAuthority(a["url"], clean_path(a["certificate"]))
                            for a in doc.get("authorities") or []), bool(doc.get("required", False)))


RATER_ID = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
