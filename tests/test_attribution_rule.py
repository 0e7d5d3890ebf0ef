"""The one attribution rule (`attribution.written`, docs/sealing.md "Attributed consensus"), pure:
which (cell, rater) statements a commit writes, given its parents' versions of the file. The hook,
`validate` and verify-seal all decide with it; these cases pin it without git."""

from __future__ import annotations

from aoven_git.attribution import Version, written

CTO = ("Q1/A/D1", "cto")
LOG = ("Q1/A/D1", "logician")


def v(*rows: tuple[tuple[str, str], tuple[str, object]]) -> Version:
    return Version(9, (), "lead@example.org", dict(rows))


def test_a_merge_keeping_both_sides_rows_writes_nothing() -> None:
    cto, log = (CTO, ('says "x"', 2)), (LOG, ('says "y"', 2))
    assert written(v(cto, log), [v(cto), v(log)]) == []


def test_a_row_retyped_in_a_merge_is_written_by_it() -> None:
    cto, log = (CTO, ('says "x"', 2)), (LOG, ('says "y"', 2))
    retyped = (LOG, ('says "y"', 3))
    assert written(v(cto, retyped), [v(cto), v(log)]) == [LOG]


def test_a_plain_commit_writes_what_differs_from_its_parent() -> None:
    cto = (CTO, ('says "x"', 2))
    assert written(v(cto), [v()]) == [CTO]
    assert written(v(cto), [v(cto)]) == []
    assert written(v(), [v(cto)]) == [CTO]  # removing a row writes it (as nothing)


def test_a_root_commit_writes_every_row() -> None:
    assert written(v((CTO, ("a", 1)), (LOG, ("b", 1))), []) == [CTO, LOG]
