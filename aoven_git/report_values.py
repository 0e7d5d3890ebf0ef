"""How a value enters the report document (schema `aoven-git/report/1`, docs/report.md): numbers at
full precision beside their exact `"p/q"` strings, a rule of the verdict as an entry, and the
words for what is withheld. Shared by the seed's document (analysis.py) and a design's
(design_report.py)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from aoven_git.verdict_rules import RuleResult

WITHHELD = "withheld while the verdict is NOT-READY"
NO_MEANS = "a labelled scale has no means"


def full(x: Fraction | float | int | None) -> float | None:
    """A number at full precision (the correctly rounded float of an exact value)."""
    return None if x is None else float(x)


def exact_str(x: Fraction | None) -> str | None:
    """An exact value as the `"p/q"` string the document carries next to its float."""
    return None if x is None else str(x)


def rule_entry(r: RuleResult) -> dict[str, Any]:
    return {
        "id": r.id,
        "kind": r.kind,
        "text": r.text,
        "value": full(r.value),
        "value_exact": exact_str(r.value),
        "threshold": full(r.threshold),
        "threshold_exact": exact_str(r.threshold),
        "outcome": r.outcome,
        "reason": r.reason,
    }
