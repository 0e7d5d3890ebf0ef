"""The plan's ids as raters write them in score files: case-insensitive, with labels and prefixes.

A question cell may carry a label after its id (`Q1 Alzheimer's`), a dimension a checklist
prefix (`L1-D3`) or a label (`C1 marker accuracy`), a condition a word before it (`Test A`,
`Condition B`) or its name (`Baseline`); an item may be written fused (`Q2B`, `Q2-B`, `Q2/B` =
question Q2, condition B). Ids that have the shape of the plan's ids but are not in it (`Q16`,
`D9`) are told apart from prose, so they can be reported as unknown instead of ignored
(docs/score-files.md, "Ids").

In a plan with replicates a response is also numbered 1…N: a `Rep` cell holds `2` (or `#2`,
`R2`, `Rep 2`), a condition may carry it (`TRT#2`, `TRT #2`, in a cell or a heading), and a
heading may name it alone (`#### Rep 2`) (docs/score-files.md, "Replicates"). On a nominal scale
a score cell holds a label, matched exactly, then case-insensitively (`Scale.value_of`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from aoven_git.model import CellKey, Plan

__all__ = ["BLIND_CONDITION", "PlanIds", "ids_for"]

#: The condition of a cell of a blind pass before its key is revealed: the rater scored an opaque
#: item (`CellKey(<blind id>, "?", <dimension>)`); the key maps it back (docs/blinding.md).
BLIND_CONDITION = "?"

_TOKEN_RE = re.compile(r"[^\s:;,.—–()\[\]/|]+")
_COND_PREFIX_RE = re.compile(r"^(?:test|condition|cond)\b[\s_:.-]*", re.I)
_COND_IN_HEADING_RE = re.compile(
    r"(?:^|[\s/—–:,(-])(?:test|condition|cond)[\s_:.-]*([^\s:;,.—–()\[\]/|]+)", re.I
)
_ID_SHAPE_RE = re.compile(r"^([A-Za-z]+)[0-9]+$")
_WRAPPING = " \t()[]{}<>/|,;:—–-_*"
#: a heading's first word, the token after it, and the rest (`Conditon B (markers stripped)`)
_LEAD_WORD_RE = re.compile(r"^([A-Za-z]{3,})[\s_:.-]+([^\s:;,.—–()\[\]/|]+)(.*)$", re.S)
_CONDITION_WORDS = ("condition", "test", "cond")
#: a replicate number as written in a Rep cell or a heading of its own: `2`, `#2`, `R2`, `Rep 2`
_REPLICATE_RE = re.compile(r"^(?:#|r|rep\.?|replicate|response)?\s*#?\s*([0-9]{1,6})$", re.I)
#: a replicate after a condition or an item: `TRT#2`, `TRT #2`, `L1/TRT#2`
_REPLICATE_SUFFIX_RE = re.compile(r"^(.*?)\s*#\s*([0-9]{1,6})\s*$", re.S)


_T = TypeVar("_T")
#: texts remembered per lookup of a PlanIds; a long-running scoring server stays bounded
_MEMO_LIMIT = 1 << 16


def _shape(ids: Iterable[str]) -> re.Pattern[str] | None:
    """`Q\\d+` (or `(d|c)\\d+`) when every id is a letter prefix plus digits: lets `Q16` read as an
    unknown question instead of prose."""
    prefixes = set()
    for i in ids:
        m = _ID_SHAPE_RE.match(i)
        if m is None:
            return None
        prefixes.add(re.escape(m.group(1).lower()))
    if not prefixes:
        return None
    return re.compile(rf"^(?:{'|'.join(sorted(prefixes))})[0-9]+$", re.I)


class PlanIds:
    """Case-insensitive lookups of the plan's ids, built once per plan (`ids_for`)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.questions = {q.id.lower(): q.id for q in (*plan.questions, *plan.holdout)}
        self.conditions = {c.id.lower(): c.id for c in plan.conditions}
        self.condition_names = {c.name.lower(): c.id for c in plan.conditions}
        self.dimensions = {d.id.lower(): d.id for d in plan.dimensions}
        self.question_shape = _shape(q.id for q in (*plan.questions, *plan.holdout))
        self.dimension_shape = _shape(d.id for d in plan.dimensions)
        self.transitions = {t.id for t in plan.transitions}
        self.covers = {d.id: set(d.transitions) for d in plan.dimensions}
        self.dimension_of = {d.id: d for d in plan.dimensions}
        self._keys: dict[tuple[str, str, str, int], CellKey] = {}
        self._expected: dict[
            tuple[str, str, str | None], tuple[tuple[CellKey, ...], frozenset[tuple[str, str, str, int]]]
        ] = {}
        #: what a cell's text was read as, per lookup: a sheet repeats the same few condition,
        #: dimension and question texts on every row, and each lookup is a pure function of the
        #: text and the plan (docs/statistics.md, "Performance")
        self._read: dict[str, dict[str, object]] = {
            "item": {}, "condition_cell": {}, "dimension": {}
        }

    def _memo(self, lookup: str, text: str, read: Callable[[str], _T]) -> _T:
        """`read(text)`, remembered per text (at most `_MEMO_LIMIT` texts per lookup)."""
        seen = self._read[lookup]
        if text in seen:
            return seen[text]  # type: ignore[return-value]
        if len(seen) >= _MEMO_LIMIT:
            seen.clear()
        value = seen[text] = read(text)
        return value

    def key(self, k: tuple[str, str, str, int]) -> CellKey:
        """One CellKey instance per cell across all files of a run."""
        found = self._keys.get(k)
        if found is None:
            found = self._keys[k] = CellKey(*k)
        return found

    def expected(
        self, pass_id: str, round_id: str, amendment: str | None = None
    ) -> tuple[tuple[CellKey, ...], frozenset[tuple[str, str, str, int]]]:
        """The cells of a pass and round (or of an amendment's re-scoring of them), in sheet
        order, and the same as a set of (question, condition, dimension, replicate) tuples."""
        found = self._expected.get((pass_id, round_id, amendment))
        if found is None:
            cells = self.plan.expected_cells(pass_id, round_id, amendment=amendment)
            found = (cells, frozenset((c.question, c.condition, c.dimension, c.replicate) for c in cells))
            self._expected[(pass_id, round_id, amendment)] = found
        return found

    # -- replicates and labels --------------------------------------------------------------

    @property
    def replicated(self) -> bool:
        """Whether the plan numbers responses (`replicates` above 1)."""
        return self.plan.replicates > 1

    @staticmethod
    def replicate(text: str) -> int | None:
        """The number a Rep cell or a replicate heading holds (`2`, `#2`, `R2`, `Rep 2`)."""
        m = _REPLICATE_RE.match(text.strip())
        return int(m.group(1)) if m else None

    def split_replicate(self, text: str) -> tuple[str, int | None]:
        """(`TRT`, 2) for `TRT#2` or `TRT #2`; (text, None) without a `#N` at the end, or in a
        plan without replicates (there `#8` is a transition)."""
        if "#" not in text or not self.replicated:
            return text, None
        m = _REPLICATE_SUFFIX_RE.match(text)
        return (m.group(1), int(m.group(2))) if m else (text, None)

    @staticmethod
    def token(text: str) -> str:
        """The first word of a cell: an id, with anything after it being a label."""
        m = _TOKEN_RE.search(text.strip())
        return m.group(0) if m and m.start() == 0 else ""

    # -- questions and items ------------------------------------------------------------

    def question(self, text: str) -> str | None:
        return self.questions.get(self.token(text).lower())

    def item(self, text: str) -> tuple[str | None, str | None]:
        """(question, condition) of a question cell: `Q3 label` → (Q3, None); fused `Q2B`,
        `Q2-B`, `Q2/B` → (Q2, B); neither → (None, None)."""
        return self._memo("item", text, self._item)

    def _item(self, text: str) -> tuple[str | None, str | None]:
        t = text.strip()
        tok = self.token(t)
        q = self.questions.get(tok.lower())
        if q is not None:
            rest = t[len(tok) :]
            fused = self.condition_exact(rest[1:]) if rest.startswith("/") else None
            return q, fused
        low = tok.lower()
        for cid, c in self.conditions.items():
            if len(low) > len(cid) and low.endswith(cid):
                q = self.questions.get(low[: -len(cid)].rstrip("-_"))
                if q is not None:
                    return q, c
        return None, None

    def question_heading(self, text: str) -> tuple[str | None, str | None]:
        """(question id, unknown id) for a heading like `Q3 — …`; `Q16` is an unknown id."""
        tok = self.token(text)
        found = self.questions.get(tok.lower())
        if found:
            return found, None
        if self.question_shape and self.question_shape.match(tok):
            return None, tok
        return None, None

    def heading_condition(self, text: str) -> tuple[str | None, str | None] | None:
        """The condition a question heading also names (`## Q1 — Test B Layer 2`): (id, None),
        (None, unknown word), or None when it names none."""
        m = _COND_IN_HEADING_RE.search(text[len(self.token(text)) :])
        if m is None:
            return None
        c = self.conditions.get(m.group(1).lower())
        return (c, None) if c else (None, m.group(1))

    # -- conditions ---------------------------------------------------------------------

    def condition_cell(self, text: str) -> str | None:
        """The condition a Condition cell names (`A`, `Test A`, `Baseline`), or None."""
        return self._memo("condition_cell", text, self._condition_cell)

    def _condition_cell(self, text: str) -> str | None:
        t = text.strip()
        if t.lower() in self.condition_names:
            return self.condition_names[t.lower()]
        m = _COND_PREFIX_RE.match(t)
        rest = t[m.end() :] if m else t
        return self.conditions.get(self.token(rest).lower())

    def condition_exact(self, text: str) -> str | None:
        """A condition written alone: `A`, `(B)`, `Test B`, `Baseline`; anything more is None."""
        t = text.strip(_WRAPPING)
        m = _COND_PREFIX_RE.match(t)
        if m:
            t = t[m.end() :].strip(_WRAPPING)
        low = t.lower()
        return self.conditions.get(low) or self.condition_names.get(low)

    def condition_heading(self, text: str) -> tuple[str | None, str | None]:
        """(condition id, unknown id) for a heading like `Test A`, `Condition B …`, `A`."""
        t = text.strip()
        m = _COND_PREFIX_RE.match(t)
        if m:
            tok = self.token(t[m.end() :])
            found = self.conditions.get(tok.lower())
            return (found, None) if found else (None, tok or t)
        if t.lower() in self.condition_names:
            return self.condition_names[t.lower()], None
        tok = self.token(t)
        found = self.conditions.get(tok.lower())
        rest = t[len(tok) :]
        # `### A` and `### A (baseline)` are condition headings, `### A note on…` is not
        if found and (not rest.strip() or not re.match(r"\s+\w", rest)):
            return found, None
        return None, None

    def misspelt_condition_heading(self, text: str) -> str | None:
        """What a heading that is no condition heading probably should be, when its first word is a
        near miss of `Condition`/`Test`/`Cond` followed by a condition id (`Conditon A`, `Tset B`):
        `Condition A`. None otherwise (prose headings stay prose). A rater who writes it means the
        condition, and without it the tables below it have none."""
        m = _LEAD_WORD_RE.match(text.strip())
        if m is None or _COND_PREFIX_RE.match(m.group(1)):
            return None
        close = difflib.get_close_matches(m.group(1).lower(), _CONDITION_WORDS, n=1, cutoff=0.75)
        found = self.conditions.get(m.group(2).lower())
        if not close or found is None or re.match(r"\s+\w", m.group(3)):
            return None
        return f"{close[0].title()} {found}"

    # -- dimensions ---------------------------------------------------------------------

    def dimension(self, text: str) -> str | None:
        """The dimension a cell names (`D3`, `L1-D3`, `D3 label`), or None."""
        return self._memo("dimension", text, self._dimension)

    def _dimension(self, text: str) -> str | None:
        tok = self.token(text)
        found = self.dimensions.get(tok.lower())
        if found is None and "-" in tok:
            found = self.dimensions.get(tok.rsplit("-", 1)[1].lower())
        return found

    def looks_like_dimension(self, text: str) -> bool:
        tok = self.token(text)
        if "-" in tok:
            tok = tok.rsplit("-", 1)[1]
        return bool(self.dimension_shape and self.dimension_shape.match(tok))

    def dimension_by_number(self, text: str) -> str | None:
        """`Dim3`, `Dimension 3`, `dim_3` → D3: a misspelt dimension header, for a suggestion."""
        m = re.match(r"^([A-Za-z]{2,})[\s_.-]*([0-9]+)$", text.strip())
        if m is None or not "dimension".startswith(m.group(1).lower()):
            return None
        for did, d in self.dimensions.items():
            shape = _ID_SHAPE_RE.match(did)
            if (
                shape
                and did[len(shape.group(1)) :] == m.group(2)
                and m.group(1).lower().startswith(shape.group(1))
            ):
                return d
        return None


_CACHE: dict[int, tuple[Plan, PlanIds]] = {}


def ids_for(plan: Plan) -> PlanIds:
    """The lookups of `plan`, reused while the same plan object is in use."""
    cached = _CACHE.get(id(plan))
    if cached is not None and cached[0] is plan:
        return cached[1]
    ids = PlanIds(plan)
    _CACHE.clear()
    _CACHE[id(plan)] = (plan, ids)
    return ids
