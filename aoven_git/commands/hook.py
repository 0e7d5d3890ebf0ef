"""`aoven-git hook pre-commit`: check the staged index before a commit (SPEC §5.3).

Imports only what the check needs (click, the plan loader, the score-file parser): never numpy
or scipy, so the hook stays fast on every commit.
"""

from __future__ import annotations

import os

import click

from aoven_git.commands._common import Study, study_options


@click.group("hook")
def command() -> None:
    """Git hook entry points."""


def _messages(study: Study) -> list[str]:
    from aoven_git import gitio, naming
    from aoven_git.model import SheetId
    from aoven_git.plan import parse_plan
    from aoven_git.seal_rules import locked_changes, locked_view, parse_seal, sha256
    from aoven_git.sealing import FORCE_ENV

    root = study.root
    plan_rel = study.relpath(study.plan_file)
    changes = gitio.staged_changes(root)
    staged_plan = gitio.staged_blobs(root, [plan_rel]).get(plan_rel)
    if staged_plan is None:
        return []  # no plan in the index: not a study repository (yet)
    plan = parse_plan(staged_plan, display=f"{plan_rel} (staged)")
    kinds = {p: naming.classify(plan, p) for _, p in changes}
    study_changes = [(s, p) for s, p in changes if kinds[p].kind != "other" or p == plan_rel]
    if not study_changes:
        return []
    head_study = set(gitio.head_tree_paths(root, plan.study_dir))
    sealed_in_head = any(naming.classify(plan, p).kind in ("score", "seal") for p in head_study)
    out: list[str] = []

    # 1. staged score and reconciliation files must be valid
    staged_paths = [p for s, p in study_changes if s != "D" and kinds[p].kind in ("score", "reconciliation")]
    if staged_paths:
        from aoven_git.validation import validate_sources

        blobs = gitio.staged_blobs(root, [plan.study_dir])
        links = gitio.staged_symlinks(root, [plan.study_dir])
        responses = {p: b.decode("utf-8", "replace") for p, b in blobs.items()
                     if p.endswith(".md") and naming.classify(plan, p).kind == "other"}
        report = validate_sources(plan, {p: blobs[p] for p in staged_paths}, root=root,
                                  symlinks=links & set(staged_paths), responses=responses)
        for fr in report.files:
            out += [f"{f.path}:{f.line or 1}: {f.code}: {f.message}" for f in fr.errors]

    # 2. sealed files never change; score content only once others could seal against it
    def in_head(sheet: SheetId) -> bool:
        return naming.seal_path(plan, sheet) in head_study or naming.score_path(plan, sheet) in head_study

    seal_blobs = gitio.head_blobs(root, [naming.seal_path(plan, k.sheet) for _, p in study_changes
                                         if (k := kinds[p]).kind == "score" and k.sheet is not None])
    staged_scores = [p for s, p in study_changes if s != "D" and kinds[p].kind == "score"]
    staged_blobs = gitio.staged_blobs(root, staged_scores)
    staged_sheets = {kinds[p].sheet for s, p in study_changes if s != "D" and kinds[p].kind == "score"}
    forced = os.environ.get(FORCE_ENV) == "reveal"
    frozen = [p for _, p in study_changes if p in head_study and p != plan_rel
              and (kinds[p].kind == "seal" or (kinds[p].kind == "score" and kinds[p].sheet is not None))]
    # a file HEAD itself added may be under `git commit --amend` (the hook cannot tell): say how to
    # redo an unpushed seal honestly instead of leaving the user stuck
    added_by_head = set(frozen) - set(gitio.head_blobs(root, frozen, rev="HEAD~1")) if frozen else set()

    def redo(path: str) -> str:
        return (" (amending the commit that added it, before pushing? undo that commit with "
                "`git reset --soft HEAD~1` and commit again)") if path in added_by_head else ""

    for status, path in study_changes:
        k = kinds[path]
        if path == plan_rel:
            continue
        if k.kind == "seal" and path in head_study:
            out.append(f"{path}: a committed seal file must never change or disappear (would be "
                       f"{'deleted' if status == 'D' else 'modified'}-after-seal){redo(path)}")
        if k.kind != "score" or k.sheet is None:
            continue
        if path in head_study:
            out.append(f"{path}: sealed score file must never change or disappear; put corrections in an "
                       f"amendment file instead{redo(path)}")
            continue
        if status == "D":
            continue
        seal_file = naming.seal_path(plan, k.sheet)
        if seal_file in seal_blobs:
            parsed = parse_seal(seal_blobs[seal_file])
            if not isinstance(parsed, tuple) and sha256(staged_blobs.get(path, b"")) != parsed.digest:
                out.append(f"{path}: staged bytes do not match the digest sealed in {seal_file} "
                           "(reveal exactly what was sealed)")
        missing = [r.id for r in plan.required_raters
                   if r.id != k.sheet.rater and not in_head(SheetId(r.id, k.sheet.pass_id, k.sheet.round_id))]
        together = [s.rater for s in staged_sheets if s and s.rater != k.sheet.rater
                    and (s.pass_id, s.round_id) == (k.sheet.pass_id, k.sheet.round_id)]
        if together:
            out.append(f"{path}: commits {k.sheet.rater}'s scores together with "
                       f"{', '.join(sorted(together))}'s "
                       "(sealed-together); commit each rater's file on its own")
        elif missing and not forced:
            who = k.sheet.rater
            where = f"{k.sheet.pass_id}/{k.sheet.round_id}"
            out.append(f"{path}: {who}'s {where} scores cannot be committed yet: "
                       f"required rater(s) {', '.join(missing)} have not sealed that pass in HEAD and could "
                       f"read {who}'s scores before fixing their own. Seal with a digest instead "
                       f"(aoven-git seal --rater {who}"
                       + ("" if k.sheet.pass_id == plan.primary_pass.id else f" --pass {k.sheet.pass_id}")
                       + "), and reveal once everyone has sealed")

    # 3. locked plan keys are frozen once the first seal is committed
    if sealed_in_head and any(p == plan_rel for _, p in study_changes):
        head_plan = gitio.head_blobs(root, [plan_rel]).get(plan_rel)
        changed = locked_changes(locked_view(head_plan), locked_view(staged_plan))
        if changed:
            out.append(f"{plan_rel}: locked plan keys cannot change after the first seal: "
                       f"{'; '.join(changed)}")
    return out


@command.command("pre-commit")
@study_options
def pre_commit(study: Study) -> int:
    """Refuse a commit that would break validation or the sealing rules."""
    from aoven_git.errors import CannotVerify

    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository")
    problems = _messages(study)
    if not problems:
        return 0
    click.echo("aoven-git pre-commit: commit refused:", err=True)
    for p in problems:
        click.echo(f"  {p}", err=True)
    return 1
