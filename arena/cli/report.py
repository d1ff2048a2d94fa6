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


def run(args: argparse.Namespace) -> int:
    from ..report.html import build_report

    out = args.out or args.store.parent / args.store.stem
    path = build_report(args.store, out, title=args.title)
    print(f"report: {path}")
    return 0
