"""What a report is computed from (docs/design.md, "The report reads what was verified").

Inside git the report reads the study files of the verified revision — the committed blobs of the
same commit verify-seal checked — never silently the work tree: a rater editing a revealed file
without committing it must not move the verdict under a "every seal verified" line. Uncommitted
changes to study files are listed and keep the verdict NOT-READY, unless `--work-tree` asks for a
preview, which the report then labels as computed from uncommitted files. Every report states the
revision, whether the work tree was clean, the tool version and when it was generated.

The key of each blind pass is read from the same place as the score files (the committed tree, or
the work tree for a preview), as part of the one `validation.StudyFiles` every command reads
(docs/design.md, "One reading of a study"): the report maps the pass's cells back through it, and
without it the pass is pending (docs/blinding.md, "What the report shows").
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aoven_git import __version__, gitio, naming
from aoven_git.errors import AovenError, PlanError, UsageError
from aoven_git.model import Plan
from aoven_git.validation import StudyFiles, revision_study, work_tree_study

STUDY_FILE_KINDS = ("score", "seal", "reconciliation", "stray", "blind-item", "blind-key", "blind-key-seal")


@dataclass
class Inputs:
    plan: Plan
    study: StudyFiles  # the files, links, response texts and blind keys of one source
    source: dict[str, Any]
    blockers: list[str] = field(default_factory=list)
    commit: str | None = None  # the revision whose history verifies the seals and attributes the rows


def generated_at() -> str:
    """Now, in UTC; `SOURCE_DATE_EPOCH` (reproducible builds' convention) fixes it for tests."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch and epoch.isdigit() else datetime.now(UTC)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _source(revision: str | None, *, git: bool, work_tree: bool, dirty: list[str] | None,
            rev: str | None = None) -> dict[str, Any]:
    return {"git": git, "revision": revision, "rev": rev, "work_tree": work_tree,
            "clean": None if dirty is None else not dirty, "uncommitted": dirty or [],
            "version": __version__, "generated_at": generated_at()}


def uncommitted(root: Path, plan: Plan, plan_path: str) -> list[str]:
    """Study files (score, seal, reconciliation, response, copies, blind corpus) and the plan that
    differ from HEAD in the index or the work tree, or are not tracked yet."""
    responses = naming.response_patterns(plan)
    out = []
    for status, path in [*gitio.status_paths(root, plan.study_dir), *gitio.status_paths(root, plan_path)]:
        kind = naming.classify(plan, path).kind
        if path == plan_path or kind in STUDY_FILE_KINDS or responses.match(path):
            out.append(f"{path} ({status})")
    return sorted(set(out))


def _work_tree(study: Any, plan: Plan, *, git: bool) -> Inputs:
    head = gitio.head_commit(study.root) if git else None
    dirty = uncommitted(study.root, plan, study.relpath(study.plan_file)) if git else None
    source = _source(head, git=git, work_tree=True, dirty=dirty)
    return Inputs(plan, work_tree_study(study.root, plan), source, commit=head)


def _committed(study: Any, rev: str | None) -> Inputs:
    from aoven_git.sealing import committed_plan

    commit = gitio.resolve_commit(study.root, rev or "HEAD")
    if commit is None:
        if rev is not None:
            raise UsageError(f"unknown revision {rev!r}")
        inputs = _work_tree(study, study.plan, git=True)  # nothing committed yet: say so, show the files
        inputs.blockers.append("the repository has no commit yet: commit the plan and the study files "
                               "(the report is computed from the committed revision)")
        return inputs
    plan_path = study.relpath(study.plan_file)
    try:
        plan = committed_plan(study.root, plan_path, commit)
    except PlanError as exc:
        if rev is not None or "not committed" not in exc.message:
            raise
        # nothing committed to report on yet: show the work tree, and say why it cannot count
        inputs = _work_tree(study, study.plan, git=True)
        inputs.blockers.append(f"{exc.message} ({plan_path})")
        return inputs
    dirty = uncommitted(study.root, plan, plan_path) if rev is None else None
    inputs = Inputs(plan, revision_study(study.root, plan, commit),
                    _source(commit, git=True, work_tree=False, dirty=dirty, rev=rev), commit=commit)
    if dirty:
        inputs.blockers.append(_dirty_blocker(plan, dirty, commit))
    return inputs


def _dirty_blocker(plan: Plan, dirty: list[str], commit: str) -> str:
    """Why uncommitted study files keep the report NOT-READY, and what to do. A score sheet is
    never committed by hand: `seal` commits its digest and `reveal` the sheet once everyone has
    sealed (docs/sealing.md), so "commit them" would tell a rater to break the seal."""
    shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
    sheets = any(naming.classify(plan, d.rsplit(" (", 1)[0]).kind == "score" for d in dirty)
    fix = ("seal score sheets (`aoven-git seal`; `aoven-git reveal` commits them once everyone has sealed, "
           "never commit one by hand), commit the other files" if sheets else "commit them")
    return (f"uncommitted changes to study files ({shown}): the report is computed from the committed "
            f"revision {commit[:10]}; {fix}, or preview the work tree with `report --work-tree` "
            "(marked unverified)")


def gather(study: Any, *, rev: str | None, work_tree: bool) -> Inputs:
    """The files, plan and provenance of the revision a report is computed from."""
    if work_tree and rev is not None:
        raise UsageError("--work-tree and --rev exclude each other: --rev reads a commit, --work-tree the "
                         "uncommitted files")
    if not study.in_git:
        return _work_tree(study, study.plan, git=False)
    if work_tree:
        return _work_tree(study, study.plan, git=True)
    return _committed(study, rev)


def seal_status(study: Any, commit: str | None) -> dict[str, Any] | None:
    """verify-seal's document for `commit`, or None outside git. A history that cannot be verified
    (shallow clone, plan not committed…) is status "unverifiable": it keeps the verdict NOT-READY
    with the reason, and accuses nobody (a shallow clone is not a violation by any rater)."""
    if not study.in_git:
        return None
    from aoven_git.sealing import verify

    def unverifiable(message: str) -> dict[str, Any]:
        return {"ok": False, "status": "unverifiable", "message": message, "violations": [], "seals": []}

    if commit is None:
        return unverifiable("the repository has no commit yet")
    try:
        result = verify(study.root, study.relpath(study.plan_file), commit).as_dict()
    except AovenError as exc:
        return unverifiable(str(exc))
    shallow = [v for v in result.get("violations", []) if v.get("code") == "shallow-history"]
    if shallow:
        return unverifiable(str(shallow[0].get("message") or "the clone is shallow"))
    return result
