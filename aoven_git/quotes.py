"""Quote matching for reconciliation justifications and score citations (SPEC §4.5).

A justification has to point at words that are really in the response, otherwise a rater can
defend a score with a paraphrase. Raters copy text through editors that curl quotes, turn
hyphens into dashes, re-wrap lines and drop Markdown emphasis, so those differences are
normalised away; case and wording are not, because a changed word is a different claim.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache

from aoven_git.markers import strip_text

__all__ = ["extract_quotes", "find_quote", "normalise", "quote_in"]

_QUOTE_CHARS = str.maketrans(
    {
        "“": '"',
        "”": '"',
        "„": '"',
        "‟": '"',
        "″": '"',
        "«": '"',
        "»": '"',
        "‘": "'",
        "’": "'",
        "‚": "'",
        "‛": "'",
        "′": "'",
        "‹": "'",
        "›": "'",
        "‐": "-",
        "‑": "-",
        "‒": "-",
        "–": "-",
        "—": "-",
        "―": "-",
        "−": "-",
        "…": "...",
        "\u00ad": None,  # soft hyphen: invisible, editors insert it
    }
)
_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")
_LINK_RE = re.compile(r"!?\[([^\[\]\n]*)\]\([^()\s]*(?:\s+\"[^\"]*\")?\)")
# Structure at the start of a line, not content: block quotes, bullets, heading marks. Numbered
# items are left alone: a wrapped line may start with "2022. " and that is content.
_LINE_PREFIX_RE = re.compile(r"(?m)^[ \t]*(?:(?:>[ \t]?|[-+*][ \t]+|#{1,6}[ \t]+)[ \t]*)*")
_EMPHASIS_RE = re.compile(r"[*_`]|~~")
_DASH_RE = re.compile(r"\s*-+\s*")
_SPACE_RE = re.compile(r"\s+")
_ELLIPSIS_RE = re.compile(r"\.\.\.+")

# Opening quote -> closing quotes, preferred first (a straight quote may close a curly one, as
# happens when a justification is edited in two different editors).
_PAIRS = {'"': '"”', "“": '”"', "„": "“”", "«": "»", "”": "”"}


def normalise(text: str) -> str:
    """Canonical form for matching: not case-folded, no words changed.

    Besides the SPEC's whitespace, quotes, dashes and emphasis: Unicode NFC, `…` -> `...`,
    backslash escapes and inline links (`[text](url)` -> `text`) resolved, line-start block-quote
    / bullet / heading marks removed (a quote may span a wrapped line of a list or block quote), and
    the spaces around a dash dropped (`a — b` and `a-b` are the same quote).
    """
    s = _LINE_PREFIX_RE.sub("", unicodedata.normalize("NFC", text))  # before dashes become `-`
    s = s.translate(_QUOTE_CHARS)
    s = _ESCAPE_RE.sub(r"\1", s)
    s = _LINK_RE.sub(r"\1", s)
    s = _EMPHASIS_RE.sub("", s)
    s = _DASH_RE.sub("-", s)
    return _SPACE_RE.sub(" ", s).strip()


def extract_quotes(justification: str) -> list[str]:
    """Phrases between `"…"`, `“…”`, `„…“` or `«…»`, in order; empty ones are skipped.

    Single quotes are not delimiters: they are apostrophes far more often than quotes.
    """
    out: list[str] = []
    i = 0
    n = len(justification)
    while i < n:
        c = justification[i]
        closers = _PAIRS.get(c)
        if closers is None:
            i += 1
            continue
        end = -1
        for closer in closers:
            end = justification.find(closer, i + 1)
            if end != -1:
                break
        if end == -1:
            i += 1
            continue
        phrase = justification[i + 1 : end].strip()
        if phrase:
            out.append(phrase)
        i = end + 1
    return out


@lru_cache(maxsize=512)
def _normalised(text: str) -> str:
    return normalise(text)


@lru_cache(maxsize=512)
def _stripped(text: str, markers: tuple[str, ...]) -> str:
    return normalise(strip_text(text, markers).text)


def _fragments(normalised_quote: str) -> list[str]:
    return [f.strip() for f in _ELLIPSIS_RE.split(normalised_quote) if f.strip()]


def _occurs_in_order(fragments: Sequence[str], haystack: str) -> bool:
    # Earliest match of each fragment leaves the most room for the rest, so greedy is exact.
    pos = 0
    for fragment in fragments:
        at = haystack.find(fragment, pos)
        if at == -1:
            return False
        pos = at + len(fragment)
    return True


def quote_in(quote: str, text: str, *, markers: Sequence[str] = ()) -> bool:
    """Does `quote` occur in `text` (SPEC §4.5)? An empty quote proves nothing and never matches.

    With `markers` (an unstripped pass) a quote may keep or drop the marker tokens of the
    response: it is tried as written against the text, and with markers stripped from both.
    """
    fragments = _fragments(normalise(quote))
    if not fragments:
        return False
    if _occurs_in_order(fragments, _normalised(text)):
        return True
    if not markers:
        return False
    key = tuple(markers)
    stripped_text = _stripped(text, key)
    if _occurs_in_order(fragments, stripped_text):
        return True
    stripped_fragments = _fragments(normalise(strip_text(quote, key).text))
    return bool(stripped_fragments) and _occurs_in_order(stripped_fragments, stripped_text)


def find_quote(quote: str, texts: Mapping[str, str], *, markers: Sequence[str] = ()) -> list[str]:
    """Keys of `texts` (e.g. response paths) whose text contains the quote, in mapping order.

    Lets a caller tell "not found anywhere" from "found, but in another response".
    """
    return [key for key, text in texts.items() if quote_in(quote, text, markers=markers)]
