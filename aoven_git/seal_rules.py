"""SPEC §5.2: the sealing rules, checked over the history model (no git, no I/O).

The rules are invariants over ancestry, never over dates or commit order in a log:

* a sheet's **seal points** are the commits that first fix it (add its seal file or its score
  file) with no other such commit among their ancestors; the earliest of them, in parent order,
  is the seal shown in reports;
* once a seal point is an ancestor of a commit, that commit must still hold the sealed seal file
  and, once revealed, score content that matches the seal. A violation is reported at the commit
  where the invariant first fails, i.e. it holds at every parent, so an edit on a branch is
  reported once, at the edit, and not again at every merge that carries it;
* "visible" uses every file ever present in an ancestor, so content that was added and deleted
  again before another rater sealed still counts.

Seal file format (auditable with coreutils: ``cd <study_dir> && sha256sum -c seals/<stem>.sha256``,
which skips ``#`` lines)::

    <sha256 hex>  <score file name>
    # aoven-git seal v1
    # rater: cto
    # pass: unblinded
    # round: main
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from aoven_git import naming
from aoven_git.history import Entry, History
from aoven_git.model import Plan, Seal, SheetId, Violation

SEAL_MAGIC = "# aoven-git seal v1"
FORCE_TRAILER = "Aoven-Force"
SEAL_TRAILER = "Aoven-Seal"
REVEAL_TRAILER = "Aoven-Reveal"

#: codes of SPEC §5.2, plus three for files the rules cannot interpret
CODES = (
    "visible-at-seal", "sealed-together", "modified-after-seal", "deleted-after-seal",
    "digest-mismatch", "unauthorized-author", "unsigned-commit", "plan-changed-after-seal",
    "shallow-history", "corrupt-seal", "unknown-file", "symlink",
)


# --------------------------------------------------------------------------- seal files


@dataclass(frozen=True)
class SealFile:
    digest: str
    filename: str
    rater: str
    pass_id: str
    round_id: str


_FIRST = re.compile(r"^([0-9a-f]{64})  (\S[^\n]*)$")
_META = re.compile(r"^# (rater|pass|round): (\S+)$")


def format_seal(digest: str, filename: str, sheet: SheetId) -> bytes:
    return (
        f"{digest}  {filename}\n{SEAL_MAGIC}\n# rater: {sheet.rater}\n"
        f"# pass: {sheet.pass_id}\n# round: {sheet.round_id}\n"
    ).encode()


def parse_seal(data: bytes) -> SealFile | tuple[int, str]:
    """The seal, or (line, problem) for the first malformed line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return 1, "seal file is not UTF-8"
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return 1, "seal file is empty"
    first = _FIRST.match(lines[0])
    if not first:
        return 1, "first line must be `<64 lower-case hex digits>  <score file name>`"
    if len(lines) < 2 or lines[1] != SEAL_MAGIC:
        return 2, f"second line must be `{SEAL_MAGIC}`"
    meta: dict[str, str] = {}
    for n, line in enumerate(lines[2:], start=3):
        m = _META.match(line)
        if not m:
            return n, "expected `# rater: …`, `# pass: …` or `# round: …`"
        if m.group(1) in meta:
            return n, f"`{m.group(1)}` given twice"
        meta[m.group(1)] = m.group(2)
    for key in ("rater", "pass", "round"):
        if key not in meta:
            return len(lines) + 1, f"missing `# {key}: …` line"
    return SealFile(first.group(1), first.group(2), meta["rater"], meta["pass"], meta["round"])


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- locked plan keys

Locked = tuple[str, Any]  # ("absent", None) | ("error", message) | ("ok", (values, locked list))


def locked_view(data: bytes | None) -> Locked:
    """The plain data of every key the plan lists under `locked` (comments and layout do not
    count: editing a comment after sealing is allowed)."""
    if data is None:
        return ("absent", None)
    from aoven_git.yamlio import YamlError, load_yaml

    try:
        raw, _lines = load_yaml(data.decode("utf-8"))
    except UnicodeDecodeError:
        return ("error", "plan is not UTF-8")
    except YamlError as exc:
        return ("error", f"line {exc.line}: {exc.message}" if exc.line else exc.message)
    if not isinstance(raw, dict):
        return ("error", "plan is not a YAML mapping")
    locked = raw.get("locked") or []
    if not isinstance(locked, list):
        return ("error", "`locked` is not a list")
    return ("ok", (raw, tuple(str(k) for k in locked)))


def locked_changes(old: Locked, new: Locked) -> list[str]:
    """Human-readable differences between two locked views (empty: no locked change)."""
    if old[0] != "ok" or new[0] != "ok":
        if old == new:
            return []
        if new[0] == "absent":
            return ["the plan file was deleted"]
        if old[0] == "absent":
            return ["the plan file was added"]
        if new[0] == "error":
            return [f"the plan no longer parses ({new[1]})"]
        return [f"the plan was repaired from a broken version ({old[1]})"]
    (old_raw, old_locked), (new_raw, new_locked) = old[1], new[1]
    out = []
    unlocked = [k for k in old_locked if k not in new_locked]
    if unlocked:
        out.append(f"removed from `locked`: {', '.join(unlocked)}")
    for key in dict.fromkeys((*old_locked, *new_locked)):
        if old_raw.get(key, _MISSING) != new_raw.get(key, _MISSING):
            out.append(f"`{key}` changed")
    return out


_MISSING = object()


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class SheetSeal:
    seal: Seal
    revealed: str | None = None  # commit of the first reveal (digest seals)

    def as_dict(self) -> dict[str, Any]:
        s = self.seal
        return {"rater": s.rater, "pass": s.pass_id, "round": s.round_id, "commit": s.commit,
                "kind": s.kind, "path": s.path, "revealed": self.revealed}


@dataclass
class SealReport:
    commit: str | None
    seals: list[SheetSeal] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    pending: list[SheetId] = field(default_factory=list)
    forced_reveals: list[dict[str, str]] = field(default_factory=list)
    to_sign: list[tuple[str, str]] = field(default_factory=list)  # (commit, rater) needing a signature
    git_calls: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def status(self) -> Literal["complete", "pending", "violated"]:
        if self.violations:
            return "violated"
        return "pending" if self.pending else "complete"

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "status": self.status,
            "commit": self.commit,
            "seals": [s.as_dict() for s in self.seals],
            "violations": [v.as_dict() for v in self.violations],
            "pending": [{"rater": p.rater, "pass": p.pass_id, "round": p.round_id} for p in self.pending],
            "forced_reveals": self.forced_reveals,
        }


# --------------------------------------------------------------------------- the rules


@dataclass
class _Sheet:
    id: SheetId
    content: set[str] = field(default_factory=set)
    seals: set[str] = field(default_factory=set)


def _bits(mask: int) -> Iterable[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def tracked(plan: Plan, plan_path: str, path: str) -> bool:
    return path == plan_path or naming.classify(plan, path).kind != "other" or miscased(plan, path)


def miscased(plan: Plan, path: str) -> bool:
    """A study-dir name that is a score, seal or reconciliation name but for letter case
    (`Scores_CTO.md`). File names are case-sensitive, so the rules would otherwise ignore it,
    while on a case-insensitive disk (macOS, Windows) it is the very file others read."""
    prefix = plan.study_dir.rstrip("/") + "/"
    if not path.startswith(prefix) or naming.classify(plan, path).kind != "other":
        return False
    parts = path[len(prefix):].lower().split("/")
    if len(parts) == 2:
        return parts[0] == naming.SEALS_DIR and parts[1].endswith(naming.SEAL_SUFFIX)
    return len(parts) == 1 and parts[0].endswith(".md") and \
        parts[0].startswith((naming.SCORE_PREFIX, naming.RECONCILIATION_STEM))


def check(plan: Plan, hist: History, plan_path: str) -> SealReport:
    """Every rule of SPEC §5.2 except signatures (which need git: see `to_sign`)."""
    nodes, anc = hist.nodes, hist.anc
    report = SealReport(hist.commit, git_calls=hist.git_calls)
    found: list[tuple[int, Violation]] = []

    def flag(node: int, code: str, rater: str | None, message: str, path: str | None = None) -> None:
        found.append((node, Violation(code, rater, nodes[node].sha, message, path)))

    # -- paths, classes, presence ----------------------------------------------------------
    paths = sorted({p for n in nodes for p in n.state})
    bit = {p: k for k, p in enumerate(paths)}
    classes = {p: naming.classify(plan, p) for p in paths if p != plan_path}
    ever: list[int] = []
    for n in nodes:
        m = 0
        for p in n.state:
            m |= 1 << bit[p]
        for q in n.parents:
            m |= ever[q]
        ever.append(m)

    def ever_in_parents(i: int, path: str) -> bool:
        return any(ever[q] >> bit[path] & 1 for q in nodes[i].parents)

    # origin events: the commit's entry differs from every parent's (merges that just carry a
    # branch's change are not origins)
    events: list[dict[str, str]] = []  # per node: path -> "add" | "modify" | "delete"
    for n in nodes:
        ev: dict[str, str] = {}
        parent_states = [nodes[q].state for q in n.parents] or [{}]
        keys = set(n.state).union(*parent_states)
        for p in keys:
            v = n.state.get(p)
            olds = [s.get(p) for s in parent_states]
            if all(o != v for o in olds):
                ev[p] = "delete" if v is None else ("add" if all(o is None for o in olds) else "modify")
        events.append(ev)

    # -- sheets ------------------------------------------------------------------------------
    sheets: dict[SheetId, _Sheet] = {}
    recon: dict[tuple[str, str], set[str]] = {}
    for p, c in classes.items():
        if c.kind == "other":
            first = next((i for i, ev in enumerate(events) if ev.get(p) in ("add", "modify")), None)
            if first is not None and miscased(plan, p):
                flag(first, "unknown-file", None,
                     f"{p}: a study file name in the wrong letter case; names are case-sensitive "
                     "(scores_<rater>….md, reconciliation….md, seals/scores_<rater>….sha256)", p)
            continue
        first = next((i for i, ev in enumerate(events) if ev.get(p) in ("add", "modify")), None)
        if c.problem is not None or c.sheet is None:
            if first is not None:
                code = "corrupt-seal" if c.kind == "seal" else "unknown-file"
                flag(first, code, None, f"{p}: {c.problem or 'not a file of this plan'}", p)
            continue
        if c.kind == "reconciliation":
            recon.setdefault((c.sheet.pass_id, c.sheet.round_id), set()).add(p)
            continue
        sheet = sheets.setdefault(c.sheet, _Sheet(c.sheet))
        (sheet.content if c.kind == "score" else sheet.seals).add(p)
    for i, ev in enumerate(events):
        for p, what in ev.items():
            entry = nodes[i].state.get(p)
            if what != "delete" and entry is not None and entry.symlink and p in classes \
                    and classes[p].kind != "other":
                flag(i, "symlink", classes[p].sheet.rater if classes[p].sheet else None,
                     f"{p} is committed as a symbolic link; study files must be regular files", p)

    # seal files: well-formed and naming the sheet their file name names
    digests: dict[str, SealFile] = {}
    for sheet in sheets.values():
        for sp in sheet.seals:
            for i, ev in enumerate(events):
                if ev.get(sp) not in ("add", "modify"):
                    continue
                blob = nodes[i].state[sp].blob
                if blob in digests:
                    continue
                parsed = parse_seal(hist.blobs.get(blob, b""))
                if isinstance(parsed, tuple):
                    flag(i, "corrupt-seal", sheet.id.rater, f"{sp}:{parsed[0]}: {parsed[1]}", sp)
                    continue
                expected = naming.score_path(plan, sheet.id).rsplit("/", 1)[1]
                got = (parsed.rater, parsed.pass_id, parsed.round_id)
                want = (sheet.id.rater, sheet.id.pass_id, sheet.id.round_id)
                if got != want:
                    flag(i, "corrupt-seal", sheet.id.rater,
                         f"{sp}: names {'/'.join(got)} but its file name is the seal of {'/'.join(want)}", sp)
                    continue
                if parsed.filename != expected and parsed.filename not in {
                        c.rsplit("/", 1)[1] for c in sheet.content}:
                    flag(i, "corrupt-seal", sheet.id.rater,
                         f"{sp}:1: digest is for {parsed.filename!r}, expected {expected!r}", sp)
                    continue
                digests[blob] = parsed

    # -- seal points -------------------------------------------------------------------------
    all_seal_points = 0
    content_seal_raters: dict[int, set[str]] = {}
    info: dict[SheetId, dict[str, Any]] = {}
    for sid, sheet in sheets.items():
        adds: dict[int, str] = {}  # node -> "content" | "digest"
        for i, ev in enumerate(events):
            kinds = {("content" if p in sheet.content else "digest") for p, w in ev.items()
                     if w == "add" and (p in sheet.content or p in sheet.seals)}
            if kinds:
                adds[i] = "content" if "content" in kinds else "digest"
        if not adds:
            continue
        mask = sum(1 << i for i in adds)
        points = [i for i in adds if not (anc[i] & ~(1 << i) & mask)]
        primary = min(points)
        kind = adds[primary]
        for s in points:
            all_seal_points |= 1 << s
            if adds[s] == "content":
                content_seal_raters.setdefault(s, set()).add(sid.rater)
        seal_blob = {sp: next(nodes[i].state[sp].blob for i, ev in enumerate(events) if ev.get(sp) == "add")
                     for sp in sheet.seals if any(ev.get(sp) == "add" for ev in events)}
        digest: SealFile | None = None
        if kind == "digest":
            sp0 = next(sp for sp in sorted(sheet.seals) if events[primary].get(sp) == "add")
            digest = digests.get(nodes[primary].state[sp0].blob)
            seal_path = sp0
        else:
            seal_path = next(cp for cp in sorted(sheet.content) if events[primary].get(cp) == "add")
        first_blob = {cp: next(nodes[i].state[cp].blob for i, ev in enumerate(events) if ev.get(cp) == "add")
                      for cp in sheet.content if any(ev.get(cp) == "add" for ev in events)}
        info[sid] = {"points": points, "primary": primary, "kind": kind, "mask": sum(1 << s for s in points),
                     "seal_blob": seal_blob, "digest": digest, "first_blob": first_blob, "path": seal_path,
                     "adds": adds}

    # -- sealed-together ---------------------------------------------------------------------
    together: set[tuple[int, str]] = set()
    for i, raters in sorted(content_seal_raters.items()):
        if len(raters) > 1:
            ordered = sorted(raters)
            names = ", ".join(ordered[:-1]) + " and " + ordered[-1]
            nobody = "neither" if len(ordered) == 2 else "none of them"
            for r in ordered:
                together.add((i, r))
                flag(i, "sealed-together", r,
                     f"one commit adds the score files of {names}: {nobody} sealed before the others' "
                     "scores were in the repository")

    # -- visible-at-seal ---------------------------------------------------------------------
    def added_at(path: str, before: int) -> int:
        return next(i for i, ev in enumerate(events) if ev.get(path) in ("add", "modify")
                    and anc[before] >> i & 1)

    for sid, d in info.items():
        others = 0
        for oid, other in sheets.items():
            if oid.rater != sid.rater and (oid.pass_id, oid.round_id) == (sid.pass_id, sid.round_id):
                for cp in other.content:
                    others |= 1 << bit[cp]
        for rp in recon.get((sid.pass_id, sid.round_id), ()):
            others |= 1 << bit[rp]
        for s in d["points"]:
            seen = []
            for k in _bits(ever[s] & others):
                p = paths[k]
                if not ever_in_parents(s, p) and classes[p].kind == "score" and classes[p].sheet \
                        and d["adds"][s] == "content" and (s, classes[p].sheet.rater) in together:
                    continue  # reported as sealed-together
                seen.append(p)
            if seen:
                where = ", ".join(f"{p} (added in {nodes[added_at(p, s)].short})" for p in seen[:3])
                more = f" and {len(seen) - 3} more" if len(seen) > 3 else ""
                flag(s, "visible-at-seal", sid.rater,
                     f"{sid.rater} sealed {sid.pass_id}/{sid.round_id} after other content of that pass "
                     f"and round was in the history: {where}{more}", d["path"])

    # -- modified / deleted / digest-mismatch (first failing commit only) --------------------
    failing: dict[tuple[str, str], int] = {}  # (path, code) -> bitmask of failing nodes
    for i, n in enumerate(nodes):
        for sid, d in info.items():
            if not anc[i] & d["mask"]:
                continue
            sheet = sheets[sid]
            checks: list[tuple[str, str, str]] = []  # (path, code, message)
            for sp, blob in d["seal_blob"].items():
                if not ever[i] >> bit[sp] & 1:
                    continue
                e = n.state.get(sp)
                if e is None:
                    checks.append((sp, "deleted-after-seal", f"seal file {sp} of {sid} was deleted"))
                elif e.blob != blob:
                    checks.append((sp, "modified-after-seal", f"seal file {sp} of {sid} was changed"))
            for cp in sheet.content:
                if not ever[i] >> bit[cp] & 1:
                    continue
                e = n.state.get(cp)
                if e is None:
                    checks.append((cp, "deleted-after-seal", f"sealed score file {cp} of {sid} was deleted"))
                    continue
                good, what = _content_ok(e, d, cp, hist)
                if good:
                    continue
                if d["kind"] == "digest" and not ever_in_parents(i, cp):
                    checks.append((cp, "digest-mismatch", f"revealed {cp}: {what}"))
                else:
                    checks.append((cp, "modified-after-seal",
                                   f"sealed score file {cp} of {sid} changed: {what}"))
            for path, code, msg in checks:
                # a mismatching reveal that stays as it is is one offence, not one per commit
                key = (path, "deleted" if code == "deleted-after-seal" else "content")
                prev = failing.get(key, 0)
                if not any(prev >> q & 1 for q in n.parents):
                    flag(i, code, sid.rater, msg, path)
                failing[key] = prev | (1 << i)

    # -- unauthorized-author -----------------------------------------------------------------
    owner: dict[str, str] = {p: sid.rater for sid, s in sheets.items() for p in (*s.content, *s.seals)}
    for i, ev in enumerate(events):
        raters = sorted({owner[p] for p in ev if p in owner})
        for r in raters:
            rater = plan.rater(r)
            emails = {e.lower() for e in rater.emails} if rater else set()
            if emails and nodes[i].email.lower() not in emails:
                touched = sorted(p for p in ev if owner.get(p) == r)
                flag(i, "unauthorized-author", r,
                     f"{', '.join(touched)} of {r} changed by {nodes[i].email or '(no email)'}, "
                     f"not one of {r}'s emails ({', '.join(sorted(emails))})", touched[0])

    # -- plan-changed-after-seal -------------------------------------------------------------
    views: dict[str | None, Locked] = {}

    def view(i: int) -> Locked:
        e = nodes[i].state.get(plan_path)
        key = e.blob if e else None
        if key not in views:
            views[key] = locked_view(hist.blobs.get(key) if key else None)
        return views[key]

    if all_seal_points:
        for i, n in enumerate(nodes):
            if not anc[i] & all_seal_points:
                continue
            own = nodes[i].state.get(plan_path)
            is_point = bool(all_seal_points >> i & 1)
            for q in n.parents or (None,):
                theirs = nodes[q].state.get(plan_path) if q is not None else None
                if own == theirs:
                    continue
                if not (is_point or (q is not None and anc[q] & all_seal_points)):
                    continue
                changes = locked_changes(view(q) if q is not None else ("absent", None), view(i))
                if changes:
                    first = nodes[min(_bits(anc[i] & all_seal_points))].short
                    flag(i, "plan-changed-after-seal", None,
                         f"locked plan changed after scoring began (first seal {first}): "
                         f"{'; '.join(changes)}",
                         plan_path)
                    break

    # -- seals, reveals, pending -------------------------------------------------------------
    for sid in sorted(info, key=lambda s: (info[s]["primary"], str(s))):
        d = info[sid]
        reveal = None
        if d["kind"] == "digest":
            reveals = [i for i, ev in enumerate(events) for cp in sheets[sid].content
                       if ev.get(cp) == "add" and not ever_in_parents(i, cp)]
            for i in sorted(set(reveals)):
                reveal = reveal or nodes[i].sha
                report.to_sign.append((nodes[i].sha, sid.rater))
                if any(v.lower().startswith("reveal") for v in hist.trailers(i, FORCE_TRAILER)):
                    report.forced_reveals.append({"rater": sid.rater, "pass": sid.pass_id,
                                                  "round": sid.round_id, "commit": nodes[i].sha})
        for s in d["points"]:
            report.to_sign.append((nodes[s].sha, sid.rater))
        report.seals.append(SheetSeal(
            Seal(sid.rater, sid.pass_id, sid.round_id, nodes[d["primary"]].sha, d["kind"], d["path"]),
            reveal))

    rounds = {plan.main_round.id} | {s.round_id for s in sheets} | {r for _, r in recon}
    for rnd in plan.rounds:
        if rnd.id not in rounds:
            continue
        for p in plan.passes:
            for r in plan.required_raters:
                sid = SheetId(r.id, p.id, rnd.id)
                if sid not in info:
                    report.pending.append(sid)

    found.sort(key=lambda t: (t[0], t[1].code, t[1].rater or "", t[1].path or ""))
    seen_v: set[tuple[str, str | None, str | None, str | None]] = set()
    for _, v in found:
        key = (v.code, v.rater, v.commit, v.path)
        if key not in seen_v:
            seen_v.add(key)
            report.violations.append(v)
    return report


def _content_ok(e: Entry, d: dict[str, Any], cp: str, hist: History) -> tuple[bool, str]:
    if e.symlink:
        return True, ""  # reported once as `symlink` where the link is committed
    digest: SealFile | None = d["digest"]
    if d["kind"] == "digest" and digest is not None:
        data = hist.blobs.get(e.blob)
        if data is None:
            return False, "its content could not be read"
        got = sha256(data)
        if got == digest.digest:
            return True, ""
        return False, f"SHA-256 {got[:12]}… differs from the sealed digest {digest.digest[:12]}…"
    if e.blob == d["first_blob"].get(cp):
        return True, ""
    return False, "its bytes differ from the sealed version"
