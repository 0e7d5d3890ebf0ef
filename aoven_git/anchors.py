"""What verify-seal adds for time anchors (docs/sealing.md, "Independent time anchors"): the
tokens committed under `timestamps/` at the verified revision, each verified offline against the
certificates the plan pins (as committed with the first seal, like the rest of `security`), and
the commits that need one. The rules themselves are `timestamp_rules`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aoven_git import gitio, naming
from aoven_git.model import Plan, TimestampAuthority, Violation
from aoven_git.timestamp_cache import TimestampCache, pinned_digest
from aoven_git.timestamp_rules import AnchorFacts, Due, findings
from aoven_git.timestamps import (
    MAX_TOKEN_BYTES,
    TOKEN_DIR,
    Anchor,
    load_certificates,
    named_commit,
    verify_token,
)


def _pinned(plan: Plan, blobs: dict[str, bytes],
            at: str) -> tuple[list[tuple[str, list[object]]], list[str]]:
    """(url, certificates) per authority as committed at `at` (each certificate parsed once per
    run, and only when a token has to be verified), and the problems of those that cannot be
    read (a missing or malformed certificate pins nothing)."""
    pinned, problems = [], []
    for a in _authorities(plan):
        try:
            pinned.append((a.url, load_certificates(blobs[a.certificate])))
        except (KeyError, ValueError):
            problems.append(f"{a.certificate} (the certificate of {a.url}) is not a committed PEM "
                            f"certificate at {at[:10]}")
    return pinned, problems


def _authorities(plan: Plan) -> tuple[TimestampAuthority, ...]:
    stamps = plan.security.timestamps
    return stamps.authorities if stamps else ()


def _listing(root: Path, plan: Plan, commit: str,
             at: str) -> tuple[list[tuple[str, str, str]], dict[str, bytes]]:
    """(path, mode, blob) of every file under `timestamps/` at `commit`, and the certificate files
    committed at `at`: one `cat-file --batch` for both (the folder as its tree object), or an
    `ls-tree` more when the folder has sub-folders."""
    certs = {a.certificate: f"{at}:{a.certificate}" for a in _authorities(plan)}
    folder = f"{commit}:{TOKEN_DIR}"
    found = gitio.cat_file(root, [folder, *certs.values()])
    blobs = {p: obj[1] for p, spec in certs.items() if (obj := found.get(spec)) and obj[0] == "blob"}
    entries = gitio.flat_tree(TOKEN_DIR, found.get(folder), len(commit) // 2)
    if entries is None:
        entries = gitio.folder_entries(root, commit, TOKEN_DIR)
    return entries, blobs


def read_anchors(root: Path, plan: Plan, commit: str, at: str,
                 cache: TimestampCache | None = None) -> list[Anchor]:
    """Every file under `timestamps/` at `commit`, judged as a token of the commit it is named
    for, against the certificates pinned at `at`. A token `cache` holds a valid verdict for (same
    blob, commit, certificates, code) is not read nor verified again (timestamp_cache.py)."""
    entries, blobs = _listing(root, plan, commit, at)
    digest = pinned_digest([(a.url, blobs.get(a.certificate)) for a in _authorities(plan)])
    urls = {a.url for a in _authorities(plan)}
    judged: dict[str, Anchor] = {}
    todo: dict[str, str] = {}
    for path, mode, blob in entries:
        named = named_commit(path)
        if mode not in ("100644", "100755"):
            continue  # a symbolic link is never read
        hit = cache.get(cache.key(blob, named, digest), urls) if cache and named else None
        if hit is not None:
            judged[path] = Anchor(path, named or "", hit[0], hit[1])
        else:
            todo[path] = blob
    data = gitio.read_small(root, todo.values(), MAX_TOKEN_BYTES) if todo else {}
    if todo:
        judged.update(_verify(plan, blobs, at, {p: data[b] for p, b in todo.items() if b in data}))
        if cache is not None:
            for path, blob in todo.items():
                a = judged.get(path)
                if a is not None and a.valid and a.authority and a.time:
                    cache.put(cache.key(blob, a.commit, digest), a.authority, a.time)
    unreadable = f"a symbolic link or larger than {MAX_TOKEN_BYTES} bytes"
    unread = sorted(p for p, _, _ in entries if p not in judged)
    return ([Anchor(p, named_commit(p) or "", error=unreadable) for p in unread]
            + [judged[p] for p in sorted(judged)])


def _verify(plan: Plan, blobs: dict[str, bytes], at: str, files: dict[str, bytes]) -> dict[str, Anchor]:
    """Verify the tokens the cache could not answer for, with the certificates parsed once."""
    pinned, problems = _pinned(plan, blobs, at)
    out = {}
    for path in files:
        named = named_commit(path)
        if named is None:
            out[path] = Anchor(path, "", error="not a token file (timestamps/<commit>.tsr)")
        elif problems and not pinned:
            out[path] = Anchor(path, named, error="; ".join(problems))
        else:
            out[path] = verify_token(path, files[path], named, pinned)
    return out


def _due(plan: Plan, report: Any) -> list[Due]:
    """Seal commits, the commit of each blind pass's key (its unblinding) and the plan-freeze
    commit: what `required: true` asks to be anchored."""
    due = [Due(e["commit"], e["rater"], f"the seal of {e['rater']}'s {e['pass']}/{e['round']}")
           for e in report.timeline if e["event"].endswith("-seal")]
    led = report.ledger
    if led is not None:
        for p in (p for p in plan.passes if p.blind):
            due += [Due(led.nodes[i].sha, None, f"the unblinding of pass {p.id}")
                    for i in led.origins(naming.blind_key_path(plan, p.id), "add")]
    if report.first_seal:
        due.append(Due(report.first_seal, None, "the plan-freeze commit (the first seal)"))
    return due


def check(root: Path, commit: str, plan: Plan, report: Any) -> list[Violation]:
    """The time-anchor violations of the history verify-seal judged; fills `report.anchors`.
    Nothing to do when the plan (as of the first seal) declares no `security.timestamps`."""
    if plan.security.timestamps is None:
        return []
    cache = TimestampCache.open(gitio.git_dir(root))
    anchors = read_anchors(root, plan, commit, report.first_seal or commit, cache)
    cache.save()
    report.anchors = anchors
    facts = AnchorFacts(plan, tuple(anchors), tuple(_due(plan, report)), tuple(report.timeline))
    return findings(facts)
