"""The ``arena`` command: a registry of subcommands and one error wrapper.

Exit statuses: 0 success, 1 a run that failed, 2 bad usage or bad input (one line on
stderr, ``arena: error: ...``), 130 interrupted (Ctrl-C; a run says what is stored and
the command that resumes it). Unexpected exceptions keep their traceback: they are bugs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from .. import __version__
from ..errors import UserError
from .commands import COMMANDS, EPILOG

SUCCESS, FAILURE, USAGE_ERROR, INTERRUPTED = 0, 1, 2, 130


class Parser(argparse.ArgumentParser):
    """argparse with its errors as one line, like every other bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"arena: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="arena",
        description="A bot-vs-bot arena for Sixty-Six and Schnapsen.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"sixtysix-arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, summary) in COMMANDS.items():
        text = summary.replace("%", "%%")  # argparse formats help strings with %
        sub.add_parser(name, help=text, description=summary)
    return parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of one subcommand, its module's options added, defaults shown in help."""
    module = importlib.import_module(COMMANDS[name][0])
    sub = Parser(prog=f"arena {name}", description=COMMANDS[name][1])
    module.add_arguments(sub)
    show_defaults(sub)
    return sub


def show_defaults(parser: argparse.ArgumentParser) -> None:
    """Append ``(default: X)`` to the help of every option of ``parser`` (and of its
    subcommands) that has a default its help does not mention already. Options whose
    default comes from elsewhere (a config file) say so in their own help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                show_defaults(child)
            continue
        default = action.default
        if (
            not action.option_strings
            or action.help in (None, argparse.SUPPRESS)
            or default is None
            or default is False  # a flag off (0 is a default to show)
            or default == argparse.SUPPRESS
            or "default" in action.help
        ):
            continue
        action.help = f"{action.help} (default: {str(default).replace('%', '%%')})"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # Parse the command name first, then let its module add its own options.
    known, _ = parser.parse_known_args(argv[:1] if argv and not argv[0].startswith("-") else argv)
    if known.command is None:
        parser.print_help()  # a bare ``arena`` asks what there is: not an error
        return SUCCESS
    module = importlib.import_module(COMMANDS[known.command][0])
    args = command_parser(known.command).parse_args(argv[1:])
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
    except KeyboardInterrupt as e:
        # A run raises KeyboardInterrupt("N matches stored ...; resume with: ...") to say more.
        print(f"arena: interrupted{': ' + str(e) if str(e) else ''}", file=sys.stderr)
        return INTERRUPTED
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
