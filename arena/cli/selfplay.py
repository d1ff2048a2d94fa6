"""``arena selfplay``: in-process matches between built-in strategies, tallied."""

from __future__ import annotations

import argparse
import json

from ..errors import UserError
from ..game import ALL_PRESETS, VariantError, get_variant
from ..play.selfplay import STRATEGY_NAMES, format_report, selfplay


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", default="sixty-six", help=f"rule preset: {', '.join(ALL_PRESETS)}")
    p.add_argument(
        "--agents", default="random,greedy",
        help=f"two strategies, comma-separated, from: {', '.join(STRATEGY_NAMES)} (expert searches: a few "
        "seconds a match; one strategy twice is tallied as NAME#1 and NAME#2)",
    )  # fmt: skip
    p.add_argument("--matches", type=int, default=200, help="number of matches")
    p.add_argument("--seed", type=int, default=1, help="root seed")
    p.add_argument("--json", action="store_true", help="print the tallies as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        variant = get_variant(args.variant)
    except VariantError as e:
        raise UserError(f"--variant: {e}") from None
    names = [n.strip() for n in args.agents.split(",")]
    for n in names:
        if n not in STRATEGY_NAMES:
            raise UserError(f"--agents: unknown strategy {n!r}; built-in strategies: {', '.join(STRATEGY_NAMES)}")
    if len(names) != 2:
        raise UserError(f"--agents: expected two strategies such as random,greedy; got {args.agents!r}")
    if args.matches < 1:
        raise UserError(f"--matches: must be at least 1, got {args.matches}")
    if args.seed < 0:
        raise UserError(f"--seed: must be a non-negative integer, got {args.seed}")
    report = selfplay(variant, names, args.matches, args.seed)
    print(json.dumps(report.to_dict(), indent=2) if args.json else format_report(report))
    return 0
