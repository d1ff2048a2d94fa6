"""``arena report``: one self-contained HTML file, plus its PNGs and CSVs, from a store.

Reads only the store. Charts are drawn with matplotlib's Agg backend and inlined into
the HTML as data URIs (no network, no scripts); every table is also written as a CSV
next to it. Sections: the tournament, ratings with 95% intervals (table and chart), the
head-to-head score matrix and the likelihood-of-superiority heat map, win margins per
pairing, game points per deal, faults and latency percentiles per agent, and for a
comparison (``arena compare``) the SPRT's log-likelihood ratio against its bounds.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import margins  # noqa: E402
from .rating import fit, los_matrix  # noqa: E402
from .store import Store  # noqa: E402

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; display: block; margin: 0.5em 0; }
.note { color: #666; font-size: 0.9em; }
"""


class _Report:
    def __init__(self, out: Path):
        self.out = out
        self.parts: list[str] = []
        self.files: list[Path] = []

    def h2(self, title: str, anchor: str) -> None:
        self.parts.append(f'<h2 id="{anchor}">{html.escape(title)}</h2>')

    def p(self, text: str, cls: str = "") -> None:
        self.parts.append(f'<p class="{cls}">{html.escape(text)}</p>' if cls else f"<p>{html.escape(text)}</p>")

    def table(self, df: pd.DataFrame, name: str, *, index: bool = False, floats: str = "{:.1f}") -> None:
        path = self.out / f"{name}.csv"
        df.to_csv(path, index=index)
        self.files.append(path)
        shown = df.copy()
        for c in shown.columns:
            if pd.api.types.is_float_dtype(shown[c]):
                shown[c] = shown[c].map(lambda x: "" if pd.isna(x) else floats.format(x))
        self.parts.append(shown.to_html(index=index, border=0, classes=f"table-{name}", escape=True))

    def figure(self, fig: plt.Figure, name: str, alt: str) -> None:
        path = self.out / f"{name}.png"
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
        plt.close(fig)
        data = buf.getvalue()
        path.write_bytes(data)
        self.files.append(path)
        uri = "data:image/png;base64," + base64.b64encode(data).decode()
        self.parts.append(f'<img src="{uri}" alt="{html.escape(alt)}" data-name="{name}">')

    def html(self, title: str) -> str:
        return (
            f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{CSS}</style></head><body>\n<h1>{html.escape(title)}</h1>\n"
            + "\n".join(self.parts)
            + "\n</body></html>\n"
        )


def _latency_table(matches: pd.DataFrame) -> pd.DataFrame:
    per_agent: dict[str, list[float]] = {}
    for _, m in matches.iterrows():
        lat = json.loads(m["latencies"]) if m["latencies"] else [[], []]
        for seat in (0, 1):
            per_agent.setdefault(m[f"seat{seat}"], []).extend(lat[seat])
    rows = []
    for agent, xs in sorted(per_agent.items()):
        a = np.asarray(xs, dtype=float)
        q = np.percentile(a, [50, 90, 99]) if len(a) else [math.nan] * 3
        rows.append({"agent": agent, "decisions": len(a), "p50_ms": q[0], "p90_ms": q[1], "p99_ms": q[2],
                     "max_ms": float(a.max()) if len(a) else math.nan})  # fmt: skip
    return pd.DataFrame(rows)


def _fault_table(matches: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    faulted = matches[matches["fault"].notna()].copy()
    if faulted.empty:
        return pd.DataFrame({"agent": names, "forfeits": 0})
    faulted["agent"] = np.where(faulted["forfeit_seat"] == 0, faulted["seat0"], faulted["seat1"])
    t = faulted.pivot_table(index="agent", columns="fault", values="id", aggfunc="count", fill_value=0)
    t["forfeits"] = t.sum(axis=1)
    t = t.reindex(names, fill_value=0).reset_index().rename(columns={"index": "agent"})
    t.columns.name = None
    return t


def _ladder_tables(store_path: Path) -> tuple[list[dict], dict[str, str], list[dict]]:
    """A ladder store's rating history, entry statuses and entries; empty for others."""
    from .ladder_store import LadderStore
    from .store import StoreError

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


def build_report(store_path: Path, out: Path, *, title: str | None = None) -> Path:
    """Write ``out/index.html`` (self-contained) and its PNGs and CSVs; returns the HTML path."""
    with Store(store_path, create=False) as store:
        config = store.config or {}
        matches = pd.DataFrame(store.matches())
        deals = pd.DataFrame(store.deals())
        runs = store.runs()
        compare = store.compare_settings()
    history, status, entries = _ladder_tables(store_path)
    out.mkdir(parents=True, exist_ok=True)
    names = list(config.get("agents", [])) or sorted(set(matches.get("seat0", [])) | set(matches.get("seat1", [])))
    title = title or f"{config.get('format', 'tournament')} of {', '.join(names)}"
    r = _Report(out)

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
        f"{len(matches)} matches ({len(deals)} deals, {forfeits} forfeits) of {how}, "
        f"variant {v.get('name', '?')}, {_seed_text(config)}; "
        f"time control {tc.get('move_ms', '?')} ms a move, bank {tc.get('bank_ms', '?')} "
        f"ms, {tc.get('clock', 'wall')} clock; {len(runs)} run(s). Store: {store_path}."
    )
    if matches.empty:
        r.p("No matches are stored yet.", "note")
        path = out / "index.html"
        path.write_text(r.html(title))
        return path

    # -- ratings ------------------------------------------------------------------------------
    r.h2("Ratings", "ratings")
    ratings = fit(matches.to_dict("records"), names)
    table = ratings.to_frame()
    r.table(table, "ratings")
    r.p(
        "Joint maximum-likelihood Bradley-Terry ratings on the Elo scale, mean 0, with 95% intervals from the "
        "information matrix; a weak prior keeps unbeaten or winless agents finite.",
        "note",
    )
    fig, ax = plt.subplots(layout="constrained", figsize=(8, 0.5 + 0.45 * len(table)))
    order = table.iloc[::-1]
    ax.errorbar(order["elo"], order["agent"], xerr=[order["elo"] - order["ci_low"], order["ci_high"] - order["elo"]],
                fmt="o", capsize=4)  # fmt: skip
    ax.axvline(0, color="#aaa", lw=0.8)
    ax.set_xlabel("Elo (95% interval)")
    r.figure(fig, "ratings", "ratings with 95% intervals")

    # -- a ladder's rating history -----------------------------------------------------------
    if history:
        from .ladder import history_figure

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
    games = sides.pivot_table(index="agent", columns="opponent", values="won", aggfunc="size").reindex(
        index=names, columns=names
    )
    r.table((100 * score).round(1).rename_axis(index="agent (row) vs", columns=None).reset_index(), "score-matrix")
    r.p("Share of matches the row agent won against the column agent, in percent.", "note")
    los = los_matrix(ratings)
    fig, axes = plt.subplots(1, 2, layout="constrained", figsize=(12, 0.8 + 0.6 * len(names)))
    for ax, data, label, fmt in ((axes[0], score.to_numpy(dtype=float), "score", "{:.0%}"),
                                 (axes[1], los, "likelihood of superiority", "{:.0%}")):  # fmt: skip
        im = ax.imshow(np.nan_to_num(data, nan=0.5), cmap="RdYlGn", vmin=0, vmax=1)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_yticks(range(len(names)), names)
        ax.set_title(label)
        for i in range(len(names)):
            for j in range(len(names)):
                if i != j and not np.isnan(data[i, j]):
                    ax.text(j, i, fmt.format(data[i, j]), ha="center", va="center", fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046)
    r.figure(fig, "head-to-head", "score matrix and likelihood-of-superiority heat map")
    del games

    # -- margins -----------------------------------------------------------------------------
    r.h2("Win margins", "margins")
    r.table(margins.margin_summary(matches), "margins-by-agent")
    r.table(margins.margin_summary(matches, by="pairing"), "margins-by-pairing")
    r.table(margins.pair_margin_summary(matches), "pair-margins")
    r.p(
        "Match margin: an agent's final game points minus its opponent's. Pair margin: the sum over the two "
        "matches of a duplicate pair (the same decks, seats swapped). 95% intervals; forfeits left out.",
        "note",
    )
    sides_played = margins.match_sides(matches)
    pairings = sorted(sides_played["pairing"].unique())
    cols = min(3, len(pairings))
    rows_n = math.ceil(len(pairings) / cols)
    fig, axes = plt.subplots(rows_n, cols, layout="constrained", figsize=(4.2 * cols, 3 * rows_n), squeeze=False)
    for ax, pairing in zip(axes.flat, pairings, strict=False):
        a = pairing.split("~")[0]
        xs = sides_played[(sides_played["pairing"] == pairing) & (sides_played["agent"] == a)]["margin"]
        ax.hist(xs, bins=np.arange(-12.5, 13.5, 1), color="#4a7ab5")
        ax.axvline(0, color="#aaa", lw=0.8)
        ax.set_title(f"{a} vs {pairing.split('~')[1]}", fontsize=9)
        ax.set_xlabel(f"{a}'s margin")
    for ax in list(axes.flat)[len(pairings) :]:
        ax.axis("off")
    r.figure(fig, "margins", "win-margin histograms per pairing")

    # -- game points per deal -------------------------------------------------------------------
    r.h2("Game points per deal", "deal-points")
    dp = margins.deal_points(matches, deals)
    r.table(dp, "deal-points", floats="{:.3f}")
    fig, ax = plt.subplots(layout="constrained", figsize=(8, 0.6 + 0.45 * len(dp)))
    left = np.zeros(len(dp))
    for k, color in ((1, "#9ecae1"), (2, "#4292c6"), (3, "#08519c")):
        share = dp[f"share_{k}"].fillna(0).to_numpy()
        ax.barh(dp["agent"], share, left=left, color=color, label=f"{k} game point{'s' * (k > 1)}")
        left += share
    ax.set_xlabel("share of the deals the agent won")
    ax.legend(loc="lower right", fontsize=8)
    r.figure(fig, "deal-points", "game points per deal won, per agent")

    # -- faults and latency ---------------------------------------------------------------------
    r.h2("Faults and latency", "faults")
    r.table(_fault_table(matches, names), "faults")
    r.table(_latency_table(matches), "latency", floats="{:.2f}")
    r.p("Latency: wall time from a request to its answer, per decision, in milliseconds.", "note")

    # -- comparison -------------------------------------------------------------------------------
    if compare is not None:
        from .compare import sprt_from_matches

        r.h2("Comparison (SPRT)", "sprt")
        test, summary = sprt_from_matches(matches, compare)
        r.p(summary)
        fig, ax = plt.subplots(layout="constrained", figsize=(8, 3.5))
        ax.plot(range(1, len(test.llr_path) + 1), test.llr_path, color="#333")
        lo, hi = test.bounds
        ax.axhline(lo, color="#c33", ls="--", label=f"accept H0 ({lo:.2f})")
        ax.axhline(hi, color="#393", ls="--", label=f"accept H1 ({hi:.2f})")
        ax.set_xlabel("duplicate pairs")
        ax.set_ylabel("log-likelihood ratio")
        ax.legend(fontsize=8)
        r.figure(fig, "sprt", "SPRT log-likelihood ratio against its bounds")

    path = out / "index.html"
    path.write_text(r.html(title))
    return path
