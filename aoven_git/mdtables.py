"""Markdown tables and headings with their line numbers, as a Markdown viewer shows them.

Score and reconciliation files are hand-written Markdown, so what counts as a table is what a
viewer renders as one: tables inside code fences or HTML comments are not tables, `\\|` is a pipe
inside a cell, and emphasis, code marks, HTML comments and link targets are not part of a cell's
text. markdown-it (GFM table rule) decides all of that; this module only makes it fast and keeps
the lines (docs/score-files.md, "What is read").

Speed: markdown-it's table rule emits about fourteen tokens per row, which dominated the time of
large score files. `_compact_table` replaces it with a rule that emits ONE token per table (rows
as plain lists in `token.meta`), deciding where a table starts and ends exactly as the original
rule does; `tests/test_table_rule.py` holds the two to the same tables, lines and cell texts on
generated Markdown. The core `inline` rule is disabled too: a cell is parsed inline only when it
holds a character some inline rule reacts to.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Block", "Heading", "Table", "blocks", "delimited", "inline_text", "markdown", "tables"]


@dataclass(frozen=True, slots=True)
class Heading:
    line: int  # 1-based
    level: int  # 1 for `#`
    text: str  # as a viewer shows it


@dataclass(frozen=True, slots=True)
class Table:
    """A table: `line` is the header row's line, `end_line` the table's last line (header,
    delimiter or body row); cells are the text a viewer shows, body rows padded or cut to the
    header's width as markdown-it does."""

    line: int
    end_line: int
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (1-based line, cells)


Block = Heading | Table

_INLINE_SPECIAL_RE = re.compile("[" + re.escape("\\`*_[]!<&\n") + "]")


def inline_text(content: str) -> str:
    """What a reader sees of a cell or heading: emphasis, HTML and link targets gone, escapes and
    entities resolved, surrounding space stripped."""
    if _INLINE_SPECIAL_RE.search(content) is None:
        return content.strip()
    children = _inline_markdown().parseInline(content)[0].children if content else []
    parts: list[str] = []
    for child in children or ():
        if child.type in ("text", "text_special", "code_inline", "image"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts).strip()


@functools.cache
def _splitting() -> tuple[str, Any]:
    """markdown-it's trim characters and escaped split, imported once (not once per row)."""
    from markdown_it.common.utils import MD_TRIM_CHARS
    from markdown_it.rules_block.table import escapedSplit

    return MD_TRIM_CHARS, escapedSplit


def _split_row(line: str) -> list[str]:
    """Cells of a table row exactly as markdown-it's table rule splits them (`\\|` is a pipe
    inside a cell); plain `str.split` gives the same answer when there is no backslash."""
    MD_TRIM_CHARS, escapedSplit = _splitting()

    text = line.strip(MD_TRIM_CHARS)
    columns = text.split("|") if "\\" not in text else escapedSplit(text)
    if columns and columns[0] == "":
        columns.pop(0)
    if columns and columns[-1] == "":
        columns.pop()
    return [c.strip(MD_TRIM_CHARS) for c in columns]


def _compact_table(state: Any, start: int, end: int, silent: bool) -> bool:
    """markdown-it's GFM table rule, emitting one `score_table` token per table (see module doc)."""
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
        rows.append((line + 1, (cells + [""] * width)[:width]))
        line += 1
    token = state.push("score_table", "table", 0)
    token.map = [start, line]
    token.meta = {"header": header, "rows": rows}
    state.parentType = old_parent
    state.line = line
    return True


@functools.cache
def markdown() -> Any:
    """The block parser: CommonMark + the compact GFM table rule, inline parsing left out."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    md.block.ruler.at("table", _compact_table, {"alt": ["paragraph", "reference"]})
    md.disable(["inline", "text_join"])
    return md


@functools.cache
def _inline_markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _table(tok: Any) -> Table:
    header = [inline_text(c) for c in tok.meta["header"]]
    rows = [(line, _inline_row(cells)) for line, cells in tok.meta["rows"]]
    return Table(tok.map[0] + 1, tok.map[1], header, rows)


def _inline_row(cells: list[str]) -> list[str]:
    """`inline_text` of each cell; one search over the whole row first, since a row of plain
    cells (the usual score row) needs nothing but `strip` (joining cells makes no special
    character that no cell holds)."""
    if _INLINE_SPECIAL_RE.search("".join(cells)) is None:
        return [c.strip() for c in cells]
    return [inline_text(c) for c in cells]


def blocks(text: str) -> list[Block]:
    """Headings and tables of `text`, in document order."""
    tokens = markdown().parse(text)
    out: list[Block] = []
    for i, tok in enumerate(tokens):
        if tok.type == "score_table":
            out.append(_table(tok))
        elif tok.type == "heading_open":
            level = int(tok.tag[1:]) if tok.tag[1:].isdigit() else 1
            inline = tokens[i + 1] if i + 1 < len(tokens) else None
            line = tok.map[0] + 1 if tok.map else 1
            out.append(Heading(line, level, inline_text(inline.content) if inline is not None else ""))
    return out


def tables(text: str) -> list[Table]:
    """The tables of `text`, in document order."""
    return [b for b in blocks(text) if isinstance(b, Table)]


def delimited(text: str) -> list[Block]:
    """CSV or TSV rows as tables (tab-separated when any line holds a tab, else comma-separated):
    each run of consecutive lines with the same number (two or more) of fields is one table, its
    first line the header. A score table exported from a spreadsheet is then read by the very
    parser of Markdown tables (docs/sealing.md, "Violations": `stray-scores`). Never raises."""
    lines = text.splitlines()
    delimiter = "\t" if any("\t" in line for line in lines) else ","
    try:
        rows = list(csv.reader(lines, delimiter=delimiter))
    except csv.Error:  # a NUL byte, a field beyond csv's size limit: not a table we can read
        return []
    out: list[Block] = []
    start = 0
    for i in range(1, len(rows) + 1):
        if i < len(rows) and len(rows[i]) == len(rows[start]):
            continue
        if len(rows[start]) >= 2 and i - start >= 2:
            body = [(n + 1, [c.strip() for c in rows[n]]) for n in range(start + 1, i)]
            out.append(Table(start + 1, i, [c.strip() for c in rows[start]], body))
        start = i
    return out
