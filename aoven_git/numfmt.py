"""Numbers as people read them: the one place where rounding happens.

Every human format of the report (the verdict's reason sentences, Markdown, HTML, SVG labels)
formats its numbers here; the JSON document never rounds (docs/statistics.md, "Numbers in the
report"). Rounding starts from the exact value whenever one exists: a ``"p/q"`` string, a
:class:`~fractions.Fraction`, or else the shortest decimal that reads back as the float. It rounds
half up, so a value sitting on a rounding boundary (5/16 = 31.25 %) prints the same in every
format, and it never prints ``-0``.

Two styles exist, because they answer different questions:

* *table* formats (:func:`fixed`, :func:`mean`, :func:`kappa`, :func:`percent`, :func:`interval`)
  use a fixed number of decimals so that columns line up;
* *sentence* formats (:func:`brief`, :func:`brief_percent` and their ``_near`` variants) drop
  trailing zeros ("0.6", "20%") and, next to a threshold, add digits until a value that differs
  from the threshold no longer prints equal to it.

No numpy here: the verdict (and so the pre-commit hook's import graph) must stay numpy-free.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from typing import Any

DASH = "—"
#: Decimals of the sentence formats (numbers, percentages) before the "near a threshold" rule.
BRIEF_PLACES = 4
BRIEF_PERCENT_PLACES = 2


def to_fraction(value: Any, exact: Any = None) -> Fraction | None:
    """The best exact value available: the ``"p/q"`` string if it parses, else the number itself.

    A float becomes the fraction of its shortest repr (0.1 → 1/10, not the binary expansion).
    Booleans, NaN, infinities and anything that is not a number give ``None``.
    """
    if isinstance(exact, str) and exact.strip():
        try:
            return Fraction(exact.strip())
        except (ValueError, ZeroDivisionError):
            pass
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        return Fraction(repr(value)) if math.isfinite(value) else None
    return Fraction(value)


def finite(value: Any) -> float | None:
    """``value`` as a float if it is a finite real number (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def decimal(q: Fraction, places: int) -> str:
    """``q`` with exactly ``places`` decimals, rounded half up; never ``-0.00``."""
    with localcontext() as ctx:
        ctx.prec = 80
        d = Decimal(q.numerator) / Decimal(q.denominator)
        text = str(d.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]
    return text


def _strip(text: str) -> str:
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


# --------------------------------------------------------------------------- table formats


def fixed(value: Any, exact: Any = None, places: int = 2, *, signed: bool = False) -> str:
    """A table number with ``places`` decimals (``+`` on request for a positive one); — if missing."""
    q = to_fraction(value, exact)
    if q is None:
        return DASH
    text = decimal(q, places)
    if signed and not text.startswith("-") and text.strip("0.") != "":
        text = "+" + text
    return text


def mean(value: Any, exact: Any = None, *, signed: bool = False) -> str:
    """Means, deltas, aggregates and cell values: two decimals."""
    return fixed(value, exact, 2, signed=signed)


def kappa(value: Any, reason: Any = None) -> str:
    """κ or α with three decimals; a missing one is ``undefined (reason)``, never NaN or None."""
    q = to_fraction(value)
    if q is None:
        why = str(reason).strip() if reason not in (None, "") else "no reason given"
        return f"undefined ({why})"
    return decimal(q, 3)


def percent(value: Any, exact: Any = None) -> str:
    """A share as a percentage with one decimal (``0.3125`` → ``31.3%``); ``undefined`` if missing."""
    q = to_fraction(value, exact)
    if q is None:
        return "undefined"
    return decimal(q * 100, 1) + "%"


def interval(bounds: Any) -> str:
    """``[lo, hi]`` with three decimals, or an empty string when there is no interval."""
    if not isinstance(bounds, Sequence) or isinstance(bounds, str) or len(bounds) != 2:
        return ""
    lo, hi = (to_fraction(v) for v in bounds)
    if lo is None or hi is None:
        return ""
    return f"[{decimal(lo, 3)}, {decimal(hi, 3)}]"


def exact_suffix(shown: Fraction | None, exact: Any) -> str:
    """`` (p/q)`` when the decimal shown is not the exact value, so auditors see what was compared."""
    if not isinstance(exact, str) or shown is None:
        return ""
    q = to_fraction(None, exact)
    if q is None or q == shown:
        return ""
    return f" ({exact.strip()})"


def shown_fixed(q: Fraction, places: int) -> Fraction:
    """The value a reader sees after :func:`fixed` rounds ``q`` (to compare with the exact one)."""
    return Fraction(Decimal(decimal(q, places)))


def coordinate(x: float) -> str:
    """An SVG coordinate: one decimal, no trailing zeros, so charts stay small and byte-stable."""
    return _strip(f"{x:.1f}")


# --------------------------------------------------------------------------- sentence formats


def brief(x: Fraction | int | float) -> str:
    """A number in a sentence: at most four decimals, no trailing zeros (``3/5`` → ``0.6``)."""
    q = to_fraction(x)
    if q is None:
        return "undefined"
    return _strip(decimal(q, BRIEF_PLACES))


def brief_signed(x: Fraction | int | float) -> str:
    text = brief(x)
    return "+" + text if (to_fraction(x) or 0) > 0 and text != "0" else text


def brief_percent(x: Fraction | int | float) -> str:
    """A share in a sentence: at most two decimals of a percent (``31/160`` → ``19.38%``)."""
    q = to_fraction(x)
    if q is None:
        return "undefined"
    return _strip(decimal(q * 100, BRIEF_PERCENT_PLACES)) + "%"


def _near(value: Fraction, threshold: Fraction, scale: int, places: int) -> str:
    digits = places
    text = _strip(decimal(value * scale, digits))
    limit = _strip(decimal(threshold * scale, places))
    while value != threshold and text == limit and digits < 17:
        digits += 2
        text = _strip(decimal(value * scale, digits))
    return text


def brief_near(value: Fraction, threshold: Fraction) -> str:
    """:func:`brief`, with digits added until a value that differs from ``threshold`` stops
    printing equal to it (κ 0.5999999 is not "0.6 below 0.6")."""
    return _near(value, threshold, 1, BRIEF_PLACES)


def brief_percent_near(value: Fraction, threshold: Fraction) -> str:
    """:func:`brief_percent` with the same rule as :func:`brief_near`."""
    return _near(value, threshold, 100, BRIEF_PERCENT_PLACES) + "%"
