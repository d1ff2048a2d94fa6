"""The registry of ``arena`` subcommands: name -> (module, one-line summary).

The order here is the order of ``arena --help``: what a newcomer runs first comes first
(the demo, a tournament, its ratings and report), then the tools of agent authors, then
running competitions. Modules are imported only when their command runs, so
``arena --help`` stays fast. Each module defines ``add_arguments(parser)`` and
``run(args) -> int``.
"""

COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("arena.cli.demo", "start here: a seeded round-robin of the bundled agents, in about a minute"),
    "tournament": ("arena.cli.tournament", "a seeded, resumable tournament of duplicate pairs into a store"),
    "ratings": ("arena.cli.ratings", "Elo ratings with 95% intervals from a store"),
    "report": ("arena.cli.report", "an offline HTML report of a store, with charts and CSVs"),
    "compare": ("arena.cli.compare", "is NEW stronger than OLD? duplicate pairs and an SPRT"),
    "agents": ("arena.cli.agents", "the agents it knows by name: language, command, description"),
    "match": ("arena.cli.match", "play one match between two agents, play by play"),
    "check": ("arena.cli.check", "run the protocol conformance suite against an agent"),
    "selfplay": ("arena.cli.selfplay", "fast in-process matches between built-in strategies"),
    "rules": ("arena.cli.rules", "list the variant presets and every rule flag"),
    "view": ("arena.cli.view", "a stored match as an offline HTML replay: step through it, all hands or one seat's"),
    "replay": ("arena.cli.replay", "play a stored match again and check that it comes out the same"),
    "export": ("arena.cli.export", "write a store's matches and deals as CSV, Parquet or JSON lines"),
    "merge": ("arena.cli.merge", "combine the stores of tournament shards"),
    "secret": ("arena.cli.secret", "print a store's secret root seed: for shards, or to publish a finished run"),
    "submit": ("arena.cli.submit", "validate, build, check and enter an agent into a ladder (sandboxed)"),
    "ladder": ("arena.cli.ladder", "a persistent ladder: init, run, standings, history, site, retire"),
    "sandbox-info": ("arena.cli.sandbox_info", "which sandbox mechanisms agent processes get on this machine"),
}

#: Where ``arena --help`` points a newcomer.
EPILOG = """\
start here:
  arena demo                    the bundled agents in a round-robin, about a minute
  arena agents                  the agents it knows (bundled, ./agents), by name
  arena tournament --agents random,greedy,heuristic --pairs 20 --store reports/mine.sqlite
                                your own tournament; then arena report reports/mine.sqlite
  arena COMMAND --help          every option of a command, with its default

docs: README.md and docs/ in the source tree (tournaments.md, compare.md, ladders.md,
agents.md; protocol/SPEC.md for writing an agent in any language)"""
