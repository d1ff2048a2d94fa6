"""``arena report`` and ``arena ratings`` on a real store; the report in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from running import arena

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ["tournament", "ratings", "head-to-head", "margins", "deal-points", "faults"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "rr.sqlite"
    crash = "tests/agents/broken/crash-mid-match.toml"
    # seed 5: greedy wins all its 18 matches (the tests below rely on an unbeaten agent)
    p = arena("tournament", "--agents", f"random,greedy,c-cautious,{crash}", "--pairs", "3", "--seed", "5",
              "--store", str(path), "--quiet", "--no-report")  # fmt: skip
    assert p.returncode == 0, p.stderr
    return path


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    assert exe, "headless Chromium is needed for this test: .ci/run installs Debian's chromium package"
    return exe


def render(html: Path) -> dict:
    """Load the page in headless Chromium and return what a probe script saw there."""
    probe = html.with_name("probe.html")
    script = """<script>
    window.addEventListener('load', () => {
      const imgs = [...document.images];
      const out = {
        images: imgs.length,
        loaded: imgs.filter(i => i.complete && i.naturalWidth > 0).map(i => i.dataset.name),
        broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.dataset.name),
        sections: [...document.querySelectorAll('h2')].map(h => h.id),
        tables: document.querySelectorAll('table').length,
        title: document.title,
        headline: (document.querySelector('.headline') || {}).textContent,
        ranking: (document.querySelector('.ranking') || {}).textContent,
        first: document.body.children[1].className,
        headers: Object.fromEntries([...document.querySelectorAll('table')].map(
          t => [t.className.replace(/.*table-/, ''), [...t.querySelectorAll('th')].map(h => h.textContent)])),
        cells: Object.fromEntries([...document.querySelectorAll('table')].map(
          t => [t.className.replace(/.*table-/, ''),
                [...t.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent))])),
        scale: imgs.map(i => i.naturalWidth / Number(i.getAttribute('width'))),
      };
      const pre = document.createElement('pre');
      pre.id = 'probe';
      pre.textContent = JSON.stringify(out);
      document.body.appendChild(pre);
    });
    </script>"""
    probe.write_text(html.read_text().replace("</body>", script + "</body>"))
    p = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={html.parent / 'chrome-profile'}",
         "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    m = re.search(r'<pre id="probe">(.*?)</pre>', p.stdout, re.S)
    assert m, f"no probe output; chromium said: {p.stderr[-500:]}"
    return json.loads(m.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def test_report_is_self_contained_and_renders_in_chromium(store, tmp_path):
    out = tmp_path / "report"
    p = arena("report", str(store), "-o", str(out), "--title", "Test report")
    assert p.returncode == 0, p.stderr
    html = out / "index.html"
    assert p.stdout.strip() == f"report: {html}"
    text = html.read_text()
    # Offline: no external resource, every image inlined.
    assert not re.search(r'(src|href)="(https?:)?//', text)
    srcs = re.findall(r'<img src="([^"]+)"', text)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    for name in ("ratings", "head-to-head", "margins", "deal-points"):
        assert (out / f"{name}.png").stat().st_size > 1000
    for name in (
        "ratings",
        "score-matrix",
        "margins-by-agent",
        "margins-by-pairing",
        "pair-margins",
        "deal-points",
        "faults",
        "latency",
    ):
        assert (out / f"{name}.csv").is_file()
    seen = render(html)
    assert seen["title"] == "Test report"
    assert seen["sections"] == SECTIONS
    assert seen["images"] == len(srcs) >= 4 and seen["broken"] == []
    assert seen["tables"] >= 8
    # The headline comes first: the best agent, its lead over the runner-up with a 95% interval.
    assert seen["first"] == "headline"
    # (3 pairs a pairing: greedy won all 6 against c-cautious, yet that does not separate them at 95%)
    assert re.fullmatch(
        r"greedy leads c-cautious by \+\d+ Elo \[-\d+, \+\d+\], not yet separated: the 95% "
        r"interval includes 0 \(likelihood of superiority \d+\.\d%\)\. greedy won all its 18 "
        r"matches: the top of its interval rests on the prior\.",
        seen["headline"],
    ), seen["headline"]
    assert re.fullmatch(r"Ranking: greedy ≈ c-cautious [>≈] random [>≈] crash-mid-match  \(> clear at 95%, ≈ not "
                        r"yet\)\.", seen["ranking"]), seen["ranking"]  # fmt: skip
    # Human headers, never a column's machine name.
    headers = seen["headers"]
    assert headers["ratings"] == ["Agent", "Elo", "95% interval", "Standard error", "Matches", "Won", "Lost", "Score",
                                  "Note"]  # fmt: skip
    assert "Pairs split (1-1)" in headers["pair-margins"] and "Mean margin" in headers["margins-by-agent"]
    assert headers["latency"][:3] == ["Agent", "Decisions", "p50 (ms)"]
    assert not [h for hs in headers.values() for h in hs if re.search(r"[a-z]_[a-z]", h)], headers
    # Scores as percentages that never round to a false 100%; the LOS never shown as certain.
    ratings = {row[0]: row for row in seen["cells"]["ratings"]}
    assert ratings["greedy"][7] == "100%" and ratings["crash-mid-match"][7] == "0%"
    assert all(re.fullmatch(r"(\d+(\.\d)?%|> 99\.9%|< 0\.1%)", row[7]) for row in ratings.values())
    assert "100% of 6" in seen["cells"]["score-matrix"][1]  # greedy beat random in all 6 matches
    # Charts are drawn at 200 dpi and shown at half their pixel size.
    assert seen["scale"] and all(abs(x - 2) < 0.02 for x in seen["scale"]), seen["scale"]


def test_headline_names_the_best_and_its_lead_with_an_interval():
    from arena.report.html import headline
    from arena.stats.rating import fit

    def rows(a: str, b: str, wins: int, losses: int) -> list[dict]:
        return [{"seat0": a, "seat1": b, "winner": 0}] * wins + [{"seat0": a, "seat1": b, "winner": 1}] * losses

    clear = fit(rows("strong", "mid", 70, 10) + rows("mid", "weak", 41, 39) + rows("strong", "weak", 75, 5))
    first, ranking = headline(clear)
    d, _, lo, hi = clear.diff("strong", "mid")
    assert first == f"strong is best, +{d:.0f} Elo [+{lo:.0f}, +{hi:.0f}] over mid (likelihood of superiority > 99.9%)."
    assert ranking == "Ranking: strong > mid ≈ weak  (> clear at 95%, ≈ not yet)."
    assert headline(fit(rows("a", "b", 0, 0)))[0] == "Not enough results to rank the agents yet."


def test_report_tables_hold_the_results(store, tmp_path):
    import pandas as pd

    out = tmp_path / "report"
    assert arena("report", str(store), "-o", str(out)).returncode == 0
    ratings = pd.read_csv(out / "ratings.csv")
    assert set(ratings["agent"]) == {"random", "greedy", "c-cautious", "crash-mid-match"}
    assert abs(ratings["elo"].mean()) < 1e-6 and (ratings["ci_low"] < ratings["elo"]).all()
    faults = pd.read_csv(out / "faults.csv").set_index("agent")
    assert faults.loc["crash-mid-match", "forfeits"] == 18  # 3 pairings x 3 pairs x 2 games
    assert faults.loc["greedy", "forfeits"] == 0
    latency = pd.read_csv(out / "latency.csv").set_index("agent")
    assert (latency["p50_ms"] <= latency["p99_ms"]).all() and (latency["p99_ms"] <= latency["max_ms"]).all()
    deal_points = pd.read_csv(out / "deal-points.csv").set_index("agent")
    assert (deal_points[["share_1", "share_2", "share_3"]].sum(axis=1).round(6) == 1).all()


def test_ratings_command_table_and_json(store):
    p = arena("ratings", str(store))
    assert p.returncode == 0, p.stderr
    assert "95% interval" in p.stdout and "greedy" in p.stdout
    out = arena("ratings", str(store), "--json", "--bootstrap", "20").stdout

    def not_json(word: str):
        raise AssertionError(f"{word} is not JSON")

    data = json.loads(out, parse_constant=not_json)  # strict: no NaN or Infinity for other languages
    names = [r["agent"] for r in data["ratings"]]
    assert names[0] == "greedy" and names[-1] == "crash-mid-match"  # greedy won everything it played
    assert data["matches"] == 36 and len(data["bootstrap"]) == 4
    boot = {r["agent"]: r for r in data["bootstrap"]}
    assert boot["greedy"]["boot_high"] is None and boot["greedy"]["flag"]  # open above, and said why
    assert all(r["flag"] for r in data["bootstrap"] if None in (r["boot_low"], r["boot_high"]))
    p = arena("ratings", str(store), "--anchor", "random=1000", "--json")
    anchored = {r["agent"]: r["elo"] for r in json.loads(p.stdout)["ratings"]}
    assert anchored["random"] == pytest.approx(1000)
    assert arena("ratings", str(store), "--anchor", "nobody").returncode == 2
    assert arena("ratings", str(store), "--prior", "0").returncode == 2  # greedy is unbeaten: no maximum


def test_counted_results_give_the_ratings_and_pair_scores_of_the_matches(store):
    """`arena ratings` and the report count results in SQL (`Store.result_counts`,
    `Store.pair_counts`, `Store.deal_counts`): the same ratings, pair scores and game points
    per deal as reading every match, forfeits included."""
    import pandas as pd

    from arena.results.store import Store
    from arena.stats.margins import deal_points, deal_points_counted
    from arena.stats.rating import fit, fit_counts, pair_scores, pair_scores_counted

    with Store(store, create=False) as s:
        rows, names = s.matches(), s.config["agents"]
        counts, pairs = s.result_counts(), s.pair_counts()
    assert any(r["fault"] for r in rows) and sum(c["count"] for c in counts) == len(rows)
    pd.testing.assert_frame_equal(fit_counts(counts, names).to_frame(), fit(rows, names).to_frame())
    pd.testing.assert_frame_equal(pair_scores_counted(counts, pairs, names), pair_scores(rows, names))
    with Store(store, create=False) as s:  # the report's game points per deal, counted in SQL too
        deals, deal_counts = pd.DataFrame(s.deals()), s.deal_counts()
    counted = deal_points_counted(deal_counts)
    pd.testing.assert_frame_equal(counted, deal_points(pd.DataFrame(rows), deals), check_dtype=False)
    assert sum(c["count"] for c in deal_counts) == len(deals)


def test_report_is_written_next_to_the_store_by_default(store, tmp_path):
    """Like a tournament's: ``runs/rr.sqlite`` gives ``runs/rr/index.html``, whatever the working folder."""
    copy = tmp_path / "runs" / "rr.sqlite"
    copy.parent.mkdir()
    shutil.copyfile(store, copy)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = subprocess.run([sys.executable, "-m", "arena", "report", str(copy)], capture_output=True, text=True,
                       timeout=300, cwd=elsewhere, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"report: {tmp_path / 'runs' / 'rr' / 'index.html'}"
    assert (tmp_path / "runs" / "rr" / "ratings.png").is_file() and list(elsewhere.iterdir()) == []


def test_report_of_a_missing_store_is_a_one_line_error(tmp_path):
    p = arena("report", str(tmp_path / "nope.sqlite"))
    assert p.returncode == 2 and p.stderr.strip() == f"arena: error: {tmp_path / 'nope.sqlite'}: no such store"


def test_margin_histograms_are_for_the_closest_pairings():
    """With many agents the report draws the closest pairings only (the CSVs have all)."""
    import pandas as pd

    from arena.report.html import _closest_pairings

    rows = []
    for k in range(20):  # pairing k: a's margins average k - 10 (pairing 10 is the closest)
        a, b = f"a{k:02d}", f"b{k:02d}"
        for margin in (k - 11, k - 9) + ((k - 10,) if k == 13 else ()):  # 13 is played more than 7
            rows += [{"pairing": f"{a}~{b}", "agent": a, "margin": margin},
                     {"pairing": f"{a}~{b}", "agent": b, "margin": -margin}]  # fmt: skip
    sides = pd.DataFrame(rows)
    assert _closest_pairings(sides, 3) == ["a09~b09", "a10~b10", "a11~b11"]
    assert _closest_pairings(sides, 4) == ["a08~b08", "a09~b09", "a10~b10", "a11~b11"]  # a tie: by name
    assert _closest_pairings(sides, 6)[-1] == "a13~b13"  # a tie: the more played first (13 before 7)
