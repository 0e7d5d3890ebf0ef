"""The verification cache of time-stamp tokens (docs/sealing.md, "The verification cache").

Verifying a token offline costs 1–2 ms (its signature and certificate chain), so verify-seal
over 100 tokens would cost several times the rest of the check. A token is a git blob, so its
bytes never change under one blob id; verifying the same blob for the same commit against the
same pinned certificates with the same code always gives the same answer. This cache keeps that
answer, for *valid* tokens only, in `$GIT_DIR/aoven-git/timestamps.cache` (outside the work tree:
never committed, never pushed).

Why it cannot make an invalid token valid:

- an entry is found only by a key that hashes the token's blob id, the commit it is named for,
  the SHA-256 of every pinned authority (url and certificate bytes as committed), aoven-git's
  version, the cache format and the installed `rfc3161-client` (where it lies, its size and time):
  another token, commit or certificate, or an upgrade, is a miss and is verified in full;
- only valid verdicts are stored, so a miss costs time, never correctness; invalid tokens are
  verified again on every run (their reasons stay exact);
- every entry carries an HMAC-SHA256 under a secret of this user's kept in `$AOVEN_GIT_HOME`
  (outside every repository): an entry planted in the git dir — a repository copied with its
  `.git` from someone else, a hand-edited file — does not carry a valid HMAC and is ignored.
  Whoever can write the secret can also replace aoven-git itself; CI starts from a fresh clone,
  so its verify-seal verifies every token.

A file that cannot be read, is not JSON of this format or holds entries with a wrong HMAC is
ignored entry by entry (never an error) and rewritten when this run verified something new. No
git call here: `anchors.py` finds the git dir through `gitio`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from aoven_git import __version__

FORMAT = "aoven-git timestamp cache 1"
FILE = Path("aoven-git") / "timestamps.cache"
SECRET = "timestamps-cache.key"
#: entries kept in the file: the tokens of this run first, then the most recent others
MAX_ENTRIES = 20_000


def _library_stamp() -> str:
    """Which `rfc3161-client` is installed, without importing it (importing costs ~70 ms): its
    package file's path, size and modification time change with any upgrade."""
    import importlib.util

    spec = importlib.util.find_spec("rfc3161_client")
    if spec is None or spec.origin is None:
        return "rfc3161-client: none"
    st = os.stat(spec.origin)
    return f"{spec.origin}:{st.st_size}:{st.st_mtime_ns}"


def pinned_digest(authorities: list[tuple[str, bytes | None]]) -> str:
    """SHA-256 over every authority of the plan in order: its url and the bytes of its certificate
    file as committed (None: not committed). Anything a certificate change could affect misses."""
    h = hashlib.sha256()
    for url, pem in authorities:
        h.update(url.encode("utf-8") + b"\0" + (b"-" if pem is None else b"+" + pem) + b"\0")
    return h.hexdigest()


def _secret(create: bool) -> bytes | None:
    from aoven_git.sealed_copies import home_secret

    return home_secret(SECRET, create=create)


@dataclass
class TimestampCache:
    """Valid verdicts by key; `new` says whether this run added any (then `save` rewrites)."""

    path: Path
    secret: bytes | None
    entries: dict[str, list[str]] = field(default_factory=dict)
    used: dict[str, list[str]] = field(default_factory=dict)
    new: bool = False
    stamp: str = ""

    @classmethod
    def open(cls, git_dir: Path) -> TimestampCache:
        """The cache of the repository whose git dir is `git_dir` (empty when absent or unreadable)."""
        cache = cls(git_dir / FILE, _secret(create=False), stamp=f"{__version__}:{_library_stamp()}")
        try:
            doc = json.loads((git_dir / FILE).read_bytes())
        except (OSError, ValueError):
            return cache
        if isinstance(doc, dict) and doc.get("format") == FORMAT and isinstance(doc.get("entries"), dict):
            cache.entries = {k: v for k, v in doc["entries"].items()
                             if isinstance(v, list) and len(v) == 3 and all(isinstance(x, str) for x in v)}
        return cache

    def key(self, blob: str, commit: str, pinned: str) -> str:
        """What a verdict depends on: the token's bytes (blob id), its commit, the pinned
        certificates and the code that verified it."""
        return hashlib.sha256("\0".join((FORMAT, self.stamp, blob, commit, pinned)).encode()).hexdigest()

    def _mac(self, key: str, authority: str, when: str) -> str:
        assert self.secret is not None
        return hmac.new(self.secret, "\0".join((key, authority, when)).encode(), hashlib.sha256).hexdigest()

    def get(self, key: str, authorities: set[str]) -> tuple[str, datetime] | None:
        """(authority, time) of a valid verdict stored under `key` with a good HMAC, else None."""
        entry = self.entries.get(key)
        if entry is None or self.secret is None:
            return None
        authority, when, mac = entry
        if authority not in authorities or not hmac.compare_digest(mac, self._mac(key, authority, when)):
            return None
        try:
            moment = datetime.fromisoformat(when)
        except ValueError:
            return None
        self.used[key] = entry
        return authority, moment

    def put(self, key: str, authority: str, when: datetime) -> None:
        """Keep a valid verdict (the secret is created with the first one)."""
        if self.secret is None:
            self.secret = _secret(create=True)
            if self.secret is None:
                return
        stamp = when.isoformat()
        self.used[key] = [authority, stamp, self._mac(key, authority, stamp)]
        self.new = True

    def save(self) -> None:
        """Rewrite the file when this run verified something new: this run's entries first, then
        the others, at most MAX_ENTRIES. A file that cannot be written is left (no error)."""
        if not self.new:
            return
        kept = dict(self.used)
        for k, (authority, when, mac) in self.entries.items():
            if len(kept) >= MAX_ENTRIES:
                break
            if k not in kept and hmac.compare_digest(mac, self._mac(k, authority, when)):
                kept[k] = [authority, when, mac]  # a foreign or forged entry is dropped here
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            tmp.write_text(json.dumps({"format": FORMAT, "entries": kept}), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            return
