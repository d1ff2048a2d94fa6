"""``arena ratings STORE``: the rating table with 95% intervals, or JSON for scripts."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from ..errors import UserError
from ..results.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", type=Path, help="a results store")
    p.add_argument("--json", action="store_true", help="print JSON: ratings, intervals, pair scores")
    p.add_argument("--anchor", metavar="NAME[=ELO]", help="fix one agent's rating (default: the mean is 0)")
    p.add_argument("--prior", type=float, help="virtual draws per agent that keep the fit finite (default 1; 0: none)")
    p.add_argument("--bootstrap", type=int, default=0, metavar="N", help="also N bootstrap resamples of whole pairs")


def _records(frame) -> list[dict]:
    """Rows as plain dicts, with a missing or unbounded number as null: strict JSON has no
    NaN or Infinity, and an open bootstrap bound is explained in its row's ``flag``."""
    return [
        {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in rec.items()}
        for rec in frame.to_dict("records")
    ]


def run(args: argparse.Namespace) -> int:
    from ..stats.bootstrap import bootstrap
    from ..stats.rating import fit_counts, pair_scores, pair_scores_counted

    # Counted in SQL (a few rows per pairing, however many matches: memory stays flat);
    # the bootstrap alone reads the results match by match, and only their light columns.
    with Store(args.store, create=False) as store:
        if store.players > 2:
            return run_tables(args, store)
        counts = store.result_counts()
        pair_counts = store.pair_counts()
        rows = store.results() if args.bootstrap > 0 else None
        names = list((store.config or {}).get("agents", []))
        try:
            pairs = pair_scores_counted(counts, pair_counts, names)
        except ValueError:  # a pairing that does not name its seats: read it match by match
            pairs = pair_scores(rows if rows is not None else store.results(), names)
    played = sum(c["count"] for c in counts)
    anchor, anchor_elo, prior = _anchor_and_prior(args, names)
    try:
        ratings = fit_counts(counts, names, prior=prior, anchor=anchor, anchor_elo=anchor_elo)
        boot = None
        if rows:
            boot = bootstrap(rows, names, reps=args.bootstrap, prior=prior, anchor=anchor, anchor_elo=anchor_elo)
    except ValueError as e:  # prior 0 and no maximum (an unbeaten agent, a split pool)
        raise UserError(f"--prior {prior:g}: {e}") from None
    if args.json:
        table = ratings.to_frame()
        out = {
            "store": str(args.store),
            "matches": played,
            "reference": ratings.reference,
            "prior": ratings.prior,
            "ratings": _records(table),
            "pairs": _records(pairs),
        }
        if boot is not None:
            out["bootstrap"] = _records(boot.to_frame())
        print(json.dumps(out, indent=1, default=float, allow_nan=False))
        return 0
    print(f"{args.store}: {played} matches")
    print(ratings.format_table())
    if boot is not None:
        print(f"\nbootstrap over duplicate pairs ({args.bootstrap} rescaled resamples; 95% intervals elo +- 1.96 SE):")
        print(boot.to_frame().to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    return 0


def _anchor_and_prior(args: argparse.Namespace, names: list[str]) -> tuple[str | None, float, float]:
    """``--anchor NAME[=ELO]`` checked against the store's agents, and ``--prior``."""
    from ..stats.rating import DEFAULT_PRIOR

    anchor, anchor_elo = None, 0.0
    if args.anchor:
        anchor, _, value = args.anchor.partition("=")
        if anchor not in names:
            raise UserError(f"--anchor: no agent {anchor!r} in this store (agents: {', '.join(names)})")
        try:
            anchor_elo = float(value) if value else 0.0
        except ValueError:
            raise UserError(f"--anchor: expected NAME or NAME=ELO, got {args.anchor!r}") from None
    prior = DEFAULT_PRIOR if args.prior is None else args.prior
    if prior < 0 or math.isnan(prior):
        raise UserError(f"--prior: must be zero or more, got {args.prior}")
    return anchor, anchor_elo, prior


def run_tables(args: argparse.Namespace, store: Store) -> int:
    """The ratings of a three- or four-handed tournament: each agent's own strength from
    team results (a team is the sum of its members) or from orders of finish
    (Plackett-Luce) (`arena.stats.table_rating`)."""
    from ..stats.table_rating import TableResults, fit_table_counts

    if args.bootstrap > 0:
        raise UserError("--bootstrap: resamples duplicate pairs of two-handed matches; a table's ratings have "
                        "their standard errors from the fit (leave --bootstrap out)")  # fmt: skip
    names = list((store.config or {}).get("agents", []))
    variant = (store.config or {}).get("variant", {}).get("name", "?")
    # read a chunk at a time into integer arrays: flat memory, no SQL sort of every line-up
    counts = TableResults.of_store(store, names)
    played = len(counts.seat)
    anchor, anchor_elo, prior = _anchor_and_prior(args, names)
    try:
        ratings = fit_table_counts(counts, names, prior=prior, anchor=anchor, anchor_elo=anchor_elo)
    except ValueError as e:  # prior 0 and no maximum (an unbeaten agent, a split pool)
        raise UserError(f"--prior {prior:g}: {e}") from None
    if args.json:
        out = {
            "store": str(args.store),
            "variant": variant,
            "matches": played,
            "reference": ratings.reference,
            "prior": ratings.prior,
            "ratings": _records(ratings.to_frame()),
        }
        print(json.dumps(out, indent=1, default=float, allow_nan=False))
        return 0
    print(f"{args.store}: {played} matches of {variant}")
    print(ratings.format_table())
    return 0
