"""Whether a round may be judged at all: the seals and validation parts of the report and the
NOT-READY blockers they raise.

verify-seal's and validate's documents come in as plain dicts (``None`` when not run, e.g.
outside git); this module reduces them to what the report shows and to the sentences that
withhold a verdict: invalid files of the round, seal violations, pending seals of the passes the
verdict uses, or a history that could not be verified. Plain data in and out; analysis.py calls
it between agreement and the verdict (docs/statistics.md, "The verdict, step by step").

Amendments are judged apart (docs/amendments.md, "What the report shows"): an invalid file inside
an amendment's folder, a pending re-score seal, or a violation verify-seal attributes to an
amendment (all the sheets it is about are that amendment's) makes that amendment NOT-READY
(`Readiness.amendments`) and never the pre-registered verdict. Blind passes are pending until
their key is committed (`unblind_sheets`, docs/blinding.md, "What the report shows").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from aoven_git.model import Plan, Reconciliation, ScoreSheet

NOT_VERIFIED = "not a git repository, so the sealing history was not checked"


@dataclass(frozen=True)
class Readiness:
    seals: dict[str, Any]
    validation: dict[str, Any]
    blockers: list[str]
    #: amendment id -> what keeps that amendment (and only it) NOT-READY
    amendments: dict[str, list[str]] = field(default_factory=dict)


def amendment_folders(plan: Plan) -> dict[str, str]:
    """Each amendment's folder (`<study_dir>/amendments/<id>`), by amendment id."""
    from aoven_git.naming import sheet_dir

    return {a.id: sheet_dir(plan, a.id) for a in plan.amendments}


def amendment_of(path: Any, folders: Mapping[str, str]) -> str | None:
    """The amendment whose folder holds `path`, or None for the study's own files."""
    text = str(path or "")
    return next((a for a, folder in folders.items() if text.startswith(folder + "/")), None)


def _violation_scope(v: Mapping[str, Any], folders: Mapping[str, str]) -> str | None:
    """The amendment a violation concerns: the one verify-seal names — it does so only when every
    sheet the violation is about is that amendment's re-scores, or its frozen plan entry changed.
    Never the folder the file lies in: a copy of study scores hidden in an amendment's folder
    blocks the study."""
    named = v.get("amendment")
    return str(named) if named and named in folders else None


def invalid_file(path: str, errors: int) -> str:
    return f"{path} is invalid ({errors} error{'s' if errors != 1 else ''})"


def readiness(
    *,
    round_id: str,
    used: set[str],
    seals: Mapping[str, Any] | None,
    validation: Mapping[str, Any] | None,
    sheets: Sequence[ScoreSheet],
    reconciliations: Sequence[Reconciliation],
    problems: Sequence[str] = (),
    folders: Mapping[str, str] | None = None,
) -> Readiness:
    """The seals and validation parts of the report, and every NOT-READY blocker in order:
    invalid files, seal problems, then the caller's ``problems`` (grouping, pending raters).
    ``used`` are the passes the verdict reads (a pending seal elsewhere blocks nothing).
    ``folders`` (see `amendment_folders`) sends the findings inside an amendment's folder to that
    amendment's own blockers instead."""
    folders = folders or {}
    seals_doc, seal_blockers, by_seal = _seals(seals, round_id, used, folders)
    validation_doc, invalid, by_file = _validation(validation, sheets, reconciliations, round_id, folders)
    amendments: dict[str, list[str]] = {}
    for found in (by_file, by_seal):
        for amendment, reasons in found.items():
            amendments.setdefault(amendment, []).extend(reasons)
    return Readiness(seals_doc, validation_doc, [*invalid, *seal_blockers, *problems], amendments)


def _seals(
    seals: Mapping[str, Any] | None, round_id: str, used: set[str], folders: Mapping[str, str]
) -> tuple[dict[str, Any], list[str], dict[str, list[str]]]:
    """The seals part of the report, the blockers of the verdict, and those of each amendment."""
    if seals is None:
        return _seals_doc(False, "not-verified", NOT_VERIFIED), [], {}
    # each violation says whose scope it is in: the study's (None) or an amendment's
    violations = [
        {**{k: v.get(k) for k in ("code", "rater", "commit", "message")},
         "amendment": _violation_scope(v, folders)}
        for v in seals.get("violations", []) or []
    ]
    excluded = excluded_raters(seals)
    status = seals.get("status") or (
        "violated" if violations else "complete" if seals.get("ok") else "pending"
    )
    if status == "unverifiable":
        message = str(seals.get("message") or "verify-seal could not run")
        return _seals_doc(False, status, message), [f"the seals could not be verified: {message}"], {}
    # an optional rater's violation excludes that rater's sheets instead of blocking the verdict
    blockers: list[str] = []
    by_amendment: dict[str, list[str]] = {}
    for v in violations:
        if v.get("rater") in excluded:
            continue
        by = f" by {v['rater']}" if v.get("rater") else ""
        text = f"seal violation {v['code']}{by}: {v['message']}"
        scope = v["amendment"]
        (blockers if scope is None else by_amendment.setdefault(scope, [])).append(text)
    if status == "violated" and not violations:
        blockers.append("verify-seal reports violated seals")
    if status == "pending":
        blockers += _pending_seals(seals.get("pending"), round_id, used)
        for amendment, reason in _pending_amendment_seals(seals.get("pending"), round_id):
            by_amendment.setdefault(amendment, []).append(reason)
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
    withdrawn = [dict(w) for w in seals.get("withdrawals", []) or [] if isinstance(w, Mapping)]
    if withdrawn:  # only when there are: an honest study's report keeps its exact shape
        doc["withdrawals"] = withdrawn
    if "timestamps" in seals:  # time anchors, when the plan pins authorities
        doc["timestamps"] = [dict(a) for a in seals.get("timestamps") or [] if isinstance(a, Mapping)]
    return doc, blockers, by_amendment


Scope = tuple[str, str, str | None]  # (pass, round, amendment)


def withdrawn_kept(seals: Mapping[str, Any] | None) -> dict[str, set[Scope]]:
    """Withdrawn raters verify-seal reports, each with the passes complete at the withdrawal
    commit: only their sheets there still count (docs/plan.md, "Withdrawals")."""
    out: dict[str, set[Scope]] = {}
    for w in (seals or {}).get("withdrawals", []) or []:
        if isinstance(w, Mapping) and isinstance(w.get("rater"), str):
            out[w["rater"]] = {(str(k.get("pass")), str(k.get("round")), k.get("amendment"))
                               for k in w.get("kept") or [] if isinstance(k, Mapping)}
    return out


def withdrawn_from(withdrawn: Mapping[str, set[Scope]], rater: str, scope: Scope) -> bool:
    """Whether `rater`'s sheet of `scope` left the study with their withdrawal."""
    return rater in withdrawn and scope not in withdrawn[rater]


def excluded_raters(seals: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """Optional raters verify-seal excludes, with the codes of their violations."""
    out: dict[str, list[str]] = {}
    for e in (seals or {}).get("excluded_raters", []) or []:
        if isinstance(e, Mapping) and isinstance(e.get("rater"), str):
            out[e["rater"]] = [str(c) for c in e.get("codes", []) or []]
    return out


def exclusions(
    seals: Mapping[str, Any] | None, folders: Mapping[str, str]
) -> dict[str | None, dict[str, list[str]]]:
    """The optional raters verify-seal excludes, by where their violations are: ``None`` for the
    study's (their sheets count nowhere in the pre-registered analysis), else the amendment the
    violation concerns (their re-scores count nowhere in that amendment)."""
    optional = excluded_raters(seals)
    out: dict[str | None, dict[str, list[str]]] = {}
    for v in (seals or {}).get("violations", []) or []:
        if isinstance(v, Mapping) and v.get("rater") in optional:
            codes = out.setdefault(_violation_scope(v, folders), {}).setdefault(str(v["rater"]), [])
            if str(v.get("code")) not in codes:
                codes.append(str(v.get("code")))
    for rater, codes in optional.items():  # listed without a violation to place: the study's
        if not any(rater in found for found in out.values()):
            out.setdefault(None, {})[rater] = codes
    return out


def attribution_note(seals: Mapping[str, Any] | None, source: Mapping[str, Any] | None) -> str | None:
    """None when reconciliation rows were attributed from history, else why they were not."""
    if seals is None:
        return "not a git repository: who wrote each reconciliation row was not checked"
    if (source or {}).get("work_tree"):
        return "computed from uncommitted files: who wrote each reconciliation row was not checked"
    if seals.get("status") == "unverifiable":
        return "the history could not be verified: who wrote each reconciliation row was not checked"
    if "reconciliation_rows" not in seals:
        return "verify-seal did not say who wrote each reconciliation row"
    return None


def attributed(rec: Reconciliation, seals: Mapping[str, Any] | None) -> Reconciliation:
    """`rec` with each row marked from verify-seal's attribution at the same revision (rows it did not
    see — a file it did not read — count as unattributed)."""
    if seals is None:
        return rec
    found = {(r.get("path"), r.get("line")): r for r in seals.get("reconciliation_rows", []) or []}
    rows = []
    for row in rec.rows:
        seen = found.get((rec.path, row.line))
        ok = bool(seen and seen.get("attributed") and seen.get("rater") == row.rater)
        rows.append(replace(row, attributed=ok, author=seen.get("author") if seen else None))
    return replace(rec, rows=tuple(rows))


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


def _pending_amendment_seals(detail: Any, round_id: str) -> list[tuple[str, str]]:
    """(amendment, reason) for each required rater who has not sealed an amendment's re-scores."""
    if not isinstance(detail, list):
        return []
    return [
        (str(p["amendment"]), f"required rater {p.get('rater', '?')} has not sealed the re-scores of "
                              f"amendment {p['amendment']} for pass {p.get('pass', '?')}")
        for p in detail
        if isinstance(p, Mapping) and p.get("amendment") and p.get("round", round_id) == round_id
    ]


def _validation(
    validation: Mapping[str, Any] | None,
    sheets: Sequence[ScoreSheet],
    reconciliations: Sequence[Reconciliation],
    round_id: str,
    folders: Mapping[str, str],
) -> tuple[dict[str, Any], list[str], dict[str, list[str]]]:
    """The validation part of the report, the invalid files that block the verdict, and the
    invalid files of each amendment (which block only that amendment)."""
    files = _validated_files(validation, sheets, reconciliations)
    bad: dict[str, int] = {}
    for f in files:
        if f["errors"] and f["round"] in (None, round_id):
            bad[f["path"]] = len(f["errors"])
    for s in sheets:  # a sheet handed over invalid blocks even if the summary missed it
        if not s.ok and s.sheet.round_id == round_id:
            bad.setdefault(s.path, len(s.errors))
    by_amendment: dict[str, list[str]] = {}
    for path in list(bad):
        amendment = amendment_of(path, folders)
        if amendment is not None:
            by_amendment.setdefault(amendment, []).append(invalid_file(path, bad.pop(path)))
    errors = sum(len(f["errors"]) for f in files)
    warnings = sum(len(f["warnings"]) for f in files)
    ok = bool(validation.get("ok", errors == 0)) if validation is not None else errors == 0
    doc = {
        "ok": ok and errors == 0,
        "errors": errors,
        "warnings": warnings,
        "files": [{k: f[k] for k in ("path", "errors", "warnings")} for f in files],
    }
    return doc, [invalid_file(path, n) for path, n in bad.items()], by_amendment


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


# --------------------------------------------------------------------------- blind passes


@dataclass(frozen=True)
class BlindState:
    """Where a blind pass stands in the report: `unblinded` once its key is committed (cells
    mapped back through it), `pending` before, `invalid-key` when the key cannot be read."""

    pass_id: str
    state: Literal["unblinded", "pending", "invalid-key"]
    key_path: str
    problem: str | None = None

    def as_dict(self, used: bool) -> dict[str, Any]:
        return {"pass": self.pass_id, "state": self.state, "key": self.key_path, "problem": self.problem,
                "used_by_verdict": used}

    def blocker(self) -> str | None:
        """Why the verdict cannot use this pass yet (None once unblinded)."""
        if self.state == "pending":
            return (f"blind pass {self.pass_id} is pending: its key {self.key_path} is not committed yet "
                    f"(`aoven-git unblind --pass {self.pass_id}` once every required rater has sealed)")
        if self.state == "invalid-key":
            return f"the key of blind pass {self.pass_id} cannot be read: {self.key_path}:{self.problem}"
        return None


def unblind_sheets(
    plan: Plan, sheets: Sequence[ScoreSheet], keys: Mapping[str, bytes], round_id: str
) -> tuple[list[ScoreSheet], list[BlindState]]:
    """The sheets with every blind pass's cells mapped back to (question, condition) through its
    committed key (`keys`: pass id -> the key's bytes), and the state of each blind pass.

    Full blinding covers the verdict round only (docs/blinding.md, "Re-test rounds"): in another
    round a blind pass is scored by question and condition and nothing is mapped. Without a key
    a blind sheet keeps its opaque cells, which no pass expects, so the pass has no scores yet."""
    from aoven_git.blind_corpus import map_back
    from aoven_git.blinding import KeyProblem, parse_key
    from aoven_git.naming import blind_key_path

    if round_id != plan.main_round.id:
        return list(sheets), []
    states, parsed = [], {}
    for p in (p for p in plan.passes if p.blind):
        path = blind_key_path(plan, p.id)
        data = keys.get(p.id)
        key = parse_key(data, pass_id=p.id) if data is not None else None
        if isinstance(key, KeyProblem):
            states.append(BlindState(p.id, "invalid-key", path, str(key.line) + ": " + key.message))
        elif key is None:
            states.append(BlindState(p.id, "pending", path))
        else:
            states.append(BlindState(p.id, "unblinded", path))
            parsed[p.id] = key
    return map_back(plan, sheets, parsed), states
