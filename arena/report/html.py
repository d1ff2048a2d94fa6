"""``arena report``: one self-contained HTML file, plus its PNGs and CSVs, from a store.

Reads only the store. Charts are drawn with matplotlib's Agg backend at 200 dpi (sharp
on high-density screens, shown at half their pixel size) and inlined into the HTML as
data URIs (no network, no scripts); every table is also written as a CSV next to it.
It reads what it shows, not every column: results and deals are counted in SQL, the
matches without their latencies, the latencies a chunk at a time; so a store of a
million matches takes seconds and a few hundred MB.

The page opens with the headline (who is best, by how much over the runner-up, with its
95% interval, and the ranking), then: the tournament, ratings with 95% intervals (table
and chart), the head-to-head score matrix and the likelihood-of-superiority heat map, win
margins per pairing (histograms of the 12 closest pairings at most; the tables and CSVs
have every pairing), game points per deal, faults and latency percentiles per agent, and
for a comparison (``arena compare``) its verdict in the command's words
(`arena.tournament.compare.Comparison`, so the two agree), its figures and the SPRT's log-likelihood
ratio against its bounds.

Words are used one way throughout: a *match* is played to the target score between two
agents, a *deal* is one hand of it, a *duplicate pair* two matches on the same decks with
seats swapped. Tables on the page have human headers; the CSVs keep short machine names.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator, PercentFormatter  # noqa: E402

from ..results.store import Store, unpack_ms  # noqa: E402
from ..stats import margins  # noqa: E402
from ..stats.rating import Ratings, fit_counts, los_matrix, percent  # noqa: E402

DPI = 200  # PNGs are shown at half their pixel size: 2x for high-density screens
CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.3em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
.headline { font-size: 1.2em; margin: 0.4em 0; } .ranking { font-size: 1.05em; margin: 0.2em 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
.table-ratings td:last-child, .table-ratings th:last-child, .table-margins-by-pairing td:nth-child(2),
.table-margins-by-pairing th:nth-child(2), .table-pair-margins td:nth-child(2),
.table-pair-margins th:nth-child(2) { text-align: left; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0; }
.note { color: #555; font-size: 0.9em; }
"""


# -- formatting -------------------------------------------------------------------------------


def _elo(x: float) -> str:
    """A rating or difference, signed, to the Elo point."""
    return "-" if x is None or math.isnan(x) else "0" if round(x) == 0 else f"{x:+.0f}"


def _interval(lo: float, hi: float, fmt=_elo) -> str:
    return "" if math.isnan(lo) or math.isnan(hi) else f"[{fmt(lo)}, {fmt(hi)}]"


def _num(x: float, digits: int = 1) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.{digits}f}"


def _margin(x: float) -> str:
    return "" if x is None or math.isnan(x) else f"{x:+.2f}"


class _Report:
    def __init__(self, out: Path):
        self.out = out
        self.parts: list[str] = []
        self.files: list[Path] = []

    def h2(self, title: str, anchor: str) -> None:
        self.parts.append(f'<h2 id="{anchor}">{html.escape(title)}</h2>')

    def p(self, text: str, cls: str = "") -> None:
        self.parts.append(f'<p class="{cls}">{html.escape(text)}</p>' if cls else f"<p>{html.escape(text)}</p>")

    def table(self, df: pd.DataFrame, name: str, shown: pd.DataFrame | None = None) -> None:
        """Write ``df`` as ``name.csv`` and show ``shown`` (text cells, human headers) on the page."""
        path = self.out / f"{name}.csv"
        df.to_csv(path, index=False)
        self.files.append(path)
        shown = df if shown is None else shown
        self.parts.append(shown.to_html(index=False, border=0, classes=f"table-{name}", escape=True, na_rep=""))

    def figure(self, fig: plt.Figure, name: str, alt: str) -> None:
        path = self.out / f"{name}.png"
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
        plt.close(fig)
        data = buf.getvalue()
        path.write_bytes(data)
        self.files.append(path)
        width = int.from_bytes(data[16:20], "big") * 100 // DPI  # the PNG's IHDR width, at 100 px an inch
        uri = "data:image/png;base64," + base64.b64encode(data).decode()
        self.parts.append(f'<img src="{uri}" width="{width}" alt="{html.escape(alt)}" data-name="{name}">')

    def html(self, title: str, head: list[str]) -> str:
        return (
            f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{CSS}</style></head><body>\n<h1>{html.escape(title)}</h1>\n"
            + "\n".join(head + self.parts)
            + "\n</body></html>\n"
        )


# -- the headline ----------------------------------------------------------------------------


def headline(ratings: Ratings) -> tuple[str, str]:
    """The report's first lines: who is best and by how much over the runner-up, with the
    95% interval of the difference and the likelihood of superiority; then the ranking,
    ``>`` between neighbours whose difference is clear at 95%, ``≈`` where it is not."""
    table = ratings.to_frame()
    played = table[table["games"] > 0]
    if len(played) < 2:
        return "Not enough results to rank the agents yet.", ""
    best, second = played["agent"].iloc[0], played["agent"].iloc[1]
    d, _, lo, hi = ratings.diff(best, second)
    los = los_matrix(ratings)[ratings.index(best), ratings.index(second)]
    chance = f"likelihood of superiority {percent(los, exact_ends=False)}"
    if lo > 0:
        first = f"{best} is best, {_elo(d)} Elo {_interval(lo, hi)} over {second} ({chance})."
    else:
        first = (f"{best} leads {second} by {_elo(d)} Elo {_interval(lo, hi)}, not yet separated: the 95% interval "
                 f"includes 0 ({chance}).")  # fmt: skip
    row = played.iloc[0]
    if row["losses"] == 0:
        first += f" {best} won all its {row['games']} matches: the top of its interval rests on the prior."
    names = list(played["agent"])
    ranking = names[0]
    for a, b in zip(names, names[1:], strict=False):
        ranking += (" > " if ratings.better(a, b) else " ≈ ") + b
    return first, f"Ranking: {ranking}  (> clear at 95%, ≈ not yet)."


# -- tables ----------------------------------------------------------------------------------


def _latency_table(chunks: Iterable[list[tuple[Any, ...]]]) -> pd.DataFrame:
    """Latency percentiles per agent from the stored latencies (`Store.latency_chunks`:
    rows of each seat's agent, then the match's latencies, a list per seat; any number of
    seats: `arena.results.table_queries.latency_chunks`), read a chunk at a time. Each
    agent's are kept as counts of whole microseconds (what the referee measures), so memory
    grows with the spread of the latencies, not with the decisions; the percentiles are
    numpy's (linear), from the counts."""
    seen: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for chunk in chunks:
        gathered: dict[str, list[float]] = {}
        for *seats, value in chunk:
            lat = unpack_ms(value) or [[] for _ in seats]
            for agent, xs in zip(seats, lat, strict=False):
                if agent is not None:
                    gathered.setdefault(agent, []).extend(xs)
        for agent, xs in gathered.items():
            us = np.rint(np.asarray(xs, dtype=float) * 1000).astype(np.int64)
            old_us, old_n = seen.get(agent, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
            values, where = np.unique(np.concatenate([old_us, us]), return_inverse=True)
            weights = np.concatenate([old_n, np.ones(len(us), np.int64)])
            seen[agent] = values, np.bincount(where, weights=weights, minlength=len(values)).astype(np.int64)
    rows = []
    for agent, (us, n) in sorted(seen.items()):
        ms = us / 1000  # the very floats the referee recorded
        total = int(n.sum())
        q = [_percentile(ms, n, total, p) for p in (50, 90, 99)] if total else [math.nan] * 3
        rows.append({"agent": agent, "decisions": total, "p50_ms": q[0], "p90_ms": q[1], "p99_ms": q[2],
                     "max_ms": float(ms[-1]) if total else math.nan})  # fmt: skip
    return pd.DataFrame(rows)


def _percentile(values: np.ndarray, counts: np.ndarray, total: int, p: float) -> float:
    """``np.percentile`` (linear) of the sample holding each of the sorted ``values``
    ``counts`` times (``total`` in all)."""
    h = (total - 1) * p / 100
    k = math.floor(h)
    ends = np.cumsum(counts)  # the sample's rank k holds values[the first i with ends[i] > k]
    lo = values[np.searchsorted(ends, k, side="right")]
    hi = values[np.searchsorted(ends, min(k + 1, total - 1), side="right")]
    return float(lo + (hi - lo) * (h - k))


def _fault_table(matches: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    faulted = matches[matches["fault"].notna()].copy()
    if faulted.empty:
        return pd.DataFrame({"agent": names, "forfeits": 0})
    faulted["agent"] = faulted["seat1"]  # the seat that forfeited: seat 1 unless another is named
    for s in (0, 2, 3):
        if f"seat{s}" in faulted:
            faulted.loc[faulted["forfeit_seat"] == s, "agent"] = faulted[f"seat{s}"]
    t = faulted.pivot_table(index="agent", columns="fault", values="id", aggfunc="count", fill_value=0)
    t["forfeits"] = t.sum(axis=1)
    t = t.reindex(names, fill_value=0).reset_index().rename(columns={"index": "agent"})
    t.columns.name = None
    return t


def _ladder_tables(store_path: Path) -> tuple[list[dict], dict[str, str], list[dict]]:
    """A ladder store's rating history, entry statuses and entries; empty for others."""
    from ..ladder.store import LadderStore
    from ..results.store import StoreError

    try:
        with LadderStore(store_path) as ls:
            entries = ls.entries()
            cols = ("key", "version", "language", "content_hash", "submitted", "status")
            return ls.history(), {e["key"]: e["status"] for e in entries}, [{k: e[k] for k in cols} for e in entries]
    except StoreError:
        return [], {}, []


def _seed_text(config: dict) -> str:
    """How the deals were seeded, never the secret itself: an explicit seed may be shown."""
    seed = config.get("seed", "?")
    if config.get("format") == "ladder":
        return "secret seed (kept in the store)" + (f" mixed with seed {seed}" if isinstance(seed, int) else "")
    if seed == "secret":
        return "secret seed (kept in the store)"
    return f"seed {seed}"


def _shown_ratings(table: pd.DataFrame) -> pd.DataFrame:
    """The ratings table (`Ratings.to_frame`) with human headers and text cells."""
    return pd.DataFrame({
        "Agent": table["agent"],
        "Elo": table["elo"].map(_elo),
        "95% interval": [_interval(lo, hi) for lo, hi in zip(table["ci_low"], table["ci_high"], strict=True)],
        "Standard error": table["se"].map(lambda x: _num(x, 0)),
        "Matches": table["games"].map(str),
        "Won": table["wins"].map(str),
        "Lost": table["losses"].map(str),
        "Score": table["score"].map(percent),
        "Note": table["flag"],
    })  # fmt: skip


def _shown_latency(latency: pd.DataFrame) -> pd.DataFrame:
    """The latency table (`_latency_table`) with human headers and text cells."""
    return pd.DataFrame({
        "Agent": latency["agent"],
        "Decisions": latency["decisions"].map(lambda n: f"{n:,}"),
        **{f"{q} (ms)": latency[f"{q}_ms"].map(lambda x: _num(x, 2)) for q in ("p50", "p90", "p99")},
        "Max (ms)": latency["max_ms"].map(lambda x: _num(x, 2)),
    })  # fmt: skip


def _shown_margins(df: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame()
    if "pairing" in df:
        out["Pairing"] = df["pairing"].str.replace("~", " vs ")
    out["Agent"] = df["agent"]
    out["Matches"] = df["matches"].map(str)
    out["Mean margin"] = df["mean_margin"].map(_margin)
    out["95% interval"] = [_interval(lo, hi, _margin) for lo, hi in zip(df["ci_low"], df["ci_high"], strict=True)]
    out["Mean margin in matches won"] = df["mean_margin_won"].map(_margin)
    return out


def _shown_pair_margins(df: pd.DataFrame) -> pd.DataFrame:
    """One row per pairing, from the side ahead (the other side's row is its mirror)."""
    ahead = df.sort_values("mean_pair_margin", ascending=False, kind="stable").drop_duplicates("pairing")
    ahead = ahead.sort_values("pairing", kind="stable")
    return pd.DataFrame({
        "Pairing": ahead["pairing"].str.replace("~", " vs "),
        "Agent ahead": ahead["agent"],
        "Pairs": ahead["pairs"].map(str),
        "Mean pair margin": ahead["mean_pair_margin"].map(_margin),
        "95% interval": [_interval(lo, hi, _margin) for lo, hi in zip(ahead["ci_low"], ahead["ci_high"], strict=True)],
        "Pairs won (2-0)": ahead["pairs_won"].map(str),
        "Pairs split (1-1)": ahead["pairs_split"].map(str),
        "Pairs lost (0-2)": ahead["pairs_lost"].map(str),
    })  # fmt: skip


# -- charts ----------------------------------------------------------------------------------


def _text_colour(rgba: tuple[float, ...]) -> str:
    """Black or white, whichever reads better on a cell of this colour (WCAG relative
    luminance of the sRGB colour against the 0.179 crossover)."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]]
    lum = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    return "black" if lum > 0.179 else "white"


#: Agents up to which the heat maps write each cell's value (beyond, colour only: the
#: score-matrix CSV has the figures); and the largest side of a heat map, in inches.
HEAT_TEXT_AGENTS = 16
HEAT_MAX_SIDE = 14.0
#: Pairings that get a margin histogram: the closest ones (the CSVs have them all).
HISTOGRAM_PAIRINGS = 12


def _heat_maps(score: np.ndarray, los: np.ndarray, names: list[str],
               score_title: str = "Score: share of matches won") -> plt.Figure:  # fmt: skip
    n = len(names)
    side = min(1.3 + 0.75 * n, HEAT_MAX_SIDE)
    small = n > HEAT_TEXT_AGENTS  # many agents: no cell text, small tick labels
    fig, axes = plt.subplots(1, 2, layout="constrained", figsize=(2 * side + 1.0, side))
    cmap = plt.get_cmap("RdYlGn").copy()
    cmap.set_bad("#e8e8e8")
    panels = ((axes[0], score, score_title, True),
              (axes[1], los, "Likelihood of superiority", False))  # fmt: skip
    for ax, data, title, exact in panels:
        data = data.astype(float).copy()
        np.fill_diagonal(data, np.nan)
        im = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=0, vmax=1)
        ax.set_xticks(range(n), names, rotation=90 if small else 30, ha="center" if small else "right",
                      fontsize=max(3, min(10, 600 // max(n, 1))) if small else None)  # fmt: skip
        ax.set_yticks(range(n), names, fontsize=max(3, min(10, 600 // max(n, 1))) if small else None)
        ax.set_xlabel("opponent (column)")
        if exact:  # the left panel only: both share the rows
            ax.set_ylabel("agent (row)")
        ax.set_title(title, fontsize=11)
        for i in range(n if not small else 0):
            for j in range(n):
                if i != j and not np.isnan(data[i, j]):
                    ax.text(j, i, percent(data[i, j], exact_ends=exact), ha="center", va="center", fontsize=10,
                            color=_text_colour(cmap(im.norm(data[i, j]))))  # fmt: skip
    bar = fig.colorbar(im, ax=list(axes), fraction=0.03, pad=0.02, format=PercentFormatter(1.0))
    bar.set_label("row agent's share / probability")
    return fig


def _margin_histograms(sides: pd.DataFrame, pairings: list[str]) -> plt.Figure:
    cols = min(3, len(pairings))
    rows_n = math.ceil(len(pairings) / cols)
    fig, axes = plt.subplots(rows_n, cols, layout="constrained", figsize=(4.4 * cols, 3.2 * rows_n), squeeze=False)
    reach = max(7, int(sides["margin"].abs().max()) if len(sides) else 7)
    for ax, pairing in zip(axes.flat, pairings, strict=False):
        a, b = pairing.split("~")
        xs = sides[(sides["pairing"] == pairing) & (sides["agent"] == a)]["margin"]
        ax.hist(xs, bins=np.arange(-reach - 0.5, reach + 1.5, 1), color="#4a7ab5")
        ax.axvline(0, color="#888", lw=0.8)
        ax.set_title(f"{a} vs {b} ({len(xs)} matches)", fontsize=10)
        ax.set_xlabel(f"{a}'s margin (game points)")
        ax.set_ylabel("matches")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in list(axes.flat)[len(pairings) :]:
        ax.axis("off")
    return fig


def _deal_points_chart(dp: pd.DataFrame) -> plt.Figure:
    fig, ax = plt.subplots(layout="constrained", figsize=(8, 1.0 + 0.45 * len(dp)))
    order = dp.iloc[::-1]  # the first agent on top
    left = np.zeros(len(order))
    for k, color in ((1, "#9ecae1"), (2, "#4292c6"), (3, "#08519c")):
        share = order[f"share_{k}"].fillna(0).to_numpy()
        ax.barh(order["agent"], share, left=left, color=color, label=f"worth {k} game point{'s' * (k > 1)}")
        for y, (x0, w) in enumerate(zip(left, share, strict=True)):
            if w >= 0.08:
                ax.text(x0 + w / 2, y, f"{w:.0%}", ha="center", va="center", fontsize=9,
                        color=_text_colour(plt.matplotlib.colors.to_rgba(color)))  # fmt: skip
        left += share
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("share of the deals the agent won")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False, fontsize=9)
    return fig


def _ratings_chart(table: pd.DataFrame) -> plt.Figure:
    fig, ax = plt.subplots(layout="constrained", figsize=(8, 0.8 + 0.5 * len(table)))
    order = table.iloc[::-1]
    ax.errorbar(order["elo"], order["agent"], xerr=[order["elo"] - order["ci_low"], order["ci_high"] - order["elo"]],
                fmt="o", capsize=4, color="#2b5d9b")  # fmt: skip
    for y, r in enumerate(order.itertuples(index=False)):
        ax.annotate(f"{_elo(r.elo)} {_interval(r.ci_low, r.ci_high)}", (r.elo, y), xytext=(0, 7),
                    textcoords="offset points", ha="center", fontsize=8, color="#333")  # fmt: skip
    ax.axvline(0, color="#aaa", lw=0.8)
    ax.set_ylim(-0.6, len(order) - 0.3)
    ax.set_xlabel("Elo (mean 0), with its 95% interval")
    return fig


def _closest_pairings(sides: pd.DataFrame, k: int) -> list[str]:
    """The ``k`` pairings whose mean match margin is nearest 0 (most matches first among
    equals, then by name), in name order."""
    first = sides[sides["agent"] == sides["pairing"].str.partition("~")[0]]
    g = first.groupby("pairing")["margin"].agg(["mean", "size"])
    g["closeness"] = g["mean"].abs()
    g = g.reset_index().sort_values(["closeness", "size", "pairing"], ascending=[True, False, True], kind="stable")
    return sorted(g["pairing"].head(k))


# -- the report -------------------------------------------------------------------------------

#: The columns of ``matches`` the report reads: everything but the per-decision latencies
#: and CPU times (most of a row; `_latency_table` reads the latencies apart) and the words;
#: a match is known by its place in the schedule (``idx``, as ``id``) rather than its id text.
_COLUMNS = ("idx", "pairing", "pair_index", "game", "seat0", "seat1", "winner", "score0", "score1", "margin",
            "forfeit_seat", "fault", "fault_deal", "deals")  # fmt: skip


def _match_frame(store: Store) -> pd.DataFrame:
    """The matches the report reads (`_COLUMNS`), a chunk at a time; names and fault
    codes repeat, so each is kept once."""
    names: dict[str, str] = {}
    parts = []
    for chunk in store.chunks("matches", _COLUMNS):
        df = pd.DataFrame.from_records(chunk, columns=list(_COLUMNS))
        for c in ("pairing", "seat0", "seat1", "fault"):
            df[c] = [x if x is None else names.setdefault(x, x) for x in df[c]]
        parts.append(df)
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(_COLUMNS))
    return frame.rename(columns={"idx": "id"})


def _list_matches(
    r: _Report, head: list[str], store_path: Path, matches: pd.DataFrame, out: Path, config: dict,
    replays: int | None,
) -> bool:
    """The capped match list (`arena.report.replays.match_list`) linked from the report;
    False, with the headline saying so, when no match is stored yet."""
    from .replays import REPORT_REPLAYS, match_list

    link = match_list(store_path, matches, out, config, REPORT_REPLAYS if replays is None else replays)
    if link:
        r.parts.append(link)
    if matches.empty:
        head.append('<p class="headline">No matches are stored yet.</p>')
        return False
    return True


def _ratings_head(r: _Report, head: list[str], ratings: Ratings) -> pd.DataFrame:
    """The headline and ranking from ``ratings``, and their table; returns the table's frame."""
    first, ranking = headline(ratings)
    head.append(f'<p class="headline">{html.escape(first)}</p>')
    if ranking:
        head.append(f'<p class="ranking">{html.escape(ranking)}</p>')
    table = ratings.to_frame()
    r.table(table.rename(columns={"games": "matches"}), "ratings", _shown_ratings(table))
    return table


def build_report(store_path: Path, out: Path, *, title: str | None = None, replays: int | None = None) -> Path:
    """Write ``out/index.html`` (self-contained) and its PNGs and CSVs; returns the HTML path.
    ``replays``: how many matches get a replay page, listed on ``matches.html`` and linked
    from the report (default `arena.report.replays.REPORT_REPLAYS`; 0: none). A store of a
    three- or four-handed game gets its own report (`arena.report.tables`)."""
    with Store(store_path, create=False) as store:
        players = store.players
    if players > 2:
        from .tables import build_table_report

        return build_table_report(store_path, out, title=title, replays=replays)
    with Store(store_path, create=False) as store:
        config = store.config or {}
        matches = _match_frame(store)
        results = store.result_counts()
        deal_counts = store.deal_counts()
        latency = _latency_table(store.latency_chunks(size=10_000))
        runs = store.runs()
        compare = store.compare_settings()
    n_deals = sum(c["count"] for c in deal_counts)
    history, status, entries = _ladder_tables(store_path)
    out.mkdir(parents=True, exist_ok=True)
    names = list(config.get("agents", [])) or sorted(set(matches.get("seat0", [])) | set(matches.get("seat1", [])))
    title = title or f"{config.get('format', 'tournament')} of {', '.join(names)}"
    r = _Report(out)
    head: list[str] = []

    r.h2("The ladder" if config.get("format") == "ladder" else "The tournament", "tournament")
    v = config.get("variant", {})
    tc = config.get("time_control", {})
    forfeits = int(matches["fault"].notna().sum()) if not matches.empty else 0
    how = (
        f"a ladder of {len(entries)} entries ({sum(e['status'] == 'active' for e in entries)} active), pairs "
        "scheduled by uncertainty"
        if config.get("format") == "ladder"
        else f"{config.get('format', '?')}, {config.get('pairs', '?')} duplicate pairs per pairing"
    )
    r.p(
        f"{len(matches):,} matches ({n_deals:,} deals, {forfeits:,} matches forfeited) of {how}, "
        f"variant {v.get('name', '?')}, {_seed_text(config)}; "
        f"time control {tc.get('move_ms', '?')} ms a move, bank {tc.get('bank_ms', '?')} "
        f"ms, {tc.get('clock', 'wall')} clock; {len(runs)} run{'s' * (len(runs) != 1)}. Store: {store_path}."
    )
    r.p(
        "A match is played to the target score; a deal is one hand of it; a duplicate pair is two matches on the "
        "same decks with the seats swapped.",
        "note",
    )
    if not _list_matches(r, head, store_path, matches, out, config, replays):
        path = out / "index.html"
        path.write_text(r.html(title, head))
        return path

    # -- ratings ------------------------------------------------------------------------------
    r.h2("Ratings", "ratings")
    ratings = fit_counts(results, names)
    table = _ratings_head(r, head, ratings)
    r.p(
        "Joint maximum-likelihood Bradley-Terry ratings on the Elo scale, mean 0, with 95% intervals from the "
        "information matrix; a weak prior keeps unbeaten or winless agents finite. Score: the share of its "
        "decided matches an agent won.",
        "note",
    )
    r.figure(_ratings_chart(table), "ratings", "ratings with 95% intervals")

    # -- a ladder's rating history -----------------------------------------------------------
    if history:
        from ..ladder.rounds import history_figure

        r.h2("Rating history", "history")
        r.p(
            "Each agent's rating after each scheduling round, with a band of one standard error; retired agents "
            "dashed. Ratings are refitted to all matches after every round, so earlier points move too.",
            "note",
        )
        r.figure(history_figure(history, status, "Ratings over the rounds"), "history", "ratings over the rounds")
        r.table(pd.DataFrame(entries), "entries")

    # -- head to head ------------------------------------------------------------------------
    r.h2("Head to head", "head-to-head")
    sides = margins.match_sides(matches.assign(fault=None))  # forfeits count as results here
    score = sides.pivot_table(index="agent", columns="opponent", values="won", aggfunc="mean").reindex(
        index=names, columns=names
    )
    counts = sides.pivot_table(index="agent", columns="opponent", values="won", aggfunc="size").reindex(
        index=names, columns=names
    )
    del sides  # two rows a match: not kept while the margins are worked out
    csv = (100 * score).rename_axis(index="agent", columns=None).reset_index()
    shown = pd.DataFrame({"Row vs column": names})
    for c in names:
        shown[c] = [
            "" if a == c or pd.isna(score.loc[a, c]) else f"{percent(score.loc[a, c])} of {int(counts.loc[a, c])}"
            for a in names
        ]
    r.table(csv, "score-matrix", shown)
    r.p("Share of their matches the row agent won against the column agent (forfeits count), in percent.", "note")
    los = los_matrix(ratings)
    r.figure(_heat_maps(score.to_numpy(dtype=float), los, names), "head-to-head",
             "score matrix and likelihood-of-superiority heat map")  # fmt: skip
    r.p(
        "Likelihood of superiority: the probability that the row agent's true rating is above the column "
        "agent's, from the ratings and their covariance; it is never shown as certain.",
        "note",
    )

    # -- margins -----------------------------------------------------------------------------
    r.h2("Win margins", "margins")
    by_agent = margins.margin_summary(matches)
    r.table(by_agent, "margins-by-agent", _shown_margins(by_agent))
    by_pairing = margins.margin_summary(matches, by="pairing")
    r.table(by_pairing, "margins-by-pairing", _shown_margins(by_pairing))
    pair_margins = margins.pair_margin_summary(matches)
    r.table(pair_margins, "pair-margins", _shown_pair_margins(pair_margins))
    r.p(
        "Match margin: an agent's final game points minus its opponent's. Pair margin: the sum over the two "
        "matches of a duplicate pair, where the luck of the cards largely cancels; shown from the side ahead "
        "(the other side's is its negative; the CSV has both). 95% intervals; forfeited matches left out.",
        "note",
    )
    sides_played = margins.match_sides(matches)
    pairings = sorted(sides_played["pairing"].unique())
    if len(pairings) > HISTOGRAM_PAIRINGS:
        pairings = _closest_pairings(sides_played, HISTOGRAM_PAIRINGS)
        r.p(
            f"Histograms of the {HISTOGRAM_PAIRINGS} closest pairings (mean match margin nearest 0, the most played "
            f"first among equals) of {sides_played['pairing'].nunique():,}; the CSVs above have every pairing.",
            "note",
        )
    if pairings:
        r.figure(_margin_histograms(sides_played, pairings), "margins", "win-margin histograms per pairing")

    # -- game points per deal -------------------------------------------------------------------
    r.h2("Game points per deal", "deal-points")
    dp = margins.deal_points_counted(deal_counts)
    dp = dp.set_index("agent").reindex([a for a in table["agent"] if a in set(dp["agent"])]).reset_index()
    shown = pd.DataFrame({"Agent": dp["agent"], "Deals won": dp["deals_won"].map(str)})
    for k in (1, 2, 3):
        shown[f"Worth {k}"] = [f"{n} ({percent(s)})" if n else "0" for n, s in zip(dp[f"won_{k}"], dp[f"share_{k}"],
                                                                                   strict=True)]  # fmt: skip
    r.table(dp, "deal-points", shown)
    r.p(
        "The deals each agent won, by what they were worth: 1 game point, 2 (mostly Schneider: the loser had "
        "under 33 card points) or 3 (mostly Schwarz: the loser took no trick); a failed close or a false claim "
        "also gives 2 or 3. In brackets: the share of the agent's won deals.",
        "note",
    )
    if len(dp):
        r.figure(_deal_points_chart(dp), "deal-points", "game points per deal won, per agent")

    # -- faults and latency ---------------------------------------------------------------------
    r.h2("Faults and latency", "faults")
    faults = _fault_table(matches, names)
    r.table(faults, "faults", faults.rename(columns={"agent": "Agent", "forfeits": "Forfeits"}).astype(str))
    r.table(latency, "latency", _shown_latency(latency))
    r.p(
        "Forfeits: matches an agent lost by a fault, by fault code. Latency: wall time from a request to its "
        "answer, per decision, in milliseconds (p50 is the median, p99 the time 99% of decisions stayed under).",
        "note",
    )

    # -- comparison -------------------------------------------------------------------------------
    if compare is not None:
        comparison_section(r, matches, compare)

    path = out / "index.html"
    path.write_text(r.html(title, head))
    return path


def comparison_section(r: _Report, matches: pd.DataFrame, compare: dict) -> None:
    """The report's section on an ``arena compare`` store: its verdict in the command's
    words (`arena.tournament.compare`), the figures, the LLR's path against its bounds.
    Its unit is the duplicate pair, or at a table the deck set."""
    from ..stats.sprt import estimate_text
    from ..tournament.compare import sprt_from_matches

    r.h2("Comparison (SPRT)", "sprt")
    comparison = sprt_from_matches(matches, compare)
    test = comparison.test
    sets = comparison.unit == "deck sets"
    unit, units_ = ("Deck set", "Deck sets") if sets else ("Pair", "Pairs")
    r.p(comparison.describe())
    row = comparison.summary()
    r.table(pd.DataFrame([row]), "sprt", pd.DataFrame([{
        units_: f"{row['pairs']:,}",
        f"Void {units_.lower()}": f"{row['void']:,}",
        ("NEW behind / even / ahead" if sets else "Lost both / split / won both"):
            f"{row['losses']} / {row['halves']} / {row['wins']}",
        "LLR": f"{row['llr']:.2f}",
        "Bounds": f"[{row['lower']:.2f}, {row['upper']:.2f}]",
        "Status": row["status"],
        "Estimate (95% interval)": estimate_text(test.estimate(), comparison.model),
    }]))  # fmt: skip
    r.p(
        f"The test reads complete {units_.lower()} in order; a void {unit.lower()} (a match of it lost before "
        "play: an agent could not be started) is left out of it. "
        + ("A deck set is one deck played by NEW and by OLD in every seat, the reference agent in the others; "
           "its score is the mean of NEW's result less OLD's, seat by seat. " if sets else "")
        + "H1 accepted means the results favour a gain of elo1 over one of elo0, at an error rate of at most about "
        "alpha; H0 the reverse, with beta. The CSV has every figure.",
        "note",
    )  # fmt: skip
    fig, ax = plt.subplots(layout="constrained", figsize=(8, 3.5))
    ax.plot(range(1, len(test.llr_path) + 1), test.llr_path, color="#333", label="log-likelihood ratio")
    lo, hi = test.bounds
    ax.axhline(lo, color="#c33", ls="--", label=f"accept H0 ({lo:.2f})")
    ax.axhline(hi, color="#393", ls="--", label=f"accept H1 ({hi:.2f})")
    ax.set_xlabel("deck sets" if sets else "duplicate pairs")
    ax.set_ylabel("log-likelihood ratio")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9)
    r.figure(fig, "sprt", "SPRT log-likelihood ratio against its bounds")
