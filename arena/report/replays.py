"""The report's match list: a capped set of matches, each linked to its replay page.

A store may hold a million matches; the report writes the replays of at most
`REPORT_REPLAYS` of them (the forfeits first, most recent first, up to half the cap, then
the most recent matches), lists them on ``matches.html`` beside ``index.html``, and says
how to get any other one (``arena view STORE MATCH_ID``). Pages go to ``replays/`` under
the report's folder, where ``arena view`` writes by default, so a replay made on demand
sits beside the others. What is listed is chosen from the match frame the report already
read (schedule order, faults), so the list costs a few queries, not a pass over the store.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pandas as pd

from ..results.store import Store
from .replay_page import ReplayError, load_match, match_frames, page, safe_name

#: Matches whose replays `arena report` writes by default (``--replays N`` changes it).
REPORT_REPLAYS = 100
PAGE_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; line-height: 1.45; }
table { border-collapse: collapse; font-size: 0.9em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; } th { background: #f3f3f3; }
.note { color: #555; font-size: 0.9em; } code { background: #f3f3f3; padding: 0 0.2em; }
"""


def match_id(row: Any, ladder: bool) -> str:
    """A match's id from its pairing, duplicate pair and game (docs/store.md: ``a~b#k.g``,
    a ladder's ``L<pair>.<game>``)."""
    return f"L{row.pair_index}.{row.game}" if ladder else f"{row.pairing}#{row.pair_index}.{row.game}"


def chosen(matches: pd.DataFrame, cap: int) -> pd.DataFrame:
    """The rows to list (``matches``: the report's frame, ``id`` its schedule place): up to
    ``cap // 2`` forfeits, most recent first, then the most recent other matches."""
    if cap <= 0 or matches.empty:
        return matches.iloc[:0]
    faults = matches[matches["fault"].notna()].sort_values("id", ascending=False).head(cap // 2)
    rest = matches[~matches.index.isin(faults.index)].sort_values("id", ascending=False).head(cap - len(faults))
    return pd.concat([faults, rest]).sort_values("id", ascending=False)


def write_replays(store: Store, ids: list[str], folder: Path, *, keep: bool = False) -> dict[str, Path]:
    """Write the replay page of each match id into ``folder`` (``keep``: leave a page that
    exists, a stored match never changes); returns id -> page for those written or kept."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for mid in ids:
        path = folder / f"{safe_name(mid)}.html"
        if not (keep and path.is_file()):
            try:
                variant, row, deals = load_match(store, mid)
            except ReplayError:
                continue
            path.write_text(page(match_frames(variant, row, deals)), encoding="utf-8")
        out[mid] = path
    return out


def prune(folder: Path, kept: dict[str, Path]) -> None:
    """Remove the replay pages of ``folder`` that are not in ``kept``: pages an earlier
    report or site linked and this one does not (the folder holds only our pages)."""
    if folder.is_dir():
        names = {p.name for p in kept.values()}
        for old in folder.iterdir():
            if old.suffix == ".html" and old.name not in names:
                old.unlink(missing_ok=True)


def match_list(store_path: Path, matches: pd.DataFrame, out: Path, config: dict[str, Any], cap: int) -> str:
    """Write ``out/matches.html`` (the listed matches, linked to their replays in
    ``out/replays/``) and return the report's paragraph linking to it ("" when none)."""
    rows = chosen(matches, cap)
    if rows.empty:
        (out / "matches.html").unlink(missing_ok=True)  # a list from an earlier report, no longer linked
        prune(out / "replays", {})
        return ""
    if "seat2" in matches:
        return table_list(store_path, matches, rows, out, cap)
    ladder = config.get("format") == "ladder"
    ids = [match_id(r, ladder) for r in rows.itertuples(index=False)]
    with Store(store_path, create=False) as store:
        pages = write_replays(store, ids, out / "replays")
        prune(out / "replays", pages)
        details = {mid: (store.match(mid) or ({},))[0].get("fault_detail") for mid in ids if mid in pages}
    body = []
    for mid, r in zip(ids, rows.itertuples(index=False), strict=True):
        if mid not in pages:
            continue
        won = "" if pd.isna(r.winner) else (r.seat0 if r.winner == 0 else r.seat1)
        fault = "" if r.fault is None or pd.isna(r.fault) else f"{r.fault}: {details.get(mid) or ''}"
        body.append(
            f'<tr><td><a href="replays/{safe_name(mid)}.html">{html.escape(mid)}</a></td>'
            f"<td>{html.escape(r.seat0)}</td><td>{html.escape(r.seat1)}</td><td>{r.score0}-{r.score1}</td>"
            f"<td>{html.escape(won)}</td><td>{r.deals}</td><td>{html.escape(fault)}</td></tr>"
        )
    n = len(body)
    text = (
        f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Matches with replays</title>"
        f"<style>{PAGE_CSS}</style></head><body>\n<p><a href=\"index.html\">Back to the report</a></p>\n"
        f"<h1>Matches with replays</h1>\n<p class=\"note\">{n} of {len(matches):,} matches: the forfeits (most "
        f"recent first, at most {cap // 2}) and the most recent matches, {cap} at most (<code>arena report "
        f"--replays N</code>). Any other match: <code>arena view {html.escape(str(store_path))} MATCH_ID</code>."
        "</p>\n<table class=\"table-matches\"><thead><tr><th>Match (replay)</th><th>Seat 0</th><th>Seat 1</th>"
        "<th>Score</th><th>Winner</th><th>Deals</th><th>Forfeit</th></tr></thead><tbody>\n"
        + "\n".join(body)
        + "\n</tbody></table>\n</body></html>\n"
    )
    (out / "matches.html").write_text(text, encoding="utf-8")
    return (f'<p class="note">Watch the matches: <a href="matches.html" id="matches-link">{n} matches with their '
            f"replays</a> (the forfeits and the most recent).</p>")  # fmt: skip


def _table_winner(r: Any, players: int) -> str:
    """Who won a table's match: its team's agents joined by "+", the seat that won, or in
    an order of finish the agents placed first."""
    if r.kind == "order":
        return " ".join(getattr(r, f"seat{s}") for s in range(players) if getattr(r, f"place{s}") == 1)
    if r.winner is None or pd.isna(r.winner):
        return ""
    w = int(r.winner)
    if r.kind == "team":
        return "+".join(getattr(r, f"seat{s}") for s in range(w, players, 2))
    return getattr(r, f"seat{w}")


def table_list(store_path: Path, matches: pd.DataFrame, rows: pd.DataFrame, out: Path, cap: int) -> str:
    """``out/matches.html`` for a three- or four-handed store: the chosen ``rows``, each
    linked to its replay in ``out/replays/`` (pages no longer listed are removed);
    returns the report's paragraph linking to it."""
    players = 4 if "seat3" in matches else 3
    sides = 2 if players == 4 else players
    ids = [match_id(r, False) for r in rows.itertuples(index=False)]
    with Store(store_path, create=False) as store:
        pages = write_replays(store, ids, out / "replays")
        prune(out / "replays", pages)
        details = {mid: (store.match(mid) or ({},))[0].get("fault_detail")
                   for mid, f in zip(ids, rows["fault"], strict=True) if f is not None and not pd.isna(f)}  # fmt: skip
    body = []
    for mid, r in zip(ids, rows.itertuples(index=False), strict=True):
        agents = ", ".join(html.escape(getattr(r, f"seat{s}")) for s in range(players))
        score = " / ".join(f"{getattr(r, f'score{t}'):g}" for t in range(sides))
        fault = "" if r.fault is None or pd.isna(r.fault) else f"{r.fault}: {details.get(mid) or ''}"
        link = (f'<a href="replays/{safe_name(mid)}.html">{html.escape(mid)}</a>' if mid in pages
                else html.escape(mid))  # fmt: skip
        body.append(
            f"<tr><td>{link}</td><td>{agents}</td><td>{score}</td>"
            f"<td>{html.escape(_table_winner(r, players))}</td><td>{r.deals}</td><td>{html.escape(fault)}</td></tr>"
        )
    n = len(body)
    side = "team (seats 0 and 2, then 1 and 3)" if players == 4 else "seat"
    text = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Matches with replays</title>'
        f'<style>{PAGE_CSS}</style></head><body>\n<p><a href="index.html">Back to the report</a></p>\n'
        f'<h1>Matches with replays</h1>\n<p class="note">{n} of {len(matches):,} matches: the forfeits (most recent '
        f"first, at most {cap // 2}) and the most recent matches, {cap} at most (<code>arena report --replays N"
        f"</code>). Scores per {side}. Any other match: <code>arena view {html.escape(str(store_path))} MATCH_ID"
        f'</code>.</p>\n<table class="table-matches"><thead><tr><th>Match (replay)</th>'
        f"<th>Seats 0 to {players - 1}</th><th>Score</th><th>Winner</th><th>Deals</th><th>Forfeit</th></tr></thead>"
        "<tbody>\n"
        + "\n".join(body)
        + "\n</tbody></table>\n</body></html>\n"
    )
    (out / "matches.html").write_text(text, encoding="utf-8")
    return (f'<p class="note">Watch the matches: <a href="matches.html" id="matches-link">{n} matches with their '
            "replays</a> (the forfeits and the most recent).</p>")  # fmt: skip
