"""Full blinding on disk and in git: the I/O around the pure core of `blinding` (docs/blinding.md).

`blinding` builds and checks a corpus from bytes; this module knows where those bytes live: the
sources of a blind pass (the baseline as generated, every treatment from its stripped copy, each
replicate its own source), the
corpus under `<study_dir>/blind/<pass>/`, and the key, read from a commit or the work tree. It
also says what verify-seal must add for a blind pass once its key is committed
(`corpus_violations`): the corpus must be exactly the normalised sources the key names.

Violation codes of `corpus_violations` (the `blinding.check_corpus` codes, plus one) and of
`key_copy_violations`:

==================== ===================================================================
code                 meaning
==================== ===================================================================
blind-mismatch       a blinded file is not the normalisation of the source its key entry
                     names, or that source changed since blinding
blind-missing-file   a key entry has no blinded file
blind-extra-file     a file under `blind/<pass>/` has no key entry
blind-missing-item   a (question, condition, replicate) of the pass has no key entry
blind-unknown-item   a key entry names a (question, condition, replicate) not in the pass
blind-key-invalid    the committed key cannot be read (not the canonical key of this pass)
blind-key-leak       a copy of a blind key (`key_copies`) outside the study folder and
                     the plan (a file with its nonce; a commit message, note, tag
                     message, tagged blob or ref name), or a key-digest seal file not
                     exactly as `blind` wrote it, where a seal of an overlapping pass
                     does not precede it (`key_copy_violations`)
==================== ===================================================================
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from aoven_git import naming
from aoven_git.model import Cell, CellKey, Plan, ScoreSheet, SheetId, Violation
from aoven_git.score_ids import BLIND_CONDITION

if TYPE_CHECKING:
    from aoven_git.blinding import BlindKey, Item, Problem
    from aoven_git.key_copies import Secret
    from aoven_git.ledger import Ledger

__all__ = [
    "SourceRef",
    "corpus_files_at",
    "corpus_ids",
    "corpus_violations",
    "items_of",
    "key_copy_violations",
    "map_back",
    "read_at",
    "readable_keys",
    "source_refs",
    "unblind_sheet",
    "work_tree_corpus_ids",
    "work_tree_reader",
]

#: reads repository paths (those that exist) to their bytes: from a commit or from the work tree
Reader = Callable[[list[str]], dict[str, bytes]]


# --------------------------------------------------------------------------- corpus ids


def _blind_passes(plan: Plan) -> list[str]:
    return [p.id for p in plan.passes if p.blind]


def corpus_ids(plan: Plan, paths: Iterable[str]) -> dict[str, frozenset[str]]:
    """The item ids of each blind pass's corpus among repository `paths` (`blind/<pass>/<id>.md`
    directly in the pass's folder; `key.json` and any other name are not items)."""
    from aoven_git.blinding import blind_id_from_name

    folders = {naming.blind_dir(plan, p): p for p in _blind_passes(plan)}
    out: dict[str, set[str]] = {p: set() for p in folders.values()}
    for path in paths:
        parent, _, name = path.rpartition("/")
        pass_id = folders.get(parent)
        ident = blind_id_from_name(name) if pass_id is not None else None
        if pass_id is not None and ident is not None:
            out[pass_id].add(ident)
    return {p: frozenset(ids) for p, ids in out.items()}


def work_tree_corpus_ids(root: Path, plan: Plan) -> dict[str, frozenset[str]]:
    """`corpus_ids` of the files in the work tree."""
    paths: list[str] = []
    for pass_id in _blind_passes(plan):
        folder = naming.blind_dir(plan, pass_id)
        try:
            paths += [f"{folder}/{e.name}" for e in os.scandir(root / folder) if e.is_file()]
        except (FileNotFoundError, NotADirectoryError):
            continue
    return corpus_ids(plan, paths)


# --------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class SourceRef:
    """One (question, condition, replicate) of a blind pass and the repository path of its source
    response; `replicate` is 0 in a plan without replicates."""

    question: str
    condition: str
    path: str
    replicate: int = 0

    @property
    def item(self) -> tuple[str, str, int]:
        return (self.question, self.condition, self.replicate)


def source_refs(plan: Plan, pass_id: str) -> list[SourceRef]:
    """The items of a blind pass: every question of the verdict round (the plan's first) for every
    condition of the pass and every replicate; each treatment from its stripped copy, the baseline
    as generated (docs/blinding.md, "What a rater sees")."""
    p = plan.pass_(pass_id)
    if p is None:
        return []
    treatments = {c.id for c in plan.treatments}

    def path(q: str, c: str, r: int) -> str:
        return f"{plan.study_dir}/{plan.response_path(c, q, stripped=c in treatments, replicate=r)}"

    return [SourceRef(q, c, path(q, c, r), r)
            for q in plan.main_round.questions for c in p.conditions for r in plan.replicate_ids]


def read_at(root: Path, commit: str) -> Reader:
    """A reader of files as committed at `commit` (one `git cat-file --batch` per call)."""
    from aoven_git import gitio

    def read(paths: list[str]) -> dict[str, bytes]:
        found = gitio.cat_file(root, [f"{commit}:{p}" for p in paths])
        blobs = {p: found.get(f"{commit}:{p}") for p in paths}
        return {p: obj[1] for p, obj in blobs.items() if obj is not None and obj[0] == "blob"}

    return read


def work_tree_reader(root: Path) -> Reader:
    """A reader of regular files in the work tree (a symlink is not a source)."""

    def read(paths: list[str]) -> dict[str, bytes]:
        out = {}
        for p in paths:
            full = root / p
            if full.is_file() and not full.is_symlink():
                out[p] = full.read_bytes()
        return out

    return read


def items_of(plan: Plan, refs: list[SourceRef], found: Mapping[str, bytes]) -> list[Item]:
    """`blinding.Item`s of the sources that were found, with the plan's question texts."""
    from aoven_git.blinding import Item

    out = []
    for r in refs:
        question = plan.question(r.question)
        if r.path in found and question is not None:
            out.append(Item(r.question, r.condition, question.text, found[r.path], r.path, r.replicate))
    return out


# --------------------------------------------------------------------------- corpus and key at a commit


def corpus_files_at(
    root: Path, plan: Plan, pass_id: str, commit: str
) -> tuple[dict[str, bytes], bytes | None]:
    """The corpus of a pass at `commit` (name under `blind/<pass>/` → bytes; the key excluded)
    and the committed key's bytes, if any."""
    from aoven_git import gitio
    from aoven_git.studyfile import MAX_BYTES

    folder = naming.blind_dir(plan, pass_id)
    tree, _links = gitio.tree_files(root, commit, folder, limit=MAX_BYTES)
    key = tree.pop(naming.blind_key_path(plan, pass_id), None)
    return {path[len(folder) + 1 :]: data for path, data in tree.items()}, key


def _violations(plan: Plan, pass_id: str, commit: str, problems: Iterable[Problem]) -> list[Violation]:
    folder = naming.blind_dir(plan, pass_id)
    out = []
    for pr in problems:
        path = f"{folder}/{pr.name}" if pr.name else naming.blind_key_path(plan, pass_id)
        out.append(Violation(pr.code, None, commit, f"pass {pass_id}: {pr.message}", path))
    return out


def _pass_violations(root: Path, plan: Plan, pass_id: str, commit: str) -> list[Violation]:
    from aoven_git.blinding import KeyProblem, Problem, check_corpus, item_name, parse_key

    files, key_bytes = corpus_files_at(root, plan, pass_id, commit)
    if key_bytes is None:
        return []  # not unblinded yet: the pass is pending, nothing to compare
    key_path = naming.blind_key_path(plan, pass_id)
    key = parse_key(key_bytes, pass_id=pass_id)
    if isinstance(key, KeyProblem):
        why = f"{key_path}:{key.line}: {key.message}"
        return [Violation("blind-key-invalid", None, commit, why, key_path)]
    refs = source_refs(plan, pass_id)
    found = read_at(root, commit)([r.path for r in refs])
    gone = {r.item: r.path for r in refs if r.path not in found}
    problems = [pr for pr in check_corpus(key, files, items_of(plan, refs, found), plan.markers)
                if not (pr.code == "blind-unknown-item" and _item_of(key, pr) in gone)]
    entries = key.by_response()
    problems += [Problem("blind-mismatch", _file_of(entries[item].blind_id),
                         f"{item_name(*item)}: its source {path} is not committed, so the blinded file "
                         "cannot match it")
                 for item, path in sorted(gone.items()) if item in entries]
    return _violations(plan, pass_id, commit, problems)


def _item_of(key: BlindKey, problem: Problem) -> tuple[str, str, int] | None:
    from aoven_git.blinding import blind_id_from_name

    ident = blind_id_from_name(problem.name or "")
    entry = next((e for e in key.entries if e.blind_id == ident), None)
    return entry.item if entry else None


def _file_of(blind_id: str) -> str:
    from aoven_git.blinding import file_name

    return file_name(blind_id)


def corpus_violations(root: Path, plan: Plan, commit: str) -> list[Violation]:
    """What verify-seal adds for every blind pass whose key is committed at `commit`: each blinded
    file must be byte-identical to the normalisation of the source its key entry names, as
    committed at `commit`; each (question, condition, replicate) of the pass appears exactly once; no file of
    `blind/<pass>/` lacks a key entry (codes: module table). A pass whose key is not committed yet
    has nothing to check. Violations carry no rater (the corpus is the study lead's), the commit
    checked, and the corpus file (or the key) as path. Two git calls per blind pass."""
    out: list[Violation] = []
    for p in plan.passes:
        if p.blind:
            out += _pass_violations(root, plan, p.id, commit)
    return out


def key_copy_violations(root: Path, plan: Plan, commit: str, led: Ledger) -> list[Violation]:
    """`blind-key-leak`: a copy of a blind key somewhere a rater reads that the ledger does not
    read itself (it reads the study folder and the plan), in a place some seal of an overlapping
    pass does not precede: that rater could have read items' conditions. Three places
    (docs/blinding.md, "What verify-seal proves"): the key-digest seal file when it is not exactly
    what `blind` wrote (`key_seal_violations`); a file outside the study folder carrying a
    committed key's nonce (`_files_with_nonce`); and what is no file — commit messages, notes,
    tag messages and tagged blobs, ref names (`_beyond_files`)."""
    blind = [p.id for p in plan.passes if p.blind]
    if not blind:
        return []
    return [*key_seal_violations(led), *_files_with_nonce(root, plan, commit, led, blind),
            *_beyond_files(root, commit, led, blind)]


def key_seal_violations(led: Ledger) -> list[Violation]:
    """Each version of a key-digest seal file (`seals/blind_key_<P>.sha256`) must be byte for
    byte what `blind` writes for its digest and pass (`seals.format_key_seal`): anything more —
    a comment, the entries, an encoded key — is read by every rater before they seal, so it is a
    `blind-key-leak` for each seal of an overlapping pass that does not precede it. Pure: the
    ledger holds the file's versions."""
    from aoven_git.seals import format_key_seal, parse_key_seal

    out = []
    for path, role in sorted(led.roles.items()):
        if role.kind != "blind-key-seal" or role.sheet is None:
            continue
        for i in led.origins(path, "add", "modify"):
            data = led.blob(i, path)
            parsed = parse_key_seal(data) if data is not None else (0, "")
            if isinstance(parsed[0], str) and data == format_key_seal(parsed[0], role.sheet.pass_id):
                continue
            before = {n.sha for q, n in enumerate(led.nodes) if led.before(q, i)}
            out += [Violation("blind-key-leak", sid.rater, led.nodes[i].sha,
                              f"{path} is not exactly what `blind` writes (the digest line, the format "
                              "line, the pass line): its other bytes could carry pass "
                              f"{role.sheet.pass_id}'s "
                              f"key, and {sid.rater}'s seal of {sid.pass_id}/{sid.round_id} does not precede "
                              f"it ({led.short(i)})", path, sid.amendment)
                    for sid in _unproven_seals(led, role.sheet.pass_id, before)]
    return out


def _files_with_nonce(root: Path, plan: Plan, commit: str, led: Ledger, blind: list[str]) -> list[Violation]:
    """Files outside the study folder (and the plan, which the ledger reads) carrying a committed
    key's nonce: one `git log -S<nonce>` over every commit per key, one call to size and one to
    read the files it finds, one `git rev-list` per copy (none in an honest history)."""
    from aoven_git import gitio

    secrets = led.secrets
    if not secrets:
        return []
    inside = plan.study_dir.rstrip("/") + "/"
    found = [(sha, path, blob) for x in secrets
             for sha, path, blob in gitio.pickaxe_writes(root, commit, x.nonce.decode("ascii", "replace"))
             if not path.startswith(inside) and path != led.plan_path]
    return [v for sha, path, passes in _copies(root, blind, found, secrets)
            for v in _leaks(root, led, sha, path, passes)]


#: where a text that is no file was found, the commit whose ancestry orders it (None: nothing
#: orders it), whether that commit itself must follow the seals (a message is written with its
#: commit; a tag, note or ref is made after the object it names), and the bytes (None: too large)
Place = tuple[str, str | None, bool, bytes | None]


def _beyond_files(root: Path, commit: str, led: Ledger, blind: list[str]) -> list[Violation]:
    """Key copies in what is no file of a commit: commit messages in the history of `commit`
    (only those holding a blind id, a nonce or the key's format line, which git filters), every
    ref name, every annotated tag's message, every blob a tag names, every note as it stands.
    Git calls: one `git log --grep`, one `for-each-ref`, one `ls-tree` per notes ref, two to read
    note and tagged blobs (none without them), one `rev-list` per copy found."""
    from aoven_git import gitio
    from aoven_git.key_copies import copied_passes

    secrets = led.secrets
    needles = ["aoven-git blind key v1", *(x.nonce.decode("ascii", "replace") for x in secrets),
               *sorted({i.decode("ascii", "replace") for x in secrets for i in x.conditions})]
    places: list[Place] = [(f"the commit message of {sha[:10]}", sha, True, message)
                           for sha, message in gitio.grep_messages(root, commit, needles)]
    places += _ref_places(root)
    out = []
    for where, anchor, proper, data in places:
        passes = copied_passes(blind, data, secrets) if data is not None else blind
        if passes:
            out += _leaks_beyond(root, led, where, anchor, proper, passes)
    return out


def _ref_places(root: Path) -> list[Place]:
    """Ref names, tag messages, tagged blobs and notes (`_beyond_files`), each ordered by the
    commit it names, if any."""
    from aoven_git import gitio
    from aoven_git.ledger import SCAN_BYTES

    places: list[Place] = []
    blobs: list[tuple[str, str, str | None]] = []  # (where, blob, ordering commit)
    for name, kind, sha, peeled_kind, peeled, message in gitio.refs_and_targets(root):
        target_kind, target = (peeled_kind, peeled) if kind == "tag" else (kind, sha)
        anchor = target if target_kind == "commit" else None
        places.append((f"the ref name {name}", anchor, False, name.encode("utf-8", "surrogateescape")))
        if kind == "tag":
            places.append((f"the message of tag {name}", anchor, False, message))
        if target_kind == "blob":
            blobs.append((f"the blob {target[:10]} tagged {name}", target, None))
        if name.startswith("refs/notes/"):
            blobs += [(f"the note on {obj[:10]} ({name})", blob, obj)
                      for obj, blob in gitio.notes_entries(root, name)]
    data = gitio.read_small(root, [b for _, b, _ in blobs], SCAN_BYTES) if blobs else {}
    return places + [(where, anchor, False, data.get(blob)) for where, blob, anchor in blobs]


def _leaks_beyond(root: Path, led: Ledger, where: str, anchor: str | None, proper: bool,
                  passes: list[str]) -> list[Violation]:
    from aoven_git import gitio

    seen = gitio.commit_ancestors(root, anchor) if anchor else set()
    if proper and anchor:
        seen.discard(anchor)
    why = f"(after {anchor[:10]})" if anchor else "(which names no commit, so nothing orders it)"
    return [Violation("blind-key-leak", sid.rater, anchor,
                      f"{where} copies pass {p}'s key {why}, which {sid.rater}'s seal of "
                      f"{sid.pass_id}/{sid.round_id} does not precede: it names items' conditions",
                      None, sid.amendment)
            for p in passes for sid in _unproven_seals(led, p, seen)]


def _copies(root: Path, blind: list[str], found: list[tuple[str, str, str]],
            secrets: list[Secret]) -> Iterator[tuple[str, str, list[str]]]:
    """(commit, path, passes) for each file of `found` that copies a key (read up to the size the
    study folder's files are read to; a larger one counts as a copy of every key it mentions)."""
    from aoven_git import gitio
    from aoven_git.key_copies import copied_passes
    from aoven_git.ledger import SCAN_BYTES

    data = gitio.read_small(root, [b for _, _, b in found], SCAN_BYTES)
    for sha, path, blob in found:
        got = data.get(blob)
        passes = copied_passes(blind, got, secrets) if got is not None else [x.pass_id for x in secrets]
        if passes:
            yield sha, path, passes


def _leaks(root: Path, led: Ledger, sha: str, path: str, passes: list[str]) -> list[Violation]:
    from aoven_git import gitio

    seen = gitio.ancestors(root, sha) - {sha}
    return [Violation("blind-key-leak", sid.rater, sha,
                      f"{path} copies pass {p}'s key (committed in {sha[:10]}), which {sid.rater}'s seal "
                      f"of {sid.pass_id}/{sid.round_id} does not precede: the key names every item's "
                      "condition", path, sid.amendment)
            for p in passes for sid in _unproven_seals(led, p, seen)]


def _unproven_seals(led: Ledger, pass_id: str, before: set[str]) -> list[SheetId]:
    """The sheets of passes overlapping `pass_id` with a seal (every parallel seal group) that is
    not among the commits `before`."""
    from aoven_git.seal_rules import overlap

    return [sid for sid, rec in sorted(led.sheets.items(), key=lambda x: str(x[0]))
            if sid.amendment is None and overlap(led.plan, sid.pass_id, pass_id)
            and not all(any(led.nodes[q].sha in before for q in group) for group in rec.groups())]


# --------------------------------------------------------------------------- mapping cells back


def map_back(plan: Plan, sheets: Iterable[ScoreSheet], keys: Mapping[str, BlindKey]) -> list[ScoreSheet]:
    """Every sheet of a blind pass whose key is in `keys` (pass id -> key), in the verdict round and
    not an amendment's, mapped back to (question, condition) (`unblind_sheet`); others as they are.
    Full blinding covers the verdict round only (docs/blinding.md, "Re-test rounds")."""
    return [unblind_sheet(s, keys[s.sheet.pass_id])
            if s.sheet.pass_id in keys and s.sheet.round_id == plan.main_round.id and not s.sheet.amendment
            else s for s in sheets]


def readable_keys(keys: Mapping[str, bytes]) -> dict[str, BlindKey]:
    """The keys among `keys` (pass id -> bytes) that parse as that pass's key."""
    from aoven_git.blinding import BlindKey, parse_key

    return {p: k for p, data in keys.items() if isinstance(k := parse_key(data, pass_id=p), BlindKey)}


def unblind_sheet(sheet: ScoreSheet, key: BlindKey) -> ScoreSheet:
    """A blind pass's sheet with every cell mapped back through the key: `CellKey(<blind id>, "?",
    D)` becomes `CellKey(<question>, <condition>, D, <replicate>)` (replicate 0 in a plan without
    replicates). Cells of ids the key lacks are left as they are (validation has reported them
    already)."""
    entries = {e.blind_id: e for e in key.entries}

    def back(cell: Cell) -> Cell:
        e = entries.get(cell.key.question)
        if e is None or cell.key.condition != BLIND_CONDITION:
            return cell
        return replace(cell, key=CellKey(e.question, e.condition, cell.key.dimension, e.replicate))

    return replace(sheet, cells=tuple(back(c) for c in sheet.cells))
