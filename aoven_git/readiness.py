"""Whether a round may be judged at all: the seals and validation parts of the report and the
NOT-READY blockers they raise.

verify-seal's and validate's documents come in as plain dicts (``None`` when not run, e.g.
outside git); this module reduces them to what the report shows and to the sentences that
withhold a verdict: invalid files of the round, seal violations, pending seals of the passes the
verdict uses, or a history that could not be verified. Plain data in and out; analysis.py calls
it between agreement and the verdict (docs/statistics.md, "The verdict, step by step").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aoven_git.model import Reconciliation, ScoreSheet

NOT_VERIFIED = "not a git repository, so the sealing history was not checked"


@dataclass(frozen=True)
class Readiness:
    seals: dict[str, Any]
    validation: dict[str, Any]
    blockers: list[str]


def readiness(
    *,
    round_id: str,
    used: set[str],
    seals: Mapping[str, Any] | None,
    validation: Mapping[str, Any] | None,
    sheets: Sequence[ScoreSheet],
    reconciliations: Sequence[Reconciliation],
    problems: Sequence[str] = (),
) -> Readiness:
    """The seals and validation parts of the report, and every NOT-READY blocker in order:
    invalid files, seal problems, then the caller's ``problems`` (grouping, pending raters).
    ``used`` are the passes the verdict reads (a pending seal elsewhere blocks nothing)."""
    seals_doc, seal_blockers = _seals(seals, round_id, used)
    validation_doc, invalid = _validation(validation, sheets, reconciliations, round_id)
    return Readiness(seals_doc, validation_doc, [*invalid, *seal_blockers, *problems])


def _seals(
    seals: Mapping[str, Any] | None, round_id: str, used: set[str]
) -> tuple[dict[str, Any], list[str]]:
    if seals is None:
        return _seals_doc(False, "not-verified", NOT_VERIFIED), []
    violations = [
        {k: v.get(k) for k in ("code", "rater", "commit", "message")}
        for v in seals.get("violations", []) or []
    ]
    excluded = excluded_raters(seals)
    status = seals.get("status") or (
        "violated" if violations else "complete" if seals.get("ok") else "pending"
    )
    if status == "unverifiable":
        message = str(seals.get("message") or "verify-seal could not run")
        return _seals_doc(False, status, message), [f"the seals could not be verified: {message}"]
    # an optional rater's violation excludes that rater's sheets instead of blocking the verdict
    blockers = [
        f"seal violation {v['code']}" + (f" by {v['rater']}" if v.get("rater") else "") + f": {v['message']}"
        for v in violations if v.get("rater") not in excluded
    ]
    if status == "violated" and not violations:
        blockers.append("verify-seal reports violated seals")
    if status == "pending":
        blockers += _pending_seals(seals.get("pending"), round_id, used)
    elif status not in ("complete", "violated"):
        blockers.append(f"verify-seal reports an unknown status {status!r}")
    message = seals.get("message") or {
        "complete": "every seal verified from history",
        "pending": "some required raters have not sealed yet",
        "violated": f"{len(violations)} seal violation(s)",
    }.get(status, str(status))
    doc = _seals_doc(True, status, message, violations, list(seals.get("forced_reveals", []) or []))
    doc["excluded_raters"] = [{"rater": r, "codes": c} for r, c in excluded.items()]
    doc["timeline"] = [dict(e) for e in seals.get("timeline", []) or [] if isinstance(e, Mapping)]
    doc["seals"] = [dict(s) for s in seals.get("seals", []) or [] if isinstance(s, Mapping)]
    return doc, blockers


def excluded_raters(seals: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """Optional raters verify-seal excludes, with the codes of their violations."""
    out: dict[str, list[str]] = {}
    for e in (seals or {}).get("excluded_raters", []) or []:
        if isinstance(e, Mapping) and isinstance(e.get("rater"), str):
            out[e["rater"]] = [str(c) for c in e.get("codes", []) or []]
    return out


def _seals_doc(
    verified: bool, status: str, message: str, violations: list | None = None, forced: list | None = None
) -> dict[str, Any]:
    return {"verified": verified, "status": status, "message": message,
            "violations": violations or [], "forced_reveals": forced or []}


def _pending_seals(detail: Any, round_id: str, used: set[str]) -> list[str]:
    if not (isinstance(detail, list) and all(isinstance(p, Mapping) for p in detail)):
        return ["verify-seal reports required raters that have not sealed yet (status pending)"]
    return [
        f"required rater {p.get('rater', '?')} has not sealed scores for pass {p.get('pass', '?')}"
        for p in detail
        # an amendment's pending re-scores never hold up the pre-registered verdict
        if p.get("round", round_id) == round_id and p.get("pass") in used | {None} and not p.get("amendment")
    ]


def _validation(
    validation: Mapping[str, Any] | None,
    sheets: Sequence[ScoreSheet],
    reconciliations: Sequence[Reconciliation],
    round_id: str,
) -> tuple[dict[str, Any], list[str]]:
    files = _validated_files(validation, sheets, reconciliations)
    bad: dict[str, int] = {}
    for f in files:
        if f["errors"] and f["round"] in (None, round_id):
            bad[f["path"]] = len(f["errors"])
    for s in sheets:  # a sheet handed over invalid blocks even if the summary missed it
        if not s.ok and s.sheet.round_id == round_id:
            bad.setdefault(s.path, len(s.errors))
    errors = sum(len(f["errors"]) for f in files)
    warnings = sum(len(f["warnings"]) for f in files)
    ok = bool(validation.get("ok", errors == 0)) if validation is not None else errors == 0
    doc = {
        "ok": ok and errors == 0,
        "errors": errors,
        "warnings": warnings,
        "files": [{k: f[k] for k in ("path", "errors", "warnings")} for f in files],
    }
    blockers = [f"{path} is invalid ({n} error{'s' if n != 1 else ''})" for path, n in bad.items()]
    return doc, blockers


def _validated_files(
    validation: Mapping[str, Any] | None,
    sheets: Sequence[ScoreSheet],
    reconciliations: Sequence[Reconciliation],
) -> list[dict[str, Any]]:
    """validate's per-file findings (or the sheets' own), plus reconciliations it did not list."""
    def entry(path: str, errors: list, warnings: list, round_id: str | None) -> dict[str, Any]:
        return {"path": path, "errors": errors, "warnings": warnings, "round": round_id}

    if validation is not None:
        files = [entry(f.get("path"), list(f.get("errors", []) or []), list(f.get("warnings", []) or []),
                       f.get("round")) for f in validation.get("files", []) or []]
    else:
        files = [entry(s.path, [f.as_dict() for f in s.errors], [f.as_dict() for f in s.warnings],
                       s.sheet.round_id) for s in sheets]
    listed = {f["path"] for f in files}
    files += [
        entry(r.path, [f.as_dict() for f in r.findings if f.severity == "error"],
              [f.as_dict() for f in r.findings if f.severity == "warning"], r.round_id)
        for r in reconciliations if r.path not in listed
    ]
    return files
