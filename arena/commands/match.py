"""``arena match A B``: one match between two agents, play by play."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import trio

from ..agents import build_all, resolve
from ..errors import UserError
from ..game import VariantError, card_str, cards_of, get_variant
from ..options import add_time_control, time_control_from
from ..referee import MatchRecord


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent_a", metavar="A", help="agent in seat 0: a folder with agent.toml, or a manifest name")
    p.add_argument("agent_b", metavar="B", help="agent in seat 1")
    p.add_argument("--seed", type=int, default=1, help="match seed (default: 1)")
    p.add_argument("--variant", default="sixty-six", help="rule preset (default: sixty-six)")
    p.add_argument("--record", type=Path, help="write the match record as JSON to this file")
    p.add_argument(
        "--logs", type=Path, default=Path("reports/logs"), help="agents' stderr logs (default: reports/logs)"
    )
    p.add_argument("--quiet", action="store_true", help="print only the result")
    add_time_control(p)


def run(args: argparse.Namespace) -> int:
    try:
        variant = get_variant(args.variant)
    except VariantError as e:
        raise UserError(f"--variant: {e}") from None
    if args.seed < 0:
        raise UserError(f"--seed: must be a non-negative integer, got {args.seed}")
    tc = time_control_from(args)
    manifests = [resolve(args.agent_a), resolve(args.agent_b)]
    build_all(manifests)
    names = [m.name if manifests[0].name != manifests[1].name else f"{m.name}#{i}" for i, m in enumerate(manifests)]
    printer = _PlayByPlay(names) if not args.quiet else None
    from ..duel import duel

    rec = trio.run(
        lambda: duel(manifests, args.seed, variant, tc, logs=args.logs, on_event=printer.event if printer else None)
    )
    print(summary(rec, names))
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(rec.to_dict(), indent=1) + "\n")
        print(f"record: {args.record}")
    return 0


def summary(rec: MatchRecord, names: list[str]) -> str:
    score = "-".join(map(str, rec.score))
    if rec.forfeit is not None:
        f = rec.forfeit
        where = f" in deal {f.deal}" if f.deal is not None else " before play"
        line = f"{names[f.seat]} forfeits ({f.code}: {f.detail}){where}"
        if rec.winner is None:
            return f"result: no contest; {line}; both seats failed"
        return f"result: {names[rec.winner]} wins by forfeit, {score}; {line}"
    return f"result: {names[rec.winner]} wins {score} (margin {rec.margin}) in {len(rec.deals)} deals"


class _PlayByPlay:
    def __init__(self, names: list[str]):
        self.names = names
        self.width = max(len(n) for n in names)

    def event(self, kind: str, data: dict[str, Any]) -> None:
        n = self.names
        if kind == "deal_start":
            st = data["state"]
            hands = " | ".join(f"{n[s]}: {' '.join(card_str(c) for c in cards_of(st.hand[s]))}" for s in (0, 1))
            print(
                f"deal {data['deal']}: {n[st.dealer]} deals, trump {'CDHS'[st.trump]} (turn-up {card_str(st.turn_up)})"
            )
            print(f"  {hands}")
        elif kind == "action":
            print(f"  {n[data['seat']]:<{self.width}}  {data['action']}")
        elif kind == "deal_end":
            r = data["result"]
            score = "-".join(map(str, data["score"]))
            if r.winner is None:
                print(f"  -> drawn hand ({r.points[0]}-{r.points[1]}); score {score}")
            else:
                print(
                    f"  -> {n[r.winner]} wins {r.game_points} game point{'s' * (r.game_points > 1)} "
                    f"({r.reason}; card points {r.points[0]}-{r.points[1]}); score {score}"
                )
        elif kind == "forfeit":
            print(f"  !! {n[data['seat']]} faulted: {data['code']}: {data['detail']}")
