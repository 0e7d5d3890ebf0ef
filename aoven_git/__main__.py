"""`python -m aoven_git` and the `aoven-git` console script.

The CLI's own imports (click first) are guarded here: when aoven-git's code is reached from a
Python that lacks its dependencies, the user learns which Python and how to fix it instead of
reading a traceback (`cli.main` handles the modules its commands import later)."""

import sys


def run() -> int:
    try:
        from aoven_git.cli import main
    except ModuleNotFoundError as exc:
        from aoven_git.errors import missing_dependency

        missing = missing_dependency(exc, sys.executable)
        if missing is None:
            raise
        print(f"aoven-git: error: {missing}", file=sys.stderr)
        return missing.exit_code
    return main()


if __name__ == "__main__":
    raise SystemExit(run())
