"""A ladder's static web site (``arena ladder site``, and ``arena ladder run --site`` after
every round): plain HTML and SVG files that any web server (or ``python -m http.server``)
serves, with no script and nothing fetched from elsewhere.

    index.html             standings (Elo, 95% interval, games, score, status), the rating
                           history of the active agents, the latest rounds
    agents/<key>.html      one per entry: its versions, rating history chart, results
                           against each opponent, recent matches with replays, faults
    agents/<key>.svg       its rating history (a band of one standard error)
    rounds.html            every round; rounds/<n>.html: its pairs, their matches, the
                           ratings after it
    history.svg            every active agent's rating over the rounds
    replays/<match>.html   replay pages (`arena.report.replay_page`) of each agent's
                           `RECENT` latest matches

It reads the ladder's store once (the matches without their latencies, in chunks) and
writes every page again, except replays: a stored match never changes, so a replay page
that exists is kept and only new ones are made; replays no longer linked are removed.
File names come from entry keys and match ids through `safe_name` (``name@1`` ->
``name_401``), so every link is a plain relative path.

A ladder of a three- or four-handed game shows tables where a two-handed one shows pairs:
a match is won by the seats placed first (the winning team's both), an agent's page lists
the agents it sat with, and its latest matches link to their replays as a pair's do (the
viewer lays out three or four seats round the table).
"""

from __future__ import annotations

import html
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..ladder import rounds as ladder
from ..ladder.store import LadderStore
from .replay_page import safe_name
from .replays import prune, write_replays

#: Latest matches listed (with a replay page) on each agent's page.
RECENT = 10
#: Faults listed with their details on an agent's page (the count says how many in all).
FAULTS_SHOWN = 50
#: Points at most in a history chart's line (longer histories are thinned evenly).
CHART_POINTS = 400
_COLUMNS = ("idx", "id", "pair_index", "seat0", "seat1", "winner", "score0", "score1", "margin", "forfeit_seat",
            "fault", "fault_detail", "fault_deal", "deals", "finished")  # fmt: skip
#: A table ladder's columns besides those.
_TABLE_COLUMNS = ("seat2", "seat3", "place0", "place1", "place2", "place3", "score2", "winner_name")
CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; line-height: 1.45;
  padding: 0 1em; }
nav { margin-bottom: 1em; } nav a { margin-right: 1em; }
h1 { font-size: 1.5em; margin: 0.2em 0; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.55em; text-align: right; } th { background: #f3f3f3; }
td.l, th.l { text-align: left; } .retired { color: #888; } .note { color: #555; font-size: 0.9em; }
img { max-width: 100%; height: auto; }
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _page(title: str, body: str, depth: int = 0) -> str:
    up = "../" * depth
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head><body>\n'
        f'<nav><a href="{up}index.html">Standings</a><a href="{up}rounds.html">Rounds</a></nav>\n'
        f"<h1>{_e(title)}</h1>\n{body}\n</body></html>\n"
    )


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = (0,), cls: str = "") -> str:
    """An HTML table of already-escaped cells; columns in ``left`` aligned left."""
    head = "".join(f'<th class="l">{h}</th>' if i in left else f"<th>{h}</th>" for i, h in enumerate(headers))
    body = "\n".join(
        "<tr>" + "".join(f'<td class="l">{c}</td>' if i in left else f"<td>{c}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>'


def _elo(x: float) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:+.0f}"


def _when(t: float | None) -> str:
    return "" if t is None or (isinstance(t, float) and math.isnan(t)) else time.strftime("%Y-%m-%d %H:%M",
                                                                                          time.gmtime(t))


def _thin(n: int) -> np.ndarray:
    """Indices of at most `CHART_POINTS` of ``n`` points, evenly spread, the last kept."""
    return np.unique(np.linspace(0, n - 1, min(n, CHART_POINTS)).round().astype(int)) if n else np.zeros(0, int)


PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
           "#bcbd22")  # fmt: skip


def history_svg(lines: dict[str, pd.DataFrame], title: str, *, band: bool, retired: set[str] = frozenset()) -> str:
    """An SVG chart of rating against round: one line per agent (``lines``: frames of
    round, elo, se), with a band of one standard error when ``band``; retired dashed."""
    w, h, left, right, top, bottom = 760, 360, 56, 150 if len(lines) > 1 else 16, 28, 36
    pts = [df for df in lines.values() if len(df)]
    if not pts:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="60"><text x="10" y="35" '
                f'font-family="sans-serif" font-size="14">no finished round yet</text></svg>')  # fmt: skip
    x0 = min(int(df["round"].min()) for df in pts)
    x1 = max(int(df["round"].max()) for df in pts)
    lo = min(float((df["elo"] - df["se"] * band).min()) for df in pts)
    hi = max(float((df["elo"] + df["se"] * band).max()) for df in pts)
    if hi - lo < 1:
        lo, hi = lo - 50, hi + 50
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad

    def sx(r: np.ndarray) -> np.ndarray:
        return left + (r - x0) / max(x1 - x0, 1) * (w - left - right)

    def sy(v: np.ndarray) -> np.ndarray:
        return top + (hi - v) / (hi - lo) * (h - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="#fff"/>',
           f'<text x="{w / 2:.0f}" y="16" text-anchor="middle" font-size="13">{_e(title)}</text>']  # fmt: skip
    for v in np.linspace(lo + pad, hi - pad, 5):
        y = float(sy(np.array(v)))
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{v:+.0f}</text>')  # fmt: skip
    out.append(f'<text x="{left + (w - left - right) / 2:.0f}" y="{h - 6}" text-anchor="middle">round '
               f"{x0}&#8211;{x1}</text>")  # fmt: skip
    out.append(f'<text x="12" y="{top + (h - top - bottom) / 2:.0f}" transform="rotate(-90 12 '
               f'{top + (h - top - bottom) / 2:.0f})" text-anchor="middle">Elo (mean 0)</text>')  # fmt: skip
    for k, (name, df) in enumerate(lines.items()):
        if not len(df):
            continue
        idx = _thin(len(df))
        r = df["round"].to_numpy(float)[idx]
        e = df["elo"].to_numpy(float)[idx]
        s = df["se"].to_numpy(float)[idx]
        colour = PALETTE[k % len(PALETTE)]
        xs = sx(r)
        if band:
            upper = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, sy(e + s), strict=True))
            lower = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs[::-1], sy(e - s)[::-1], strict=True))
            out.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.15" stroke="none"/>')
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, sy(e), strict=True))
        dash = ' stroke-dasharray="5,3"' if name in retired else ""
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.6"{dash}/>')
        if len(lines) > 1 and k < 30:
            out.append(f'<text x="{w - right + 6}" y="{top + 12 + 13 * k}" fill="{colour}">{_e(name)}</text>')
    if len(lines) > 30:
        out.append(f'<text x="{w - right + 6}" y="{top + 12 + 13 * 30}">and {len(lines) - 30} more</text>')
    out.append("</svg>")
    return "\n".join(out)


def _matches(store: LadderStore) -> pd.DataFrame:
    cols = _COLUMNS + (_TABLE_COLUMNS if store.players > 2 else ())
    parts = [pd.DataFrame.from_records(c, columns=list(cols)) for c in store.chunks("matches", cols)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(cols))


def _seat_won(matches: pd.DataFrame, seat: pd.Series | np.ndarray, rows: np.ndarray, tables: bool) -> np.ndarray:
    """Whether the seat ``seat`` of each match ``rows`` won it: the winner two-handed; at a
    table, placed first (so both seats of the winning team)."""
    seat = np.asarray(seat, dtype=int)
    if not tables:
        return matches["winner"].to_numpy()[rows] == seat
    places = matches[["place0", "place1", "place2", "place3"]].to_numpy()[rows, seat]
    return np.asarray([p == 1 for p in places], dtype=bool)


def _seat_names(m: Any, n: int) -> list[str]:
    return [m[f"seat{s}"] for s in range(n)]


def _score_text(m: Any, tables: bool) -> str:
    if not tables or m["score2"] is None or pd.isna(m["score2"]):
        return f"{m['score0']:g}-{m['score1']:g}" if tables else f"{m['score0']}-{m['score1']}"
    return f"{m['score0']:g}-{m['score1']:g}-{m['score2']:g}"


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def build_site(store: LadderStore, out: Path, *, name: str | None = None, recent: int = RECENT) -> Path:
    """Write the ladder's site into ``out`` (made if missing); returns ``out/index.html``."""
    name = name or (store.config or {}).get("name", "ladder")
    for sub in ("agents", "rounds", "replays"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    entries = store.entries()
    keys = [e["key"] for e in entries]
    status = {e["key"]: e["status"] for e in entries}
    rated = ladder.ratings(store)
    table = ladder.standings_frame(store, rated)
    seats = store.players
    tables = seats > 2
    model = rated.reference.partition("; ")[2] or "Bradley-Terry"
    matches = _matches(store)
    pairs = pd.DataFrame(store.pairs(), columns=["id", "round", "a", "b", "seed", "planned"])
    round_of = dict(zip(pairs["id"], pairs["round"], strict=True))
    matches["round"] = matches["pair_index"].map(round_of)
    hist = pd.DataFrame(store.history(), columns=["round", "at", "agent", "elo", "se", "games"])
    hist = hist[hist["games"] > 0]
    summary = f"{len(matches):,} matches, {ladder.rounds_summary(store)}"
    slug = {k: safe_name(k) for k in keys}

    def agent_link(k: str, depth: int = 0) -> str:
        return f'<a href="{"../" * depth}agents/{slug[k]}.html">{_e(k)}</a>' if k in slug else _e(k)

    # -- replays: each agent's latest matches ---------------------------------------------------
    sides = pd.concat([
        pd.DataFrame({"agent": matches[f"seat{s}"], "seat": s, "row": matches.index}) for s in range(seats)
    ], ignore_index=True)  # fmt: skip
    sides["idx"] = matches["idx"].to_numpy()[sides["row"].to_numpy()]
    latest = sides.sort_values("idx", ascending=False, kind="stable").groupby("agent", sort=False).head(recent)
    wanted = sorted(set(matches["id"].to_numpy()[latest["row"].to_numpy()]))
    replays = write_replays(store, wanted, out / "replays", keep=True)
    prune(out / "replays", replays)  # replays no longer linked

    def match_cell(mid: str, depth: int) -> str:
        if mid in replays:
            return f'<a href="{"../" * depth}replays/{safe_name(mid)}.html">{_e(mid)}</a>'
        return _e(mid)

    # -- index ----------------------------------------------------------------------------------
    rows = []
    for k, r in enumerate(table.itertuples(index=False), 1):
        cls = ' class="retired"' if r.status == "retired" else ""
        score = "-" if np.isnan(r.score) else f"{100 * r.score:.1f}%"
        rows.append([f"<span{cls}>{k}</span>", agent_link(r.agent), _elo(r.elo),
                     f"[{_elo(r.ci_low)}, {_elo(r.ci_high)}]", f"{r.games:,}", f"{r.wins:,}-{r.losses:,}", score,
                     _e(r.status) + (f" ({_e(r.flag)})" if r.flag else "")])  # fmt: skip
    active = [k for k in table["agent"] if status.get(k) == "active"]
    by_agent = {k: g for k, g in hist.groupby("agent")}
    chart = history_svg({k: by_agent.get(k, hist.iloc[:0]) for k in active},
                        f"Ladder {name}: active agents' ratings over the rounds", band=False)  # fmt: skip
    _write(out / "history.svg", chart)
    last_rounds = sorted(pairs["round"].unique())[-10:][::-1]
    body = [
        f'<p class="note">{_e(summary)}. Ratings: {_e(model)} on the Elo scale, '
        f"{_e(rated.reference.partition('; ')[0])}, with 95% intervals; refitted to all matches after every round. "
        f"Written {_when(time.time())} UTC.</p>",
        _table(["#", "Agent", "Elo", "95% interval", "Matches", "Won-lost", "Score", "Status"], rows, left=(1, 7),
               cls="standings"),  # fmt: skip
        "<h2>Rating history</h2>",
        '<img src="history.svg" alt="active agents\' ratings over the rounds" width="760">',
        "<h2>Latest rounds</h2>",
        "<p>" + ", ".join(f'<a href="rounds/{int(r)}.html">round {int(r)}</a>' for r in last_rounds)
        + ' &middot; <a href="rounds.html">all rounds</a></p>',
    ]
    _write(out / "index.html", _page(f"Ladder {name}", "\n".join(body)))

    # -- agents ---------------------------------------------------------------------------------
    # each agent with each other agent of its matches (at a table: every other seat)
    me = pd.concat([
        sides[sides["seat"] != s].assign(opponent=matches[f"seat{s}"].to_numpy()[sides["row"][sides["seat"] != s]])
        for s in range(seats)
    ], ignore_index=True) if len(sides) else sides.assign(opponent=sides["agent"])  # fmt: skip
    rows_of = me["row"].to_numpy()
    decided = (~pd.isna(matches["place0"].to_numpy()[rows_of]) if tables
               else ~pd.isna(matches["winner"].to_numpy()[rows_of]))  # fmt: skip
    me["won"] = _seat_won(matches, me["seat"], rows_of, tables) & decided
    me["lost"] = decided & ~me["won"].to_numpy()
    margin = matches["margin"].to_numpy()[rows_of].astype(float)
    me["margin"] = np.where(me["won"], margin, np.where(me["lost"], -margin, 0.0))
    vs = me.groupby(["agent", "opponent"]).agg(matches=("row", "size"), won=("won", "sum"), lost=("lost", "sum"),
                                                margin=("margin", "mean")).reset_index()  # fmt: skip
    vs_by = {k: g for k, g in vs.groupby("agent")}
    latest_by = {k: g for k, g in latest.groupby("agent")}
    faulted = matches[matches["fault"].notna() & matches["forfeit_seat"].notna()].copy()
    faulted["agent"] = [m[f"seat{int(m['forfeit_seat'])}"] for _, m in faulted.iterrows()]
    faults_by = {k: g.sort_values("idx", ascending=False) for k, g in faulted.groupby("agent")}
    elo_row = {r.agent: r for r in table.itertuples(index=False)}
    by_name: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        by_name.setdefault(e["name"], []).append(e)
    for e in entries:
        k = e["key"]
        r = elo_row.get(k)
        chart = history_svg({k: by_agent.get(k, hist.iloc[:0])}, f"{k}: rating after each round", band=True)
        _write(out / "agents" / f"{slug[k]}.svg", chart)
        versions = [[agent_link(v["key"], 1) + (" (this page)" if v["key"] == k else ""), _e(v["version"]),
                     _e(v["language"] or ""), _when(v["submitted"]), _e(v["status"]), _e(v["content_hash"][:12])]
                    for v in by_name[e["name"]]]  # fmt: skip
        opp = vs_by.get(k, vs.iloc[:0]).sort_values("matches", ascending=False)
        opp_rows = [[agent_link(o.opponent, 1), f"{o.matches:,}", f"{int(o.won):,}", f"{int(o.lost):,}",
                     f"{100 * o.won / max(o.won + o.lost, 1):.1f}%", f"{o.margin:+.2f}"]
                    for o in opp.itertuples(index=False)]  # fmt: skip
        recent_rows = []
        for s in latest_by.get(k, latest.iloc[:0]).itertuples(index=False):
            m = matches.loc[s.row]
            names = _seat_names(m, seats)
            other = ", ".join(agent_link(o, 1) for i, o in enumerate(names) if i != s.seat)
            done = not pd.isna(m["place0"] if tables else m["winner"])
            won = bool(_seat_won(matches, [s.seat], np.array([s.row]), tables)[0])
            result = ("won" if won else "lost") if done else "no result"
            if m["fault"] is not None and not pd.isna(m["fault"]):
                result += f" ({_e(m['fault'])} forfeit by {_e(names[int(m['forfeit_seat'])])})"
            recent_rows.append([match_cell(m["id"], 1), f'<a href="../rounds/{int(m["round"])}.html">{int(m["round"])}'
                                f"</a>" if not pd.isna(m["round"]) else "", other, str(s.seat),
                                _score_text(m, tables), result, _when(m["finished"])])  # fmt: skip
        fl = faults_by.get(k, faulted.iloc[:0])
        fault_rows = [[match_cell(f.id, 1), _e(f.fault), _e(f.fault_detail or ""),
                       "" if pd.isna(f.fault_deal) else str(int(f.fault_deal) + 1), _when(f.finished)]
                      for f in fl.head(FAULTS_SHOWN).itertuples(index=False)]  # fmt: skip
        head = (f"Elo {_elo(r.elo)}, 95% interval [{_elo(r.ci_low)}, {_elo(r.ci_high)}], {r.games:,} matches, "
                f"score {'-' if np.isnan(r.score) else f'{100 * r.score:.1f}%'}; {e['status']}"
                if r is not None else e["status"])  # fmt: skip
        body = [
            f"<p>{_e(head)}.</p>",
            "<h2>Versions</h2>",
            _table(["Entry", "Version", "Language", "Submitted (UTC)", "Status", "Content hash"], versions,
                   left=(0, 1, 2, 4, 5), cls="versions"),  # fmt: skip
            "<h2>Rating history</h2>",
            f'<img src="{slug[k]}.svg" alt="{_e(k)}: rating after each round" width="760">',
            "<h2>At a table with each agent</h2>" if tables else "<h2>Against each opponent</h2>",
            _table(["With" if tables else "Opponent", "Matches", "Won", "Lost", "Score", "Mean margin"], opp_rows,
                   cls="opponents") if opp_rows else "<p>No matches yet.</p>",  # fmt: skip
            f"<h2>Latest matches</h2><p class=\"note\">The {recent} latest"
            + ", each with its replay.</p>",
            _table(["Match", "Round", "Others" if tables else "Opponent", "Seat", "Score", "Result", "Finished (UTC)"],
                   recent_rows,
                   left=(0, 2, 5), cls="recent") if recent_rows else "<p>No matches yet.</p>",  # fmt: skip
            "<h2>Faults</h2>",
            (f'<p class="note">{len(fl):,} forfeits'
             + (f", the latest {FAULTS_SHOWN} shown" if len(fl) > FAULTS_SHOWN else "")
             + "; a match link opens its replay when it is among the latest.</p>"
             + _table(["Match", "Fault", "Detail", "Deal", "Finished (UTC)"], fault_rows, left=(0, 1, 2), cls="faults"))
            if fault_rows else "<p>No faults.</p>",  # fmt: skip
        ]
        _write(out / "agents" / f"{slug[k]}.html", _page(k, "\n".join(body), depth=1))

    # -- rounds (plain Python: thousands of rounds, a few rows each) ----------------------------
    hist_by_round: dict[int, list[tuple[str, float, float, int]]] = {}
    for h in hist[["round", "agent", "elo", "se", "games"]].itertuples(index=False, name=None):
        hist_by_round.setdefault(int(h[0]), []).append(h[1:])
    match_by_pair: dict[int, list[str]] = {}
    if tables:
        for _, m in matches.sort_values("id").iterrows():
            wn = m["winner_name"]
            won = "no result" if wn is None or pd.isna(wn) else f"{_e(wn)} won"
            forfeit = f" ({_e(m['fault'])} forfeit)" if m["fault"] is not None and not pd.isna(m["fault"]) else ""
            match_by_pair.setdefault(int(m["pair_index"]), []).append(
                f"{match_cell(m['id'], 1)}: {', '.join(_e(x) for x in _seat_names(m, seats))} "
                f"{_score_text(m, tables)}, {won}{forfeit}"
            )
    cols = ["pair_index", "id", "seat0", "seat1", "score0", "score1", "winner", "fault"]
    for pi, mid, s0, s1, sc0, sc1, w, fault in sorted(matches[cols].itertuples(index=False, name=None),
                                                     key=lambda m: m[1]) if not tables else ():  # fmt: skip
        won = "no result" if pd.isna(w) else f"{_e(s0 if w == 0 else s1)} won"
        forfeit = f" ({_e(fault)} forfeit)" if fault is not None and not pd.isna(fault) else ""
        match_by_pair.setdefault(int(pi), []).append(
            f"{match_cell(mid, 1)}: {_e(s0)} {sc0}-{sc1} {_e(s1)}, {won}{forfeit}"
        )
    by_round: dict[int, list[tuple[int, tuple[str, ...], float]]] = {}
    for p in store.pairs():
        by_round.setdefault(int(p["round"]), []).append((int(p["id"]), p["agents"], p["planned"]))
    round_rows = []
    for rnd, plist in sorted(by_round.items()):
        played = sum(len(match_by_pair.get(p[0], ())) for p in plist)
        state = "finished" if rnd in hist_by_round else "open"
        round_rows.append([f'<a href="rounds/{rnd}.html">{rnd}</a>', f"{len(plist):,}", f"{played:,}", state,
                           _when(min(p[2] for p in plist))])  # fmt: skip
        prow = [[str(pid), *([", ".join(agent_link(a, 1) for a in agents)] if tables else
                             [agent_link(a, 1) for a in agents]),
                 "<br>".join(match_by_pair.get(pid, ())) or "not played yet"] for pid, agents, _ in plist]  # fmt: skip
        ratings = ""
        if rnd in hist_by_round:
            after = sorted(hist_by_round[rnd], key=lambda h: -h[1])
            ratings = "<h2>Ratings after this round</h2>" + _table(
                ["Agent", "Elo", "Standard error", "Matches"],
                [[agent_link(a, 1), _elo(e), f"{se:.0f}", f"{g:,}"] for a, e, se, g in after], cls="after")  # fmt: skip
        nav = " ".join(x for x in (f'<a href="{rnd - 1}.html">previous round</a>' if rnd - 1 in by_round else "",
                                   f'<a href="{rnd + 1}.html">next round</a>' if rnd + 1 in by_round else "")
                       if x)  # fmt: skip
        if tables:
            head = ["Table", "Agents", "Matches (one deck in every seating; seats in order, scores per side)"]
            what, left = "tables (one deck set each)", (1, 2)
        else:
            head = ["Pair", "Agent a", "Agent b", "Matches (game 0: a in seat 0; game 1: seats swapped)"]
            what, left = "duplicate pairs", (1, 2, 3)
        body = (f'<p class="note">{state}; {len(plist)} {what}, {played} matches. {nav}</p>'
                + _table(head, prow, left=left, cls="pairs") + ratings)  # fmt: skip
        _write(out / "rounds" / f"{rnd}.html", _page(f"Ladder {name}: round {rnd}", body, depth=1))
    _write(out / "rounds.html", _page(f"Ladder {name}: rounds", f'<p class="note">{_e(summary)}.</p>' + _table(
        ["Round", "Tables" if tables else "Pairs", "Matches", "State", "Planned (UTC)"], round_rows[::-1],
        cls="rounds")))  # fmt: skip
    _prune(out / "rounds", {f"{r}.html" for r in by_round})
    _prune(out / "agents", {f"{slug[k]}{x}" for k in keys for x in (".html", ".svg")})
    return out / "index.html"


def _prune(folder: Path, keep: set[str]) -> None:
    """Remove pages of rounds or agents no longer in the ladder (a site written over)."""
    for f in folder.iterdir():
        if f.name not in keep and f.suffix in (".html", ".svg"):
            os.unlink(f)
