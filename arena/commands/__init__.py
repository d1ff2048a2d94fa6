"""The registry of ``arena`` subcommands: name -> (module, one-line summary).

The order here is the order of ``arena --help``. Modules are imported only when their
command runs, so ``arena --help`` stays fast. Each module defines
``add_arguments(parser)`` and ``run(args) -> int``.
"""

COMMANDS: dict[str, tuple[str, str]] = {
    "match": ("arena.commands.match", "play one match between two agents, play by play"),
    "check": ("arena.commands.check", "run the protocol conformance suite against an agent"),
    "selfplay": ("arena.commands.selfplay", "play whole matches between built-in Python strategies"),
    "rules": ("arena.commands.rules", "list the variant presets and every rule flag"),
}
