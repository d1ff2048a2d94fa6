// The replay viewer (arena/report/replay_page.py inlines it): draws the frames embedded in
// #replay-data. No network: everything it shows is in the page.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("replay-data").textContent);
  // frames are delta-coded: each holds the keys that changed since the one before
  for (const v of Object.keys(DATA.views)) {
    let prev = {};
    DATA.views[v] = DATA.views[v].map((f) => (prev = Object.assign({}, prev, f)));
  }
  const M = DATA.match;
  const N = M.players;
  // the sides that score (teams 0+2 and 1+3 with four players, else each seat); older pages: one per seat
  const SIDES = M.sides || [...Array(N).keys()].map((s) => [s]);
  const TEAMS = SIDES.some((x) => x.length > 1);
  const sideOf = (s) => SIDES.findIndex((x) => x.includes(s));
  const AUCTION = M.form === "bidding" || M.form === "cutthroat";
  const HIDDEN = { cutthroat: "widow", pagat: "undealt" }[M.form] || "talon";
  // "all" (spectators) first, then the seats (a seat's page holds its own view only)
  const VIEWS = Object.keys(DATA.views).sort((a, b) => (a === "all" ? -1 : b === "all" ? 1 : Number(a) - Number(b)));
  const FRAMES = DATA.views[VIEWS[0]].length;
  const SUIT = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  const RANK = { A: "A", T: "10", K: "K", Q: "Q", J: "J", 9: "9", 8: "8", 7: "7" };
  const PLACES = { 2: ["bottom", "top"], 3: ["bottom", "left", "right"], 4: ["bottom", "left", "top", "right"] };
  let view = VIEWS[0];
  let step = 0;
  let timer = null;

  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  const card = (c, cls) =>
    `<span class="card s-${c[1]}${cls ? " " + cls : ""}" data-card="${c}"><span class="r">${RANK[c[0]]}</span>` +
    `<span class="s">${SUIT[c[1]]}</span></span>`;
  const back = () => `<span class="card back" data-card="back"></span>`;
  const sym = (c) => `<span class="sym s-${c[1]}" data-card="${c}">${RANK[c[0]]}${SUIT[c[1]]}</span>`;
  const words = (text) =>
    esc(text)
      .replace(/\{([ATKQJ987])([CDHS])\}/g, (_, r, s) => sym(r + s))
      .replace(/\{([CDHS])\}/g, (_, s) => `<span class="sym s-${s}">${SUIT[s]}</span>`);
  const seatName = (s) => M.seats[s];
  const sideName = (t) => SIDES[t].map(seatName).join("+");
  const num = (x) => (x === null || x === undefined ? "" : String(x));
  const viewer = () => (view === "all" ? null : Number(view));
  // Where each seat sits: the viewing seat (seat 0 for spectators) at the bottom.
  const place = (s) => PLACES[N][(s - (viewer() ?? 0) + N) % N];

  function dealOf(i) {
    let k = 0;
    while (k + 1 < DATA.deals.length && DATA.deals[k + 1] <= i) k++;
    return k;
  }

  function build() {
    const app = document.getElementById("app");
    const title = app.dataset.title;
    let won = M.winner === null || M.winner === undefined ? "no result" : `${seatName(M.winner)} wins`;
    if (M.kind === "team" && M.winner !== null && M.winner !== undefined) won = `${sideName(M.winner)} win`;
    if (M.kind === "order" && M.places) {
      won = [...Array(N).keys()].sort((a, b) => M.places[a] - M.places[b])
        .map((s) => `${M.places[s]}. ${seatName(s)}`).join(", ");
    }
    const score = SIDES.length > 2 || TEAMS ? M.score.map(num).join(" / ") : M.score.join("-");
    const fault = M.fault ? `; ${seatName(M.forfeit_seat)} forfeited (${esc(M.fault)})` : "";
    const viewOpts = VIEWS.map((v) =>
      `<option value="${v}">${v === "all" ? "Spectator: all hands" : `Seat ${v}: ${esc(seatName(Number(v)))}'s view`}</option>`
    ).join("");
    const dealOpts = DATA.deals.map((f, k) => `<option value="${k}">Deal ${k + 1}</option>`).join("");
    app.innerHTML = `
      <header><h1>${esc(title)}</h1>
      <p class="result" id="result">${esc(TEAMS ? SIDES.map((x, t) => sideName(t)).join(" vs ") : M.seats.join(" vs "))}: ${esc(score)}, ${esc(won)}${esc(fault)}</p></header>
      <nav class="controls">
        <button id="first" title="first step (Home)">|&#x25C0;</button>
        <button id="prevdeal" title="previous deal (PageUp)">&#x25C0;&#x25C0;</button>
        <button id="prev" title="step back (Left)">&#x25C0;</button>
        <button id="play" title="play / pause (Space)">Play</button>
        <button id="next" title="step forward (Right)">&#x25B6;</button>
        <button id="nextdeal" title="next deal (PageDown)">&#x25B6;&#x25B6;</button>
        <button id="last" title="last step (End)">&#x25B6;|</button>
        <input type="range" id="slider" min="0" max="${FRAMES - 1}" value="0" aria-label="step">
        <span id="pos"></span>
        <select id="deal" aria-label="deal">${dealOpts}</select>
        <select id="view" aria-label="view">${viewOpts}</select>
        <select id="speed" aria-label="speed"><option value="1500">slow</option><option value="800" selected>normal</option><option value="300">fast</option></select>
      </nav>
      <div class="wrap">
        <div class="felt n${N}" id="felt"></div>
        <aside class="side">${N > 2 ? '<h2>Score</h2><div id="sides"></div>' : ""}${AUCTION ? '<h2>Auction and contract</h2><div id="auction"></div>' : ""}
          <h2>Tricks of this deal</h2><div class="jumps" id="jumps"></div>
          <h2>This deal, action by action</h2><ol id="log"></ol></aside>
      </div>
      <p class="keys">Keys: Left/Right step, Up/Down previous/next trick, PageUp/PageDown previous/next deal,
      Home/End, Space play/pause, V next view. The address (#step=N&amp;view=V, or #deal=D&amp;trick=T) opens the page there.</p>`;
    const on = (id, f) => document.getElementById(id).addEventListener("click", f);
    on("first", () => go(0));
    on("last", () => go(FRAMES - 1));
    on("prev", () => go(step - 1));
    on("next", () => go(step + 1));
    on("prevdeal", () => jumpDeal(-1));
    on("nextdeal", () => jumpDeal(1));
    on("play", toggle);
    document.getElementById("slider").addEventListener("input", (e) => go(Number(e.target.value)));
    // after a choice the keys step again (a focused menu would take the arrow keys)
    document.getElementById("deal").addEventListener("change", (e) => { e.target.blur(); go(DATA.deals[Number(e.target.value)]); });
    document.getElementById("view").addEventListener("change", (e) => { e.target.blur(); setView(e.target.value); });
    document.getElementById("speed").addEventListener("change", () => { if (timer) { toggle(); toggle(); } });
    document.addEventListener("keydown", key);
    window.addEventListener("hashchange", fromHash);
  }

  function jumpDeal(dir) {
    const k = dealOf(step);
    if (dir < 0) go(step > DATA.deals[k] ? DATA.deals[k] : DATA.deals[Math.max(0, k - 1)]);
    else if (k + 1 < DATA.deals.length) go(DATA.deals[k + 1]);
    else go(FRAMES - 1);
  }

  function jumpTrick(dir) {
    const all = DATA.tricks.flat();
    const target = dir > 0 ? all.find((f) => f > step) : [...all].reverse().find((f) => f < step);
    go(target ?? (dir > 0 ? FRAMES - 1 : 0));
  }

  function key(e) {
    if (e.target && e.target.tagName === "SELECT") return; // its own arrow keys
    const k = e.key;
    const acts = {
      ArrowRight: () => go(step + 1), ArrowLeft: () => go(step - 1),
      ArrowDown: () => jumpTrick(1), ArrowUp: () => jumpTrick(-1),
      PageDown: () => jumpDeal(1), PageUp: () => jumpDeal(-1),
      Home: () => go(0), End: () => go(FRAMES - 1), " ": toggle,
      v: () => setView(VIEWS[(VIEWS.indexOf(view) + 1) % VIEWS.length]),
    };
    if (acts[k]) { e.preventDefault(); acts[k](); }
  }

  function toggle() {
    const btn = document.getElementById("play");
    if (timer) { clearInterval(timer); timer = null; btn.textContent = "Play"; btn.dataset.playing = "0"; return; }
    if (step >= FRAMES - 1) go(0);
    btn.textContent = "Pause";
    btn.dataset.playing = "1";
    timer = setInterval(() => { if (step >= FRAMES - 1) toggle(); else go(step + 1); },
      Number(document.getElementById("speed").value));
  }

  function setView(v) {
    if (!VIEWS.includes(v)) return;
    view = v;
    document.getElementById("view").value = v;
    draw();
  }

  function go(i) {
    step = Math.max(0, Math.min(FRAMES - 1, i));
    draw();
  }

  function fromHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    if (h.has("view")) {
      const v = h.get("view").replace(/^seat/, "");
      if (VIEWS.includes(v)) view = v;
    }
    let i = step;
    if (h.has("step")) i = Number(h.get("step"));
    else if (h.has("deal")) {
      const k = Math.max(1, Math.min(DATA.deals.length, Number(h.get("deal")))) - 1;
      i = DATA.deals[k];
      if (h.has("trick")) {
        const t = Number(h.get("trick")) - 1;
        if (DATA.tricks[k][t] !== undefined) i = DATA.tricks[k][t];
      }
    }
    if (!Number.isFinite(i)) i = 0;
    document.getElementById("view").value = view;
    go(i);
  }

  function seatBox(f, s) {
    const me = viewer();
    const hidden = f.x[s];
    const cards = f.h[s].map((c) => card(c, c[1] === f.trump ? "trump" : "")).join("") + back().repeat(hidden);
    const melds = f.melds[s].map((x) => `<span class="badge meld" title="marriage shown">K+Q <span class="s-${x}">${SUIT[x]}</span></span>`).join("");
    const bid = f.bid && f.bid[0] === s ? `<span class="badge contract" title="the contract">${f.bid[1] === 5 ? "moon" : `bid ${f.bid[1]}`}</span>` : "";
    const badges = (s === f.dealer ? '<span class="badge">dealer</span>' : "") +
      (f.closed === s ? '<span class="badge">closed</span>' : "") +
      (f.sit === s ? '<span class="badge out" data-field="sit">sits out</span>' : "") +
      (TEAMS ? `<span class="badge team">team ${"AB"[sideOf(s)]}</span>` : "") + bid +
      (f.widow && f.widow.by === s ? '<span class="badge">took the widow</span>' : "") +
      (me === s ? '<span class="badge">you</span>' : "") + melds;
    const t = sideOf(s);
    const pend = f.pend[t] ? ` (+${f.pend[t]} pending)` : "";
    const stats = TEAMS
      ? `tricks <b data-field="tk">${f.tk[s]}</b> &middot; team ${"AB"[t]}: <b data-field="pts">${f.pts[t]}</b>${pend} card points, <b data-field="score">${num(f.score[t])}</b> game points`
      : `card points <b data-field="pts">${f.pts[t]}</b>${pend}
        &middot; tricks <b data-field="tk">${f.tk[s]}</b> &middot; game points <b data-field="score">${num(f.score[t])}</b>`;
    return `<div class="seat ${place(s)}${f.act === s ? " to-act" : ""}${f.sit === s ? " sitting-out" : ""}" data-seat="${s}">
      ${place(s) === "bottom" ? "" : `<div class="name">${esc(seatName(s))}${badges}</div>`}
      <div class="hand" data-seat="${s}">${cards}</div>
      <div class="stats" data-seat="${s}">${stats}</div>
      ${place(s) === "bottom" ? `<div class="name">${esc(seatName(s))}${badges}</div>` : ""}
    </div>`;
  }

  function tableInfo(f) {
    // the score per side, and the auction: who bid what, the contract
    const rows = SIDES.map((x, t) => `<tr data-side="${t}"><td>${esc(sideName(t))}</td>
      <td data-field="pts">${f.pts[t]}${f.pend[t] ? ` (+${f.pend[t]})` : ""}</td>
      <td data-field="tk">${x.reduce((a, s) => a + f.tk[s], 0)}</td><td data-field="score">${num(f.score[t])}</td></tr>`).join("");
    document.getElementById("sides").innerHTML = `<table class="sides"><thead><tr><th>${TEAMS ? "Team" : "Seat"}</th>
      <th>card points</th><th>tricks</th><th>game points</th></tr></thead><tbody>${rows}</tbody></table>`;
    if (!AUCTION) return;
    const bids = (f.bids || []).map(([s, b]) => `<li data-seat="${s}">${esc(seatName(s))}: ${b ? (b === 5 ? "moon (5)" : `bid ${b} (${b * 33})`) : "pass"}</li>`).join("");
    const contract = f.bid ? `<p id="contract">Contract: ${esc(seatName(f.bid[0]))}, ${f.bid[1] === 5 ? "the moon" : `${f.bid[1]} (${f.bid[1] * 33} points)`}</p>` : "";
    document.getElementById("auction").innerHTML = bids || contract ? `<ul class="bids">${bids}</ul>${contract}` : "no auction";
  }

  function draw() {
    const frames = DATA.views[view];
    const f = frames[step];
    const k = f.d;
    const seats = [...Array(N).keys()].map((s) => seatBox(f, s)).join("");
    const table = f.table.map(([s, c]) => card(c, `at-${place(s)}${f.won === s ? " winner" : ""}`)).join("");
    const talonCls = f.closed !== null ? " closed" : "";
    const stack = f.talon > 0 ? `<span class="stack">${back()}</span>` : "";
    const upby = f.upby !== null && f.upby !== undefined ? ` title="the trump card, ${esc(seatName(f.upby))}'s"` : "";
    const up = f.up ? `<span class="up"${upby}>${card(f.up, "trump")}</span>` : "";
    const stock = f.stock && f.stock.length
      ? `<div class="stock" id="stock" title="the face-down ${HIDDEN}${N === 2 ? ", top first" : ""} (spectators only)">${f.stock.map((c) => card(c)).join("")}</div>` : "";
    const widow = f.widow && f.widow.cards
      ? `<div class="widow" id="widow">widow (${esc(seatName(f.widow.by))}'s): ${f.widow.cards.map((c) => sym(c)).join(" ")}</div>` : "";
    const showTalon = N === 2 || f.talon > 0 || f.up;
    const label = N === 2 ? "talon" : f.talon > 0 ? HIDDEN : `trump card${upby ? ` (${esc(seatName(f.upby))}'s)` : ""}`;
    const trumps = f.trump ? `trumps <span class="sym s-${f.trump}">${SUIT[f.trump]}</span>` : "";
    const out = f.out ? `, ${f.out} out of play` : "";
    document.getElementById("felt").innerHTML = `${seats}
      <div class="center">
        <div class="talon${talonCls}${showTalon ? "" : " empty"}${N > 2 ? " flat" : ""}" id="talon" data-size="${f.talon}">${up}${stack}
          <span class="count">${label}${f.talon > 0 || N === 2 ? ` ${f.talon}` : ""}${f.closed !== null ? " (closed)" : ""}${out}</span></div>
        <div id="trick" data-won="${f.won ?? ""}">${table}</div>
        <div><div class="trumps" id="trumps" data-trump="${f.trump ?? ""}">${trumps || (N > 2 ? "no trumps yet" : "")}</div>${stock}${widow}</div>
      </div>
      <div class="info" id="say">${words(f.say)}</div>`;
    if (N > 2) tableInfo(f);
    document.getElementById("pos").textContent =
      `step ${step} / ${FRAMES - 1} \u00b7 deal ${k + 1} of ${DATA.deals.length}, action ${f.n}`;
    document.getElementById("slider").value = String(step);
    document.getElementById("deal").value = String(k);
    // the deal so far (never ahead of the step: a seat's view shows only what it knew then)
    const first = DATA.deals[k];
    const log = [];
    for (let i = first; i <= step; i++) {
      log.push(`<li data-step="${i}" class="${i === step ? "now" : ""}">${words(frames[i].say)}</li>`);
    }
    const ol = document.getElementById("log");
    ol.innerHTML = log.join("");
    ol.start = 0;
    ol.querySelectorAll("li").forEach((li) => li.addEventListener("click", () => go(Number(li.dataset.step))));
    const jumps = DATA.tricks[k].map((t, j) =>
      `<a href="#deal=${k + 1}&trick=${j + 1}&view=${view}" data-step="${t}">${j + 1}</a>`).join("");
    const jumpList = document.getElementById("jumps");
    jumpList.innerHTML = jumps || "none yet";
    // a jump goes there at once (its href stays for a new tab or a copied link): waiting for
    // the hashchange event would leave the page a moment behind the click
    jumpList.querySelectorAll("a[data-step]").forEach((a) => a.addEventListener("click", (e) => {
      e.preventDefault();
      go(Number(a.dataset.step));
    }));
    const now = ol.querySelector("li.now");
    if (now && now.scrollIntoView) now.scrollIntoView({ block: "nearest" });
    const hash = `#step=${step}&view=${view}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
    document.body.dataset.step = String(step);
    document.body.dataset.view = view;
  }

  build();
  if (location.hash.length > 1) fromHash(); else draw();
})();
