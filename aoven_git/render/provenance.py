"""Where a report comes from, how the study left its protocol, and how the plan departs from the
defaults, as plain data for both renderers (docs/report.md, "Source", "Protocol deviations" and
"Deviations from the published defaults").

A verdict is only as good as the files it was computed from, so every format says, near the top,
which revision was read, whether the work tree matched it, the tool version and the time. When
that is not the verified history — a preview from uncommitted files, a folder outside git, or
uncommitted changes that keep the verdict NOT-READY — a banner says so before the verdict does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aoven_git.render.tables import Cell, Table, short_commit

#: Files listed in a banner; a longer list ends with "and N more" (the JSON has all of them).
MAX_FILES = 20

_STATUS_WORDS = {"M": "modified", "??": "not tracked", "A": "added", "D": "deleted", "R": "renamed",
                 "C": "copied", "T": "type changed", "U": "unmerged"}
_STATUS = re.compile(r"^(?P<path>.*) \((?P<code>[^()]+)\)$")
_MOMENT = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?(?:Z|\+00:00)$")


@dataclass(frozen=True)
class Fact:
    """One item of the source line; `title` is the full text behind a shortened one (HTML tooltip)."""

    text: str
    code: bool = False
    prefix: str = ""
    title: str | None = None


@dataclass(frozen=True)
class Banner:
    """A warning shown above the verdict: the report is not (only) the verified history."""

    tone: str  # "bad" | "warn"
    title: str
    text: str
    files: tuple[tuple[str, str], ...] = ()  # (path, what changed)
    more: int = 0  # files left out of `files`


def source(report: Mapping[str, Any]) -> Mapping[str, Any] | None:
    src = report.get("source")
    return src if isinstance(src, Mapping) else None


def moment(text: Any) -> str:
    """``2026-11-26T05:39:28Z`` as ``2026-11-26 05:39:28 UTC``; anything else verbatim."""
    found = _MOMENT.match(str(text or ""))
    return f"{found.group(1)} {found.group(2)} UTC" if found else str(text or "")


def uncommitted_file(entry: Any) -> tuple[str, str]:
    """``path (M)`` (git's short status) as ``(path, "modified")``; no status: ``(entry, "")``."""
    text = str(entry)
    found = _STATUS.match(text)
    if not found:
        return text, ""
    code = found.group("code").strip()
    letters = [code] if code in _STATUS_WORDS else list(code.replace(" ", ""))
    return found.group("path"), ", ".join(dict.fromkeys(_STATUS_WORDS.get(c, c) for c in letters))


def source_facts(report: Mapping[str, Any]) -> list[Fact]:
    """Revision (short, full id as title), work tree state, tool version, time generated."""
    src = source(report)
    if src is None:
        return []
    facts = []
    if not src.get("git"):
        facts.append(Fact("not a git repository"))
    elif src.get("revision"):
        full = str(src["revision"])
        facts.append(Fact(short_commit(full), code=True, prefix="revision ", title=full))
        if src.get("rev") and str(src["rev"]) not in (full, short_commit(full)):
            facts.append(Fact(str(src["rev"]), code=True, prefix="--rev "))
    else:
        facts.append(Fact("no commit yet"))
    facts.append(Fact(_work_tree_state(src)))
    if src.get("version"):
        facts.append(Fact(f"aoven-git {src['version']}"))
    if src.get("generated_at"):
        facts.append(Fact(moment(src["generated_at"]), prefix="generated "))
    return facts


def _work_tree_state(src: Mapping[str, Any]) -> str:
    files = len(src.get("uncommitted") or [])
    changed = f"{files} uncommitted study file{'s' if files != 1 else ''}"
    if not src.get("git"):
        return "files read from the folder"
    if src.get("work_tree"):
        return f"computed from the work tree ({changed})" if files else "computed from the work tree"
    if src.get("clean") is None:
        return "work tree not compared"
    return "work tree clean" if src.get("clean") else changed


def banner(report: Mapping[str, Any]) -> Banner | None:
    """The warning a reader must see before the verdict, or None for a clean committed report."""
    src = source(report)
    if src is None:
        return None
    files = [uncommitted_file(f) for f in src.get("uncommitted") or []]
    shown, more = tuple(files[:MAX_FILES]), max(0, len(files) - MAX_FILES)
    revision = short_commit(src.get("revision")) or None
    if not src.get("git"):
        return Banner("warn", "Outside git: nothing was verified",
                      "The files were read from a folder that is not a git repository: the seals were not "
                      "checked, and who wrote each reconciliation row was not checked.")
    if src.get("work_tree"):
        base = (f"the seals checked cover revision {revision}, not these files" if revision
                else "the repository has no commit yet, so no seal covers them")
        return Banner("bad", "Computed from uncommitted files — seals not verified for these files",
                      f"A preview of the work tree (report --work-tree): {base}, and who wrote each "
                      "reconciliation row was not checked.", shown, more)
    if src.get("clean") is False:
        blocks = (" They keep the verdict NOT-READY until they are committed."
                  if report.get("verdict") == "NOT-READY" else "")
        return Banner("bad", "Uncommitted changes to study files",
                      f"The report is computed from the committed revision {revision or '(none)'}; these "
                      f"files differ from it and are not in the report.{blocks}", shown, more)
    return None


# --------------------------------------------------------------------------- deviations


@dataclass(frozen=True)
class DeviationLine:
    path: str
    text: str  # "value (default …)", then the detail
    line: int | None
    descriptive: bool = False  # descriptive text (a name, a question's wording): listed apart


def deviations(report: Mapping[str, Any]) -> list[DeviationLine] | None:
    """Where the plan departs from the defaults `aoven-git init` writes; None when the document
    predates the list (nothing to say), [] when the plan uses the defaults everywhere."""
    items = report.get("deviations")
    if not isinstance(items, list):
        return None
    out = []
    for d in items:
        if not isinstance(d, Mapping):
            continue
        value = "(absent)" if d.get("value") is None else str(d["value"])
        default = "(absent)" if d.get("default") is None else str(d["default"])
        detail = str(d.get("detail") or "")
        text = f"{value} (default {default})"
        if detail:  # two long lists cut to the same text: the detail says what differs
            text = detail if value == default else f"{text}: {detail}"
        line = d.get("line")
        line = line if isinstance(line, int) and not isinstance(line, bool) else None
        out.append(DeviationLine(str(d.get("path") or "(plan)"), text, line, d.get("descriptive") is True))
    return out


def descriptive_defaults(found: list[DeviationLine]) -> str | None:
    """The descriptive departures from the defaults (names, question wording) in one line: they are
    every real study's own text, not a change of protocol."""
    paths = [d.path for d in found if d.descriptive]
    if not paths:
        return None
    shown = ", ".join(paths[:MAX_DESCRIPTIVE]) + (f" and {len(paths) - MAX_DESCRIPTIVE} more"
                                                  if len(paths) > MAX_DESCRIPTIVE else "")
    places = f"{len(paths)} place{'s' if len(paths) != 1 else ''}"
    return f"Descriptive text differs from the defaults in {places}: {shown}."


def deviations_intro(count: int, descriptive: int = 0) -> str:
    """The sentence above the list (or instead of it, when the plan departs nowhere); `count`
    departures of protocol, `descriptive` edits of descriptive text (listed apart)."""
    if not count and descriptive:
        return ("The plan keeps the protocol of the defaults aoven-git init writes; only descriptive "
                "text differs.")
    if not count:
        return "The plan uses the defaults aoven-git init writes everywhere."
    places = f"{count} place{'s' if count != 1 else ''}"
    return (f"The plan departs from the defaults aoven-git init writes in {places} (questions dropped, "
            "thresholds changed…); each with its line in the plan:")


def deviation_summary(report: Mapping[str, Any]) -> str | None:
    """One line for the verdict block: how many departures of protocol, naming the keys."""
    found = [d for d in deviations(report) or [] if not d.descriptive]
    if not found:
        return None
    names = ", ".join(d.path for d in found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
    many = "place" if len(found) == 1 else "places"
    return f"departs from the published defaults in {len(found)} {many}: {names}"


# --------------------------------------------------------------------------- protocol deviations

#: the deviation categories of Lakens 2024, as a reader sees them
CATEGORY_WORDS = {"unforeseen": "unforeseen event", "error": "error",
                  "missing-information": "missing information", "violated-assumption": "violated assumption",
                  "falsified-auxiliary": "falsified auxiliary hypothesis"}
#: the kinds of protocol event, as a reader sees them
KIND_WORDS = {"amendment": "amendment", "withdrawal": "withdrawal", "forced-reveal": "forced reveal",
              "optional-rater-excluded": "optional rater excluded", "plan-edit": "plan edit"}
#: descriptive edits named in the one line that lists them
MAX_DESCRIPTIVE = 8


Events = list[Mapping[str, Any]]


def protocol_part(report: Mapping[str, Any]) -> tuple[Events, Events] | None:
    """(protocol events, descriptive edits), or None when the document predates the table."""
    part = report.get("protocol_deviations")
    if not isinstance(part, Mapping):
        return None
    events = [e for e in part.get("events") or [] if isinstance(e, Mapping)]
    return events, [e for e in part.get("descriptive") or [] if isinstance(e, Mapping)]


def protocol_table(report: Mapping[str, Any]) -> Table:
    """One row per protocol event: kind, what (with the reason given), commit, when relative to the
    reveals (after one: it may be outcome-driven), category."""
    found = protocol_part(report)
    rows = []
    for e in (found or ([], []))[0]:
        what = str(e.get("what") or "") + (f" — {e['reason']}" if e.get("reason") else "")
        after = bool(e.get("after_reveal"))
        category = CATEGORY_WORDS.get(str(e.get("category")), str(e.get("category") or "not declared"))
        rows.append((Cell(KIND_WORDS.get(str(e.get("kind")), str(e.get("kind") or ""))), Cell(what),
                     Cell(short_commit(e.get("commit")) or "—", code=bool(e.get("commit"))),
                     Cell(str(e.get("when") or ""), "warn" if after else None, "⚠️" if after else ""),
                     Cell(category, tone="muted" if not e.get("category") else None)))
    return Table(("event", "what", "commit", "when", "category"), tuple(rows))


def protocol_intro(report: Mapping[str, Any]) -> str:
    found = protocol_part(report)
    n = len(found[0]) if found else 0
    if not n:
        return "No protocol deviation: no amendment, withdrawal, forced reveal, excluded rater or plan edit."
    events = f"{n} protocol event{'s' if n != 1 else ''}"
    if not any(e.get("commit") for e in found[0]):
        return f"{events} the plan declares; without a verified history, none is placed among the reveals."
    return f"{events}, in the order of history; one made after a reveal may have been steered by the outcome."


def descriptive_line(report: Mapping[str, Any]) -> str | None:
    """The descriptive edits after the first seal, in one line (they change no rule or score)."""
    found = protocol_part(report)
    edits = found[1] if found else []
    if not edits:
        return None
    paths = list(dict.fromkeys(str(e.get("path") or e.get("what") or "") for e in edits))
    shown = ", ".join(paths[:MAX_DESCRIPTIVE]) + (f" and {len(paths) - MAX_DESCRIPTIVE} more"
                                                  if len(paths) > MAX_DESCRIPTIVE else "")
    many = "edit" if len(edits) == 1 else "edits"
    return (f"Descriptive text edited after the first seal ({len(edits)} {many}, no rule or score "
            f"changed): {shown}.")


def after_reveal_summary(report: Mapping[str, Any]) -> str | None:
    """One line for the verdict block when some protocol event that bears on the pre-registered
    verdict came after a reveal (it may have been steered by the outcome); None otherwise. An
    amendment comes after the reveals by design and never changes that verdict (docs/amendments.md)."""
    found = protocol_part(report)
    late = [e for e in (found or ([], []))[0] if e.get("after_reveal") and e.get("kind") != "amendment"]
    if not late:
        return None
    kinds = ", ".join(dict.fromkeys(KIND_WORDS.get(str(e.get("kind")), str(e.get("kind"))) for e in late))
    many = "deviation" if len(late) == 1 else "deviations"
    return f"{len(late)} protocol {many} after a reveal ({kinds})"
