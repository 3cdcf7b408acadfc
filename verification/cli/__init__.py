"""Command line: ``python -m verification --help``.

Every error is one line on stderr and no traceback: bad input (an option out of range, a file
that is not there, a file of the user's that fails while it is imported: ``FILE:LINE:
ErrorType: message``) exits 2, an unexpected error 1 (``error: ErrorType: message``; an
OSError names the path and the reason), Ctrl-C 130 (``interrupted: ...``). ``--debug`` (before
the command) shows the full traceback instead of the one line, with the same exit code."""

from .common import app

from . import campaign, explorer, heads  # noqa: E402, F401, I001 - their commands register on app

__all__ = ["app", "main"]


def main():
    app()
