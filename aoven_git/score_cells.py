"""Score tables → cells, each with the line of its row (docs/score-files.md, "Layouts").

Headings give tables their question and condition (sectioned layout); a column, the question
header (`Q (Test B)`), a fused item id (`Q2B`) or a pass with a single condition can give them
too. In a plan with replicates each row also names its response, 1…N: a `Rep` column, a `#N`
after the condition (`TRT#2`) or item (`L1/TRT#2`), or the heading above the table (`### TRT #2`,
`#### Rep 2`). On a nominal scale a score cell holds a label, stored as its position. Only the
first table that scores a cell counts: a later plain table scoring it again is the
warning `rescored-in-file`; a later row with a fused item id is a re-score (`amended-in-file`,
see `score_rescore`). Summary and re-score tables are set aside here and read by their own
modules once every cell is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoven_git.mdtables import Heading, Table
from aoven_git.model import CellKey, Findings, Scale
from aoven_git.score_columns import Columns, read_header, spaced_dimension
from aoven_git.score_ids import BLIND_CONDITION, PlanIds

EMPTY_SCORES = frozenset({"", "-", "–", "—", "?", "_", "…", "..."})
INT_RE = re.compile(r"^[+-]?[0-9]{1,18}$")
REF_RE = re.compile(r"#\s?([0-9]{1,6})\b")
_BARE_NUM_RE = re.compile(r"(?<![0-9])([0-9]{1,6})(?![0-9])")
_SCORE_CELL_RE = re.compile(r"^([^\s(#]*)\s*(.*)$", re.S)


@dataclass(slots=True)
class Raw:
    """A cell as read, before the checks against the plan."""

    k: tuple[str, str, str, int]  # (question, condition, dimension, replicate): cheaper to hash than CellKey
    key: CellKey
    score: int | str  # str: what was written, when it is not an integer
    line: int
    transitions: tuple[int, ...]
    citation: str
    fused: bool = False  # the row named its item fused (`Q2B`)


@dataclass(frozen=True)
class Note:
    """Something read but not used, for `validate --verbose`."""

    line: int
    message: str


@dataclass
class Placed:
    """A table with the question and condition its headings give it."""

    table: Table
    cols: Columns
    question: str | None
    condition: str | None
    context_problem: bool  # under a heading naming an unknown question/condition
    replicate: int | None = None  # named by a heading (`### TRT #2`, `#### Rep 2`)


@dataclass(frozen=True)
class BlindScope:
    """A sheet of a blind pass: its rows name opaque items of the pass's corpus, not questions
    and conditions (docs/blinding.md, "Blind score sheets"). `items` are the corpus ids, None
    when the caller does not know the corpus (then any well-formed id is read, completeness is
    not checked)."""

    pass_id: str
    items: frozenset[str] | None


@dataclass
class Parsed:
    cells: list[Raw] = field(default_factory=list)
    by_key: dict[tuple[str, str, str, int], Raw] = field(default_factory=dict)
    item_lines: dict[tuple[str, str, int], int] = field(default_factory=dict)
    layouts: list[str] = field(default_factory=list)
    first_table: int | None = None
    summaries: list[Placed] = field(default_factory=list)
    rescore_tables: list[Placed] = field(default_factory=list)
    fused_rescores: dict[int, list[Raw]] = field(default_factory=dict)  # table line → rows
    notes: list[Note] = field(default_factory=list)
    header_problem: bool = False  # a misspelt column: missing cells are not reported
    seen: dict[tuple[str, str, str, int], int] = field(default_factory=dict)  # key → table line


# --------------------------------------------------------------------------- score cells


def parse_score(text: str) -> tuple[int | str | None, list[int], str]:
    """`2`, `**2**`, `2 #8`, `2 (#7, #8)` → (score, refs, leftover text). Empty → None."""
    t = text.strip()
    if t in EMPTY_SCORES:
        return None, [], ""
    if len(t) < 10 and t.isdigit() and t.isascii():
        return int(t), [], ""  # the common case, without regular expressions
    m = _SCORE_CELL_RE.match(t)
    assert m is not None  # the pattern matches every string
    tok, rest = m.group(1), m.group(2)
    refs = [int(r) for r in REF_RE.findall(rest)]
    leftover = REF_RE.sub("", rest).strip(" ,;()[]")
    if tok and INT_RE.match(tok):
        return int(tok), refs, leftover
    return t, refs, leftover  # not a whole number: keep what was written for the message


def parse_label(text: str, scale: Scale) -> tuple[int | str | None, list[int], str]:
    """A score cell on a nominal scale: `PASS`, `pass`, `FAIL #3 "quote"` → (position, refs,
    leftover); a number or an unknown word stays the text written (for the message). Empty → None."""
    t = text.strip()
    if t in EMPTY_SCORES:
        return None, [], ""
    whole = scale.value_of(t)
    if whole is not None:
        return whole, [], ""
    m = _SCORE_CELL_RE.match(t)
    assert m is not None  # the pattern matches every string
    value = scale.value_of(m.group(1))
    if value is None:
        return t, [], ""
    rest = m.group(2)
    refs = [int(r) for r in REF_RE.findall(rest)]
    return value, refs, REF_RE.sub("", rest).strip(" ,;()[]")


def score_of(text: str, scale: Scale) -> tuple[int | str | None, list[int], str]:
    """`parse_score` on an ordinal scale, `parse_label` on a nominal one."""
    return parse_label(text, scale) if scale.labels else parse_score(text)


def transition_cell(text: str) -> list[int]:
    """A Transition column holds `#7, #8`, `7/8` or `8`."""
    return [int(x) for x in _BARE_NUM_RE.findall(text)]


# --------------------------------------------------------------------------- headings


@dataclass
class _Sections:
    question: str | None = None
    q_level: int = 0
    condition: str | None = None
    c_level: int = 0
    bad: bool = False
    replicate: int | None = None  # `### TRT #2`, `#### Rep 2`
    r_level: int = 0


def _question_heading(h: Heading, st: _Sections, ids: PlanIds, found: Findings) -> bool:
    q, q_unknown = ids.question_heading(h.text)
    if not (q or q_unknown):
        return False
    st.question, st.q_level = q, h.level
    if not st.c_level or st.c_level >= h.level:  # `# Test A` / `## Q1` keeps condition A
        st.condition, st.c_level = None, 0
    st.bad = q is None
    if q_unknown:
        found.error(
            h.line, "unknown-question", f"heading names question {q_unknown!r}, which is not in the plan"
        )
    named = ids.heading_condition(h.text)  # `## Q1 — Test B Layer 2`
    if named is not None and named[0]:
        st.condition, st.c_level = named[0], h.level
    elif named is not None:
        found.error(
            h.line, "unknown-condition", f"heading names condition {named[1]!r}, which is not in the plan"
        )
        st.bad = True
    return True


def _replicate_heading(h: Heading, st: _Sections, ids: PlanIds, found: Findings) -> bool:
    """A question or condition heading with a replicate (`## L1 / TRT #2`, `### TRT #2`), or a
    heading naming the replicate alone (`#### Rep 2`), in a plan with replicates. True when the
    heading was one of those (and read)."""
    base, r = ids.split_replicate(h.text)
    if r is None:
        r = ids.replicate(h.text)
        if r is None or ids.question_heading(h.text) != (None, None):
            return False
        st.replicate, st.r_level = r, h.level
        return True
    plain = Heading(h.line, h.level, base)
    q = _question_heading(plain, st, ids, found)
    if q and st.condition is None:  # `## L1 / TRT #2`: the condition after the question
        c = ids.condition_exact(base[len(ids.token(base)):])
        st.condition, st.c_level = (c, h.level) if c else (st.condition, st.c_level)
    elif not q:
        c, c_unknown = ids.condition_heading(base)
        if not (c or c_unknown):
            return False
        _condition_heading(h, st, c, c_unknown, found)
    st.replicate, st.r_level = r, h.level
    return True


def _condition_heading(h: Heading, st: _Sections, c: str | None, c_unknown: str | None,
                       found: Findings) -> None:
    if st.q_level and h.level <= st.q_level:
        st.question, st.q_level, st.bad = None, 0, False
    st.condition, st.c_level = c, h.level
    if c_unknown:
        found.error(
            h.line,
            "unknown-condition",
            f"heading names condition {c_unknown!r}, which is not in the plan",
        )
        st.bad = True
    elif st.bad and st.question is not None:
        st.bad = False


def _heading(h: Heading, st: _Sections, ids: PlanIds, found: Findings) -> None:
    if ids.replicated:
        if st.r_level and h.level <= st.r_level:  # a heading at its level or above closes it
            st.replicate, st.r_level = None, 0
        if _replicate_heading(h, st, ids, found):
            return
    if _question_heading(h, st, ids, found):
        return
    c, c_unknown = ids.condition_heading(h.text)
    if c or c_unknown:
        _condition_heading(h, st, c, c_unknown, found)
        return
    misspelt = _misspelt_heading(h, ids, found)
    # any other heading closes the sections it is not nested in
    if st.c_level and h.level <= st.c_level:
        st.condition, st.c_level = None, 0
        if st.question is not None:
            st.bad = False
    if st.q_level and h.level <= st.q_level:
        st.question, st.q_level, st.condition, st.c_level, st.bad = None, 0, None, 0, False
    elif not st.q_level and not st.c_level:
        st.bad = False
    st.bad = st.bad or misspelt  # its tables are not told again that they lack a condition


def _misspelt_heading(h: Heading, ids: PlanIds, found: Findings) -> bool:
    """`misspelt-heading`: a near miss of a condition heading (`### Conditon B`) is named with
    what it probably should be. True when it is one."""
    meant = ids.misspelt_condition_heading(h.text)
    if meant is None:
        return False
    found.error(h.line, "misspelt-heading", f'heading "{h.text.strip()}" is not read as a condition heading: '
                f'did you mean "{meant}"? (the tables under it have no condition until it is fixed)')
    return True


def place_tables(blocks: list[Heading | Table], ids: PlanIds, found: Findings) -> list[Placed]:
    """Every table with its header read and the question/condition of the headings above it."""
    st = _Sections()
    out: list[Placed] = []
    for block in blocks:
        if isinstance(block, Heading):
            _heading(block, st, ids, found)
        else:
            cols = read_header(block.header, ids)
            out.append(Placed(block, cols, st.question, st.condition, st.bad, st.replicate))
    return out


# --------------------------------------------------------------------------- tables


class _Reader:
    """Reads the score tables of one file into `Parsed` (first table wins)."""

    def __init__(
        self, ids: PlanIds, found: Findings, default_condition: str | None, blind: BlindScope | None
    ) -> None:
        self.ids, self.found, self.default_condition = ids, found, default_condition
        self.blind = blind
        self.out = Parsed()

    def put(self, table_line: int, raw: Raw) -> None:
        out = self.out
        first = out.by_key.get(raw.k)
        if first is None:
            out.seen[raw.k] = table_line
            out.by_key[raw.k] = raw
            out.cells.append(raw)
        elif out.seen[raw.k] == table_line:
            self.found.error(
                raw.line,
                "duplicate-cell",
                f"{raw.key} is scored twice in this table (first at line {first.line})",
            )
        elif raw.fused:
            out.fused_rescores.setdefault(table_line, []).append(raw)
        else:
            self.found.warn(
                raw.line,
                "rescored-in-file",
                f"{raw.key} was already scored at line {first.line}; this later score is ignored "
                "(change sealed scores with an amendment, not in the file)",
            )

    def table(self, p: Placed) -> None:
        cols, t = p.cols, p.table
        for idx, suggestion in cols.misspelt:
            self.found.error(
                t.line, "unknown-column", f'unknown column "{t.header[idx]}" (did you mean "{suggestion}"?)'
            )
            self.out.header_problem = True
        for idx, dimension in cols.spaced:
            self.found.error(
                t.line, "spaced-dimension", f'column "{t.header[idx]}" looks like {dimension} with a space '
                f'inside: write "{dimension}" (the column is not read as {dimension} until then)'
            )
            self.out.header_problem = True
        kind = cols.kind
        if kind in ("wide", "long", "sectioned") and "replicate" in cols.roles and not self.ids.replicated:
            self.found.error(t.line, "unknown-replicate", f'column "{t.header[cols.roles["replicate"]]}": '
                             "the plan has no replicates (one response per question and condition): drop "
                             "the column (the table is not read until then)")
            self.out.header_problem = True
            return
        if kind is None:
            if not cols.misspelt and not cols.spaced:
                self.out.notes.append(Note(t.line, "table ignored: not a score table"))
            return
        self._note_ignored(p)
        if kind in ("summary", "rescore"):
            (self.out.summaries if kind == "summary" else self.out.rescore_tables).append(p)
            return
        if self.out.first_table is None:
            self.out.first_table = t.line
        self.out.layouts.append(kind)
        if kind == "wide":
            for idx in cols.unknown_dims:
                self.found.error(
                    t.line, "unknown-dimension", f"column {t.header[idx]!r} is not a dimension of the plan"
                )
        self._rows(p, kind)

    def _note_ignored(self, p: Placed) -> None:
        for idx in p.cols.ignored:
            self.out.notes.append(
                Note(p.table.line, f'column "{p.table.header[idx]}" ignored: not a score column')
            )

    def _context_missing(self, p: Placed, has_q: bool, has_c: bool) -> None:
        if p.context_problem or p.cols.misspelt or p.cols.spaced:
            return
        if has_q and has_c:  # everything but the replicate
            self.found.error(
                p.table.line,
                "section-context-missing",
                f"score table without a replicate (the plan has {self.ids.plan.replicates} per question "
                "and condition): add a Rep column after the condition (`| Q | Cond | Rep | … |`) or put "
                "it under a heading like `### TRT #2`",
            )
            return
        missing = " and ".join(w for w, ok in (("question", has_q), ("condition", has_c)) if not ok)
        self.found.error(
            p.table.line,
            "section-context-missing",
            f"score table without a {missing}: put it under a heading like `## Q3` / `### Test A` "
            f"or add a {missing.title()} column",
        )

    def _rows(self, p: Placed, kind: str) -> None:
        cols = p.cols
        if self.blind is not None and not self._blind_table(p):
            return
        has_q = "question" in cols.roles or p.question is not None
        fixed_c = BLIND_CONDITION if self.blind else cols.condition or p.condition or self.default_condition
        has_c = "condition" in cols.roles or fixed_c is not None
        if not has_q or (not has_c and "question" not in cols.roles):
            self._context_missing(p, has_q, has_c)
            return
        lacking, lacking_rep = False, False
        for line, row in p.table.rows:
            item = self._item(line, row, p, fixed_c)
            if item is None:
                continue
            q, c = item[0], item[1]
            if c is None:
                lacking = True
                continue
            state, r = self._replicate(line, row, p, (q, c, item[3]))
            lacking_rep = lacking_rep or state == "lacking"
            if state != "ok":
                continue
            self.out.item_lines.setdefault((q, c, r), line)
            if kind == "wide":
                self._wide_row(p, line, row, (q, c, item[2], r))
            else:
                self._long_row(p, line, row, (q, c, item[2], r))
        if lacking or lacking_rep:
            self._context_missing(p, True, not lacking)

    def _replicate(self, line: int, row: list[str], p: Placed, item: tuple[str, str, int | None]
                   ) -> tuple[str, int]:
        """("ok", replicate) of a row — 0 in a plan without replicates —, ("skip", 0) after an
        `unknown-replicate` error or for a row with an empty Rep cell, ("lacking", 0) when nothing
        names it (a Rep cell, a `#N` after the condition or item, a heading)."""
        if not self.ids.replicated or self.blind is not None:
            return "ok", 0
        q, c, suffix = item
        idx = p.cols.roles.get("replicate")
        text = _col(row, idx).strip()
        if idx is not None and not text and suffix is None:
            return "skip", 0
        r = self.ids.replicate(text) if text else (suffix if suffix is not None else p.replicate)
        n = self.ids.plan.replicates
        if text and r is None:
            why = f"replicate {text!r} of {q}/{c} is not a number 1–{n}"
        elif text and suffix is not None and suffix != r:
            why = f"the row names replicate #{suffix} of {q}/{c} but the Rep column says {r}"
        elif r is None:
            return "lacking", 0
        elif not 1 <= r <= n:
            why = f"replicate {r} of {q}/{c} is not in 1–{n} (the plan's replicates: {n})"
        else:
            return "ok", r
        self.found.error(line, "unknown-replicate", why)
        return "skip", 0

    def _item(
        self, line: int, row: list[str], p: Placed, fixed_c: str | None
    ) -> tuple[str, str | None, bool, int | None] | None:
        """(question, condition or None when nothing names one, fused, the replicate a `#N`
        after the item or condition names) of a row; None to skip it."""
        if not any(c.strip() for c in row):
            return None
        roles, ids = p.cols.roles, self.ids
        if self.blind is not None:
            item = self._blind_item(line, _col(row, roles.get("question")), self.blind)
            return None if item is None else (item, BLIND_CONDITION, False, None)
        q, fused, r = p.question, None, None
        if "question" in roles:
            qtext = _col(row, roles.get("question"))
            if not qtext.strip():
                return None
            qtext, r = ids.split_replicate(qtext)
            q, fused = ids.item(qtext)
            if q is None:
                self.found.error(line, "unknown-question", f"question {qtext!r} is not in the plan")
                return None
        if "condition" in roles:
            ctext = _col(row, roles.get("condition"))
            if not ctext.strip():
                return None
            ctext, cr = ids.split_replicate(ctext)
            r = cr if cr is not None else r
            c = ids.condition_cell(ctext)
            if c is None or (fused is not None and fused != c):
                what = (
                    f"condition {ctext!r} is not in the plan"
                    if c is None
                    else (f"the item names condition {fused} but the condition column says {c}")
                )
                self.found.error(line, "unknown-condition", what)
                return None
            return q or "", c, fused is not None, r
        return q or "", fused or fixed_c, fused is not None, r

    def _blind_table(self, p: Placed) -> bool:
        """A table of a blind sheet names its items in an Item column and no condition."""
        roles, line, pass_id = p.cols.roles, p.table.line, self.blind.pass_id  # type: ignore[union-attr]
        if "question" not in roles:
            self.found.error(line, "section-context-missing", f"pass {pass_id} is blind: a score table "
                             "needs an Item column holding the blind ids (`| Item | D1 | … |`)")
            return False
        if "condition" in roles or p.cols.condition:
            self.found.error(line, "unknown-condition", f"pass {pass_id} is blind: items have no "
                             "condition until the key is revealed; drop the condition column")
            return False
        return True

    def _blind_item(self, line: int, text: str, blind: BlindScope) -> str | None:
        """The blind id a row names, or None after an `unknown-item` error (or for a blank row)."""
        from aoven_git.blinding import is_blind_id

        tok = self.ids.token(text)
        if not tok:
            return None
        ident = tok.lower()
        if is_blind_id(ident) and (blind.items is None or ident in blind.items):
            return ident
        where = f"blind/{blind.pass_id}/"
        if is_blind_id(ident):
            why = f"item {tok!r} is not in the blinded corpus of pass {blind.pass_id} ({where})"
        elif self.ids.question(tok) is not None:
            why = (f"pass {blind.pass_id} is blind: score the opaque items of {where} (`| Item | D1 | … |`), "
                   f"not question {tok}")
        else:
            why = f"{tok!r} is not a blind item id of pass {blind.pass_id} (the file names in {where})"
        self.found.error(line, "unknown-item", why)
        return None

    def _wide_row(self, p: Placed, line: int, row: list[str], item: tuple[str, str, bool, int]) -> None:
        q, c, fused, r = item
        cols, ids = p.cols, self.ids
        scale = ids.plan.scale
        shown = f"{q}/{c}#{r}" if r else f"{q}/{c}"
        notes = _col(row, cols.roles.get("citation"))
        refs = _row_refs(notes, cols, ids, self.found, line, shown)
        scores: list[int | None] = []
        width = len(row)
        for idx, d in cols.dims.items():
            score, cell_refs, leftover = score_of(row[idx] if idx < width else "", scale)
            if score is None:
                scores.append(None)
                continue
            is_int = type(score) is int
            scores.append(score if is_int else None)  # type: ignore[arg-type]
            citation = f"{leftover} {notes}".strip() if leftover and is_int else notes
            extra = refs.get(d)
            trans = tuple(dict.fromkeys([*cell_refs, *extra])) if extra else tuple(dict.fromkeys(cell_refs))
            k = (q, c, d, r)
            self.put(p.table.line, Raw(k, ids.key(k), score, line, trans, citation, fused))
        if "sum" in cols.roles and not cols.misspelt and not cols.spaced and not scale.labels:
            _check_sum(_col(row, cols.roles["sum"]), scores, shown, line, self.found)

    def _unknown_dimension(self, line: int, dtext: str) -> None:
        """`unknown-dimension`, or `spaced-dimension` when it is a dimension id split by a space."""
        spaced = spaced_dimension(dtext, self.ids)
        if spaced is None:
            self.found.error(line, "unknown-dimension", f"dimension {dtext!r} is not in the plan")
            return
        self.found.error(line, "spaced-dimension", f'dimension "{dtext.strip()}" looks like {spaced} with a '
                         f'space inside: write "{spaced}" (the row is not read until then)')

    def _long_row(self, p: Placed, line: int, row: list[str], item: tuple[str, str, bool, int]) -> None:
        q, c, fused, r = item
        roles = p.cols.roles
        dtext = _col(row, roles.get("dimension"))
        score, cell_refs, leftover = score_of(_col(row, roles.get("score")), self.ids.plan.scale)
        if not dtext.strip():
            if score is not None:
                shown = f"{q}/{c}#{r}" if r else f"{q}/{c}"
                self.found.error(line, "unknown-dimension", f"row of {shown} has a score but no dimension")
            return
        d = self.ids.dimension(dtext)
        if d is None:
            self._unknown_dimension(line, dtext)
            return
        if score is None:
            return
        citation = _col(row, roles.get("citation"))
        ttext = _col(row, roles.get("transition"))
        trans = [
            *(transition_cell(ttext) if ttext else ()),
            *cell_refs,
            *((int(r) for r in REF_RE.findall(citation)) if "#" in citation else ()),
        ]
        if leftover and isinstance(score, int):
            citation = f"{leftover} {citation}".strip()
        k = (q, c, d, r)
        self.put(
            p.table.line, Raw(k, self.ids.key(k), score, line, tuple(dict.fromkeys(trans)), citation, fused)
        )


def _col(row: list[str], idx: int | None) -> str:
    return row[idx] if idx is not None and idx < len(row) else ""


def _row_refs(
    notes: str, cols: Columns, ids: PlanIds, found: Findings, line: int, item: str
) -> dict[str, list[int]]:
    """`#N` in a wide row's notes column, given to the row's dimension that covers N."""
    refs: dict[str, list[int]] = {}
    if "#" not in notes:
        return refs
    for n in (int(r) for r in REF_RE.findall(notes)):
        owner = next((d for d in cols.dims.values() if n in ids.covers[d]), None)
        if owner is not None:
            refs.setdefault(owner, []).append(n)
        else:
            found.error(
                line,
                "wrong-transition",
                f"the notes of {item} name #{n}, which no dimension of this row covers",
            )
    return refs


def _check_sum(written: str, scores: list[int | None], item: str, line: int, found: Findings) -> None:
    total = written.strip().strip("*_ ")
    if not total or total in EMPTY_SCORES:
        return
    if not INT_RE.match(total):
        found.error(line, "sum-mismatch", f"sum {total!r} of {item} is not a whole number")
    elif all(s is not None for s in scores):
        added = sum(s for s in scores if s is not None)
        if int(total) != added:
            found.error(
                line,
                "sum-mismatch",
                f"sum of {item} is written {int(total)} but the scores add up to {added}",
            )


def read_cells(
    placed: list[Placed],
    ids: PlanIds,
    found: Findings,
    default_condition: str | None,
    blind: BlindScope | None = None,
) -> Parsed:
    """Cells of every score table, in file order; summaries and re-score tables set aside."""
    reader = _Reader(ids, found, default_condition, blind)
    for p in placed:
        reader.table(p)
    return reader.out
