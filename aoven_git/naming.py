"""What a path of the repository is to the study: score file, seal, reconciliation, stray copy of
scores, response — and whose (docs/score-files.md, "Naming"; docs/sealing.md, "Violations").

File names carry identity (`scores_<rater>[_<round>][_<pass>].md`). Ids may contain `_` or `-`, so a
name is never split on `_`: it is matched against every combination of ids the plan knows, and only
an exact match counts. Every accepted spelling of a sheet (`scores_cto.md`, `scores_cto_main.md`,
`scores_cto_unblinded.md`, …) is an *accepted* name; a sheet may use one of them, never two.

Anything else named `scores_*` (any folder, any extension, any letter case) is a *stray* name. Under
the study folder it is a stray copy whatever it holds; elsewhere a name alone proves nothing (a
second study, a vendored copy of this tool, `analysis/scores_plot.py`): the sealing rules read its
content (`ledger`). The study folder is compared after Unicode NFC normalisation and case folding
(`folded_inside`): `Study/`, or an NFD spelling of `études/`, is the very folder on macOS and Windows.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from aoven_git.model import Plan, SheetId

SEALS_DIR = "seals"
SEAL_SUFFIX = ".sha256"
SCORE_PREFIX = "scores_"
RECONCILIATION_STEM = "reconciliation"
AMENDMENTS_DIR = "amendments"
BLIND_DIR = "blind"
BLIND_KEY = "key.json"
BLIND_KEY_SEAL_PREFIX = "blind_key_"

Kind = Literal["score", "seal", "reconciliation", "stray", "blind-item", "blind-key", "blind-key-seal",
               "other"]


@dataclass(frozen=True)
class StudyPath:
    """A classified path. `sheet` is set for score and seal files whose name the plan resolves
    (and for strays whose name does); for reconciliation files `sheet.rater` is empty. `problem`
    explains a name that looks like a study file but names no known rater/round/pass."""

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


def sheet_dir(plan: Plan, amendment: str | None = None) -> str:
    """The folder of a sheet's files: the study dir, or `amendments/<id>/` inside it."""
    return f"{plan.study_dir}/{AMENDMENTS_DIR}/{amendment}" if amendment else plan.study_dir


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


def explain_score_stem(plan: Plan, stem: str) -> str:
    """Why `stem` names no sheet, saying WHICH part is unknown: the rater, or the suffix after a
    known rater (`scores_alice_blind`: alice is known, `blind` is no round or pass)."""
    rest = stem[len(SCORE_PREFIX) :]
    raters = sorted((r.id for r in plan.raters), key=len, reverse=True)
    rater = next((r for r in raters if rest == r or rest.startswith(r + "_")), None)
    if rater is None:
        known = ", ".join(r.id for r in plan.raters)
        return f"`{rest}` names no rater of the plan (known raters: {known})"
    tail = rest[len(rater) + 1 :]
    rounds = ", ".join(r.id for r in plan.rounds)
    passes = ", ".join(p.id for p in plan.passes)
    return (f"rater {rater} is known, but `{tail}` is not a round, a pass, or `<round>_<pass>` of the "
            f"plan (rounds: {rounds}; passes: {passes})")


def parse_reconciliation_stem(plan: Plan, stem: str) -> SheetId | None:
    if not stem.startswith(RECONCILIATION_STEM):
        return None
    suffix = stem[len(RECONCILIATION_STEM) :]
    found = _suffixes(plan).get(suffix)
    return SheetId("", found[1], found[0]) if found else None


def _study_relative(plan: Plan, path: str) -> tuple[str, ...] | None:
    try:
        return PurePosixPath(path).relative_to(PurePosixPath(plan.study_dir)).parts
    except ValueError:
        return None


def fold(path: str) -> str:
    """A path as a case-insensitive, normalisation-insensitive file system sees it: NFC, then case
    folding (NFC again, for folding can denormalise)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


def inside(plan: Plan, path: str) -> bool:
    """`path` is under the study folder, byte for byte (where canonical files live)."""
    return path.startswith(plan.study_dir.rstrip("/") + "/")


def folded_inside(plan: Plan, path: str) -> bool:
    """`path` is under the study folder or under a spelling of it that differs only in letter case
    or Unicode normalisation (`Study/`, NFD `études/`, e + U+0301): the same folder on macOS and Windows,
    so whatever holds scores there is a stray copy, never a canonical file."""
    return inside(plan, path) or fold(path).startswith(fold(plan.study_dir.rstrip("/")) + "/")


def twin_glob(study_dir: str) -> str:
    """A case-insensitive git glob that finds every spelling of the study folder `folded_inside`
    accepts: each non-ASCII character becomes `*` (an NFD spelling is longer than the NFC one).
    It may find more (`xtudes/`); `folded_inside` decides."""
    segments = ["".join(ch if ch.isascii() and ch not in "*?[]\\" else "*" for ch in seg)
                for seg in study_dir.rstrip("/").split("/")]
    return ":(glob,icase)" + "/".join(re.sub(r"\*+", "*", s) for s in segments) + "/**"


def _amendment_of(plan: Plan, parts: tuple[str, ...]) -> tuple[str | None, tuple[str, ...], str | None]:
    """(amendment id, the parts inside its folder, problem) for `amendments/<id>/…` paths."""
    if len(parts) < 3 or parts[0] != AMENDMENTS_DIR:
        return None, parts, None
    known = {a.id for a in plan.amendments}
    problem = None if parts[1] in known else (
        f"amendment {parts[1]!r} is not in the plan (amendments: {', '.join(sorted(known)) or 'none'})")
    return parts[1], parts[2:], problem


def _blind_kind(plan: Plan, parts: tuple[str, ...]) -> StudyPath | None:
    if len(parts) == 3 and parts[0] == BLIND_DIR:
        p = plan.pass_(parts[1])
        sheet = SheetId("", parts[1], plan.main_round.id)
        problem = None if p is not None and p.blind else f"{parts[1]!r} is not a blind pass of the plan"
        kind: Kind = "blind-key" if parts[2] == BLIND_KEY else "blind-item"
        return StudyPath("/".join((plan.study_dir, *parts)), kind, sheet, problem)
    if len(parts) == 2 and parts[0] == SEALS_DIR and parts[1].startswith(BLIND_KEY_SEAL_PREFIX) \
            and parts[1].endswith(SEAL_SUFFIX):
        pass_id = parts[1][len(BLIND_KEY_SEAL_PREFIX) : -len(SEAL_SUFFIX)]
        p = plan.pass_(pass_id)
        problem = None if p is not None and p.blind else f"{pass_id!r} is not a blind pass of the plan"
        return StudyPath("/".join((plan.study_dir, *parts)), "blind-key-seal",
                         SheetId("", pass_id, plan.main_round.id), problem)
    return None


def classify(plan: Plan, path: str) -> StudyPath:
    """Classify `path`, relative to the repository root (posix separators)."""
    parts = _study_relative(plan, path)
    name = PurePosixPath(path).name
    if parts is not None:
        blind = _blind_kind(plan, parts)
        if blind is not None:
            return blind
        amendment, inner, problem = _amendment_of(plan, parts)
        found = _sheet_file(plan, path, name, inner, amendment, problem)
        if found is not None:
            return found
    if name.lower().startswith(SCORE_PREFIX):
        canonical = case_variant(plan, path)
        problem = None if canonical is None else (
            f"{name} differs from the sheet's file name {PurePosixPath(canonical).name} only in letter case")
        return StudyPath(path, "stray", stray_owner(plan, name), problem)
    return StudyPath(path, "other")


def case_variant(plan: Plan, path: str) -> str | None:
    """The accepted score-file path that `path` spells in other letter case (`Scores_Alice.md` for
    `scores_alice.md`), or None. File names are case-sensitive, so such a file is no sheet (and a
    stray to the sealing rules), while on a case-insensitive disk (macOS, Windows) it is the very
    file others would read: validation names the one letter-case fix instead of ignoring it."""
    parts = _study_relative(plan, path)
    if parts is None:
        return None
    amendment, inner, problem = _amendment_of(plan, parts)
    name = parts[-1]
    if problem or len(inner) != 1 or (name.startswith(SCORE_PREFIX) and name.endswith(".md")):
        return None
    low = name.lower()
    if not (low.startswith(SCORE_PREFIX) and low.endswith(".md")):
        return None
    for rater in plan.raters:
        for suffix in _suffixes(plan):
            accepted = f"{SCORE_PREFIX}{rater.id}{suffix}.md"
            if accepted.lower() == low:
                return f"{sheet_dir(plan, amendment)}/{accepted}"
    return None


def _sheet_file(plan: Plan, path: str, name: str, parts: tuple[str, ...], amendment: str | None,
                problem: str | None) -> StudyPath | None:
    """A score, seal or reconciliation file directly in its sheet folder (the study dir or an
    amendment's folder), or None."""
    def sheet_of(sheet: SheetId | None) -> SheetId | None:
        return None if sheet is None else SheetId(sheet.rater, sheet.pass_id, sheet.round_id, amendment)

    if len(parts) == 2 and parts[0] == SEALS_DIR and name.endswith(SEAL_SUFFIX) \
            and not name.startswith(BLIND_KEY_SEAL_PREFIX):
        sheet = sheet_of(parse_score_stem(plan, name[: -len(SEAL_SUFFIX)]))
        why = problem or (None if sheet else f"seal file {name} names no rater/round/pass of the plan")
        return StudyPath(path, "seal", None if why else sheet, why)
    if len(parts) != 1 or not name.endswith(".md"):
        return None
    stem = name[:-3]
    if stem.startswith(SCORE_PREFIX):
        sheet = sheet_of(parse_score_stem(plan, stem))
        if sheet is not None and problem is None:
            return StudyPath(path, "score", sheet)
        # still a score file to validation (`unknown-rater`); the sealing rules treat it as a stray
        return StudyPath(path, "score", None, f"{name}: {problem or explain_score_stem(plan, stem)}")
    if stem.startswith(RECONCILIATION_STEM):
        sheet = sheet_of(parse_reconciliation_stem(plan, stem))
        why = problem or (None if sheet else f"{name} names no known round/pass")
        return StudyPath(path, "reconciliation", None if why else sheet, why)
    return None


def stray_owner(plan: Plan, name: str) -> SheetId | None:
    """The sheet a stray copy's name points at, read case-insensitively up to its first dot
    (`Scores_CTO.md.txt` → cto's primary sheet), or None."""
    stem = name.split(".", 1)[0].lower()
    return parse_score_stem(plan, stem)


def miscased(plan: Plan, path: str) -> bool:
    """A study-dir name that is a seal, reconciliation or blind corpus name but for letter case
    (`Reconciliation.md`, `SEALS/scores_cto.sha256`, `Blind/P/<id>.md`). File names are
    case-sensitive, so the rules would otherwise ignore it, while on a case-insensitive disk
    (macOS, Windows) it is the very file others read. (Score names in the wrong case are strays.)"""
    parts = _study_relative(plan, path)
    if parts is None or classify(plan, path).kind != "other":
        return False
    low = [p.lower() for p in parts]
    if len(low) == 3 and low[0] == BLIND_DIR:  # `Blind/P/…`: on macOS/Windows, the corpus folder
        return True
    if len(low) == 2:
        return low[0] == SEALS_DIR and low[1].endswith(SEAL_SUFFIX)
    return len(low) == 1 and low[0].endswith(".md") and low[0].startswith(RECONCILIATION_STEM)


class Responses:
    """Every response and stripped-copy path of the plan, exactly (repository-relative): the
    plan's own question and condition ids (and replicates 1..N), not any file shaped like one.
    `match(path)` answers."""

    def __init__(self, plan: Plan) -> None:
        questions = [q.id for q in (*plan.questions, *plan.holdout)]
        self.paths = frozenset(
            f"{plan.study_dir}/{plan.response_path(c.id, q, stripped=s, replicate=r)}"
            for q in questions for c in plan.conditions for s in (False, True) for r in plan.replicate_ids)

    def match(self, path: str) -> bool:
        return path in self.paths


def response_patterns(plan: Plan) -> Responses:
    """The plan's response paths (see `Responses`)."""
    return Responses(plan)


def seal_path(plan: Plan, sheet: SheetId) -> str:
    """Repository-relative path of the digest seal of a sheet."""
    return f"{sheet_dir(plan, sheet.amendment)}/{SEALS_DIR}/{score_stem(plan, sheet)}{SEAL_SUFFIX}"


def score_path(plan: Plan, sheet: SheetId) -> str:
    return f"{sheet_dir(plan, sheet.amendment)}/{score_stem(plan, sheet)}.md"


def reconciliation_path(plan: Plan, pass_id: str, round_id: str, amendment: str | None = None) -> str:
    return f"{sheet_dir(plan, amendment)}/{reconciliation_stem(plan, pass_id, round_id)}.md"


def blind_dir(plan: Plan, pass_id: str) -> str:
    return f"{plan.study_dir}/{BLIND_DIR}/{pass_id}"


def blind_key_path(plan: Plan, pass_id: str) -> str:
    return f"{blind_dir(plan, pass_id)}/{BLIND_KEY}"


def blind_key_seal_path(plan: Plan, pass_id: str) -> str:
    return f"{plan.study_dir}/{SEALS_DIR}/{BLIND_KEY_SEAL_PREFIX}{pass_id}{SEAL_SUFFIX}"


def probe_paths(plan: Plan) -> tuple[str, ...]:
    """Every canonical score, seal and reconciliation path of the plan (study and amendments):
    what a `.gitattributes` line must match to decide how git stores a study file."""
    sheets = [SheetId(r.id, p.id, rnd.id) for r in plan.raters for p in plan.passes for rnd in plan.rounds]
    sheets += [SheetId(r.id, p, rnd.id, a.id) for a in plan.amendments for r in plan.raters
               for p in a.passes for rnd in plan.rounds]
    out = [f(plan, s) for s in sheets for f in (score_path, seal_path)]
    out += [reconciliation_path(plan, s.pass_id, s.round_id, s.amendment) for s in sheets]
    return tuple(dict.fromkeys(out))
