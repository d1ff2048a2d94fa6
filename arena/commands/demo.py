"""``arena demo``: a seeded round-robin of the bundled agents (Python, JavaScript, C)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..schedule import load_config
from .tournament import run_config

AGENTS = ["random", "greedy", "node-greedy", "c-cautious"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pairs", type=int, default=100, help="duplicate pairs per pairing (default: 100)")
    p.add_argument("--seed", type=int, default=1, help="root seed (default: 1)")
    p.add_argument("--store", type=Path, default=Path("reports/demo.sqlite"), help="default: reports/demo.sqlite")
    p.add_argument("--quiet", action="store_true", help="no live progress, only the final standings")


def run(args: argparse.Namespace) -> int:
    cfg = load_config(
        None,
        {"name": "demo", "agents": AGENTS, "format": "round-robin", "pairs": args.pairs, "seed": args.seed,
         "store": str(args.store)},
    )  # fmt: skip
    # A demo starts afresh each time: the same seed gives the same results.
    for path in (
        args.store,
        args.store.with_name(args.store.name + "-wal"),
        args.store.with_name(args.store.name + "-shm"),
    ):
        path.unlink(missing_ok=True)
    return run_config(cfg, quiet=args.quiet, warn_seed=False)  # the bundled agents only: nothing to hide
