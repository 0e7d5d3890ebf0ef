"""A bundled design study (docs/designs.md) run as a team runs it, for the study tests.

The lead commits the plan and the responses; each rater, under their own git identity, writes
their sheets by hand (the bundle's files), seals every pass with `aoven-git seal` in plan order (a
pass with `after:` after the passes it names), and, once everyone has sealed, reveals with
`aoven-git reveal`; then each rater commits their own reconciliation rows. Everything goes
through the real CLI in a real repository; nothing is mocked.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoven_git.model import Plan
from aoven_git.plan import load_plan
from tests.conftest import GitRepo, Result, run_cli

PACKAGE = Path(__file__).resolve().parent.parent / "aoven_git"
ARMS = PACKAGE / "_example_arms"
PROBES = PACKAGE / "_example_probes"
LEAD = ("Study Lead", "lead@example.org")


@dataclass
class Study:
    repo: GitRepo
    plan: Plan
    bundle: Path

    @property
    def root(self) -> Path:
        return self.repo.path

    def cli(self, *args: str) -> Result:
        return run_cli(*args, cwd=self.root)

    def as_rater(self, rater: str) -> None:
        """Act as `rater` from now on: `seal` and `reveal` check the committer's e-mail."""
        r = self.plan.rater(rater)
        assert r is not None and r.emails
        self.repo.git("config", "user.name", r.name)
        self.repo.git("config", "user.email", r.emails[0])

    def sheet_name(self, rater: str, pass_id: str) -> str:
        """The bundle's file name of a sheet: the pass is named unless it is the primary one."""
        primary = pass_id == self.plan.primary_pass.id
        return f"scores_{rater}.md" if primary else f"scores_{rater}_{pass_id}.md"

    def write_sheet(self, rater: str, pass_id: str) -> None:
        name = self.sheet_name(rater, pass_id)
        shutil.copy(self.bundle / name, self.root / self.plan.study_dir / name)

    def seal(self, rater: str, pass_id: str) -> Result:
        self.as_rater(rater)
        return self.cli("seal", "--rater", rater, "--pass", pass_id)

    def reveal(self, rater: str, pass_id: str) -> Result:
        self.as_rater(rater)
        return self.cli("reveal", "--rater", rater, "--pass", pass_id)

    def reconcile(self, rater: str) -> None:
        """The rater appends their own rows of every reconciliation file and commits them."""
        self.as_rater(rater)
        changed = []
        for source in sorted(self.bundle.glob("reconciliation*.md")):
            lines = source.read_text("utf-8").splitlines(keepends=True)
            delimiter = next(i for i, line in enumerate(lines) if line.startswith("|---"))
            mine = [line for line in lines[delimiter + 1:] if line.split("|")[2:3] == [f" {rater} "]]
            target = self.root / self.plan.study_dir / source.name
            head = target.read_text("utf-8") if target.exists() else "".join(lines[: delimiter + 1])
            if mine:
                target.write_text(head + "".join(mine), "utf-8")
                changed.append(f"{self.plan.study_dir}/{source.name}")
        r = self.plan.rater(rater)
        assert r is not None
        self.repo.commit(f"{rater}'s reconciliation rows", *changed, author=(r.name, r.emails[0]))

    def report(self, fmt: str = "json") -> Result:
        return self.cli("report", "--format", fmt, "--bootstrap", "200")

    def report_json(self) -> dict[str, Any]:
        res = self.report("json")
        assert res.out.strip(), res.output
        return json.loads(res.out)


def start(tmp: Path, bundle: Path) -> Study:
    """The lead's first commit: the plan and every response folder of the bundle."""
    repo = GitRepo(tmp / "study")
    plan = load_plan(bundle / "aoven.yaml")
    shutil.copy(bundle / "aoven.yaml", repo.path / "aoven.yaml")
    study = repo.path / plan.study_dir
    for folder in sorted(p for p in bundle.iterdir() if p.is_dir()):
        shutil.copytree(folder, study / folder.name)
    repo.commit("Pre-register the plan; add the responses", author=LEAD)
    return Study(repo, load_plan(repo.path / "aoven.yaml", display="aoven.yaml"), bundle)


def seal_and_reveal(study: Study) -> None:
    """Every rater writes and seals every pass in plan order, then everyone reveals."""
    raters = [r.id for r in study.plan.raters]
    for p in study.plan.passes:
        for rater in raters:
            study.write_sheet(rater, p.id)
            res = study.seal(rater, p.id)
            assert res.code == 0, res.output
    for p in study.plan.passes:
        for rater in raters:
            res = study.reveal(rater, p.id)
            assert res.code == 0, res.output


def run_study(tmp: Path, bundle: Path) -> Study:
    """The whole honest history: pre-registration, seals, reveals, reconciliation."""
    study = start(tmp, bundle)
    seal_and_reveal(study)
    for r in study.plan.raters:
        study.reconcile(r.id)
    return study


def by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's criteria by id."""
    return {c["id"]: c for c in document["criteria"]}
