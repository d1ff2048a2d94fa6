"""``arena compare NEW OLD``: is NEW stronger than OLD? Duplicate pairs and an SPRT.

Plays NEW against OLD in duplicate pairs and runs a generalized SPRT on the pair scores
(0, 1/2, 1), printing the LLR against its bounds, Elo with its 95% interval and the LOS
as pairs complete; stops when a bound is crossed or at ``--max-pairs``. With
``--fixed N`` it plays exactly N pairs and reports the estimate. Everything is kept in
the store: ``--resume`` continues a comparison, ``arena report`` charts its LLR path.
"""

from __future__ import annotations

import argparse
import math
import sys

import trio

from ..agents import build_all
from ..compare import PairFeed, describe, feed_rows, new_test
from ..errors import UserError
from ..options import add_sandbox, add_time_control_overrides, sandbox_policy, time_control_overrides
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
    t.add_argument("--elo0", type=float, default=0.0, help="H0: NEW gains elo0 (default 0)")
    t.add_argument("--elo1", type=float, default=5.0, help="H1: NEW gains elo1 (default 5)")
    t.add_argument("--alpha", type=float, default=0.05, help="false-positive rate (default 0.05)")
    t.add_argument("--beta", type=float, default=0.05, help="false-negative rate (default 0.05)")
    t.add_argument("--max-pairs", type=int, default=20_000, help="stop without a decision here (default 20000)")
    t.add_argument("--fixed", type=int, metavar="N", help="no SPRT: play exactly N pairs and report the estimate")
    g = p.add_argument_group("the matches")
    g.add_argument(
        "--seed", type=int,
        help="a plain root seed, for trusted agents only (default: a secret drawn for the store and kept in it)",
    )  # fmt: skip
    g.add_argument("--secret-file", metavar="FILE", help="the root seed is the secret in FILE (arena secret STORE)")
    g.add_argument("--variant", default="sixty-six")
    g.add_argument("--concurrency", type=int)
    g.add_argument("--store", help="default: reports/compare-NEW-vs-OLD.sqlite")
    add_time_control_overrides(p)
    r = p.add_argument_group("running")
    r.add_argument("--resume", action="store_true", help="continue a comparison stored in --store")
    r.add_argument("--quiet", action="store_true", help="print only the result")
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
    say = (lambda *a: None) if args.quiet else (lambda text: print(text, flush=True))

    def decided() -> bool:
        return not args.fixed and test.finished

    def take_ready() -> None:
        for _, score, margin in feed.ready():
            was_decided = decided()
            test.add(score)
            margins.append(margin)
            if not was_decided:  # pairs that were in flight at the decision only update the counts
                line = test.line()
                say(line.rsplit("  ", 1)[0] if args.fixed else line)  # a fixed run has no SPRT status

    with Store(cfg.store) as store:
        cfg = bind_tournament(cfg, store)
        specs = cfg.schedule()
        store.bind_config(cfg.identity(), cfg.config_hash)
        store.bind_compare(settings)
        store.bind_agents([m.row() for m in cfg.agents])
        stored = store.matches()
        if stored and not args.resume:
            raise UserError(f"{cfg.store} already holds {len(stored)} matches of this comparison; add --resume")
        feed_rows(feed, stored)
        take_ready()
        mode = f"{pairs} pairs" if args.fixed else f"SPRT elo0={args.elo0:g} elo1={args.elo1:g} " \
            f"alpha={args.alpha:g} beta={args.beta:g}, at most {pairs} pairs"  # fmt: skip
        say(f"comparing {new} (new) with {old} (old): {mode}; store {cfg.store}")
        policy = sandbox_policy(args)
        if not cfg.secret and policy.enabled and not decided():
            print(explicit_seed_warning(cfg.root), file=sys.stderr)
        run_id = store.start_run(code_version(), None, sys.argv)

        def finished(f: Finished) -> None:
            r = f.record
            feed.add(f.spec.pair_index, f.spec.seats, r.winner, tuple(r.score))
            take_ready()

        try:
            if not decided():
                logs = cfg.store.with_name(cfg.store.stem + "-logs")
                logs.mkdir(parents=True, exist_ok=True)
                private(logs)
                with Sandbox(policy, hide=[cfg.secret_file] if cfg.secret_file else []) as sandbox:
                    trio.run(lambda: run_tournament(cfg, specs, store, run_id, on_finished=finished,
                                                    should_stop=decided, logs=logs, sandbox=sandbox))  # fmt: skip
        finally:
            store.finish_run(run_id)
        store.verify()  # every match written is there, in the file that was opened, whole
    print(describe(test, margins, settings))
    if not args.no_report:
        from ..report import build_report

        print(f"report: {build_report(cfg.store, cfg.store.parent / cfg.store.stem)}")
    return 0
