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
    """The scores a cell may take. Ordinal (`min`..`max`, lower is better) or nominal: with
    `labels`, a cell holds one of the labels, and the model stores its position in the list
    (min = 0, max = len(labels) − 1), so agreement tables need no second code path; nominal scales
    take unweighted κ and nominal α and no means (docs/designs.md, "Labelled scales")."""

    min: int
    max: int
    labels: tuple[str, ...] = ()

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and self.min <= value <= self.max

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(range(self.min, self.max + 1))

    @property
    def nominal(self) -> bool:
        return bool(self.labels)

    def label(self, value: int) -> str:
        """How a stored score is written: its label on a nominal scale, else the number."""
        return self.labels[value] if self.labels else str(value)

    def value_of(self, label: str) -> int | None:
        """The stored score of a label (exact, then case-insensitive), None when not a label."""
        if label in self.labels:
            return self.labels.index(label)
        folded = [x.casefold() for x in self.labels]
        return folded.index(label.casefold()) if label.casefold() in folded else None


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
    #: passes each rater must have sealed before their first commit of this pass's sheet
    #: (code `pass-order`, docs/designs.md, "Pass order")
    after: tuple[str, ...] = ()


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
    #: the treatment the seed's single verdict compares with the baseline; None = the only one
    treatment: str | None = None


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


BoundKind = Literal["within", "at_most", "below", "at_least", "above"]


@dataclass(frozen=True)
class Bound:
    """The one bound of a criterion, compared exactly: `within: m` is |v| ≤ m."""

    kind: BoundKind
    value: Fraction

    def holds(self, v: Fraction) -> bool:
        match self.kind:
            case "within":
                return abs(v) <= self.value
            case "at_most":
                return v <= self.value
            case "below":
                return v < self.value
            case "at_least":
                return v >= self.value
            case _:
                return v > self.value

    def __str__(self) -> str:
        words = {"within": "|v| ≤", "at_most": "≤", "below": "<", "at_least": "≥", "above": ">"}
        return f"{words[self.kind]} {self.value}"


@dataclass(frozen=True)
class Criterion:
    """A pre-registered hypothesis evaluated on consensus cells (docs/designs.md, "Criteria").

    `delta`: v = mean(of[0]) − mean(of[1]) (or mean(of[0]) alone) per dimension (`per:
    dimension`) or of the per-response sum over `dimensions` (`per: sum`); `rate`: v = share of
    responses labelled `label` in of[0] minus that in of[1] (or the share alone) per question,
    `require` of them (None = all) satisfying the bound; `seed`: the seed's verdict for
    `treatment` against the baseline, holding iff PASS (`bound` is None)."""

    id: str
    kind: Literal["delta", "rate", "seed"]
    bound: Bound | None = None
    of: tuple[str, ...] = ()
    dimensions: tuple[str, ...] = ()
    per: Literal["dimension", "sum"] = "dimension"
    questions: tuple[str, ...] = ()  # rate: the questions (resolved: every round question if omitted)
    label: str | None = None  # rate
    dimension: str | None = None  # rate: the labelled dimension (resolved when the pass has one)
    require: int | None = None  # rate: None = every question
    treatment: str | None = None  # seed
    pass_id: str | None = None  # the pass whose consensus cells it reads (None: per dimension)
    gate: bool = True  # False: evaluated even where the agreement gate does not count a dimension


@dataclass(frozen=True)
class DecisionRow:
    """One row of the decision table: `then` when every criterion in `criteria` holds; the last
    row is `otherwise` (no criteria)."""

    then: str
    criteria: tuple[str, ...] = ()
    otherwise: bool = False


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
    #: sampled responses per (question, condition); > 1 needs {replicate} in `responses`
    replicates: int = 1
    criteria: tuple[Criterion, ...] = ()
    decisions: tuple[DecisionRow, ...] = ()
    path: str = "aoven.yaml"
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    lines: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    # -- lookups -------------------------------------------------------------------------
    @property
    def baseline(self) -> Condition:
        return next(c for c in self.conditions if c.role == "baseline")

    @property
    def treatments(self) -> tuple[Condition, ...]:
        return tuple(c for c in self.conditions if c.role == "treatment")

    @property
    def treatment(self) -> Condition:
        """The treatment of the seed's single verdict: the only one, else `rules.pass.treatment`
        (docs/designs.md). A plan with several treatments and neither is refused unless its criteria
        name their treatments; then this is the first one."""
        named = self.rules.pass_.treatment
        return next((c for c in self.treatments if c.id == named), self.treatments[0])

    def condition(self, condition_id: str) -> Condition | None:
        return next((c for c in self.conditions if c.id == condition_id), None)

    def criterion(self, criterion_id: str) -> Criterion | None:
        return next((c for c in self.criteria if c.id == criterion_id), None)

    @property
    def replicate_ids(self) -> tuple[int, ...]:
        """The replicate numbers a cell key carries: (0,) without replicates, else 1..N."""
        return (0,) if self.replicates == 1 else tuple(range(1, self.replicates + 1))

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
        return tuple(
            CellKey(q, c, d, r)
            for q in rnd.questions
            for c in conditions
            for r in self.replicate_ids
            for d in dimensions
        )

    def response_path(
        self, condition: str, question: str, *, stripped: bool = False, replicate: int = 0
    ) -> str:
        """Path of a response file relative to the study dir (ids lower-cased, docs/plan.md;
        `{replicate}` is 1..N, docs/designs.md)."""
        pattern = self.stripped_responses if stripped else self.responses
        return pattern.format(condition=condition.lower(), question=question.lower(), replicate=replicate)


# --------------------------------------------------------------------------- scores


@dataclass(frozen=True, order=True)
class CellKey:
    """One cell: a question's response under a condition, on a dimension. `replicate` is 0 in a
    plan without replicates and 1..N with them; the id is then written `L1/TRT#2/V`."""

    question: str
    condition: str
    dimension: str
    replicate: int = 0

    def __str__(self) -> str:
        rep = f"#{self.replicate}" if self.replicate else ""
        return f"{self.question}/{self.condition}{rep}/{self.dimension}"

    @property
    def item(self) -> tuple[str, str, int]:
        """What agreement counts as one item: a (question, condition, replicate) response."""
        return (self.question, self.condition, self.replicate)

    @classmethod
    def parse(cls, text: str) -> CellKey | None:
        parts = [p.strip() for p in text.strip().split("/")]
        if len(parts) != 3 or not all(parts):
            return None
        condition, sep, rep = parts[1].partition("#")
        if not sep:
            return cls(*parts)
        if not condition or not rep.isdigit() or int(rep) < 1:
            return None
        return cls(parts[0], condition.strip(), parts[2], int(rep))


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


# --------------------------------------------------------------------------- criteria and decisions

CriterionOutcome = Literal["holds", "fails", "undecided", "contested"]


@dataclass(frozen=True)
class CriterionResult:
    """A criterion evaluated (docs/designs.md). `values` maps each dimension or question id (or
    "sum" for `per: sum`, "verdict" for `seed`) to its exact value, None where undefined;
    `satisfied` says which of them meet the bound; `reasons` say why it is undecided or
    contested; `extremes` holds the outcome with every contested cell at its best and worst for
    of[0] when the cells are contested."""

    id: str
    kind: str
    outcome: CriterionOutcome
    values: dict[str, Fraction | None] = field(default_factory=dict)
    satisfied: dict[str, bool] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()
    extremes: tuple[CriterionOutcome, CriterionOutcome] | None = None
    passes: tuple[str, ...] = ()  # the passes whose consensus cells it read, plan order


@dataclass(frozen=True)
class Decision:
    """The decision table read against the criteria: `row` is the 1-based number of the row taken
    (None when none is), `blocking` the criteria that leave it undecided or contested."""

    status: Literal["decided", "undecided", "contested", "not-ready"]
    then: str | None = None
    row: int | None = None
    blocking: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    #: each row's outcome, in plan order: taken, fails, blocked or not-reached
    rows: tuple[Literal["taken", "fails", "blocked", "not-reached"], ...] = ()
