"""Quote matching for reconciliation justifications and score citations (docs/score-files.md,
"Quotes").

A justification has to point at words that are really in the response, otherwise a rater can
defend a score with a paraphrase. Raters copy text through editors that curl quotes, turn
hyphens into dashes, re-wrap lines and drop Markdown emphasis, so those differences are
normalised away; case and wording are not, because a changed word is a different claim.

`ResponseTexts` is the one place both quote checks (score-file citations, reconciliation
justifications) get response texts from and ask where a quote is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from aoven_git.markers import strip_text
from aoven_git.model import Pass, Plan, Round

__all__ = [
    "QuoteCheck",
    "ResponseTexts",
    "extract_quotes",
    "find_quote",
    "has_quote",
    "normalise",
    "quote_in",
    "shorten",
]

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
_OPENERS = ('"', "“", "„", "«")


def normalise(text: str) -> str:
    """Canonical form for matching: not case-folded, no words changed.

    Besides whitespace, quotes, dashes and emphasis: Unicode NFC, `…` -> `...`,
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


def has_quote(text: str) -> bool:
    """Whether `text` holds a quote opener at all: the cheap test before `extract_quotes`."""
    return any(c in text for c in _OPENERS)


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
    """Does `quote` occur in `text`? An empty quote proves nothing and never matches.

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


def shorten(quote: str, width: int = 80) -> str:
    """A quote as a message shows it: at most `width` characters."""
    return quote if len(quote) <= width else quote[: width - 3] + "..."


@dataclass(frozen=True)
class QuoteCheck:
    """Where a quote was looked for and found: `path` is the cell's response; `missing` when that
    response does not exist (nothing was checked); `found` when the quote is in it; otherwise
    `elsewhere` lists the other responses of the pass and round that contain it."""

    path: str
    missing: bool = False
    found: bool = False
    elsewhere: tuple[str, ...] = ()


class ResponseTexts:
    """Response texts by repository path, each read at most once: from `given` (path → text,
    e.g. the git index) or else from the work tree at `root`. A stripped copy that does not exist
    yet is derived from its original exactly as `strip-markers` would write it."""

    def __init__(
        self, plan: Plan, *, root: Path | None = None, given: Mapping[str, str] | None = None
    ) -> None:
        self.plan = plan
        self.root = root
        self.given = given
        self._cache: dict[str, str | None] = {}
        self._others: dict[tuple[str, str], dict[str, str]] = {}

    @property
    def available(self) -> bool:
        """Whether there is any source of responses (else quotes cannot be checked)."""
        return self.root is not None or self.given is not None

    def get(self, path: str) -> str | None:
        if path in self._cache:
            return self._cache[path]
        text: str | None = None
        if self.given is not None:
            text = self.given.get(path)
        elif self.root is not None:
            from aoven_git.studyfile import MAX_BYTES

            try:
                with (self.root / path).open("rb") as fh:
                    text = fh.read(MAX_BYTES + 1).decode("utf-8", "replace")
            except OSError:
                text = None
        self._cache[path] = text
        return text

    def path(self, question: str, condition: str, stripped: bool, replicate: int = 0) -> str:
        response = self.plan.response_path(condition, question, stripped=stripped, replicate=replicate)
        return f"{self.plan.study_dir}/{response}"

    def text(self, question: str, condition: str, stripped: bool, replicate: int = 0) -> str | None:
        """The response a cell was scored on (the stripped copy for a stripped pass; `replicate`
        1…N in a plan with replicates)."""
        path = self.path(question, condition, stripped, replicate)
        text = self.get(path)
        if text is None and stripped:
            original = self.get(self.path(question, condition, False, replicate))
            if original is not None:
                from aoven_git.markers import strip_response

                text = strip_response(original, self.plan.markers).text
                self._cache[path] = text
        return text

    def _all(self, p: Pass, rnd: Round) -> dict[str, str]:
        found = self._others.get((p.id, rnd.id))
        if found is None:
            found = {}
            for q in rnd.questions:
                for c in p.conditions:
                    for r in self.plan.replicate_ids:
                        text = self.text(q, c, p.stripped, r)
                        if text is not None:
                            found[self.path(q, c, p.stripped, r)] = text
            self._others[(p.id, rnd.id)] = found
        return found

    def check(self, quote: str, question: str, condition: str, p: Pass, rnd: Round,
              replicate: int = 0) -> QuoteCheck:
        """Is `quote` in the response of (question, condition[, replicate]) as pass `p` saw it,
        and if not, in which other response of the pass and round? On an unstripped pass,
        markers inside the quote are allowed but not required."""
        own = self.path(question, condition, p.stripped, replicate)
        text = self.text(question, condition, p.stripped, replicate)
        if text is None:
            return QuoteCheck(own, missing=True)
        markers = () if p.stripped else self.plan.markers
        if quote_in(quote, text, markers=markers):
            return QuoteCheck(own, found=True)
        others = {k: v for k, v in self._all(p, rnd).items() if k != own}
        return QuoteCheck(own, elsewhere=tuple(find_quote(quote, others, markers=markers)))
