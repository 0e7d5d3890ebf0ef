"""Marker grammar, counting and mechanical stripping (docs/commands.md: `strip-markers`, `markers`).

The blinded pass is only as blind as this module is thorough: any marker left behind leaks the
condition, and any other character changed could change what a rater scores. The rules here are
therefore literal: a bracket token is removed exactly when its content starts with a plan marker,
and the only other edits are the whitespace and empty-wrapper repairs documented in `strip_text`.

Everything is a pure function over strings, so a command can call it per file and tests need no I/O.
Line numbers are 1-based lines of the document as given (``\\r\\n``, ``\\r`` and ``\\n`` all end a line,
as in markdown-it).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from markdown_it import MarkdownIt

__all__ = [
    "MarkerToken",
    "StripResult",
    "UnknownToken",
    "count_markers",
    "find_tokens",
    "response_text",
    "strip_response",
    "strip_text",
]


@dataclass(frozen=True)
class UnknownToken:
    """An all-caps bracket token that looks like a marker the plan does not define (kept, reported)."""

    line: int
    token: str


@dataclass(frozen=True)
class MarkerToken:
    """One bracket token that starts with a plan marker; `markers` are the ones it counts as."""

    line: int
    column: int  # 1-based column of the opening bracket
    token: str
    markers: tuple[str, ...]


@dataclass(frozen=True)
class StripResult:
    text: str
    removed: int  # bracket tokens removed (a stacked `[HYP, CONF(low)]` is one token)
    unknown: tuple[UnknownToken, ...]


# --------------------------------------------------------------------------- grammar

_BRACKET_RE = re.compile(r"\[([^\[\]\r\n]*)\]")
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")
# Line prefixes that are structure, not content: indentation, block quotes, list bullets, ATX
# heading marks. A token right after them is "at line start".
_PREFIX_RE = re.compile(r"[ \t]*(?:(?:>[ \t]?|[-*+][ \t]+|\d{1,9}[.)][ \t]+|#{1,6}(?:[ \t]+|$))[ \t]*)*")
# A link reference definition `[label]: destination "title"` (possibly inside block quotes). It
# must be complete on its line, so `[FACT]: The sky is blue.` stays a marker followed by text.
_REFDEF_RE = re.compile(
    r"^ {0,3}(?:>[ \t]?)*[ \t]*\[([^\[\]\r\n]+)\]:[ \t]*(?:<[^<>\r\n]*>|[^\s<]\S*)"
    r"(?:[ \t]+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?[ \t]*$"
)
# The `(destination "title")` of an inline link, as CommonMark reads it (one level of nested
# parentheses in the destination). Anchored at the `(`, it fails fast on prose.
_LINK_TAIL_RE = re.compile(
    r"\([ \t]*(?:<[^<>\r\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:[ \t]+(?:\"[^\"\r\n]*\"|'[^'\r\n]*'|\([^()\r\n]*\)))?[ \t]*\)"
)
# First word of a bracket's content; an all-caps one makes the token look like a marker.
_FIRST_WORD_RE = re.compile(r"[ \t]*([^\s,;:.?!()\[\]]+)")
_CAPS_WORD_RE = re.compile(r"[A-Z][A-Z0-9_]*\Z")
# Separators a line-start marker may carry before the text it labels: `[FACT]: …`, `[FACT] — …`.
_START_TAIL_RE = re.compile(r"\s*(?:(?:[,;:/+]|[.\-–—](?=\s|$))\s*)?")
_CLOSING = frozenset(".,;:!?)]}…»”’%")
_OPENING = frozenset("([{“‘«*_~")
_WRAPPERS = {"**": "**", "__": "__", "~~": "~~", "*": "*", "_": "_", "(": ")"}
_AOVEN_LINE_RE = re.compile(r"\[Aoven\b")
_RESPONSE_HEADING_RE = re.compile(r"[\s*_]*Responses?\b", re.IGNORECASE)
_PROMPT_HEADING_RE = re.compile(r"[\s*_]*Prompt\b", re.IGNORECASE)


@dataclass(frozen=True)
class _Grammar:
    start: re.Pattern[str]  # content starts with a plan marker (word boundary after it)

    def names(self, content: str) -> tuple[str, ...]:
        """Markers a stacked token counts as: those that start a `,`/`;`-separated segment."""
        out = []
        for segment in re.split(r"[,;]", content):
            m = self.start.match(segment)
            if m:
                out.append(m.group(1))
        return tuple(out)


@lru_cache(maxsize=32)
def _grammar(markers: tuple[str, ...]) -> _Grammar | None:
    names = sorted({m for m in markers if m}, key=len, reverse=True)
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in names)
    return _Grammar(re.compile(rf"[ \t]*({alternatives})(?!\w)"))


def _split_lines(text: str) -> list[tuple[str, str]]:
    """(body, line ending) pairs; joining them gives `text` back exactly."""
    out: list[tuple[str, str]] = []
    pos = 0
    for m in _NEWLINE_RE.finditer(text):
        out.append((text[pos : m.start()], m.group()))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], ""))
    return out


def _norm_label(label: str) -> str:
    return " ".join(label.split()).casefold()


def _refdefs(lines: Sequence[tuple[str, str]]) -> frozenset[str]:
    labels = set()
    for body, _ in lines:
        m = _REFDEF_RE.match(body)
        if m:
            labels.add(_norm_label(m.group(1)))
    return frozenset(labels)


def _code_spans(s: str) -> list[tuple[int, int]]:
    """Inline code spans of one paragraph (CommonMark backtick-run matching), in O(n log n)."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", s)]
    by_len: dict[int, list[int]] = {}
    for idx, (a, b) in enumerate(runs):
        by_len.setdefault(b - a, []).append(idx)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        a, b = runs[i]
        if a > 0 and s[a - 1] == "\\":
            i += 1
            continue
        same = by_len[b - a]
        k = bisect_right(same, i)
        if k < len(same):
            j = same[k]
            spans.append((a, runs[j][1]))
            i = j + 1
        else:
            i += 1
    return spans


def _line_code_spans(lines: Sequence[tuple[str, str]]) -> list[list[tuple[int, int]]]:
    """Per line, the column ranges covered by inline code; spans never cross a blank line."""
    per_line: list[list[tuple[int, int]]] = [[] for _ in lines]
    start = 0
    while start < len(lines):
        if not lines[start][0].strip():
            start += 1
            continue
        end = start
        while end < len(lines) and lines[end][0].strip():
            end += 1
        bodies = [lines[k][0] for k in range(start, end)]
        if any("`" in b for b in bodies):
            offsets = []
            pos = 0
            for b in bodies:
                offsets.append(pos)
                pos += len(b) + 1
            joined = "\n".join(bodies)
            for a, b in _code_spans(joined):
                k = bisect_right(offsets, a) - 1
                while k < len(bodies) and offsets[k] < b:
                    lo = max(a, offsets[k]) - offsets[k]
                    hi = min(b, offsets[k] + len(bodies[k])) - offsets[k]
                    if hi > lo:
                        per_line[start + k].append((lo, hi))
                    k += 1
        start = end
    return per_line


@dataclass(frozen=True)
class _Tok:
    start: int  # column range in the line body (a leading escaping backslash included)
    end: int
    kind: Literal["marker", "unknown"]
    text: str
    names: tuple[str, ...]


def _scan_line(
    body: str, code: Sequence[tuple[int, int]], grammar: _Grammar, refdefs: frozenset[str]
) -> list[_Tok]:
    toks: list[_Tok] = []
    protected = sorted(code)
    p = 0  # first code span that may still overlap a later bracket
    prot_until = -1  # end of a link destination being skipped
    prev_end, prev_kind = -1, ""
    refdef = _REFDEF_RE.match(body)
    for m in _BRACKET_RE.finditer(body):
        s, e = m.span()
        while p < len(protected) and protected[p][1] <= s:
            p += 1
        if s < prot_until or (p < len(protected) and protected[p][0] < e):
            prev_end, prev_kind = -1, ""
            continue
        content = m.group(1)
        link = _LINK_TAIL_RE.match(body, e)
        if link:  # inline link or image: text and destination untouched
            prot_until = link.end()
            prev_end, prev_kind = -1, ""
            continue
        if refdef and m.start(1) == refdef.start(1):  # `[label]: url` definition line
            prev_end, prev_kind = e, "other"
            continue
        if prev_end == s and prev_kind == "other" and _norm_label(content) in refdefs:
            prev_end, prev_kind = e, "link"  # `[text][label]` full reference link
            continue
        if grammar.start.match(content):
            prev_end, prev_kind = e, "marker"
            start = s
            if s > 0 and body[s - 1] == "\\" and (s < 2 or body[s - 2] != "\\"):
                start = s - 1  # `\[FACT]` renders as `[FACT]`: the escape goes with it
            toks.append(_Tok(start, e, "marker", m.group(), grammar.names(content)))
            continue
        w = _FIRST_WORD_RE.match(content)
        word = w.group(1) if w else ""
        if _CAPS_WORD_RE.match(word) and sum(c.isalpha() for c in word) >= 2:
            prev_end, prev_kind = e, "unknown"
            toks.append(_Tok(s, e, "unknown", m.group(), ()))
        else:
            prev_end, prev_kind = e, "other"
    return toks


def _scan(lines: Sequence[tuple[str, str]], grammar: _Grammar, refdefs: frozenset[str]) -> list[list[_Tok]]:
    code = _line_code_spans(lines)
    return [
        _scan_line(body, code[k], grammar, refdefs) if "[" in body else []
        for k, (body, _) in enumerate(lines)
    ]


# --------------------------------------------------------------------------- repair


def _gaps(body: str, toks: Sequence[_Tok]) -> list[tuple[int, int]]:
    """Marker tokens merged into removal gaps: adjacent, or joined by whitespace, `/` or `+`."""
    gaps: list[tuple[int, int]] = []
    for t in toks:
        if t.kind != "marker":
            continue
        if gaps and re.fullmatch(r"\s*(?:[/+]\s*)?", body[gaps[-1][1] : t.start]):
            gaps[-1] = (gaps[-1][0], t.end)
        else:
            gaps.append((t.start, t.end))
    return gaps


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _ends_with(out: list[str], s: str) -> bool:
    return len(out) >= len(s) and "".join(out[-len(s):]) == s


def _trailing_ws(out: list[str]) -> int:
    k = len(out)
    while k and out[k - 1].isspace():
        k -= 1
    return len(out) - k


def _drop_empty_wrappers(out: list[str], body: str, ge: int) -> int:
    """Remove the wrappers a removed token leaves empty (`**[FACT]**`, `([HYP])`, `*[FACT]:*`):
    their opening half from `out`; returns where the text after the closing half resumes."""
    while True:
        delim = next((d for d in _WRAPPERS if _ends_with(out, d)), None)
        if delim is None:
            return ge
        mc = re.compile(r":?" + re.escape(_WRAPPERS[delim])).match(body, ge)
        if not mc:
            return ge
        if delim in ("_", "__"):  # `snake_[FACT]_case` is not emphasis
            before = out[-len(delim) - 1] if len(out) > len(delim) else ""
            after = body[mc.end(): mc.end() + 1]
            if (before and _is_word(before)) or (after and _is_word(after)):
                return ge
        del out[-len(delim):]
        ge = mc.end()


def _close_gap(out: list[str], body: str, ge: int) -> int:
    """Repair the spacing where a token ended at `ge` inside a line's content (never at its start):
    no space before punctuation or the line end, one space between words. Returns where to resume."""
    n_left_ws = _trailing_ws(out)
    content_end = len(out) - n_left_ws
    left = out[content_end - 1] if content_end else ""
    right_ws_len = len(body) - ge - len(body[ge:].lstrip()) if ge < len(body) else 0
    right = body[ge + right_ws_len: ge + right_ws_len + 1]
    quote_opens = left in "\"'" and (content_end < 2 or out[content_end - 2].isspace())
    opened = bool(left) and not n_left_ws and (left in _OPENING or quote_opens)
    if not right:  # end of line: no space before where the token was
        del out[content_end:]
        return ge
    if right in _CLOSING or (not right_ws_len and right in "*_~\"'"):
        del out[content_end:]
        return ge + right_ws_len
    if opened or (n_left_ws and right_ws_len):
        return ge + right_ws_len
    if not (n_left_ws or right_ws_len) and (_is_word(left) or left in _CLOSING) and _is_word(right):
        out.append(" ")  # `claim.[FACT]Next`: the token separated two words
    return ge


def _repair_line(body: str, gaps: Sequence[tuple[int, int]]) -> str:
    """The line without the token spans `gaps`, its spacing and punctuation repaired. `out` is a
    list of characters so that looking at and trimming its tail stays O(1) per step on lines with
    thousands of tokens."""
    prefix = _PREFIX_RE.match(body)
    prefix_text = prefix.group().rstrip() if prefix else ""
    out: list[str] = []
    i = 0
    for gs, ge in gaps:
        gs = max(gs, i)
        if ge <= i:
            continue
        out.extend(body[i:gs])
        ge = _drop_empty_wrappers(out, body, ge)
        content_end = len(out) - _trailing_ws(out)
        if content_end <= len(prefix_text) and "".join(out[: len(prefix_text)]) == prefix_text:
            # At the start of the line's content: the gap takes a label separator with it.
            i = _START_TAIL_RE.match(body, ge).end()  # type: ignore[union-attr]
            continue
        i = _close_gap(out, body, ge)
    out.extend(body[i:])
    return "".join(out)


def _content_blank(body: str) -> bool:
    m = _PREFIX_RE.match(body)
    return not body[m.end() if m else 0 :].strip()


def _strip_lines(
    lines: Sequence[tuple[str, str]],
    scanned: Sequence[Sequence[_Tok]],
    first_line: int,
    prev_blank: bool,
) -> tuple[list[str], int, list[UnknownToken]]:
    out: list[str] = []
    removed = 0
    unknown: list[UnknownToken] = []
    skip_blank = False
    last_blank = prev_blank
    for k, ((body, eol), toks) in enumerate(zip(lines, scanned, strict=True)):
        if skip_blank:
            skip_blank = False
            if not body.strip():
                continue
        unknown.extend(UnknownToken(first_line + k, t.text) for t in toks if t.kind == "unknown")
        gaps = _gaps(body, toks)
        if not gaps:
            out.append(body + eol)
            last_blank = not body.strip()
            continue
        removed += sum(1 for t in toks if t.kind == "marker")
        new = _repair_line(body, gaps)
        if _content_blank(new) and not _content_blank(body):
            # The line held only markers: drop it, and do not leave two blank lines where it was.
            skip_blank = last_blank
            continue
        out.append(new + eol)
        last_blank = not new.strip()
    return out, removed, unknown


# --------------------------------------------------------------------------- layout

_MD = MarkdownIt("commonmark").disable(["inline", "text_join"])


@dataclass(frozen=True)
class _Layout:
    lines: list[tuple[str, str]]
    kinds: list[Literal["outside", "fence", "text"]]


def _layout(document: str) -> _Layout:
    """Classify each line: outside the response part, fenced code inside it, or strippable text."""
    lines = _split_lines(document)
    n = len(lines)
    tokens = _MD.parse(document)
    fence = [False] * n
    headings: list[tuple[int, int, int, str]] = []  # (first line, end line, level, text)
    for idx, tok in enumerate(tokens):
        if tok.type in ("fence",) and tok.map:
            for k in range(tok.map[0], min(tok.map[1], n)):
                fence[k] = True
        elif tok.type == "heading_open" and tok.map and idx + 1 < len(tokens):
            headings.append((tok.map[0], tok.map[1], int(tok.tag[1:]), tokens[idx + 1].content))
    outside = [False] * n
    response = next((h for h in headings if _RESPONSE_HEADING_RE.match(h[3])), None)
    if response is not None:
        for k in range(min(response[1], n)):
            outside[k] = True
    else:
        # No response heading: the whole file, except a title heading on line 1, a `Prompt`
        # section, and the paragraph that starts with the `[Aoven …]` framing line.
        if headings and headings[0][0] == 0 and not fence[0]:
            for k in range(headings[0][0], min(headings[0][1], n)):
                outside[k] = True
        for h_index, h in enumerate(headings):
            if _PROMPT_HEADING_RE.match(h[3]):
                end = next((o[0] for o in headings[h_index + 1 :] if o[2] <= h[2]), n)
                for k in range(h[0], min(end, n)):
                    outside[k] = True
        k = 0
        while k < n:
            if not fence[k] and _AOVEN_LINE_RE.search(lines[k][0]):
                while k < n and lines[k][0].strip() and not fence[k]:
                    outside[k] = True
                    k += 1
            k += 1
    for k in range(n):  # the framing line is kept verbatim wherever it is
        if not fence[k] and _AOVEN_LINE_RE.search(lines[k][0]):
            outside[k] = True
    kinds: list[Literal["outside", "fence", "text"]] = [
        "outside" if outside[k] else "fence" if fence[k] else "text" for k in range(n)
    ]
    return _Layout(lines, kinds)


def _runs(kinds: Sequence[str]) -> list[tuple[int, int]]:
    """Maximal [start, end) ranges of "text" lines."""
    out = []
    k = 0
    while k < len(kinds):
        if kinds[k] != "text":
            k += 1
            continue
        end = k
        while end < len(kinds) and kinds[end] == "text":
            end += 1
        out.append((k, end))
        k = end
    return out


# --------------------------------------------------------------------------- public


def _strip_once(text: str, grammar: _Grammar) -> StripResult:
    lines = _split_lines(text)
    scanned = _scan(lines, grammar, _refdefs(lines))
    out, removed, unknown = _strip_lines(lines, scanned, 1, True)
    return StripResult("".join(out), removed, tuple(unknown))


def _strip_response_once(document: str, grammar: _Grammar) -> StripResult:
    layout = _layout(document)
    lines = layout.lines
    refdefs = _refdefs(lines)
    pieces = [body + eol for body, eol in lines]
    removed = 0
    unknown: list[UnknownToken] = []
    for start, end in _runs(layout.kinds):
        run = lines[start:end]
        prev_blank = start == 0 or not lines[start - 1][0].strip()
        out, n, unk = _strip_lines(run, _scan(run, grammar, refdefs), start + 1, prev_blank)
        pieces[start:end] = [*out, *([""] * (end - start - len(out)))]
        removed += n
        unknown.extend(unk)
    return StripResult("".join(pieces), removed, tuple(unknown))


def _fixed_point(text: str, grammar: _Grammar, once: Callable[[str, _Grammar], StripResult]) -> StripResult:
    """Repeat until nothing is removed, so stripping is idempotent.

    A second round only does anything on contrived input (`[FA[FACT]CT]`, or a removal that turns
    a line into a fence opener); every round that removes something shortens the text, so this ends.
    """
    first = once(text, grammar)
    result = first
    removed = first.removed
    while result.removed:
        result = once(result.text, grammar)
        removed += result.removed
    return StripResult(result.text, removed, first.unknown)


def strip_text(text: str, markers: Sequence[str]) -> StripResult:
    """Remove every marker token anywhere in `text` (inline code, links and definitions excepted).

    Repairs, and nothing else changes:
    - a token (or run of adjacent tokens, also `[A] / [B]`, `[A] + [B]`) is one gap;
    - empty wrappers around a gap go with it: `**[FACT]**`, `*[FACT]:*`, `([HYP])`;
    - at the start of a line's content (after indentation, `>`, list bullet, `#`s) the gap takes the
      following whitespace and one label separator (`:`, `,`, `;`, `/`, `+`, or `.`, `-`,
      `–`, `—` followed by a space): `- [FACT]: The sky` -> `- The sky`;
    - before the end of the line or closing punctuation (`.,;:!?)]}…»”’%`, and an adjacent closing
      `*`, `_`, `~`, `"`, `'`) the space before the gap goes: `claim [FACT].` -> `claim.`;
    - after an opening bracket, quote or emphasis the space after the gap goes;
    - between two spaces one space is kept; a gap with no space on either side between a word (or
      closing punctuation) and a word becomes one space: `claim.[FACT]Next` -> `claim. Next`;
    - a line whose content held only markers is dropped, with one of the two blank lines around
      it when both are blank; blank lines that were blank before are never touched.
    """
    grammar = _grammar(tuple(markers))
    if grammar is None or "[" not in text:
        return StripResult(text, 0, ())
    return _fixed_point(text, grammar, _strip_once)


def strip_response(document: str, markers: Sequence[str]) -> StripResult:
    """`strip_text` applied only to the response part, outside fenced code (see `response_text`)."""
    grammar = _grammar(tuple(markers))
    if grammar is None or "[" not in document:
        return StripResult(document, 0, ())
    return _fixed_point(document, grammar, _strip_response_once)


def response_text(document: str) -> str:
    """The response part: the text after the first heading starting with `Response` (any level).

    Without such a heading it is the whole file minus a title heading on line 1, a `Prompt`
    section, and the paragraph holding the `[Aoven …]` framing line. Fenced code is included here
    (raters may quote it) but never stripped or counted.
    """
    layout = _layout(document)
    return "".join(
        body + eol for (body, eol), kind in zip(layout.lines, layout.kinds, strict=True) if kind != "outside"
    )


def find_tokens(document: str, markers: Sequence[str]) -> tuple[MarkerToken, ...]:
    """Every marker token of the response part, outside fenced code and inline code, in order."""
    grammar = _grammar(tuple(markers))
    if grammar is None:
        return ()
    layout = _layout(document)
    refdefs = _refdefs(layout.lines)
    out: list[MarkerToken] = []
    for start, end in _runs(layout.kinds):
        run = layout.lines[start:end]
        for k, toks in enumerate(_scan(run, grammar, refdefs)):
            out.extend(
                MarkerToken(start + k + 1, t.start + 1, t.text, t.names) for t in toks if t.kind == "marker"
            )
    return tuple(out)


def unknown_tokens(document: str, markers: Sequence[str]) -> tuple[UnknownToken, ...]:
    """All-caps marker-like tokens of the response part that the plan does not define."""
    grammar = _grammar(tuple(markers))
    if grammar is None:
        return ()
    layout = _layout(document)
    refdefs = _refdefs(layout.lines)
    out: list[UnknownToken] = []
    for start, end in _runs(layout.kinds):
        run = layout.lines[start:end]
        for k, toks in enumerate(_scan(run, grammar, refdefs)):
            out.extend(UnknownToken(start + k + 1, t.text) for t in toks if t.kind == "unknown")
    return tuple(out)


def count_markers(document: str, markers: Sequence[str]) -> Counter[str]:
    """Uses of each marker in the response part; `[HYP, CONF(low)]` counts HYP and CONF once each.

    Markers never used are absent (a Counter answers 0 for them).
    """
    counts: Counter[str] = Counter()
    for tok in find_tokens(document, markers):
        counts.update(tok.markers)
    return counts
