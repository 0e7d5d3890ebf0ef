"""What a table's header row says: which column holds what, and so what kind of table it is.

Score tables are recognised by their header (docs/score-files.md, "Layouts" and "Tables that are
not the scores"):

=========== ====================================================================================
kind        header
=========== ====================================================================================
wide        a question or condition column and dimension columns (`D1`, `D1 label`, `L1-D3`)
long        Question, Condition, Dimension and Score columns
sectioned   Dimension and Score columns, under question / condition headings
summary     a question column and (dimension, condition) columns: `D1 A`, `A D1`, `D1 (B)`;
            per-condition totals `A Total`, `Total B`, `Σ A`
rescore     re-score columns: primed dimensions `D7'`, or `Original D7` / `New D7` (also
            `D7 original`, `Old D7`, `Revised D7`)
=========== ====================================================================================

In a plan with replicates a `Rep` (`Replicate`) column numbers each row's response, 1…N; a `#`
column right after the condition column is read as that too (elsewhere `#` is the Transition
column). A question header may name the condition of every row (`Q (Test B)`). Every other column is
ignored and listed by `validate --verbose`; a column whose name is a near miss of a column the
table needs (`Conditon`, `Dim3`) is the error `unknown-column` with a suggestion, because a
rater who misspells a header means that column. A dimension id split by a space (`D 4`) is the
error `spaced-dimension`, naming the id it looks like.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from aoven_git.score_ids import PlanIds

__all__ = ["ROLE_NAMES", "Columns", "read_header", "spaced_dimension"]

# Header names (lower-cased, trailing ':' and spaces removed) → column role.
ROLE_NAMES: dict[str, str] = {}
for _role, _names in {
    "question": ("q", "question", "questions", "q#", "qid", "question id", "item"),
    "condition": ("cond", "cond.", "condition", "conditions", "test"),
    "dimension": ("dim", "dim.", "dimension", "dimensions", "dimension id"),
    "score": ("score", "scores", "rating"),
    "transition": ("transition", "transitions", "trans", "#", "transition(s)"),
    "citation": (
        "citation",
        "citations",
        "cited phrase",
        "quote",
        "quotes",
        "evidence",
        "notes",
        "note",
        "comment",
        "comments",
        "justification",
    ),
    "sum": ("σ", "∑", "sum", "total"),
    "replicate": ("rep", "rep.", "rep #", "replicate", "replicates", "replicate #"),
}.items():
    for _name in _names:
        ROLE_NAMES[_name] = _role

#: Header names a near miss is compared with: those of the columns a score table needs.
_NEEDED = ("question", "condition", "dimension", "score", "transition")
_SUGGESTIBLE = {name: role for name, role in ROLE_NAMES.items() if role in _NEEDED and len(name) > 2}
_ORIGINAL_WORDS = frozenset({"original", "orig", "orig.", "old", "before", "sealed", "was"})
_NEW_WORDS = frozenset({"new", "revised", "rescored", "re-scored", "after", "amended", "updated", "now"})
_PRIMES = "'’′ʹ"
_SPACE_RE = re.compile(r"\s+")


def _name(raw: str) -> str:
    return _SPACE_RE.sub(" ", raw.strip().rstrip(":").strip()).lower()


@dataclass
class Columns:
    """Column index → meaning for one header row. `kind` says what the table is."""

    roles: dict[str, int] = field(default_factory=dict)  # role → first column
    dims: dict[int, str] = field(default_factory=dict)  # plain dimension columns (first per dimension)
    condition: str | None = None  # named by the question header: `Q (Test B)`
    summary: dict[int, tuple[str, str]] = field(default_factory=dict)  # (dimension, condition)
    totals: dict[int, str] = field(default_factory=dict)  # condition of a per-condition total
    new: dict[int, str] = field(default_factory=dict)  # re-score value of a dimension
    original: dict[int, str] = field(default_factory=dict)  # the sealed value, restated
    unknown_dims: list[int] = field(default_factory=list)  # shaped like a dimension, not in the plan
    misspelt: list[tuple[int, str]] = field(default_factory=list)  # (column, suggested name)
    spaced: list[tuple[int, str]] = field(default_factory=list)  # (column, dimension): `D 4` for D4
    ignored: list[int] = field(default_factory=list)

    @property
    def kind(self) -> str | None:
        has_q, has_c = "question" in self.roles, "condition" in self.roles or self.condition is not None
        if self.new:
            return "rescore"
        if self.dims and (has_q or has_c):
            return "wide"
        if "dimension" in self.roles and "score" in self.roles:
            return "long" if has_q and has_c else "sectioned"
        if (self.summary or self.totals) and has_q:
            return "summary"
        return None


def _role_with_condition(name: str, ids: PlanIds) -> tuple[str, str] | None:
    """`Q (Test B)` → (question, B); `A Total`, `Total (B)`, `Σ A` → (sum, A)."""
    head, _, rest = name.partition(" ")
    role = ROLE_NAMES.get(head)
    if role in ("question", "sum") and rest:
        c = ids.condition_exact(rest)
        if c:
            return role, c
    before, _, last = name.rpartition(" ")
    if before and ROLE_NAMES.get(last) == "sum":
        c = ids.condition_exact(before)
        if c:
            return "sum", c
    return None


def _bare_dimension(text: str, ids: PlanIds) -> str | None:
    """The dimension `text` is, when it is nothing but a dimension id (`D7`, `L1-D7`)."""
    d = ids.dimension(text)
    return d if d is not None and _name(text) == ids.token(text).lower() else None


def _dimension_column(raw: str, ids: PlanIds, cols: Columns, idx: int) -> bool:
    """Record a column about a dimension: plain or labelled (`D1`, `C1 marker accuracy`), a
    summary value (`D1 A`, `A D1`), a re-score (`D7'`, `New D7`) or the value before it
    (`Original D7`). False when the header names no dimension of the plan."""
    tok = ids.token(raw)
    base = tok.rstrip(_PRIMES)
    if base != tok:
        d = ids.dimension(base)
        if d is not None:
            cols.new[idx] = d
        return d is not None
    first, _, rest = _name(raw).partition(" ")
    d = _bare_dimension(rest, ids) if rest else None
    if d is not None and (first in _ORIGINAL_WORDS or first in _NEW_WORDS):
        (cols.original if first in _ORIGINAL_WORDS else cols.new)[idx] = d
        return True
    c = ids.condition_exact(first) if d is not None else None
    if d is not None and c is not None:
        cols.summary[idx] = (d, c)
        return True
    d = ids.dimension(raw)
    if d is None:
        return False
    after = raw.strip()[len(tok) :].strip()
    c = ids.condition_exact(after) if after else None
    if c is not None:
        cols.summary[idx] = (d, c)
    elif _name(after) in _ORIGINAL_WORDS or _name(after) in _NEW_WORDS:
        (cols.original if _name(after) in _ORIGINAL_WORDS else cols.new)[idx] = d
    elif d not in cols.dims.values():
        cols.dims[idx] = d  # plain, or with a label after the id: `C1 marker accuracy`
    else:
        cols.ignored.append(idx)  # the dimension's second column: the first one counts
    return True


def read_header(header: list[str], ids: PlanIds) -> Columns:
    """The meaning of every column of a header row."""
    cols = Columns()
    unknown: list[int] = []
    for idx, raw in enumerate(header):
        name = _name(raw)
        role = ROLE_NAMES.get(name)
        if role == "transition" and name == "#" and _replicate_hash(cols, idx, ids):
            role = "replicate"
        if role is not None:
            if role in cols.roles:
                cols.ignored.append(idx)  # the role's second column: the first one counts
            cols.roles.setdefault(role, idx)
            continue
        with_condition = _role_with_condition(name, ids)
        if with_condition is not None:
            role, c = with_condition
            if role == "sum":
                cols.totals[idx] = c
            elif "question" not in cols.roles:
                cols.roles["question"], cols.condition = idx, c
            else:
                cols.ignored.append(idx)
            continue
        if _dimension_column(raw, ids, cols, idx):
            continue
        if ids.looks_like_dimension(raw):
            cols.unknown_dims.append(idx)
        else:
            unknown.append(idx)
    if cols.new:  # a plain dimension beside its re-score is the value before it
        for idx, d in list(cols.dims.items()):
            if d in cols.new.values():
                cols.original[idx] = cols.dims.pop(idx)
    _sort_unknown(header, unknown, ids, cols)
    return cols


def _replicate_hash(cols: Columns, idx: int, ids: PlanIds) -> bool:
    """A `#` column right after the condition column numbers the replicate, in a plan with
    replicates (anywhere else `#` is the Transition column, as in the seed's sheets)."""
    return ids.plan.replicates > 1 and cols.roles.get("condition") == idx - 1


def _suggestion(raw: str, ids: PlanIds, cols: Columns) -> str | None:
    """The column a near-miss header most likely means, if the table lacks that column."""
    name = _name(raw)
    if " " in name:
        return None
    d = ids.dimension_by_number(raw)
    if d is not None:
        return d if d not in cols.dims.values() else None
    close = difflib.get_close_matches(name, list(_SUGGESTIBLE), n=1, cutoff=0.8)
    if not close:
        return None
    role = _SUGGESTIBLE[close[0]]
    return close[0][:1].upper() + close[0][1:] if role not in cols.roles else None


def _sort_unknown(header: list[str], unknown: list[int], ids: PlanIds, cols: Columns) -> None:
    """Near misses of a needed column are misspelt, only in a table that is (or with the
    suggestion would be) a score table; every other unknown column is ignored."""
    for idx in unknown:
        spaced = _spaced_dimension(header[idx], ids, cols)
        if spaced is not None and _would_score(cols, spaced, ids):
            cols.spaced.append((idx, spaced))
            continue
        suggestion = _suggestion(header[idx], ids, cols)
        if suggestion is not None and _would_score(cols, suggestion, ids):
            cols.misspelt.append((idx, suggestion))
        else:
            cols.ignored.append(idx)


def spaced_dimension(text: str, ids: PlanIds) -> str | None:
    """The dimension `text` is once the spaces inside it are removed (`D 4`, `L1 - D3`), or None:
    a space splits an id into words no lookup matches (headers, and long-layout Dimension cells)."""
    if not _SPACE_RE.search(text.strip()):
        return None
    return _bare_dimension(_SPACE_RE.sub("", text), ids)


def _spaced_dimension(raw: str, ids: PlanIds, cols: Columns) -> str | None:
    """`spaced_dimension` of a header, when the table has no column for that dimension yet."""
    d = spaced_dimension(raw, ids)
    return d if d is not None and d not in cols.dims.values() else None


def _would_score(cols: Columns, suggestion: str, ids: PlanIds) -> bool:
    if cols.kind in ("wide", "long", "sectioned"):
        return True
    trial = Columns(dict(cols.roles), dict(cols.dims), cols.condition)
    d = ids.dimension(suggestion)
    if d is not None:
        trial.dims[-1] = d
    else:
        trial.roles.setdefault(ROLE_NAMES[suggestion.lower()], -1)
    return trial.kind in ("wide", "long", "sectioned")
