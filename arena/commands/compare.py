"""``arena compare NEW OLD``: is NEW stronger than OLD? Duplicate pairs and an SPRT.

Plays NEW against OLD in duplicate pairs and runs a generalized SPRT on the pair scores
(0, 1/2, 1), printing the LLR against its bounds, Elo with its 95% interval and the LOS
as pairs complete (a live status line on a terminal; ``--verbose`` prints one line per
pair on stdout); stops when a bound is crossed or at ``--max-pairs``. With ``--fixed N``
it plays exactly N pairs and reports the estimate. Everything is kept in the store:
``--resume`` continues a comparison (Ctrl-C says the command), ``arena report`` charts its
LLR path.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from pathlib import Path

import trio

from ..agents import build_all
from ..compare import PairFeed, describe, feed_rows, new_test
from ..errors import UserError
from ..game import PRESETS
from ..options import add_sandbox, add_time_control_overrides, sandbox_policy, time_control_overrides
from ..progress import StatusLine, interrupted
from ..runner import Finished, run_tournament
from ..sandbox import Sandbox, private
from ..schedule import load_config
from ..secret import bind_tournament, explicit_seed_warning
from ..store import Store
from .tournament import code_version


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("new", help="the new version: an agent folder or manifest name")
    p.add_argument("old", help="the version to beat")
    t = p.add_argument_group("the test")
    t.add_argument("--elo0", type=float, default=0.0, help="H0: NEW gains elo0")
    t.add_argument("--elo1", type=float, default=5.0, help="H1: NEW gains elo1")
    t.add_argument("--alpha", type=float, default=0.05, help="false-positive rate")
    t.add_argument("--beta", type=float, default=0.05, help="false-negative rate")
    t.add_argument("--max-pairs", type=int, default=20_000, help="stop without a decision here")
    t.add_argument("--fixed", type=int, metavar="N", help="no SPRT: play exactly N pairs and report the estimate")
    g = p.add_argument_group("the matches")
    g.add_argument(
        "--seed", type=int,
        help="a plain root seed, for trusted agents only (default: a secret drawn for the store and kept in it)",
    )  # fmt: skip
    g.add_argument("--secret-file", metavar="FILE", help="the root seed is the secret in FILE (arena secret STORE)")
    g.add_argument("--variant", default="sixty-six", help=f"rule preset: {' or '.join(PRESETS)}")
    g.add_argument("--concurrency", type=int, help="matches in flight (default: the CPU count, at least 2)")
    g.add_argument("--store", help="the SQLite results file (default: reports/compare-NEW-vs-OLD.sqlite)")
    add_time_control_overrides(p, "time control", config=False)
    r = p.add_argument_group("running")
    r.add_argument("--resume", action="store_true", help="continue a comparison stored in --store")
    r.add_argument("--quiet", action="store_true", help="print only the result: no live status line")
    r.add_argument(
        "--verbose", action="store_true",
        help="print a line on stdout for every pair as it completes (LLR, Elo, LOS, status)",
    )  # fmt: skip
    r.add_argument("--no-report", action="store_true", help="do not write the HTML report")
    add_sandbox(p)


def run(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.elo0) and math.isfinite(args.elo1) and args.elo0 < args.elo1):
        raise UserError(f"--elo0/--elo1: need elo0 < elo1, got {args.elo0:g} and {args.elo1:g}")
    for name in ("alpha", "beta"):
        if not 0 < getattr(args, name) < 0.5:
            raise UserError(f"--{name}: must be between 0 and 0.5, got {getattr(args, name)}")
    if args.max_pairs < 1 or (args.fixed is not None and args.fixed < 1):
        raise UserError("--max-pairs/--fixed: must be at least 1")
    pairs = args.fixed or args.max_pairs
    tc_flags = time_control_overrides(args)
    overrides = {"format": "head-to-head", "agents": [args.new, args.old], "pairs": pairs, "seed": args.seed,
                 "secret_file": args.secret_file, "variant": args.variant, "concurrency": args.concurrency}  # fmt: skip
    cfg = load_config(None, overrides, tc_flags)
    new, old = cfg.names
    if args.store is None:
        cfg = load_config(None, {**overrides, "name": f"compare-{new}-vs-{old}"}, tc_flags)
    else:
        cfg = load_config(None, {**overrides, "store": args.store}, tc_flags)
    settings = {"new": new, "old": old, "elo0": args.elo0, "elo1": args.elo1, "alpha": args.alpha,
                "beta": args.beta, "max_pairs": pairs, "fixed": args.fixed is not None}  # fmt: skip
    build_all(list(cfg.agents))
    test = new_test(settings)
    feed = PairFeed(new)
    margins: list[int] = []
    say = (lambda *a: None) if args.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    stored = 0  # matches in the store

    def decided() -> bool:
        return not args.fixed and test.finished

    def take_ready() -> None:
        for _, score, margin in feed.ready():
            was_decided = decided()
            test.add(score)
            margins.append(margin)
            if args.verbose and not was_decided:  # pairs in flight at the decision only update the counts
                line = test.line()
                print(line.rsplit("  ", 1)[0] if args.fixed else line, flush=True)  # a fixed run has no SPRT status

    def status() -> str:
        line = test.line()
        return f"{stored} matches stored, " + (line.rsplit("  ", 1)[0] if args.fixed else line)

    live = StatusLine(status)
    with Store(cfg.store) as store:
        cfg = bind_tournament(cfg, store)
        specs = cfg.schedule()
        store.bind_config(cfg.identity(), cfg.config_hash)
        store.bind_compare(settings)
        store.bind_agents([m.row() for m in cfg.agents])
        rows = store.matches()
        if rows and not args.resume:
            raise UserError(f"{cfg.store} already holds {len(rows)} matches of this comparison; add --resume")
        stored = len(rows)
        feed_rows(feed, rows)
        take_ready()
        mode = f"{pairs} pairs" if args.fixed else f"SPRT elo0={args.elo0:g} elo1={args.elo1:g} " \
            f"alpha={args.alpha:g} beta={args.beta:g}, at most {pairs} pairs"  # fmt: skip
        say(f"comparing {new} (new) with {old} (old): {mode}; store {cfg.store}")
        policy = sandbox_policy(args)
        if not cfg.secret and policy.enabled and not decided():
            print(explicit_seed_warning(cfg.root), file=sys.stderr)
        run_id = store.start_run(code_version(), None, sys.argv)

        def finished(f: Finished) -> None:
            nonlocal stored
            stored += 1
            r = f.record
            feed.add(f.spec.pair_index, f.spec.seats, r.winner, tuple(r.score))
            take_ready()

        async def play(sandbox: Sandbox, logs: Path) -> None:
            async with trio.open_nursery() as nursery:
                if not args.quiet:
                    nursery.start_soon(live.display)
                await run_tournament(cfg, specs, store, run_id, on_finished=finished, should_stop=decided, logs=logs,
                                     sandbox=sandbox)  # fmt: skip
                nursery.cancel_scope.cancel()

        stop = None
        try:
            if not decided():
                logs = cfg.store.with_name(cfg.store.stem + "-logs")
                logs.mkdir(parents=True, exist_ok=True)
                private(logs)
                with Sandbox(policy, hide=[cfg.secret_file] if cfg.secret_file else []) as sandbox:
                    trio.run(play, sandbox, logs)
        except BaseException as e:
            if not interrupted(e):
                raise
            stop = e
        finally:
            live.clear()
            store.finish_run(run_id)
        store.verify()  # every match written is there, in the file that was opened, whole
        if stop is not None:
            again = ["arena", *sys.argv[1:]] + ([] if args.resume else ["--resume"])
            raise KeyboardInterrupt(
                f"{store.count()} matches in {cfg.store}, {test.pairs} pairs complete, the test {test.status}; "
                f"resume with: {shlex.join(again)}"
            ) from None
    print(describe(test, margins, settings))
    if not args.no_report:
        from ..report import build_report

        print(f"report: {build_report(cfg.store, cfg.store.parent / cfg.store.stem)}")
    return 0
