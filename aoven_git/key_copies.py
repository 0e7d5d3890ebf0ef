"""Recognising a copy of a blind key in any file (docs/blinding.md, "What verify-seal proves").

A blind pass's key names the condition of every item; whoever reads it before sealing is no longer
blind. A copy need not be the key's bytes: re-indented, stripped of its `format` line, cut in two,
or reduced to the items and their conditions, it tells the same. Pure: bytes in, passes out.

A file copies the key of pass P when it
- is shaped as a key: the `format` line and a 32-hex-digit nonce (before the key is committed,
  this is all there is to go by), naming P or no pass; or, once P's key is committed (`Secret`):
- carries that key's nonce; or
- pairs at least two of P's blind ids with their true condition (the condition id as a token
  between the id and the next id, within a few lines), more often than with a wrong one.

A documentation example (`"nonce": "<32 hex digits>"`) is no key; a rater's blind sheet names ids
without conditions; a guess that is wrong as often as right is no copy.
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


def copied_passes(blind: Iterable[str], data: bytes | None, secrets: Iterable[Secret]) -> list[str]:
    """The blind passes (of `blind`) whose key `data` copies (module docstring)."""
    blind = set(blind)
    if data is None or not blind:
        return []
    hits = {s.pass_id for s in secrets if s.nonce in data or pairs_mapping(s, data)}
    if FORMAT_LINE.search(data) and NONCE.search(data):
        named = PASS_NAMED.search(data)
        name = named.group(1).decode("utf-8", "replace") if named else None
        hits |= {name} if name in blind else blind
    return sorted(hits & blind)
