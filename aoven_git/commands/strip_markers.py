"""`aoven-git strip-markers [--check]`: write (or check) the marker-stripped response copies.

A blinded pass is scored on copies of the responses with every plan marker removed, so raters
cannot tell the treatment from its labels. The copies are committed like any other study file;
`--check` lets CI prove they are exactly what stripping the current responses gives.

Which copies: every condition of every pass with `stripped: true`, for every question of every
round and every replicate (one file per question and condition without replicates). A
missing response of the first round is an error (the study cannot run without it); a missing
response of a later round means that round has not been generated yet and is skipped.
Unknown all-caps bracket tokens (`[FOO]`) are reported as warnings with file:line and left in place.

Exit codes: 0 copies written / up to date; 1 a copy missing or stale (`--check`), a response of the
first round missing or unreadable, or a copy that cannot be written; 2 plan or usage error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import click

from aoven_git.commands._common import Study, format_option, study_options
from aoven_git.errors import UsageError
from aoven_git.markers import strip_response
from aoven_git.model import Plan


@dataclass(frozen=True)
class Job:
    """One copy to produce: repository-relative source and target, and the round it belongs to."""

    source: str
    target: str
    first_round: bool


@dataclass
class Outcome:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # --check: copy absent
    stale: list[str] = field(default_factory=list)  # --check: copy differs
    skipped: list[str] = field(default_factory=list)  # later-round sources not written yet
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.stale or self.errors)

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "written": self.written,
            "unchanged": self.unchanged,
            "missing": self.missing,
            "stale": self.stale,
            "skipped": self.skipped,
            "errors": self.errors,
            "warnings": self.warnings,
        }


def jobs(plan: Plan) -> list[Job]:
    """Every stripped copy the plan calls for, in round, question, condition, replicate order, once
    each."""
    conditions: list[str] = []
    for p in plan.passes:
        if p.stripped:
            conditions.extend(c for c in p.conditions if c not in conditions)
    out: dict[str, Job] = {}
    for index, rnd in enumerate(plan.rounds):
        for q in rnd.questions:
            for c in conditions:
                for r in plan.replicate_ids:
                    source = f"{plan.study_dir}/{plan.response_path(c, q, replicate=r)}"
                    target = f"{plan.study_dir}/{plan.response_path(c, q, stripped=True, replicate=r)}"
                    if source == target:
                        raise UsageError(
                            "the plan's stripped_responses pattern gives the same path as responses "
                            f"({source}); stripping would overwrite the original"
                        )
                    out.setdefault(target, Job(source, target, index == 0))
    return list(out.values())


def run(root: Path, plan: Plan, *, check: bool) -> Outcome:
    result = Outcome()
    for job in jobs(plan):
        src = root / job.source
        dst = root / job.target
        if not src.is_file():
            if job.first_round:
                result.errors.append(f"{job.source}: response missing (needed for {job.target})")
            else:
                result.skipped.append(job.source)
            continue
        try:
            original = src.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            result.errors.append(f"{job.source}: not valid UTF-8; cannot strip it")
            continue
        except OSError as exc:
            result.errors.append(f"{job.source}: cannot read: {exc.strerror or exc}")
            continue
        stripped = strip_response(original, plan.markers)
        for tok in stripped.unknown:
            result.warnings.append(
                f"{job.source}:{tok.line}: {tok.token} looks like a marker but is not one of the plan's "
                "markers; left in place"
            )
        wanted = stripped.text.encode("utf-8")
        if dst.is_symlink():
            result.errors.append(f"{job.target}: is a symbolic link; stripped copies must be regular files")
            continue
        current: bytes | None
        try:
            current = dst.read_bytes() if dst.is_file() else None
        except OSError:
            current = None
        if current == wanted:
            result.unchanged.append(job.target)
            continue
        if check:
            (result.missing if current is None else result.stale).append(job.target)
            continue
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(wanted)
        except OSError as exc:
            result.errors.append(f"{job.target}: cannot write: {exc.strerror or exc}")
            continue
        result.written.append(job.target)
    return result


@click.command("strip-markers")
@study_options
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 if a stripped copy is missing or differs from a fresh strip.",
)
@format_option("text", "json")
def command(study: Study, check: bool, fmt: str) -> int:
    """Write the marker-stripped copies of the responses scored in stripped (blinded) passes.

    Only the response part changes; the header, prompt and the [Aoven …] line stay verbatim."""
    plan = study.plan
    if not any(p.stripped for p in plan.passes):
        click.echo("no pass of the plan is stripped: nothing to do")
        return 0
    result = run(study.root, plan, check=check)
    if fmt == "json":
        click.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
        return 0 if result.ok else 1
    for w in result.warnings:
        click.echo(f"warning: {w}", err=True)
    for e in result.errors:
        click.echo(f"error: {e}", err=True)
    for path in result.missing:
        click.echo(f"missing: {path} (run `aoven-git strip-markers`)")
    for path in result.stale:
        click.echo(f"stale: {path} (its response changed; run `aoven-git strip-markers`)")
    for path in result.written:
        click.echo(f"wrote {path}")
    if result.skipped:
        click.echo(f"skipped {len(result.skipped)} response(s) of later rounds not written yet")
    total = len(result.written) + len(result.unchanged)
    if check:
        status = "ok" if result.ok else "FAILED"
        click.echo(
            f"strip-markers --check: {status}: {len(result.unchanged)} up to date, "
            f"{len(result.missing)} missing, {len(result.stale)} stale"
        )
    else:
        click.echo(
            f"strip-markers: {total} stripped copies ({len(result.written)} written, "
            f"{len(result.unchanged)} already up to date)"
            + (f", {len(result.errors)} error(s)" if result.errors else "")
        )
    return 0 if result.ok else 1
