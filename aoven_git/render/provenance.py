"""Where a report comes from, and how the plan departs from the defaults, as plain data for both
renderers (docs/report.md, "Source" and "Deviations from the published defaults").

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

from aoven_git.render.tables import short_commit

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
        out.append(DeviationLine(str(d.get("path") or "(plan)"), text, line))
    return out


def deviations_intro(count: int) -> str:
    """The sentence above the list (or instead of it, when the plan departs nowhere)."""
    if not count:
        return "The plan uses the defaults aoven-git init writes everywhere."
    places = f"{count} place{'s' if count != 1 else ''}"
    return (f"The plan departs from the defaults aoven-git init writes in {places} (questions dropped, "
            "thresholds changed…); each with its line in the plan:")


def deviation_summary(report: Mapping[str, Any]) -> str | None:
    """One line for the verdict block: how many departures, naming the keys."""
    found = deviations(report)
    if not found:
        return None
    names = ", ".join(d.path for d in found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
    many = "place" if len(found) == 1 else "places"
    return f"departs from the published defaults in {len(found)} {many}: {names}"
