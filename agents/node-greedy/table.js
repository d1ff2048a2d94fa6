// node-greedy at a table of three or four (protocol version 2, protocol/SPEC.md section 12).
//
// A simple card-play policy read from the table observation and the `legal` list only,
// no search and no randomness (a position always gets the same answer):
//  * claims 66 only with at least 66 for its side; shows a marriage whenever one is legal
//    (the trump one first; before trumps are set, the one in its longest suit);
//  * bids only on a strong hand (length and high cards in its longest suit, aces beside),
//    never over its partner and never the moon; names trumps (three-pagat) only with two or
//    more cards of a suit, or one with its ace or ten, among the three cards it has seen;
//  * leads: before trumps are set, the top card of its longest suit (it becomes trumps);
//    then a side-suit card no unplayed card can beat, else its cheapest card;
//  * follows: never overtakes a partner who is winning the trick (team = seat mod 2), and
//    gives him its richest card when it plays last; else beats the winning card with its
//    cheapest winner if it can, else throws its cheapest card.

'use strict';

const SUITS = 'CDHS';
const RANKS = 'ATKQJ987'; // strongest first; the 8s and 7s are kreuzmariage's
const POINTS = [11, 10, 4, 3, 2, 0, 0, 0];

function card(text) {
  const ok = typeof text === 'string' && text.length === 2;
  const rank = ok ? RANKS.indexOf(text[0]) : -1;
  const suit = ok ? SUITS.indexOf(text[1]) : -1;
  if (rank < 0 || suit < 0) throw new Error(`bad card ${JSON.stringify(text)}`);
  return { text, rank, suit, points: POINTS[rank] };
}

// A table observation has `players` and no talon; three-sitout's deals use the two-handed one.
function isTableObservation(obs) {
  return !!obs && typeof obs === 'object' && obs.talon_size === undefined && Number.isInteger(obs.players);
}

// Whether card `c` takes the trick from the winning card `w`.
function beats(c, w, trump) {
  if (c.suit === w.suit) return c.rank < w.rank;
  return c.suit === trump && w.suit !== trump;
}

// The cheapest card to give away: a non-trump before a trump, fewer points, then weaker.
function cheapest(cards, trump) {
  const key = (c) => [c.suit === trump ? 1 : 0, c.points, -c.rank];
  return pickMin(cards, key);
}

function pickMin(cards, key) {
  let best = null, bestKey = null;
  for (const c of cards) {
    const k = key(c);
    if (best === null || less(k, bestKey)) { best = c; bestKey = k; }
  }
  return best;
}

function less(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

// The suit the hand holds most of (more points break a tie, then suit order).
function longestSuit(hand) {
  const len = [0, 0, 0, 0], pts = [0, 0, 0, 0];
  for (const c of hand) { len[c.suit]++; pts[c.suit] += c.points; }
  let best = 0;
  for (let s = 1; s < 4; s++) if (len[s] > len[best] || (len[s] === len[best] && pts[s] > pts[best])) best = s;
  return { suit: best, len, pts };
}

// How strong a hand is to bid on: its longest suit as trumps, and its aces beside.
function strength(hand) {
  const { suit, len, pts } = longestSuit(hand);
  let v = pts[suit] + 8 * len[suit];
  for (const c of hand) if (c.suit !== suit && c.rank === 0) v += 8;
  return { v, len: len[suit] };
}

function chooseBid(obs, legal, hand) {
  const bids = legal.filter((a) => a.startsWith('bid:')).map((a) => Number(a.slice(4))).sort((a, b) => a - b);
  const mayPass = legal.includes('pass');
  const partnerHolds = obs.partner !== null && obs.partner !== undefined && obs.bidder === obs.partner;
  const { v, len } = strength(hand);
  const four = obs.players === 4;
  let want = 0;
  if (len >= 3 && v >= (four ? 45 : 48)) want = 1;
  if (len >= 4 && v >= (four ? 65 : 70)) want = 2;
  if (mayPass && partnerHolds) return 'pass';
  for (let b = want; b >= 1; b--) if (bids.includes(b)) return 'bid:' + b;
  if (mayPass || !bids.length) return mayPass ? 'pass' : legal[0];
  return 'bid:' + bids[0]; // the dealer must bid (all_pass = dealer_forced): the lowest
}

function chooseTrump(legal, hand) {
  const { suit, len, pts } = longestSuit(hand);
  const name = 'trump:' + SUITS[suit];
  if ((len[suit] >= 2 || pts[suit] >= 10) && legal.includes(name)) return name; // two cards, or an A or 10
  return legal.includes('pass') ? 'pass' : legal[0];
}

function chooseMarriage(legal, hand, trump) {
  const marriages = legal.filter((a) => a.startsWith('marry:'));
  if (!marriages.length) return null;
  if (trump >= 0) {
    const t = 'marry:' + SUITS[trump];
    return marriages.includes(t) ? t : marriages[0];
  }
  // before trumps are set a marriage is worth 40 whatever its suit: show the one in the
  // longest suit, whose K or Q then sets trumps
  const { len, pts } = longestSuit(hand);
  let best = marriages[0];
  for (const m of marriages) {
    const s = SUITS.indexOf(m[6]), b = SUITS.indexOf(best[6]);
    if (len[s] > len[b] || (len[s] === len[b] && pts[s] > pts[b])) best = m;
  }
  return best;
}

// The cards no longer in play: every finished trick's and the current trick's.
function playedCards(obs) {
  const gone = new Set();
  for (const t of obs.tricks || []) for (const [, c] of t.cards) gone.add(c);
  if (obs.current_trick) for (const [, c] of obs.current_trick.cards) gone.add(c);
  return gone;
}

function chooseLead(obs, plays, hand, trump) {
  if (trump < 0) { // the first card led sets trumps: the top of the longest suit
    const { suit } = longestSuit(plays);
    return pickMin(plays.filter((c) => c.suit === suit), (c) => [c.rank]);
  }
  const gone = playedCards(obs);
  const mine = new Set(hand.map((c) => c.text));
  const boss = plays.filter((c) => {
    if (c.suit === trump) return false;
    for (let r = 0; r < c.rank; r++) {
      const higher = RANKS[r] + SUITS[c.suit];
      if (!gone.has(higher) && !mine.has(higher)) return false;
    }
    return true;
  });
  if (boss.length) return pickMin(boss, (c) => [-c.points, c.rank]);
  return cheapest(plays, trump);
}

function chooseFollow(obs, plays, trump) {
  const trick = obs.current_trick;
  const w = trick.winning;
  const entry = trick.cards.find(([s]) => s === w);
  const winning = card(entry[1]);
  const active = obs.players - (obs.sitting_out === null || obs.sitting_out === undefined ? 0 : 1);
  const last = trick.cards.length + 1 === active;
  const partnerWins = obs.players === 4 && w !== obs.seat && w % 2 === obs.seat % 2;
  const winners = plays.filter((c) => beats(c, winning, trump));
  const losers = plays.filter((c) => !beats(c, winning, trump));
  if (partnerWins) {
    if (!losers.length) return cheapest(plays, trump);
    if (last) return pickMin(losers, (c) => [-c.points, c.suit === trump ? 1 : 0, -c.rank]);
    return cheapest(losers, trump);
  }
  if (winners.length) return pickMin(winners, (c) => [c.suit === trump ? 1 : 0, c.points, -c.rank]);
  return cheapest(plays, trump);
}

// The answer to one request at a table: always one of `legal`.
function decideTable(obs, legal) {
  const team = Number.isInteger(obs.team) ? obs.team : 0;
  const mine = Array.isArray(obs.points) ? obs.points[team] | 0 : 0;
  if (legal.includes('declare') && mine >= 66) return 'declare';
  if (legal.length === 1) return legal[0];
  const hand = (obs.hand || []).map(card);
  const trump = obs.trump ? SUITS.indexOf(obs.trump) : -1;
  const phase = obs.phase;
  if (phase === 'bid') return chooseBid(obs, legal, hand);
  if (phase === 'name') return chooseTrump(legal, hand);
  if (phase === 'last') return legal.includes('pass') ? 'pass' : legal[0];
  const marriage = chooseMarriage(legal, hand, trump);
  if (marriage) return marriage;
  if (phase === 'meld') return legal.includes('pass') ? 'pass' : legal[0];
  const plays = legal.filter((a) => a.startsWith('play:')).map((a) => card(a.slice(5)));
  if (!plays.length) return legal.includes('pass') ? 'pass' : legal[0];
  const pick = phase === 'follow' && obs.current_trick ? chooseFollow(obs, plays, trump) : chooseLead(obs, plays, hand, trump);
  return 'play:' + pick.text;
}

module.exports = { isTableObservation, decideTable, beats };
