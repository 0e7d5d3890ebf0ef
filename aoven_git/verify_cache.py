"""verify-seal's history cache (docs/sealing.md, "The history cache").

A team's CI verifies the same history on every pull request. The expensive part is git's
path-limited walk of every commit (`history.read_history`); what it returns for a commit C — the
listed commits of C's history, their rewritten parents, authors and raw changes — is a function
of C's history alone, which C's id names. This cache keeps that walk, for the last verified commit,
in `$GIT_DIR/aoven-git/history.cache` (outside the work tree: never committed, never pushed), so
that re-verifying a descendant T walks only `T ^C` (`history.read_history`).

Why it cannot hide a violation:

- the entry is found only by a key that hashes aoven-git's version, the cache format, the
  repository's git dir and the exact pathspecs of the walk (the plan's study folder, plan path,
  allowed-signers file, …): an upgrade, another repository or a plan that changes what is walked
  misses, and the history is walked in full;
- it is used only when C is an ancestor of the verified commit and every commit of `T ^C`
  descends from C (then git's topological order of T's history is the new commits followed by
  C's, so the model is the one a full walk builds, byte for byte in the report); a rewritten
  ancestor (a force-push) makes C no ancestor, and the history is walked in full;
- blobs and commit messages are never cached: they are read again by id on every run, and git
  runs with replacement objects and grafts switched off (`gitio`), so a replace ref added after
  the cache was written changes nothing;
- the entry carries an HMAC-SHA256 under a secret of this user's kept in `$AOVEN_GIT_HOME`
  (`timestamp_cache`'s way): a planted or hand-edited file is ignored.

A file that cannot be read or fails any check is ignored (never an error) and rewritten after the
walk. No git call here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoven_git import __version__

FORMAT = "aoven-git history cache 1"
FILE = Path("aoven-git") / "history.cache"
SECRET = "history-cache.key"


@dataclass(frozen=True)
class Walk:
    """What a full walk of `commit` found: its raw records (history._Raw fields, in git's order)
    and, when `commit` itself is not listed, the listed commit it stands for ("" for none; None
    when that could not be established)."""

    commit: str
    raws: list[list[Any]]
    alias: str | None


def key(git_dir: Path, pathspecs: list[str]) -> str:
    """What a walk depends on besides its commit: the code, the repository and the pathspecs."""
    parts = (FORMAT, __version__, str(git_dir.resolve()), *pathspecs)
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _secret(create: bool) -> bytes | None:
    from aoven_git.sealed_copies import home_secret

    return home_secret(SECRET, create=create)


def _mac(secret: bytes, cache_key: str, payload: str) -> str:
    return hmac.new(secret, (cache_key + "\0" + payload).encode("utf-8", "surrogateescape"),
                    hashlib.sha256).hexdigest()


def load(git_dir: Path, cache_key: str) -> Walk | None:
    """The cached walk under `cache_key` with a good HMAC, else None."""
    secret = _secret(create=False)
    if secret is None:
        return None
    try:
        doc = json.loads((git_dir / FILE).read_bytes())
        payload, mac = doc["payload"], doc["mac"]
        if doc.get("format") != FORMAT or doc.get("key") != cache_key or not isinstance(payload, str):
            return None
        if not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(secret, cache_key, payload)):
            return None
        body = json.loads(payload)
        walk = Walk(body["commit"], body["raws"], body["alias"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return walk if _well_formed(walk) else None


def _well_formed(walk: Walk) -> bool:
    """Every field of the shape `save` writes (a signed file of another shape is never used)."""
    def strings(items: object, n: int | None = None) -> bool:
        return (isinstance(items, list) and (n is None or len(items) == n)
                and all(isinstance(x, str) for x in items))

    return (isinstance(walk.commit, str) and (walk.alias is None or isinstance(walk.alias, str))
            and isinstance(walk.raws, list)
            and all(isinstance(r, list) and len(r) == 4 and isinstance(r[0], str) and strings(r[1])
                    and isinstance(r[2], str) and isinstance(r[3], list) and all(strings(c, 3) for c in r[3])
                    for r in walk.raws))


def save(git_dir: Path, cache_key: str, walk: Walk) -> None:
    """Keep `walk` (the one entry of the file); a file that cannot be written is left (no error)."""
    secret = _secret(create=True)
    if secret is None:
        return
    payload = json.dumps({"commit": walk.commit, "raws": walk.raws, "alias": walk.alias},
                         separators=(",", ":"))
    doc = {"format": FORMAT, "key": cache_key, "payload": payload, "mac": _mac(secret, cache_key, payload)}
    path = git_dir / FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(doc), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return
