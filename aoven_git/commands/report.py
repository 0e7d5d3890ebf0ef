"""`aoven-git report`: files → validation → reconciliation → seals → analysis → one rendering.

The command only gathers inputs and picks a renderer; every number comes from analysis.py and
every word of presentation from render/. Inside a git repository it verifies the seals of the
same revision it reports on; outside one the report says the seals were not verified.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.errors import AovenError, UsageError
from aoven_git.model import Plan

#: --fail-on level → verdicts that make the command exit 1 (each level includes the ones before)
FAIL_ON = {
    "fail": {"FAIL"},
    "inconclusive": {"FAIL", "INCONCLUSIVE", "CONTESTED"},
    "not-ready": {"FAIL", "INCONCLUSIVE", "CONTESTED", "NOT-READY"},
}


def gather_sources(
    study: Study, plan: Plan, rev: str | None
) -> tuple[dict[str, bytes], set[str], dict[str, str] | None]:
    """Score/reconciliation files, symlinks, and (for --rev) the response texts of that commit."""
    from aoven_git import validation
    from aoven_git.scorefile import MAX_BYTES

    if rev is None:
        files, links = validation.work_tree_sources(study.root, plan)
        return files, links, None
    from aoven_git import gitio

    commit = gitio.resolve_commit(study.root, rev)
    if commit is None:
        raise UsageError(f"unknown revision {rev!r}")
    tree = gitio.tree_files(study.root, commit, plan.study_dir, limit=MAX_BYTES)
    from aoven_git.naming import classify

    files = {p: data for p, data in tree.items() if classify(plan, p).kind in validation.STUDY_KINDS}
    responses = {p: data.decode("utf-8", "replace") for p, data in tree.items() if p.endswith(".md")}
    return files, set(), responses


def seal_status(study: Study, rev: str | None) -> dict[str, Any] | None:
    """verify-seal's document, or None outside git. A history that cannot be verified (shallow
    clone, plan not committed…) is status "unverifiable": it keeps the verdict NOT-READY with the
    reason, and accuses nobody (a shallow clone is not a violation by any rater)."""
    if not study.in_git:
        return None
    from aoven_git.sealing import verify

    def unverifiable(message: str) -> dict[str, Any]:
        return {"ok": False, "status": "unverifiable", "message": message, "violations": [], "seals": []}

    plan_rel = study.relpath(study.plan_file)
    try:
        result = verify(study.root, plan_rel, rev or "HEAD").as_dict()
    except AovenError as exc:
        return unverifiable(str(exc))
    shallow = [v for v in result.get("violations", []) if v.get("code") == "shallow-history"]
    if shallow:
        return unverifiable(str(shallow[0].get("message") or "the clone is shallow"))
    return result


def build_report(
    study: Study, *, rev: str | None, round_id: str | None, bootstrap: int, seed: int
) -> dict[str, Any]:
    from aoven_git.analysis import analyse
    from aoven_git.reconciliation import parse_reconciliation
    from aoven_git.validation import validate_sources

    plan = study.plan
    files, links, responses = gather_sources(study, plan, rev)
    checked = validate_sources(
        plan, files, root=study.root if responses is None else None, symlinks=links, responses=responses
    )
    from aoven_git.naming import classify

    reconciliations = [
        parse_reconciliation(plan, path, data)
        for path, data in sorted(files.items())
        if classify(plan, path).kind == "reconciliation" and path not in links
    ]
    seals = seal_status(study, rev)
    data = analyse(
        plan,
        sheets=checked.sheets,
        reconciliations=reconciliations,
        round_id=round_id,
        seals=seals,
        validation=checked.as_dict(),
        bootstrap=bootstrap,
        seed=seed,
    )
    return data.as_dict()


def load_report(path: str) -> dict[str, Any]:
    """A report document written earlier by `report --format json`, for rendering it again
    without recomputing (the GitHub action renders HTML and Markdown from its one JSON run)."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path} is not a JSON report: {exc}") from None
    from aoven_git.analysis import SCHEMA

    if not isinstance(document, dict) or document.get("schema") != SCHEMA or "verdict" not in document:
        raise UsageError(f"{path} is not a report written by `aoven-git report --format json` ({SCHEMA})")
    return document


def render(document: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if fmt == "html":
        from aoven_git.render.html import render_html

        return render_html(document)
    from aoven_git.render.markdown import render_markdown

    return render_markdown(document)


@click.command("report")
@study_options
@click.option(
    "--rev",
    default=None,
    help="Report on the files and seals of this commit (default: work tree, seals of HEAD).",
)
@click.option("--round", "round_id", default=None, help="Round to report (default: the plan's first round).")
@click.option(
    "--format", "fmt", type=click.Choice(["markdown", "json", "html"]), default="markdown", show_default=True
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write to this file instead of standard output.",
)
@click.option(
    "--fail-on",
    type=click.Choice(list(FAIL_ON)),
    default=None,
    help="Exit 1 when the verdict is FAIL (fail), also INCONCLUSIVE/CONTESTED (inconclusive), "
    "also NOT-READY (not-ready). The report is written first.",
)
@click.option(
    "--bootstrap",
    type=click.IntRange(0, 100_000),
    default=1000,
    show_default=True,
    help="Bootstrap resamples for the kappa intervals (0: no intervals).",
)
@click.option(
    "--seed", type=int, default=20260426, show_default=True, help="Seed of the bootstrap resampling."
)
@click.option(
    "--from-json",
    "from_json",
    type=click.Path(dir_okay=False),
    default=None,
    help="Render a report saved earlier with --format json instead of computing it again.",
)
def command(
    study: Study,
    rev: str | None,
    round_id: str | None,
    fmt: str,
    output: str | None,
    fail_on: str | None,
    bootstrap: int,
    seed: int,
    from_json: str | None,
) -> int:
    """Agreement, verdict and charts for a round, as Markdown (GitHub job summary), JSON or a
    self-contained HTML page."""
    if from_json:
        document = load_report(from_json)
    else:
        document = build_report(study, rev=rev, round_id=round_id, bootstrap=bootstrap, seed=seed)
    text = render(document, fmt)
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
        click.echo(
            f"{document.get('summary') or document['verdict']}  (report written to {output})", err=True
        )
    else:
        click.echo(text, nl=False)
    if fail_on and document["verdict"] in FAIL_ON[fail_on]:
        return 1
    return 0
