"""The blind key: canonical bytes, digest, and a clear line-numbered refusal of every bad key.

The key is what the study lead commits only after every required rater sealed; its digest is
sealed first. So a key must serialise to the same bytes every time, and anything that is not
exactly such a key (edited, of another pass, ambiguous) must be rejected with its line.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from aoven_git.blinding import KEY_FORMAT, BlindKey, KeyEntry, KeyProblem, key_digest, parse_key

SHA = "0123456789abcdef" * 4
NONCE = "00112233445566778899aabbccddeeff"
KEY = BlindKey(
    "blind",
    NONCE,
    (
        KeyEntry("c4mxq0z7k2ab", "Q1", "B", SHA),
        KeyEntry("k9w3h8r2t6ye", "Q1", "A", "f" * 64),
        KeyEntry("p0n1z2y3x4w5", "Q10", "A", "a" * 64),
    ),
)
# Written out by hand: the exact bytes `to_json` must produce.
CANONICAL = f"""{{
  "entries": {{
    "c4mxq0z7k2ab": {{
      "condition": "B",
      "question": "Q1",
      "source_sha256": "{SHA}"
    }},
    "k9w3h8r2t6ye": {{
      "condition": "A",
      "question": "Q1",
      "source_sha256": "{"f" * 64}"
    }},
    "p0n1z2y3x4w5": {{
      "condition": "A",
      "question": "Q10",
      "source_sha256": "{"a" * 64}"
    }}
  }},
  "format": "{KEY_FORMAT}",
  "nonce": "{NONCE}",
  "pass": "blind"
}}
""".encode()


def test_to_json_writes_the_canonical_bytes() -> None:
    assert KEY.to_json() == CANONICAL
    # entry order does not matter: the bytes are the same
    assert BlindKey("blind", NONCE, KEY.entries[::-1]).to_json() == CANONICAL


def test_round_trip_is_byte_stable() -> None:
    parsed = parse_key(CANONICAL, pass_id="blind")
    assert parsed == KEY
    assert isinstance(parsed, BlindKey) and parsed.to_json() == CANONICAL
    assert parse_key(parsed.to_json()) == parsed


def test_digest_is_sha256_of_the_exact_bytes() -> None:
    assert key_digest(CANONICAL) == hashlib.sha256(CANONICAL).hexdigest()
    assert key_digest(CANONICAL + b"\n") != key_digest(CANONICAL)


def test_non_ascii_ids_of_the_plan_survive() -> None:
    key = BlindKey("blind", NONCE, (KeyEntry("c4mxq0z7k2ab", "Frage-1", "Bé", SHA),))
    data = key.to_json()
    assert "Bé".encode() in data and parse_key(data) == key


def edit(old: str, new: str, count: int = 1) -> bytes:
    text = CANONICAL.decode()
    assert old in text
    return text.replace(old, new, count).encode()


DUPLICATE_ID = edit('    "k9w3h8r2t6ye": {', '    "c4mxq0z7k2ab": {')
DUPLICATE_ITEM = edit('"question": "Q10"', '"question": "Q1"')


@pytest.mark.parametrize(
    ("data", "line", "message"),
    [
        (b"\xff{}", 1, "the key is not UTF-8"),
        (CANONICAL[:40] + b"\n\xc3(", 5, "the key is not UTF-8"),
        (b"", 1, "not valid JSON"),
        (edit('"pass": "blind"', '"pass": "blind",'), 22, "not valid JSON"),
        (b"[]", 1, "the key must be a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, 1, "not valid JSON"),
        (edit('"pass": "blind"', '"pass": NaN'), 1, "NaN is not allowed in a key"),
        (edit('"pass": "blind"', '"pass": 1' + "0" * 5000), 1, "not valid JSON"),
        (edit('  "nonce"', '  "extra": 1,\n  "nonce"'), 20, "unknown field 'extra' in the key"),
        (edit(f'  "nonce": "{NONCE}",\n', ""), 1, "the key lacks 'nonce'"),
        (edit(KEY_FORMAT, "something else"), 19, "not a blind key: 'format' must be"),
        (edit('"pass": "blind"', '"pass": ""'), 21, "pass must be a non-empty string"),
        (edit('"pass": "blind"', '"pass": ["blind"]'), 21, "pass must be a non-empty string"),
        (edit(NONCE, NONCE.upper()), 20, "nonce '00112233445566778899AABBCCDDEEFF' is malformed"),
        (edit(NONCE, NONCE[:-2]), 20, "is malformed"),
        (b'{"entries": {}, "format": "' + KEY_FORMAT.encode() + b'", "nonce": "' + NONCE.encode()
         + b'", "pass": "blind"}', 1, "'entries' must be a non-empty object"),
        (edit('"c4mxq0z7k2ab": {', '"C4MXQ0Z7K2AB": {'), 3, "'C4MXQ0Z7K2AB' is not a blind id"),
        (edit('"c4mxq0z7k2ab": {', '"c4mxq0z7k2a": {'), 3, "'c4mxq0z7k2a' is not a blind id"),
        (edit('"c4mxq0z7k2ab": {', '"1c4mxq0z7k2a": {'), 3, "is not a blind id"),
        (edit(f',\n      "source_sha256": "{SHA}"', ""), 3, "entry 'c4mxq0z7k2ab' lacks 'source_sha256'"),
        (edit('"condition": "B",', '"condition": "B",\n      "rater": "cto",'), 5,
         "unknown field 'rater' in entry 'c4mxq0z7k2ab'"),
        (edit('"question": "Q1",', '"question": " Q1",'), 3, "question must be a non-empty string"),
        (edit('"condition": "B"', '"condition": 2'), 3, "condition must be a non-empty string"),
        (edit(SHA, SHA.upper()), 3, "source_sha256 '0123456789ABCDEF"),
        (edit('"c4mxq0z7k2ab": {', '"c4mxq0z7k2ab": ['), 4, "not valid JSON"),
        (DUPLICATE_ID, 8, "'c4mxq0z7k2ab' appears twice"),
        (DUPLICATE_ITEM, 13, "Q1/A appears twice in the key (ids k9w3h8r2t6ye and p0n1z2y3x4w5)"),
        (CANONICAL.replace(b"\n", b"\r\n"), 1, "not in the canonical form"),
        (CANONICAL.rstrip(b"\n"), 22, "not in the canonical form"),
        (edit('  "pass": "blind"', '  "pass":  "blind"'), 21, "not in the canonical form"),
        (json.dumps(json.loads(CANONICAL), sort_keys=True).encode(), 1, "not in the canonical form"),
    ],
)
def test_malformed_key_is_rejected_with_its_line(data: bytes, line: int, message: str) -> None:
    problem = parse_key(data)
    assert isinstance(problem, KeyProblem), problem
    assert message in problem.message
    assert problem.line == line, problem
    assert str(problem) == f"line {line}: {problem.message}"


def test_key_of_another_pass_is_rejected() -> None:
    pass_line = CANONICAL.decode().split("\n").index('  "pass": "blind"') + 1
    assert parse_key(CANONICAL, pass_id="unblinded") == KeyProblem(
        pass_line, "this key is for pass 'blind', not 'unblinded'"
    )
