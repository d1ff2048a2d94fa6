"""The registry of ``arena`` subcommands: name -> (module, one-line summary).

The order here is the order of ``arena --help``. Modules are imported only when their
command runs, so ``arena --help`` stays fast. Each module defines
``add_arguments(parser)`` and ``run(args) -> int``.
"""

COMMANDS: dict[str, tuple[str, str]] = {
    "tournament": ("arena.commands.tournament", "a seeded, resumable tournament of duplicate pairs into a store"),
    "compare": ("arena.commands.compare", "is NEW stronger than OLD? duplicate pairs and an SPRT"),
    "ratings": ("arena.commands.ratings", "Elo ratings with 95% intervals from a store"),
    "report": ("arena.commands.report", "an offline HTML report of a store, with charts and CSVs"),
    "demo": ("arena.commands.demo", "a seeded round-robin of the bundled agents, in about a minute"),
    "replay": ("arena.commands.replay", "play a stored match again and check that it comes out the same"),
    "merge": ("arena.commands.merge", "combine the stores of tournament shards"),
    "secret": ("arena.commands.secret", "print a store's secret root seed: for shards, or to publish a finished run"),
    "export": ("arena.commands.export", "write a store's matches and deals as CSV, Parquet or JSON lines"),
    "submit": ("arena.commands.submit", "validate, build, check and enter an agent into a ladder (sandboxed)"),
    "ladder": ("arena.commands.ladder", "a persistent ladder: init, run, standings, history, retire"),
    "match": ("arena.commands.match", "play one match between two agents, play by play"),
    "check": ("arena.commands.check", "run the protocol conformance suite against an agent"),
    "selfplay": ("arena.commands.selfplay", "play whole matches between built-in Python strategies"),
    "rules": ("arena.commands.rules", "list the variant presets and every rule flag"),
    "sandbox-info": ("arena.commands.sandbox_info", "which sandbox mechanisms agent processes get on this machine"),
}
