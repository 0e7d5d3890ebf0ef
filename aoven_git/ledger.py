"""The study's history as the sealing rules read it (docs/sealing.md, "How history is read").

Built once from the history model (`history.History`) and the plan, then read by every rule of
`seal_rules`: what each path is (`Role`), what each commit changed (origin events), each sheet's
seal points and the bytes they fix, every commit that made someone's scores readable (`Plaintext`),
every stray copy, and the plan as of the first seal. Pure: no git, no files.

Two words carry the design:

* an **origin event** is a commit whose entry for a path differs from the entry in every parent —
  a merge that only carries a branch's change is not one, so each change is judged once, where it
  was made;
* a sheet's **seal points** are the commits that first fix it (add its seal file or its score
  file) with no other such commit among their ancestors. Points that fix the same bytes (a seal
  commit cherry-picked and also merged) are one seal; points that fix different bytes are a reseal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from aoven_git import gitattributes, naming
from aoven_git.history import History, Node
from aoven_git.model import Plan, SheetId, Violation
from aoven_git.score_copies import Original, copied
from aoven_git.seals import SealFile, parse_seal, sha256

if TYPE_CHECKING:
    from aoven_git.key_copies import Secret

RoleKind = Literal["score", "seal", "reconciliation", "stray", "candidate", "outside", "unknown", "plan",
                   "signers", "attributes", "blind-item", "blind-key", "blind-key-seal"]
Event = Literal["add", "modify", "delete"]

#: study files the rules read are read up to this size (a score or seal file is at most 1 MiB)
CANDIDATE_BYTES = 1024 * 1024
#: any other file under the study dir is read up to this size to see whether it holds a score
#: table; a larger one cannot be read and is reported as a copy nobody can check
SCAN_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Role:
    """What a path is to the study. `sheet`: the sheet of a score or seal file, the sheet a stray
    copy's name points at, or ("", pass, round) for a reconciliation file."""

    kind: RoleKind
    sheet: SheetId | None = None
    problem: str | None = None


@dataclass(frozen=True)
class Plaintext:
    """A commit that made scores readable: `rater` is whose (None: a reconciliation, everyone's)."""

    node: int
    path: str
    rater: str | None
    pass_id: str
    round_id: str
    amendment: str | None = None
    kind: Literal["score", "stray", "reconciliation", "key"] = "score"


@dataclass(frozen=True)
class Stray:
    node: int
    path: str
    sheet: SheetId | None  # whose scores it copies, when the name or front matter says


@dataclass
class SheetRecord:
    id: SheetId
    score_paths: list[str] = field(default_factory=list)  # accepted names, in order of first use
    seal_paths: list[str] = field(default_factory=list)
    points: list[int] = field(default_factory=list)  # seal points, parents first
    fingerprints: dict[int, str] = field(default_factory=dict)  # point -> what it fixes
    kinds: dict[int, str] = field(default_factory=dict)  # point -> "digest" | "content"
    digest: SealFile | None = None  # the primary point's digest seal, when it is one
    seal_blobs: dict[str, set[str]] = field(default_factory=dict)  # seal path -> blobs it was sealed with
    first_content: dict[str, str] = field(default_factory=dict)  # score path -> blob a content seal fixed

    @property
    def primary(self) -> int:
        return self.points[0]

    @property
    def kind(self) -> str:
        return self.kinds[self.primary]

    @property
    def path(self) -> str:
        """The file shown for the seal: the digest seal file, or the content-sealed score file."""
        return (self.seal_paths or self.score_paths)[0] if self.kind == "digest" else self.score_paths[0]

    def groups(self) -> list[list[int]]:
        """Seal points grouped by the bytes they fix, the primary's group first."""
        out: dict[str, list[int]] = {}
        for p in self.points:
            out.setdefault(self.fingerprints[p], []).append(p)
        return list(out.values())


@dataclass
class Ledger:
    plan: Plan  # the plan the history is judged by: as of the first seal
    plan_path: str
    hist: History
    roles: dict[str, Role]
    events: list[dict[str, Event]]
    sheets: dict[SheetId, SheetRecord]
    plaintext: list[Plaintext]
    strays: list[Stray]
    first_seals: list[int]  # seal points with no seal point of any sheet among their ancestors
    head_plan: Plan | None = None
    plan_raws: dict[str, tuple[str, Any]] = field(default_factory=dict)  # plan blob -> parsed YAML
    frozen_node: int | None = None  # the commit whose plan the history is judged by
    secrets: list[Secret] = field(default_factory=list)  # what each committed blind key gives away

    @property
    def nodes(self) -> list[Node]:
        return self.hist.nodes

    def before(self, a: int, b: int) -> bool:
        """a is a proper ancestor of b."""
        return a != b and bool(self.hist.anc[b] >> a & 1)

    def at_or_before(self, a: int, b: int) -> bool:
        return bool(self.hist.anc[b] >> a & 1)

    def after_first_seal(self, node: int) -> bool:
        return any(self.at_or_before(s, node) for s in self.first_seals)

    def short(self, node: int) -> str:
        return self.hist.nodes[node].short

    def first_seal_name(self, node: int) -> str:
        """The short id of the first seal at `node`, for a message: the node's commit, or — in the
        hook's staged history, where HEAD's tree stands for all of HEAD's history — the oldest
        commit there that added a score or seal file of a sheet sealed at `node`."""
        paths = sorted({p for rec in self.sheets.values() if node in rec.points
                        for p in (*rec.seal_paths, *rec.score_paths)})
        return self.hist.first_added(node, paths)

    def origins(self, path: str, *kinds: Event) -> Iterator[int]:
        """Nodes with an origin event of one of `kinds` on `path`, parents first."""
        for i, ev in enumerate(self.events):
            if ev.get(path) in kinds:
                yield i

    def blob(self, node: int, path: str) -> bytes | None:
        entry = self.hist.nodes[node].state.get(path)
        return None if entry is None else self.hist.blobs.get(entry.blob)


#: what a sealing rule yields: the commit (node index) it holds at, and the violation
Found = tuple[int, Violation]


def found(led: Ledger, node: int, code: str, rater: str | None, message: str,
          path: str | None = None, amendment: str | None = None) -> Found:
    """A violation at `node`, carrying that commit's id."""
    return node, Violation(code, rater, led.nodes[node].sha, message, path, amendment)


# --------------------------------------------------------------------------- roles


def role_of(plan: Plan, plan_path: str, signers: str | None, responses: object, path: str) -> Role | None:
    """The role of a tracked path, or None when the rules ignore it (responses, other files)."""
    if path == plan_path:
        return Role("plan")
    if signers and path == signers:
        return Role("signers")
    if gitattributes.applies_to(path, plan.study_dir):
        return Role("attributes")
    c = naming.classify(plan, path)
    if c.kind in ("blind-item", "blind-key", "blind-key-seal"):
        return Role("unknown", None, c.problem) if c.problem else Role(c.kind, c.sheet)
    if c.kind == "score" and c.sheet is None:
        return Role("stray", naming.stray_owner(plan, PurePosixPath(path).name), c.problem)
    if c.kind == "stray" and not naming.folded_inside(plan, path):
        return Role("outside")  # outside the study folder a name proves nothing: the content decides
    if c.kind in ("score", "seal", "reconciliation", "stray"):
        if c.kind in ("seal", "reconciliation") and c.sheet is None:
            return Role("unknown", None, c.problem)
        return Role(c.kind, c.sheet, c.problem)
    if naming.miscased(plan, path):
        return Role("unknown", None, f"{path}: a study file name in the wrong letter case; names are "
                                     "case-sensitive (reconciliation….md, seals/scores_<rater>….sha256, "
                                     "blind/<pass>/…)")
    if naming.folded_inside(plan, path) and not responses.match(path):  # type: ignore[attr-defined]
        return Role("candidate")
    return None


def tracked(plan: Plan, plan_path: str, path: str) -> bool:
    """Whether the history model keeps a path: the study dir (and its spellings in another letter
    case or Unicode normalisation), the plan, the allowed-signers file, and every `scores_*` name
    anywhere (possible copies, read for their content)."""
    signers = plan.security.allowed_signers
    return (path in (plan_path, signers) or naming.folded_inside(plan, path)
            or PurePosixPath(path).name.lower().startswith(naming.SCORE_PREFIX)
            or gitattributes.applies_to(path, plan.study_dir))


def pathspecs(plan: Plan, plan_path: str) -> list[str]:
    """What verify-seal's one `git log` asks for (see `tracked`)."""
    specs = [f":(literal){plan.study_dir}", naming.twin_glob(plan.study_dir), f":(literal){plan_path}",
             f":(glob,icase)**/{naming.SCORE_PREFIX}*",
             *(f":(literal){p}" for p in gitattributes.candidates(plan.study_dir))]
    if plan.security.allowed_signers:
        specs.append(f":(literal){plan.security.allowed_signers}")
    return specs


# --------------------------------------------------------------------------- events


def origin_events(nodes: list[Node]) -> list[dict[str, Event]]:
    """Per node, the paths whose entry differs from the entry in every parent."""
    out: list[dict[str, Event]] = []
    for n in nodes:
        ev: dict[str, Event] = {}
        parent_states = [nodes[q].state for q in n.parents] or [{}]
        for p in set(n.state).union(*parent_states):
            new = n.state.get(p)
            olds = [s.get(p) for s in parent_states]
            if all(o != new for o in olds):
                ev[p] = "delete" if new is None else ("add" if all(o is None for o in olds) else "modify")
        out.append(ev)
    return out


# --------------------------------------------------------------------------- sheets


def _fingerprint(hist: History, node: Node, path: str, kind: str) -> str:
    blob = node.state[path].blob
    data = hist.blobs.get(blob)
    if kind == "digest":
        parsed = parse_seal(data) if data is not None else None
        return parsed.digest if isinstance(parsed, SealFile) else f"seal-blob:{blob}"
    return sha256(data) if data is not None else f"blob:{blob}"


def _sheet_paths(roles: dict[str, Role]) -> dict[SheetId, SheetRecord]:
    sheets: dict[SheetId, SheetRecord] = {}
    for path, role in sorted(roles.items()):
        if role.kind in ("score", "seal") and role.sheet is not None:
            rec = sheets.setdefault(role.sheet, SheetRecord(role.sheet))
            (rec.score_paths if role.kind == "score" else rec.seal_paths).append(path)
    return sheets


def _order_paths(rec: SheetRecord, events: list[dict[str, Event]]) -> None:
    first = {p: next((i for i, ev in enumerate(events) if ev.get(p) in ("add", "modify")), len(events))
             for p in (*rec.score_paths, *rec.seal_paths)}
    rec.score_paths.sort(key=lambda p: (first[p], p))
    rec.seal_paths.sort(key=lambda p: (first[p], p))


def _seal_points(rec: SheetRecord, hist: History, events: list[dict[str, Event]]) -> None:
    adds: dict[int, tuple[str, str]] = {}  # node -> (kind, path)
    for i, ev in enumerate(events):
        content = [p for p in rec.score_paths if ev.get(p) == "add"]
        seal = [p for p in rec.seal_paths if ev.get(p) == "add"]
        if content or seal:
            adds[i] = ("content", content[0]) if content else ("digest", seal[0])
    mask = sum(1 << i for i in adds)
    for i, (kind, path) in adds.items():
        if not hist.anc[i] & ~(1 << i) & mask:
            rec.points.append(i)
            rec.kinds[i] = kind
            rec.fingerprints[i] = _fingerprint(hist, hist.nodes[i], path, kind)
    if not rec.points:
        return
    for sp in rec.seal_paths:
        adds = [i for i, ev in enumerate(events) if ev.get(sp) == "add"]
        # the first add, and the add at every seal point (a parallel reseal is `resealed`, once)
        rec.seal_blobs[sp] = {hist.nodes[i].state[sp].blob for i in adds if i == adds[0] or i in rec.kinds}
    for cp in rec.score_paths:  # content that a content seal point itself fixed
        at = next((i for i, ev in enumerate(events) if ev.get(cp) == "add"), None)
        if at is not None and rec.kinds.get(at) == "content":
            rec.first_content[cp] = hist.nodes[at].state[cp].blob
    if rec.kind == "digest":
        data = hist.blobs.get(hist.nodes[rec.primary].state[rec.path].blob) if rec.path in \
            hist.nodes[rec.primary].state else None
        parsed = parse_seal(data) if data is not None else None
        rec.digest = parsed if isinstance(parsed, SealFile) else None


def build_sheets(roles: dict[str, Role], hist: History,
                 events: list[dict[str, Event]]) -> dict[SheetId, SheetRecord]:
    sheets = _sheet_paths(roles)
    for rec in sheets.values():
        _order_paths(rec, events)
        _seal_points(rec, hist, events)
    return {sid: rec for sid, rec in sheets.items() if rec.points}


# --------------------------------------------------------------------------- plaintext and strays


def content_sheets(plan: Plan, data: bytes | None) -> list[SheetId] | None:
    """For a file that is no study file by name (or a blinded response): None when it holds no
    score table; else the sheets whose scores it states — one per pass scoring a condition its
    tables score, for the rater its front matter names — or [] when it names no known rater.
    `data` None (too large to read) counts as scores of nobody: it cannot be cleared. A front matter
    naming a declared amendment makes them that amendment's sheets; a study sheet is ordered before
    every copy of scores all the same (`seal_rules.concerns`), so the claim hides nothing."""
    if data is None:
        return []
    low = data.lower()
    if not any(sep in low for sep in (b"|", b",", b"\t")) or \
            not any(d.id.lower().encode() in low for d in plan.dimensions):
        return None
    from aoven_git.scorefile import front_matter, scored_conditions

    conditions = scored_conditions(plan, data)
    if conditions is None:
        return None
    fm = front_matter(data)
    rater = fm.get("rater") if isinstance(fm.get("rater"), str) else None
    if rater is None or plan.rater(rater) is None:
        return []
    round_id = str(fm.get("round")) if plan.round_(str(fm.get("round"))) else plan.main_round.id
    named = fm.get("amendment")
    amendment = named if isinstance(named, str) and named in {a.id for a in plan.amendments} else None
    return [SheetId(rater, p.id, round_id, amendment) for p in plan.passes if conditions & set(p.conditions)]


def key_secrets(plan: Plan, roles: dict[str, Role], hist: History) -> list[Secret]:
    """What every blind key committed at its own path (`unblind`) gives away, so copies of it
    are found however they were re-formatted (`key_copies`)."""
    from aoven_git.key_copies import secret_of

    blobs = {(n.state[p].blob, r.sheet.pass_id) for n in hist.nodes for p, r in roles.items()
             if r.kind == "blind-key" and r.sheet is not None and p in n.state}
    found = (secret_of(pass_id, hist.blobs.get(blob)) for blob, pass_id in sorted(blobs))
    return [x for x in found if x is not None]


def originals(plan: Plan, sheets: dict[SheetId, SheetRecord], hist: History) -> list[Original]:
    """What each sealed sheet's copies are recognised by (`score_copies`): the blobs of its
    committed plaintext, the digests its seal points fixed, the cells of its first revealed file."""
    from aoven_git.scorefile import table_scores

    out = []
    for sid, rec in sorted(sheets.items(), key=lambda kv: str(kv[0])):
        blobs = list(dict.fromkeys(n.state[p].blob for n in hist.nodes for p in rec.score_paths
                                   if p in n.state))
        first = next((d for b in blobs if (d := hist.blobs.get(b)) is not None), None)
        cells = table_scores(plan, first) if first is not None else {}
        out.append(Original(sid, frozenset(blobs), frozenset(rec.fingerprints.values()), cells))
    return out


class _Copies:
    """Which sheets a file copies by content, with the originals computed once, when first needed
    (most histories have no file to compare)."""

    def __init__(self, plan: Plan, sheets: dict[SheetId, SheetRecord], hist: History) -> None:
        self.plan, self.sheets, self.hist = plan, sheets, hist
        self.known: list[Original] | None = None

    def __call__(self, node: int, path: str) -> list[SheetId]:
        if self.known is None:
            self.known = originals(self.plan, self.sheets, self.hist)
        entry = self.hist.nodes[node].state[path]
        return copied(self.plan, self.known, entry.blob, self.hist.blobs.get(entry.blob))


def find_plaintext(plan: Plan, roles: dict[str, Role], hist: History, events: list[dict[str, Event]],
                   secrets: list[Secret],
                   sheets: dict[SheetId, SheetRecord]) -> tuple[list[Plaintext], list[Stray]]:
    plaintext: list[Plaintext] = []
    strays: list[Stray] = []
    copies = _Copies(plan, sheets, hist)
    for i, ev in enumerate(events):
        for path, what in sorted(ev.items()):
            role = roles.get(path)
            if what == "delete":
                continue
            copied_keys = _key_copy(plan, hist, i, path, role, secrets)
            plaintext += [Plaintext(i, path, None, p, r.id, kind="key")
                          for p in copied_keys for r in plan.rounds]
            if role is None or (copied_keys and role.kind in ("candidate", "blind-item", "stray", "unknown")):
                continue  # a copy of a key is not read for scores as well
            found = _copy_of(plan, hist, i, path, role, copies)
            if found is not None:
                strays.append(Stray(i, path, found[0] if found else None))
                plaintext += [p for s in found for p in _plaintext_of(plan, i, path, Role("stray", s), s)]
                continue
            if role.kind == "stray":
                strays.append(Stray(i, path, role.sheet))
            plaintext += _plaintext_of(plan, i, path, role, role.sheet)
    return plaintext, strays


def _copy_of(plan: Plan, hist: History, node: int, path: str, role: Role,
             copies: _Copies) -> list[SheetId] | None:
    """For a file read by content: the sheets it copies ([]: scores of nobody known), or None
    when it is no copy. Outside the study folder only content matching a sheet makes a copy;
    inside, any score table does (whose: its front matter, else the sheet it matches). A stray
    whose name says no sheet (`scores_cto_draft.md`) is read like any candidate. Study files and
    named strays are not read here (None)."""
    if role.kind == "outside":
        return copies(node, path) or None
    if role.kind in ("candidate", "blind-item") or (role.kind == "stray" and role.sheet is None):
        found = _copied_sheets(plan, hist, node, path, role)
        return copies(node, path) if found == [] else found
    return None


def _key_copy(plan: Plan, hist: History, node: int, path: str, role: Role | None,
              secrets: list[Secret]) -> list[str]:
    """The blind passes whose key the file at `path` copies (`key_copies`): every file of the
    study folder whatever it is to the rules (a response path, a score or reconciliation file, a
    `.gitattributes`), the plan and the `.gitattributes` on the way — everything a rater reads
    beside the corpus. The key itself is no copy, and the key-digest seal file is judged by its
    own rule (`blind_corpus.key_seal_violations`: exactly what `blind` wrote)."""
    from aoven_git.key_copies import copied_passes

    blind = [p.id for p in plan.passes if p.blind]
    kind = role.kind if role is not None else None
    if not blind or kind in ("blind-key", "blind-key-seal"):
        return []
    if kind not in ("plan", "attributes") and not path.startswith(plan.study_dir.rstrip("/") + "/"):
        return []
    return copied_passes(blind, hist.blobs.get(hist.nodes[node].state[path].blob), secrets)


def _copied_sheets(plan: Plan, hist: History, node: int, path: str, role: Role) -> list[SheetId] | None:
    """`content_sheets` of a file that is no sheet by name; one named `scores_*` is a stray
    whatever it holds."""
    found = content_sheets(plan, hist.blobs.get(hist.nodes[node].state[path].blob))
    return [] if found is None and role.kind == "stray" else found


def _plaintext_of(plan: Plan, node: int, path: str, role: Role,
                  sheet: SheetId | None) -> list[Plaintext]:
    """What an add or change of `path` makes readable: a rater's scores, or everyone's (a
    reconciliation; a blind pass's key, which reveals the condition of every item of the pass)."""
    if role.kind == "reconciliation" and role.sheet is not None:
        s = role.sheet
        return [Plaintext(node, path, None, s.pass_id, s.round_id, s.amendment, kind="reconciliation")]
    if role.kind == "blind-key" and role.sheet is not None:
        return [Plaintext(node, path, None, role.sheet.pass_id, r.id, kind="key") for r in plan.rounds]
    if role.kind in ("score", "stray", "candidate") and sheet is not None:
        kind: Literal["score", "stray"] = "score" if role.kind == "score" else "stray"
        return [Plaintext(node, path, sheet.rater, sheet.pass_id, sheet.round_id, sheet.amendment, kind=kind)]
    return []


def minimal(points: Iterable[int], hist: History) -> list[int]:
    pts = sorted(set(points))
    mask = sum(1 << p for p in pts)
    return [p for p in pts if not hist.anc[p] & ~(1 << p) & mask]


def build(plan: Plan, plan_path: str, hist: History) -> Ledger:
    """The ledger of `hist`, with every path read under `plan`."""
    responses = naming.response_patterns(plan)
    signers = plan.security.allowed_signers
    paths = {p for n in hist.nodes for p in n.state}
    roles = {p: r for p in sorted(paths) if (r := role_of(plan, plan_path, signers, responses, p))}
    events = origin_events(hist.nodes)
    sheets = build_sheets(roles, hist, events)
    secrets = key_secrets(plan, roles, hist)
    plaintext, strays = find_plaintext(plan, roles, hist, events, secrets, sheets)
    first = minimal((p for rec in sheets.values() for p in rec.points), hist)
    return Ledger(plan, plan_path, hist, roles, events, sheets, plaintext, strays, first, secrets=secrets)


def want_blob(plan: Plan, plan_path: str, plan_limit: int) -> object:
    """Which blobs the rules read, and up to what size: seal files, score files and copies, the
    plan (capped: a huge plan is never parsed), the allowed-signers file, candidate files."""
    responses = naming.response_patterns(plan)
    signers = plan.security.allowed_signers

    def want(path: str) -> int:
        role = role_of(plan, plan_path, signers, responses, path)
        if role is None:  # a response: read too, for the plan the history is judged by may differ
            return SCAN_BYTES if path.startswith(plan.study_dir + "/") else 0
        if role.kind in ("candidate", "blind-item"):
            return SCAN_BYTES
        return plan_limit if role.kind == "plan" else CANDIDATE_BYTES

    return want
