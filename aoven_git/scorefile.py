"""Score files: Markdown written by hand → `ScoreSheet` with a line for every cell (SPEC §4).

Raters write in whatever table shape they like, so the parser recognises score tables by their
header row (wide, long and sectioned layouts, or mixtures of them) through markdown-it's token
stream: tables inside code fences or HTML comments are not tables, escaped pipes and emphasis
are resolved the way a Markdown viewer shows them, and every row keeps its source line. Nothing
here raises for bad content: every problem becomes a `Finding` with a stable code and a line,
so a rater fixing a file sees all of its problems at once.

Per-file pipeline: size / UTF-8 / symlink → identity (file name, front matter) → tables → cells
(first table wins) → normalised document checked against `schemas/scores.schema.json` → checks
against the plan (ids, pass, scale, annotations, completeness).

Finding codes (stable; `validation.py` adds the study-level ones marked *):

==================== ======== ==========================================================
code                 severity meaning
==================== ======== ==========================================================
file-too-large       error    larger than 1 MiB (nothing else is checked)
not-utf8             error    not UTF-8; line of the first bad byte
symlink              error    the score file is a symbolic link
unknown-rater        error    `scores_*.md` naming no rater/round/pass of the plan
front-matter-invalid error    unclosed ``---``, bad YAML, wrong value type
front-matter-mismatch error   front matter rater/pass/round disagrees with the file name
front-matter-unknown-key warn a front matter key other than rater/pass/round/nonce/plan_version
plan-version-mismatch error   front matter `plan_version` is not the plan's `version`
no-score-table       error    no table whose header makes it a score table
section-context-missing error a Dim/Score table with no question or condition heading above
unknown-question     error    question id not in the plan (questions or holdout)
unknown-condition    error    condition not in the plan
unknown-dimension    error    dimension not in the plan
cell-not-in-pass     error    known ids, but the cell is not part of this pass and round
score-not-integer    error    score is not a whole number (``2.5``, ``x``)
score-off-scale      error    integer outside the plan's scale
duplicate-cell       error    the same cell twice in one table (the first row counts)
rescored-in-file     warning  a later table scores a cell again (ignored)
missing-cell         error    one finding per item (question, condition) listing missing dimensions
sum-mismatch         error    a Σ/Sum/Total cell differs from the row's sum (or is not a number)
missing-annotation   error*   annotate:true dimension, score above the minimum, no transition of
                              that dimension named (warning when rules.require_annotations is false)
wrong-transition     error    a transition named for a dimension that does not cover it
duplicate-sheet*     error    two files resolve to the same rater/pass/round
quote-not-found*     warning  a quoted phrase of a citation is not in the cell's response
response-missing*    warning  the response file a citation refers to does not exist
invalid-cell         error    any other schema violation of a normalised cell (a safety net)
not-a-score-file*    error    a file given to validation that is no score/reconciliation file
==================== ======== ==========================================================

File-level findings (size, encoding, symlink, identity, no table) point at line 1.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aoven_git.model import Cell, CellKey, Finding, Plan, ScoreSheet, SheetId

MAX_BYTES = 1024 * 1024
FRONT_MATTER_KEYS = ("rater", "pass", "round", "nonce", "plan_version")

# Header names (lower-cased, trailing ':' and spaces removed) → column role.
_ROLE_NAMES: dict[str, str] = {}
for _role, _names in {
    "question": ("q", "question", "q#", "qid", "question id"),
    "condition": ("cond", "cond.", "condition", "test"),
    "dimension": ("dim", "dim.", "dimension", "dimension id"),
    "score": ("score", "scores", "rating"),
    "transition": ("transition", "transitions", "trans", "#", "transition(s)"),
    "citation": (
        "citation",
        "citations",
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
}.items():
    for _name in _names:
        _ROLE_NAMES[_name] = _role

_EMPTY_SCORES = {"", "-", "–", "—", "?", "_", "…", "..."}
_INT_RE = re.compile(r"^[+-]?[0-9]{1,18}$")
_REF_RE = re.compile(r"#\s?([0-9]{1,6})\b")
_BARE_NUM_RE = re.compile(r"(?<![0-9])([0-9]{1,6})(?![0-9])")
_SCORE_CELL_RE = re.compile(r"^([^\s(#]*)\s*(.*)$", re.S)
_TOKEN_RE = re.compile(r"[^\s:;,.—–()\[\]/|]+")
_COND_PREFIX_RE = re.compile(r"^(?:test|condition|cond)\b[\s_:.-]*", re.I)
_COND_IN_HEADING_RE = re.compile(
    r"(?:^|[\s/—–:,(-])(?:test|condition|cond)[\s_:.-]*([^\s:;,.—–()\[\]/|]+)", re.I
)
_ID_SHAPE_RE = re.compile(r"^([A-Za-z]+)[0-9]+$")


# --------------------------------------------------------------------------- front matter


@dataclass
class _FrontMatter:
    present: bool = False
    closed: bool = True
    start: int = 0  # offset of the first byte of the opening line (after a BOM)
    end: int = 0  # offset just after the closing line
    body_line: int = 1  # 1-based line where the Markdown body starts
    yaml_text: str = ""
    newline: str = "\n"
    lines: list[str] = field(default_factory=list)  # the YAML lines, with their endings


def _split_front_matter(text: str) -> _FrontMatter:
    """Front matter is `---` on the very first line up to the next `---` or `...` line."""
    start = 1 if text.startswith("\ufeff") else 0
    first_end = text.find("\n", start)
    first = text[start:] if first_end == -1 else text[start:first_end]
    if first.rstrip() != "---":
        return _FrontMatter(start=start)
    newline = "\r\n" if first.endswith("\r") else "\n"
    if first_end == -1:
        return _FrontMatter(present=True, closed=False, start=start, end=len(text), newline=newline)
    pos = first_end + 1
    lines: list[str] = []
    line_no = 1
    while pos < len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl == -1 else text[pos : nl + 1]
        line_no += 1
        if line.rstrip() in ("---", "..."):
            end = pos + len(line)
            return _FrontMatter(True, True, start, end, line_no + 1, "".join(lines), newline, lines)
        lines.append(line)
        pos += len(line)
    return _FrontMatter(True, False, start, len(text), line_no + 1, "".join(lines), newline, lines)


_SIMPLE_LINE_RE = re.compile(r"^([a-z_]{1,32}):[ \t]+([a-z][a-z0-9_-]{0,63}|[1-9][0-9]{0,8}|0)[ \t]*$")
_YAML_KEYWORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})


def simple_yaml(text: str, *, line_offset: int = 0) -> tuple[dict[str, Any], dict[str, int]] | None:
    """`key: value` lines of lower-case ids and small integers, read without a YAML parser.

    Front matter is almost always this simple, and ruamel.yaml took a quarter of the time of
    validating a study. Anything else (quotes, comments, upper case, nesting, YAML keywords,
    duplicate keys) returns None and goes to `yamlio.load_yaml`; a property test checks that the
    two agree on everything this accepts.
    """
    value: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        m = _SIMPLE_LINE_RE.match(line)
        if m is None:
            return None
        key, raw = m.group(1), m.group(2)
        if key in value or raw in _YAML_KEYWORDS:
            return None
        value[key] = int(raw) if raw[0].isdigit() else raw
        lines[key] = number + line_offset
    return (value, lines) if value else None


def front_matter(data: bytes) -> dict[str, Any]:
    """The front matter mapping of a score file; {} when absent, unclosed or not valid YAML.

    Callers that must tell those cases apart (validation) use `parse_score_file`, which reports them.
    """
    from aoven_git.yamlio import YamlError, load_yaml

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {}
    fm = _split_front_matter(text)
    if not fm.present or not fm.closed:
        return {}
    try:
        value, _ = load_yaml(fm.yaml_text)
    except YamlError:
        return {}
    return value if isinstance(value, dict) else {}


_PLAIN_SCALAR_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "nan", "inf"}


def _yaml_scalar(value: object) -> str:
    import json

    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN_SCALAR_RE.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def set_front_matter(data: bytes, **fields: str) -> bytes:
    """Add or replace top-level keys in the front matter, creating it when absent.

    Every other byte stays as it was (seal digests are computed over the file, and a rater's
    diff should show only the keys that changed). A key written over several lines is replaced
    with its continuation lines. The file's line ending is reused.
    """
    if not fields:
        return data
    text = data.decode("utf-8", "surrogateescape")
    fm = _split_front_matter(text)
    if not fm.present or not fm.closed:
        newline = "\r\n" if "\r\n" in text[:4096] else "\n"
        block = "---" + newline + "".join(f"{k}: {_yaml_scalar(v)}{newline}" for k, v in fields.items())
        block += "---" + newline
        head = text[: fm.start]  # keep a BOM in front
        return (head + block + text[fm.start :]).encode("utf-8", "surrogateescape")
    newline = fm.newline
    remaining = dict(fields)
    out: list[str] = []
    skipping = False
    for line in fm.lines:
        if skipping and (line[:1] in (" ", "\t") or not line.strip()):
            continue  # continuation of a replaced multi-line value
        skipping = False
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:", line)
        if m and m.group(1) in remaining:
            key = m.group(1)
            ending = line[len(line.rstrip("\r\n")) :] or newline
            out.append(f"{key}: {_yaml_scalar(remaining.pop(key))}{ending}")
            skipping = True
            continue
        out.append(line)
    if out and not out[-1].endswith("\n"):
        out[-1] += newline
    out.extend(f"{k}: {_yaml_scalar(v)}{newline}" for k, v in remaining.items())
    first_end = text.index("\n", fm.start) + 1
    yaml_start = first_end
    yaml_end = yaml_start + len(fm.yaml_text)
    new = text[:yaml_start] + "".join(out) + text[yaml_end:]
    return new.encode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------- id matching


def _shape(ids: Iterable[str]) -> re.Pattern[str] | None:
    """`Q\\d+` when every id is a common letter prefix plus digits: lets `Q16` read as an
    unknown question instead of prose."""
    prefixes = set()
    for i in ids:
        m = _ID_SHAPE_RE.match(i)
        if m is None:
            return None
        prefixes.add(m.group(1).lower())
    if len(prefixes) != 1:
        return None
    return re.compile(rf"^{re.escape(prefixes.pop())}[0-9]+$", re.I)


class _Ids:
    """Case-insensitive lookups of the plan's ids, built once per plan."""

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
        self._keys: dict[tuple[str, str, str], CellKey] = {}
        self._expected: dict[
            tuple[str, str], tuple[tuple[CellKey, ...], frozenset[tuple[str, str, str]]]
        ] = {}

    def key(self, k: tuple[str, str, str]) -> CellKey:
        """One CellKey instance per cell across all files of a run."""
        found = self._keys.get(k)
        if found is None:
            found = self._keys[k] = CellKey(*k)
        return found

    def expected(
        self, pass_id: str, round_id: str
    ) -> tuple[tuple[CellKey, ...], frozenset[tuple[str, str, str]]]:
        found = self._expected.get((pass_id, round_id))
        if found is None:
            cells = self.plan.expected_cells(pass_id, round_id)
            found = (cells, frozenset((c.question, c.condition, c.dimension) for c in cells))
            self._expected[(pass_id, round_id)] = found
        return found

    @staticmethod
    def token(text: str) -> str:
        m = _TOKEN_RE.search(text.strip())
        return m.group(0) if m and m.start() == 0 else ""

    def question(self, text: str) -> str | None:
        return self.questions.get(self.token(text).lower())

    def dimension(self, text: str) -> str | None:
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

    def condition_cell(self, text: str) -> str | None:
        t = text.strip()
        if t.lower() in self.condition_names:
            return self.condition_names[t.lower()]
        m = _COND_PREFIX_RE.match(t)
        rest = t[m.end() :] if m else t
        return self.conditions.get(self.token(rest).lower())

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

    def question_heading(self, text: str) -> tuple[str | None, str | None]:
        tok = self.token(text)
        found = self.questions.get(tok.lower())
        if found:
            return found, None
        if self.question_shape and self.question_shape.match(tok):
            return None, tok
        return None, None


# --------------------------------------------------------------------------- Markdown


_INLINE_SPECIAL = frozenset("\\`*_[]!<&\n")
_INLINE_SPECIAL_RE = re.compile("[" + re.escape("".join(sorted(_INLINE_SPECIAL))) + "]")


def _inline_text(token: Any, md: Any) -> str:
    """What a reader sees in a cell or heading: emphasis, HTML comments and link targets gone.

    The core `inline` rule is disabled (it dominated parse time): plain content is its own
    text, and only content with a character some inline rule reacts to is parsed inline.
    """
    content = token.content
    if _INLINE_SPECIAL_RE.search(content) is None:
        return str(content).strip()
    children = _inline_markdown().parseInline(content)[0].children if content else []
    parts: list[str] = []
    for child in children or ():
        if child.type in ("text", "text_special", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return "".join(parts).strip()


@dataclass
class _Table:
    line: int  # 1-based line of the header row
    header: list[str]
    rows: list[tuple[int, list[str]]]
    question: str | None  # from the enclosing headings
    condition: str | None
    context_problem: bool  # under a heading naming an unknown question/condition


@dataclass
class _HeadingState:
    question: str | None = None
    q_level: int = 0
    condition: str | None = None
    c_level: int = 0
    bad: bool = False


def _split_row(line: str) -> list[str]:
    """Cells of a table row exactly as markdown-it's table rule splits them (`\\|` is a pipe
    inside a cell); plain `str.split` gives the same answer when there is no backslash."""
    from markdown_it.common.utils import MD_TRIM_CHARS
    from markdown_it.rules_block.table import escapedSplit

    text = line.strip(MD_TRIM_CHARS)
    columns = text.split("|") if "\\" not in text else escapedSplit(text)
    if columns and columns[0] == "":
        columns.pop(0)
    if columns and columns[-1] == "":
        columns.pop()
    return [c.strip(MD_TRIM_CHARS) for c in columns]


def _compact_table(state: Any, start: int, end: int, silent: bool) -> bool:
    """markdown-it's GFM table rule, emitting ONE token per table instead of ~14 per row.

    Whether a table starts, and where it ends, is decided exactly as the original rule does
    (its own code decides the start; the end uses the same terminators), so the block structure
    is the real parser's. Only the per-cell token objects, which dominated the time of large score
    files, are replaced by plain lists in `token.meta`.
    """
    from markdown_it.rules_block.table import MAX_AUTOCOMPLETED_CELLS, getLine, table

    if not table(state, start, end, True):
        return False
    if silent:
        return True
    header = _split_row(getLine(state, start))
    width = len(header)
    terminators = state.md.block.ruler.getRules("blockquote")
    old_parent, state.parentType = state.parentType, "table"
    rows: list[tuple[int, list[str]]] = []
    autocompleted = 0
    line = start + 2
    while line < end:
        if state.sCount[line] < state.blkIndent:
            break
        text = getLine(state, line)
        # a row that starts with "|" cannot start any terminating block (fence, quote, rule,
        # list, HTML, heading all need another first character), so skip asking each rule
        if not text.startswith("|") and any(rule(state, line, end, True) for rule in terminators):
            break
        if not text.strip() or state.is_code_block(line):
            break
        cells = _split_row(text)
        autocompleted += width - len(cells)
        if autocompleted > MAX_AUTOCOMPLETED_CELLS:
            break
        cells = (cells + [""] * width)[:width]
        rows.append((line + 1, cells))
        line += 1
    token = state.push("score_table", "table", 0)
    token.map = [start, line]
    token.meta = {"header": header, "rows": rows}
    state.parentType = old_parent
    state.line = line
    return True


@functools.cache
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    md.block.ruler.at("table", _compact_table, {"alt": ["paragraph", "reference"]})
    md.disable(["inline", "text_join"])  # see _inline_text
    return md


@functools.cache
def _inline_markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _tables(text: str, ids: _Ids, add: Any) -> list[_Table]:
    md = _markdown()
    tokens = md.parse(text)
    state = _HeadingState()
    tables: list[_Table] = []
    i = 0
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        if tok.type == "heading_open":
            level = int(tok.tag[1:]) if tok.tag[1:].isdigit() else 1
            inline = tokens[i + 1] if i + 1 < n else None
            line = tok.map[0] + 1 if tok.map else 1
            _heading(_inline_text(inline, md) if inline is not None else "", level, line, state, ids, add)
            i += 2
            continue
        if tok.type == "score_table":
            tables.append(_read_table(tok, state, md))
        i += 1
    return tables


def _heading(text: str, level: int, line: int, st: _HeadingState, ids: _Ids, add: Any) -> None:
    q, q_unknown = ids.question_heading(text)
    if q or q_unknown:
        st.question, st.q_level = q, level
        if not st.c_level or st.c_level >= level:  # `# Test A` / `## Q1` keeps condition A
            st.condition, st.c_level = None, 0
        st.bad = q is None
        if q_unknown:
            add(line, "unknown-question", f"heading names question {q_unknown!r}, which is not in the plan")
        m = _COND_IN_HEADING_RE.search(text[len(ids.token(text)) :])
        if m:
            c = ids.conditions.get(m.group(1).lower())
            if c:
                st.condition, st.c_level = c, level
            else:
                add(
                    line,
                    "unknown-condition",
                    f"heading names condition {m.group(1)!r}, which is not in the plan",
                )
                st.bad = True
        return
    c, c_unknown = ids.condition_heading(text)
    if c or c_unknown:
        if st.q_level and level <= st.q_level:
            st.question, st.q_level, st.bad = None, 0, False
        st.condition, st.c_level = c, level
        if c_unknown:
            add(line, "unknown-condition", f"heading names condition {c_unknown!r}, which is not in the plan")
            st.bad = True
        elif st.bad and st.question is not None:
            st.bad = False
        return
    # any other heading closes the sections it is not nested in
    if st.c_level and level <= st.c_level:
        st.condition, st.c_level = None, 0
        if st.question is not None:
            st.bad = False
    if st.q_level and level <= st.q_level:
        st.question, st.q_level, st.condition, st.c_level, st.bad = None, 0, None, 0, False
    elif not st.q_level and not st.c_level:
        st.bad = False


class _Cell:
    """Stands in for an inline token: `_inline_text` reads only `.content`."""

    __slots__ = ("content",)

    def __init__(self, content: str) -> None:
        self.content = content


def _read_table(tok: Any, state: _HeadingState, md: Any) -> _Table:
    start = tok.map[0] + 1
    header = [_inline_text(_Cell(c), md) for c in tok.meta["header"]]
    rows = [(line, [_inline_text(_Cell(c), md) for c in cells]) for line, cells in tok.meta["rows"]]
    return _Table(start, header, rows, state.question, state.condition, state.bad)


# --------------------------------------------------------------------------- cells


@dataclass(slots=True)
class _Raw:
    k: tuple[str, str, str]  # (question, condition, dimension): cheaper to hash than CellKey
    key: CellKey
    score: int | str  # str: what was written, when it is not an integer
    line: int
    transitions: tuple[int, ...]
    citation: str


def _header_roles(header: list[str], ids: _Ids) -> tuple[dict[str, int], dict[int, str], list[int]]:
    roles: dict[str, int] = {}
    dims: dict[int, str] = {}
    unknown_dims: list[int] = []
    for idx, raw in enumerate(header):
        name = re.sub(r"\s+", " ", raw.strip().rstrip(":").strip()).lower()
        role = _ROLE_NAMES.get(name)
        if role is not None:
            roles.setdefault(role, idx)
            continue
        d = ids.dimension(raw)
        if d is not None:
            if d not in dims.values():
                dims[idx] = d
        elif ids.looks_like_dimension(raw):
            unknown_dims.append(idx)
    return roles, dims, unknown_dims


def _parse_score(text: str) -> tuple[int | str | None, list[int], str]:
    """`2`, `**2**`, `2 #8`, `2 (#7, #8)` → (score, refs, leftover text). Empty → None."""
    t = text.strip()
    if t in _EMPTY_SCORES:
        return None, [], ""
    if len(t) < 10 and t.isdigit() and t.isascii():
        return int(t), [], ""  # the common case, without regular expressions
    m = _SCORE_CELL_RE.match(t)
    assert m is not None  # the pattern matches every string
    tok, rest = m.group(1), m.group(2)
    refs = [int(r) for r in _REF_RE.findall(rest)]
    leftover = _REF_RE.sub("", rest).strip(" ,;()[]")
    if tok and _INT_RE.match(tok):
        return int(tok), refs, leftover
    return t, refs, leftover  # not a whole number: keep what was written for the message


def _transition_cell(text: str) -> list[int]:
    """A Transition column holds `#7, #8`, `7/8` or `8`."""
    return [int(x) for x in _BARE_NUM_RE.findall(text)]


@dataclass
class _Parsed:
    cells: list[_Raw] = field(default_factory=list)
    item_lines: dict[tuple[str, str], int] = field(default_factory=dict)
    layouts: list[str] = field(default_factory=list)
    first_table: int | None = None


def _cells(tables: list[_Table], ids: _Ids, add: Any) -> _Parsed:
    out = _Parsed()
    seen: dict[tuple[str, str, str], tuple[int, int]] = {}  # key → (table index, line)

    def put(t_index: int, raw: _Raw) -> None:
        if raw.k in seen:
            first_table, first_line = seen[raw.k]
            if first_table == t_index:
                add(
                    raw.line,
                    "duplicate-cell",
                    f"{raw.key} is scored twice in this table (first at line {first_line})",
                )
            else:
                add(
                    raw.line,
                    "rescored-in-file",
                    f"{raw.key} was already scored at line {first_line}; this later score is ignored "
                    "(change sealed scores with an amendment, not in the file)",
                    "warning",
                )
            return
        seen[raw.k] = (t_index, raw.line)
        out.cells.append(raw)

    for t_index, table in enumerate(tables):
        roles, dims, unknown_dims = _header_roles(table.header, ids)
        has_q, has_c = "question" in roles, "condition" in roles
        if dims and (has_q or has_c):
            layout = "wide"
        elif "dimension" in roles and "score" in roles:
            layout = "long" if has_q and has_c else "sectioned"
        else:
            continue  # not a score table
        if out.first_table is None:
            out.first_table = table.line
        out.layouts.append(layout)
        if layout == "wide":
            for idx in unknown_dims:
                add(
                    table.line,
                    "unknown-dimension",
                    f"column {table.header[idx]!r} is not a dimension of the plan",
                )
        if (not has_q and table.question is None) or (not has_c and table.condition is None):
            if not table.context_problem:
                missing = " and ".join(
                    w
                    for w, ok in (
                        ("question", has_q or table.question),
                        ("condition", has_c or table.condition),
                    )
                    if not ok
                )
                add(
                    table.line,
                    "section-context-missing",
                    f"score table without a {missing}: put it under a heading like `## Q3` / `### Test A` "
                    f"or add a {missing.title()} column",
                )
            continue
        for line, row in table.rows:

            def col(role: str, row: list[str] = row, roles: dict[str, int] = roles) -> str:
                idx = roles.get(role)
                return row[idx] if idx is not None and idx < len(row) else ""

            if not any(c.strip() for c in row):
                continue
            q = table.question
            if has_q:
                qtext = col("question")
                if not qtext.strip():
                    continue
                q = ids.question(qtext)
                if q is None:
                    add(line, "unknown-question", f"question {qtext!r} is not in the plan")
                    continue
            c = table.condition
            if has_c:
                ctext = col("condition")
                if not ctext.strip():
                    continue
                c = ids.condition_cell(ctext)
                if c is None:
                    add(line, "unknown-condition", f"condition {ctext!r} is not in the plan")
                    continue
            assert q is not None and c is not None
            out.item_lines.setdefault((q, c), line)
            if layout == "wide":
                _wide_row(t_index, line, row, q, c, roles, dims, ids, add, put)
            else:
                _long_row(t_index, line, q, c, col, ids, add, put)
    return out


def _wide_row(
    t_index: int,
    line: int,
    row: list[str],
    q: str,
    c: str,
    roles: dict[str, int],
    dims: dict[int, str],
    ids: _Ids,
    add: Any,
    put: Any,
) -> None:
    notes = row[roles["citation"]] if "citation" in roles and roles["citation"] < len(row) else ""
    refs: dict[str, list[int]] = {}
    if "#" in notes:
        for n in (int(r) for r in _REF_RE.findall(notes)):
            owner = next((d for d in dims.values() if n in ids.covers[d]), None)
            if owner is not None:
                refs.setdefault(owner, []).append(n)
            else:
                add(
                    line,
                    "wrong-transition",
                    f"the notes of {q}/{c} name #{n}, which no dimension of this row covers",
                )
    scores: list[int | None] = []
    width = len(row)
    for idx, d in dims.items():
        score, cell_refs, leftover = _parse_score(row[idx] if idx < width else "")
        if score is None:
            scores.append(None)
            continue
        is_int = type(score) is int
        scores.append(score if is_int else None)  # type: ignore[arg-type]
        citation = f"{leftover} {notes}".strip() if leftover and is_int else notes
        extra = refs.get(d)
        trans = tuple(dict.fromkeys([*cell_refs, *extra])) if extra else tuple(dict.fromkeys(cell_refs))
        k = (q, c, d)
        put(t_index, _Raw(k, ids.key(k), score, line, trans, citation))
    if "sum" in roles and roles["sum"] < len(row):
        total = row[roles["sum"]].strip().strip("*_ ")
        if total and total not in _EMPTY_SCORES:
            if not _INT_RE.match(total):
                add(line, "sum-mismatch", f"sum {total!r} of {q}/{c} is not a whole number")
            elif all(s is not None for s in scores) and int(total) != sum(s for s in scores if s is not None):
                add(
                    line,
                    "sum-mismatch",
                    f"sum of {q}/{c} is written {int(total)} but the scores add up to "
                    f"{sum(s for s in scores if s is not None)}",
                )


def _long_row(t_index: int, line: int, q: str, c: str, col: Any, ids: _Ids, add: Any, put: Any) -> None:
    dtext = col("dimension")
    score, cell_refs, leftover = _parse_score(col("score"))
    if not dtext.strip():
        if score is not None:
            add(line, "unknown-dimension", f"row of {q}/{c} has a score but no dimension")
        return
    d = ids.dimension(dtext)
    if d is None:
        add(line, "unknown-dimension", f"dimension {dtext!r} is not in the plan")
        return
    if score is None:
        return
    citation = col("citation")
    trans = [*_transition_cell(col("transition")), *cell_refs, *(int(r) for r in _REF_RE.findall(citation))]
    if leftover and isinstance(score, int):
        citation = f"{leftover} {citation}".strip()
    k = (q, c, d)
    put(t_index, _Raw(k, ids.key(k), score, line, tuple(dict.fromkeys(trans)), citation))


# --------------------------------------------------------------------------- identity


@dataclass
class _Identity:
    sheet: SheetId
    known: bool  # rater, pass and round all resolve in the plan
    nonce: str | None = None
    plan_version: int | None = None


def report_name_mismatches(
    path: str, found: Mapping[str, str], expected: Mapping[str, str], lines: Mapping[str, int], add: Any
) -> None:
    """Front matter is authoritative but must agree with the file name (score and reconciliation
    files alike): one `front-matter-mismatch` per disagreeing key, at that key's line."""
    for key, val in found.items():
        if key in expected and val != expected[key]:
            add(
                lines.get(key, 2),
                "front-matter-mismatch",
                f"front matter says {key}: {val} but the file name {path.rsplit('/', 1)[-1]} means "
                f"{key} {expected[key]}",
            )


def _identity(plan: Plan, path: str, text: str | None, add: Any) -> tuple[_Identity, int]:
    """Identity from the file name and front matter; returns it and the body's first line."""
    from aoven_git.naming import classify

    named = classify(plan, path)
    name_sheet = named.sheet if named.kind == "score" else None
    if named.kind == "score" and named.sheet is None:
        add(1, "unknown-rater", named.problem or "file name names no known rater")
    primary, main = plan.primary_pass.id, plan.main_round.id
    ident = _Identity(name_sheet or SheetId("", primary, main), name_sheet is not None)
    if text is None:
        return ident, 1
    fm = _split_front_matter(text)
    if not fm.present:
        if named.kind != "score":
            add(1, "unknown-rater", "the file name does not identify a rater and there is no front matter")
        return ident, 1
    if not fm.closed:
        add(
            1,
            "front-matter-invalid",
            "front matter opened with `---` on line 1 is never closed by a `---` line",
        )
        return ident, 1
    from aoven_git.yamlio import YamlError, load_yaml

    try:
        simple = simple_yaml(fm.yaml_text, line_offset=1)
        value, lines = simple if simple is not None else load_yaml(fm.yaml_text, line_offset=1)
    except YamlError as exc:
        add(exc.line or 1, "front-matter-invalid", f"front matter: {exc.message}")
        return ident, fm.body_line
    if value is None:
        value = {}
    if not isinstance(value, dict):
        add(2, "front-matter-invalid", "front matter must be a mapping of keys (rater:, pass:, round:, …)")
        return ident, fm.body_line
    found: dict[str, str] = {}
    for key, val in value.items():
        line = lines.get(key, 2)
        if key not in FRONT_MATTER_KEYS:
            add(
                line,
                "front-matter-unknown-key",
                f"unknown front matter key {key!r} (known: {', '.join(FRONT_MATTER_KEYS)})",
                "warning",
            )
            continue
        if key == "plan_version":
            if isinstance(val, bool) or not isinstance(val, int):
                add(line, "front-matter-invalid", f"plan_version must be a whole number, not {val!r}")
            else:
                ident.plan_version = val
                if val != plan.version:
                    add(
                        line,
                        "plan-version-mismatch",
                        f"scores were made under plan version {val}, the plan is version {plan.version}; "
                        "scores made under another rubric are not compared",
                    )
            continue
        if isinstance(val, bool) or val is None or isinstance(val, (dict, list, float)):
            add(line, "front-matter-invalid", f"{key} must be an id (text), not {val!r}")
            continue
        found[key] = str(val)
    if "nonce" in found:
        ident.nonce = found.pop("nonce")
    if name_sheet is not None:
        expected = {"rater": name_sheet.rater, "pass": name_sheet.pass_id, "round": name_sheet.round_id}
        report_name_mismatches(path, found, expected, lines, add)
    elif named.kind != "score":
        # not named like a score file (an explicit path): front matter alone identifies it
        rater, pass_id, round_id = found.get("rater"), found.get("pass", primary), found.get("round", main)
        known = bool(rater and plan.rater(rater) and plan.pass_(pass_id) and plan.round_(round_id))
        if not known:
            add(
                lines.get("rater", 2),
                "unknown-rater",
                f"front matter does not name a known rater/pass/round ({rater}/{pass_id}/{round_id})",
            )
        ident.sheet = SheetId(rater or "", pass_id, round_id)
        ident.known = known
    return ident, fm.body_line


# --------------------------------------------------------------------------- entry point


def _finding_adder(path: str, findings: list[Finding]) -> Any:
    def add(line: int | None, code: str, message: str, severity: str = "error") -> None:
        findings.append(Finding(path, line, code, message, severity))  # type: ignore[arg-type]

    return add


def _sheet(
    path: str, ident: _Identity, layout: str, cells: tuple[Cell, ...], findings: list[Finding]
) -> ScoreSheet:
    ordered = tuple(sorted(findings, key=lambda f: (f.line or 0, f.severity != "error", f.code)))
    return ScoreSheet(path, ident.sheet, layout, cells, ident.nonce, ident.plan_version, ordered)


_IDS_CACHE: dict[int, tuple[Plan, _Ids]] = {}


def _ids_for(plan: Plan) -> _Ids:
    cached = _IDS_CACHE.get(id(plan))
    if cached is not None and cached[0] is plan:
        return cached[1]
    ids = _Ids(plan)
    _IDS_CACHE.clear()
    _IDS_CACHE[id(plan)] = (plan, ids)
    return ids


def parse_score_file(plan: Plan, path: str, data: bytes, *, is_symlink: bool = False) -> ScoreSheet:
    """Parse and check one score file. `path` is repository-relative (posix); never raises for
    bad content: every problem is a finding on the returned sheet."""
    findings: list[Finding] = []
    add = _finding_adder(path, findings)
    if is_symlink:
        add(
            1,
            "symlink",
            "score files must be regular files, not symbolic links "
            "(a link could point anywhere, including at another rater's scores)",
        )
        ident, _ = _identity(plan, path, None, add)
        return _sheet(path, ident, "none", (), findings)
    if len(data) > MAX_BYTES:
        add(
            1,
            "file-too-large",
            f"file is {len(data)} bytes; score files are limited to {MAX_BYTES} bytes (1 MiB)",
        )
        ident, _ = _identity(plan, path, None, add)
        return _sheet(path, ident, "none", (), findings)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        add(
            line,
            "not-utf8",
            f"not valid UTF-8 (first bad byte at offset {exc.start}); save the file as UTF-8",
        )
        ident, _ = _identity(plan, path, None, add)
        return _sheet(path, ident, "none", (), findings)

    ident, body_line = _identity(plan, path, text, add)
    # Blank out the front matter rather than cutting it, so token lines are file lines.
    body = text
    if body_line > 1:
        head, sep, rest = _split_lines_at(text, body_line - 1)
        body = "\n" * head.count("\n") + rest if sep else text
    elif text.startswith("\ufeff"):
        body = text[1:]
    ids = _ids_for(plan)
    tables = _tables(body, ids, add)
    parsed = _cells(tables, ids, add)
    layouts = set(parsed.layouts)
    layout = "none" if not layouts else (layouts.pop() if len(layouts) == 1 else "mixed")
    if parsed.first_table is None:
        add(
            1,
            "no-score-table",
            "no score table found: expected a table with a header like `| Q | Cond | D1 | … |`, "
            "`| Question | Condition | Dimension | Score |` or `| Dim | Score |` under "
            "question/condition headings",
        )
        return _sheet(path, ident, layout, (), findings)

    doc: dict[str, Any] = {
        "rater": ident.sheet.rater,
        "pass": ident.sheet.pass_id,
        "round": ident.sheet.round_id,
    }
    if ident.nonce is not None:
        doc["nonce"] = ident.nonce
    if ident.plan_version is not None:
        doc["plan_version"] = ident.plan_version
    doc["cells"] = [
        {
            "question": r.key.question,
            "condition": r.key.condition,
            "dimension": r.key.dimension,
            "score": r.score,
            "line": r.line,
            "transitions": list(r.transitions),
            "citation": r.citation,
        }
        for r in parsed.cells
    ]
    scale = plan.scale
    bad = _schema_check(doc, parsed.cells, add, ident.known, f"{scale.min}–{scale.max}")

    cells = _semantic(plan, ident, parsed, bad, ids, add)
    return _sheet(path, ident, layout, cells, findings)


_CELL_KEYS = frozenset(("question", "condition", "dimension", "score", "line", "transitions", "citation"))


def cell_conforms(cell: dict[str, Any]) -> bool:
    """Fast equivalent of validating one cell against `$defs/cell` of the scores schema.

    jsonschema costs ~0.2 ms per cell, which made `validate` on a study of 100 files take
    seconds; this check accepts only cells the schema accepts (it may reject more: exact types
    are required), and the schema itself is consulted for every cell it rejects, so messages
    still come from the schema. A property test keeps the two in agreement.
    """
    if cell.keys() != _CELL_KEYS:
        return False
    q, c, d, line, trans = (
        cell["question"],
        cell["condition"],
        cell["dimension"],
        cell["line"],
        cell["transitions"],
    )
    if type(q) is not str or type(c) is not str or type(d) is not str or not (q and c and d):
        return False
    if (
        type(cell["score"]) is not int
        or type(line) is not int
        or line < 1
        or type(cell["citation"]) is not str
    ):
        return False
    if type(trans) is not list:
        return False
    return not trans or (all(type(t) is int and t >= 1 for t in trans) and len(set(trans)) == len(trans))


def _schema_check(doc: dict[str, Any], raws: list[_Raw], add: Any, report_top: bool, scale: str) -> set[int]:
    """Validate the normalised document; returns the indexes of the cells the schema rejects.

    The sheet fields are validated as a whole; cells are validated one by one (see
    `cell_conforms`), so an error's cell index maps straight back to its Markdown line.
    """
    from aoven_git import schemas

    validator = schemas.validator("scores")
    head = {k: v for k, v in doc.items() if k != "cells"}
    if report_top:
        for err in validator.iter_errors({**head, "cells": []}):
            where = "/".join(str(p) for p in err.absolute_path) or "document"
            add(1, "front-matter-invalid", f"{where}: {err.message}")
    bad: set[int] = set()
    for index, cell in enumerate(doc["cells"]):
        if cell_conforms(cell):
            continue
        raw = raws[index]
        for err in validator.iter_errors({**head, "cells": [cell]}):
            path = list(err.absolute_path)
            if path[:1] != ["cells"]:
                continue
            bad.add(index)
            if path[2:3] == ["score"]:
                add(
                    raw.line,
                    "score-not-integer",
                    f"{raw.key}: score {raw.score!r} is not a whole number on the scale {scale}",
                )
            elif path[2:3] == ["transitions"]:
                add(raw.line, "wrong-transition", f"{raw.key}: transitions: {err.message}")
            else:
                add(raw.line, "invalid-cell", f"{raw.key}: {'/'.join(map(str, path[2:]))}: {err.message}")
    return bad


def _split_lines_at(text: str, count: int) -> tuple[str, bool, str]:
    """Split after `count` lines: (head, whether there were that many, rest)."""
    pos = 0
    for _ in range(count):
        nl = text.find("\n", pos)
        if nl == -1:
            return text, False, ""
        pos = nl + 1
    return text[:pos], True, text[pos:]


def _check_transitions(plan: Plan, raw: _Raw, covers: set[int], ids: _Ids, add: Any) -> None:
    key = raw.key
    for t in raw.transitions:
        if t not in ids.transitions:
            add(raw.line, "wrong-transition", f"{key}: #{t} is not a transition of the plan")
        elif t not in covers:
            owner = next((d.id for d in plan.dimensions if t in d.transitions), None)
            listed = ", ".join(f"#{x}" for x in sorted(covers))
            add(
                raw.line,
                "wrong-transition",
                f"{key}: #{t} is not covered by {key.dimension}"
                + (f" (it belongs to {owner})" if owner else "")
                + (f"; {key.dimension} covers {listed}" if covers else ""),
            )


def _semantic(
    plan: Plan, ident: _Identity, parsed: _Parsed, bad: set[int], ids: _Ids, add: Any
) -> tuple[Cell, ...]:
    expected, expected_set = (
        ids.expected(ident.sheet.pass_id, ident.sheet.round_id) if ident.known else ((), frozenset())
    )
    scale = plan.scale
    require = plan.rules.require_annotations
    cells: list[Cell] = []
    covered: set[tuple[str, str, str]] = set()
    dims = {d.id: d for d in plan.dimensions}
    known = ident.known
    lo, hi = scale.min, scale.max
    for index, raw in enumerate(parsed.cells):
        key = raw.key
        covered.add(raw.k)
        if index in bad:
            continue
        if known and raw.k not in expected_set:
            add(
                raw.line,
                "cell-not-in-pass",
                f"{key} is not scored in pass {ident.sheet.pass_id}, round {ident.sheet.round_id}",
            )
            continue
        score = raw.score
        assert isinstance(score, int)
        if not lo <= score <= hi:
            add(raw.line, "score-off-scale", f"{key}: score {score} is outside the scale {lo}–{hi}")
            continue
        dim = dims[key.dimension]
        covers = ids.covers[key.dimension]
        if raw.transitions:
            _check_transitions(plan, raw, covers, ids, add)
        if dim.annotate and score > lo and not covers.intersection(raw.transitions):
            add(
                raw.line,
                "missing-annotation",
                f"{key}: score {score} must name the transition behind it "
                f"({' or '.join(f'#{x}' for x in dim.transitions)}), e.g. `{score} #{dim.transitions[0]}` "
                "or in the Transition column",
                "error" if require else "warning",
            )
        trans = raw.transitions if len(raw.transitions) < 2 else tuple(sorted(raw.transitions))
        cells.append(Cell(key, score, raw.line, trans, raw.citation))
    if ident.known:
        missing: dict[tuple[str, str], list[str]] = {}
        for key in expected:
            if (key.question, key.condition, key.dimension) not in covered:
                missing.setdefault(key.item, []).append(key.dimension)
        default_line = parsed.first_table or 1
        for (q, c), dims in missing.items():
            p = plan.pass_(ident.sheet.pass_id)
            what = "any dimension" if p is not None and len(dims) == len(p.dimensions) else ", ".join(dims)
            add(parsed.item_lines.get((q, c), default_line), "missing-cell", f"{q}/{c}: no score for {what}")
    return tuple(cells)
