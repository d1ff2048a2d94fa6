"""Command-line options shared by several commands (defined once, as pip does)."""

from __future__ import annotations

import argparse

from .errors import UserError
from .protocol import TimeControl


def add_time_control(p: argparse.ArgumentParser) -> None:
    d = TimeControl()
    g = p.add_argument_group("time control (Kaggle style: per move, plus a bank for the match)")
    g.add_argument("--move-ms", type=int, default=d.move_ms, help=f"allowance per decision (default: {d.move_ms})")
    g.add_argument("--bank-ms", type=int, default=d.bank_ms, help=f"overage bank per match (default: {d.bank_ms})")
    g.add_argument(
        "--first-move-ms", type=int, default=d.first_move_ms,
        help=f"allowance for a seat's first decision of a match (default: {d.first_move_ms})",
    )  # fmt: skip
    g.add_argument(
        "--grace-ms", type=int, default=d.grace_ms,
        help=f"slack for pipe and scheduling delays, never shown as time left (default: {d.grace_ms})",
    )  # fmt: skip
    g.add_argument(
        "--clock", choices=("wall", "cpu"), default=d.clock,
        help="charge wall-clock time, or the agent's CPU time (fairer on a loaded host)",
    )  # fmt: skip


def time_control_from(args: argparse.Namespace) -> TimeControl:
    try:
        return TimeControl(
            move_ms=args.move_ms,
            bank_ms=args.bank_ms,
            first_move_ms=args.first_move_ms,
            grace_ms=args.grace_ms,
            clock=args.clock,
        )
    except ValueError as e:
        raise UserError(f"time control: {e}") from None
