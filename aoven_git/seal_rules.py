"""The sealing rules, one function per rule, over the ledger (docs/sealing.md). Pure: no git, no I/O.

Git ancestry proves only that something came *before* (a commit's id covers its parents); it never
proves that something was not yet readable. So every rule is an invariant over ancestry, never over
dates, and the central one is positive: a rater's seal must be an ancestor of every commit that
made another rater's scores readable (for passes of the same round that share a condition).

Violation codes (stable; the rule function that reports each is named after it):

======================== ==================================================================
code                     rule
======================== ==================================================================
visible-at-seal          another rater's plaintext (score, copy or reconciliation) of an
                         overlapping pass is in R's seal commit or its ancestry
unproven-order           R's seal is not an ancestor of a commit adding another rater's
                         plaintext of an overlapping pass, nor that commit of R's seal
sealed-together          one commit adds the score content of two raters
resealed                 a second seal point for one sheet, fixing other bytes
copied-seal              a seal fixing exactly the bytes another rater's seal fixed
duplicate-sheet          a second accepted file (or seal file) for one sheet; two accepted
                         files of one reconciliation side by side
stray-scores             a copy of scores outside its sheet's accepted file (any folder,
                         extension or letter case; or a score table under the study dir)
modified-after-seal      a later commit changes a sealed score file or its seal file
deleted-after-seal       a sealed score file or seal file disappears
digest-mismatch          the revealed bytes' SHA-256 differ from the digest seal
unauthorized-author      a rater's files added or changed by an author outside their e-mails
unsigned-commit          (sealing.py) require_signed and a seal/reveal lacks a good signature
plan-changed-after-seal  (frozen_rules.py) locked keys, raters, security or the signers file,
                         an amendment entry or a scored response changed after the first seal;
                         or the plan at the first seal does not parse
withdrawal-bundled       (withdrawal_rules.py) a withdrawal commit changes anything else
withdrawal-changed       (withdrawal_rules.py) a withdrawal removed or edited afterwards
pass-order               (pass_order_rules.py) a rater's first commit of a sheet of a pass with
                         `after: [P]` has not their seal of P (same round) among its ancestors
attributes-changed-after-seal
                         (frozen_rules.py) a .gitattributes line deciding how git stores a
                         study file changed after the first seal
shallow-history          (sealing.py) the clone is shallow: nothing can be proven
corrupt-seal             a malformed seal file, or one naming another sheet
unknown-file             a study file name the plan cannot resolve (or in the wrong case)
symlink                  a study file committed as a symbolic link
======================== ==================================================================

A violation is reported once, at the first commit where it holds (it held at no parent), except
the ordering rules, which are reported at the seal they concern.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from aoven_git import ledger as ledger_mod
from aoven_git.frozen_rules import (
    amendment_changed_after_seal,
    attributes_changed_after_seal,
    blind_corpus_changed,
    blind_key,
    first_failures,
    plan_changed_after_seal,
    plan_raw,
    responses_changed_after_seal,
)
from aoven_git.history import Entry, History
from aoven_git.ledger import Found, Ledger, Plaintext, SheetRecord
from aoven_git.model import Plan, SheetId
from aoven_git.pass_order_rules import pass_order
from aoven_git.seals import SealFile, parse_seal, sha256
from aoven_git.withdrawal_rules import withdrawal_bundled, withdrawal_changed, withdrawn_at

_v = ledger_mod.found

# --------------------------------------------------------------------------- helpers


def overlap(plan: Plan, a: str, b: str) -> bool:
    """Two passes overlap when they score a common condition."""
    pa, pb = plan.pass_(a), plan.pass_(b)
    return pa is not None and pb is not None and bool(set(pa.conditions) & set(pb.conditions))


def concerns(plan: Plan, sid: SheetId, pt: Plaintext) -> bool:
    """Whether `pt` must come after `sid`'s seal: another rater's plaintext of an overlapping pass of
    the same round. An amendment's sheets are ordered within the amendment (they come after the
    study's reveals by design); the study's own sheets must precede every copy of scores, an
    amendment's re-scores included."""
    same_scope = sid.amendment is None or pt.amendment == sid.amendment
    return (pt.rater != sid.rater and pt.round_id == sid.round_id and same_scope
            and overlap(plan, sid.pass_id, pt.pass_id))


def joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _where(led: Ledger, pts: list[Plaintext]) -> str:
    label = {"reconciliation": "reconciliation", "key": "blind key"}
    shown = [f"{pt.path} ({label.get(pt.kind, pt.rater) if pt.rater is None else pt.rater}, "
             f"{led.short(pt.node)})" for pt in pts[:3]]
    return ", ".join(shown) + (f" and {len(pts) - 3} more" if len(pts) > 3 else "")


# --------------------------------------------------------------------------- file rules


def symlink(led: Ledger) -> Iterator[Found]:
    for i, ev in enumerate(led.events):
        for path, what in ev.items():
            role = led.roles.get(path)
            entry = led.nodes[i].state.get(path)
            if what != "delete" and entry is not None and entry.symlink and role and \
                    role.kind in ("score", "seal", "reconciliation"):
                rater = role.sheet.rater if role.sheet and role.sheet.rater else None
                yield _v(led, i, "symlink", rater,
                         f"{path} is committed as a symbolic link; study files must be regular files", path,
                         role.sheet.amendment if role.sheet else None)


def unknown_file(led: Ledger) -> Iterator[Found]:
    for path, role in led.roles.items():
        if role.kind != "unknown":
            continue
        first = next(led.origins(path, "add", "modify"), None)
        if first is not None:
            code = "corrupt-seal" if "/seals/" in f"/{path}" and path.endswith(".sha256") else "unknown-file"
            yield _v(led, first, code, None, f"{path}: {role.problem or 'not a file of this plan'}", path)


def corrupt_seal(led: Ledger) -> Iterator[Found]:
    from aoven_git import naming

    for rec in led.sheets.values():
        for sp in rec.seal_paths:
            for i in led.origins(sp, "add", "modify"):
                data = led.blob(i, sp)
                parsed = parse_seal(data) if data is not None else (1, "seal file is too large to be one")
                if isinstance(parsed, tuple):
                    yield _v(led, i, "corrupt-seal", rec.id.rater, f"{sp}:{parsed[0]}: {parsed[1]}", sp,
                             rec.id.amendment)
                    continue
                names = {naming.score_path(led.plan, rec.id).rsplit("/", 1)[1],
                         *(p.rsplit("/", 1)[1] for p in rec.score_paths)}
                if parsed.sheet != rec.id:
                    yield _v(led, i, "corrupt-seal", rec.id.rater, f"{sp}: names {parsed.sheet} but its "
                             f"file name is the seal of {rec.id}", sp, rec.id.amendment)
                elif parsed.filename not in names:
                    yield _v(led, i, "corrupt-seal", rec.id.rater, f"{sp}:1: digest is for "
                             f"{parsed.filename!r}, expected one of {sorted(names)}", sp, rec.id.amendment)


def stray_scores(led: Ledger) -> Iterator[Found]:
    for s in led.strays:
        whose = f"{s.sheet.rater}'s {s.sheet.pass_id}/{s.sheet.round_id} scores" if s.sheet else "scores"
        problem = led.roles[s.path].problem
        why = f" ({problem})" if problem else ""
        yield _v(led, s.node, "stray-scores", s.sheet.rater if s.sheet else None,
                 f"{s.path} holds or is named as a copy of {whose} outside the study's score files{why}: "
                 "anyone can read it, and it counts as that rater's plaintext for the seal order", s.path,
                 s.sheet.amendment if s.sheet else None)


def duplicate_sheet(led: Ledger) -> Iterator[Found]:
    for rec in led.sheets.values():
        for paths, what in ((rec.score_paths, "score file"), (rec.seal_paths, "seal file")):
            for extra in paths[1:]:
                first = next(led.origins(extra, "add", "modify"), None)
                if first is not None:
                    yield _v(led, first, "duplicate-sheet", rec.id.rater,
                             f"{extra} is a second {what} for {rec.id} besides {paths[0]}: a sheet has one "
                             "file and one seal", extra, rec.id.amendment)


def duplicate_reconciliation(led: Ledger) -> Iterator[Found]:
    """A reconciliation has one file: with two accepted names side by side (`reconciliation.md`
    and `reconciliation_main.md`) a rater's newer statement in one would sit beside an older one
    in the other, and neither could be said to be their last word. Renaming the file is fine."""
    by_sheet: dict[SheetId, list[str]] = {}
    for path, role in sorted(led.roles.items()):
        if role.kind == "reconciliation" and role.sheet is not None:
            by_sheet.setdefault(role.sheet, []).append(path)
    for sheet, paths in by_sheet.items():
        if len(paths) < 2:
            continue

        def together(i: int, paths: list[str] = paths) -> list[str]:
            present = [p for p in paths if p in led.nodes[i].state]
            return present if len(present) > 1 else []

        for i, present in first_failures(led, lambda i: True, together):
            yield _v(led, i, "duplicate-sheet", None,
                     f"{present[1]} is a second file for the reconciliation of "
                     f"{sheet.pass_id}/{sheet.round_id} besides {present[0]}: a reconciliation has one "
                     "file (merge the rows into one)",
                     present[1], sheet.amendment)


def resealed(led: Ledger) -> Iterator[Found]:
    for rec in led.sheets.values():
        for group in rec.groups()[1:]:
            for p in group:
                yield _v(led, p, "resealed", rec.id.rater,
                         f"{rec.id} is sealed a second time with other bytes on a parallel line of history "
                         f"(first seal {led.short(rec.primary)}): a sheet has one seal point", rec.path,
                         rec.id.amendment)


def copied_seal(led: Ledger) -> Iterator[Found]:
    """A seal fixing bytes another rater's seal already fixed is a copy: nonces are random per
    seal (and `seal` writes the rater into the file), so two raters' honest sheets never share a
    digest. Reported at the later seal (at both when neither came first)."""
    seen: dict[str, list[tuple[SheetId, int]]] = {}
    for sid, rec in led.sheets.items():
        for p in rec.points:
            seen.setdefault(rec.fingerprints[p], []).append((sid, p))
    for sharing in seen.values():
        for sid, p in sharing:
            earlier = [o for o, q in sharing if o.rater != sid.rater and not led.before(p, q)]
            if earlier:
                yield _v(led, p, "copied-seal", sid.rater,
                         f"{sid} seals exactly the bytes {joined(sorted({o.rater for o in earlier}))} sealed "
                         f"({led.sheets[earlier[0]].path}): a copy of another rater's scores, not an own "
                         "judgement", led.sheets[sid].path, sid.amendment)


# --------------------------------------------------------------------------- order rules


def _together(led: Ledger) -> dict[int, list[str]]:
    """Nodes where content seals of two or more raters land together."""
    by_node: dict[int, set[str]] = {}
    for rec in led.sheets.values():
        for p in rec.points:
            if rec.kinds[p] == "content":
                by_node.setdefault(p, set()).add(rec.id.rater)
    return {n: sorted(r) for n, r in by_node.items() if len(r) > 1}


def scopes(sheets: Iterable[SheetId]) -> list[str | None]:
    """Where a finding over `sheets` belongs: the study's (None) when any of them is a study
    sheet, so no study sheet's offence hides in an amendment; else each amendment involved, the
    finding reported once for each (it blocks every one of them, and never the study)."""
    found = {s.amendment for s in sheets}
    return [None] if None in found or not found else sorted(a for a in found if a is not None)


def sealed_together(led: Ledger) -> Iterator[Found]:
    for node, raters in sorted(_together(led).items()):
        nobody = "neither" if len(raters) == 2 else "none of them"
        for scope in scopes(sid for sid, rec in led.sheets.items() if node in rec.points):
            for r in raters:
                yield _v(led, node, "sealed-together", r,
                         f"one commit adds the score files of {joined(raters)}: {nobody} sealed before the "
                         "others' scores were in the repository", None, scope)


@dataclass
class _Order:
    visible: dict[tuple[int, SheetId], list[Plaintext]] = field(default_factory=dict)
    unproven: dict[tuple[int, SheetId], list[Plaintext]] = field(default_factory=dict)


def _order_of(led: Ledger, rec: SheetRecord, pts: list[Plaintext], together: dict[int, list[str]],
              out: _Order) -> None:
    for group in rec.groups():
        for pt in pts:
            if any(led.before(p, pt.node) for p in group):
                continue  # proven: the seal came first
            if pt.node in group and rec.id.rater in together.get(pt.node, ()) \
                    and pt.rater in together.get(pt.node, ()):
                continue  # this very seal is a content seal landing with theirs: sealed-together
            seen = next((p for p in group if led.at_or_before(pt.node, p)), None)
            if seen is not None:
                out.visible.setdefault((seen, rec.id), []).append(pt)
            else:
                out.unproven.setdefault((group[0], rec.id), []).append(pt)


def ordering(led: Ledger) -> _Order:
    """For every seal, the plaintext it does not provably precede (computed once per ledger)."""
    cached = getattr(led, "_order", None)
    if cached is not None:
        return cached
    out = _Order()
    together = _together(led)
    for sid, rec in led.sheets.items():
        _order_of(led, rec, [pt for pt in led.plaintext if concerns(led.plan, sid, pt)], together, out)
    led._order = out  # type: ignore[attr-defined]
    return out


def visible_at_seal(led: Ledger) -> Iterator[Found]:
    for (node, sid), pts in ordering(led).visible.items():
        yield _v(led, node, "visible-at-seal", sid.rater,
                 f"{sid.rater} sealed {sid.pass_id}/{sid.round_id} after other raters' scores of an "
                 f"overlapping pass were in the history: {_where(led, pts)}", led.sheets[sid].path,
                 sid.amendment)


def unproven_order(led: Ledger) -> Iterator[Found]:
    for (node, sid), pts in ordering(led).unproven.items():
        yield _v(led, node, "unproven-order", sid.rater,
                 f"nothing proves {sid.rater} sealed {sid.pass_id}/{sid.round_id} before reading "
                 f"{_where(led, pts)}: the seal is not an ancestor of that commit (a seal made on a branch "
                 "from an older commit and merged later proves nothing)", led.sheets[sid].path,
                 sid.amendment)


# --------------------------------------------------------------------------- sealed files


def _content_ok(led: Ledger, rec: SheetRecord, path: str, entry: Entry) -> tuple[bool, str]:
    """Content is sealed when it is bytes some seal point of the sheet fixed (a parallel reseal is
    reported once, as `resealed`, not again wherever its bytes travel)."""
    if entry.symlink:
        return True, ""  # reported once as `symlink` where the link is committed
    data = led.hist.blobs.get(entry.blob)
    if entry.blob == rec.first_content.get(path):
        return True, ""
    if data is not None and sha256(data) in rec.fingerprints.values():
        return True, ""
    if rec.kind == "digest" and rec.digest is not None:
        if data is None:
            return False, "its content could not be read (too large?)"
        return False, f"SHA-256 {sha256(data)[:12]}… differs from the sealed digest {rec.digest.digest[:12]}…"
    return False, "its bytes differ from the sealed version"


def _sealed_file_problems(led: Ledger, rec: SheetRecord, i: int,
                          present: dict[str, int]) -> Iterator[tuple[str, str, str]]:
    node = led.nodes[i]
    # the sheet's own file and seal file; a second file is `duplicate-sheet`, reported once
    for sp, blobs in rec.seal_blobs.items():
        if sp == rec.seal_paths[0] and led.hist.anc[i] & present.get(sp, 0):
            e = node.state.get(sp)
            if e is None:
                yield sp, "deleted-after-seal", f"seal file {sp} of {rec.id} was deleted"
            elif e.blob not in blobs:
                yield sp, "modified-after-seal", f"seal file {sp} of {rec.id} was changed"
    for cp in rec.score_paths[:1]:
        if not led.hist.anc[i] & present.get(cp, 0):
            continue
        e = node.state.get(cp)
        if e is None:
            yield cp, "deleted-after-seal", f"sealed score file {cp} of {rec.id} was deleted"
            continue
        good, what = _content_ok(led, rec, cp, e)
        if good:
            continue
        first_time = not any(led.hist.anc[q] & present.get(cp, 0) for q in node.parents)
        if rec.kind == "digest" and first_time:
            yield cp, "digest-mismatch", f"revealed {cp}: {what}"
        else:
            yield cp, "modified-after-seal", f"sealed score file {cp} of {rec.id} changed: {what}"


def changed_after_seal(led: Ledger) -> Iterator[Found]:
    """modified-after-seal, deleted-after-seal and digest-mismatch, each at the first commit where
    the sealed state no longer holds (an offence carried by merges is not repeated)."""
    present: dict[str, int] = {}
    for i, n in enumerate(led.nodes):
        for p in n.state:
            present[p] = present.get(p, 0) | 1 << i
    failing: dict[tuple[str, str], int] = {}
    for i, n in enumerate(led.nodes):
        for rec in led.sheets.values():
            if not any(led.at_or_before(p, i) for p in rec.points):
                continue
            for path, code, msg in _sealed_file_problems(led, rec, i, present):
                key = (path, "deleted" if code == "deleted-after-seal" else "content")
                prev = failing.get(key, 0)
                if not any(prev >> q & 1 for q in n.parents):
                    yield _v(led, i, code, rec.id.rater, msg, path, rec.id.amendment)
                failing[key] = prev | 1 << i


def unauthorized_author(led: Ledger) -> Iterator[Found]:
    sheet_of = {p: rec.id for rec in led.sheets.values() for p in (*rec.score_paths, *rec.seal_paths)}
    for i, ev in enumerate(led.events):
        # a deletion is `deleted-after-seal` (or harmless before any seal), not authorship
        for r in sorted({sheet_of[p].rater for p, what in ev.items() if p in sheet_of and what != "delete"}):
            rater = led.plan.rater(r)
            emails = {e.lower() for e in rater.emails} if rater else set()
            email = led.nodes[i].email
            if emails and email.lower() not in emails:
                touched = sorted(p for p, what in ev.items()
                                 if p in sheet_of and sheet_of[p].rater == r and what != "delete")
                for scope in scopes(sheet_of[p] for p in touched):
                    yield _v(led, i, "unauthorized-author", r,
                             f"{', '.join(touched)} of {r} changed by {email or '(no email)'}, not one of "
                             f"{r}'s emails as of the first seal ({', '.join(sorted(emails))})", touched[0],
                             scope)


#: every rule of verify-seal, by the code(s) it reports: a reader finds a code's rule here
RULES: dict[str, Callable[[Ledger], Iterable[Found]]] = {
    "symlink": symlink,
    "unknown-file": unknown_file,
    "corrupt-seal": corrupt_seal,
    "stray-scores": stray_scores,
    "duplicate-sheet": duplicate_sheet,
    "duplicate-sheet (reconciliation)": duplicate_reconciliation,
    "resealed": resealed,
    "copied-seal": copied_seal,
    "sealed-together": sealed_together,
    "visible-at-seal": visible_at_seal,
    "unproven-order": unproven_order,
    "modified-after-seal / deleted-after-seal / digest-mismatch": changed_after_seal,
    "unauthorized-author": unauthorized_author,
    "plan-changed-after-seal": plan_changed_after_seal,
    "plan-changed-after-seal (amendments)": amendment_changed_after_seal,
    "plan-changed-after-seal (responses)": responses_changed_after_seal,
    "digest-mismatch / corrupt-seal (blind key)": blind_key,
    "blind-corpus-changed": blind_corpus_changed,
    "withdrawal-bundled": withdrawal_bundled,
    "withdrawal-changed": withdrawal_changed,
    "pass-order": pass_order,
    "attributes-changed-after-seal": attributes_changed_after_seal,
}


# --------------------------------------------------------------------------- the hook's extra rule


def must_precede(plan: Plan, rater: str, pass_id: str, round_id: str,
                 amendment: str | None) -> list[SheetId]:
    """The sheets of `rater` whose seal must come before another rater's plaintext of (pass,
    round, amendment) — the reading of `concerns` from the plaintext's side: every study sheet of
    an overlapping pass, and for an amendment's re-scores also that amendment's own sheets of an
    overlapping pass in its scope."""
    out = [SheetId(rater, p.id, round_id) for p in plan.passes if overlap(plan, p.id, pass_id)]
    scope = plan.amendment(amendment) if amendment else None
    if scope is not None:
        out += [SheetId(rater, p, round_id, amendment) for p in scope.passes if overlap(plan, p, pass_id)]
    return out


def unsealed_readers(led: Ledger, node: int) -> list[tuple[Plaintext, list[str]]]:
    """Plaintext committed at `node` while a required rater has a sheet that must precede it
    (`must_precede`) with no seal before it: those raters could read it before fixing their own
    scores. Not a violation in history (they are pending; if they seal later, that seal is the
    violation), so only the hook refuses it, unless the reveal is forced and recorded. A rater
    withdrawn at `node` is waited for no longer (withdrawal_rules)."""
    out = []
    for pt in (p for p in led.plaintext if p.node == node and p.kind != "stray"):
        missing = []
        for r in led.plan.required_raters:
            if r.id == pt.rater or withdrawn_at(led, r.id, node):
                continue
            for sid in must_precede(led.plan, r.id, pt.pass_id, pt.round_id, pt.amendment):
                rec = led.sheets.get(sid)
                if not (rec and any(led.before(q, node) for q in rec.points)):
                    missing.append(r.id)
                    break
        if missing:
            out.append((pt, missing))
    return out


def findings(led: Ledger) -> list[Found]:
    """Every rule's violations, in history order, each reported once."""
    found = [f for rule in dict.fromkeys(RULES.values()) for f in rule(led)]
    found.sort(key=lambda t: (t[0], t[1].code, t[1].rater or "", t[1].path or ""))
    seen: set[tuple[str, str | None, str | None, str | None]] = set()
    out = []
    for node, v in found:
        key = (v.code, v.rater, v.commit, v.path)
        if key not in seen:
            seen.add(key)
            out.append((node, v))
    return out


def _plan_at(led: Ledger, node: int, plan_path: str) -> Plan | str | None:
    """The plan committed at `node` as a `Plan` (None when absent), or why it cannot be read."""
    from aoven_git.errors import PlanError
    from aoven_git.plan import parse_plan

    data = led.blob(node, plan_path)
    if data is None:
        return None if led.nodes[node].state.get(plan_path) is None else "it is too large"
    try:
        return parse_plan(data, display=f"{plan_path}@{led.short(node)}")
    except PlanError as exc:
        return exc.message


def _seal_like(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name.startswith("scores_") and name.endswith((".md", ".sha256"))


def _bootstrap(led: Ledger, head_plan: Plan, plan_path: str) -> Plan:
    """The plan to find the first seal with: the one committed at the first commit that adds
    anything named like a score or seal file, found without any plan, so that a plan moving the
    study dir later cannot hide the seals (the HEAD plan when that one cannot be read)."""
    adds = [i for i, ev in enumerate(led.events) for p, w in ev.items() if w == "add" and _seal_like(p)]
    for i in ledger_mod.minimal(adds, led.hist):
        found = plan_raw(led, i)
        if found[0] == "ok":
            if found[1] == head_plan.raw:
                return head_plan
            plan = _plan_at(led, i, plan_path)
            return plan if isinstance(plan, Plan) else head_plan
    return head_plan


def _governing(led: Ledger) -> int:
    """The commit whose plan is frozen: the first seal's — or its parent's when that seal commit
    itself edits the plan (a seal must not loosen the rules it is judged by). With parallel first
    seals under different plans, the oldest plan version wins (introduced at an ancestor of the
    others), whatever order the history lists them in."""
    nodes = []
    for f in led.first_seals:
        parents = led.nodes[f].parents
        edits = bool(parents) and all(plan_raw(led, q) != plan_raw(led, f) for q in parents)
        nodes.append(parents[0] if edits else f)

    def introduced(n: int) -> int:
        entry = led.nodes[n].state.get(led.plan_path)
        return next((i for i in led.origins(led.plan_path, "add", "modify")
                     if led.nodes[i].state.get(led.plan_path) == entry and led.at_or_before(i, n)), n)

    oldest = [n for n in nodes if not any(led.before(introduced(m), introduced(n)) for m in nodes)]
    return min(oldest, key=lambda n: led.nodes[n].sha)


def judge(head_plan: Plan, hist: History, plan_path: str, *,
          head_blob: str | None = None) -> tuple[Ledger, list[Found]]:
    """The ledger under the plan as of the first seal (raters, e-mails, `required`, security).

    The first seal is found under the plan committed with the first score- or seal-like file
    (`_bootstrap`); the plan that governs it (`_governing`) is the one the history is judged by,
    with the amendments appended since: later edits cannot turn a violation into a clean result.
    """
    led = ledger_mod.build(head_plan, plan_path, hist)
    if head_blob is not None:  # the caller parsed that blob already
        led.plan_raws[head_blob] = ("ok", head_plan.raw)
    start = _bootstrap(led, head_plan, plan_path)
    if start is not head_plan:
        led = _rebuilt(led, start, head_plan, plan_path)
    extra: list[Found] = []
    if not led.first_seals:
        return _judged(led, head_plan), extra
    node = led.frozen_node = _governing(led)
    if plan_raw(led, node) == ("ok", led.plan.raw):
        return _judged(led, head_plan), extra
    frozen = _plan_at(led, node, plan_path)
    if isinstance(frozen, str):
        extra.append(_v(led, node, "plan-changed-after-seal", None,
                        f"the plan that governs the first seal cannot be read: {frozen}", plan_path))
    elif frozen is not None:
        led = _rebuilt(led, frozen, head_plan, plan_path)
        led.frozen_node = node
    return _judged(led, head_plan), extra


def _rebuilt(led: Ledger, plan: Plan, head_plan: Plan, plan_path: str) -> Ledger:
    """The same history read under `plan` (with the amendments appended since, from HEAD)."""
    raws = led.plan_raws
    out = ledger_mod.build(replace(plan, amendments=head_plan.amendments), plan_path, led.hist)
    out.plan_raws = raws
    return out


def _judged(led: Ledger, head_plan: Plan) -> Ledger:
    led.head_plan = head_plan
    if led.frozen_node is None and led.first_seals:
        led.frozen_node = led.first_seals[0]
    return led


__all__ = ["RULES", "SealFile", "concerns", "findings", "judge", "overlap", "unsealed_readers"]
