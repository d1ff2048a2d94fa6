"""``arena replay STORE MATCH_ID``: play a stored match again and compare.

The match is played again from its seed, with the same agents (from the folders the
store recorded), the same variant and time control, and the same seeds in ``hello`` and
``match_start``. With deterministic agents it must come out identical; the command says
so, or names the first action that differs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import trio

from ..errors import UserError
from ..game import Variant, derive_seed
from ..play.duel import duel
from ..play.playbyplay import PlayByPlay
from ..protocol.codec import TimeControl
from ..results.standings import seats_of
from ..results.store import Store
from ..runtime.agents import build_all, load_manifest
from ..runtime.sandbox import Sandbox
from ..tournament.secret import store_root
from .options import add_sandbox, sandbox_policy


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", type=Path, help="a results store")
    p.add_argument("match_id", help="the match id, e.g. 'random~greedy#3.1'")
    p.add_argument("--play-by-play", action="store_true", help="print the replayed match action by action")
    p.add_argument(
        "--logs", type=Path, default=Path("reports/logs"), help="agents' stderr logs (default: reports/logs)"
    )
    add_sandbox(p)


def run(args: argparse.Namespace) -> int:
    with Store(args.store, create=False) as store:
        found = store.match(args.match_id)
        if found is None:
            some = ", ".join(r["id"] for r in store.matches()[:3])
            raise UserError(f"{args.store}: no match {args.match_id!r} (ids look like: {some or 'none stored'})")
        row, deals = found
        config = store.config
        root = store_root(store)  # the explicit seed, or the secret kept in the store
        agents = {a["name"]: a for a in store.agents()}
    manifests = []
    names = seats_of(row)  # two agents, or three or four at a table
    for name in names:
        a = agents[name]
        m = load_manifest(Path(a["folder"]))
        if m.content_hash() != a["content_hash"]:
            print(f"arena: warning: agent {name!r} in {a['folder']} changed since the match was stored")
        manifests.append(m)
    build_all(manifests)
    variant = Variant.from_dict(config["variant"])
    tc = TimeControl(**config["time_control"])
    seeds = [derive_seed(root, "agent", m.name) for m in manifests]
    printer = PlayByPlay([m.name for m in manifests]) if args.play_by_play else None
    args.logs = args.logs or args.store.with_name(args.store.stem + "-logs")
    args.logs.mkdir(parents=True, exist_ok=True)
    with Sandbox(sandbox_policy(args)) as sandbox:
        rec = trio.run(
            lambda: duel(manifests, row["seed"], variant, tc, match_id=row["id"], logs=args.logs, hello_seeds=seeds,
                         on_event=printer.event if printer else None, sandbox=sandbox)
        )  # fmt: skip
    stored = [d["actions"].split() if d["actions"] else [] for d in deals]
    again = [d.actions for d in rec.deals]
    for k in range(max(len(stored), len(again))):
        a = stored[k] if k < len(stored) else None
        b = again[k] if k < len(again) else None
        if a != b:
            if a is None or b is None:
                print(f"DIFFERENT: deal {k} was {'not played' if a is None else 'played'} when stored, "
                      f"{'not played' if b is None else 'played'} now")  # fmt: skip
            else:
                i = next(i for i in range(max(len(a), len(b))) if (a[i : i + 1] or [None]) != (b[i : i + 1] or [None]))
                print(f"DIFFERENT: deal {k}, action {i}: stored {a[i] if i < len(a) else 'nothing'}, "
                      f"replayed {b[i] if i < len(b) else 'nothing'}")  # fmt: skip
            return 1
    score = [row[f"score{side}"] for side in range(len(rec.score))]
    same_end = (rec.winner, rec.score) == (row["winner"], score)
    fault = f"; {rec.forfeit.code} forfeit by seat {rec.forfeit.seat}" if rec.forfeit else ""
    if not same_end:
        print(f"DIFFERENT: same actions, but the result was {_score(score)}, now {_score(rec.score)}{fault}")
        return 1
    result = (f"{names[0]} {_score(rec.score)} {names[1]}" if len(names) == 2
              else f"{', '.join(names)}: {_score(rec.score)}")  # fmt: skip
    print(f"IDENTICAL: {row['id']}: {len(again)} deals, {sum(map(len, again))} actions, {result}{fault}")
    return 0


def _score(score: list) -> str:
    """A score as "7-3", or a side each at a table as "-3 / -4 / 7" (stakes may be negative)."""
    return "-".join(f"{x:g}" for x in score) if len(score) == 2 else " / ".join(f"{x:g}" for x in score)
