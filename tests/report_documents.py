"""Every report JSON a test writes is checked against schemas/report.schema.json (no NaN, every
key described there). A helper the tests that write reports call, not an autouse fixture: it
stays explicit and safe under xdist."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aoven_git.schemas import validator


def refuse_nan(constant: str) -> Any:
    raise AssertionError(f"the report JSON holds {constant}, which is not JSON")


def check_report(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """`document` if it matches the report schema (and holds no NaN), else an AssertionError
    naming each mismatch by its path."""
    text = json.dumps(document, allow_nan=False)  # raises ValueError on NaN or infinity
    problems = [f"{'/'.join(map(str, e.absolute_path)) or '(document)'}: {e.message}"
                for e in validator("report").iter_errors(json.loads(text))]
    assert not problems, "report JSON does not match schemas/report.schema.json:\n" + "\n".join(problems[:20])
    return document


def checked_report(text: str) -> dict[str, Any]:
    """The report JSON `text`, parsed (refusing NaN) and checked against the schema."""
    document: dict[str, Any] = json.loads(text, parse_constant=refuse_nan)
    check_report(document)
    return document
