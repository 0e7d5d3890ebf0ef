"""What a path in the study dir is: score file, seal, reconciliation, response — and whose.

File names carry identity (`scores_<rater>[_<round>][_<pass>].md`, SPEC §4.1). Ids may contain
`_` or `-`, so a name is never split on `_`: it is matched against every combination of ids the
plan knows, and only an exact match counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from aoven_git.model import Plan, SheetId

SEALS_DIR = "seals"
SEAL_SUFFIX = ".sha256"
SCORE_PREFIX = "scores_"
RECONCILIATION_STEM = "reconciliation"

Kind = Literal["score", "seal", "reconciliation", "other"]


@dataclass(frozen=True)
class StudyPath:
    """A classified path. `sheet` is set for score and seal files whose name the plan resolves;
    for reconciliation files `sheet.rater` is empty. `problem` explains a name that looks like
    a study file but names no known rater/round/pass."""

    path: str
    kind: Kind
    sheet: SheetId | None = None
    problem: str | None = None


def _suffixes(plan: Plan) -> dict[str, tuple[str, str]]:
    """Every `[_<round>][_<pass>]` suffix → (round, pass)."""
    main, primary = plan.main_round.id, plan.primary_pass.id
    out: dict[str, tuple[str, str]] = {"": (main, primary)}
    for r in plan.rounds:
        out[f"_{r.id}"] = (r.id, primary)
        for p in plan.passes:
            out[f"_{r.id}_{p.id}"] = (r.id, p.id)
    for p in plan.passes:
        out.setdefault(f"_{p.id}", (main, p.id))
    return out


def score_stem(plan: Plan, sheet: SheetId) -> str:
    """The canonical file stem of a sheet: defaults are left out, as users write them."""
    stem = f"{SCORE_PREFIX}{sheet.rater}"
    if sheet.round_id != plan.main_round.id:
        stem += f"_{sheet.round_id}"
    if sheet.pass_id != plan.primary_pass.id:
        stem += f"_{sheet.pass_id}"
    return stem


def reconciliation_stem(plan: Plan, pass_id: str, round_id: str) -> str:
    return score_stem(plan, SheetId("", pass_id, round_id)).replace(SCORE_PREFIX, RECONCILIATION_STEM, 1)


def parse_score_stem(plan: Plan, stem: str) -> SheetId | None:
    if not stem.startswith(SCORE_PREFIX):
        return None
    rest = stem[len(SCORE_PREFIX) :]
    for suffix, (round_id, pass_id) in _suffixes(plan).items():
        if suffix and not rest.endswith(suffix):
            continue
        rater = rest[: len(rest) - len(suffix)] if suffix else rest
        if plan.rater(rater) is not None:
            return SheetId(rater, pass_id, round_id)
    return None


def parse_reconciliation_stem(plan: Plan, stem: str) -> SheetId | None:
    if not stem.startswith(RECONCILIATION_STEM):
        return None
    suffix = stem[len(RECONCILIATION_STEM) :]
    found = _suffixes(plan).get(suffix)
    return SheetId("", found[1], found[0]) if found else None


def classify(plan: Plan, path: str) -> StudyPath:
    """Classify `path`, relative to the repository root (posix separators)."""
    p = PurePosixPath(path)
    study = PurePosixPath(plan.study_dir)
    try:
        rel = p.relative_to(study)
    except ValueError:
        return StudyPath(path, "other")
    parts = rel.parts
    if len(parts) == 2 and parts[0] == SEALS_DIR and p.name.endswith(SEAL_SUFFIX):
        stem = p.name[: -len(SEAL_SUFFIX)]
        sheet = parse_score_stem(plan, stem)
        if sheet is None:
            return StudyPath(path, "seal", None, f"seal file {p.name} names no rater/round/pass of the plan")
        return StudyPath(path, "seal", sheet)
    if len(parts) != 1 or p.suffix != ".md":
        return StudyPath(path, "other")
    if p.stem.startswith(SCORE_PREFIX):
        sheet = parse_score_stem(plan, p.stem)
        if sheet is None:
            known = ", ".join(r.id for r in plan.raters)
            return StudyPath(
                path,
                "score",
                None,
                f"{p.name} names no known rater (known: {known}) with a known round/pass suffix",
            )
        return StudyPath(path, "score", sheet)
    if p.stem.startswith(RECONCILIATION_STEM):
        sheet = parse_reconciliation_stem(plan, p.stem)
        if sheet is None:
            return StudyPath(path, "reconciliation", None, f"{p.name} names no known round/pass")
        return StudyPath(path, "reconciliation", sheet)
    return StudyPath(path, "other")


def seal_path(plan: Plan, sheet: SheetId) -> str:
    """Repository-relative path of the digest seal of a sheet."""
    return f"{plan.study_dir}/{SEALS_DIR}/{score_stem(plan, sheet)}{SEAL_SUFFIX}"


def score_path(plan: Plan, sheet: SheetId) -> str:
    return f"{plan.study_dir}/{score_stem(plan, sheet)}.md"


def reconciliation_path(plan: Plan, pass_id: str, round_id: str) -> str:
    return f"{plan.study_dir}/{reconciliation_stem(plan, pass_id, round_id)}.md"
