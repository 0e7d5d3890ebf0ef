"""Plain, frozen data shared by every layer.

Everything above this module (parsers, checks, statistics, verdict, rendering) speaks in these
types, so the pure layers never need git, files or YAML to be tested.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

Severity = Literal["error", "warning"]


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class Scale:
    min: int
    max: int

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and self.min <= value <= self.max

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(range(self.min, self.max + 1))


@dataclass(frozen=True)
class Condition:
    id: str
    name: str
    role: Literal["baseline", "treatment"]


@dataclass(frozen=True)
class Transition:
    id: int
    name: str


@dataclass(frozen=True)
class Dimension:
    id: str
    name: str
    kind: Literal["epistemic", "quality"]
    transitions: tuple[int, ...] = ()
    annotate: bool = False


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    domain: str = ""
    expects: tuple[int, ...] = ()


@dataclass(frozen=True)
class Round:
    id: str
    questions: tuple[str, ...]  # resolved question ids, in plan order
    source: str  # "main", "holdout" or "explicit": what the plan wrote
    refinements: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rater:
    id: str
    name: str
    emails: tuple[str, ...] = ()
    required: bool = True


@dataclass(frozen=True)
class Pass:
    """What every rater scores in one pass: some conditions on some dimensions. A `blind` pass is
    scored on opaque ids that hide the condition (docs/plan.md, "Blind passes")."""

    id: str
    conditions: tuple[str, ...]
    dimensions: tuple[str, ...]
    stripped: bool = False
    primary: bool = False
    blind: bool = False


@dataclass(frozen=True)
class KappaRules:
    weights: Literal["none", "linear", "quadratic"] = "quadratic"
    threshold: Fraction = Fraction(3, 5)
    aggregate: Literal["min", "mean"] = "min"
    undefined: Literal["exclude", "include"] = "exclude"
    #: which coefficient gates a dimension (docs/statistics.md, "When κ misleads")
    coefficient: Literal["cohen", "gwet", "brennan-prediger", "krippendorff"] = "cohen"


@dataclass(frozen=True)
class PassRules:
    improvement: Fraction = Fraction(1, 5)
    questions: int = 6
    dims_fraction: Fraction = Fraction(5, 8)
    load_tolerance: Fraction = Fraction(1, 2)
    regression_tolerance: Fraction = Fraction(1, 2)


@dataclass(frozen=True)
class FailRules:
    improvement: Fraction = Fraction(1, 10)


@dataclass(frozen=True)
class Rules:
    kappa: KappaRules = KappaRules()
    flag_spread: int = 1
    unflagged: Literal["mean", "median", "require"] = "mean"
    blinding_divergence: Fraction = Fraction(1, 2)
    pass_: PassRules = PassRules()
    fail: FailRules = FailRules()
    require_annotations: bool = True


@dataclass(frozen=True)
class Refinement:
    id: str
    text: str


@dataclass(frozen=True)
class TimestampAuthority:
    """An RFC 3161 authority the plan pins: where to ask, and its certificate (a PEM file path
    relative to the repository root) that its tokens must chain to (docs/plan.md)."""

    url: str
    certificate: str


@dataclass(frozen=True)
class Timestamps:
    authorities: tuple[TimestampAuthority, ...] = ()
    required: bool = False  # seals, unblinds and the plan-freeze commit need a valid token


@dataclass(frozen=True)
class Security:
    require_signed: bool = False
    allowed_signers: str | None = None  # path relative to the repository root
    timestamps: Timestamps | None = None  # security.timestamps (None: not declared)


@dataclass(frozen=True)
class Amendment:
    """A declared, exploratory re-scoring after a rubric ruling (docs/plan.md, "Amendments").

    `conditions` and `passes` are resolved: when the plan leaves them out they hold every
    condition and every pass, in plan order, so readers never apply the default themselves.
    """

    id: str
    title: str
    rationale: str
    dimensions: tuple[str, ...]
    conditions: tuple[str, ...]
    passes: tuple[str, ...]


@dataclass(frozen=True)
class Withdrawal:
    """A required rater who dropped out after scoring began (docs/plan.md, "Withdrawals"):
    their sheets of every pass and round not complete at the withdrawal commit leave the study.
    `category` is the deviation's kind (Lakens 2024): unforeseen, error, missing-information,
    violated-assumption or falsified-auxiliary."""

    rater: str
    reason: str
    category: str


@dataclass(frozen=True)
class Plan:
    """The parsed, semantically checked study plan.

    `raw` keeps the YAML document as plain Python data so that locked keys can be compared
    between two revisions of the plan exactly as written; `lines` maps a dotted key path
    (``"dimensions.3.transitions"``) to its 1-based line in the plan file for error messages.
    """

    version: int
    study: str
    study_dir: str
    responses: str
    stripped_responses: str
    scale: Scale
    conditions: tuple[Condition, ...]
    transitions: tuple[Transition, ...]
    dimensions: tuple[Dimension, ...]
    load_dimensions: tuple[str, ...]
    questions: tuple[Question, ...]
    holdout: tuple[Question, ...]
    rounds: tuple[Round, ...]
    raters: tuple[Rater, ...]
    passes: tuple[Pass, ...]
    markers: tuple[str, ...]
    rules: Rules
    refinements: tuple[Refinement, ...]
    retest_cap: int
    claims: dict[str, Any]
    security: Security
    locked: tuple[str, ...]
    amendments: tuple[Amendment, ...] = ()
    leak_patterns: tuple[str, ...] = ()  # regexes a blinded text must not match (docs/plan.md)
    withdrawals: tuple[Withdrawal, ...] = ()
    path: str = "aoven.yaml"
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    lines: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    # -- lookups -------------------------------------------------------------------------
    @property
    def baseline(self) -> Condition:
        return next(c for c in self.conditions if c.role == "baseline")

    @property
    def treatment(self) -> Condition:
        return next(c for c in self.conditions if c.role == "treatment")

    @property
    def primary_pass(self) -> Pass:
        return next(p for p in self.passes if p.primary)

    @property
    def main_round(self) -> Round:
        """The first round of the plan: the one a file name without a round id belongs to."""
        return self.rounds[0]

    def rater(self, rater_id: str) -> Rater | None:
        return next((r for r in self.raters if r.id == rater_id), None)

    def pass_(self, pass_id: str) -> Pass | None:
        return next((p for p in self.passes if p.id == pass_id), None)

    def round_(self, round_id: str) -> Round | None:
        return next((r for r in self.rounds if r.id == round_id), None)

    def dimension(self, dimension_id: str) -> Dimension | None:
        return next((d for d in self.dimensions if d.id == dimension_id), None)

    def question(self, question_id: str) -> Question | None:
        return next((q for q in (*self.questions, *self.holdout) if q.id == question_id), None)

    def amendment(self, amendment_id: str) -> Amendment | None:
        return next((a for a in self.amendments if a.id == amendment_id), None)

    @property
    def required_raters(self) -> tuple[Rater, ...]:
        return tuple(r for r in self.raters if r.required)

    def withdrawal(self, rater_id: str) -> Withdrawal | None:
        return next((w for w in self.withdrawals if w.rater == rater_id), None)

    @property
    def waited_for(self) -> tuple[Rater, ...]:
        """The required raters still in the study: nobody waits for a withdrawn one to seal."""
        gone = {w.rater for w in self.withdrawals}
        return tuple(r for r in self.required_raters if r.id not in gone)

    def expected_cells(
        self, pass_id: str, round_id: str, *, amendment: str | None = None
    ) -> tuple[CellKey, ...]:
        """Every cell a rater's file for this pass and round must score, in sheet order.

        With `amendment`, the cells of that amendment's re-scoring: its dimensions and conditions
        within the pass, none when the amendment does not re-score the pass."""
        p = self.pass_(pass_id)
        rnd = self.round_(round_id)
        if p is None or rnd is None:
            return ()
        conditions, dimensions = p.conditions, p.dimensions
        if amendment is not None:
            a = self.amendment(amendment)
            if a is None or p.id not in a.passes:
                return ()
            conditions = tuple(c for c in conditions if c in a.conditions)
            dimensions = tuple(d for d in dimensions if d in a.dimensions)
        return tuple(CellKey(q, c, d) for q in rnd.questions for c in conditions for d in dimensions)

    def response_path(self, condition: str, question: str, *, stripped: bool = False) -> str:
        """Path of a response file relative to the study dir (ids lower-cased, docs/plan.md)."""
        pattern = self.stripped_responses if stripped else self.responses
        return pattern.format(condition=condition.lower(), question=question.lower())


# --------------------------------------------------------------------------- scores


@dataclass(frozen=True, order=True)
class CellKey:
    question: str
    condition: str
    dimension: str

    def __str__(self) -> str:
        return f"{self.question}/{self.condition}/{self.dimension}"

    @property
    def item(self) -> tuple[str, str]:
        return (self.question, self.condition)

    @classmethod
    def parse(cls, text: str) -> CellKey | None:
        parts = text.strip().split("/")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            return None
        return cls(*(p.strip() for p in parts))


@dataclass(frozen=True)
class Cell:
    """One score of one rater; `line` is the 1-based line of the score in its Markdown file."""

    key: CellKey
    score: int
    line: int
    transitions: tuple[int, ...] = ()
    citation: str = ""


@dataclass(frozen=True)
class SheetId:
    """Whose scores, of which pass and round; `amendment` is set for the re-scores of a post-hoc
    amendment (docs/amendments.md), which are sheets of their own."""

    rater: str
    pass_id: str
    round_id: str
    amendment: str | None = None

    def __str__(self) -> str:
        base = f"{self.rater}/{self.pass_id}/{self.round_id}"
        return f"{base}@{self.amendment}" if self.amendment else base


@dataclass(frozen=True)
class Finding:
    """A validation error or warning: stable `code`, the file and 1-based line it points at."""

    path: str
    line: int | None
    code: str
    message: str
    severity: Severity = "error"

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "code": self.code, "message": self.message}


def finding_order(f: Finding) -> tuple[int, bool, str]:
    """The one order findings are shown in: by line, errors before warnings, then by code."""
    return (f.line or 0, f.severity != "error", f.code)


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    return tuple(sorted(findings, key=finding_order))


class Findings:
    """Collects the findings of one file while it is read: `error(line, code, message)`,
    `warn(...)`, then `sorted()`. Parsers never raise for bad content; they report here, so a
    user sees every problem of a file at once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.items: list[Finding] = []

    def add(self, line: int | None, code: str, message: str, severity: Severity = "error") -> None:
        self.items.append(Finding(self.path, line, code, message, severity))

    def error(self, line: int | None, code: str, message: str) -> None:
        self.add(line, code, message, "error")

    def warn(self, line: int | None, code: str, message: str) -> None:
        self.add(line, code, message, "warning")

    def extend(self, findings: Iterable[Finding]) -> None:
        self.items.extend(findings)

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.items)

    def sorted(self) -> tuple[Finding, ...]:
        return sort_findings(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.items)


@dataclass(frozen=True)
class ScoreSheet:
    """A parsed score file: identity from the file name and front matter, and its cells."""

    path: str
    sheet: SheetId
    layout: str  # "wide", "long", "sectioned", "mixed" or "none"
    cells: tuple[Cell, ...]
    nonce: str | None = None
    plan_version: int | None = None
    findings: tuple[Finding, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    def scores(self) -> dict[CellKey, int]:
        return {c.key: c.score for c in self.cells}


# --------------------------------------------------------------------------- reconciliation


@dataclass(frozen=True)
class ReconciliationRow:
    """One rater's own statement about a cell: their justification and the value THEY accept
    (`consensus`: an integer, `contested`, or None when the row states none). `attributed` is set
    from history: True when the line was last written by a commit of that rater, False when by
    someone else (the row is then ignored), None when it was not checked (docs/sealing.md,
    "Attributed consensus")."""

    key: CellKey
    rater: str
    justification: str
    consensus: int | Literal["contested"] | None
    line: int
    attributed: bool | None = None
    author: str | None = None  # the e-mail of the commit that last wrote the line


@dataclass(frozen=True)
class Reconciliation:
    path: str
    pass_id: str
    round_id: str
    rows: tuple[ReconciliationRow, ...]
    findings: tuple[Finding, ...] = ()
    amendment: str | None = None  # the reconciliation of an amendment's re-scores


# --------------------------------------------------------------------------- seals


@dataclass(frozen=True)
class Seal:
    rater: str
    pass_id: str
    round_id: str
    commit: str
    kind: Literal["digest", "content"]
    path: str  # the seal file (digest) or the score file (content)
    amendment: str | None = None


@dataclass(frozen=True)
class Violation:
    code: str
    rater: str | None
    commit: str | None
    message: str
    path: str | None = None
    #: the amendment whose scope the violation is in (its files, or its frozen plan entry)
    amendment: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "rater": self.rater,
            "commit": self.commit,
            "message": self.message,
            "path": self.path,
        }
        return {**out, "amendment": self.amendment} if self.amendment else out
