"""Exact numbers of the plan: thresholds and bounds read as fractions, and written back in
messages without rounding (docs/plan.md: "Numbers are read exactly")."""

from __future__ import annotations

from fractions import Fraction
from typing import Any


def to_fraction(value: Any) -> Fraction:
    """Thresholds are compared exactly: 0.2 in YAML means 1/5, "5/8" means 5/8."""
    if isinstance(value, str):
        return Fraction(value.replace(" ", ""))
    if isinstance(value, float):
        return Fraction(repr(value))
    return Fraction(value)


def fraction_text(value: Fraction | int) -> str:
    """The inverse of `to_fraction` for messages: exact decimals as decimals (1/5 → "0.2"),
    anything else as a fraction ("2/3"), never a rounded float."""
    value = Fraction(value)
    d = value.denominator
    twos = fives = 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(twos, fives)
    if places == 0:
        return str(value.numerator)
    scaled = value.numerator * 10**places // value.denominator
    sign = "-" if scaled < 0 else ""
    digits = str(abs(scaled)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"
