"""Reconciliation versions read from the version before them (`aoven_git/statement_history.py`)
give exactly the statements of a full parse: random edit sequences over rows, with lines that
must send a version back to the full parse (a paragraph, a blank line, an escaped pipe, an
indented row, a cell too many, a changed header or front matter)."""

from __future__ import annotations

import hashlib
import random

import pytest

from aoven_git.attribution import statements
from aoven_git.plan import parse_plan
from aoven_git.reconciliation import parse_reconciliation
from aoven_git.statement_history import StatementHistory
from tests.sealing.conftest import PLAN

PATH = "study/reconciliation.md"
CELLS = [f"Q{q}/{c}/D{d}" for q in (1, 2) for c in "AB" for d in (1, 2)] + ["Q9/A/D1", "nonsense"]
RATERS = ["cto", "logician", "redteam", "nobody"]
ODD = ["a paragraph line", "", "| Q1/A/D1 | cto | a \\| piped | 2 |", "   | Q1/B/D1 | cto | indented | 1 |",
       "| Q1/A/D2 | cto | one | 2 | extra |", "| Q2/A/D1 | logician | `code | span` | 1 |",
       "| Q2/B/D2 | cto | *emphasis* and [link](x) | contested |", "<div>", "> quote", "| Q1/A/D1 | cto |",
       "|---|---|---|---|", "| Cell | Rater | Justification | Consensus |",
       "| Q1/B/D2 | cto | tab\there | 1 |  ",
       "|<!-- | cto | x | 1 |", "| Q1/A/D1 | cto | **bold** | 3 |", "|||||||", "| q1/a/d1 | CTO | case | 2 |",
       "| Q2/A/D2 | cto | nul \x00 byte | 1 |"]
HEADER = ["---", "pass: unblinded", "---", "", "# Reconciliation", "",
          "| Cell | Rater | Justification | Consensus |", "|---|---|---|---|"]


def row(rng: random.Random) -> str:
    consensus = rng.choice(["0", "1", "2", "3", "7", "contested", "", "x"])
    return f"| {rng.choice(CELLS)} | {rng.choice(RATERS)} | said {rng.randint(0, 5)} | {consensus} |"


def edit(lines: list[str], rng: random.Random) -> list[str]:
    """One random edit: mostly rows added, re-worded or removed; sometimes an odd line anywhere."""
    out = list(lines)
    k = rng.random()
    body = range(len(HEADER), len(out) + 1)
    if k < 0.4:
        out.insert(rng.choice(body), row(rng))
    elif k < 0.6 and len(out) > len(HEADER):
        out[rng.randrange(len(HEADER), len(out))] = row(rng)
    elif k < 0.75 and len(out) > len(HEADER):
        del out[rng.randrange(len(HEADER), len(out))]
    elif k < 0.95:  # an odd line removed again (the file may become readable row by row again)
        odd = [i for i, line in enumerate(out) if i >= len(HEADER) and line in ODD]
        if odd:
            del out[rng.choice(odd)]
    elif k < 0.98:
        out.insert(rng.choice(body), rng.choice(ODD))
    elif len(out) > len(HEADER):
        out[rng.randrange(len(HEADER), len(out))] = rng.choice([*ODD, row(rng)])
    return out


@pytest.mark.parametrize("seed", range(6))
def test_every_version_reads_as_a_full_parse(seed: int) -> None:
    plan = parse_plan(PLAN.encode())
    rng = random.Random(seed)
    reader = StatementHistory(plan, PATH)
    lines = HEADER + [row(rng) for _ in range(4)]
    parent = None
    for _ in range(120):
        lines = edit(lines, rng) if parent is not None else lines
        data = ("\n".join(lines) + "\n").encode()
        blob = hashlib.sha1(data).hexdigest()
        assert reader.read(blob, data, parent) == statements(parse_reconciliation(plan, PATH, data)), lines
        parent = blob
    assert reader.full_parses < 60  # most versions were read from the one before


def test_a_row_appended_per_commit_is_parsed_in_full_once() -> None:
    """500 versions, one row more each: one full parse, every other version from its parent."""
    plan = parse_plan(PLAN.encode())
    reader = StatementHistory(plan, PATH)
    lines = list(HEADER)
    parent = None
    for k in range(500):
        lines.append(f"| {CELLS[k % 8]} | {RATERS[k % 3]} | version {k} | {k % 4} |")
        data = ("\n".join(lines) + "\n").encode()
        blob = hashlib.sha1(data).hexdigest()
        found = reader.read(blob, data, parent)
        parent = blob
    assert reader.full_parses == 1
    assert found == statements(parse_reconciliation(plan, PATH, data))


@pytest.mark.parametrize("head", [
    ["---", "pass: unblinded", "round: main", "---", "", "# Reconciliation", ""],
    ["# Reconciliation", ""],
    ["| Rater | Cell | Justification | Consensus |", "|---|---|---|---|"],
    ["| Cell | Rater | Consensus |", "|---|---|---|"],
])
def test_a_changed_front_matter_or_header_is_parsed_in_full(head: list[str]) -> None:
    """A version whose change reaches above the table's rows is not read from its parent."""
    plan = parse_plan(PLAN.encode())
    reader = StatementHistory(plan, PATH)
    rows = ["| Q1/A/D1 | cto | first | 1 |", "| Q1/A/D1 | logician | second | 2 |"]
    reader.read("a", ("\n".join([*HEADER, *rows]) + "\n").encode(), None)
    if not head[0].startswith("|"):
        head = [*head, *HEADER[-2:]]
    after = ("\n".join([*head, *rows]) + "\n").encode()
    assert reader.read("b", after, "a") == statements(parse_reconciliation(plan, PATH, after))
    assert reader.full_parses == 2
