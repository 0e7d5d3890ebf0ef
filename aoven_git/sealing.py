"""Seal, reveal and verify: the I/O around the pure rules of `seal_rules`.

`verify` reads everything from commits (the plan too, as committed at the verified revision),
so what it checks is what a reviewer of that revision sees, not a local work tree.
"""

from __future__ import annotations

import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from aoven_git import gitio, naming
from aoven_git.errors import CannotVerify, FindingsError, PlanError, UsageError
from aoven_git.model import Plan, SheetId, Violation
from aoven_git.seal_rules import (
    FORCE_TRAILER,
    REVEAL_TRAILER,
    SEAL_TRAILER,
    SealReport,
    check,
    format_seal,
    parse_seal,
    sha256,
    tracked,
)

#: environment variable `reveal --force` sets for its own commit so the pre-commit hook lets the
#: recorded override through (the commit carries an `Aoven-Force: reveal` trailer)
FORCE_ENV = "AOVEN_GIT_FORCE"


# --------------------------------------------------------------------------- verify


def verify(root: Path, plan_path: str, rev: str = "HEAD") -> SealReport:
    """Check SPEC §5.2 on the history of `rev`; the plan is read from that commit."""
    top = gitio.find_root(root)
    if top is None:
        raise CannotVerify(f"{root} is not inside a git repository: nothing to verify")
    root = top
    commit = gitio.resolve_commit(root, rev)
    if gitio.is_shallow(root):
        report = SealReport(commit)
        report.violations.append(Violation(
            "shallow-history", None, commit,
            "the clone is shallow, so ancestry cannot be checked: run `git fetch --unshallow` "
            "(in GitHub Actions: actions/checkout with fetch-depth: 0)"))
        return report
    if commit is None:
        kind = gitio.describe_non_commit(root, rev)
        if kind is not None:
            raise UsageError(f"--rev {rev!r} names a {kind}, not a commit: give a commit, branch or tag")
        if rev == "HEAD":
            raise UsageError("HEAD has no commit yet (a new repository or an unborn branch): "
                             "commit the plan first, or name a commit with --rev")
        raise UsageError(f"unknown revision {rev!r} (no such commit, branch or tag)")
    blob = gitio.cat_file(root, [f"{commit}:{plan_path}"]).get(f"{commit}:{plan_path}")
    if blob is None or blob[0] != "blob":
        raise PlanError(f"the plan is not committed at {rev} ({commit[:10]}): commit it before scoring",
                        path=plan_path)
    from aoven_git.plan import parse_plan

    plan = parse_plan(blob[1], display=f"{plan_path}@{commit[:10]}")

    from aoven_git.history import read_history

    def want(path: str) -> bool:
        return path == plan_path or naming.classify(plan, path).kind in ("score", "seal")

    hist = read_history(str(root), commit, study_dir=plan.study_dir, plan_path=plan_path,
                        track=lambda p: tracked(plan, plan_path, p), want_blob=want)
    report = check(plan, hist, plan_path)
    report.git_calls += 4  # show-toplevel, rev-parse, is-shallow, plan blob
    if plan.security.require_signed:
        _check_signatures(root, plan, commit, report)
    return report


def _check_signatures(root: Path, plan: Plan, commit: str, report: SealReport) -> None:
    signers_path = plan.security.allowed_signers or ""
    obj = gitio.cat_file(root, [f"{commit}:{signers_path}"]).get(f"{commit}:{signers_path}")
    if obj is None or obj[0] != "blob":
        raise PlanError(f"security.allowed_signers: {signers_path} is not committed at {commit[:10]}",
                        path=plan.path)
    with tempfile.TemporaryDirectory(prefix="aoven-signers-") as tmp:
        signers = Path(tmp) / "allowed_signers"
        signers.write_bytes(obj[1])
        for sha, rater_id in dict.fromkeys(report.to_sign):
            ok, text = gitio.verify_commit(root, sha, signers)
            rater = plan.rater(rater_id)
            emails = {e.lower() for e in rater.emails} if rater else set()
            signer = _ssh_principal(text)
            if not ok:
                why = text.splitlines()[-1] if text else "no signature"
                report.violations.append(Violation(
                    "unsigned-commit", rater_id, sha,
                    f"seal/reveal commit of {rater_id} has no good signature: {why}"))
            elif signer is not None and emails and signer.lower() not in emails:
                report.violations.append(Violation(
                    "unsigned-commit", rater_id, sha,
                    f"seal/reveal commit of {rater_id} is signed by {signer}, "
                    f"not by one of {rater_id}'s emails"))


def _ssh_principal(text: str) -> str | None:
    marker = 'Good "git" signature for '
    for line in text.splitlines():
        if marker in line:
            return line.split(marker, 1)[1].split(" with ", 1)[0].strip()
    return None


# --------------------------------------------------------------------------- seal / reveal


@dataclass(frozen=True)
class Target:
    sheet: SheetId
    score: str  # repository-relative score file
    seal: str  # repository-relative seal file


def target(plan: Plan, rater: str | None, pass_id: str | None, round_id: str | None,
           file: str | None = None) -> Target:
    """Which sheet the user means, from --rater/--pass/--round or a score file path."""
    if file is not None:
        c = naming.classify(plan, file)
        if c.kind == "other" and not file.startswith(plan.study_dir.rstrip("/") + "/"):
            raise UsageError(f"{file} is outside the study dir {plan.study_dir}/: "
                             "only score files there are sealed")
        if c.kind != "score":
            raise UsageError(f"{file} is not a score file "
                             f"(scores_<rater>[_<round>][_<pass>].md in {plan.study_dir}/)")
        if c.sheet is None:
            raise UsageError(c.problem or f"{file} names no rater of the plan")
        sheet = c.sheet
        if rater and rater != sheet.rater:
            raise UsageError(f"{file} belongs to rater {sheet.rater}, not {rater}")
        return Target(sheet, file, naming.seal_path(plan, sheet))
    if not rater:
        raise UsageError("say which rater: --rater ID (or give the score file)")
    if plan.rater(rater) is None:
        raise UsageError(f"unknown rater {rater!r} (plan raters: {', '.join(r.id for r in plan.raters)})")
    p = pass_id or plan.primary_pass.id
    if plan.pass_(p) is None:
        raise UsageError(f"unknown pass {p!r} (plan passes: {', '.join(x.id for x in plan.passes)})")
    r = round_id or plan.main_round.id
    if plan.round_(r) is None:
        raise UsageError(f"unknown round {r!r} (plan rounds: {', '.join(x.id for x in plan.rounds)})")
    sheet = SheetId(rater, p, r)
    return Target(sheet, naming.score_path(plan, sheet), naming.seal_path(plan, sheet))


def _read_regular(root: Path, rel: str) -> bytes:
    path = root / rel
    if path.is_symlink():
        raise FindingsError(f"{rel} is a symbolic link: seal the file itself, not a link to it")
    if not path.is_file():
        raise FindingsError(f"{rel} does not exist: write the score file first (`aoven-git sheet`)")
    return path.read_bytes()


def _check_identity(root: Path, plan: Plan, rater_id: str, what: str) -> None:
    rater = plan.rater(rater_id)
    emails = {e.lower() for e in rater.emails} if rater else set()
    me = gitio.user_email(root)
    if emails and (me or "").lower() not in emails:
        raise FindingsError(
            f"your git identity <{me}> is not one of {rater_id}'s emails ({', '.join(sorted(emails))}); "
            f"a {what} commit by it would be reported as unauthorized-author. "
            f"Set it with `git config user.email …` first.")


def _sealed_in_head(head: dict[str, bytes], plan: Plan, sheet: SheetId) -> bool:
    return naming.seal_path(plan, sheet) in head or naming.score_path(plan, sheet) in head


@dataclass(frozen=True)
class SealResult:
    target: Target
    digest: str
    nonce: str
    commit: str | None  # None with --no-commit (staged only)
    unstaged: bool = False  # the plaintext score file had been `git add`ed and was taken out again


def seal(root: Path, plan: Plan, tgt: Target, *, commit: bool = True) -> SealResult:
    """Validate the score file, write a fresh nonce into it, write and commit (or stage) its seal.

    Refuses, changing nothing, when the file is invalid, a link, already committed or already sealed.
    """
    head = gitio.head_blobs(root, [tgt.score, tgt.seal])
    if tgt.score in head:
        raise FindingsError(f"{tgt.score} is already committed: its content is public and was sealed by "
                            "that commit (content seal); there is nothing left to seal")
    if tgt.seal in head:
        raise FindingsError(f"{tgt.seal} is already committed: {tgt.sheet} is sealed. "
                            f"Reveal it with `aoven-git reveal --rater {tgt.sheet.rater}` "
                            "once everyone has sealed")
    data = _read_regular(root, tgt.score)
    if commit:
        _check_identity(root, plan, tgt.sheet.rater, "seal")
    from aoven_git.scorefile import set_front_matter
    from aoven_git.validation import validate_sources

    nonce = secrets.token_hex(16)
    sealed = set_front_matter(data, nonce=nonce)
    report = validate_sources(plan, {tgt.score: sealed}, root=root)
    if not report.ok:
        lines = [f"  {f.path}:{f.line or 1}: {f.code}: {f.message}"
                 for fr in report.files for f in fr.errors]
        raise FindingsError(f"{tgt.score} is not valid; fix it before sealing (nothing was changed):\n"
                            + "\n".join(lines))
    digest = sha256(sealed)
    name = tgt.score.rsplit("/", 1)[1]
    score_file, seal_file = root / tgt.score, root / tgt.seal
    old_seal = seal_file.read_bytes() if seal_file.exists() else None
    score_file.write_bytes(sealed)
    seal_file.parent.mkdir(parents=True, exist_ok=True)
    seal_file.write_bytes(format_seal(digest, name, tgt.sheet))
    try:
        gitio.add(root, [tgt.seal])
        sha = None
        if commit:
            s = tgt.sheet
            message = (f"Seal {s.rater}'s {s.pass_id}/{s.round_id} scores (digest only)\n\n"
                       f"{SEAL_TRAILER}: {s.rater}/{s.pass_id}/{s.round_id}\n")
            sha = gitio.commit_only(root, [tgt.seal], message)
    except Exception:
        # put everything back as it was: the score file without the nonce, no seal staged
        score_file.write_bytes(data)
        gitio.run_git(["reset", "-q", "--", tgt.seal], root, check=False)
        if old_seal is None:
            seal_file.unlink(missing_ok=True)
        else:
            seal_file.write_bytes(old_seal)
        raise
    # A plaintext copy left staged (say, by a commit the hook refused) would be committed by the
    # next plain `git commit`: take it out of the index; the work-tree file (with nonce) stays.
    unstaged = bool(gitio.staged_blobs(root, [tgt.score])) and tgt.score not in head
    if unstaged:
        gitio.run_git(["rm", "-q", "--cached", "-f", "--", tgt.score], root)  # index only
    return SealResult(tgt, digest, nonce, sha, unstaged)


@dataclass(frozen=True)
class RevealResult:
    target: Target
    commit: str
    forced: bool
    unsealed: tuple[str, ...]


def reveal(root: Path, plan: Plan, tgt: Target, *, force: bool = False) -> RevealResult:
    """Commit the plaintext score file once every required rater of its pass and round has sealed
    in HEAD and its bytes match the digest. `force` overrides only the first condition and is
    recorded in the commit (`Aoven-Force: reveal`)."""
    s = tgt.sheet
    others = [naming.seal_path(plan, SheetId(r.id, s.pass_id, s.round_id)) for r in plan.required_raters]
    others += [naming.score_path(plan, SheetId(r.id, s.pass_id, s.round_id)) for r in plan.required_raters]
    head = gitio.head_blobs(root, [tgt.score, tgt.seal, *others])
    if tgt.score in head:
        raise FindingsError(f"{tgt.score} is already committed (revealed)")
    if tgt.seal not in head:
        raise FindingsError(f"{s} is not sealed in HEAD ({tgt.seal} is not committed): "
                            f"run `aoven-git seal --rater {s.rater}` first")
    parsed = parse_seal(head[tgt.seal])
    if isinstance(parsed, tuple):
        raise FindingsError(f"{tgt.seal}:{parsed[0]}: corrupt seal file: {parsed[1]}")
    data = _read_regular(root, tgt.score)
    got = sha256(data)
    if got != parsed.digest:
        raise FindingsError(f"{tgt.score} changed since it was sealed (SHA-256 {got[:12]}… ≠ sealed "
                            f"{parsed.digest[:12]}…): reveal the exact sealed bytes; "
                            "changes belong in an amendment")
    missing = tuple(r.id for r in plan.required_raters
                    if r.id != s.rater
                    and not _sealed_in_head(head, plan, SheetId(r.id, s.pass_id, s.round_id)))
    if missing and not force:
        raise FindingsError(f"not every required rater of {s.pass_id}/{s.round_id} has sealed in HEAD "
                            f"(missing: {', '.join(missing)}); revealing now would let them read "
                            "your scores. "
                            "Wait, merge their seals, or override with --force (recorded in the commit)")
    _check_identity(root, plan, s.rater, "reveal")
    message = (f"Reveal {s.rater}'s {s.pass_id}/{s.round_id} scores\n\n"
               f"{REVEAL_TRAILER}: {s.rater}/{s.pass_id}/{s.round_id}\n")
    if missing:
        message += f"{FORCE_TRAILER}: reveal (unsealed: {', '.join(missing)})\n"
    gitio.add(root, [tgt.score])
    import os

    old = os.environ.get(FORCE_ENV)
    if missing:
        os.environ[FORCE_ENV] = "reveal"
    try:
        sha = gitio.commit_only(root, [tgt.score], message)
    except Exception:
        gitio.run_git(["reset", "-q", "--", tgt.score], root, check=False)
        raise
    finally:
        if missing:
            if old is None:
                os.environ.pop(FORCE_ENV, None)
            else:
                os.environ[FORCE_ENV] = old
    return RevealResult(tgt, sha, bool(missing), missing)
