"""``arena report`` and ``arena ratings`` on a real store; the report in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ["tournament", "ratings", "head-to-head", "margins", "deal-points", "faults"]


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "rr.sqlite"
    crash = "tests/agents/broken/crash-mid-match.toml"
    p = arena("tournament", "--agents", f"random,greedy,c-cautious,{crash}", "--pairs", "3", "--seed", "3",
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
    data = json.loads(arena("ratings", str(store), "--json", "--bootstrap", "20").stdout)
    names = [r["agent"] for r in data["ratings"]]
    assert names[0] == "greedy" and names[-1] == "crash-mid-match"  # greedy won everything it played
    assert data["matches"] == 36 and len(data["bootstrap"]) == 4
    p = arena("ratings", str(store), "--anchor", "random=1000", "--json")
    anchored = {r["agent"]: r["elo"] for r in json.loads(p.stdout)["ratings"]}
    assert anchored["random"] == pytest.approx(1000)
    assert arena("ratings", str(store), "--anchor", "nobody").returncode == 2
    assert arena("ratings", str(store), "--prior", "0").returncode == 2  # greedy is unbeaten: no maximum


def test_report_of_a_missing_store_is_a_one_line_error(tmp_path):
    p = arena("report", str(tmp_path / "nope.sqlite"))
    assert p.returncode == 2 and p.stderr.strip() == f"arena: error: {tmp_path / 'nope.sqlite'}: no such store"
