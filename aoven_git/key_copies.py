"""Recognising a copy of a blind key in any file (docs/blinding.md, "What verify-seal proves").

A blind pass's key names the condition of every item; whoever reads it before sealing is no longer
blind. A copy need not be the key's bytes: re-indented, stripped of its `format` line, cut in two,
or reduced to the items and their conditions, it tells the same. Pure: bytes in, passes out.

A file copies the key of pass P when it
- is shaped as a key: the `format` line and a 32-hex-digit nonce (before the key is committed,
  this is all there is to go by), naming P or no pass; or, once P's key is committed (`Secret`):
- carries that key's nonce; or
- pairs at least two of P's blind ids with their true condition (the condition id as a token
  between the id and the next id, within a few lines), more often than with a wrong one; or
- states the condition of even one item (`stated_pairs`): its blind id and a condition id next to
  each other, with nothing but punctuation, white space and a linking word (`is`, `condition`,
  `test`…) between them, in either order (`c4mxq0z7k2ab is B`, `| B | c4mxq0z7k2ab |`,
  `"c4mxq0z7k2ab": {"condition": "B"`, a ref name `c4mxq0z7k2ab-B`), right for more items than
  it is wrong for. One such statement tells a rater that item's condition, so it is a copy of the
  key's mapping for that item; spreading the mapping one pair per file or per commit leaves every
  file a copy of its own.

A documentation example (`"nonce": "<32 hex digits>"`) is no key; a rater's blind sheet names ids
without conditions; prose that merely mentions an id beside a capital letter (`c4mxq0z7k2ab. A long
answer`, `c4mxq0z7k2ab: A rater asked`) states nothing: a condition followed by a lower-case word
reads as an article, and a full stop or a digit breaks a statement; a guess that is wrong as often
as right is no copy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

#: the `format` line of a blind key (`blinding.KEY_FORMAT`), as any JSON writer may space it
FORMAT_LINE = re.compile(rb'"format"\s*:\s*"aoven-git blind key v1"')
PASS_NAMED = re.compile(rb'"pass"\s*:\s*"([^"\\]{1,200})"')
#: a real key's nonce (the docs' example shows `<32 hex digits>` and is no key)
NONCE = re.compile(rb'"nonce"\s*:\s*"[0-9a-f]{32}"')
#: how far after a blind id its condition may stand and still be paired with it
WINDOW = 200
#: a file pairing this many ids with their true condition is a copy of the key's mapping
PAIRS = 2
#: what may stand between an id and its condition in a statement of one pair: white space,
#: punctuation of tables, lists, JSON, YAML, arrows and paths, and a few linking words
_LINK = (rb"(?:\s|[:=|,;/()\[\]{}\"'`*_#>~-]|\xe2\x86\x92"
         rb"|(?<![A-Za-z0-9])(?:is|was|are|condition|conditions|cond|test|tests)(?![A-Za-z0-9])){0,40}")
#: a condition followed by a lower-case word (but `and`) is an article or prose (`A long answer`,
#: `A or B`)
_NOT_PROSE = rb"(?![A-Za-z0-9])(?![ \t]+(?!and\b)[a-z])"


@dataclass(frozen=True)
class Secret:
    """What a committed key of one pass gives away: its nonce, and each blind id's condition."""

    pass_id: str
    nonce: bytes
    conditions: dict[bytes, bytes]


def secret_of(pass_id: str, data: bytes | None) -> Secret | None:
    """The secret of a committed key's bytes, or None when they are not a readable key (that is
    `digest-mismatch` / `blind-key-invalid`, reported elsewhere)."""
    try:
        doc = json.loads(data or b"")
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("nonce"), str) or len(doc["nonce"]) < 16:
        return None
    entries = doc.get("entries") if isinstance(doc.get("entries"), dict) else {}
    conditions = {str(i).encode(): str(e["condition"]).encode() for i, e in entries.items()
                  if isinstance(e, dict) and isinstance(e.get("condition"), str) and len(str(i)) >= 8}
    return Secret(pass_id, doc["nonce"].encode(), conditions)


def _token(condition: bytes) -> re.Pattern[bytes]:
    return re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(condition) + rb"(?![A-Za-z0-9_])")


def pairs_mapping(secret: Secret, data: bytes) -> bool:
    """Whether `data` pairs at least `PAIRS` blind ids with their true condition, more often than
    with a wrong one."""
    if not secret.conditions:
        return False
    ids = re.compile(b"|".join(re.escape(i) for i in sorted(secret.conditions, key=len, reverse=True)))
    found = list(ids.finditer(data))
    tokens = {c: _token(c) for c in set(secret.conditions.values())}
    right = wrong = 0
    for k, m in enumerate(found):
        end = min(m.end() + WINDOW, found[k + 1].start() if k + 1 < len(found) else len(data))
        window = data[m.end():end]
        shown = {c for c, t in tokens.items() if t.search(window)}
        true = secret.conditions[m.group(0)]
        right += true in shown
        wrong += bool(shown - {true}) and true not in shown
    return right >= PAIRS and right > wrong


def _statements(secret: Secret) -> re.Pattern[bytes]:
    """One pattern for a pair stated either way round: `id … condition` or `condition … id`."""
    ids = b"|".join(re.escape(i) for i in sorted(secret.conditions, key=len, reverse=True))
    conds = b"|".join(re.escape(c) for c in sorted(set(secret.conditions.values()), key=len, reverse=True))
    ident = rb"(?<![A-Za-z0-9])(?:" + ids + rb")(?![A-Za-z0-9])"
    cond = rb"(?<![A-Za-z0-9])(?:" + conds + rb")"
    return re.compile(rb"(?P<i1>" + ident + rb")" + _LINK + rb"(?P<c1>" + cond + rb")" + _NOT_PROSE
                      + rb"|(?P<c2>" + cond + rb")" + _LINK + rb"(?P<i2>" + ident + rb")")


def stated_pairs(secret: Secret, data: bytes) -> tuple[int, int]:
    """(right, wrong): how many items `data` states exactly one condition for, the true one or a
    wrong one (an item shown with two conditions states nothing). Pairs may overlap: a table row
    `B | id1` right after `id0 | A` reads both ways, and the ambiguity clears nothing."""
    if not secret.conditions:
        return 0, 0
    shown: dict[bytes, set[bytes]] = {}
    pattern = _statements(secret)
    pos = 0
    while (m := pattern.search(data, pos)) is not None:
        ident, cond = (m.group("i1"), m.group("c1")) if m.group("i1") else (m.group("i2"), m.group("c2"))
        shown.setdefault(ident, set()).add(cond)
        pos = m.start() + 1
    right = sum(1 for i, cs in shown.items() if cs == {secret.conditions[i]})
    wrong = sum(1 for i, cs in shown.items() if len(cs) == 1 and cs != {secret.conditions[i]})
    return right, wrong


def states_a_pair(secret: Secret, data: bytes) -> bool:
    """Whether `data` states the true condition of at least one item, for more items than it
    states a wrong one (module docstring)."""
    right, wrong = stated_pairs(secret, data)
    return right >= 1 and right > wrong


def copied_passes(blind: Iterable[str], data: bytes | None, secrets: Iterable[Secret]) -> list[str]:
    """The blind passes (of `blind`) whose key `data` copies (module docstring)."""
    blind = set(blind)
    if data is None or not blind:
        return []
    hits = {s.pass_id for s in secrets
            if s.nonce in data or pairs_mapping(s, data) or states_a_pair(s, data)}
    if FORMAT_LINE.search(data) and NONCE.search(data):
        named = PASS_NAMED.search(data)
        name = named.group(1).decode("utf-8", "replace") if named else None
        hits |= {name} if name in blind else blind
    return sorted(hits & blind)
