"""`aoven-git demo`: replay a bundled study as a real git history, then verify and report.

It is the first thing a new user runs, so it goes through the same code as real use: the
seal and reveal of `aoven-git seal`/`reveal`, verify-seal and report. Each rater acts under
their own git identity, as on their own machine. `--tamper` replays the same study with one
rater sealing after another's scores became readable, and shows verify-seal catching it.
`--design` picks the study: the seed's A/B example (default), the four-arm study or the probe
study (docs/designs.md); the replay is the same for all three, read from the bundle's plan.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import click

from aoven_git import gitio
from aoven_git.errors import UsageError
from aoven_git.model import Plan, SheetId

PACKAGE = Path(__file__).resolve().parent.parent
EXAMPLE = PACKAGE / "_example"
#: the bundled study of each `--design` (docs/designs.md)
BUNDLES = {"seed": EXAMPLE, "arms": PACKAGE / "_example_arms", "probes": PACKAGE / "_example_probes"}
LEAD = ("Study Lead", "lead@example.org")


@dataclass
class Replay:
    root: Path
    plan: Plan
    steps: list[str] = field(default_factory=list)
    source: Path = EXAMPLE  # the bundled study being replayed

    def log(self, what: str, commit: str | None) -> None:
        self.steps.append(f"{(commit or '')[:8]:8}  {what}")


@contextmanager
def identity(root: Path, name: str, email: str) -> Iterator[None]:
    """Act as one person: the repository config (what seal/reveal check) and the environment
    (which would otherwise override the config with the user's own GIT_AUTHOR_* settings)."""
    gitio.run_git(["config", "user.name", name], root)
    gitio.run_git(["config", "user.email", email], root)
    keys = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(dict(zip(keys, (name, email, name, email), strict=True)))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def rater_identity(plan: Plan, rater_id: str) -> tuple[str, str]:
    rater = plan.rater(rater_id)
    assert rater is not None
    return rater.name, (rater.emails[0] if rater.emails else f"{rater_id}@example.org")


def commit_files(root: Path, paths: list[str], message: str, who: tuple[str, str]) -> str:
    """A scripted commit by `who` (GitPython: author and committer set on the commit itself). It
    runs no hooks: the demo's own repository has none installed."""
    import git

    repo = git.Repo(root)
    try:
        repo.index.add(paths)
        actor = git.Actor(*who)
        return repo.index.commit(message, author=actor, committer=actor, skip_hooks=True).hexsha
    finally:
        repo.close()


def lead_files(plan: Plan, source: Path) -> list[str]:
    """What the lead commits with the plan: the folders of the responses (and of the stripped
    copies a stripped pass reads), as the plan's patterns name them, and a README if the bundle
    has one. Sheets and reconciliations are the raters' own, committed later by them."""
    paths = {plan.response_path(c, q, replicate=r)
             for c in (c.id for c in plan.conditions) for q in plan.main_round.questions
             for r in plan.replicate_ids}
    paths |= {plan.response_path(c, q, stripped=True, replicate=r)
              for p in plan.passes if p.stripped for c in p.conditions
              for q in plan.main_round.questions for r in plan.replicate_ids}
    tops = sorted({Path(p).parts[0] for p in paths} | {"README.md"})
    return [name for name in tops if (source / name).exists()]


def prepare(root: Path, source: Path = EXAMPLE) -> Replay:
    from aoven_git.plan import load_plan

    if root.exists() and any(root.iterdir()):
        raise UsageError(f"{root} is not empty: --keep needs a new or empty directory")
    root.mkdir(parents=True, exist_ok=True)
    gitio.run_git(["init", "-q"], root)
    for key, value in (
        ("commit.gpgsign", "false"),
        ("core.hooksPath", ".git/hooks"),  # the user's global hooks must not run in the demo
        ("init.defaultBranch", "main"),
    ):
        gitio.run_git(["config", key, value], root)
    gitio.run_git(["symbolic-ref", "HEAD", "refs/heads/main"], root)
    plan = load_plan(source / "aoven.yaml")
    study = root / plan.study_dir
    study.mkdir(parents=True)
    # the amendments are declared after the reveals, as a real team would
    (root / "aoven.yaml").write_bytes(preregistered(source / "aoven.yaml"))
    for name in lead_files(plan, source):
        src = source / name
        if src.is_dir():
            shutil.copytree(src, study / name)
        else:
            shutil.copy(src, study / name)
    replay = Replay(root, load_plan(root / "aoven.yaml", display="aoven.yaml"), source=source)
    paths = ["aoven.yaml", *(f"{plan.study_dir}/{p.relative_to(study).as_posix()}"
                             for p in sorted(study.rglob("*")) if p.is_file())]
    commit = commit_files(root, paths, "Pre-register the plan; add responses and stripped copies", LEAD)
    replay.log("study lead pre-registers the plan and commits the responses", commit)
    return replay


def preregistered(plan_file: Path) -> bytes:
    """The example plan as pre-registered: without its `amendments:` block (and the comment above
    it), which the study lead appends after the reveals."""
    lines = plan_file.read_bytes().splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith(b"amendments:")), None)
    if start is None:
        return b"".join(lines)
    first = start
    while first > 0 and lines[first - 1].startswith(b"#"):
        first -= 1
    end = start + 1
    while end < len(lines) and (lines[end][:1] in (b" ", b"\t") or not lines[end].strip()):
        end += 1
    return b"".join(lines[:first] + lines[end:])


def _what(sheet: SheetId) -> str:
    return f"{sheet.pass_id} for amendment {sheet.amendment}" if sheet.amendment else sheet.pass_id


def seal_as(replay: Replay, sheet: SheetId) -> None:
    from aoven_git import naming
    from aoven_git.sealing import seal, target

    plan, root = replay.plan, replay.root
    rel = naming.score_path(plan, sheet)
    # the rater writes their file locally; nobody else can see it
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(replay.source / naming_rel(plan, sheet), root / rel)
    tgt = target(plan, sheet.rater, sheet.pass_id, sheet.round_id, amendment=sheet.amendment)
    with identity(root, *rater_identity(plan, sheet.rater)):
        result = seal(root, plan, tgt)
    replay.log(f"{sheet.rater} seals {_what(sheet)} (digest only)", result.commit)


def reveal_as(replay: Replay, sheet: SheetId, *, force: bool = False) -> None:
    from aoven_git.sealing import reveal, target

    plan, root = replay.plan, replay.root
    tgt = target(plan, sheet.rater, sheet.pass_id, sheet.round_id, amendment=sheet.amendment)
    with identity(root, *rater_identity(plan, sheet.rater)):
        result = reveal(root, plan, tgt, force=force)
    note = " EARLY, with --force, before the others sealed" if result.forced else ""
    replay.log(f"{sheet.rater} reveals {_what(sheet)}{note}", result.commit)


def replay_amendments(replay: Replay) -> None:
    """After the reconciliation the lead declares the example's amendments (appending to the plan
    is allowed after the first seal); every rater seals their re-scores, then everyone reveals."""
    from aoven_git.plan import load_plan

    root = replay.root
    shutil.copy(replay.source / "aoven.yaml", root / "aoven.yaml")
    replay.plan = load_plan(root / "aoven.yaml", display="aoven.yaml")
    plan = replay.plan
    if not plan.amendments:
        return
    ids = ", ".join(a.id for a in plan.amendments)
    commit = commit_files(root, ["aoven.yaml"], f"Declare amendment {ids} (exploratory)", LEAD)
    replay.log(f"study lead appends amendment {ids} to the plan after a rubric ruling", commit)
    for a in plan.amendments:
        sheets = [SheetId(r.id, p, plan.main_round.id, a.id) for p in a.passes for r in plan.raters]
        sheets = [s for s in sheets if (replay.source / naming_rel(plan, s)).is_file()]
        for sheet in sheets:
            seal_as(replay, sheet)
        for sheet in sheets:
            reveal_as(replay, sheet)


def naming_rel(plan: Plan, sheet: SheetId) -> str:
    """A sheet's score file relative to the study dir (where the example keeps it)."""
    from aoven_git import naming

    return naming.score_path(plan, sheet)[len(plan.study_dir) + 1 :]


def cheat_seal(replay: Replay, sheet: SheetId) -> None:
    """What a rater who has read others' scores does when `aoven-git seal` refuses: write the
    digest by hand and commit it past the hook."""
    from aoven_git import naming
    from aoven_git.scorefile import set_front_matter
    from aoven_git.seals import format_seal, sha256

    plan, root = replay.plan, replay.root
    name = naming.score_stem(plan, sheet) + ".md"
    score = root / plan.study_dir / name
    score.write_bytes(set_front_matter((replay.source / name).read_bytes(), nonce="0" * 32))
    seal = root / naming.seal_path(plan, sheet)
    seal.parent.mkdir(parents=True, exist_ok=True)
    seal.write_bytes(format_seal(sha256(score.read_bytes()), name, sheet))
    commit = commit_files(root, [naming.seal_path(plan, sheet)], f"Seal {sheet.rater}'s scores",
                          rater_identity(plan, sheet.rater))
    replay.log(f"{sheet.rater} seals {sheet.pass_id} by hand AFTER reading the revealed scores", commit)


def replay_study(root: Path, *, tamper: bool, source: Path = EXAMPLE) -> Replay:
    """Every rater seals every pass, then everyone reveals (a pass's scores must not be readable
    before every rater has sealed every pass that shares a condition with it), then reconcile.
    Passes are sealed in plan order, so a pass with `after:` is sealed after the passes it names
    (docs/designs.md, "Pass order")."""
    replay = prepare(root, source)
    plan = replay.plan
    rnd = plan.main_round.id
    sheets = [SheetId(r.id, p.id, rnd) for p in plan.passes for r in plan.raters]
    if tamper:
        # everyone seals but the second rater's primary pass; the first rater publishes early
        # (forced), the second reads it and seals by hand (`aoven-git seal` would refuse)
        early, late = sheets[0], sheets[1]
        for sheet in sheets:
            if sheet != late:
                seal_as(replay, sheet)
        reveal_as(replay, early, force=True)
        cheat_seal(replay, late)
        for sheet in sheets[1:]:
            reveal_as(replay, sheet)
    else:
        for sheet in sheets:
            seal_as(replay, sheet)
        for sheet in sheets:
            reveal_as(replay, sheet)
    for rater in plan.raters:
        reconcile_as(replay, rater.id)
    replay_amendments(replay)
    return replay


def reconcile_as(replay: Replay, rater: str) -> None:
    """The rater appends their own rows of the example's reconciliation files and commits them
    themselves: a row counts only when its rater wrote it (docs/sealing.md, "Attributed consensus")."""
    plan, root = replay.plan, replay.root
    changed = []
    for source in sorted(replay.source.glob("reconciliation*.md")):
        lines = source.read_text("utf-8").splitlines(keepends=True)
        delimiter = next(i for i, line in enumerate(lines) if line.startswith(("|--", "|:-")))
        mine = [line for line in lines[delimiter + 1 :] if line.split("|")[2:3] == [f" {rater} "]]
        target = root / plan.study_dir / source.name
        if not mine:
            continue
        head = target.read_text("utf-8") if target.exists() else "".join(lines[: delimiter + 1])
        target.write_text(head + "".join(mine), "utf-8")
        changed.append(f"{plan.study_dir}/{source.name}")
    if changed:
        commit = commit_files(root, changed, f"Reconciliation: {rater}'s own rows",
                              rater_identity(plan, rater))
        replay.log(f"{rater} commits their own reconciliation rows (justification, the value they accept)",
                   commit)


def kappa_table(document: dict[str, object], pass_id: str | None = None) -> list[str]:
    """The κ of each dimension of a pass (default: the verdict's) with its pairs; an undefined κ
    prints n/a here, and its reason is in the report."""
    verdict_pass = pass_id or str(document.get("verdict_pass"))
    kappa = document.get("kappa", {})
    table = kappa.get(verdict_pass, {}) if isinstance(kappa, dict) else {}
    rows = [f"  {'dim':4} {'kappa':>7}  {'counts':6}  pairs"]
    for dim, entry in table.items():
        value = entry.get("value")
        shown = f"{value:7.3f}" if isinstance(value, (int, float)) else "    n/a"
        pairs = ", ".join(
            f"{pair} {v:.3f}" if isinstance(v, (int, float)) else f"{pair} undefined"
            for pair, v in entry.get("pairs", {}).items()
        )
        rows.append(f"  {dim:4} {shown}  {'yes' if entry.get('counts') else 'NO':6}  {pairs}")
    return rows


def amendment_lines(document: dict[str, object]) -> list[str]:
    """The exploratory verdict of each amendment, beside the pre-registered one, when the report
    computes them (`amendments` of the report document)."""
    found = document.get("amendments")
    if not isinstance(found, list) or not found:
        return []
    out = [f"\nExploratory, after amendments (the pre-registered verdict stays {document.get('verdict')}):"]
    for entry in found:
        if isinstance(entry, dict):
            why = [*(entry.get("not_ready") or []), *(entry.get("reasons") or [])]
            out.append(f"  {entry.get('id')} ({entry.get('title')}): {entry.get('verdict')}"
                       + (f" — {why[0]}" if why else ""))
    return out


def decision_lines(document: dict[str, object]) -> list[str]:
    """A design's criteria, each with its outcome, and the decision (docs/designs.md); nothing for
    the seed's plan, whose report has no `criteria`."""
    criteria = document.get("criteria")
    if not isinstance(criteria, list):
        return []
    out = ["Criteria:"]
    for c in criteria:
        if isinstance(c, dict):
            out.append(f"  {c.get('id')!s:12} {c.get('outcome')!s:10} {c.get('text') or ''}")
    decision = document.get("decision")
    if isinstance(decision, dict):
        row = f" (row {decision.get('row')})" if decision.get("row") else ""
        blocking = decision.get("blocking") or []
        why = f", blocked by {', '.join(map(str, blocking))}" if blocking else ""
        out.append(f"Decision: {decision.get('status')}: {decision.get('then') or '-'}{row}{why}")
    return out


def print_agreement(document: dict[str, object], plan: Plan) -> None:
    """The seed prints the verdict pass's κ; a design prints every pass's (its criteria read
    dimensions from several passes)."""
    if "criteria" not in document:
        click.echo(f"Weighted kappa per dimension (pass {document.get('verdict_pass')}):")
        for row in kappa_table(document):
            click.echo(row)
        return
    for line in decision_lines(document):
        click.echo(line)
    weighted = "Kappa" if plan.scale.nominal or plan.rules.kappa.weights == "none" else "Weighted kappa"
    gate = plan.rules.kappa.coefficient
    for p in plan.passes:
        click.echo(f"{weighted} per dimension (pass {p.id}):")
        for row in kappa_table(document, p.id):
            click.echo(row)
    if gate != "cohen":
        click.echo(f"  (a dimension counts by its {gate} coefficient: rules.kappa.coefficient)")


@click.command("demo")
@click.option(
    "--keep",
    "keep",
    type=click.Path(file_okay=False),
    default=None,
    help="Build the study repository here (new or empty directory) and keep it.",
)
@click.option(
    "--tamper", is_flag=True, help="Replay with one rater sealing after another's scores were public."
)
@click.option(
    "--design",
    type=click.Choice(sorted(BUNDLES)),
    default="seed",
    show_default=True,
    help="Which bundled study: the seed's A/B example, the four-arm study or the probe study.",
)
def command(keep: str | None, tamper: bool, design: str) -> int:
    """Build a throwaway git repository from a bundled study, replay an honest sealing history
    (plan → digest seals → reveals → reconciliation), verify it and write the report."""
    from aoven_git.commands._common import Study
    from aoven_git.commands.report import build_report, render
    from aoven_git.sealing import verify

    base = Path(keep).resolve() if keep else Path(tempfile.mkdtemp(prefix="aoven-demo-"))
    root = base if keep else base / "study"
    replay = replay_study(root, tamper=tamper, source=BUNDLES[design])
    click.echo(
        f"Study repository: {root}" + ("" if keep else " (removed at the end; use --keep DIR to keep it)")
    )
    for step in replay.steps:
        click.echo(f"  {step}")

    seals = verify(root, "aoven.yaml")
    click.echo(f"\nverify-seal: {seals.as_dict()['status']}")
    for v in seals.violations:
        click.echo(f"  {v.code} [{v.rater or '-'}] at {(v.commit or '')[:8]}: {v.message}")

    study = Study(root=root, plan_file=root / "aoven.yaml", in_git=True)
    document = build_report(study, rev=None, round_id=None, bootstrap=1000, seed=20260426)
    out_dir = root if keep else base
    paths = {}
    for fmt, suffix in (("html", "html"), ("json", "json"), ("markdown", "md")):
        paths[fmt] = out_dir / f"aoven-report.{suffix}"
        paths[fmt].write_text(render(document, fmt), encoding="utf-8")

    summary = str(document.get("summary") or "")
    verdict = str(document["verdict"])
    click.echo(f"\nVerdict: {summary if summary.startswith(verdict) else f'{verdict}. {summary}'}")
    print_agreement(document, replay.plan)
    for line in amendment_lines(document):
        click.echo(line)
    click.echo(f"\nHTML report: {paths['html']}")
    click.echo(f"Markdown and JSON: {paths['markdown']}, {paths['json']}")
    if tamper:
        caught = any(v.code == "visible-at-seal" for v in seals.violations)
        click.echo(
            "\nverify-seal caught the peek: the report is NOT-READY until the history is redone honestly."
            if caught
            else "\nverify-seal did NOT catch the peek: this is a bug, please report it."
        )
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    if tamper:
        return 0 if any(v.code == "visible-at-seal" for v in seals.violations) else 1
    return 0 if seals.ok else 1
