"""Full blinding: opaque items, the text a blind rater sees, the leak scan and the key.

A blinded pass is only blind if nothing in what a rater reads, or in how it is named and ordered,
tells the condition. So every item of the pass goes through one normalisation (the baseline as
generated, every treatment from its stripped copy, all the same way), the result is scanned for
anything that still names a condition or the protocol, and the files get random ids that say
nothing about the item. The mapping from id back to (question, condition, replicate) is the
**key**; the tool commits only its SHA-256 until every required rater has sealed, which makes the
key a commitment the raters cannot read (docs/blinding.md).

Everything here is pure: no git, no file system. Callers pass text, bytes, marker ids, leak
regexes and an RNG; the commands decide where things are written.

Leak kinds (`leaks`, `build_corpus`):

================ ===========================================================================
kind             what is found
================ ===========================================================================
marker           a bracket token the plan's marker grammar recognises (markers.py), also
                 inside inline or fenced code, where stripping leaves it untouched
unknown-marker   an all-caps bracket token that looks like a marker the plan does not list
                 (`[ASSUMPTION]`); markers.py reports the same tokens when stripping
aoven-header     the `[Aoven …]` framing line, any case
protocol-word    a word starting with `Aoven`, any case (`Aoven-framed`, `aoven_git`)
condition-word   a condition named as such: `Condition B`, `Conditions A`, `Test A`
                 (condition id as written), or joined `test_b`, `condition-a`, `testB`
leak-pattern     a match of a caller-supplied regex (the plan's `blind.leak_patterns`)
================ ===========================================================================

Problem codes (`check_corpus`, for verify-seal):

==================== ==================================================================
code                 meaning
==================== ==================================================================
blind-mismatch       a blinded file differs from the normalisation of the source the key
                     names, or that source's SHA-256 is not the one in the key
blind-missing-file   a key entry has no blinded file
blind-extra-file     a file in the corpus has no key entry
blind-missing-item   a (question, condition, replicate) of the pass has no key entry
blind-unknown-item   a key entry names a (question, condition, replicate) not in the pass
==================== ==================================================================
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
import re
import secrets
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from aoven_git.errors import FindingsError, PlanError, UsageError
from aoven_git.markers import find_tokens, response_text, strip_response, strip_text, unknown_tokens

__all__ = [
    "ID_ALPHABET", "ID_LENGTH", "KEY_FORMAT", "BlindKey", "Corpus", "Item", "KeyEntry", "KeyProblem",
    "Leak", "LeakHit", "Problem", "blind_id_from_name", "build_corpus", "check_corpus",
    "compile_leak_patterns", "file_name", "is_blind_id", "item_name", "key_digest", "leaks", "new_ids",
    "normalise", "parse_key",
]

# --------------------------------------------------------------------------- normalisation

QUESTION_HEADING = "## Question"
RESPONSE_HEADING = "## Response"
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")  # the line ends markers.py and markdown-it know


def _tidy(text: str) -> str:
    """LF line ends, no trailing whitespace, no blank line at either end, no run of blank lines."""
    out: list[str] = []
    for line in _NEWLINE_RE.split(text):
        line = line.rstrip()
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def _layout(question: str, response: str) -> str:
    parts = [QUESTION_HEADING, question, RESPONSE_HEADING]
    if response:
        parts.append(response)
    return "\n\n".join(parts) + "\n"


def normalise(document: str, markers: Sequence[str], question_text: str) -> str:
    """The text a blind rater sees: the plan's question and the response part, nothing else.

    `question_text` is the plan's text of the question, passed by the caller, so A and B of one
    question get byte-identical question parts whatever their prompt blocks say. The response
    part is markers.py's (`response_text`: after the `Response` heading, or the whole file minus
    title, prompt section and `[Aoven …]` paragraph), with every marker token removed by
    `strip_response` (a no-op on a stripped copy) and `[Aoven …]` lines dropped. Whitespace: a
    leading byte-order mark goes, line ends become LF, trailing whitespace goes, runs of blank
    lines become one, and the file ends with exactly one newline. Layout::

        ## Question\\n\\n<question>\\n\\n## Response\\n\\n<response>\\n
    """
    question = _tidy(question_text.strip())
    if not question:
        raise UsageError("the question text is empty: a blinded file needs the plan's question text")
    body = document.removeprefix("\ufeff")
    response = _tidy(response_text(strip_response(body, markers).text))
    return _layout(question, response)


# --------------------------------------------------------------------------- leak scan

DEFAULT_CONDITIONS = ("A", "B")
_CODE_CHARS = str.maketrans("`~", "  ")  # no code span, no fence: markers in code count too
_PROBE_HEAD = RESPONSE_HEADING + "\n\n"  # makes every following line "response part" for markers.py
_HEADER_RE = re.compile(r"\[[ \t]*(?i:aoven)[^\]\r\n]{0,58}\]?")
_PROTOCOL_RE = re.compile(r"(?<![^\W_])(?i:aoven)\w*")


@dataclass(frozen=True)
class Leak:
    """One tell in a text: 1-based line and column, its kind (module table) and what was seen."""

    line: int
    kind: str
    excerpt: str
    column: int = 1


def compile_leak_patterns(patterns: Iterable[str | re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    """The plan's leak regexes, compiled as written (add `(?i)` for case-insensitive ones)."""
    out: list[re.Pattern[str]] = []
    for p in patterns:
        if isinstance(p, re.Pattern) and isinstance(p.pattern, str):
            out.append(p)
            continue
        if not isinstance(p, str):
            raise PlanError(f"leak pattern {p!r} is not a string")
        try:
            out.append(re.compile(p))
        except re.error as e:
            raise PlanError(f"leak pattern {p!r} is not a valid regular expression: {e}") from None
    return tuple(out)


@lru_cache(maxsize=32)
def _condition_re(conditions: tuple[str, ...]) -> re.Pattern[str] | None:
    """`Condition B`, `Tests A` (the id as written, so `test a drug` is prose), or a joined form
    such as `test_b`, `condition-a`, `test\\_b` (any case, the way paths spell it) or `testB`."""
    ids = sorted({c for c in conditions if c}, key=len, reverse=True)
    if not ids:
        return None
    alt = "|".join(re.escape(c) for c in ids)
    spaced = rf"(?i:conditions?|tests?)[ \t]+(?:{alt})"
    joined = rf"(?i:condition|test)(?:(?:[_\-]|\\_)(?i:{alt})|(?:{alt}))"
    return re.compile(rf"(?<![^\W_])(?:{spaced}|{joined})(?![^\W_])")


def _excerpt(s: str) -> str:
    first = _NEWLINE_RE.split(s, maxsplit=1)[0]
    return first if len(first) <= 60 else first[:59] + "…"


class _Lines:
    """1-based (line, column) of an offset, with the line ends markers.py uses."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in _NEWLINE_RE.finditer(text))]

    def at(self, pos: int) -> tuple[int, int]:
        line = bisect_right(self.starts, pos)
        return line, pos - self.starts[line - 1] + 1

    def body(self, line: int) -> str:
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[self.starts[line - 1] : end]


def _bracket_leaks(lines: _Lines, markers: Sequence[str]) -> Iterator[Leak]:
    """Marker and marker-like tokens by markers.py's grammar, code spans and fences included.

    markers.py reads a copy with code marks blanked (same offsets); excerpts come from the text.
    """
    if "[" not in lines.text:
        return

    def leak(line: int, kind: str, token: str, start: int) -> Leak:
        col = lines.body(line).translate(_CODE_CHARS).find(token, start)
        return Leak(line, kind, _excerpt(lines.body(line)[col : col + len(token)]), col + 1)

    probe = _PROBE_HEAD + lines.text.translate(_CODE_CHARS)
    for tok in find_tokens(probe, markers):
        yield leak(tok.line - 2, "marker", tok.token, tok.column - 1)
    cursor: dict[int, int] = {}
    for unk in unknown_tokens(probe, markers):
        found = leak(unk.line - 2, "unknown-marker", unk.token, cursor.get(unk.line, 0))
        cursor[unk.line] = found.column
        yield found


def _regex_leaks(
    lines: _Lines, kind: str, pattern: re.Pattern[str], skip: Sequence[tuple[int, int]] = ()
) -> Iterator[Leak]:
    """Non-empty matches of `pattern`, except those starting inside a `skip` span (sorted)."""
    skip_starts = [a for a, _ in skip]
    for m in pattern.finditer(lines.text):
        k = bisect_right(skip_starts, m.start()) - 1
        if m.end() == m.start() or (k >= 0 and m.start() < skip[k][1]):
            continue
        line, column = lines.at(m.start())
        yield Leak(line, kind, _excerpt(m.group()), column)


def leaks(
    text: str,
    markers: Sequence[str],
    leak_patterns: Iterable[str | re.Pattern[str]] = (),
    *,
    conditions: Sequence[str] = DEFAULT_CONDITIONS,
) -> list[Leak]:
    """Every tell left in `text` (kinds in the module docstring), by line and column.

    The whole text is scanned, code included: a rater reads code too. `conditions` are the plan's
    condition ids (all of them, also for a pass over some: naming the other condition is a tell).
    """
    patterns = compile_leak_patterns(leak_patterns)
    lines = _Lines(text)
    headers = [m.span() for m in _HEADER_RE.finditer(text)]
    found = [
        *_bracket_leaks(lines, markers),
        *_regex_leaks(lines, "aoven-header", _HEADER_RE),
        *_regex_leaks(lines, "protocol-word", _PROTOCOL_RE, headers),
    ]
    condition_re = _condition_re(tuple(conditions))
    if condition_re is not None:
        found.extend(_regex_leaks(lines, "condition-word", condition_re))
    for p in patterns:
        found.extend(_regex_leaks(lines, "leak-pattern", p))
    return sorted(found, key=lambda leak: (leak.line, leak.column, leak.kind))


# --------------------------------------------------------------------------- opaque ids

#: Crockford's base-32 digits in lower case (no i, l, o, u): no look-alikes, and no id can spell
#: `aoven`. The first character is a letter, so an id never reads as a number (YAML, spreadsheets).
ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_ID_FIRST = ID_ALPHABET[10:]
#: 12 characters: log2(22) + 11·5 ≈ 59.5 random bits. Among n ids a repeat has probability about
#: n²/2^60.5 (2·10⁻¹⁶ for 20 items); a repeat is drawn again anyway, so ids are always unique.
ID_LENGTH = 12
_ID_RE = re.compile(rf"[{_ID_FIRST}][{ID_ALPHABET}]{{{ID_LENGTH - 1}}}")
_SUFFIX = ".md"


def is_blind_id(text: str) -> bool:
    return _ID_RE.fullmatch(text) is not None


def file_name(blind_id: str) -> str:
    """The corpus file of an id: `<id>.md`."""
    return blind_id + _SUFFIX


def blind_id_from_name(name: str) -> str | None:
    """The id a corpus file name carries, or None for any other name."""
    stem = name.removesuffix(_SUFFIX)
    return stem if name.endswith(_SUFFIX) and is_blind_id(stem) else None


def new_ids(count: int, rng: random.Random | None = None) -> list[str]:
    """`count` distinct ids, every character drawn independently from `rng`.

    The default is `secrets.SystemRandom()`, the operating system's CSPRNG; tests pass a seeded
    `random.Random` only to show that the ids depend on nothing else. Ids carry no order: the
    i-th id is as random as the first, whatever item it is given to.
    """
    if count < 0:
        raise UsageError(f"cannot draw {count} ids")
    rng = secrets.SystemRandom() if rng is None else rng
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        ident = rng.choice(_ID_FIRST) + "".join(rng.choice(ID_ALPHABET) for _ in range(ID_LENGTH - 1))
        if ident not in seen:
            seen.add(ident)
            out.append(ident)
    return out


# --------------------------------------------------------------------------- the key

KEY_FORMAT = "aoven-git blind key v1"
_KEY_FIELDS = ("entries", "format", "nonce", "pass")
_ENTRY_FIELDS = ("condition", "question", "source_sha256")
_ENTRY_OPTIONAL = ("replicate",)
_HEX64_RE = re.compile(r"[0-9a-f]{64}")
_NONCE_RE = re.compile(r"[0-9a-f]{32}")


def key_digest(data: bytes) -> str:
    """SHA-256 (hex) of the exact key bytes: what is sealed before the key is revealed."""
    return hashlib.sha256(data).hexdigest()


def item_name(question: str, condition: str, replicate: int = 0) -> str:
    """How messages name an item: `Q1/B`, or `L1/TRT#2` for a replicate (as cell ids do)."""
    return f"{question}/{condition}" + (f"#{replicate}" if replicate else "")


@dataclass(frozen=True)
class KeyEntry:
    """One blind id and the response it stands for. `replicate` is 0 in a plan without
    replicates (the key then has no `replicate` field, byte for byte as before) and 1..N with
    them (docs/blinding.md, "Several conditions and replicates")."""

    blind_id: str
    question: str
    condition: str
    source_sha256: str  # of the source response bytes (a treatment: its stripped copy)
    replicate: int = 0

    @property
    def item(self) -> tuple[str, str, int]:
        """(question, condition, replicate): what `CellKey.item` calls one response."""
        return (self.question, self.condition, self.replicate)


@dataclass(frozen=True)
class BlindKey:
    """Id → item of one pass; the nonce makes the key's digest unguessable from the corpus."""

    pass_id: str
    nonce: str
    entries: tuple[KeyEntry, ...]

    def __post_init__(self) -> None:
        # `parse_key` reports these with a line; constructing such a key anywhere else is a bug.
        if len({e.blind_id for e in self.entries}) != len(self.entries):
            raise ValueError("a blind key cannot hold an id twice")
        if len(self.by_response()) != len(self.entries):
            raise ValueError("a blind key cannot hold a (question, condition) twice for one replicate")

    def to_json(self) -> bytes:
        """Canonical bytes: keys sorted, two-space indent, UTF-8, LF, one final newline."""
        entries = {e.blind_id: _entry_json(e) for e in self.entries}
        doc = {"format": KEY_FORMAT, "pass": self.pass_id, "nonce": self.nonce, "entries": entries}
        return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    def by_item(self) -> dict[tuple[str, str], KeyEntry]:
        """Entries by (question, condition): the items of a key without replicates (with them,
        use `by_response`, which keeps every replicate)."""
        return {(e.question, e.condition): e for e in self.entries}

    def by_response(self) -> dict[tuple[str, str, int], KeyEntry]:
        """Entries by (question, condition, replicate)."""
        return {e.item: e for e in self.entries}


def _entry_json(e: KeyEntry) -> dict[str, Any]:
    """A key entry as JSON; `replicate` only when the plan has replicates (so a key of a plan
    without them is byte-identical to what earlier versions wrote)."""
    out: dict[str, Any] = {"question": e.question, "condition": e.condition, "source_sha256": e.source_sha256}
    return {**out, "replicate": e.replicate} if e.replicate else out


@dataclass(frozen=True)
class KeyProblem:
    """Why a key file was rejected; `line` is 1-based in the key file."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class _Bad(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _line_of(text: str, json_key: str, nth: int = 1) -> int:
    """Line of the `nth` `"json_key":` in the text (1 when absent): where a message points."""
    needle = json.dumps(json_key, ensure_ascii=False) + ":"
    pos = -1
    for _ in range(nth):
        pos = text.find(needle, pos + 1)
        if pos < 0:
            return 1
    return text.count("\n", 0, pos) + 1


def _load_json(text: str) -> Any:
    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                raise _Bad(_line_of(text, k, 2), f"{k!r} appears twice")
            out[k] = v
        return out

    def no_constant(name: str) -> Any:
        raise _Bad(1, f"{name} is not allowed in a key")

    try:
        return json.loads(text, object_pairs_hook=unique, parse_constant=no_constant)
    except json.JSONDecodeError as e:
        raise _Bad(e.lineno, f"not valid JSON: {e.msg}") from None
    except (ValueError, RecursionError) as e:
        raise _Bad(1, f"not valid JSON: {e}") from None


def _fields(text: str, obj: Any, expected: tuple[str, ...], where: str, line: int,
            optional: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _Bad(line, f"{where} must be a JSON object")
    for k in obj:
        if k not in expected and k not in optional:
            raise _Bad(_line_of(text, k), f"unknown field {k!r} in {where}")
    missing = [k for k in expected if k not in obj]
    if missing:
        raise _Bad(line, f"{where} lacks {', '.join(repr(k) for k in missing)}")
    return obj


def _text_field(value: Any, name: str, line: int, pattern: re.Pattern[str] | None = None) -> str:
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise _Bad(line, f"{name} must be a non-empty string without surrounding spaces")
    if pattern is not None and not pattern.fullmatch(value):
        raise _Bad(line, f"{name} {value!r} is malformed")
    return value


def _replicate(value: Any, line: int) -> int:
    """The optional `replicate` of an entry: a whole number from 1 (absent: 0, no replicates)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Bad(line, f"replicate must be a whole number from 1, not {value!r}")
    return value


def _entries(text: str, raw: Any) -> tuple[KeyEntry, ...]:
    if not isinstance(raw, dict) or not raw:
        raise _Bad(_line_of(text, "entries"), "'entries' must be a non-empty object of id → item")
    out: list[KeyEntry] = []
    seen: dict[tuple[str, str, int], str] = {}
    for ident, value in raw.items():
        line = _line_of(text, ident)
        if not is_blind_id(ident):
            raise _Bad(line, f"{ident!r} is not a blind id ({ID_LENGTH} characters of {ID_ALPHABET})")
        v = _fields(text, value, _ENTRY_FIELDS, f"entry {ident!r}", line, _ENTRY_OPTIONAL)
        entry = KeyEntry(
            ident,
            _text_field(v["question"], "question", line),
            _text_field(v["condition"], "condition", line),
            _text_field(v["source_sha256"], "source_sha256", line, _HEX64_RE),
            _replicate(v.get("replicate"), line),
        )
        item = entry.item
        if item in seen:
            raise _Bad(line, f"{item_name(*item)} appears twice in the key (ids {seen[item]} and {ident})")
        seen[item] = ident
        out.append(entry)
    return tuple(sorted(out, key=lambda e: e.blind_id))


def _parse(data: bytes, pass_id: str | None) -> BlindKey:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Bad(data.count(b"\n", 0, e.start) + 1, "the key is not UTF-8") from None
    doc = _fields(text, _load_json(text), _KEY_FIELDS, "the key", 1)
    if doc["format"] != KEY_FORMAT:
        raise _Bad(_line_of(text, "format"), f"not a blind key: 'format' must be {KEY_FORMAT!r}")
    pass_line = _line_of(text, "pass")
    key_pass = _text_field(doc["pass"], "pass", pass_line)
    if pass_id is not None and key_pass != pass_id:
        raise _Bad(pass_line, f"this key is for pass {key_pass!r}, not {pass_id!r}")
    nonce = _text_field(doc["nonce"], "nonce", _line_of(text, "nonce"), _NONCE_RE)
    key = BlindKey(key_pass, nonce, _entries(text, doc["entries"]))
    canonical = key.to_json()
    if canonical != data:
        line = _first_difference(data, canonical)
        raise _Bad(line, "not in the canonical form aoven-git writes (the key was edited or re-saved)")
    return key


def parse_key(data: bytes, *, pass_id: str | None = None) -> BlindKey | KeyProblem:
    """The key in `data`, or the first problem with its line.

    Only the canonical bytes `BlindKey.to_json` writes are accepted, so a parsed key always
    serialises back to the same bytes (and digest). With `pass_id`, a key of another pass is
    rejected too.
    """
    try:
        return _parse(data, pass_id)
    except _Bad as bad:
        return KeyProblem(bad.line, bad.message)


def _first_difference(a: bytes, b: bytes) -> int:
    """1-based line of the first byte where `a` and `b` differ (or where the shorter one ends)."""
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return a.count(b"\n", 0, n) + 1


# --------------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Item:
    """One (question, condition, replicate) of the pass and its source response (a treatment:
    its stripped copy); `replicate` is 0 in a plan without replicates."""

    question: str
    condition: str
    question_text: str  # the plan's text of the question
    source: bytes  # the source response file, as stored
    path: str  # where the source is, for messages
    replicate: int = 0

    @property
    def item(self) -> tuple[str, str, int]:
        return (self.question, self.condition, self.replicate)


@dataclass(frozen=True)
class Corpus:
    """The blinded files (`<id>.md` → bytes, ordered by name) and the key that maps them back."""

    files: dict[str, bytes]
    key: BlindKey


@dataclass(frozen=True)
class LeakHit:
    """A tell in the would-be blinded text of an item, located in its source.

    `line` is the source line of a hit in the response part; a hit in the question text (the
    plan's) or in the fixed headings has `line` None and says so in `part`.
    """

    path: str
    line: int | None
    kind: str
    excerpt: str
    question: str
    condition: str
    part: str = "response"  # "response", "question" or "heading"
    replicate: int = 0

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else f"{self.path} ({self.part} text)"
        name = item_name(self.question, self.condition, self.replicate)
        return f"{where}: {name} would show {self.kind} {self.excerpt!r}"


def _decode(item: Item) -> str:
    try:
        return item.source.decode("utf-8")
    except UnicodeDecodeError as e:
        line = item.source.count(b"\n", 0, e.start) + 1
        raise FindingsError("the response is not UTF-8", path=item.path, line=line) from None


def _check_unique(items: Sequence[Item]) -> None:
    counts = Counter(i.item for i in items)
    twice = sorted(item_name(*item) for item, n in counts.items() if n > 1)
    if twice:
        raise UsageError(f"an item is given twice: {', '.join(twice)}")


def _source_lines(document: str, response: list[str], markers: Sequence[str]) -> list[int]:
    """For each line of the normalised response, the 1-based source line it comes from.

    Source lines are stripped one by one and aligned with the response lines; unchanged lines map
    exactly, a changed one to its position inside the changed block.
    """
    source = [strip_text(line, markers).text.rstrip() for line in _NEWLINE_RE.split(document)]
    out = [1] * len(response)
    matcher = difflib.SequenceMatcher(None, source, response, autojunk=False)
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            out[j] = min(i1 + (j - j1), max(i2 - 1, i1), len(source) - 1) + 1
    return out


def _locate(item: Item, document: str, text: str, found: list[Leak], markers: Sequence[str]) -> list[LeakHit]:
    """Leaks of the normalised `text` as hits in the item's source file."""
    question_lines = _tidy(item.question_text.strip()).count("\n") + 1
    first_response = question_lines + 6  # heading, blank, question, blank, heading, blank
    response = text.split("\n")[first_response - 1 : -1]
    mapping = _source_lines(document.removeprefix("\ufeff"), response, markers) if found else []
    hits = []
    for leak in found:
        if leak.line >= first_response and response:
            line, part = mapping[min(leak.line - first_response, len(mapping) - 1)], "response"
        else:
            is_question = 3 <= leak.line < 3 + question_lines
            line, part = None, "question" if is_question else "heading"
        hits.append(LeakHit(item.path, line, leak.kind, leak.excerpt, item.question, item.condition, part,
                            item.replicate))
    return hits


def build_corpus(
    items: Iterable[Item],
    markers: Sequence[str],
    leak_patterns: Iterable[str | re.Pattern[str]] = (),
    rng: random.Random | None = None,
    *,
    pass_id: str,
    conditions: Sequence[str] | None = None,
) -> Corpus | list[LeakHit]:
    """The blinded corpus of a pass and its key, or every leak hit (and then nothing else).

    Every item — each (question, condition, replicate), whatever the number of conditions — gets
    its own id; the key records the replicate of each (none without replicates).

    `conditions` are the plan's condition ids for the leak scan (default: those of the items).
    Ids and nonce come from `rng` (default: the OS CSPRNG); the files are ordered by id, which
    is random, so neither names nor order say anything about the items.
    """
    todo = tuple(items)
    if not todo:
        raise UsageError("nothing to blind: the pass has no (question, condition) items")
    _check_unique(todo)
    patterns = compile_leak_patterns(leak_patterns)
    conds = tuple(conditions) if conditions is not None else tuple(sorted({i.condition for i in todo}))
    texts: list[str] = []
    hits: list[LeakHit] = []
    for item in todo:
        document = _decode(item)
        text = normalise(document, markers, item.question_text)
        found = leaks(text, markers, patterns, conditions=conds)
        hits.extend(_locate(item, document, text, found, markers))
        texts.append(text)
    if hits:
        return hits
    rng = secrets.SystemRandom() if rng is None else rng
    ids = new_ids(len(todo), rng)
    nonce = f"{rng.getrandbits(128):032x}"
    pairs = sorted(zip(ids, todo, strict=True), key=lambda pair: pair[0])
    entries = tuple(KeyEntry(i, item.question, item.condition, key_digest(item.source), item.replicate)
                    for i, item in pairs)
    by_id = dict(zip(ids, texts, strict=True))
    files = {file_name(e.blind_id): by_id[e.blind_id].encode("utf-8") for e in entries}
    return Corpus(files, BlindKey(pass_id, nonce, entries))


# --------------------------------------------------------------------------- checking a corpus


@dataclass(frozen=True)
class Problem:
    """A corpus problem for verify-seal: code (module table), the corpus file if any, message."""

    code: str
    name: str | None
    message: str


def _entry_problem(entry: KeyEntry, data: bytes, source: Item, markers: Sequence[str]) -> str | None:
    """Why the blinded file of `entry` is not the normalisation of its source, if it is not."""
    if key_digest(source.source) != entry.source_sha256:
        return f"{source.path} is not the response the key names (its SHA-256 changed since blinding)"
    try:
        expected = normalise(source.source.decode("utf-8"), markers, source.question_text).encode("utf-8")
    except UnicodeDecodeError:
        return f"{source.path} is not UTF-8"
    if data != expected:
        return f"line {_first_difference(data, expected)} differs from the normalised {source.path}"
    return None


def _key_problems(
    key: BlindKey,
    corpus_files: Mapping[str, bytes],
    by_item: Mapping[tuple[str, str, int], Item],
    markers: Sequence[str],
) -> Iterator[Problem]:
    for entry in key.entries:
        name = file_name(entry.blind_id)
        item = item_name(*entry.item)
        source = by_item.get(entry.item)
        if name not in corpus_files:
            yield Problem("blind-missing-file", name, f"the key names {name} ({item}); the corpus lacks it")
        if source is None:
            yield Problem("blind-unknown-item", name, f"{item} is not an item of the pass")
        elif name in corpus_files:
            why = _entry_problem(entry, corpus_files[name], source, markers)
            if why:
                yield Problem("blind-mismatch", name, f"{item}: {why}")


def check_corpus(
    key: BlindKey, corpus_files: Mapping[str, bytes], sources: Iterable[Item], markers: Sequence[str]
) -> list[Problem]:
    """Does the committed corpus match the key and the pass's sources? (codes: module table)

    `corpus_files` maps file names under `blind/<pass>/` (the key file excluded) to their bytes;
    `sources` are the items of the pass as `build_corpus` took them, with the plan's question
    texts. Each must have exactly one key entry (a key never holds one twice, see `BlindKey`),
    each key entry exactly one file, and each file must be byte-identical to the normalisation
    of the source its entry names.
    """
    todo = tuple(sources)
    _check_unique(todo)
    by_item = {s.item: s for s in todo}
    problems = list(_key_problems(key, corpus_files, by_item, markers))
    keyed = {e.blind_id for e in key.entries}
    problems.extend(
        Problem("blind-extra-file", name, f"{name} has no entry in the key")
        for name in corpus_files
        if blind_id_from_name(name) not in keyed
    )
    problems.extend(
        Problem("blind-missing-item", None, f"{item_name(*item)} has no entry in the key")
        for item in sorted(set(by_item) - set(key.by_response()))
    )
    return sorted(problems, key=lambda p: (p.name or "", p.code, p.message))
