#!/usr/bin/env node
// node-greedy: a Sixty-Six / Schnapsen agent for the sixtysix-arena, protocol versions 1
// and 2; at the three- and four-handed tables of version 2 it plays the simple policy of
// table.js (three-sitout's deals are two-handed hands: the search below plays them).
//
// Plain Node.js (>= 18), no dependencies. Protocol: protocol/SPEC.md (one JSON object
// per line on stdin/stdout, logs on stderr).
//
// Strategy, in brief:
//  * never declares falsely (only with points >= 66), always exchanges, always marries
//    (40 before 20);
//  * open talon (more than 2 cards left): heuristic play. Follows by weighing the trick's
//    points against the "keep value" of the card spent; leads the card with the best
//    expected trick result against sampled opponent hands (the opponent modelled by the
//    same follow heuristic);
//  * closing: evaluated by sampling the opponent's hand and solving the closed game
//    exactly for each sample; closes only when nearly every sample wins;
//  * talon closed, exhausted, or down to its last two cards: perfect-information
//    Monte Carlo (sample the unseen cards, solve each sample with alpha-beta on game
//    points, pick the action with the best average). Once the talon is exhausted the
//    opponent's hand is known and the solve is exact.
// Randomness comes only from a PRNG seeded by match_start's seed (hello's before any
// match), and the search is bounded by
// node counts (not by the clock), so a given seed always gives the same play.

'use strict';

const NAME = 'node-greedy';
const VERSION = '1.0.0';
const PROTOCOLS = [1, 2]; // the versions spoken; 2 seats three or four at a table
const GAMES = ['sixty-six', 'schnapsen', 'three-pagat', 'three-cutthroat', 'three-sitout',
  'four-pagat', 'kreuzmariage', 'four-bidding'];
const { isTableObservation, decideTable } = require('./table.js');

// ---------------------------------------------------------------------------------------
// Cards: id = suit * 6 + rank, suits C D H S, ranks A T K Q J 9 (strongest first), as in
// the engine. Hands are bitmasks (24 bits).
const SUITS = 'CDHS';
const RANKS = 'ATKQJ9';
const RANK_POINTS = [11, 10, 4, 3, 2, 0];
const P = new Int32Array(24);
for (let c = 0; c < 24; c++) P[c] = RANK_POINTS[c % 6];
const SUIT_MASK = [0x3f, 0x3f << 6, 0x3f << 12, 0x3f << 18];
const A = 0, T = 1, K = 2, Q = 3, J = 4, NINE = 5;
const INF = 1e9;

function cardOf(s) {
  if (typeof s !== 'string' || s.length !== 2) throw new Error(`bad card ${JSON.stringify(s)}`);
  const r = RANKS.indexOf(s[0]);
  const su = SUITS.indexOf(s[1]);
  if (r < 0 || su < 0) throw new Error(`bad card ${JSON.stringify(s)}`);
  return su * 6 + r;
}
function cardStr(c) { return RANKS[c % 6] + SUITS[(c / 6) | 0]; }
function suitOf(c) { return (c / 6) | 0; }
function maskOf(list) {
  let m = 0;
  for (const s of list || []) m |= 1 << cardOf(s);
  return m;
}
function lowBit(m) { return 31 - Math.clz32(m & -m); }
function bits(m) {
  const out = [];
  for (; m; m &= m - 1) out.push(lowBit(m));
  return out;
}
function popcount(m) { let n = 0; for (; m; m &= m - 1) n++; return n; }
// The winner of a trick: 0 if the led card `lc` wins, 1 if the follow `fc` does (F1.5).
function followerWins(lc, fc, trump) {
  const ls = suitOf(lc), fs = suitOf(fc);
  if (ls === fs) return fc < lc;
  return fs === trump;
}

// ---------------------------------------------------------------------------------------
// Deterministic randomness: splitmix64 on BigInt for the seed, mulberry32 for sampling.
const MASK64 = (1n << 64n) - 1n;
function splitmix64(x) {
  let z = (BigInt.asUintN(64, x) + 0x9E3779B97F4A7C15n) & MASK64;
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
  return z ^ (z >> 31n);
}
function fnv1a64(text) {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * 0x100000001b3n) & MASK64;
  }
  return h;
}
function mulberry32(a) {
  return function () {
    a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------
// Rule flags (RULES.md section 5); hello.variant carries every flag, these are fallbacks.
const DEFAULTS = {
  'sixty-six': {
    deck: 24, exchange_rank: '9', marriage_needs_trick: 'to_count', marriage_after_close: false,
    strict_must_head: true, strict_must_trump: true, close_score_basis: 'end',
    failed_close: 'two_or_three', beaten_closer: 'two_or_three', exhausted_rule: 'higher_total',
    schneider_at: 33,
  },
  schnapsen: {
    deck: 20, exchange_rank: 'J', marriage_needs_trick: 'to_count', marriage_after_close: true,
    strict_must_head: true, strict_must_trump: true, close_score_basis: 'at_close',
    failed_close: 'two_or_three', beaten_closer: 'two_or_three', exhausted_rule: 'last_trick_wins',
    schneider_at: 33,
  },
};

function makeConfig(variant) {
  const v = variant && typeof variant === 'object' ? variant : {};
  const base = DEFAULTS[v.name] || (v.deck === 20 ? DEFAULTS.schnapsen : DEFAULTS['sixty-six']);
  const f = (k) => (v[k] !== undefined && v[k] !== null ? v[k] : base[k]);
  const deck = f('deck') === 20 ? 20 : 24;
  let deckMask = 0;
  for (let c = 0; c < 24; c++) if (deck === 24 || c % 6 !== NINE) deckMask |= 1 << c;
  return {
    deck, deckMask,
    exchangeRank: f('exchange_rank') === 'J' ? J : NINE,
    marriageToCount: f('marriage_needs_trick') !== 'to_declare',
    marriageAfterClose: f('marriage_after_close') === true,
    mustHead: f('strict_must_head') !== false,
    mustTrump: f('strict_must_trump') !== false,
    closeAtClose: f('close_score_basis') === 'at_close',
    failedClose: String(f('failed_close')),
    beatenCloserTwo: f('beaten_closer') === 'two',
    lastTrickWins: f('exhausted_rule') === 'last_trick_wins',
    schneiderAt: Number.isInteger(f('schneider_at')) ? f('schneider_at') : 33,
  };
}

// ---------------------------------------------------------------------------------------
// The position as seen by our seat, decoded once per request.
function readPosition(obs, legal, cfg) {
  const me = obs.seat === 1 ? 1 : 0;
  const op = 1 - me;
  const trump = SUITS.indexOf(obs.trump);
  if (trump < 0) throw new Error(`bad trump ${obs.trump}`);
  const hand = maskOf(obs.hand);
  let played = 0;
  const tricks = Array.isArray(obs.tricks) ? obs.tricks : [];
  for (const t of tricks) for (const c of t.cards) played |= 1 << cardOf(c);
  const lead = obs.current_trick ? cardOf(obs.current_trick.card) : -1;
  if (lead >= 0) played |= 1 << lead;
  const turnUp = obs.turn_up ? cardOf(obs.turn_up) : -1;
  const known = Array.isArray(obs.known_cards) ? obs.known_cards : [[], []];
  const oppKnown = maskOf(known[op]) & ~hand & ~played;
  const talon = obs.talon_size | 0;
  // the deck size: hello's flag, unless our hand shows a nine
  let deck = cfg.deck, deckMask = cfg.deckMask;
  if (deck === 20 && (hand | played | oppKnown | (turnUp >= 0 ? 1 << turnUp : 0)) & 0x820820) {
    deck = 24; deckMask = 0xffffff;
  }
  const oppSize = deck - popcount(hand) - 2 * tricks.length - (lead >= 0 ? 1 : 0) - talon;
  const unseen = deckMask & ~hand & ~played & ~oppKnown & ~(turnUp >= 0 ? 1 << turnUp : 0);
  const pts = [obs.points[0] | 0, obs.points[1] | 0];
  const pend = obs.pending ? [obs.pending[0] | 0, obs.pending[1] | 0] : [0, 0];
  const tr = [obs.trick_counts[0] | 0, obs.trick_counts[1] | 0];
  const closed = obs.closed || null;
  // tricks and card points of each seat at the moment of closing (for the scoring)
  const closeTr = [0, 0], closePts = [0, 0];
  if (closed) {
    const n = Math.min(closed.trick | 0, tricks.length);
    for (let i = 0; i < n; i++) {
      const w = tricks[i].winner;
      closeTr[w]++;
      closePts[w] += P[cardOf(tricks[i].cards[0])] + P[cardOf(tricks[i].cards[1])];
    }
    for (const m of obs.marriages || []) {
      if ((m.trick | 0) <= (closed.trick | 0) && closeTr[m.seat] > 0) closePts[m.seat] += m.points | 0;
    }
  }
  const legalSet = new Set(legal);
  return {
    obs, legal, legalSet, cfg, me, op, trump, trumpMask: SUIT_MASK[trump], hand, played, lead,
    turnUp, oppKnown, oppSize, unseen, talon, pts, pend, tr, closed,
    closedBy: closed ? closed.seat : -1, closeTr, closePts,
    strict: !!closed || talon === 0,
    marriageLead: obs.marriage_lead ? SUITS.indexOf(obs.marriage_lead) : -1,
  };
}

// Sample the opponent's hand (and the talon's next face-down card) from the unseen cards.
function sampleDeal(pos, rng) {
  const pool = bits(pos.unseen);
  const need = pos.oppSize - popcount(pos.oppKnown);
  if (need < 0 || need > pool.length) throw new Error(`inconsistent counts: need ${need} of ${pool.length}`);
  for (let i = 0; i < need; i++) {
    const j = i + Math.floor(rng() * (pool.length - i));
    const t = pool[i]; pool[i] = pool[j]; pool[j] = t;
  }
  let opp = pos.oppKnown;
  for (let i = 0; i < need; i++) opp |= 1 << pool[i];
  const rest = pool.slice(need);
  return { opp, faceDown: rest.length ? rest[Math.floor(rng() * rest.length)] : -1, exact: rest.length === 0 };
}

// ---------------------------------------------------------------------------------------
// Exact search of a determinised deal (both hands known) from the strict phase, or from
// the last open trick (talon of 2: the winner then draws `faceDown`, the loser `turnUp`).
// Values are from seat `me`: game points * 1000 + card-point margin (a tie-break).
const S = {
  cfg: null, me: 0, trump: 0, trumpMask: 0,
  h: [0, 0], pts: [0, 0], pend: [0, 0], tr: [0, 0], leader: 0,
  strict: true, openTrick: false, faceDown: -1, turnUp: -1,
  closedBy: -1, closeTr: [0, 0], closePts: [0, 0],
  nodes: 0, deadline: Infinity,
};
const TIMEOUT = new Error('search timeout');

function value(winner, gp) {
  const me = S.me;
  return (winner === me ? gp : -gp) * 1000 + (S.pts[me] - S.pts[1 - me]);
}
function scale(tricks, points) {
  if (!tricks) return 3;
  return points < S.cfg.schneiderAt ? 2 : 1;
}
function closerOut(c) {
  const o = 1 - c;
  const gp = S.cfg.closeAtClose ? scale(S.closeTr[o], S.closePts[o]) : scale(S.tr[o], S.pts[o]);
  return value(c, gp);
}
function failedClose(c) {
  const o = 1 - c, rule = S.cfg.failedClose;
  let gp = 2;
  if (rule === 'three' || !S.closeTr[o]) gp = 3;
  else if (rule === 'by_closer_count') gp = S.pts[c] >= S.cfg.schneiderAt ? 1 : 2;
  return value(o, gp);
}
function declareValue(s) { // s has a trick and at least 66
  const o = 1 - s, c = S.closedBy;
  if (c < 0) return value(s, scale(S.tr[o], S.pts[o]));
  if (c === s) return closerOut(s);
  return value(s, S.cfg.beatenCloserTwo || S.closeTr[s] ? 2 : 3);
}
function playedOut(w) {
  const c = S.closedBy;
  if (c >= 0) return w === c && S.pts[c] >= 66 ? closerOut(c) : failedClose(c);
  if (S.cfg.lastTrickWins) return value(w, 1);
  S.pts[w] += 10;
  const a = S.pts[w], b = S.pts[1 - w];
  let v;
  if (a === b) v = value(w, 0);
  else {
    const winner = a > b ? w : 1 - w, loser = 1 - winner;
    v = value(winner, scale(S.tr[loser], S.pts[loser]));
  }
  S.pts[w] -= 10;
  return v;
}
function marriageAllowed(s) {
  if (S.strict && !S.cfg.marriageAfterClose) return false;
  return S.tr[s] > 0 || S.cfg.marriageToCount;
}
function followMask(hand, lc) {
  if (!S.strict) return hand;
  const same = hand & SUIT_MASK[suitOf(lc)];
  if (same) {
    if (!S.cfg.mustHead) return same;
    return (same & ((1 << lc) - 1)) || same;
  }
  if (S.cfg.mustTrump) {
    const t = hand & S.trumpMask;
    if (t) return t;
  }
  return hand;
}
function marriagePoints(hand, c) {
  const r = c % 6;
  if (r !== K && r !== Q) return 0;
  const partner = r === K ? c + 1 : c - 1;
  if (!((hand >> partner) & 1)) return 0;
  return suitOf(c) === S.trump ? 40 : 20;
}

function leadNode(alpha, beta) {
  if ((++S.nodes & 1023) === 0 && Date.now() > S.deadline) throw TIMEOUT;
  const L = S.leader;
  if (S.tr[L] > 0 && S.pts[L] >= 66) return declareValue(L);
  const hand = S.h[L];
  const mOK = marriageAllowed(L);
  const max = L === S.me;
  let best = max ? -INF : INF;
  for (let m = hand; m; m &= m - 1) {
    const c = lowBit(m);
    const v = tryLead(L, c, mOK ? marriagePoints(hand, c) : 0, alpha, beta);
    if (max) {
      if (v > best) best = v;
      if (best > alpha) alpha = best;
    } else {
      if (v < best) best = v;
      if (best < beta) beta = best;
    }
    if (alpha >= beta) break;
  }
  return best;
}
function tryLead(L, c, mp, alpha, beta) {
  let v;
  if (mp && S.tr[L] > 0) {
    S.pts[L] += mp;
    if (S.pts[L] >= 66) v = declareValue(L);
    else { S.h[L] ^= 1 << c; v = followNode(L, c, alpha, beta); S.h[L] ^= 1 << c; }
    S.pts[L] -= mp;
  } else if (mp) {
    S.pend[L] += mp;
    S.h[L] ^= 1 << c; v = followNode(L, c, alpha, beta); S.h[L] ^= 1 << c;
    S.pend[L] -= mp;
  } else {
    S.h[L] ^= 1 << c; v = followNode(L, c, alpha, beta); S.h[L] ^= 1 << c;
  }
  return v;
}
function followNode(L, c, alpha, beta) {
  const F = 1 - L;
  const max = F === S.me;
  let best = max ? -INF : INF;
  for (let m = followMask(S.h[F], c); m; m &= m - 1) {
    const v = resolve(L, c, lowBit(m), alpha, beta);
    if (max) {
      if (v > best) best = v;
      if (best > alpha) alpha = best;
    } else {
      if (v < best) best = v;
      if (best < beta) beta = best;
    }
    if (alpha >= beta) break;
  }
  return best;
}
function resolve(L, c, f, alpha, beta) {
  const F = 1 - L;
  const w = followerWins(c, f, S.trump) ? F : L;
  const g = P[c] + P[f];
  S.h[F] ^= 1 << f;
  S.pts[w] += g;
  S.tr[w]++;
  let credit = 0;
  if (S.tr[w] === 1 && S.pend[w]) { credit = S.pend[w]; S.pts[w] += credit; S.pend[w] = 0; }
  const saved = S.leader;
  S.leader = w;
  let v;
  if (S.openTrick) {
    S.openTrick = false; S.strict = true;
    S.h[w] |= 1 << S.faceDown; S.h[1 - w] |= 1 << S.turnUp;
    v = leadNode(alpha, beta);
    S.h[w] ^= 1 << S.faceDown; S.h[1 - w] ^= 1 << S.turnUp;
    S.openTrick = true; S.strict = false;
  } else if (S.h[w] === 0) {
    v = playedOut(w);
  } else {
    v = leadNode(alpha, beta);
  }
  S.leader = saved;
  S.pend[w] += credit; S.pts[w] -= credit;
  S.tr[w]--;
  S.pts[w] -= g;
  S.h[F] ^= 1 << f;
  return v;
}

// Load a sampled deal into the search state.
function loadSearch(pos, deal, closing) {
  S.cfg = pos.cfg; S.me = pos.me; S.trump = pos.trump; S.trumpMask = pos.trumpMask;
  S.h[pos.me] = pos.hand; S.h[pos.op] = deal.opp;
  S.pts[0] = pos.pts[0]; S.pts[1] = pos.pts[1];
  S.pend[0] = pos.pend[0]; S.pend[1] = pos.pend[1];
  S.tr[0] = pos.tr[0]; S.tr[1] = pos.tr[1];
  S.leader = pos.lead >= 0 ? pos.op : pos.me;
  if (closing) {
    S.strict = true; S.openTrick = false; S.closedBy = pos.me;
    S.closeTr[0] = pos.tr[0]; S.closeTr[1] = pos.tr[1];
    S.closePts[0] = pos.pts[0]; S.closePts[1] = pos.pts[1];
  } else {
    S.strict = pos.strict;
    S.openTrick = !pos.strict && pos.talon === 2;
    S.closedBy = pos.closedBy;
    S.closeTr[0] = pos.closeTr[0]; S.closeTr[1] = pos.closeTr[1];
    S.closePts[0] = pos.closePts[0]; S.closePts[1] = pos.closePts[1];
  }
  S.faceDown = deal.faceDown; S.turnUp = pos.turnUp;
  if (S.openTrick && (S.faceDown < 0 || S.turnUp < 0)) throw new Error('open trick without talon cards');
}

// Root moves of a lead: {card, marriage points, close?, action to send now}.
function leadMoves(pos, allowClose) {
  const moves = [];
  const plays = pos.legal.filter((a) => a.startsWith('play:')).map((a) => cardOf(a.slice(5)));
  const closes = allowClose && pos.legalSet.has('close') ? [false, true] : [false];
  for (const close of closes) {
    for (const c of plays) {
      let mp = 0;
      const r = c % 6;
      if (pos.marriageLead < 0 && (r === K || r === Q) && pos.legalSet.has('marry:' + SUITS[suitOf(c)])) {
        const partner = r === K ? c + 1 : c - 1;
        if ((pos.hand >> partner) & 1) mp = suitOf(c) === pos.trump ? 40 : 20;
      }
      // marriage comes before closing, closing before the lead
      const action = mp ? 'marry:' + SUITS[suitOf(c)] : close ? 'close' : 'play:' + cardStr(c);
      moves.push({ card: c, mp, close, action });
    }
  }
  return moves;
}

// Perfect-information Monte Carlo over root moves. Returns [{move, mean, wins}], or null
// if the clock ran out before a single sample was done.
function pimc(pos, moves, kind, budget, rng) {
  const sums = new Float64Array(moves.length);
  const wins = new Float64Array(moves.length);
  let samples = 0;
  S.nodes = 0;
  const maxSamples = budget.samples;
  for (let s = 0; s < maxSamples; s++) {
    const deal = sampleDeal(pos, rng);
    const vals = new Float64Array(moves.length);
    try {
      for (let i = 0; i < moves.length; i++) {
        const mv = moves[i];
        loadSearch(pos, deal, kind === 'lead' && mv.close);
        let v;
        if (kind === 'follow') {
          v = resolve(pos.op, pos.lead, mv.card, -INF, INF);
        } else {
          S.leader = pos.me;
          v = tryLead(pos.me, mv.card, mv.mp, -INF, INF);
        }
        vals[i] = v;
      }
    } catch (e) {
      if (e === TIMEOUT) break;
      throw e;
    }
    for (let i = 0; i < moves.length; i++) {
      sums[i] += vals[i];
      if (vals[i] > 500) wins[i]++;
    }
    samples++;
    if (deal.exact && deal.faceDown < 0) break; // nothing unknown: one sample is the truth
    if (S.nodes > budget.nodes && samples >= budget.minSamples) break;
  }
  if (!samples) return null;
  return moves.map((mv, i) => ({ move: mv, mean: sums[i] / samples / 1000, wins: wins[i] / samples, samples }));
}

function bestOf(results) {
  let best = null;
  for (const r of results) if (!best || r.mean > best.mean + 1e-9) best = r;
  return best;
}

// ---------------------------------------------------------------------------------------
// Heuristics for the open phase.

// What a card is worth in hand beyond its points: its power to win later tricks and to
// make marriages. `hand` holds the card; `away` are cards that cannot be drawn (played,
// or known elsewhere).
function keepValue(c, hand, away, pos) {
  const s = suitOf(c), r = c % 6, trump = pos.trump;
  let v;
  if (s === trump) {
    v = [14, 11, 7, 7, 6, 5][r];
    if (r === T && ((away | hand) >> (s * 6 + A)) & 1) v = 13;
    if (r === pos.cfg.exchangeRank && pos.turnUp >= 0 && pos.talon >= 4) v += 4;
  } else if (r === A) v = 4;
  else if (r === T) v = ((away | hand) >> (s * 6 + A)) & 1 ? 4 : 1;
  else v = 0;
  if (r === K || r === Q) {
    const partner = r === K ? c + 1 : c - 1;
    const mp = s === trump ? 40 : 20;
    if ((hand >> partner) & 1) v += mp * 0.75;
    else if (!((away >> partner) & 1) && !pos.strict) v += mp / 10;
  }
  return v;
}

// The trick's worth to seat p when seat w wins it, for points g.
function trickWorth(p, w, g, pos, handAfter) {
  if (w === p) {
    let d = g + (pos.tr[p] === 0 ? pos.pend[p] : 0);
    if (pos.pts[p] + d >= 66) d += 40;
    d += 1; // the lead, and the first draw
    if (handAfter !== undefined) {
      for (let s = 0; s < 4; s++) if (((handAfter >> (s * 6 + K)) & 3) === 3) d += s === pos.trump ? 8 : 4;
    }
    return d;
  }
  let d = g + (pos.tr[w] === 0 ? pos.pend[w] : 0);
  if (pos.pts[w] + d >= 66) d += 40;
  return -d;
}

// The follow that seat p (holding `hand`) would choose in the open phase.
function heurFollowCard(p, hand, lc, choices, away, pos) {
  let best = -1, bestV = -INF;
  for (const f of choices) {
    const w = followerWins(lc, f, pos.trump) ? p : 1 - p;
    const v = trickWorth(p, w, P[lc] + P[f], pos, hand & ~(1 << f)) - keepValue(f, hand, away, pos);
    if (v > bestV + 1e-9) { bestV = v; best = f; }
  }
  return best;
}

function heurLead(pos, plays, rng) {
  const n = 24;
  const deals = [];
  for (let i = 0; i < n; i++) deals.push(sampleDeal(pos, rng).opp);
  let best = plays[0], bestV = -INF;
  const myAway = pos.played | pos.oppKnown;
  for (const c of plays) {
    let total = 0;
    for (const opp of deals) {
      const oppAway = pos.played | pos.hand | (1 << c);
      const f = heurFollowCard(pos.op, opp, c, bits(opp), oppAway, pos);
      const w = followerWins(c, f, pos.trump) ? pos.op : pos.me;
      total += trickWorth(pos.me, w, P[c] + P[f], pos, pos.hand & ~(1 << c));
    }
    const v = total / n - keepValue(c, pos.hand, myAway, pos);
    if (v > bestV + 1e-9) { bestV = v; best = c; }
  }
  return best;
}

// ---------------------------------------------------------------------------------------
// Decisions.
// Closing thresholds (checked in self-play; stricter talon-2 closing was no better).
const TUNE = {
  close2Margin: 0.25, // at talon 2: closing must beat playing on by this many game points
  close2Wins: 0,
  closeWins: 0.9, // earlier: the sampled closed games must be won this often...
  closeMean: 1.2, // ...and be worth this much on average
};
const BUDGET_CLOSE = { samples: 40, minSamples: 12, nodes: 1500000 };
const BUDGET_PLAY = { samples: 60, minSamples: 16, nodes: 2500000 };

// The leads open to us right after closing now (in the draw phase: from the hand).
function closeMoves(pos) {
  if (pos.legal.some((a) => a.startsWith('play:'))) {
    return leadMoves(pos, false).map((m) => ({ ...m, close: true }));
  }
  const marry = pos.cfg.marriageAfterClose && (pos.tr[pos.me] > 0 || pos.cfg.marriageToCount);
  return bits(pos.hand).map((c) => {
    let mp = 0;
    const r = c % 6;
    if (marry && (r === K || r === Q) && (pos.hand >> (r === K ? c + 1 : c - 1)) & 1) mp = suitOf(c) === pos.trump ? 40 : 20;
    return { card: c, mp, close: true };
  });
}

function closeLooksGood(pos, rng) {
  const moves = closeMoves(pos);
  if (!moves.length) return false;
  const res = pimc(pos, moves, 'lead', BUDGET_CLOSE, rng);
  if (!res) return false;
  const r = bestOf(res);
  const yes = r.wins >= TUNE.closeWins && r.mean >= TUNE.closeMean;
  if (yes) log(`closing: best lead ${cardStr(r.move.card)}, mean ${r.mean.toFixed(2)} game points, won in ${(r.wins * 100).toFixed(0)}% of ${r.samples} samples`);
  return yes;
}

function decide(pos, rng) {
  const { legal, legalSet, obs } = pos;
  const me = pos.me;
  if (legalSet.has('declare') && pos.pts[me] >= 66) return 'declare';
  if (legal.length === 1) return legal[0];
  if (legalSet.has('exchange')) return 'exchange';
  const phase = obs.phase;

  if (phase === 'close-offer') return legalSet.has('pass') ? 'pass' : legal[0];

  if (phase === 'draw') {
    if (legalSet.has('close') && closeLooksGood(pos, rng)) return 'close';
    return legalSet.has('draw') ? 'draw' : legal[0];
  }

  const plays = legal.filter((a) => a.startsWith('play:')).map((a) => cardOf(a.slice(5)));

  if (phase === 'follow' || pos.lead >= 0) {
    if (!plays.length) return legal[0];
    if (pos.strict || pos.talon === 2) {
      const moves = plays.map((c) => ({ card: c, mp: 0, close: false, action: 'play:' + cardStr(c) }));
      const res = pimc(pos, moves, 'follow', BUDGET_PLAY, rng);
      if (res) return bestOf(res).move.action;
    }
    const f = heurFollowCard(me, pos.hand, pos.lead, plays, pos.played | pos.oppKnown, pos);
    return 'play:' + cardStr(f);
  }

  // leading
  if (pos.strict || pos.talon === 2) {
    const moves = leadMoves(pos, true);
    if (moves.length) {
      const res = pimc(pos, moves, 'lead', BUDGET_PLAY, rng);
      if (res) {
        let best = bestOf(res);
        // closing is a commitment: prefer not to unless it is clearly better
        if (best.move.close) {
          const open = bestOf(res.filter((r) => !r.move.close));
          if (open && (best.mean < open.mean + TUNE.close2Margin || best.wins < TUNE.close2Wins)) best = open;
        }
        return best.move.action;
      }
    }
  }
  const marriages = legal.filter((a) => a.startsWith('marry:'));
  if (marriages.length) {
    const trumpM = 'marry:' + SUITS[pos.trump];
    return marriages.includes(trumpM) ? trumpM : marriages[0];
  }
  if (legalSet.has('close') && !pos.strict && closeLooksGood(pos, rng)) return 'close';
  if (!plays.length) return legal[0];
  let cands = plays;
  if (pos.marriageLead >= 0) {
    const mk = plays.filter((c) => suitOf(c) === pos.marriageLead);
    if (mk.length) cands = mk;
  }
  return 'play:' + cardStr(heurLead(pos, cands, rng));
}

// ---------------------------------------------------------------------------------------
// Protocol.
let cfg = makeConfig(null);
let seed = 0n;
const matchSeeds = new Map(); // match_id -> the seed match_start gave for it
let moveMs = 1000;
let started = false;
let finished = false;

function log(msg) {
  try { process.stderr.write(`${NAME}: ${msg}\n`); } catch (_) { /* the log is best effort */ }
}
function send(text) {
  if (finished) return;
  process.stdout.write(text + '\n');
}
function finish(code) {
  if (finished) return;
  finished = true;
  process.exitCode = code;
  process.stdin.removeAllListeners('data');
  process.stdin.pause();
  process.stdin.destroy();
  // Node exits once stdout has drained.
}

// The exact digits of an integer field of the top-level object, for values beyond 2^53.
function rawInteger(line, key, parsed) {
  const re = new RegExp(`"${key}"\\s*:\\s*(\\d+)`, 'g');
  let m;
  while ((m = re.exec(line)) !== null) {
    if (Number(m[1]) === parsed) return m[1];
  }
  return Number.isSafeInteger(parsed) ? String(parsed) : null;
}

function parseSeed(msg, line) {
  const digits = typeof msg.seed === 'number' ? rawInteger(line, 'seed', msg.seed) : null;
  try {
    return digits !== null ? BigInt(digits) : BigInt(Math.trunc(Number(msg.seed) || 0));
  } catch (_) {
    return 0n;
  }
}

function onHello(msg, line) {
  // SPEC section 3: answer the highest version offered that we speak (no "protocols": a
  // version-1 referee, which offers only its "protocol")
  const offered = Array.isArray(msg.protocols) ? msg.protocols : [msg.protocol];
  const speak = Math.max(0, ...offered.filter((v) => PROTOCOLS.includes(v)));
  if (!speak) {
    const theirs = msg.protocol === undefined && !Array.isArray(msg.protocols)
      ? 'no version (hello lacks "protocol")'
      : `protocol version ${offered.map((v) => JSON.stringify(v)).join(' or ')}`;
    log(`the referee speaks ${theirs}; this agent speaks protocol version ${PROTOCOLS.join(' or ')}. Exiting with status 2.`);
    finish(2);
    return;
  }
  cfg = makeConfig(msg.variant);
  seed = parseSeed(msg, line);
  const tc = msg.time_control || {};
  if (Number.isFinite(tc.move_ms) && tc.move_ms > 0) moveMs = tc.move_ms;
  started = true;
  const ready = { type: 'ready', protocol: speak, name: NAME, version: VERSION, capacity: 1 };
  if (speak >= 2) ready.games = GAMES;
  send(JSON.stringify(ready));
}

// The two-handed search (also three-sitout's deals): a PRNG from the match seed and the position.
function decideTwoHanded(msg, obs, legal, t0) {
  const key = [obs.deal, (obs.tricks || []).length, obs.phase, (obs.hand || []).join(''),
    obs.current_trick ? obs.current_trick.card : '', legal.join(',')].join('|');
  const base = matchSeeds.has(msg.match_id) ? matchSeeds.get(msg.match_id) : seed;
  const seedHere = splitmix64(base ^ fnv1a64(key));
  const rng = mulberry32(Number(seedHere & 0xffffffffn) | 0);
  const left = Number.isFinite(msg.time_left_ms) ? msg.time_left_ms : moveMs;
  // a safety net only: normal play is bounded by node counts, so it stays deterministic
  S.deadline = t0 + Math.max(20, Math.min(left * 0.5, Math.max(moveMs, 200) * 0.6));
  return decide(readPosition(obs, legal, cfg), rng);
}

function onRequest(msg, line) {
  const legal = Array.isArray(msg.legal) ? msg.legal.filter((a) => typeof a === 'string') : [];
  let idText = Number.isSafeInteger(msg.id) ? String(msg.id) : rawInteger(line, 'id', msg.id);
  if (idText === null) idText = JSON.stringify(msg.id);
  if (!legal.length) {
    log(`request ${idText} has no legal action; not answering`);
    return;
  }
  let action = legal[0];
  const t0 = Date.now();
  try {
    const obs = msg.observation;
    const choice = isTableObservation(obs) ? decideTable(obs, legal) : decideTwoHanded(msg, obs, legal, t0);
    if (legal.includes(choice)) action = choice;
    else log(`chose ${choice}, not in legal ${legal.join(' ')}; playing ${action}`);
  } catch (e) {
    log(`error on request ${idText}: ${e && e.stack ? e.stack : e}; playing ${action}`);
  }
  const ms = Date.now() - t0;
  if (ms > 100) log(`request ${idText} (${msg.observation && msg.observation.phase}, talon ${msg.observation && msg.observation.talon_size}) took ${ms} ms`);
  send(`{"type":"action","id":${idText},"action":${JSON.stringify(action)}}`);
}

function onLine(line) {
  if (finished) return;
  if (line.endsWith('\r')) line = line.slice(0, -1);
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    // SPEC section 1: a line that cannot be parsed means something is badly wrong
    log(`a line from the referee is not JSON (${e.message}): ${JSON.stringify(line.slice(0, 80))}; exiting with status 1`);
    finish(1);
    return;
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) {
    log(`a line from the referee is not a JSON object: ${JSON.stringify(line.slice(0, 80))}; exiting with status 1`);
    finish(1);
    return;
  }
  switch (msg.type) {
    case 'hello':
      onHello(msg, line);
      break;
    case 'request':
      if (!started) log('request before hello; answering anyway');
      onRequest(msg, line);
      break;
    case 'ping': {
      let idText = Number.isSafeInteger(msg.id) ? String(msg.id) : rawInteger(line, 'id', msg.id);
      if (idText === null) idText = JSON.stringify(msg.id);
      send(`{"type":"pong","id":${idText}}`);
      break;
    }
    case 'quit':
      finish(0);
      break;
    case 'match_start': // a seed per match: the same match plays the same on any process
      if (msg.seed !== undefined) matchSeeds.set(msg.match_id, parseSeed(msg, line));
      break;
    case 'match_end':
      matchSeeds.delete(msg.match_id);
      break;
    default:
      break; // deal_start, deal_end and unknown types need no answer
  }
}

function main() {
  let buf = '';
  process.stdout.on('error', (e) => {
    // the referee stopped reading: nothing more to say
    if (!finished) { finished = true; process.exitCode = 0; }
    process.stdin.destroy();
  });
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buf += chunk;
    let i;
    while (!finished && (i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      onLine(line);
    }
  });
  process.stdin.on('end', () => {
    if (!finished && buf.length) onLine(buf); // a last line cut by the end of input
    buf = '';
    finish(process.exitCode || 0);
  });
}

if (require.main === module) main();

module.exports = { makeConfig, readPosition, decide, splitmix64, mulberry32, rawInteger };
