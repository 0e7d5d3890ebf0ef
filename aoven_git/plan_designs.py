"""The plan's design keys beyond the seed's A/B (docs/designs.md): criteria and decision rows as
the model holds them, and `to_fraction`, how every number of the plan is read exactly. Their
checks run before, with the plan's other checks (plan.py).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from aoven_git.model import Bound, Criterion, DecisionRow


def to_fraction(value: Any) -> Fraction:
    """Thresholds are compared exactly: 0.2 in YAML means 1/5, "5/8" means 5/8."""
    if isinstance(value, str):
        return Fraction(value.replace(" ", ""))
    if isinstance(value, float):
        return Fraction(repr(value))
    return Fraction(value)


BOUND_KINDS = ("within", "at_most", "below", "at_least", "above")


def criterion(c: dict[str, Any]) -> Criterion:
    """A criterion as the model holds it; its checks (one bound, known ids) ran before."""
    bound_key = next((k for k in BOUND_KINDS if k in c), None)
    bound = Bound(bound_key, to_fraction(c[bound_key])) if bound_key else None  # type: ignore[arg-type]
    require = c.get("require", "all")
    return Criterion(
        id=c["id"],
        kind=c["kind"],
        bound=bound,
        of=tuple(c.get("of", ())),
        dimensions=tuple(c.get("dimensions", ())),
        per=c.get("per", "dimension"),
        questions=tuple(c.get("questions", ())),
        label=c.get("label"),
        dimension=c.get("dimension"),
        require=None if require == "all" else int(require),
        treatment=c.get("treatment"),
        pass_id=c.get("pass"),
        gate=c.get("gate", True),
    )


def decision_row(row: dict[str, Any]) -> DecisionRow:
    if "otherwise" in row:
        return DecisionRow(row["otherwise"], (), otherwise=True)
    return DecisionRow(row["then"], tuple(row["if"]))
