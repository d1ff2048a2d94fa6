"""``arena demo``: a seeded round-robin of the bundled agents (Python, JavaScript, C).

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
from ..runtime import toolchain
from ..runtime.agents import resolve
from ..tournament.schedule import load_config
from .tournament import run_config

AGENTS = ["random", "greedy", "node-greedy", "c-cautious"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pairs", type=int, default=100, help="duplicate pairs per pairing (default: 100)")
    p.add_argument("--seed", type=int, default=1, help="root seed (default: 1)")
    p.add_argument("--store", type=Path, default=Path("reports/demo.sqlite"), help="default: reports/demo.sqlite")
    p.add_argument("--quiet", action="store_true", help="no live progress, only the final standings")


def usable_agents() -> list[str]:
    """The demo's agents that can run here; prints one line for each that cannot."""
    out = []
    for name in AGENTS:
        lacking = toolchain.missing(resolve(name))
        if lacking:
            print(f"arena demo: leaving out {'; '.join(m.line() for m in lacking)}", file=sys.stderr)
        else:
            out.append(name)
    if len(out) < 2:
        raise UserError(f"the demo needs two agents that can run here, and has {', '.join(out) or 'none'}")
    return out


def run(args: argparse.Namespace) -> int:
    agents = usable_agents()
    cfg = load_config(
        None,
        {"name": "demo", "agents": agents, "format": "round-robin", "pairs": args.pairs, "seed": args.seed,
         "store": str(args.store)},
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
