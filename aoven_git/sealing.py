"""Seal, reveal and verify: the I/O around the pure rules of `seal_rules` (docs/sealing.md).

`verify` reads everything from commits (the plan too, as committed at the verified revision and at
the first seal), so what it checks is what a reviewer of that revision sees, not a local work tree.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from aoven_git import gitio, naming
from aoven_git.errors import CannotVerify, FindingsError, PlanError, UsageError
from aoven_git.model import Plan, Reconciliation, SheetId, Violation
from aoven_git.seal_report import SealReport, check
from aoven_git.seals import (
    FORCE_ENV,
    FORCE_TRAILER,
    REVEAL_TRAILER,
    SEAL_TRAILER,
    format_seal,
    parse_seal,
    sha256,
)

# --------------------------------------------------------------------------- verify


def _commit_of(root: Path, rev: str) -> str:
    commit = gitio.resolve_commit(root, rev)
    if commit is not None:
        return commit
    kind = gitio.describe_non_commit(root, rev)
    if kind is not None:
        raise UsageError(f"--rev {rev!r} names a {kind}, not a commit: give a commit, branch or tag")
    if rev == "HEAD":
        raise UsageError("HEAD has no commit yet (a new repository or an unborn branch): "
                         "commit the plan first, or name a commit with --rev")
    raise UsageError(f"unknown revision {rev!r} (no such commit, branch or tag)")


def committed_plan(root: Path, plan_path: str, commit: str) -> Plan:
    """The plan as committed at `commit` (size-capped before parsing)."""
    from aoven_git.plan import parse_plan

    blob = gitio.cat_file(root, [f"{commit}:{plan_path}"]).get(f"{commit}:{plan_path}")
    if blob is None or blob[0] != "blob":
        raise PlanError(f"the plan is not committed at {commit[:10]}: commit it before scoring",
                        path=plan_path)
    return parse_plan(blob[1], display=f"{plan_path}@{commit[:10]}")


def last_readable_plan(root: Path, plan_path: str, commit: str, error: PlanError) -> Plan:
    """When the plan at the verified revision cannot be read (too large, broken, an alias bomb),
    history is still judged: by the newest committed version that reads (the rules then use the
    plan of the first seal and report the broken one as a change). Three git calls; `error` is
    raised again when no version reads."""
    from aoven_git.history import parse_log
    from aoven_git.plan import MAX_PLAN_BYTES, parse_plan

    raws = parse_log(gitio.log_raw(root, commit, [f":(literal){plan_path}"]))
    blobs = [new.split(" ")[1] for r in raws for status, path, new in r.changes
             if path == plan_path and status != "D"]
    found = gitio.read_small(root, blobs, MAX_PLAN_BYTES)
    for blob in (b for b in blobs if b in found):
        try:
            return parse_plan(found[blob], display=f"{plan_path} ({blob[:10]})")
        except PlanError:
            continue
    raise error


def verify(root: Path, plan_path: str, rev: str = "HEAD") -> SealReport:
    """Check the sealing rules on the history of `rev`; the plan is read from that commit."""
    from aoven_git import ledger
    from aoven_git.history import read_history
    from aoven_git.plan import MAX_PLAN_BYTES

    top = gitio.find_root(root)
    if top is None:
        raise CannotVerify(f"{root} is not inside a git repository: nothing to verify")
    root = top
    if gitio.is_shallow(root):
        report = SealReport(gitio.resolve_commit(root, rev))
        report.violations.append(Violation(
            "shallow-history", None, report.commit,
            "the clone is shallow, so ancestry cannot be checked: run `git fetch --unshallow` "
            "(in GitHub Actions: actions/checkout with fetch-depth: 0)"))
        return report
    commit = _commit_of(root, rev)
    try:
        plan = committed_plan(root, plan_path, commit)
    except PlanError as exc:
        if "not committed" in exc.message:
            raise
        plan = last_readable_plan(root, plan_path, commit, exc)
    hist = read_history(str(root), commit, pathspecs=ledger.pathspecs(plan, plan_path),
                        track=lambda p: ledger.tracked(plan, plan_path, p),
                        want_blob=ledger.want_blob(plan, plan_path, MAX_PLAN_BYTES),  # type: ignore[arg-type]
                        cache=gitio.git_dir(root))
    report = check(plan, hist, plan_path)
    report.git_calls += 4  # find root, shallow, rev-parse, plan blob
    judged = report.plan or plan
    if judged.security.require_signed:
        signers = str(judged.security.allowed_signers)
        if report.signers_blob is None and report.first_seal and signers != plan.security.allowed_signers:
            # the plan at the verified revision names another signers file (a violation already):
            # the one of the first seal was not part of the history read, so read it directly
            spec = f"{report.first_seal}:{signers}"
            found = gitio.cat_file(root, [spec]).get(spec)
            report.signers_blob = found[1] if found else None
        if gitio.cat_file(root, [f"{commit}:{signers}"]).get(f"{commit}:{signers}") is None:
            raise PlanError(f"security.allowed_signers: {signers} is not committed at {commit[:10]}; "
                            "commit the allowed-signers file with the plan", path=plan_path)
        _check_signatures(root, judged, report)
    attribute_rows(root, commit, judged, report)
    if judged.security.timestamps is not None:
        from aoven_git.anchors import check as anchor_check

        report.violations.extend(anchor_check(root, commit, judged, report))
    if any(p.blind for p in judged.passes):
        from aoven_git.blind_corpus import corpus_violations, key_copy_violations

        report.violations.extend(corpus_violations(root, judged, commit))
        if report.ledger is not None:
            report.violations.extend(key_copy_violations(root, judged, commit, report.ledger))
    return report


def attribute_rows(root: Path, commit: str, plan: Plan, report: SealReport) -> None:
    """Whose statement each reconciliation row at `commit` is, from the file's history row by row
    (docs/sealing.md, "Attributed consensus"): no git call beyond reading the files at `commit`,
    and one `git log` for signatures when the plan requires them. Fills `report.rows` and
    `report.unattributed`."""
    from aoven_git.attribution import attribute
    from aoven_git.reconciliation import parse_reconciliation

    led = report.ledger
    specs = {p: f"{commit}:{p}" for p in report.reconciliation_paths}
    found = gitio.cat_file(root, list(specs.values())) if specs else {}
    files = {p: obj[1] for p, s in specs.items() if (obj := found.get(s)) is not None and obj[0] == "blob"}
    report.git_calls += 1 if specs else 0
    if led is None:
        return
    signed = _row_signatures(root, plan, report, [n.sha for n in led.nodes
                                                  if any(p in n.state for p in report.reconciliation_paths)])
    groups: dict[object, list[str]] = {}  # a reconciliation sheet may move between its accepted names
    for path in report.reconciliation_paths:
        groups.setdefault(led.roles[path].sheet, []).append(path)
    for paths in groups.values():
        versions = _versions(led, plan, paths, signed)
        present = [p for p in paths if p in files] or paths[:1]
        for path in present:
            # a file gone at `commit` has no rows, but rows its raters wrote may have been removed
            rec = (parse_reconciliation(plan, path, files[path]) if path in files
                   else Reconciliation(path, "", "", ()))
            rec, unattributed = attribute(plan, rec, versions, led.before)
            report.unattributed += unattributed
            report.rows += [{"path": path, "line": r.line, "cell": str(r.key), "rater": r.rater,
                             "attributed": r.attributed, "author": r.author} for r in rec.rows]


def _versions(led: object, plan: Plan, paths: list[str],
              signed: dict[str, tuple[str, str]] | None) -> list[object]:
    """Each history node's statements in the reconciliation files `paths` (the accepted names of
    one reconciliation sheet): each blob read once, and from a parent's version when it differs
    from it only in table rows (`statement_history`: cost grows with the changed rows, not with
    commits × rows)."""
    from aoven_git.attribution import Version
    from aoven_git.statement_history import StatementHistory

    readers = {path: StatementHistory(plan, path) for path in paths}
    nodes = led.nodes  # type: ignore[attr-defined]
    out = []
    for n in nodes:
        statements: dict[tuple[str, str], tuple[str, object]] = {}
        for path in paths:
            entry = n.state.get(path)
            if entry is None:
                continue
            parent = next((e.blob for q in n.parents if (e := nodes[q].state.get(path)) is not None), None)
            data = led.hist.blobs.get(entry.blob, b"")  # type: ignore[attr-defined]
            for key, value in readers[path].read(entry.blob, data, parent).items():
                statements.setdefault(key, value)
        sig = signed.get(n.sha, ("N", "")) if signed is not None else None
        out.append(Version(n.index, n.parents, n.email, statements,
                           None if sig is None else sig[0] == "G", sig[1] if sig else ""))
    return out


def _row_signatures(root: Path, plan: Plan, report: SealReport,
                    shas: list[str]) -> dict[str, tuple[str, str]] | None:
    if not plan.security.require_signed or not shas:
        return None
    if report.signers_blob is None:
        return {}
    path = gitio.write_temp(report.signers_blob, "aoven-signers-")
    try:
        return gitio.signatures(root, shas, path)
    finally:
        path.unlink(missing_ok=True)


def _signing_scopes(report: SealReport) -> dict[tuple[str, str], list[str | None]]:
    """Per (commit, rater) to sign, where an unsigned commit blocks (`seal_rules.scopes`): the
    study when any of its sheets is the study's, else each amendment whose re-scores it holds."""
    from aoven_git.model import SheetId
    from aoven_git.seal_rules import scopes

    found: dict[tuple[str, str], list[SheetId]] = {}
    for sha, rater, amendment in report.to_sign:
        found.setdefault((sha, rater), []).append(SheetId(rater, "", "", amendment))
    return {k: scopes(v) for k, v in found.items()}


def _check_signatures(root: Path, plan: Plan, report: SealReport) -> None:
    """`unsigned-commit` for every seal and reveal without a good signature by its rater, under the
    allowed-signers file as it was committed at the first seal (one git call for all commits)."""
    signers = report.signers_blob
    scopes = _signing_scopes(report)
    if signers is None:
        for (sha, rater), where in scopes.items():
            report.violations.extend(Violation(
                "unsigned-commit", rater, sha,
                f"security.allowed_signers ({plan.security.allowed_signers}) is not committed at the first "
                "seal: no signature can be checked", None, amendment) for amendment in where)
        return
    path = gitio.write_temp(signers, "aoven-signers-")
    try:
        status = gitio.signatures(root, [sha for sha, _ in scopes], path)
    finally:
        path.unlink(missing_ok=True)
    report.git_calls += 1
    for (sha, rater_id), where in scopes.items():
        code, signer = status.get(sha, ("N", ""))
        rater = plan.rater(rater_id)
        emails = {e.lower() for e in rater.emails} if rater else set()
        why = None
        if code != "G":
            why = "has no good signature: " + {
                "N": "no signature", "U": "signed by a key that is not in the allowed signers",
                "B": "bad signature"}.get(code, f"signature status {code}")
        elif emails and signer.lower() not in emails:
            why = f"is signed by {signer}, not by one of {rater_id}'s emails"
        if why:
            report.violations.extend(Violation("unsigned-commit", rater_id, sha,
                                               f"seal/reveal commit of {rater_id} {why}", None, amendment)
                                     for amendment in where)


# --------------------------------------------------------------------------- seal / reveal


@dataclass(frozen=True)
class Target:
    sheet: SheetId
    score: str  # repository-relative score file
    seal: str  # repository-relative seal file


def target(plan: Plan, rater: str | None, pass_id: str | None, round_id: str | None,
           file: str | None = None, amendment: str | None = None) -> Target:
    """Which sheet the user means, from --rater/--pass/--round[/--amendment] or a score file path."""
    if file is not None:
        tgt = _target_of_file(plan, rater, file)
        if amendment is not None and tgt.sheet.amendment != amendment:
            raise UsageError(f"{file} is not a file of amendment {amendment} "
                             f"({naming.sheet_dir(plan, amendment)}/)")
        return tgt
    if not rater:
        raise UsageError("say which rater: --rater ID (or give the score file)")
    if plan.rater(rater) is None:
        raise UsageError(f"unknown rater {rater!r} (plan raters: {', '.join(r.id for r in plan.raters)})")
    passes = _passes_of(plan, amendment)
    p = pass_id or (plan.primary_pass.id if plan.primary_pass.id in passes else passes[0])
    if p not in passes:
        scope = f"amendment {amendment} re-scores" if amendment else "plan"
        raise UsageError(f"unknown pass {p!r} ({scope} passes: {', '.join(passes)})")
    r = round_id or plan.main_round.id
    if plan.round_(r) is None:
        raise UsageError(f"unknown round {r!r} (plan rounds: {', '.join(x.id for x in plan.rounds)})")
    sheet = SheetId(rater, p, r, amendment)
    return Target(sheet, naming.score_path(plan, sheet), naming.seal_path(plan, sheet))


def _passes_of(plan: Plan, amendment: str | None) -> tuple[str, ...]:
    if amendment is None:
        return tuple(p.id for p in plan.passes)
    a = plan.amendment(amendment)
    if a is None:
        known = ", ".join(x.id for x in plan.amendments) or "none yet: append one to `amendments:`"
        raise UsageError(f"unknown amendment {amendment!r} (plan amendments: {known})")
    return a.passes


def _target_of_file(plan: Plan, rater: str | None, file: str) -> Target:
    c = naming.classify(plan, file)
    if not file.startswith(plan.study_dir.rstrip("/") + "/"):
        raise UsageError(f"{file} is outside the study dir {plan.study_dir}/: "
                         "only score files there are sealed")
    if c.kind != "score":
        raise UsageError(f"{file} is not a score file "
                         f"(scores_<rater>[_<round>][_<pass>].md in {plan.study_dir}/)")
    if c.sheet is None:
        raise UsageError(c.problem or f"{file} names no rater of the plan")
    if rater and rater != c.sheet.rater:
        raise UsageError(f"{file} belongs to rater {c.sheet.rater}, not {rater}")
    return Target(c.sheet, file, naming.seal_path(plan, c.sheet))


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
    if not emails:
        raise FindingsError(
            f"rater {rater_id} has no e-mails in the plan: nothing they commit could be shown to be theirs "
            f"(their reconciliation rows would never count). Add `emails: [...]` to {rater_id} in the plan "
            "before the first seal freezes it (nothing was changed)")
    me = gitio.user_email(root)
    if emails and (me or "").lower() not in emails:
        raise FindingsError(
            f"your git identity <{me}> is not one of {rater_id}'s emails ({', '.join(sorted(emails))}); "
            f"a {what} commit by it would be reported as unauthorized-author. "
            f"Set it with `git config user.email …` first.")


def readable_before_seal(root: Path, plan: Plan, plan_path: str, sheet: SheetId) -> list[str]:
    """Every commit in HEAD's history that made another rater's scores of an overlapping pass (or
    a reconciliation, or a blind pass's key) readable — a copy in a notes file, a reveal deleted
    again: read with verify-seal's own ledger, so a seal now could only be `visible-at-seal`. A
    stray copy whose rater nobody can tell (a CSV export in the study folder, before its sheet is
    revealed) counts too: it may be anyone's scores, so nobody can seal after it unseen."""
    from aoven_git import ledger
    from aoven_git.history import read_history
    from aoven_git.plan import MAX_PLAN_BYTES
    from aoven_git.seal_rules import concerns, judge

    head = gitio.head_commit(root)
    if head is None:
        return []
    hist = read_history(str(root), head, pathspecs=ledger.pathspecs(plan, plan_path),
                        track=lambda p: ledger.tracked(plan, plan_path, p),
                        want_blob=ledger.want_blob(plan, plan_path, MAX_PLAN_BYTES))  # type: ignore[arg-type]
    led, _ = judge(plan, hist, plan_path)
    return [*(f"{pt.path} ({led.short(pt.node)})" for pt in led.plaintext if concerns(led.plan, sheet, pt)),
            *(f"{s.path} ({led.short(s.node)}, a copy of scores of no known rater: stray-scores)"
              for s in led.strays if s.sheet is None)]


def readiness_problems(plan: Plan, sheet: SheetId, head_paths: set[str]) -> list[str]:
    """Why the plan may not be frozen yet: the first seal freezes it, so the round's questions must
    be written and every response of the pass committed."""
    from aoven_git.coverage import PLACEHOLDER

    rnd, p = plan.round_(sheet.round_id), plan.pass_(sheet.pass_id)
    if rnd is None or p is None:
        return []
    out = [f"question {q} still has a placeholder text ({plan.question(q).text!r}): write it before "  # type: ignore[union-attr]
           "anyone seals" for q in rnd.questions if PLACEHOLDER.match(plan.question(q).text)]  # type: ignore[union-attr]
    responses = (f"{plan.study_dir}/{plan.response_path(c, q, stripped=p.stripped, replicate=r)}"
                 for q in rnd.questions for c in p.conditions for r in plan.replicate_ids)
    missing = [path for path in responses if path not in head_paths]
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        hint = " (run `aoven-git strip-markers` and commit the copies)" if p.stripped else ""
        out.append(f"responses of pass {p.id} are not committed: {shown}{hint}")
    return out


def _refuse_unready(root: Path, plan: Plan, tgt: Target, plan_path: str) -> None:
    head = gitio.head_commit(root)
    head_paths = [p for p, _, _ in gitio.tree_entries(root, head)] if head else []
    if plan_path not in head_paths:
        raise FindingsError(f"the plan ({plan_path}) is not committed: commit the plan and the responses "
                            "before anyone seals (the first seal freezes the plan)")
    # an amendment re-scores after the reveals: the plan was frozen long before
    problems = [] if tgt.sheet.amendment else readiness_problems(plan, tgt.sheet, set(head_paths))
    if problems:
        raise FindingsError("the plan is not ready to be frozen by a first seal (nothing was changed):\n  "
                            + "\n  ".join(problems))
    _refuse_out_of_order(plan, tgt.sheet, set(head_paths))
    seen = readable_before_seal(root, plan, plan_path, tgt.sheet)
    if seen:
        raise FindingsError(
            f"other raters' scores (or a blind key) of an overlapping pass are already in HEAD "
            f"({', '.join(seen[:3])}): a "
            f"seal now could only be a visible-at-seal violation, since {tgt.sheet.rater} could have read "
            "them. "
            "Nothing was changed.")


def _refuse_out_of_order(plan: Plan, sheet: SheetId, head_paths: set[str]) -> None:
    """A pass with `after: [P]` is sealed only once the rater's sheet of P (same round) is sealed
    in HEAD: this seal would be the first commit of the sheet, so it could only be a `pass-order`
    violation (docs/sealing.md, "Pass order")."""
    from aoven_git.pass_order_rules import unsealed_earlier

    missing = unsealed_earlier(plan, sheet, head_paths)
    if not missing:
        return
    first = missing[0]
    args = f"--rater {first.rater} --pass {first.pass_id}"
    args += "" if first.round_id == plan.main_round.id else f" --round {first.round_id}"
    args += f" --amendment {first.amendment}" if first.amendment else ""
    names = ", ".join(f"{m.pass_id}/{m.round_id}" for m in missing)
    raise FindingsError(
        f"{sheet.rater} has not sealed {names} in HEAD, and the plan orders {sheet.pass_id} after it "
        f"(`after: [{', '.join(m.pass_id for m in missing)}]`): a seal of {sheet.pass_id} now could only "
        f"be a pass-order violation. Seal it first (`aoven-git seal {args}`). Nothing was changed.")


@dataclass(frozen=True)
class SealResult:
    target: Target
    digest: str
    nonce: str
    commit: str | None  # None with --no-commit (staged only)
    unstaged: bool = False  # the plaintext score file had been `git add`ed and was taken out again
    stored: bytes = b""  # the sealed bytes as git stores them (their SHA-256 is `digest`)


def seal(root: Path, plan: Plan, tgt: Target, *, commit: bool = True,
         plan_path: str = "aoven.yaml") -> SealResult:
    """Validate the score file, write a fresh nonce into it, write and commit (or stage) its seal.

    Refuses, changing nothing, when the file is invalid, a link, already committed or already sealed,
    when the plan is not ready to be frozen, or when another rater's scores are already readable.
    """
    head = gitio.head_blobs(root, [tgt.score, tgt.seal])
    refuse_uncommitted_plan(root, plan_path)
    if tgt.score in head:
        raise FindingsError(f"{tgt.score} is already committed: its content is public and was sealed by "
                            "that commit (content seal); there is nothing left to seal")
    if tgt.seal in head:
        raise FindingsError(f"{tgt.seal} is already committed: {tgt.sheet} is sealed. Reveal it with "
                            f"`aoven-git reveal --rater {tgt.sheet.rater}` once everyone has sealed")
    data = _read_regular(root, tgt.score)
    _refuse_unready(root, plan, tgt, plan_path)
    if commit:
        _check_identity(root, plan, tgt.sheet.rater, "seal")
    sealed = _sealed_bytes(root, plan, tgt, data)
    return _write_and_commit(root, tgt, data, sealed, commit, head)


def refuse_uncommitted_plan(root: Path, plan_path: str) -> None:
    """The first seal freezes the plan *as committed*, and verify-seal judges every seal by the
    committed plan: sealing with an edited, uncommitted plan would check the sheet against rules
    nobody else can see (docs/commands.md, `seal`)."""
    if gitio.head_commit(root) is not None and gitio.changed_against_head(root, plan_path):
        raise PlanError(f"the plan differs from the one committed in HEAD (changed in the work tree or "
                        f"staged): commit it (`git commit -- {plan_path}`) or undo the change "
                        f"(`git checkout HEAD -- {plan_path}`) before sealing. Nothing was changed.",
                        path=plan_path)


def _sealed_bytes(root: Path, plan: Plan, tgt: Target, data: bytes) -> bytes:
    from aoven_git.scorefile import set_front_matter
    from aoven_git.validation import validate_sources

    s = tgt.sheet  # the file says whose it is: two raters' sealed bytes can never be equal
    identity = {"rater": s.rater, "pass": s.pass_id, "round": s.round_id}
    if s.amendment:
        identity["amendment"] = s.amendment
    # the file as the rater wrote it is checked (its lines are the ones in their editor), then
    # the file with its identity and nonce, which is what is sealed
    for candidate in (data, set_front_matter(data, **identity, nonce=secrets.token_hex(16))):
        report = validate_sources(plan, {tgt.score: candidate}, root=root)
        if not report.ok:
            lines = [f"  {f.path}:{f.line or 1}: {f.code}: {f.message}"
                     for fr in report.files for f in fr.errors]
            raise FindingsError(f"{tgt.score} is not valid; fix it before sealing (nothing was changed):\n"
                                + "\n".join(lines))
    return candidate


def _refuse_blocked_path(root: Path, tgt: Target) -> None:
    """A file where the seals folder should be, or a folder where the seal file should be: say
    which path is in the way before anything is written."""
    seal_file = root / tgt.seal
    for parent in reversed(seal_file.relative_to(root).parents[:-1]):
        if (root / parent).exists() and not (root / parent).is_dir():
            raise FindingsError(f"{parent.as_posix()} is a file, where the folder of {tgt.seal} must be: "
                                "move it away (nothing was changed)")
    if seal_file.is_dir() or seal_file.is_symlink():
        raise FindingsError(f"{tgt.seal} is a folder or a link, where the seal file must be written: move it "
                            "away (nothing was changed)")


def _write_and_commit(root: Path, tgt: Target, data: bytes, sealed: bytes, commit: bool,
                      head: dict[str, bytes]) -> SealResult:
    _refuse_blocked_path(root, tgt)
    score_file, seal_file = root / tgt.score, root / tgt.seal
    old_seal = seal_file.read_bytes() if seal_file.exists() else None
    score_file.write_bytes(sealed)
    try:
        stored = gitio.stored_bytes(root, tgt.score)  # what git will store, after eol conversion
        digest = sha256(stored)
        nonce = _nonce_of(sealed)
        seal_file.parent.mkdir(parents=True, exist_ok=True)
        seal_file.write_bytes(format_seal(digest, tgt.score.rsplit("/", 1)[1], tgt.sheet))
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
    return SealResult(tgt, digest, nonce, sha, unstaged, stored)


def _nonce_of(data: bytes) -> str:
    from aoven_git.scorefile import front_matter

    return str(front_matter(data).get("nonce", ""))


@dataclass(frozen=True)
class RevealResult:
    target: Target
    commit: str
    forced: bool
    unsealed: tuple[str, ...]
    restored_from: Path | None = None  # the kept copy `--restore` wrote back
    edited_kept: Path | None = None  # where the edited file it replaced was put


def unsealed_sheets(plan: Plan, sheet: SheetId, head_paths: set[str]) -> list[SheetId]:
    """Per required rater, the first sheet that must be sealed before this one is readable
    (`seal_rules.must_precede`: overlapping study passes; for re-scores also the amendment's own)
    and is neither sealed nor committed in HEAD. A withdrawn rater is waited for no longer."""
    from aoven_git.seal_rules import must_precede

    _passes_of(plan, sheet.amendment)  # an unknown amendment is a usage error
    out = []
    for r in plan.waited_for:
        if r.id == sheet.rater:
            continue
        out += [other for other in must_precede(plan, r.id, sheet.pass_id, sheet.round_id, sheet.amendment)
                if not {naming.seal_path(plan, other), naming.score_path(plan, other)} & head_paths][:1]
    return out


def missing_seals(plan: Plan, sheet: SheetId, head_paths: set[str]) -> tuple[str, ...]:
    """The required raters of `unsealed_sheets`."""
    return tuple(s.rater for s in unsealed_sheets(plan, sheet, head_paths))


def _sheet_to_restore(root: Path, tgt: Target, digest: str, restore: bool,
                     args: str) -> tuple[Path, bytes] | None:
    """None when the work-tree sheet is the sealed one; the kept copy to write back when it is
    lost or edited and `restore` asks for it; otherwise a refusal that says which, shows the
    difference and names the way out (docs/sealing.md, "Lost or edited sheets")."""
    from aoven_git import sealed_copies

    path = root / tgt.score
    if path.is_symlink():
        raise FindingsError(f"{tgt.score} is a symbolic link: reveal the file itself, not a link to it")
    if path.exists() and not path.is_file():
        raise FindingsError(f"{tgt.score} is not a file: move it away and put the sealed sheet back")
    current = path.read_bytes() if path.exists() else None
    if current is not None:
        stored = sha256(gitio.stored_bytes(root, tgt.score))
        if stored == digest:
            return None
        if sha256(current) == digest:
            raise FindingsError(_attributes_changed(tgt.score, stored))
    copy = sealed_copies.find(root, tgt.sheet, digest)
    if restore and copy is not None:
        return copy
    raise FindingsError(sealed_copies.unrevealable(tgt.score, tgt.sheet, current, copy, args))


def _attributes_changed(score: str, stored: str) -> str:
    """The sheet is byte for byte what was sealed, but git would store other bytes: a
    `.gitattributes` line changed since the first seal (docs/sealing.md,
    "Line endings and .gitattributes")."""
    return (f"{score} is byte for byte the file that was sealed, but git would now store other bytes "
            f"for it (SHA-256 {stored[:12]}…): a .gitattributes line (text, eol, filter…) that covers the "
            "study files changed since the first seal. Restore the .gitattributes of the first seal "
            "(`aoven-git verify-seal` names the lines: attributes-changed-after-seal) and reveal again; "
            "nothing was changed")


def _restore(root: Path, tgt: Target, copy: tuple[Path, bytes]) -> Path | None:
    """Write the kept copy back; an edited file it replaces is kept beside the copy, not lost."""
    from aoven_git import sealed_copies

    path = root / tgt.score
    edited = sealed_copies.keep_edited(copy[0], path.read_bytes()) if path.is_file() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(copy[1])
    return edited


def reveal(root: Path, plan: Plan, tgt: Target, *, force: bool = False, restore: bool = False,
           args: str = "") -> RevealResult:
    """Commit the plaintext score file once every required rater has sealed every overlapping pass
    in HEAD and its bytes (as git stores them) match the digest. `force` overrides only the first
    condition and is recorded in the commit (`Aoven-Force: reveal`); `restore` writes a lost or
    edited sheet back from the copy `seal` kept, once every other check has passed. `args` is how
    the user names the sheet on the command line, for the messages."""
    s = tgt.sheet
    head_commit = gitio.head_commit(root)
    head_paths = {p for p, _, _ in gitio.tree_entries(root, head_commit)} if head_commit else set()
    head = gitio.head_blobs(root, [tgt.score, tgt.seal])
    if tgt.score in head:
        raise FindingsError(f"{tgt.score} is already committed (revealed)")
    if tgt.seal not in head:
        raise FindingsError(f"{s} is not sealed in HEAD ({tgt.seal} is not committed): "
                            f"run `aoven-git seal --rater {s.rater}` first")
    parsed = parse_seal(head[tgt.seal])
    if isinstance(parsed, tuple):
        raise FindingsError(f"{tgt.seal}:{parsed[0]}: corrupt seal file: {parsed[1]}")
    copy = _sheet_to_restore(root, tgt, parsed.digest, restore, args or f"--rater {s.rater}")
    unsealed = unsealed_sheets(plan, s, head_paths)
    missing = tuple(u.rater for u in unsealed)
    if unsealed and not force:
        what = f"{s.pass_id}/{s.round_id}" + (f" of amendment {s.amendment}" if s.amendment else "")
        raise FindingsError(
            f"not every required rater has sealed what must precede {what} in HEAD (missing: "
            f"{', '.join(f'{u.rater} ({u})' for u in unsealed)}); revealing now would let them read your "
            "scores. Wait (pull their seals), or override with --force (recorded in the commit)")
    _check_identity(root, plan, s.rater, "reveal")
    message = (f"Reveal {s.rater}'s {s.pass_id}/{s.round_id} scores\n\n"
               f"{REVEAL_TRAILER}: {s.rater}/{s.pass_id}/{s.round_id}\n")
    if missing:
        message += f"{FORCE_TRAILER}: reveal (unsealed: {', '.join(missing)})\n"
    edited = _restore(root, tgt, copy) if copy is not None else None
    gitio.add(root, [tgt.score])
    try:
        sha = gitio.commit_only(root, [tgt.score], message, env={FORCE_ENV: "reveal"} if missing else None)
    except Exception:
        gitio.run_git(["reset", "-q", "--", tgt.score], root, check=False)
        raise
    return RevealResult(tgt, sha, bool(missing), missing, copy[0] if copy else None, edited)


__all__ = ["FORCE_ENV", "Target", "reveal", "seal", "target", "verify"]
