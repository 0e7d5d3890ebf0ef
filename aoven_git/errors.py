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
