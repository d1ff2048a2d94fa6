"""The report of a three- or four-handed tournament (`arena.report.html.build_report` sends
a store of such a game here): one self-contained HTML page with its PNGs and CSVs, like
the two-handed report, from what `arena.results.table_queries` counts in SQL.

The page opens with the headline (from the team or order-of-finish ratings,
`arena.stats.table_rating.fit_table_counts`), then: the tournament, ratings, standings,
results by seat (the deal starts at the same seat in every match and passes round, so a
seat's turn to deal and to lead falls at the same point of every match), by partner (the
four-handed games) and against each opponent with the likelihood-of-superiority heat
map, win margins and gains per deal in the game's own units (stakes, marks or game
points), the contracts of the bidding games, and faults and latency.

A *side* is what scores: a team (four-handed: seats 0 and 2 against 1 and 3) or a seat
(three-handed). Tables on the page have human headers; the CSVs keep short machine names.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from ..results import table_queries as tq
from ..results.store import Store
from ..stats.margins import Z95
from ..stats.rating import los_matrix, percent
from ..stats.table_rating import TableResults, fit_table_counts
from .html import (
    _fault_table,
    _heat_maps,
    _interval,
    _latency_table,
    _list_matches,
    _margin,
    _ratings_chart,
    _ratings_head,
    _Report,
    _seed_text,
    _shown_latency,
    comparison_section,
    plt,
)

#: Agents that get a chart panel each (the CSVs have every agent).
CHART_AGENTS = 12
#: The bid that is the moon (`arena.game.actions.MOON`): all the tricks, for 5.
MOON = 5


def units(variant: dict[str, Any]) -> str:
    """What the game scores in: stakes (three-handed pagat: each opponent pays the
    winner), marks (the bidding games) or game points."""
    form = variant.get("form")
    if form in ("cutthroat", "bidding"):
        return "marks"
    if form == "pagat" and variant.get("players") == 3:
        return "stakes"
    return "game points"


def _share(k: float, n: float) -> str:
    """``k`` of ``n`` as a percentage ("" when ``n`` is 0)."""
    return percent(k / n) if n else ""


def _mean(total: float, n: float, digits: int = 2) -> str:
    return f"{total / n:+.{digits}f}" if n else ""


def _count_mean_ci(values: np.ndarray, counts: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95% interval of a sample holding each of ``values`` ``counts`` times (as
    `arena.stats.margins.mean_ci` of the sample itself; NaN interval under two values)."""
    n = float(counts.sum())
    if n == 0:
        return math.nan, math.nan, math.nan
    m = float((values * counts).sum() / n)
    if n < 2:
        return m, math.nan, math.nan
    var = float((counts * (values - m) ** 2).sum() / (n - 1))
    half = Z95 * math.sqrt(var) / math.sqrt(n)
    return m, m - half, m + half


# -- frames ----------------------------------------------------------------------------------


def _match_frame(store: Store, players: int) -> pd.DataFrame:
    """The matches (no latencies), a chunk at a time: what the match list, the forfeits
    and the tournament's figures read; a match is known by its schedule place (``id``)."""
    sides = 2 if players == 4 else players
    cols = ["idx", "pairing", "pair_index", "game", *(f"seat{s}" for s in range(players)), "kind", "winner",
            *(f"score{t}" for t in range(sides)), *(f"place{s}" for s in range(players)), "forfeit_seat", "fault",
            "fault_deal", "deals", "adjudicated"]  # fmt: skip
    names: dict[str, str] = {}
    parts = []
    for chunk in store.chunks("matches", cols):
        df = pd.DataFrame.from_records(chunk, columns=cols)
        for c in ("pairing", "kind", "fault", *(f"seat{s}" for s in range(players))):
            df[c] = [x if x is None else names.setdefault(x, x) for x in df[c]]
        parts.append(df)
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)
    return frame.rename(columns={"idx": "id"})


def _by_rank(rows: pd.DataFrame, rank: dict[str, int], other: str) -> pd.DataFrame:
    """Rows of an agent and an ``other`` agent, the agents in rating order, then the others."""
    rows = rows.assign(_k=rows["agent"].map(rank), _o=rows[other].map(rank))
    return rows.sort_values(["_k", "_o"], kind="stable").drop(columns=["_k", "_o"]).reset_index(drop=True)


def _by_agent(seats: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Standings from the per-seat counts: their sums per agent, in ``order``."""
    cols = ["matches", "won", "lost", "no_result", "points", "place_sum", "placed", "forfeits", "margin_sum",
            "margined", "deals"]  # fmt: skip
    g = seats.groupby("agent")[cols].sum().reindex(order).dropna(how="all").reset_index()
    g["score"] = [w / (w + lo) if w + lo else math.nan for w, lo in zip(g["won"], g["lost"], strict=True)]
    return g


def _value_table(counts: pd.DataFrame, value: str, order: list[str]) -> pd.DataFrame:
    """Per agent: how many values were counted, their mean with a 95% interval, and how
    many were above, at and below 0."""
    rows = []
    for agent in order:
        g = counts[counts["agent"] == agent]
        if g.empty:
            continue
        v, c = g[value].to_numpy(dtype=float), g["count"].to_numpy(dtype=float)
        m, lo, hi = _count_mean_ci(v, c)
        rows.append({"agent": agent, "count": int(c.sum()), "mean": m, "ci_low": lo, "ci_high": hi,
                     "above": int(c[v > 0].sum()), "zero": int(c[v == 0].sum()),
                     "below": int(c[v < 0].sum())})  # fmt: skip
    return pd.DataFrame(rows, columns=["agent", "count", "mean", "ci_low", "ci_high", "above", "zero", "below"])


def _units_value(x: float) -> str:
    """A score in the game's units: whole numbers as such, halves and the like to 2 places."""
    return f"{x:g}" if float(x).is_integer() else f"{x:.2f}"


# -- charts ----------------------------------------------------------------------------------


def _count_bars(counts: pd.DataFrame, value: str, agents: list[str], xlabel: str, ylabel: str) -> plt.Figure:
    """A bar chart per agent of how often each value came (``counts``: agent, value, count)."""
    cols = min(3, len(agents))
    rows_n = math.ceil(len(agents) / cols)
    fig, axes = plt.subplots(rows_n, cols, layout="constrained", figsize=(4.4 * cols, 3.2 * rows_n), squeeze=False,
                             sharex=True)  # fmt: skip
    values = counts[value].to_numpy(dtype=float)
    whole = bool(np.all(np.equal(np.mod(values, 1), 0))) if len(values) else True
    width = 0.8 if whole else 0.4
    for ax, agent in zip(axes.flat, agents, strict=False):
        g = counts[counts["agent"] == agent]
        x, c = g[value].to_numpy(dtype=float), g["count"].to_numpy()
        ax.bar(x, c, width=width, color=np.where(x > 0, "#4a7ab5", np.where(x < 0, "#c0504d", "#999")))
        ax.axvline(0, color="#888", lw=0.8)
        ax.set_title(f"{agent} ({int(c.sum()):,})", fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if whole:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.tick_params(labelbottom=True)
    for ax in list(axes.flat)[len(agents) :]:
        ax.axis("off")
    return fig


def _bid_chart(bids: pd.DataFrame, agents: list[str], levels: list[int]) -> plt.Figure:
    """Contracts per agent and level, made (blue) and set (red), stacked."""
    fig, ax = plt.subplots(layout="constrained", figsize=(8, 1.0 + 0.55 * len(agents) * len(levels) / 3))
    y = np.arange(len(agents))[::-1]
    h = 0.8 / len(levels)
    for k, level in enumerate(levels):
        made = np.array([bids[(bids["agent"] == a) & (bids["bid"] == level) & (bids["made"] == 1)]["count"].sum()
                         for a in agents])  # fmt: skip
        lost = np.array([bids[(bids["agent"] == a) & (bids["bid"] == level) & (bids["made"] == 0)]["count"].sum()
                         for a in agents])  # fmt: skip
        at = y + 0.4 - h * (k + 0.5)
        ax.barh(at, made, height=h * 0.9, color="#4a7ab5", label="made" if k == 0 else None)
        ax.barh(at, lost, left=made, height=h * 0.9, color="#c0504d", label="set" if k == 0 else None)
        for yy, total in zip(at, made + lost, strict=True):
            if total:
                ax.text(total, yy, f" {'moon' if level == MOON else f'bid {level}'}", va="center", fontsize=7)
    ax.set_yticks(y, agents)
    ax.set_xlabel("contracts (the highest bid of a deal), by level")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=9)
    return fig


# -- the report -------------------------------------------------------------------------------


def build_table_report(store_path: Path, out: Path, *, title: str | None = None, replays: int | None = None) -> Path:
    """Write ``out/index.html`` (self-contained) and its PNGs and CSVs for a store of a
    three- or four-handed game; returns the HTML path (``replays``: as `build_report`'s)."""
    with Store(store_path, create=False) as store:
        config = store.config or {}
        players = store.players
        matches = _match_frame(store, players)
        counts = TableResults.of_store(store, list(config.get("agents", [])))
        seats = pd.DataFrame(tq.seat_results(store))
        partners = pd.DataFrame(tq.partner_results(store))
        opponents = pd.DataFrame(tq.opponent_results(store))
        margin_counts = pd.DataFrame(tq.margin_counts(store), columns=["agent", "margin", "count"])
        gain_counts = pd.DataFrame(tq.deal_gain_counts(store), columns=["agent", "gain", "count"])
        bids = pd.DataFrame(tq.bid_counts(store), columns=["agent", "bid", "made", "count", "gain"])
        calls = pd.DataFrame(tq.auction_counts(store), columns=["agent", "bid", "count"])
        latency = _latency_table(tq.latency_chunks(store, size=10_000))
        runs = store.runs()
        compare = store.compare_settings()
    out.mkdir(parents=True, exist_ok=True)
    seen = sorted({x for s in range(players) for x in matches[f"seat{s}"].dropna()})
    names = list(config.get("agents", [])) or seen
    names += [x for x in seen if x not in names]  # a merged store's others
    variant = config.get("variant", {})
    unit = units(variant)
    title = title or f"{config.get('format', 'tournament')} of {', '.join(names)}"
    r = _Report(out)
    head: list[str] = []

    # -- the tournament -----------------------------------------------------------------------
    r.h2("The tournament", "tournament")
    tc = config.get("time_control", {})
    forfeits = int(matches["fault"].notna().sum()) if not matches.empty else 0
    adjudicated = int((matches["adjudicated"] == 1).sum()) if not matches.empty else 0
    tables = matches["pairing"].nunique() if not matches.empty else 0
    if players == 4:
        seating = "each deck in the three partnership splits, each team once in seats 0 and 2"
    else:
        seating = f"each deck in every {'order' if config.get('seating') == 'permutations' else 'rotation'}"
    r.p(
        f"{len(matches):,} matches ({int(matches['deals'].sum()) if len(matches) else 0:,} deals, {forfeits:,} "
        f"forfeited, {adjudicated:,} decided by the deal limit) at {tables:,} table{'s' * (tables != 1)} of "
        f"{players}: {config.get('format', '?')}, {config.get('pairs', '?')} deck "
        f"set{'s' * (config.get('pairs') != 1)} per table ({seating}); "
        f"variant {variant.get('name', '?')}, scored in {unit}, {_seed_text(config)}; time control "
        f"{tc.get('move_ms', '?')} ms a move, bank {tc.get('bank_ms', '?')} ms, {tc.get('clock', 'wall')} clock; "
        f"{len(runs)} run{'s' * (len(runs) != 1)}. Store: {store_path}."
    )
    r.p(
        f"A match is played to the target score by the {players} agents of a table; a deal is one hand of it; a "
        "deck set is one deck played in every seating of the set, so the luck of the cards largely cancels. "
        f"A side is what scores: {'a team (seats 0 and 2 against 1 and 3)' if players == 4 else 'a seat'}.",
        "note",
    )
    if not _list_matches(r, head, store_path, matches, out, config, replays):
        path = out / "index.html"
        path.write_text(r.html(title, head))
        return path

    # -- ratings ------------------------------------------------------------------------------
    r.h2("Ratings", "ratings")
    ratings = fit_table_counts(counts, names)
    table = _ratings_head(r, head, ratings)
    model = ratings.reference.partition("; ")[2]
    r.p(
        f"Joint maximum-likelihood ratings on the Elo scale, mean 0. Model: {model}"
        + (": the schedule rotates partners, so each agent's own strength is identified. " if players == 4 else
           ": a match is its order of finish, the first chosen from all, then the next from the rest. ")
        + "95% intervals from the information matrix; a weak prior keeps unbeaten or winless agents finite. "
        "Won: matches its side won (or it finished first); score: the share of its decided matches it won.",
        "note",
    )  # fmt: skip
    r.figure(_ratings_chart(table), "ratings", "ratings with 95% intervals")
    order = list(table["agent"])

    # -- standings ----------------------------------------------------------------------------
    r.h2("Standings", "standings")
    st = _by_agent(seats, order)
    shown = pd.DataFrame({
        "Agent": st["agent"],
        "Matches": st["matches"].map(lambda x: f"{int(x):,}"),
        "Won": st["won"].map(lambda x: f"{int(x):,}"),
        "Lost": st["lost"].map(lambda x: f"{int(x):,}"),
        "No result": st["no_result"].map(lambda x: f"{int(x):,}"),
        "Score": st["score"].map(lambda x: "" if math.isnan(x) else percent(x)),
        **({"Mean place": [f"{s / n:.2f}" if n else "" for s, n in zip(st["place_sum"], st["placed"], strict=True)]}
           if players == 3 else {}),
        f"Side's {unit} (total)": st["points"].map(_units_value),
        f"Mean margin ({unit})": [_mean(s, n) for s, n in zip(st["margin_sum"], st["margined"], strict=True)],
        "Forfeits": st["forfeits"].map(lambda x: str(int(x))),
    })  # fmt: skip
    r.table(st, "standings", shown)
    r.p(
        f"Side's {unit}: the final scores of the agent's side, added up over its matches (they may be negative). "
        "Margin: its side's final score minus the best other side's"
        + (" (the team's lead)" if players == 4 else " (above 0 only when it finished with the highest score)")
        + "; forfeited matches left out.",
        "note",
    )

    # -- seats --------------------------------------------------------------------------------
    r.h2("Results by seat", "seats")
    rank = {a: k for k, a in enumerate(order)}
    bs = seats.assign(_k=seats["agent"].map(rank)).sort_values(["_k", "seat"], kind="stable").drop(columns="_k")
    bs = bs.reset_index(drop=True)
    r.table(bs, "seats", _shown_seats(bs, players, unit, with_agent=True))
    every = seats.groupby("seat")[["matches", "won", "lost", "no_result", "points", "place_sum", "placed",
                                   "margin_sum", "margined", "forfeits", "deals"]].sum().reset_index()  # fmt: skip
    r.table(every, "seat-totals", _shown_seats(every, players, unit, with_agent=False))
    r.p(
        "Each agent in each seat, then all agents together by seat. The deal starts at the same seat in every "
        "match and passes to the left, so a seat's turn to deal and to lead falls at the same point of every match; "
        f"the deck sets give every agent every seat equally often. Mean {unit}: the side's final score.",
        "note",
    )

    # -- partners and opponents ------------------------------------------------------------
    r.h2("Partners and opponents" if players == 4 else "Opponents", "partners")
    if players == 4 and not partners.empty:
        partners = _by_rank(partners, rank, "partner")
        r.table(partners, "partners", pd.DataFrame({
            "Agent": partners["agent"],
            "Partner": partners["partner"],
            "Matches": partners["matches"].map(str),
            "Won": partners["won"].map(str),
            "Share won": [_share(w, m - x) for w, m, x in zip(partners["won"], partners["matches"],
                                                              partners["no_result"], strict=True)],
            f"Mean margin ({unit})": [_mean(s, n) for s, n in zip(partners["margin_sum"], partners["margined"],
                                                                  strict=True)],
        }))  # fmt: skip
        r.p("Each agent's matches with each partner (opposite it): how often their team won, and its mean lead.",
            "note")  # fmt: skip
    score = np.full((len(order), len(order)), np.nan)
    if not opponents.empty:
        opponents = _by_rank(opponents, rank, "opponent")
        decided = opponents["ahead"] + opponents["level"] + opponents["behind"]
        opponents["score"] = [
            (a + lv / 2) / d if d else math.nan
            for a, lv, d in zip(opponents["ahead"], opponents["level"], decided, strict=True)
        ]
        shown = pd.DataFrame({
            "Agent": opponents["agent"],
            "Opponent": opponents["opponent"],
            "Matches": opponents["matches"].map(str),
            "Won": opponents["won"].map(str),
            "Share won": [_share(w, m - x) for w, m, x in zip(opponents["won"], opponents["matches"],
                                                              opponents["no_result"], strict=True)],
        })  # fmt: skip
        if players == 3:
            shown["Finished ahead"] = opponents["ahead"].map(str)
            shown["Same place"] = opponents["level"].map(str)
            shown["Finished behind"] = opponents["behind"].map(str)
        r.table(opponents, "opponents", shown)
        for row in opponents.itertuples(index=False):
            if row.agent in rank and row.opponent in rank:
                score[rank[row.agent], rank[row.opponent]] = row.score
    r.p(
        "Each agent's matches against each opponent"
        + (" (a seat of the other team): how often its team won." if players == 4 else
           ": how often it won the match, and where it finished against that opponent.")
        + " The heat maps: the row agent's score against the column agent (finishing ahead 1, the same place "
        "one half), and the likelihood of superiority: the probability that the row agent's true rating is above "
        "the column agent's, from the ratings and their covariance.",
        "note",
    )  # fmt: skip
    los = los_matrix(ratings)
    idx = [ratings.index(a) for a in order]
    what = "Score: share of matches won against the column" if players == 4 else "Score: finished ahead of the column"
    r.figure(_heat_maps(score, los[np.ix_(idx, idx)], order, what),
             "head-to-head", "score against each opponent and likelihood-of-superiority heat map")  # fmt: skip

    # -- margins and gains per deal ----------------------------------------------------------
    r.h2(f"Win margins and gains per deal ({unit})", "margins")
    charted = order[:CHART_AGENTS]
    mt = _value_table(margin_counts, "margin", order)
    r.table(mt.rename(columns={"count": "matches"}), "margins-by-agent", _shown_values(mt, "Matches", "Mean margin",
                                                                                       "Margin above 0"))  # fmt: skip
    gt = _value_table(gain_counts, "gain", order)
    r.table(gt.rename(columns={"count": "deals"}), "deal-gains", _shown_values(gt, "Deals", "Mean gain",
                                                                               "Gained"))  # fmt: skip
    r.p(
        f"Margin: the agent's side's final score minus the best other side's, in {unit}; forfeited matches left "
        f"out. Gain: what the agent's side's score changed by in a deal, in {unit}"
        + {"marks": ", negative for a set contract", "stakes": ", negative for stakes paid"}.get(unit, "")
        + ("; deals nobody bid in (dealt again) left out" if variant.get("form") in ("cutthroat", "bidding") else "")
        + ("; dealer-sits-out: every deal, the dealer sitting out scoring with the winner (up to 6)"
           if variant.get("form") == "dealer_sits_out" else "")
        + f". 95% intervals. Charts: the {len(charted)} best-rated agents"
        + (f" of {len(order)}; the CSVs have all." if len(order) > len(charted) else "."),
        "note",
    )  # fmt: skip
    if not margin_counts.empty:
        r.figure(
            _count_bars(
                margin_counts,
                "margin",
                [a for a in charted if a in set(margin_counts["agent"])],
                f"side's margin ({unit})",
                "matches",
            ),
            "margins",
            f"win margins per agent in {unit}",
        )
    if not gain_counts.empty:
        r.figure(
            _count_bars(
                gain_counts,
                "gain",
                [a for a in charted if a in set(gain_counts["agent"])],
                f"side's gain in a deal ({unit})",
                "deals",
            ),
            "deal-gains",
            f"gains per deal in {unit}",
        )

    # -- bidding ----------------------------------------------------------------------------
    if variant.get("form") in ("cutthroat", "bidding"):
        r.h2("Bidding", "bidding")
        moon = variant.get("form") == "bidding" and variant.get("moon", "none") != "none"
        levels = list(range(1, 5)) + ([MOON] if moon or (bids["bid"] == MOON).any() else [])
        bt = _bid_table(bids, st, order, levels)
        r.table(bt, "bidding", _shown_bids(bt, levels, unit))
        r.p(
            "Contracts: the deals in which the agent made the highest bid (by level; the moon: all the tricks). "
            "A contract is made when the bidder's side gained in the deal, set when it lost: a set bid scores "
            f"minus the bid{' (the moon: minus 5)' if MOON in levels else ''}. Share of deals: contracts over the "
            "deals the agent was dealt into (every deal of its matches, those nobody bid in included). Mean gain: "
            f"the bidder's side's {unit} in its contracts.",
            "note",
        )
        if not bids.empty:
            r.figure(_bid_chart(bids, [a for a in charted if a in set(bids["agent"])], levels), "bidding",
                     "contracts per agent by level, made and set")  # fmt: skip
        at = _auction_table(calls, order, levels)
        r.table(at, "auction", _shown_auction(at, levels))
        r.p(
            "The auctions: every call the agent made (each seat calls once a deal, from the dealer's left: a bid "
            "higher than the last, or a pass), by level; a bid may be overcalled, so bids outnumber contracts.",
            "note",
        )

    # -- faults and latency -----------------------------------------------------------------
    r.h2("Faults and latency", "faults")
    faults = _fault_table(matches, names)
    r.table(faults, "faults", faults.rename(columns={"agent": "Agent", "forfeits": "Forfeits"}).astype(str))
    r.table(latency, "latency", _shown_latency(latency))
    r.p(
        "Forfeits: matches an agent lost by a fault, by fault code. Latency: wall time from a request to its "
        "answer, per decision, in milliseconds (p50 is the median, p99 the time 99% of decisions stayed under).",
        "note",
    )

    if compare is not None:  # an `arena compare` of a three- or four-handed game: its SPRT on deck sets
        comparison_section(r, matches, compare)

    path = out / "index.html"
    path.write_text(r.html(title, head))
    return path


# -- shown tables ----------------------------------------------------------------------------


def _shown_seats(df: pd.DataFrame, players: int, unit: str, *, with_agent: bool) -> pd.DataFrame:
    out = pd.DataFrame()
    if with_agent:
        out["Agent"] = df["agent"]
    out["Seat"] = df["seat"].map(lambda s: str(int(s)))
    out["Matches"] = df["matches"].map(lambda x: f"{int(x):,}")
    out["Won"] = df["won"].map(lambda x: f"{int(x):,}")
    out["Share won"] = [_share(w, w + lo) for w, lo in zip(df["won"], df["lost"], strict=True)]
    if players == 3:
        out["Mean place"] = [f"{s / n:.2f}" if n else "" for s, n in zip(df["place_sum"], df["placed"], strict=True)]
    out[f"Mean {unit}"] = [_mean(p, m) for p, m in zip(df["points"], df["matches"], strict=True)]
    out[f"Mean margin ({unit})"] = [_mean(s, n) for s, n in zip(df["margin_sum"], df["margined"], strict=True)]
    return out


def _shown_values(df: pd.DataFrame, count: str, mean: str, above: str) -> pd.DataFrame:
    return pd.DataFrame({
        "Agent": df["agent"],
        count: df["count"].map(lambda x: f"{x:,}"),
        mean: df["mean"].map(_margin),
        "95% interval": [_interval(lo, hi, _margin) for lo, hi in zip(df["ci_low"], df["ci_high"], strict=True)],
        above: df["above"].map(str),
        "At 0": df["zero"].map(str),
        "Below 0": df["below"].map(str),
    })  # fmt: skip


def _bid_table(bids: pd.DataFrame, standings: pd.DataFrame, order: list[str], levels: list[int]) -> pd.DataFrame:
    """Per agent: deals dealt into, contracts (by level, made and set), their gains."""
    deals = dict(zip(standings["agent"], standings["deals"], strict=True))
    rows = []
    for agent in order:
        g = bids[bids["agent"] == agent]
        row: dict[str, Any] = {"agent": agent, "deals": int(deals.get(agent, 0)), "contracts": int(g["count"].sum())}
        for level in levels:
            at = g[g["bid"] == level]
            row[f"bid{level}"] = int(at["count"].sum())
            row[f"bid{level}_made"] = int(at[at["made"] == 1]["count"].sum())
        row["made"] = int(g[g["made"] == 1]["count"].sum())
        row["set"] = int(g[g["made"] == 0]["count"].sum())
        row["gain"] = float(g["gain"].sum())
        rows.append(row)
    return pd.DataFrame(rows)


def _shown_bids(bt: pd.DataFrame, levels: list[int], unit: str) -> pd.DataFrame:
    out = pd.DataFrame({
        "Agent": bt["agent"],
        "Deals": bt["deals"].map(lambda x: f"{x:,}"),
        "Contracts": bt["contracts"].map(lambda x: f"{x:,}"),
        "Share of deals": [_share(c, d) for c, d in zip(bt["contracts"], bt["deals"], strict=True)],
    })  # fmt: skip
    for level in levels:
        out["Moon" if level == MOON else f"Bid {level}"] = [
            f"{n} ({m} made)" if n else "0" for n, m in zip(bt[f"bid{level}"], bt[f"bid{level}_made"], strict=True)
        ]
    out["Made"] = bt["made"].map(str)
    out["Set"] = bt["set"].map(str)
    out["Share made"] = [_share(m, c) for m, c in zip(bt["made"], bt["contracts"], strict=True)]
    out[f"Mean gain ({unit})"] = [_mean(g, c) for g, c in zip(bt["gain"], bt["contracts"], strict=True)]
    return out


def _auction_table(calls: pd.DataFrame, order: list[str], levels: list[int]) -> pd.DataFrame:
    """Per agent: its calls in the auctions, passes and bids by level."""
    rows = []
    for agent in order:
        g = calls[calls["agent"] == agent]
        if g.empty:
            continue
        row: dict[str, Any] = {
            "agent": agent,
            "calls": int(g["count"].sum()),
            "passes": int(g[g["bid"] == 0]["count"].sum()),
        }
        for level in levels:
            row[f"bid{level}"] = int(g[g["bid"] == level]["count"].sum())
        rows.append(row)
    return pd.DataFrame(rows, columns=["agent", "calls", "passes", *(f"bid{level}" for level in levels)])


def _shown_auction(at: pd.DataFrame, levels: list[int]) -> pd.DataFrame:
    out = pd.DataFrame({
        "Agent": at["agent"],
        "Calls": at["calls"].map(lambda x: f"{x:,}"),
        "Passes": at["passes"].map(lambda x: f"{x:,}"),
        "Bids": (at["calls"] - at["passes"]).map(lambda x: f"{x:,}"),
        "Share bid": [_share(c - p, c) for c, p in zip(at["calls"], at["passes"], strict=True)],
    })  # fmt: skip
    for level in levels:
        out["Moon" if level == MOON else f"Bid {level}"] = at[f"bid{level}"].map(lambda x: f"{x:,}")
    return out
