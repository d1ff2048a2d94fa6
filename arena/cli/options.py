"""Command-line options shared by several commands (defined once, as pip does)."""

from __future__ import annotations

import argparse
import dataclasses

from ..errors import UserError
from ..protocol.codec import TimeControl
from ..runtime.sandbox import Policy


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
        help=f"charge wall-clock time, or the agent's CPU time (fairer on a loaded host; default: {d.clock})",
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


TIME_CONTROL_FIELDS = ("move_ms", "bank_ms", "first_move_ms", "grace_ms", "clock")


def add_time_control_overrides(
    p: argparse.ArgumentParser, title: str = "time control (override the config)", config: bool = True
) -> None:
    """Time-control flags without argparse defaults, for commands whose config (or the
    defaults) supplies the rest; ``config``: the help says the config's value comes first."""
    d = TimeControl()
    t = p.add_argument_group(title)
    pre = "the config's, else " if config else ""
    t.add_argument("--move-ms", type=int, help=f"allowance per decision (default: {pre}{d.move_ms})")
    t.add_argument("--bank-ms", type=int, help=f"overage bank per match (default: {pre}{d.bank_ms})")
    t.add_argument(
        "--first-move-ms", type=int,
        help=f"allowance for a seat's first decision of a match (default: {pre}{d.first_move_ms})",
    )  # fmt: skip
    t.add_argument("--grace-ms", type=int, help=f"slack for pipe and scheduling delays (default: {pre}{d.grace_ms})")
    t.add_argument(
        "--clock", choices=("wall", "cpu"), help=f"charge wall-clock or the agent's CPU time (default: {pre}{d.clock})"
    )


def time_control_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The time-control flags given on the command line (None for those not given)."""
    return {k: getattr(args, k) for k in TIME_CONTROL_FIELDS}


def add_sandbox(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-sandbox", action="store_true",
        help="run agents as plain processes: their own folder, this environment, no limits (trusted agents only)",
    )  # fmt: skip


def add_unsafe(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--unsafe-sandbox", action="store_true",
        help="run submitted code even where agents cannot be isolated (no bubblewrap or user namespaces)",
    )  # fmt: skip


def sandbox_policy(args: argparse.Namespace, base: Policy | None = None) -> Policy:
    """The sandbox policy: ``base`` (a config's, else the default), off with --no-sandbox."""
    policy = base or Policy()
    return dataclasses.replace(policy, enabled=False) if getattr(args, "no_sandbox", False) else policy


def add_cluster(p: argparse.ArgumentParser, config: bool = True) -> None:
    """``--cluster``; ``config``: the help says a config's ``cluster`` field comes first."""
    pre = "the config's cluster, else " if config else ""
    p.add_argument(
        "--cluster", metavar="ADDRESS|local[:N]",
        help="play on a Dask cluster: a scheduler's address (tcp://host:8786), or local:N for N worker processes "
        f"on this machine (needs pip install 'sixtysix-arena[cluster]'; see docs/cluster.md; default: {pre}none: "
        "play here)",
    )  # fmt: skip
