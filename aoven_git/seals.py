"""The digest seal file and the commit trailers of seal and reveal (docs/sealing.md, "The two ways to seal").

A seal file is auditable with coreutils (``cd <study_dir> && sha256sum -c seals/<stem>.sha256``
skips ``#`` lines)::

    <sha256 hex>  <score file name>
    # aoven-git seal v1
    # rater: cto
    # pass: unblinded
    # round: main

(plus ``# amendment: <id>`` for the re-scores of an amendment). The digest is over the bytes git
stores for the score file (after end-of-line conversion), the same bytes verify-seal reads back.

The key of a blind pass is committed first only as its digest, ``seals/blind_key_<pass>.sha256``::

    <sha256 hex>  key.json
    # aoven-git blind key v1
    # pass: <pass>
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from aoven_git.model import SheetId

SEAL_MAGIC = "# aoven-git seal v1"
KEY_SEAL_MAGIC = "# aoven-git blind key v1"
FORCE_TRAILER = "Aoven-Force"
SEAL_TRAILER = "Aoven-Seal"
REVEAL_TRAILER = "Aoven-Reveal"
#: environment variable `reveal --force` sets for its own commit so the pre-commit hook lets the
#: recorded override through (the commit carries an `Aoven-Force: reveal` trailer)
FORCE_ENV = "AOVEN_GIT_FORCE"


@dataclass(frozen=True)
class SealFile:
    digest: str
    filename: str
    rater: str
    pass_id: str
    round_id: str
    amendment: str | None = None

    @property
    def sheet(self) -> SheetId:
        return SheetId(self.rater, self.pass_id, self.round_id, self.amendment)


_FIRST = re.compile(r"^([0-9a-f]{64})  (\S[^\n]*)$")
_META = re.compile(r"^# (rater|pass|round|amendment): (\S+)$")


def format_seal(digest: str, filename: str, sheet: SheetId) -> bytes:
    text = (f"{digest}  {filename}\n{SEAL_MAGIC}\n# rater: {sheet.rater}\n"
            f"# pass: {sheet.pass_id}\n# round: {sheet.round_id}\n")
    if sheet.amendment:
        text += f"# amendment: {sheet.amendment}\n"
    return text.encode()


def parse_seal(data: bytes) -> SealFile | tuple[int, str]:
    """The seal, or (line, problem) for the first malformed line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return 1, "seal file is not UTF-8"
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return 1, "seal file is empty"
    first = _FIRST.match(lines[0])
    if not first:
        return 1, "first line must be `<64 lower-case hex digits>  <score file name>`"
    if len(lines) < 2 or lines[1] != SEAL_MAGIC:
        return 2, f"second line must be `{SEAL_MAGIC}`"
    meta: dict[str, str] = {}
    for n, line in enumerate(lines[2:], start=3):
        m = _META.match(line)
        if not m:
            return n, "expected `# rater: …`, `# pass: …`, `# round: …` or `# amendment: …`"
        if m.group(1) in meta:
            return n, f"`{m.group(1)}` given twice"
        meta[m.group(1)] = m.group(2)
    for key in ("rater", "pass", "round"):
        if key not in meta:
            return len(lines) + 1, f"missing `# {key}: …` line"
    return SealFile(first.group(1), first.group(2), meta["rater"], meta["pass"], meta["round"],
                    meta.get("amendment"))


def format_key_seal(digest: str, pass_id: str) -> bytes:
    return f"{digest}  key.json\n{KEY_SEAL_MAGIC}\n# pass: {pass_id}\n".encode()


def parse_key_seal(data: bytes) -> tuple[str, str] | tuple[int, str]:
    """(digest, pass) of a blind key's seal, or (line, problem)."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    first = _FIRST.match(lines[0]) if lines else None
    if not first or first.group(2) != "key.json":
        return 1, "first line must be `<64 lower-case hex digits>  key.json`"
    if len(lines) < 2 or lines[1] != KEY_SEAL_MAGIC:
        return 2, f"second line must be `{KEY_SEAL_MAGIC}`"
    m = re.match(r"^# pass: (\S+)$", lines[2]) if len(lines) > 2 else None
    if not m:
        return 3, "third line must be `# pass: <pass>`"
    return first.group(1), m.group(1)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
