"""`aoven-git report`: files → validation → reconciliation → seals → analysis → amendments → one
rendering.

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
from aoven_git.errors import UsageError

#: --fail-on level → verdicts that make the command exit 1 (each level includes the ones before)
FAIL_ON = {
    "fail": {"FAIL"},
    "inconclusive": {"FAIL", "INCONCLUSIVE", "CONTESTED"},
    "not-ready": {"FAIL", "INCONCLUSIVE", "CONTESTED", "NOT-READY"},
}


def build_report(
    study: Study, *, rev: str | None, round_id: str | None, bootstrap: int, seed: int,
    work_tree: bool = False, seals: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report document. `seals` is verify-seal's document for the revision read, when the
    caller has it already (`status`: one history read for both); else it is read here."""
    from aoven_git.amendments import explore
    from aoven_git.analysis import analyse
    from aoven_git.report_inputs import gather, seal_status
    from aoven_git.validation import read_study

    inputs = gather(study, rev=rev, work_tree=work_tree)
    plan = inputs.plan
    reading = read_study(inputs.study)  # the one reading of a study (docs/design.md)
    checked = reading.validation
    data = analyse(
        plan,
        sheets=reading.sheets,
        reconciliations=reading.reconciliations,
        round_id=round_id,
        seals=seals if seals is not None and seals.get("commit") == inputs.commit else seal_status(
            study, inputs.commit),
        validation=checked.as_dict(),
        bootstrap=bootstrap,
        seed=seed,
        source=inputs.source,
        blockers=inputs.blockers,
        blind_keys=inputs.study.keys,
    )
    return explore(data, checked.amendment_sheets).as_dict()


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


SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".json": "json", ".html": "html", ".htm": "html"}


def _accepted() -> str:
    return ", ".join(SUFFIXES)


def output_formats(outputs: tuple[str, ...], fmt: str, explicit: bool) -> list[tuple[str, str]]:
    """(path, format) of each -o. A single file takes --format when it is given, else its suffix's
    format, else (no suffix) markdown; several files each take their suffix's. A suffix that names
    no format we write (`report.pdf`) is refused: the file would hold Markdown under a name that
    promises something else. Checked before anything is computed or written."""
    out = []
    for path in outputs:
        suffix = Path(path).suffix.lower()
        found = SUFFIXES.get(suffix)
        if found is None and suffix:
            raise UsageError(f"-o {path}: aoven-git cannot write {suffix} files; the accepted suffixes "
                             f"are {_accepted()} (or no suffix, with --format)")
        if len(outputs) == 1:
            return [(path, fmt if explicit or found is None else found)]
        if found is None:
            raise UsageError(f"-o {path}: with several outputs each file's format comes from its suffix "
                             f"({_accepted()})")
        out.append((path, found))
    return out


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
    help="Report on the committed files and seals of this commit (default: HEAD).",
)
@click.option(
    "--work-tree",
    "work_tree",
    is_flag=True,
    help="Preview from the uncommitted files of the work tree (the report says it is unverified).",
)
@click.option("--round", "round_id", default=None, help="Round to report (default: the plan's first round).")
@click.option(
    "--format", "fmt", type=click.Choice(["markdown", "json", "html"]), default="markdown", show_default=True
)
@click.option(
    "-o",
    "--output",
    "outputs",
    type=click.Path(dir_okay=False, writable=True),
    multiple=True,
    help="Write to this file instead of standard output; repeat it to write several formats in one "
    "run (each file's format from its suffix: .md, .json, .html).",
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
    work_tree: bool,
    round_id: str | None,
    fmt: str,
    outputs: tuple[str, ...],
    fail_on: str | None,
    bootstrap: int,
    seed: int,
    from_json: str | None,
) -> int:
    """Agreement, verdict and charts for a round, as Markdown (GitHub job summary), JSON or a
    self-contained HTML page, computed from the committed files of the verified revision."""
    source = click.get_current_context().get_parameter_source("fmt")
    targets = output_formats(outputs, fmt, source == click.core.ParameterSource.COMMANDLINE)
    if from_json:
        document = load_report(from_json)
    else:
        document = build_report(study, rev=rev, round_id=round_id, bootstrap=bootstrap, seed=seed,
                                work_tree=work_tree)
    if not targets:
        click.echo(render(document, fmt), nl=False)
    for path, target_fmt in targets:
        try:
            Path(path).write_text(render(document, target_fmt), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    if targets:
        written = ", ".join(path for path, _ in targets)
        summary = document.get("summary") or document["verdict"]
        click.echo(f"{summary}  (report written to {written})", err=True)
    if fail_on and document["verdict"] in FAIL_ON[fail_on]:
        return 1
    return 0
