"""`aoven-git score --rater R [--pass P] [--round N] [--amendment A] [--port N] [--no-browser]`.

Serves one rater's sheet as a page on 127.0.0.1 (docs/score-files.md, "The scoring page"): the
texts exactly as the pass may show them, the rubric, one control per cell, and Save, which writes
the sheet in the work tree through `sheet`'s writer and shows `validate`'s findings. It never
commits: `seal` stays the next step. Stops on Ctrl-C.
"""

from __future__ import annotations

import os

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.errors import UsageError


@click.command("score")
@study_options
@click.option("--rater", "rater_id", required=True, help="Rater id from the plan.")
@click.option("--pass", "pass_id", default=None, help="Pass id (default: the primary pass).")
@click.option("--round", "round_id", default=None, help="Round id (default: the plan's first round).")
@click.option("--amendment", default=None, help="Score this amendment's re-scoring (its scope only).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one, printed).")
@click.option("--no-browser", is_flag=True, help="Print the URL; do not open a browser.")
def command(study: Study, rater_id: str, pass_id: str | None, round_id: str | None,
            amendment: str | None, port: int, no_browser: bool) -> int:
    """Serve a scoring page for one rater's sheet on 127.0.0.1; Save writes the sheet (never commits)."""
    from aoven_git.commands.sheet import blind_items, resolve_sheet
    from aoven_git.scoring.content import load_page
    from aoven_git.scoring.server import ScoreServer

    plan = study.plan
    sheet = resolve_sheet(plan, rater_id, pass_id, round_id, amendment)
    page = load_page(plan, sheet, study.root, blind_items(study, plan, sheet))
    try:
        server = ScoreServer(page, port, selftest=os.environ.get("AOVEN_GIT_SCORE_SELFTEST") == "1")
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    click.echo(f"scoring page for {sheet} (writes {page.path}): {server.url}", err=False)
    click.echo("press Ctrl-C to stop; then `aoven-git validate` and `aoven-git seal`", err=True)
    if not no_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    finally:
        server.server_close()
    return 0
