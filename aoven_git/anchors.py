"""What verify-seal adds for time anchors (docs/sealing.md, "Independent time anchors"): the
tokens committed under `timestamps/` at the verified revision, each verified offline against the
certificates the plan pins (as committed with the first seal, like the rest of `security`), and
the commits that need one. The rules themselves are `timestamp_rules`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aoven_git import gitio, naming
from aoven_git.model import Plan, Violation
from aoven_git.timestamp_rules import AnchorFacts, Due, findings
from aoven_git.timestamps import (
    MAX_TOKEN_BYTES,
    TOKEN_DIR,
    Anchor,
    load_certificates,
    named_commit,
    verify_token,
)


def _pinned(root: Path, plan: Plan, at: str) -> tuple[list[tuple[str, list[object]]], list[str]]:
    """(url, certificates) per authority as committed at `at`, and the problems of those that
    cannot be read (a missing or malformed certificate pins nothing)."""
    stamps = plan.security.timestamps
    authorities = stamps.authorities if stamps else ()
    blobs = gitio.head_blobs(root, [a.certificate for a in authorities], at)
    pinned, problems = [], []
    for a in authorities:
        try:
            pinned.append((a.url, load_certificates(blobs[a.certificate])))
        except (KeyError, ValueError):
            problems.append(f"{a.certificate} (the certificate of {a.url}) is not a committed PEM "
                            f"certificate at {at[:10]}")
    return pinned, problems


def read_anchors(root: Path, plan: Plan, commit: str, at: str) -> list[Anchor]:
    """Every file under `timestamps/` at `commit`, judged as a token of the commit it is named
    for, against the certificates pinned at `at`."""
    files, unread = gitio.folder_blobs(root, commit, TOKEN_DIR, limit=MAX_TOKEN_BYTES)
    pinned, problems = _pinned(root, plan, at)
    unreadable = f"a symbolic link or larger than {MAX_TOKEN_BYTES} bytes"
    out = [Anchor(path, named_commit(path) or "", error=unreadable) for path in sorted(unread)]
    for path in sorted(files):
        named = named_commit(path)
        if named is None:
            out.append(Anchor(path, "", error="not a token file (timestamps/<commit>.tsr)"))
        elif problems and not pinned:
            out.append(Anchor(path, named, error="; ".join(problems)))
        else:
            out.append(verify_token(path, files[path], named, pinned))
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
    anchors = read_anchors(root, plan, commit, report.first_seal or commit)
    report.anchors = anchors
    facts = AnchorFacts(plan, tuple(anchors), tuple(_due(plan, report)), tuple(report.timeline))
    return findings(facts)
