"""The documentation is part of the product: its links resolve, and it names every command,
option and code the tool has, so a new user never meets something the docs do not explain."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from aoven_git import blind_corpus, seal_rules
from aoven_git.cli import cli
from tests.conftest import ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [t for t in LINK.findall(text) if not t.startswith(("http://", "https://", "mailto:"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        readable = dest.exists() and dest.suffix == ".md"
        unknown_anchor = readable and bool(anchor) and anchor not in _anchors(dest)
        if not dest.exists() or unknown_anchor:
            broken.append(target)
    assert broken == []


def test_docs_cite_nothing_outside_the_repository() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert "SPEC.md" not in text and "../shared" not in text, page.name


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    ctx = click.Context(group)
    out: dict[str, click.Command] = {}
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        full = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            out.update(_commands(cmd, f"{full} "))
        else:
            out[full] = cmd
    return out


def test_commands_md_documents_every_command_and_option() -> None:
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    headings = [h for line in re.findall(r"^### (.+)$", text, flags=re.M)
                for h in re.findall(r"`aoven-git ([^`]+)`", line)]
    missing = []
    for name, cmd in _commands(cli).items():
        documented = [h for h in headings if h == name or h.startswith(f"{name} ")]
        if not documented:
            missing.append(name)
            continue
        for param in cmd.params:
            opts = [o for o in param.opts if o.startswith("-")]
            said = " ".join(documented)
            if opts and opts[0] not in {"--repo", "--plan", "--help"} and not any(
                    re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", said) for o in opts):
                missing.append(f"{name} {opts[0]}")
    assert missing == []


def test_sealing_md_explains_every_violation_code() -> None:
    tables = (seal_rules.__doc__ or "") + (blind_corpus.__doc__ or "")
    codes = set(re.findall(r"^([a-z]+(?:-[a-z]+)+) {2,}", tables, flags=re.M))
    assert {"visible-at-seal", "copied-seal", "stray-scores", "blind-mismatch"} <= codes
    text = (ROOT / "docs" / "sealing.md").read_text(encoding="utf-8")
    assert sorted(c for c in codes if f"`{c}`" not in text) == []


CITATION = re.compile(r'(docs/[a-z-]+\.md)(?:,\s+"([^"]+)")?')


def _sections(doc: Path) -> list[str]:
    """What a citation may name: a heading, or a bold lead-in (`**Re-test rounds**`)."""
    text = doc.read_text(encoding="utf-8")
    heads = re.findall(r"^#{1,6} (.+)$", text, flags=re.M)
    bold = re.findall(r"\*\*([^*]+)\*\*", text)
    return [h.strip().strip("`").lower() for h in heads + bold]


def test_every_docs_citation_in_the_code_names_an_existing_section() -> None:
    broken = []
    sources = [*(ROOT / "aoven_git").rglob("*.py"), *(ROOT / "aoven_git").rglob("*.yml"),
               *(ROOT / "schemas").glob("*.json")]
    for src in sources:
        for doc, wrapped in CITATION.findall(src.read_text(encoding="utf-8")):
            target, section = ROOT / doc, " ".join(wrapped.split())
            if not target.exists():
                broken.append(f"{src.name}: {doc}")
            elif section and not any(section.lower().strip("`") in s for s in _sections(target)):
                broken.append(f"{src.name}: {doc}, {section!r}")
    assert broken == []
