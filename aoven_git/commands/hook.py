"""`aoven-git hook pre-commit`: check the staged index before a commit (docs/sealing.md, "The hook").

The command only gathers: the staged commit is checked by the very rules verify-seal applies to
history (`seal_report.check_staged` over HEAD and the index), and staged score and reconciliation
files are validated. Imports only what the check needs: never numpy or scipy.
"""

from __future__ import annotations

import os
from typing import Any

import click

from aoven_git.commands._common import PLAN_KEY, Study, study_options


def _plans(study: Study) -> tuple[str, object | None]:
    """The plan's repository path, and the plan the staged commit is judged by: the staged plan
    (the seal rules then use the plan as of the first seal, when there is one)."""
    from aoven_git import gitio
    from aoven_git.plan import parse_plan

    plan_rel = study.relpath(study.plan_file)
    # the index entry; when the plan is being removed, HEAD's (taking it out of the index must not
    # switch every check off)
    found = gitio.cat_file(study.root, [f":{plan_rel}", f"HEAD:{plan_rel}"])
    for spec, shown in ((f":{plan_rel}", "staged"), (f"HEAD:{plan_rel}", "HEAD")):
        obj = found.get(spec)
        if obj is not None and obj[0] == "blob":
            return plan_rel, parse_plan(obj[1], display=f"{plan_rel} ({shown})")
    return plan_rel, None  # no plan anywhere: not a study repository (yet)


#: reconciliation codes about rows still to come, not about the rows written: a reconciliation is
#: written by several commits (each rater their own rows), so only `validate` and the report judge
#: whether it is complete (docs/sealing.md, "The hook")
DEFERRED = ("missing-justification", "missing-consensus")


def _staged_keys(plan: Any, hist: Any) -> dict[str, bytes]:
    """The blind keys of the staged commit (pass id -> bytes), from the blobs the history read."""
    from aoven_git import naming

    staged = hist.nodes[-1].state
    return {p.id: hist.blobs.get(e.blob, b"") for p in plan.passes
            if p.blind and (e := staged.get(naming.blind_key_path(plan, p.id)))}


def _validation(study: Study, plan: object, hist: object, paths: list[str]) -> list[str]:
    """Errors of the staged score and reconciliation files, with quotes checked against the staged
    responses (read in one `cat-file`, only when there is something to validate). Every staged
    score file is read along: a reconciliation's flagged cells (where a wrong quote is an error)
    come from the scores, which this commit need not touch."""
    from aoven_git import gitio, naming
    from aoven_git.validation import StudyFiles, read_study

    if not paths:
        return []
    staged = hist.nodes[-1].state  # type: ignore[attr-defined]
    scores = [p for p in staged if naming.classify(plan, p).kind == "score"]  # type: ignore[arg-type]
    files = {p: hist.blobs.get(staged[p].blob, b"") for p in {*paths, *scores}}  # type: ignore[attr-defined]
    links = {p for p in files if staged[p].symlink}
    responses = naming.response_patterns(plan)  # type: ignore[arg-type]
    wanted = {p: e.blob for p, e in staged.items() if responses.match(p)}
    found = gitio.cat_file(study.root, list(wanted.values()))
    texts = {p: obj[1].decode("utf-8", "replace") for p, blob in wanted.items() if (obj := found.get(blob))}
    source = StudyFiles(plan, files, frozenset(links), _staged_keys(plan, hist), study.root, texts)  # type: ignore[arg-type]
    report = read_study(source).validation
    return [f"{f.path}:{f.line or 1}: {f.code}: {f.message}" for fr in report.files if fr.path in paths
            for f in fr.errors if not (fr.kind == "reconciliation" and f.code in DEFERRED)]


def _amend_hint(study: Study, paths: set[str]) -> set[str]:
    """Paths HEAD itself added: the user may be amending the commit that sealed them."""
    from aoven_git import gitio

    if not paths or gitio.resolve_commit(study.root, "HEAD~1") is None:
        return paths if paths and gitio.head_commit(study.root) else set()
    before = {p for p, _, _ in gitio.tree_entries(study.root, "HEAD~1")}
    return {p for p in paths if p not in before}


def row_warnings(plan: object, hist: object, paths: list[str], email: str) -> list[str]:
    """Reconciliation rows this commit writes for a rater it is not made by: they will count for
    nobody. A warning, not a refusal: it breaks no seal, but the cell then lacks that rater's own
    statement (docs/sealing.md, "Attributed consensus"). The staged commit's parents are HEAD and,
    while a merge is concluded, MERGE_HEAD: a row the merge carries from either is not written by
    it (`attribution.written`, the rule verify-seal applies)."""
    from aoven_git.reconciliation import rows_not_by

    nodes = hist.nodes  # type: ignore[attr-defined]
    out = []
    for path in paths:
        new = hist.blobs.get(nodes[-1].state[path].blob, b"")  # type: ignore[attr-defined]
        parents = [hist.blobs.get(e.blob) if (e := n.state.get(path)) else None  # type: ignore[attr-defined]
                   for n in nodes[:-1]]
        found = rows_not_by(plan, path, new, parents, email)  # type: ignore[arg-type]
        out += [f"{f.path}:{f.line}: {f.code}: {f.message}" for f in found]
    return out


def key_copies_elsewhere(study: Study, plan: Any, plan_rel: str, hist: Any) -> list[str]:
    """A staged file outside what the history model reads (outside the study folder) that copies
    a blind key — shaped as one, carrying a committed key's nonce, or stating one of its
    id–condition pairs (`key_copies`) — while a required rater of an overlapping pass has no
    seal: refused as `unsealed-readers`, as a copy
    inside the study folder is. Reads only staged files of at most 1 MiB, only for blind plans."""
    from aoven_git import gitio, ledger
    from aoven_git.key_copies import copied_passes, secret_of
    from aoven_git.model import SheetId
    from aoven_git.sealing import missing_seals

    blind = [p.id for p in plan.passes if p.blind]
    if not blind:
        return []
    secrets = [x for p, data in _staged_keys(plan, hist).items() if (x := secret_of(p, data))]
    writes = {path: blob for status, path, blob in gitio.staged_diff(study.root)
              if status != "D" and not ledger.tracked(plan, plan_rel, path)}
    data = gitio.read_small(study.root, writes.values(), ledger.CANDIDATE_BYTES) if writes else {}
    staged = set(hist.nodes[-1].state)
    out = []
    for path, blob in sorted(writes.items()):
        for p in copied_passes(blind, data.get(blob), secrets):
            missing = missing_seals(plan, SheetId("", p, plan.main_round.id), staged)
            if missing:
                out.append(f"{path}: unsealed-readers: a copy of pass {p}'s blind key, while required "
                           f"rater(s) {', '.join(missing)} have not sealed: they could read every item's "
                           "condition. Keep the key out of the repository (docs/blinding.md)")
    return out


def studies(study: Study) -> list[tuple[Study, bool]]:
    """The studies the hook checks, each with whether its plan must exist: the plan given with
    `--plan`; else every plan `install-hook --plan` recorded (`git config aoven-git.plan`), and
    `aoven.yaml` at the root when it exists too; else `aoven.yaml` at the root."""
    from dataclasses import replace

    from aoven_git import gitio

    default = study.root / "aoven.yaml"
    if study.plan_file != default:
        return [(study, True)]
    recorded = [r for r in gitio.config_values(study.root, PLAN_KEY) if r != "aoven.yaml"]
    found = [(replace(study, plan_file=study.root / r), True) for r in recorded]
    return [*found, (study, not found)]


def no_plan(study: Study) -> str:
    """Why nothing was checked: the hook must never pass silently for want of a plan."""
    shown = study.relpath(study.plan_file)
    return (f"no plan at {shown} (neither staged nor in HEAD): nothing was checked. If the plan lives "
            "elsewhere, run `aoven-git install-hook --plan <path>` (once per plan)")
def _token_changes(study: Study, plan: Any) -> list[str]:
    """Committed time-stamp tokens are write-once (docs/sealing.md, "Independent time anchors");
    one `git diff --cached` and only when the plan declares `security.timestamps`."""
    from aoven_git import gitio
    from aoven_git.timestamp_rules import timestamp_changed

    if plan.security.timestamps is None:
        return []
    return [f"{v.path}: {v.code}: {v.message}" for v in timestamp_changed(gitio.staged_changes(study.root))]


def messages(study: Study) -> tuple[list[str], list[str]]:
    """The problems that refuse the commit, and warnings that do not, over every study the hook
    checks (`studies`)."""
    problems: list[str] = []
    warnings: list[str] = []
    for one, required in studies(study):
        found = study_messages(one)
        if found is None:
            warnings += [no_plan(one)] if required else []
            continue
        problems += found[0]
        warnings += found[1]
    return problems, warnings


def study_messages(study: Study) -> tuple[list[str], list[str]] | None:
    """The problems and warnings of one study; None when its plan is neither staged nor in HEAD."""
    from aoven_git import ledger, naming
    from aoven_git.history import staged_history
    from aoven_git.plan import MAX_PLAN_BYTES
    from aoven_git.seal_report import check_staged
    from aoven_git.seals import FORCE_ENV

    plan_rel, plan = _plans(study)
    if plan is None:
        return None
    hist = staged_history(str(study.root), track=lambda p: ledger.tracked(plan, plan_rel, p),  # type: ignore[arg-type]
                          want_blob=ledger.want_blob(plan, plan_rel, MAX_PLAN_BYTES))  # type: ignore[arg-type]
    staged = hist.nodes[-1].state
    before = hist.nodes[0].state if len(hist.nodes) > 1 else {}
    changed = sorted(p for p in set(staged) | set(before) if staged.get(p) != before.get(p))
    elsewhere = key_copies_elsewhere(study, plan, plan_rel, hist) + _token_changes(study, plan)
    if not changed:
        return elsewhere, []
    kinds = {p: naming.classify(plan, p).kind for p in changed}  # type: ignore[arg-type]
    files = [p for p in changed if p in staged and kinds[p] in ("score", "reconciliation")]
    out = [*elsewhere, *_validation(study, plan, hist, files)]
    warnings = row_warnings(plan, hist, [p for p in files if kinds[p] == "reconciliation"],
                            hist.nodes[-1].email)
    violations = check_staged(plan, hist, plan_rel, forced=os.environ.get(FORCE_ENV) == "reveal")  # type: ignore[arg-type]
    amended = _amend_hint(study, {v.path for v in violations if v.path and v.code in (
        "modified-after-seal", "deleted-after-seal")})
    for v in violations:
        redo = (" (amending the commit that added it, before pushing? undo that commit with "
                "`git reset --soft HEAD~1` and commit again)") if v.path in amended else ""
        out.append(f"{v.path or plan_rel}: {v.code}: {v.message}{redo}")
    return out, warnings


@click.group("hook")
def command() -> None:
    """Git hook entry points."""


@command.command("pre-commit")
@study_options
def pre_commit(study: Study) -> int:
    """Refuse a commit that would break validation or the sealing rules."""
    from aoven_git.errors import CannotVerify

    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository")
    problems, warnings = messages(study)
    for w in warnings:
        click.echo(f"aoven-git pre-commit: warning: {w}", err=True)
    if not problems:
        return 0
    click.echo("aoven-git pre-commit: commit refused:", err=True)
    for p in problems:
        click.echo(f"  {p}", err=True)
    return 1
