"""The compact table rule must see exactly the tables markdown-it's own GFM rule sees.

mdtables replaces markdown-it's table rule by one that emits a single token per table (the
per-cell tokens dominated the time of large score files). This differential test holds it to
the original on generated Markdown: same tables, same lines, same cell texts.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from aoven_git.mdtables import markdown as _markdown


def reference_tables(text: str) -> list[tuple[int, list[str], list[tuple[int, list[str]]]]]:
    md = MarkdownIt("commonmark").enable("table")
    md.disable(["inline", "text_join"])
    out: list[Any] = []
    current: list[str] | None = None
    header: list[str] = []
    rows: list[tuple[int, list[str]]] = []
    start = row_line = 0
    in_head = False
    for tok in md.parse(text):
        if tok.type == "table_open":
            start, header, rows = tok.map[0] + 1, [], []
        elif tok.type == "thead_open":
            in_head = True
        elif tok.type == "thead_close":
            in_head = False
        elif tok.type == "tr_open":
            current, row_line = [], tok.map[0] + 1
        elif tok.type == "tr_close" and current is not None:
            if in_head:
                header = current
            else:
                rows.append((row_line, current))
            current = None
        elif tok.type == "inline" and current is not None:
            current.append(tok.content)
        elif tok.type == "table_close":
            out.append((start, header, rows))
    return out


def compact_tables(text: str) -> list[tuple[int, list[str], list[tuple[int, list[str]]]]]:
    return [
        (tok.map[0] + 1, tok.meta["header"], tok.meta["rows"])
        for tok in _markdown().parse(text)
        if tok.type == "score_table"
    ]


LINES = st.sampled_from([
    "| Q | Cond | D1 |", "|---|---|---|", "|:-:|--:|", "| Q1 | A | 2 |", "| Q1 \\| x | B | 3 |",
    "Q2 | B | 1", "| only |", "", "   ", "text", "> | quoted | row |", "- | list | row |", "```",
    "    | indented | code |", "# Heading", "<!-- | c | -->", "| a | b | c | d |", "|-|-|", "||",
    "| \\| | \\\\| |", "---", "1. item", "| ` | ` | x |",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, min_size=0, max_size=25))
def test_compact_rule_matches_markdown_it(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    assert compact_tables(text) == reference_tables(text)


def test_score_table_example() -> None:
    text = "intro\n\n| Q | Cond |\n|---|---|\n| Q1 | A |\n| Q2 \\| x | B\n\nafter\n"
    assert compact_tables(text) == reference_tables(text) == [
        (3, ["Q", "Cond"], [(5, ["Q1", "A"]), (6, ["Q2 | x", "B"])])
    ]
