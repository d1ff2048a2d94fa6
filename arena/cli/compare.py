"""``arena compare NEW OLD``: is NEW stronger than OLD? Duplicate pairs and an SPRT.

Plays NEW against OLD in duplicate pairs and runs a generalized SPRT on the pair scores
(0, 1/2, 1), printing the LLR against its bounds, the estimate with its 95% interval and
the LOS as pairs complete (a live status line on a terminal; ``--verbose`` prints one line
per pair on stdout); stops when a bound is crossed or at ``--max-pairs``. The header gives
the test's simulated operating characteristics (`arena.stats.sprt_plan`); ``--plan`` prints them
in full and plays nothing. With ``--fixed N`` it plays exactly N pairs and reports the
estimate. Everything is kept in the store: ``--resume`` continues a comparison (Ctrl-C says
the command), ``arena report`` charts its LLR path. A pair with a match lost before play is
void (`arena.tournament.compare`); when an agent cannot be started at all the run stops, since every
further pair would be void, and says how to go on once it is fixed (exit status 1).

In a three- or four-handed game (``--variant three-pagat``, ...) the other seats are held by a
reference agent (``--reference``, default heuristic), NEW and OLD each play every seat of a
deck set's decks against the same references, and the SPRT reads one score per deck set
(`arena.tournament.compare_tables`, which says why the set and not the seat is the unit).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import shlex
import sys
import time
from pathlib import Path

import trio

from ..errors import UserError
from ..game import PRESETS, TABLE_PRESETS
from ..report.progress import StatusLine, interrupted
from ..results.store import Store
from ..runtime.agents import build_all
from ..runtime.sandbox import Sandbox, private
from ..stats.sprt_plan import DEFAULT_SPLIT, SENSITIVITY_SPLITS, Plan, make_plan, plan_line, plan_text
from ..stats.sprt_plan import unit as model_unit
from ..tournament.compare import COLUMNS, DEFAULTS, MAX_NELO, Pair, comparison_class, match_row
from ..tournament.compare_tables import (
    DEFAULT_REFERENCE,
    TABLE_COLUMNS,
    TableCompareConfig,
    play_tables,
    table_config,
    table_match_row,
    table_variant,
)
from ..tournament.runner import Finished, run_tournament
from ..tournament.schedule import TournamentConfig, load_config
from ..tournament.secret import bind_tournament, explicit_seed_warning
from .options import add_cluster, add_sandbox, add_time_control_overrides, sandbox_policy, time_control_overrides
from .tournament import code_version, play_cluster


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("new", nargs="?", help="the new version: an agent folder or manifest name")
    p.add_argument("old", nargs="?", help="the version to beat")
    t = p.add_argument_group("the test")
    t.add_argument("--elo0", type=float, default=DEFAULTS["elo0"], help="H0: NEW gains elo0 (in the model's unit)")
    t.add_argument(
        "--elo1", type=float, default=DEFAULTS["elo1"],
        help="H1: NEW gains elo1, the smallest gain worth finding (in the model's unit)",
    )  # fmt: skip
    t.add_argument(
        "--model", choices=("normalized", "logistic"), default=DEFAULTS["model"],
        help="the bounds' unit: normalized Elo (nElo: in units of the pair scores' spread, fishtest's and "
        "fastchess's choice) or logistic Elo",
    )  # fmt: skip
    t.add_argument("--alpha", type=float, default=DEFAULTS["alpha"], help="false-positive rate: H1 at elo0")
    t.add_argument("--beta", type=float, default=DEFAULTS["beta"], help="false-negative rate: H0 at elo1")
    t.add_argument("--max-pairs", type=int, default=DEFAULTS["max_pairs"], help="stop without a decision here")
    t.add_argument("--fixed", type=int, metavar="N", help="no SPRT: play exactly N pairs and report the estimate")
    plan = p.add_argument_group("the plan (the test's operating characteristics, simulated)")
    plan.add_argument("--plan", action="store_true", help="print the plan for these settings and play nothing")
    plan.add_argument(
        "--split", type=float, default=DEFAULT_SPLIT, metavar="SHARE",
        help="the share of pairs that split 1-1 the plan assumes (the normalized model barely depends on it)",
    )  # fmt: skip
    plan.add_argument(
        "--runs", type=int, metavar="N",
        help="simulated tests per true gain (default: 1000, fewer when a test takes very many pairs)",
    )  # fmt: skip
    g = p.add_argument_group("the matches")
    g.add_argument(
        "--seed", type=int,
        help="a plain root seed, for trusted agents only (default: a secret drawn for the store and kept in it)",
    )  # fmt: skip
    g.add_argument("--secret-file", metavar="FILE", help="the root seed is the secret in FILE (arena secret STORE)")
    g.add_argument(
        "--variant", default="sixty-six",
        help=f"rule preset: {', '.join(PRESETS)}, or a three- or four-handed one ({', '.join(TABLE_PRESETS)})",
    )  # fmt: skip
    g.add_argument(
        "--reference", metavar="AGENT",
        help=f"three- and four-handed games: the agent in the other seats (default: {DEFAULT_REFERENCE})",
    )  # fmt: skip
    g.add_argument("--concurrency", type=int, help="matches in flight (default: the CPU count, at least 2)")
    g.add_argument(
        "--store",
        help="the SQLite results file (default: reports/compare-NEW-vs-OLD.sqlite; at a table "
        "reports/compare-NEW-vs-OLD-VARIANT.sqlite)",
    )  # fmt: skip
    add_time_control_overrides(p, "time control", config=False)
    r = p.add_argument_group("running")
    r.add_argument("--resume", action="store_true", help="continue a comparison stored in --store")
    r.add_argument("--quiet", action="store_true", help="print only the result: no header, no live status line")
    r.add_argument(
        "--verbose", action="store_true",
        help="print a line on stdout for every pair as it completes (LLR, estimate, LOS, status)",
    )  # fmt: skip
    r.add_argument("--no-report", action="store_true", help="do not write the HTML report")
    add_sandbox(p)
    add_cluster(r, config=False)


def check(args: argparse.Namespace) -> None:
    """The test's settings, each bad one refused in one line."""
    if not (math.isfinite(args.elo0) and math.isfinite(args.elo1) and args.elo0 < args.elo1):
        raise UserError(f"--elo0/--elo1: need elo0 < elo1, got {args.elo0:g} and {args.elo1:g}")
    if args.model == "normalized" and max(abs(args.elo0), abs(args.elo1)) > MAX_NELO:
        raise UserError(f"--elo0/--elo1: the normalized model takes bounds within ±{MAX_NELO:g} nElo")
    for name in ("alpha", "beta"):
        if not 0 < getattr(args, name) < 0.5:
            raise UserError(f"--{name}: must be between 0 and 0.5, got {getattr(args, name)}")
    if args.max_pairs < 1 or (args.fixed is not None and args.fixed < 1):
        raise UserError("--max-pairs/--fixed: must be at least 1")
    if not 0 <= args.split < 1:
        raise UserError(f"--split: must be at least 0 and below 1, got {args.split}")
    if args.runs is not None and args.runs < 1:
        raise UserError(f"--runs: must be at least 1, got {args.runs}")


def plan_for(args: argparse.Namespace, others: tuple[float, ...] = ()) -> Plan:
    """The simulated plan of these settings; UserError when the split share cannot hold the gains."""
    try:
        return make_plan(args.elo0, args.elo1, args.alpha, args.beta, args.max_pairs, args.model,
                         split=args.split, runs=args.runs, others=others)  # fmt: skip
    except ValueError as e:
        raise UserError(f"--split: {e}") from None


def run(args: argparse.Namespace) -> int:
    check(args)
    if args.plan:
        if table_variant(args.variant) is not None:
            raise UserError(
                f"--plan: the plan simulates two-handed pairs; there is none for the deck sets of {args.variant} yet"
            )
        print(plan_text(plan_for(args, SENSITIVITY_SPLITS)))
        return 0
    if args.new is None or args.old is None:
        raise UserError("NEW and OLD: name the two versions to compare (or --plan to see the test's plan)")
    pairs = args.fixed or args.max_pairs
    tc_flags = time_control_overrides(args)
    variant = table_variant(args.variant)
    cfg: TournamentConfig
    if variant is None:  # two-handed: duplicate pairs
        overrides = {"format": "head-to-head", "agents": [args.new, args.old], "pairs": pairs, "seed": args.seed,
                     "secret_file": args.secret_file, "variant": args.variant,
                     "concurrency": args.concurrency}  # fmt: skip
        cfg = load_config(None, overrides, tc_flags, tables=False)
        new, old = cfg.names
        if args.reference is not None:
            raise UserError(f"--reference: only for the three- and four-handed games, not {cfg.variant.name}")
        if args.store is None:
            cfg = load_config(None, {**overrides, "name": f"compare-{new}-vs-{old}"}, tc_flags, tables=False)
        else:
            cfg = load_config(None, {**overrides, "store": args.store}, tc_flags, tables=False)
        agents, columns = list(cfg.agents), COLUMNS
    else:  # at a table: deck sets, the other seats held by the reference
        cfg = table_config(args.new, args.old, args.reference or DEFAULT_REFERENCE, variant, seed=args.seed,
                           secret_file=args.secret_file, concurrency=args.concurrency, store=args.store,
                           time_control_flags=tc_flags, sets=pairs)  # fmt: skip
        new, old = cfg.names
        agents, columns = cfg.distinct_agents(), TABLE_COLUMNS
    settings = {"new": new, "old": old, "elo0": args.elo0, "elo1": args.elo1, "alpha": args.alpha,
                "beta": args.beta, "max_pairs": pairs, "fixed": args.fixed is not None,
                "model": args.model}  # fmt: skip
    tables = isinstance(cfg, TableCompareConfig)
    if isinstance(cfg, TableCompareConfig):  # what makes the stored comparison a table one (`comparison_class`)
        settings.update(reference=cfg.ref.name, seats=cfg.players)
    target = None
    if args.cluster:  # refused before the store is made; each worker checks its toolchain and builds
        from ..tournament.cluster import parse_target, require_dask

        target = parse_target(args.cluster)
        require_dask()
    else:
        build_all(agents)
    comparison = comparison_class(settings)(settings)
    unit = comparison.unit
    say = (lambda *a: None) if args.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    stored = 0  # matches in the store
    withdrawn: list[str] = []  # an agent that cannot be started: every further pair would be void

    told = False  # the decision was printed: pairs in flight at it only update the counts

    def each_pair(pair: Pair) -> None:
        nonlocal told
        if args.verbose and not told:
            print(comparison.line(), flush=True)
        told = comparison.decided

    comparison.on_pair = each_pair

    live = StatusLine(lambda: f"{stored} matches stored, {comparison.line()}")

    def warn(line: str) -> None:
        withdrawn.append(line)
        live.clear()
        print(f"arena: {line}", file=sys.stderr, flush=True)

    with Store(cfg.store) as store:
        cfg = bind_tournament(cfg, store)
        specs = cfg.schedule()
        store.bind_config(cfg.identity(), cfg.config_hash)
        have = store.compare_settings()
        legacy = have is not None and "model" not in have and args.model == "logistic"  # before the model was kept
        store.bind_compare({k: v for k, v in settings.items() if k != "model"} if legacy else settings)
        store.bind_agents([m.row() for m in agents])
        rows = store.matches(columns)
        if rows and not args.resume:
            raise UserError(f"{cfg.store} already holds {len(rows)} matches of this comparison; add --resume")
        stored = len(rows)
        again = store.unplayed_ids()  # lost before play: played again below, so they wait for their new result
        for row in sorted(rows, key=lambda r: (r["pair_index"], r["game"])):
            if row["id"] not in again:
                comparison.add(row)
        if args.fixed:
            mode = f"{pairs} {unit}"
        else:
            u = model_unit(args.model)
            mode = (
                f"SPRT on {args.model} Elo, elo0={args.elo0:g} {u} elo1={args.elo1:g} {u} alpha={args.alpha:g} "
                f"beta={args.beta:g}, at most {pairs} {unit}"
            )
        if isinstance(cfg, TableCompareConfig):
            n = cfg.players
            mode += (
                f" of {2 * n} matches (NEW and OLD in each of the {n} seats of {cfg.variant.name}, "
                f"{cfg.ref.name} in the others)"
            )
        say(f"comparing {new} (new) with {old} (old): {mode}; store {cfg.store}")
        if not args.fixed and not args.quiet and not comparison.decided and not tables:
            try:
                say(plan_line(plan_for(args)))
            except UserError as e:  # the plan informs; a split share it cannot use stops nothing
                say(f"planned: no figures ({str(e).removeprefix('--split: ')}; see --split)")
        policy = sandbox_policy(args)
        if not cfg.secret and policy.enabled and not comparison.decided:
            print(explicit_seed_warning(cfg.root), file=sys.stderr)
        run_id = store.start_run(code_version(), None, sys.argv)

        def finished(f: Finished) -> None:
            nonlocal stored
            stored += 1
            comparison.add((table_match_row if tables else match_row)(f.spec, f.record))

        async def play(sandbox: Sandbox, logs: Path) -> None:
            async with trio.open_nursery() as nursery:
                if not args.quiet:
                    nursery.start_soon(live.display)
                if isinstance(cfg, TableCompareConfig):
                    await play_tables(cfg, specs, store, run_id, on_finished=finished,
                                      should_stop=lambda: comparison.decided or bool(withdrawn), logs=logs,
                                      sandbox=sandbox, warn=warn)  # fmt: skip
                else:
                    await run_tournament(cfg, specs, store, run_id, on_finished=finished,
                                         should_stop=lambda: comparison.decided or bool(withdrawn), logs=logs,
                                         sandbox=sandbox, warn=warn)  # fmt: skip
                nursery.cancel_scope.cancel()

        def on_cluster() -> None:
            from ..tournament.cluster import COMPARE_CHUNK_PAIRS

            cfg_run = dataclasses.replace(cfg, sandbox=policy)  # the workers' sandbox: this run's policy
            period, due = (0.5 if live.tty else 10.0), [0.0]

            def tick() -> None:
                if not args.quiet and time.monotonic() >= due[0]:
                    due[0] = time.monotonic() + period
                    live.draw()

            def note(line: str) -> None:
                live.clear()
                print(line, file=sys.stderr, flush=True)

            logs = cfg.store.with_name(cfg.store.stem + "-logs")
            logs.mkdir(parents=True, exist_ok=True)
            private(logs)
            play_cluster(target, cfg_run, specs, store, run_id, finished=finished, note=note, warn=warn,
                         should_stop=lambda: comparison.decided or bool(withdrawn), tick=tick,
                         chunk_size=COMPARE_CHUNK_PAIRS, logs=logs)  # fmt: skip

        stop = None
        cluster_error: UserError | None = None
        try:
            if not comparison.decided and target is not None:
                on_cluster()
            elif not comparison.decided:
                logs = cfg.store.with_name(cfg.store.stem + "-logs")
                logs.mkdir(parents=True, exist_ok=True)
                private(logs)
                with Sandbox(policy, hide=[cfg.secret_file] if cfg.secret_file else []) as sandbox:
                    trio.run(play, sandbox, logs)
        except UserError as e:
            if target is None:
                raise
            cluster_error = e  # a lost scheduler, a worker's missing toolchain: said below, with the way on
        except BaseException as e:
            if not interrupted(e):
                raise
            stop = e
        finally:
            live.clear()
            store.finish_run(run_id)
        store.verify()  # every match written is there, in the file that was opened, whole
        again_cmd = shlex.join(["arena", *sys.argv[1:]] + ([] if args.resume else ["--resume"]))
        if cluster_error is not None:
            raise UserError(f"{cluster_error}; {store.count()} matches in {cfg.store}; resume with: {again_cmd}")
        if stop is not None:
            raise KeyboardInterrupt(
                f"{store.count()} matches in {cfg.store}, {comparison.test.pairs} {unit} complete, the test "
                f"{comparison.test.status}; resume with: {again_cmd}"
            ) from None
        final = comparison_class(settings).from_rows(store.matches(columns), settings)  # what the report reads
        unplayed = len(store.unplayed_ids())
    print(final.describe())
    if not args.no_report:
        from ..report.html import build_report

        print(f"report: {build_report(cfg.store, cfg.store.parent / cfg.store.stem)}")
    if not final.finished:  # void pairs (or an agent that could not be started): not a finished comparison
        print(
            f"arena: the comparison is not finished: {unplayed} match{'es' * (unplayed != 1)} could not be played "
            f"(an agent could not be started; the cause is above); once that is fixed, go on with: {again_cmd}",
            file=sys.stderr,
        )
        return 1
    return 0
