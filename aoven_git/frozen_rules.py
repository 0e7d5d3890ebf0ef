"""The sealing rules about what the first seal freezes (docs/sealing.md, "The plan as of the first
seal"): the plan's locked keys, raters and security settings, each amendment entry once its files are
committed, the responses raters scored, and a blind pass's key; and what the blinding commit
freezes: the blind corpus and its key digest. Pure: no git, no I/O. `seal_rules.RULES`
lists them with the other rules.

Raters score a plan and a set of texts; a verdict is only pre-registered if neither moves after the
first seal. Plans are compared as parsed data (comments and layout may change) and each change is
named by its key path, old → new, so the message says what to put back.

======================== ==================================================================
code                     rule (function)
======================== ==================================================================
plan-changed-after-seal  a frozen plan key changed (`plan_changed_after_seal`); an amendment
                         entry edited or removed after its files (`amendment_changed_after_seal`);
                         a scored response changed (`responses_changed_after_seal`)
digest-mismatch          a blind key that is not the bytes its digest sealed (`blind_key`)
corrupt-seal             a malformed blind key digest (`blind_key`)
blind-corpus-changed     a blind pass's corpus or key digest changed after its blinding commit
                         (`blind_corpus_changed`)
attributes-changed-after-seal
                         a `.gitattributes` line that decides how git stores a study file
                         was added, changed or removed after the first seal
                         (`attributes_changed_after_seal`)
======================== ==================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from aoven_git import ledger as ledger_mod
from aoven_git.ledger import Found, Ledger
from aoven_git.seals import sha256

_v = ledger_mod.found

#: the plan keys that are never locked by name but are always frozen at the first seal
ALWAYS_FROZEN = ("locked", "raters", "security")
#: a design's pre-registration (docs/designs.md): the criteria, the decision table and the number of
#: sampled responses are frozen at the first seal whether or not `locked` lists them. A plan
#: written from the seed's template (whose `locked` predates them) would otherwise let a lead
#: loosen a bound, reorder the rows or add a decision table once the scores are readable, and
#: the report would read the new table (docs/sealing.md, "The plan as of the first seal").
DESIGN_FROZEN = ("criteria", "decisions", "replicates")

T = TypeVar("T")


def first_failures(led: Ledger, applies: Callable[[int], bool],
                   problem: Callable[[int], T | None]) -> Iterator[tuple[int, T]]:
    """The commits where `problem` holds while it held at none of their parents: a change is
    reported once, at the commit that made it, not again at every descendant that inherits it."""
    failing = 0
    for i, n in enumerate(led.nodes):
        if not applies(i):
            continue
        found = problem(i)
        if not found:
            continue
        if not any(failing >> q & 1 for q in n.parents):
            yield i, found
        failing |= 1 << i

View = tuple[str, Any]  # ("ok", protected data) | ("absent", None) | ("error", message)


def plan_raw(led: Ledger, node: int) -> View:
    """The plan committed at `node` as plain YAML data, ("absent", None), or ("error", why); each
    distinct blob is parsed once per ledger (the hook runs this on every commit)."""
    from aoven_git.plan import MAX_PLAN_BYTES
    from aoven_git.yamlio import YamlError, load_yaml

    entry = led.nodes[node].state.get(led.plan_path)
    if entry is None:
        return ("absent", None)
    if entry.blob in led.plan_raws:
        return led.plan_raws[entry.blob]
    data = led.hist.blobs.get(entry.blob)
    found: View
    if data is None:
        found = ("error", f"the plan is larger than the {MAX_PLAN_BYTES} bytes a plan may have")
    else:
        try:
            raw, _ = load_yaml(data.decode("utf-8"))
            found = ("ok", raw) if isinstance(raw, dict) else ("error", "the plan is not a YAML mapping")
        except UnicodeDecodeError:
            found = ("error", "the plan is not UTF-8")
        except YamlError as exc:
            found = ("error", f"the plan no longer parses (line {exc.line}: {exc.message})")
    led.plan_raws[entry.blob] = found
    return found


def plan_view(led: Ledger, node: int, frozen_keys: tuple[str, ...]) -> View:
    found = plan_raw(led, node)
    if found[0] != "ok":
        return found
    raw = found[1]
    signers = led.nodes[node].state.get(str(led.plan.security.allowed_signers or ""))
    keys = tuple(dict.fromkeys((*frozen_keys, *ALWAYS_FROZEN, *DESIGN_FROZEN)))
    return ("ok", ({k: raw.get(k) for k in keys}, signers.blob if signers else None))


def _view_changes(old: View, new: View) -> list[str]:
    """Each change as `path: old → new` (plan_diff), so the message says what to put back."""
    if old == new:
        return []
    from aoven_git.plan_diff import plan_differences

    if new[0] != "ok":
        return [str(new[1] or "the plan file was deleted")]
    if old[0] != "ok":
        return ["the plan at the first seal could not be read"]
    (old_keys, old_signers), (new_keys, new_signers) = old[1], new[1]
    out = []
    unlocked = [str(k) for k in old_keys.get("locked") or [] if k not in (new_keys.get("locked") or [])]
    if unlocked:
        out.append(f"removed from `locked`: {', '.join(unlocked)}")
    keys = [k for k in old_keys if k != "locked"]
    out += [str(d) for d in plan_differences(old_keys, new_keys, keys)]
    if old_signers != new_signers:
        out.append("the allowed-signers file changed")
    return out


def plan_changed_after_seal(led: Ledger) -> Iterator[Found]:
    if not led.first_seals:
        return
    first = led.frozen_node if led.frozen_node is not None else led.first_seals[0]
    keys = tuple(str(k) for k in led.plan.locked)
    frozen = plan_view(led, first, keys)
    for i, changes in first_failures(led, led.after_first_seal,
                                     lambda i: _view_changes(frozen, plan_view(led, i, keys))):
        name = led.first_seal_name(first)
        yield _v(led, i, "plan-changed-after-seal", None,
                 f"the plan changed after scoring began (first seal {name}): "
                 f"{'; '.join(changes)}. Restore the plan of the first seal (`git show "
                 f"{name}:{led.plan_path}`); only comments, new amendments and keys "
                 "not listed in `locked` (never criteria, decisions or replicates) may change",
                 led.plan_path)


def storage_attributes(led: Ledger, node: int,
                       memo: dict[tuple[str, str], list[str]]) -> tuple[tuple[str, str], ...]:
    """The `.gitattributes` lines at `node` that decide how git stores a study file (`gitattributes`),
    with the file each is in; `memo` keeps each file version's lines (read once per ledger)."""
    from aoven_git import gitattributes, naming

    out: list[tuple[str, str]] = []
    for path, entry in sorted(led.nodes[node].state.items()):
        role = led.roles.get(path)
        if role is None or role.kind != "attributes":
            continue
        if (path, entry.blob) not in memo:
            data = led.hist.blobs.get(entry.blob)
            text = data.decode("utf-8", "replace") if data is not None else "(too large to read)"
            memo[path, entry.blob] = gitattributes.storage_lines(
                text, gitattributes.folder_of(path), naming.probe_paths(led.plan))
        out += [(path, line) for line in memo[path, entry.blob]]
    return tuple(out)


def _attribute_changes(now: tuple[tuple[str, str], ...], was: tuple[tuple[str, str], ...]) -> list[str]:
    added = [f"+ {p}: {line}" for p, line in now if (p, line) not in set(was)]
    return added + [f"- {p}: {line}" for p, line in was if (p, line) not in set(now)] or ["their order"]


def attributes_changed_after_seal(led: Ledger) -> Iterator[Found]:
    """The first seal freezes how git stores the study's files: a digest is over the bytes git
    stores, so a `text`, `eol` or `filter` line added later (`* text=auto`) would make an honest
    reveal differ from its seal. Reported at the commit that changes those lines."""
    if not led.first_seals or not any(r.kind == "attributes" for r in led.roles.values()):
        return
    memo: dict[tuple[str, str], list[str]] = {}
    frozen = {f: storage_attributes(led, f, memo) for f in led.first_seals}

    def changed(i: int) -> tuple[str, list[str]] | None:
        now = storage_attributes(led, i, memo)
        refs = [lines for f, lines in frozen.items() if led.at_or_before(f, i)]
        if not refs or now in refs:
            return None
        path = next((p for p, line in {*now} ^ {*refs[0]}), ".gitattributes")
        return path, _attribute_changes(now, refs[0])

    for i, (path, diff) in first_failures(led, led.after_first_seal, changed):
        yield _v(led, i, "attributes-changed-after-seal", None,
                 f".gitattributes lines that decide how git stores the study's files changed after the "
                 f"first seal ({led.short(led.first_seals[0])}): {'; '.join(diff)}. A digest seal covers "
                 "the bytes git stores, so these lines are frozen at the first seal: restore them "
                 "(docs/sealing.md, \"Line endings and .gitattributes\")", path)


def _key_problems(led: Ledger, node: int, key: str, seal: str) -> Iterator[tuple[str, str]]:
    from aoven_git.seals import parse_key_seal

    sealed = led.blob(node, seal)
    if sealed is None:
        yield "digest-mismatch", f"{key} is committed without its digest {seal} in the same history"
        return
    parsed = parse_key_seal(sealed)
    if len(parsed) == 2 and isinstance(parsed[0], int):
        yield "corrupt-seal", f"{seal}:{parsed[0]}: {parsed[1]}"
        return
    data = led.blob(node, key)
    got = sha256(data) if data is not None else "(unreadable)"
    if got != parsed[0]:
        yield "digest-mismatch", (f"{key}: SHA-256 {got[:12]}… differs from the digest sealed in {seal} "
                                  f"({str(parsed[0])[:12]}…): the key was edited after blinding")


def blind_key(led: Ledger) -> Iterator[Found]:
    """A blind pass's key must be the bytes its digest sealed (that the digest never changes is
    `blind_corpus_changed`)."""
    from aoven_git import naming

    for path, role in led.roles.items():
        if role.kind != "blind-key" or role.sheet is None:
            continue
        seal = naming.blind_key_seal_path(led.plan, role.sheet.pass_id)
        for i in led.origins(path, "add", "modify"):
            for code, message in _key_problems(led, i, path, seal):
                yield _v(led, i, code, None, message, path)


def _plan_raw(led: Ledger, node: int) -> dict[str, Any] | None:
    found = plan_raw(led, node)
    return found[1] if found[0] == "ok" else None


def _amendment_entry(raw: dict[str, Any] | None, amendment: str) -> Any:
    items = (raw or {}).get("amendments") or []
    return next((a for a in items if isinstance(a, dict) and a.get("id") == amendment), None)


def _amendment_points(led: Ledger) -> dict[str, list[int]]:
    """Seal points of every amendment's sheets, by the amendment id their folder names (even one
    the plan no longer lists)."""
    out: dict[str, list[int]] = {}
    prefix = f"{led.plan.study_dir}/amendments/"
    for i, ev in enumerate(led.events):
        for path, what in ev.items():
            if what == "add" and path.startswith(prefix) and "/" in path[len(prefix):]:
                amendment = path[len(prefix):].split("/", 1)[0]
                out.setdefault(amendment, []).append(i)
    return {a: ledger_mod.minimal(points, led.hist) for a, points in out.items()}


def amendment_changed_after_seal(led: Ledger) -> Iterator[Found]:
    """Amendments may be appended after the first seal, but an entry is frozen once any of its
    files is committed: its scope is what the raters re-scored."""
    for amendment, points in sorted(_amendment_points(led).items()):
        frozen = _amendment_entry(_plan_raw(led, points[0]), amendment)

        def change(i: int, amendment: str = amendment, frozen: Any = frozen) -> str | None:
            now = _amendment_entry(_plan_raw(led, i), amendment)
            return None if now == frozen else "removed" if now is None else "edited"

        def committed(i: int, points: list[int] = points) -> bool:
            return any(led.at_or_before(p, i) for p in points)

        for i, what in first_failures(led, committed, change):
            yield _v(led, i, "plan-changed-after-seal", None,
                     f"amendment {amendment} was {what} after its first files were committed "
                     f"({led.short(points[0])}); append a new amendment instead", led.plan_path,
                     amendment=amendment)


def responses_changed_after_seal(led: Ledger) -> Iterator[Found]:
    """The responses raters score are frozen with the plan at the first seal: changing or removing
    one afterwards changes what was scored (adding the responses of a later round is fine)."""
    from aoven_git import naming

    if not led.first_seals:
        return
    first = led.first_seals[0]
    responses = naming.response_patterns(led.plan)
    frozen = {p: e for p, e in led.nodes[first].state.items() if responses.match(p)}

    def changed(i: int) -> list[str]:
        return sorted(p for p, e in frozen.items() if led.nodes[i].state.get(p) != e)

    for i, paths in first_failures(led, led.after_first_seal, changed):
        yield _v(led, i, "plan-changed-after-seal", None,
                 f"response(s) {', '.join(paths[:3])}{' and more' if len(paths) > 3 else ''} changed "
                 f"after the first seal ({led.first_seal_name(first)}): raters scored the texts committed "
                 "with it; "
                 "restore them", paths[0])


def _blinding_of(led: Ledger, node: int, folder: str, seal: str, key: str) -> dict[str, str]:
    """What a blinding commit fixes, as of `node`: every file under the pass's folder but the key
    (committed later, by `unblind`), and the key's digest; path -> blob."""
    return {p: e.blob for p, e in led.nodes[node].state.items()
            if p == seal or (p.startswith(folder) and p != key)}


def blind_corpus_changed(led: Ledger) -> Iterator[Found]:
    """A blind pass is blinded once (docs/blinding.md, "What verify-seal proves"): from each commit
    that adds its key digest on, the corpus and the digest stay exactly as that commit made them.
    Compared as states, not diffs, so an edit undone before the unblinding (raters saw it), or a
    second blinding on a branch from before the first and merged later, is still a change."""
    from aoven_git import naming

    for p in (p for p in led.plan.passes if p.blind):
        seal = naming.blind_key_seal_path(led.plan, p.id)
        for blinding in ledger_mod.minimal(led.origins(seal, "add"), led.hist):
            yield from _blinding_changes(led, p.id, blinding)


def _blinding_changes(led: Ledger, pass_id: str, blinding: int) -> Iterator[Found]:
    from aoven_git import naming

    folder = naming.blind_dir(led.plan, pass_id) + "/"
    seal, key = naming.blind_key_seal_path(led.plan, pass_id), naming.blind_key_path(led.plan, pass_id)
    fixed = _blinding_of(led, blinding, folder, seal, key)

    def changed(i: int) -> list[str]:
        now = _blinding_of(led, i, folder, seal, key)
        return sorted(x for x in fixed.keys() | now.keys() if now.get(x) != fixed.get(x))

    at = led.hist.first_added(blinding, [seal])  # the hook: the blinding commit, not HEAD
    for i, paths in first_failures(led, lambda i: led.before(blinding, i), changed):
        more = " and more" if len(paths) > 3 else ""
        yield _v(led, i, "blind-corpus-changed", None,
                 f"pass {pass_id}: {', '.join(paths[:3])}{more} changed after the blinding commit {at}: "
                 f"raters score the corpus as it was blinded, and a pass is blinded once; restore it "
                 f"(`git checkout {at} -- {folder.rstrip('/')} {seal}`)", paths[0])
