"""``arena report STORE``: a self-contained HTML report, with its PNGs and CSVs."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", type=Path, help="a results store")
    p.add_argument(
        "-o", "--out", type=Path,
        help="output folder (default: next to the store, named after it: runs/rr.sqlite gives runs/rr/, "
        "where a tournament writes its report)",
    )  # fmt: skip
    p.add_argument("--title", help="the report's title (default: the format and the agents)")
    p.add_argument(
        "--replays", type=int, metavar="N",
        help="write the replay pages of N matches (the forfeits, then the most recent), listed on matches.html and "
        "linked from the report; 0: none (default: 100; any match: arena view STORE MATCH_ID)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from ..report.html import build_report

    out = args.out or args.store.parent / args.store.stem
    if args.replays is not None and args.replays < 0:
        from ..errors import UserError

        raise UserError(f"--replays: must be 0 or more, got {args.replays}")
    path = build_report(args.store, out, title=args.title, replays=args.replays)
    print(f"report: {path}")
    return 0
