"""The report of three- and four-handed tournaments (arena/report/tables.py): real
tournaments of real agent processes, and the page's figures checked against the store's
rows read here with sqlite3 (the ``table_matches`` and ``table_deals`` views)."""

from __future__ import annotations

import base64
import re
import sqlite3
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path

import pytest
from running import arena

from arena.stats.rating import percent

BROKEN = Path(__file__).resolve().parent / "agents" / "broken"


class _Tables(HTMLParser):
    """The page's tables (by the name in their class ``table-NAME``: header, then rows of
    cell text), section ids and images (``data-name`` -> the inlined bytes)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.sections: list[str] = []
        self.images: dict[str, bytes] = {}
        self.first_class = ""
        self._name: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "p" and not self.first_class and not self.sections:
            self.first_class = a.get("class", "")
        if tag == "table":
            self._name = re.sub(r".*table-", "", a.get("class", ""))
            self.tables[self._name] = []
        elif tag == "tr" and self._name is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "h2":
            self.sections.append(a.get("id", ""))
        elif tag == "img":
            self.images[a["data-name"]] = base64.b64decode(a["src"].partition(",")[2])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._name].append(self._row)
            self._row = None
        elif tag == "table":
            self._name = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def page(path: Path) -> _Tables:
    p = _Tables()
    p.feed(path.read_text())
    return p


def keyed(rows: list[list[str]], keys: int) -> dict[tuple[str, ...], dict[str, str]]:
    """A table's rows by their first ``keys`` cells, each row as header -> cell."""
    head, *body = rows
    return {tuple(r[:keys]): dict(zip(head, r, strict=True)) for r in body}


def mean(total: float, n: int) -> str:
    return f"{total / n:+.2f}"


def table_rows(store: Path) -> list[dict]:
    with sqlite3.connect(store) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM table_matches")]


def contracts(store: Path, players: int) -> list[dict]:
    """Every contract: the bidder's agent, the bid, the bidder's side's gain, the deal's reason."""
    side = (lambda s: s % 2) if players == 4 else (lambda s: s)
    out = []
    with sqlite3.connect(store) as db:
        db.row_factory = sqlite3.Row
        sql = ("SELECT d.*, m.seat0, m.seat1, m.seat2, m.seat3 FROM table_deals d JOIN table_matches m "
               "ON m.id = d.match_id WHERE d.bidder IS NOT NULL")  # fmt: skip
        for d in db.execute(sql):
            out.append({"agent": d[f"seat{d['bidder']}"], "bid": d["bid"], "gain": d[f"gain{side(d['bidder'])}"],
                        "reason": d["reason"]})  # fmt: skip
    return out


def check_images(out: Path, seen: _Tables, names: set[str]) -> None:
    """Every chart is inlined and written beside the page, the same bytes."""
    assert names <= set(seen.images), seen.images.keys()
    for name, data in seen.images.items():
        assert data.startswith(b"\x89PNG") and (out / f"{name}.png").read_bytes() == data


def check_seats(seen: _Tables, rows: list[dict], players: int, unit: str) -> None:
    """The per-seat table: each agent's matches, wins, share won and mean side score in each seat."""
    got = keyed(seen.tables["seats"], 2)
    acc: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0.0, 0])
    for m in rows:
        for s in range(players):
            side = s % 2 if players == 4 else s
            won = (m["winner"] == side) if m["kind"] != "order" else m[f"place{s}"] == 1
            a = acc[(m[f"seat{s}"], str(s))]
            a[0] += 1
            a[1] += int(won)
            a[2] += m[f"score{side}"]
            a[3] += int(m["winner"] is not None)
    assert set(got) == set(acc)
    for key, (n, won, points, decided) in acc.items():
        row = got[key]
        assert (row["Matches"], row["Won"]) == (str(n), str(won)), (key, row)
        assert row["Share won"] == percent(won / decided), (key, row)
        assert row[f"Mean {unit}"] == mean(points, n), (key, row)


def check_bidding(seen: _Tables, rows: list[dict], store: Path, players: int, levels: list[int]) -> None:
    """The contracts per agent and level, made when the bidder's side gained (the engine's
    own word for the deal agrees), and the deals each agent was dealt into."""
    got = keyed(seen.tables["bidding"], 1)
    deals: dict[str, int] = defaultdict(int)
    for m in rows:
        for s in range(players):
            deals[m[f"seat{s}"]] += m["deals"]
    every = contracts(store, players)
    assert every and {c["reason"] for c in every} <= {"made", "set"}
    assert all((c["gain"] > 0) == (c["reason"] == "made") for c in every)  # a set bid scores minus the bid
    assert all(c["gain"] == -c["bid"] for c in every if c["reason"] == "set")
    for (agent,), row in got.items():
        mine = [c for c in every if c["agent"] == agent]
        made = sum(c["gain"] > 0 for c in mine)
        assert row["Deals"] == f"{deals[agent]:,}" and row["Contracts"] == str(len(mine)), row
        assert (row["Made"], row["Set"]) == (str(made), str(len(mine) - made)), row
        for level in levels:
            at = [c for c in mine if c["bid"] == level]
            n, k = len(at), sum(c["gain"] > 0 for c in at)
            assert row["Moon" if level == 5 else f"Bid {level}"] == (f"{n} ({k} made)" if n else "0"), (level, row)
        if mine:
            assert row["Share made"] == percent(made / len(mine))
            assert row["Mean gain (marks)"] == mean(sum(c["gain"] for c in mine), len(mine))
    assert {a for (a,) in got} == set(deals)
    # the auctions: a deal's first calls, a seat each from the dealer's left (its actions as the view decodes them)
    calls: dict[str, list[int]] = defaultdict(list)
    with sqlite3.connect(store) as db:
        sql = ("SELECT d.dealer, d.actions, m.seat0, m.seat1, m.seat2, m.seat3 FROM table_deals d JOIN table_matches m "
               "ON m.id = d.match_id")  # fmt: skip
        for dealer, actions, *names in db.execute(sql):
            for i, a in enumerate(actions.split()[:players]):
                assert a == "pass" or a.startswith("bid:")
                calls[names[(dealer + 1 + i) % players]].append(0 if a == "pass" else int(a[4:]))
    got = keyed(seen.tables["auction"], 1)
    assert {a for (a,) in got} == set(calls)
    for agent, xs in calls.items():
        row = got[(agent,)]
        assert (row["Calls"], row["Passes"]) == (f"{len(xs):,}", f"{xs.count(0):,}"), row
        for level in levels:
            assert row["Moon" if level == 5 else f"Bid {level}"] == f"{xs.count(level):,}", (level, row)


@pytest.fixture(scope="module")
def cutthroat(tmp_path_factory) -> Path:
    """Three-handed cutthroat (bidding, marks); the tournament writes its report at the end."""
    path = tmp_path_factory.mktemp("cutthroat") / "ct.sqlite"
    p = arena("tournament", "--agents", "random,greedy,heuristic", "--variant", "three-cutthroat", "--pairs", "2",
              "--seed", "3", "--quiet", "--no-sandbox", "--store", path)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert f"report: {path.parent / 'ct' / 'index.html'}" in p.stdout
    return path


@pytest.fixture(scope="module")
def bidding(tmp_path_factory) -> Path:
    """Four-handed bidding in partnerships (marks, the moon), report by `arena report`."""
    path = tmp_path_factory.mktemp("bidding") / "fb.sqlite"
    p = arena("tournament", "--agents", "random,greedy,heuristic,node-greedy", "--variant", "four-bidding",
              "--pairs", "1", "--seed", "5", "--quiet", "--no-sandbox", "--no-report", "--store", path)  # fmt: skip
    assert p.returncode == 0, p.stderr
    return path


def test_three_handed_report_shows_seats_opponents_margins_and_bids(cutthroat):
    from arena.report.html import headline
    from arena.results.store import Store
    from arena.stats.table_rating import fit_table_counts

    out = cutthroat.parent / "ct"
    seen = page(out / "index.html")
    assert seen.sections == ["tournament", "ratings", "standings", "seats", "partners", "margins", "bidding", "faults"]
    check_images(out, seen, {"ratings", "head-to-head", "margins", "deal-gains", "bidding"})
    text = (out / "index.html").read_text()
    with Store(cutthroat, create=False) as s:  # the headline is the table ratings' (not Bradley-Terry's)
        first, ranking = headline(fit_table_counts(s.table_counts(), s.config["agents"]))
    assert seen.first_class == "headline" and f'<p class="headline">{first}</p>' in text.replace("&#x27;", "'")
    assert "Plackett-Luce" in text and ranking.split(":")[0] in text
    rows = table_rows(cutthroat)
    assert len(rows) == 6 and {m["kind"] for m in rows} == {"winner"}
    check_seats(seen, rows, 3, "marks")
    check_bidding(seen, rows, cutthroat, 3, [1, 2, 3, 4])
    assert "Moon" not in seen.tables["bidding"][0]  # three-handed cutthroat bids no moon
    # against each opponent: who finished ahead, by the places
    got = keyed(seen.tables["opponents"], 2)
    ahead: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for m in rows:
        for s in range(3):
            for o in range(3):
                if o != s:
                    d = m[f"place{s}"] - m[f"place{o}"]
                    ahead[(m[f"seat{s}"], m[f"seat{o}"])][0 if d < 0 else 1 if d == 0 else 2] += 1
    assert set(got) == set(ahead)
    for key, (a, lv, b) in ahead.items():
        row = got[key]
        assert (row["Finished ahead"], row["Same place"], row["Finished behind"]) == (str(a), str(lv), str(b)), key
    # margins: the seat's final score minus the best other seat's, in marks
    margins: dict[str, list[float]] = defaultdict(list)
    for m in rows:
        for s in range(3):
            margins[m[f"seat{s}"]].append(m[f"score{s}"] - max(m[f"score{o}"] for o in range(3) if o != s))
    got = keyed(seen.tables["margins-by-agent"], 1)
    for agent, xs in margins.items():
        assert got[(agent,)]["Matches"] == str(len(xs)) and got[(agent,)]["Mean margin"] == mean(sum(xs), len(xs))
    # gains per deal: each seat's own, the deals nobody bid in left out; they add up to the final scores
    with sqlite3.connect(cutthroat) as db:
        gains = db.execute("SELECT m.seat0, m.seat1, m.seat2, d.gain0, d.gain1, d.gain2, d.reason FROM table_deals d "
                           "JOIN table_matches m ON m.id = d.match_id").fetchall()  # fmt: skip
    per: dict[str, list[float]] = defaultdict(list)
    for g in gains:
        for s in range(3):
            if g[6] != "all-pass":
                per[g[s]].append(g[3 + s])
    got = keyed(seen.tables["deal-gains"], 1)
    for agent, xs in per.items():
        assert got[(agent,)]["Deals"] == f"{len(xs):,}" and got[(agent,)]["Mean gain"] == mean(sum(xs), len(xs))
    assert sum(map(sum, per.values())) == pytest.approx(sum(m[f"score{s}"] for m in rows for s in range(3)))
    # the match list: every match, each linked to its replay
    links = re.findall(r'<a href="(replays/[^"]+)">', (out / "matches.html").read_text())
    assert len(page(out / "matches.html").tables["matches"]) == 1 + 6 and len(links) == 6
    assert sorted(x.name for x in (out / "replays").iterdir()) == sorted(h.split("/")[1] for h in links)


def test_four_handed_report_shows_partners_and_the_moon(bidding, tmp_path):
    out = tmp_path / "report"
    p = arena("report", bidding, "-o", out)
    assert p.returncode == 0, p.stderr
    seen = page(out / "index.html")
    assert seen.sections == ["tournament", "ratings", "standings", "seats", "partners", "margins", "bidding", "faults"]
    check_images(out, seen, {"ratings", "head-to-head", "margins", "deal-gains", "bidding"})
    rows = table_rows(bidding)
    assert len(rows) == 6 and {m["kind"] for m in rows} == {"team"}
    check_seats(seen, rows, 4, "marks")
    check_bidding(seen, rows, bidding, 4, [1, 2, 3, 4, 5])
    assert any(c["bid"] == 5 for c in contracts(bidding, 4))  # seed 5: the moon is bid (and set) at least once
    # with each partner (opposite) and against each opponent (the other team's seats)
    partners: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0.0])
    opponents: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for m in rows:
        for s in range(4):
            won = m["winner"] == s % 2
            lead = m[f"score{s % 2}"] - m[f"score{1 - s % 2}"]
            a = partners[(m[f"seat{s}"], m[f"seat{(s + 2) % 4}"])]
            a[0], a[1], a[2] = a[0] + 1, a[1] + won, a[2] + lead
            for o in ((s + 1) % 4, (s + 3) % 4):
                b = opponents[(m[f"seat{s}"], m[f"seat{o}"])]
                b[0], b[1] = b[0] + 1, b[1] + won
    got = keyed(seen.tables["partners"], 2)
    assert set(got) == set(partners) and len(got) == 12  # every agent with each of the three others
    for key, (n, won, lead) in partners.items():
        row = got[key]
        assert (row["Matches"], row["Won"], row["Share won"]) == (str(n), str(won), percent(won / n)), (key, row)
        assert row["Mean margin (marks)"] == mean(lead, n), (key, row)
    got = keyed(seen.tables["opponents"], 2)
    assert set(got) == set(opponents)
    for key, (n, won) in opponents.items():
        assert (got[key]["Matches"], got[key]["Won"]) == (str(n), str(won)), key
    # the standings: each agent's team results, as `arena.results.standings` counts them from the rows
    from arena.results.standings import standings

    got = keyed(seen.tables["standings"], 1)
    for st in standings(rows):
        row = got[(st.name,)]
        assert (row["Matches"], row["Won"], row["Lost"]) == (str(st.played), str(st.won), str(st.lost))
        assert row["Side's marks (total)"] == f"{st.points_for:g}"


def test_forfeits_and_latency_count_every_seat(tmp_path):
    """A table agent that crashes forfeits each match it plays; the latencies of all three
    seats are read; the report lists the matches with their replays, or none with --replays 0."""
    store = tmp_path / "crash.sqlite"
    crash = BROKEN / "crash-mid-match-table.toml"
    p = arena("tournament", "--agents", f"random,greedy,{crash}", "--variant", "three-pagat", "--pairs", "1",
              "--seed", "3", "--quiet", "--no-sandbox", "--no-report", "--store", store)  # fmt: skip
    assert p.returncode == 0, p.stderr
    out = tmp_path / "report"
    assert arena("report", store, "-o", out, "--replays", "0").returncode == 0
    seen = page(out / "index.html")
    assert not (out / "matches.html").exists() and "faults" in seen.sections
    rows = table_rows(store)
    forfeits: dict[str, int] = defaultdict(int)
    decisions: dict[str, int] = defaultdict(int)
    for m in rows:
        if m["fault"] is not None:
            forfeits[m[f"seat{m['forfeit_seat']}"]] += 1
        for s in range(3):
            decisions[m[f"seat{s}"]] += m[f"decisions{s}"]
    assert forfeits == {"crash-mid-match-table": 3}
    faults = keyed(seen.tables["faults"], 1)
    assert {a: int(r["Forfeits"]) for (a,), r in faults.items()} == {"random": 0, "greedy": 0,
                                                                        "crash-mid-match-table": 3}  # fmt: skip
    latency = keyed(seen.tables["latency"], 1)
    assert {a: r["Decisions"] for (a,), r in latency.items()} == {a: f"{n:,}" for a, n in decisions.items()}
    assert decisions["random"] > 0 and decisions["greedy"] > 0
    assert arena("report", store, "-o", out).returncode == 0  # now with the match list
    listed = page(out / "matches.html").tables["matches"]
    assert len(listed) == 1 + 3 and all(r[5].startswith("crash: ") for r in listed[1:])


def test_a_table_comparison_report_shows_its_sprt_on_deck_sets(tmp_path):
    store = tmp_path / "cmp.sqlite"
    p = arena("compare", "heuristic", "random", "--variant", "three-pagat", "--reference", "greedy", "--elo1", "100",
              "--seed", "3", "--store", store, "--no-sandbox")  # fmt: skip
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "cmp" / "index.html").read_text()
    con = sqlite3.connect(store)
    sets = con.execute("SELECT count(DISTINCT pair_index) FROM matches").fetchone()[0]
    con.close()
    assert "Comparison (SPRT)" in page and "NEW behind / even / ahead" in page
    verdict = p.stdout.splitlines()[-2] if p.stdout.strip().endswith(".html") else p.stdout.splitlines()[-1]
    assert verdict.split(":")[0] in page  # the command's verdict, word for word
    assert f"{sets} deck sets" in page and "Results by seat" in page
