"""Exceptions that carry a user-facing message and the exit code (docs/commands.md, "Exit codes").

Every layer raises one of these for bad input; `cli.main` is the only place that turns them into
text on stderr and an exit status, so no traceback ever reaches a user for bad input.
"""

from __future__ import annotations


class AovenError(Exception):
    """Base class: `message` is shown as is; `path`/`line` locate it when known."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return f"{where}{self.message}"


class UsageError(AovenError):
    """Wrong arguments or a request that cannot be carried out as asked (exit 2)."""

    exit_code = 2


class PlanError(AovenError):
    """The plan file is missing, malformed or semantically inconsistent (exit 2)."""

    exit_code = 2


class FindingsError(AovenError):
    """The command ran and found problems in the study (exit 1): invalid files, violations…"""

    exit_code = 1


class CannotVerify(AovenError):
    """History cannot be checked at all: not a git repository, shallow clone… (exit 3)."""

    exit_code = 3


#: import name → the distribution that provides it (pyproject.toml's dependencies)
DEPENDENCIES = {
    "click": "click", "git": "GitPython", "jsonschema": "jsonschema", "ruamel": "ruamel.yaml",
    "numpy": "numpy", "scipy": "scipy", "markdown_it": "markdown-it-py",
}


class MissingDependency(UsageError):
    """A module aoven-git needs cannot be imported by the Python running it (exit 2).

    Not a bug in aoven-git but an environment problem: most often aoven-git's code is reached
    from another interpreter than the one it was installed for (a hook, an IDE, `python3 -m
    aoven_git` outside the virtual environment). The message names that interpreter and the
    command that installs aoven-git for it. Built from plain strings so it works before any
    third-party module is importable."""

    def __init__(self, module: str, interpreter: str) -> None:
        top = module.split(".")[0]
        package = DEPENDENCIES.get(top)
        what = f"'{module}' ({package}, which aoven-git needs)" if package else f"'{module}'"
        super().__init__(
            f"the Python running aoven-git ({interpreter}) has no module named {what}.\n"
            f"  Fix: install aoven-git for this Python: {interpreter} -m pip install aoven-git\n"
            f"  (from a checkout of aoven-git: {interpreter} -m pip install -e .), or run aoven-git "
            "with the Python it was installed for (activate its virtual environment)."
        )
        self.module = module


def missing_dependency(exc: ModuleNotFoundError, interpreter: str) -> MissingDependency | None:
    """The MissingDependency for an import that failed, or None when the missing module is part
    of aoven-git itself (that is a broken installation or a bug, reported as such)."""
    name = exc.name or ""
    if not name or name.split(".")[0] == "aoven_git":
        return None
    return MissingDependency(name, interpreter)
