"""GitHub Actions workflow commands (`::error file=…,line=…::message`).

GitHub shows at most 10 annotations of each kind per step, so after `limit` lines we print one
summary line instead of silently losing the rest.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

ANNOTATION_LIMIT = 10


@dataclass(frozen=True)
class Annotation:
    level: str  # "error" | "warning" | "notice"
    message: str
    file: str | None = None
    line: int | None = None
    title: str | None = None


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_annotation(a: Annotation) -> str:
    props = []
    if a.file:
        props.append(f"file={_escape_property(a.file)}")
    if a.line:
        props.append(f"line={a.line}")
    if a.title:
        props.append(f"title={_escape_property(a.title)}")
    head = f"::{a.level}" + (" " + ",".join(props) if props else "")
    return f"{head}::{_escape_data(a.message)}"


def annotation_lines(annotations: Iterable[Annotation], *, limit: int = ANNOTATION_LIMIT) -> list[str]:
    items = list(annotations)
    out = [format_annotation(a) for a in items[:limit]]
    rest = items[limit:]
    if rest:
        errors = sum(1 for a in rest if a.level == "error")
        message = f"{len(rest)} more finding(s) not annotated ({errors} error(s)); see the job log or report"
        out.append(format_annotation(Annotation("error" if errors else "warning", message)))
    return out
