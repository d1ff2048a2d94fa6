"""``arena match A B [C [D]]``: one match between agents, play by play (three or four
agents for the three- and four-handed games).

The exit status is 0 when the match was played (a forfeit during play included), 2 for
bad input (an unknown agent, a program it needs that is missing: `arena.runtime.toolchain`),
and 1 when an agent could not be started, so that nothing was played."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import trio

from ..errors import UserError
from ..game import ALL_PRESETS, VariantError, get_variant
from ..play.playbyplay import PlayByPlay
from ..play.referee import MatchRecord
from ..runtime.agents import build_all, resolve
from ..runtime.sandbox import Sandbox
from .options import add_sandbox, add_time_control, sandbox_policy, time_control_from


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent_a", metavar="A", help="agent in seat 0: a folder with agent.toml, or a manifest name")
    p.add_argument("agent_b", metavar="B", help="agent in seat 1")
    p.add_argument("more", metavar="C", nargs="*", help="agents in seats 2 and 3, for a three- or four-handed game")
    p.add_argument("--seed", type=int, default=1, help="match seed (default: 1)")
    p.add_argument("--variant", default="sixty-six", help=f"rule preset: {', '.join(ALL_PRESETS)}")
    p.add_argument("--record", type=Path, help="write the match record as JSON to this file")
    p.add_argument(
        "--logs", type=Path, default=Path("reports/logs"), help="agents' stderr logs (default: reports/logs)"
    )
    p.add_argument("--quiet", action="store_true", help="print only the result")
    add_time_control(p)
    add_sandbox(p)


def run(args: argparse.Namespace) -> int:
    try:
        variant = get_variant(args.variant)
    except VariantError as e:
        raise UserError(f"--variant: {e}") from None
    if args.seed < 0:
        raise UserError(f"--seed: must be a non-negative integer, got {args.seed}")
    tc = time_control_from(args)
    given = [args.agent_a, args.agent_b, *args.more]
    if len(given) != variant.players:
        raise UserError(f"{variant.name} seats {variant.players} agents; {len(given)} given")
    manifests = [resolve(a) for a in given]
    build_all(manifests)
    taken = [m.name for m in manifests]
    names = [m.name if taken.count(m.name) == 1 else f"{m.name}#{i}" for i, m in enumerate(manifests)]
    printer = PlayByPlay(names) if not args.quiet else None
    from ..play.duel import duel

    with Sandbox(sandbox_policy(args)) as sandbox:
        rec = trio.run(
            lambda: duel(manifests, args.seed, variant, tc, logs=args.logs, on_event=printer.event if printer else None,
                         sandbox=sandbox)
        )  # fmt: skip
    print(summary(rec, names))
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(rec.to_dict(), indent=1) + "\n")
        print(f"record: {args.record}")
    f = rec.forfeit
    if f is not None and f.deal is None and not rec.deals:  # a seat never started: nothing was played
        print(f"arena: the match was not played: {names[f.seat]} could not be started ({f.code}: {f.detail})",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


def summary(rec: MatchRecord, names: list[str]) -> str:
    if len(names) > 2:
        return _table_summary(rec, names)
    score = "-".join(map(str, rec.score))
    if rec.forfeit is not None:
        line = _forfeit(rec, names)
        if rec.winner is None:
            return f"result: no contest; {line}; both seats failed"
        return f"result: {names[rec.winner]} wins by forfeit, {score}; {line}"
    return f"result: {names[rec.winner]} wins {score} (margin {rec.margin}) in {len(rec.deals)} deals"


def _forfeit(rec: MatchRecord, names: list[str]) -> str:
    """Who forfeited, how and where, in words."""
    f = rec.forfeit
    where = f" in deal {f.deal}" if f.deal is not None else " before play"
    return f"{names[f.seat]} forfeits ({f.code}: {f.detail}){where}"


def _side(rec: MatchRecord, names: list[str], side: int) -> str:
    """A side's name: a seat's, or a team's two seats' in a team game."""
    if rec.kind == "team":
        return f"{names[side]} & {names[side + 2]}"
    return names[side]


def _table_summary(rec: MatchRecord, names: list[str]) -> str:
    score = ", ".join(f"{x:g}" for x in rec.score)
    line = f"; {_forfeit(rec, names)}" if rec.forfeit is not None else ""
    if rec.kind == "order" or (rec.places and rec.winner is None):
        order = sorted(range(len(names)), key=lambda s: rec.places[s])
        return f"result: places {', '.join(f'{rec.places[s]}. {names[s]}' for s in order)}; score {score}{line}"
    if rec.winner is None:
        return f"result: no contest; score {score}{line}"
    verb = "win" if rec.kind == "team" else "wins"
    how = f"ahead after {len(rec.deals)} deals (the deal limit)" if rec.adjudicated else f"in {len(rec.deals)} deals"
    return f"result: {_side(rec, names, rec.winner)} {verb} {score} {how}{line}"
