"""``arena view STORE MATCH_ID``: a stored match as one offline HTML replay page."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", type=Path, help="a results store (a tournament's, or a ladder's ladder.sqlite)")
    p.add_argument("match_id", help="the match id, e.g. 'random~greedy#3.1' (or a ladder's 'L12.0')")
    p.add_argument(
        "-o", "--out", type=Path, metavar="FILE",
        help="the HTML file to write (default: next to the store, where its report goes: runs/rr.sqlite gives "
        "runs/rr/replays/<match>.html)",
    )  # fmt: skip
    p.add_argument(
        "--seat", type=int, metavar="N",
        help="only seat N's view: what that seat knew, and nothing else in the page (default: every hand face "
        "up, with a switch to each seat's view)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from ..report.replay_page import safe_name, write_replay
    from ..results.store import Store

    with Store(args.store, create=False) as store:
        out = args.out or args.store.parent / args.store.stem / "replays" / f"{safe_name(args.match_id)}.html"
        path = write_replay(store, args.match_id, out, seat=args.seat)
    print(f"replay: {path}")
    return 0
