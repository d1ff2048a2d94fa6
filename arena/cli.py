"""The ``arena`` command: a registry of subcommands and one error wrapper.

Exit statuses: 0 success, 1 a run that failed, 2 bad usage or bad input (one line on
stderr, ``arena: error: ...``). Unexpected exceptions keep their traceback: they are bugs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from . import __version__
from .commands import COMMANDS
from .errors import UserError

SUCCESS, FAILURE, USAGE_ERROR = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="A bot-vs-bot arena for Sixty-Six and Schnapsen.")
    parser.add_argument("--version", action="version", version=f"sixtysix-arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, summary) in COMMANDS.items():
        text = summary.replace("%", "%%")  # argparse formats help strings with %
        sub.add_parser(name, help=text, description=summary)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # Parse the command name first, then let its module add its own options.
    known, _ = parser.parse_known_args(argv[:1] if argv and not argv[0].startswith("-") else argv)
    if known.command is None:
        parser.print_help()
        return USAGE_ERROR
    module = importlib.import_module(COMMANDS[known.command][0])
    sub = argparse.ArgumentParser(prog=f"arena {known.command}", description=COMMANDS[known.command][1])
    module.add_arguments(sub)
    args = sub.parse_args(argv[1:])
    try:
        try:
            return module.run(args)
        except BaseExceptionGroup as group:
            # Trio's nurseries wrap what their tasks raise: unwrap a Ctrl-C or a user error.
            for kind in (KeyboardInterrupt, UserError):
                match, rest = group.split(kind)
                if match is not None and rest is None:
                    raise _first(match) from None
            raise
    except UserError as e:
        print(f"arena: error: {e}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``arena rules | head``): not an error worth a traceback.
        sys.stderr.close()
        return SUCCESS


def _first(group: BaseExceptionGroup) -> BaseException:
    """The first leaf exception of a (nested) exception group."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc
