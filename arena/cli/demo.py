"""``arena demo``: a seeded round-robin of the bundled agents (Python, JavaScript, C).

``--variant`` plays another preset: a three-handed one seats every three of the agents
at a table, each deck in every rotation; a partnership one every four, with partners
rotated (docs/tournaments.md). The heuristic joins them there.

An agent whose program is missing here (``node`` for node-greedy, a C compiler for
c-cautious) is left out, with one line saying what to install, so that a first run on a
bare machine shows what it can. The exit status is 1 if a match could not be played
because an agent could not be started.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import UserError
from ..game import ALL_PRESETS, VariantError, get_variant
from ..runtime import toolchain
from ..runtime.agents import resolve
from ..tournament.schedule import load_config
from .tournament import run_config

AGENTS = ["random", "greedy", "node-greedy", "c-cautious"]
#: At tables of three or four the pool needs more agents for the partners to rotate.
TABLE_AGENTS = ["random", "greedy", "heuristic", "node-greedy", "c-cautious"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pairs", type=int,
        help="duplicate pairs per pairing (default: 100); at tables, deck sets per table (default: 20)",
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=1, help="root seed (default: 1)")
    p.add_argument(
        "--variant", default="sixty-six",
        help=f"the game: {', '.join(ALL_PRESETS)} (default: sixty-six); e.g. four-pagat for partnerships",
    )  # fmt: skip
    p.add_argument(
        "--store", type=Path, help="default: reports/demo.sqlite (reports/demo-VARIANT.sqlite for another variant)"
    )
    p.add_argument("--quiet", action="store_true", help="no live progress, only the final standings")


def usable_agents(names: list[str] = AGENTS, need: int = 2) -> list[str]:
    """The demo's agents that can run here; prints one line for each that cannot."""
    out = []
    for name in names:
        lacking = toolchain.missing(resolve(name))
        if lacking:
            print(f"arena demo: leaving out {'; '.join(m.line() for m in lacking)}", file=sys.stderr)
        else:
            out.append(name)
    if len(out) < need:
        raise UserError(f"the demo needs {need} agents that can run here, and has {', '.join(out) or 'none'}")
    return out


def run(args: argparse.Namespace) -> int:
    try:
        variant = get_variant(args.variant)
    except (KeyError, VariantError):
        raise UserError(f"--variant: no preset {args.variant!r} (presets: {', '.join(ALL_PRESETS)})") from None
    tables = variant.players > 2
    agents = usable_agents(TABLE_AGENTS, variant.players) if tables else usable_agents()
    pairs = args.pairs if args.pairs is not None else 20 if tables else 100
    if args.store is None:
        suffix = "" if variant.name == "sixty-six" else f"-{variant.name}"
        args.store = Path(f"reports/demo{suffix}.sqlite")
    cfg = load_config(
        None,
        {"name": "demo", "agents": agents, "format": "round-robin", "pairs": pairs, "seed": args.seed,
         "store": str(args.store), "variant": variant.name},
    )  # fmt: skip
    # A demo starts afresh each time: the same seed gives the same results.
    for path in (
        args.store,
        args.store.with_name(args.store.name + "-wal"),
        args.store.with_name(args.store.name + "-shm"),
    ):
        path.unlink(missing_ok=True)
    # exit status 1 if an agent could not be started (run_config says so, with the cause)
    return run_config(cfg, quiet=args.quiet, warn_seed=False)  # the bundled agents only: nothing to hide
