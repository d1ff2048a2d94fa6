/* Playouts of arena/bots/playout.py in C.
 *
 * `run` and `run_to_end` play one two-handed deal with the default playout policy (`policy_action`
 * with `closes=None`) for both seats, applying each move as `State.apply_legal` does, and
 * report the same final facts as the Python loop. `run` stops where the exact solver can
 * take over (`endgame.fast_ok`: the talon closed or exhausted and the phase lead or
 * follow), as
 *
 *     while st.phase != OVER and not fast_ok(st):
 *         st.apply_legal(policy_action(st))
 *
 * and `run_to_end` plays on through the strict phase to the end of the deal, as
 *
 *     while st.phase != OVER:
 *         st.apply_legal(policy_action(st))
 *
 * (`expert._playout_value` without `solve_tail`). `run_lookahead` plays to the end with
 * lookahead instead of the policy (`fast_playout.lookahead_action`: each open-phase card
 * chosen by playing out every candidate, one or more levels deep; `reference_lookahead`
 * is its Python twin). arena/bots/fast_playout.py packs a
 * `State` for them and tests/test_cplayout.py checks each against its Python loop. Only
 * variants of `endgame._fast_variant` (no out at any time, no exchange after the close but
 * by the opponent's offer) are modelled: the Python wrapper builds no `Rules` for any other.
 *
 * Cards are ids 0..23: suit c / 6, rank c % 6 in the order A T K Q J 9 (a lower id is
 * stronger within its suit). Hands are 24-bit masks. Action ids are those of
 * arena/game/actions.py. The module holds no mutable global state: the `Rules` type lives
 * in the module's state, and the file-level arrays are constant tables.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { LEAD, FOLLOW, DRAW_PENDING, CLOSE_OFFER, OVER };           /* State.phase */
enum { MARRY = 24, EXCHANGE = 28, CLOSE = 29, DECLARE = 30, DRAW = 31 }; /* action ids */
enum { ACE, TEN, KING, QUEEN };                                   /* rank indices */

#define ALL_CARDS 0xFFFFFFu
#define MARRIAGE_BITS 0x41041u /* bit 6 * s of (h >> KING) & (h >> QUEEN): a marriage in suit s */
#define SUIT_MASK(s) (0x3Fu << (6 * (s)))
#define CLOSE_PROBE_COUNT 30 /* playout.CLOSE_PROBE_COUNT */
#define MAX_ACTIONS 1000     /* a guard: a real deal ends or closes in well under 100 actions */

static const int POINTS[24] = {11, 10, 4, 3, 2, 0, 11, 10, 4, 3, 2, 0,
                               11, 10, 4, 3, 2, 0, 11, 10, 4, 3, 2, 0};
/* playout._KEEP_TRUMP: what a trump of each rank is worth keeping. */
static const int KEEP_TRUMP[6] = {14, 11, 7, 7, 6, 5};

/* -- rules ------------------------------------------------------------------------------ */

/* The flags `Rules(flags)` takes, in this order (fast_playout.RULE_FLAGS builds them).
 * Other flags cannot change a move or a result in this loop (see fast_playout.py). */
enum {
    F_CLOSING,                /* closing: 0/1 */
    F_CLOSE_BEFORE_DRAW,      /* close_before_draw: 0/1 */
    F_CLOSE_MIN_TALON,        /* close_min_talon: 2 or 4 */
    F_CLOSE_ON_FIRST_LEAD,    /* close_on_first_lead: 0/1 */
    F_EXCHANGE_NEEDS_TRICK,   /* exchange_needs_trick: 0/1 */
    F_EXCHANGE_MIN_TALON,     /* exchange_min_talon: 2 or 4 */
    F_EXCHANGE_ON_FIRST_LEAD, /* exchange_on_first_lead: 0/1 */
    F_EXCHANGE_ON_CLOSE,      /* exchange_on_close: 0 none, 1 opponent (any_with_trick unsupported) */
    F_MARRIAGE_TO_DECLARE,    /* marriage_needs_trick: 0 to_count, 1 to_declare */
    F_MARRIAGE_AFTER_CLOSE,   /* marriage_after_close: 0/1 */
    F_KING_ONLY,              /* marriage_lead: 0 either, 1 king_only */
    F_MUST_HEAD,              /* strict_must_head: 0/1 */
    F_MUST_TRUMP,             /* strict_must_trump: 0/1 */
    F_AUTO_OUT,               /* auto_out: 0/1 */
    F_SCHNEIDER_AT,           /* schneider_at: 0..120 */
    F_AT_CLOSE,               /* close_score_basis: 0 end, 1 at_close */
    F_FAILED_CLOSE,           /* failed_close: 0 two_or_three, 1 three, 2 by_closer_count */
    F_BEATEN_TWO,             /* beaten_closer: 0 two_or_three, 1 two */
    F_FALSE_TWO,              /* false_claim: 0 two_or_three, 1 two */
    F_LAST_TRICK_WINS,        /* exhausted_rule: 0 higher_total, 1 last_trick_wins */
    N_FLAGS
};
enum { FAILED_TWO_OR_THREE, FAILED_THREE, FAILED_BY_COUNT };

/* Each flag's name and allowed range, for the error messages of `Rules`. */
static const struct {
    const char *name;
    int lo, hi;
} FLAG_SPEC[N_FLAGS] = {
    {"closing", 0, 1},
    {"close_before_draw", 0, 1},
    {"close_min_talon", 0, 24},
    {"close_on_first_lead", 0, 1},
    {"exchange_needs_trick", 0, 1},
    {"exchange_min_talon", 0, 24},
    {"exchange_on_first_lead", 0, 1},
    {"exchange_on_close", 0, 1},
    {"marriage_needs_trick", 0, 1},
    {"marriage_after_close", 0, 1},
    {"marriage_lead", 0, 1},
    {"strict_must_head", 0, 1},
    {"strict_must_trump", 0, 1},
    {"auto_out", 0, 1},
    {"schneider_at", 0, 120},
    {"close_score_basis", 0, 1},
    {"failed_close", 0, 2},
    {"beaten_closer", 0, 1},
    {"false_claim", 0, 1},
    {"exhausted_rule", 0, 1},
};

typedef struct {
    PyObject_HEAD
    int f[N_FLAGS];
} RulesObject;

/* -- the deal ----------------------------------------------------------------------------- */

/* The fields of `State` the loop reads or writes (two seats), plus the result once over. */
typedef struct {
    const int *f; /* the rules' flags */
    int trump, ex_card;
    uint32_t hand[2];
    int stock[24], n_stock, stock_pos;
    int turn_up, strict, phase, to_act, leader, lead_card, step, marriage_suit;
    int closed_by, ct[2], cp[2]; /* ct/cp: close_tricks/close_points once closed_by >= 0 */
    int tricks[2], points[2], mcredit[2], mpending[2], n_tricks;
    int winner, game_points; /* once phase == OVER; winner -1 for a drawn hand */
} Deal;

static inline int lowest(uint32_t m) { /* the lowest set bit's index; m != 0 */
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctz(m);
#else
    int i = 0;
    while (!(m & 1u)) {
        m >>= 1;
        i++;
    }
    return i;
#endif
}

static inline int popcount(uint32_t m) {
    int n = 0;
    for (; m; m &= m - 1) n++;
    return n;
}

static inline int count(const Deal *d, int s) { return d->points[s] + d->mcredit[s]; } /* State.count */

static inline int talon_size(const Deal *d) { return d->n_stock - d->stock_pos + (d->turn_up >= 0); }

static inline uint32_t marriages(uint32_t h) { return (h >> KING) & (h >> QUEEN) & MARRIAGE_BITS; }

/* -- scoring (State._scale, _finish, _closer_out, _failed_close, _declare, ...) ------------- */

static void finish(Deal *d, int winner, int gp) {
    d->winner = winner;
    d->game_points = gp;
    d->phase = OVER;
    d->to_act = -1;
}

static int scale(const Deal *d, int tricks, int points) {
    if (!tricks) return 3;
    return points < d->f[F_SCHNEIDER_AT] ? 2 : 1;
}

/* The close facts below are those of a close made in this run, or (`run_to_end`) those
 * given for a deal closed before it; `run` stops at once in a deal closed before it. */
static void closer_out(Deal *d, int c) {
    int o = c ^ 1;
    int gp = d->f[F_AT_CLOSE] ? scale(d, d->ct[o], d->cp[o]) : scale(d, d->tricks[o], count(d, o));
    finish(d, c, gp);
}

static void failed_close(Deal *d, int c) {
    int o = c ^ 1, rule = d->f[F_FAILED_CLOSE], gp;
    if (rule == FAILED_THREE || !d->ct[o]) gp = 3;
    else if (rule == FAILED_BY_COUNT) gp = count(d, c) >= d->f[F_SCHNEIDER_AT] ? 1 : 2;
    else gp = 2;
    finish(d, o, gp);
}

static void declare(Deal *d, int s) {
    int o = s ^ 1, c = d->closed_by;
    if (count(d, s) >= 66) {
        if (c < 0) finish(d, s, scale(d, d->tricks[o], count(d, o)));
        else if (c == s) closer_out(d, s);
        else finish(d, s, (d->f[F_BEATEN_TWO] || d->ct[s]) ? 2 : 3);
    } else if (c == s) {
        failed_close(d, s);
    } else {
        finish(d, o, (d->f[F_FALSE_TWO] || d->tricks[o]) ? 2 : 3);
    }
}

/* Every card has been played; w took the last trick. */
static void settle_played_out(Deal *d, int w) {
    int c = d->closed_by;
    if (c >= 0) {
        if (w == c && count(d, c) >= 66) closer_out(d, c);
        else failed_close(d, c);
    } else if (d->f[F_LAST_TRICK_WINS]) {
        finish(d, w, 1);
    } else {
        d->points[w] += 10;
        int a = count(d, w), b = count(d, w ^ 1);
        if (a == b) {
            finish(d, -1, 0);
        } else {
            int winner = a > b ? w : w ^ 1, loser = winner ^ 1;
            finish(d, winner, scale(d, d->tricks[loser], count(d, loser)));
        }
    }
}

static void auto_out(Deal *d) {
    int s = d->to_act;
    if ((d->phase == LEAD || d->phase == DRAW_PENDING) && d->tricks[s] && count(d, s) >= 66) declare(d, s);
}

/* -- transitions (State.apply_legal and its helpers) --------------------------------------- */

static void draw(Deal *d, int w) {
    int pos = d->stock_pos;
    d->hand[w] |= 1u << d->stock[pos];
    if (pos + 1 < d->n_stock) {
        d->hand[w ^ 1] |= 1u << d->stock[pos + 1];
        d->stock_pos = pos + 2;
    } else { /* the turn-up goes to the other seat: the talon is exhausted */
        d->hand[w ^ 1] |= 1u << d->turn_up;
        d->turn_up = -1;
        d->stock_pos = pos + 1;
        d->strict = 1;
    }
}

static void finish_trick(Deal *d, int f, int c) {
    int lead = d->leader, lc = d->lead_card, w;
    d->hand[f] ^= 1u << c;
    if (c / 6 == lc / 6) w = lc < c ? lead : f;
    else if (c / 6 == d->trump) w = f;
    else w = lead;
    d->points[w] += POINTS[lc] + POINTS[c];
    d->tricks[w] += 1;
    if (d->tricks[w] == 1 && d->mpending[w]) {
        d->mcredit[w] += d->mpending[w];
        d->mpending[w] = 0;
    }
    d->n_tricks += 1;
    d->lead_card = -1;
    d->leader = d->to_act = w;
    if (!d->hand[w]) {
        settle_played_out(d, w);
        return;
    }
    d->phase = LEAD;
    if (!d->strict) {
        int ts = talon_size(d);
        if (d->f[F_CLOSE_BEFORE_DRAW] && d->f[F_CLOSING] && ts > 2 && ts >= d->f[F_CLOSE_MIN_TALON])
            d->phase = DRAW_PENDING;
        else
            draw(d, w);
    }
    if (d->f[F_AUTO_OUT]) auto_out(d);
}

static void close_talon(Deal *d, int s) {
    int o = s ^ 1;
    d->closed_by = s;
    d->strict = 1;
    for (int i = 0; i < 2; i++) {
        d->ct[i] = d->tricks[i];
        d->cp[i] = count(d, i);
    }
    d->phase = LEAD;
    d->step = 3;
    if (d->f[F_EXCHANGE_ON_CLOSE] && d->turn_up >= 0 && (d->hand[o] >> d->ex_card & 1) &&
        talon_size(d) >= d->f[F_EXCHANGE_MIN_TALON]) {
        d->phase = CLOSE_OFFER;
        d->to_act = o;
    }
}

/* Apply action a (legal). */
static void apply(Deal *d, int a) {
    int s = d->to_act;
    if (a < MARRY) {
        if (d->phase == LEAD) {
            d->hand[s] ^= 1u << a;
            d->lead_card = a;
            d->step = 0;
            d->marriage_suit = -1;
            d->phase = FOLLOW;
            d->to_act = s ^ 1;
        } else {
            finish_trick(d, s, a);
        }
    } else if (a < EXCHANGE) {
        int suit = a - MARRY, pts = suit == d->trump ? 40 : 20;
        if (d->tricks[s]) d->mcredit[s] += pts;
        else d->mpending[s] += pts;
        d->marriage_suit = suit;
        d->step = 2;
        if (d->f[F_AUTO_OUT]) auto_out(d);
    } else if (a == EXCHANGE) {
        d->hand[s] ^= (1u << d->ex_card) | (1u << d->turn_up);
        d->turn_up = d->ex_card;
        if (d->phase == LEAD) {
            d->step = 1;
        } else if (d->phase == CLOSE_OFFER) { /* the closer's turn goes on */
            d->phase = LEAD;
            d->to_act = d->closed_by;
        }
    } else if (a == CLOSE) {
        close_talon(d, s);
    } else if (a == DECLARE) {
        declare(d, s);
    } else { /* DRAW */
        draw(d, s);
        d->phase = LEAD;
        if (d->f[F_AUTO_OUT]) auto_out(d);
    }
}

/* -- the policy (playout.py) --------------------------------------------------------------- */

/* _strict_lead: the richest card o cannot beat, else the cheapest (side suits first). */
static int strict_lead(uint32_t h, uint32_t o, int trump) {
    int best = -1, best_key = 1 << 30;
    uint32_t tm = SUIT_MASK(trump);
    for (uint32_t m = h; m; m &= m - 1) {
        int c = lowest(m), t = c / 6 == trump, key;
        uint32_t same = o & SUIT_MASK(c / 6);
        int sure = same ? !(same & ((1u << c) - 1)) : (t || !(o & tm));
        key = sure ? t - 4 * POINTS[c] : 1000 + 2 * POINTS[c] + t;
        if (key < best_key) {
            best = c;
            best_key = key;
        }
    }
    return best;
}

/* _strict_follow: the cheapest legal winner, else the cheapest legal card. */
static int strict_follow(uint32_t h, int lc, int trump, int head, int must_trump) {
    int ls = lc / 6, best = -1, best_key = 1 << 30;
    uint32_t same = h & SUIT_MASK(ls), legal;
    if (same) {
        legal = same;
        if (head && (same & ((1u << lc) - 1))) legal = same & ((1u << lc) - 1);
    } else if (must_trump && (h & SUIT_MASK(trump))) {
        legal = h & SUIT_MASK(trump);
    } else {
        legal = h;
    }
    for (uint32_t m = legal; m; m &= m - 1) {
        int c = lowest(m), cs = c / 6, t = cs == trump;
        int key = ((cs == ls ? c < lc : t) ? 0 : 1000) + 2 * POINTS[c] + t;
        if (key < best_key) {
            best = c;
            best_key = key;
        }
    }
    return best;
}

/* _closed_sim: greedy strict play of a deal the closer (hand hc, count pc, tricks tc,
 * pending marriage points mc) has just closed and leads; does the closer win it? */
static int closed_sim(const int *f, int trump, uint32_t hc, uint32_t ho, int pc, int po, int tc, int to, int mc,
                      int mo) {
    int head = f[F_MUST_HEAD], must_trump = f[F_MUST_TRUMP], closer_leads = 1;
    for (;;) {
        uint32_t hl, hf;
        if (closer_leads) {
            if (tc && pc >= 66) return 1;
            hl = hc;
            hf = ho;
        } else {
            if (to && po >= 66) return 0;
            hl = ho;
            hf = hc;
        }
        int lc = strict_lead(hl, hf, trump);
        if (lc < 0) return 0; /* unreachable: both hands hold as many cards */
        int fc = strict_follow(hf, lc, trump, head, must_trump);
        if (fc < 0) return 0; /* unreachable, as above */
        int ls = lc / 6, fs = fc / 6;
        int follower_wins = fs == ls ? fc < lc : fs == trump;
        int g = POINTS[lc] + POINTS[fc];
        if (closer_leads) {
            hc ^= 1u << lc;
            ho ^= 1u << fc;
        } else {
            ho ^= 1u << lc;
            hc ^= 1u << fc;
        }
        int closer_won = closer_leads != follower_wins;
        if (closer_won) {
            pc += g + (tc ? 0 : mc);
            tc += 1;
        } else {
            po += g + (to ? 0 : mo);
            to += 1;
        }
        if (!hc) return closer_won && pc >= 66;
        closer_leads = closer_won;
    }
}

/* may_close: closing allowed, a count (pending marriages included) of CLOSE_PROBE_COUNT
 * and enough talon. */
static int may_close(const Deal *d, int s) {
    int cnt = count(d, s) + (d->tricks[s] ? 0 : d->mpending[s]);
    if (cnt < CLOSE_PROBE_COUNT || !d->f[F_CLOSING]) return 0;
    return talon_size(d) >= d->f[F_CLOSE_MIN_TALON] && (d->f[F_CLOSE_ON_FIRST_LEAD] || d->n_tricks > 0);
}

static int close_pays(const Deal *d, int s) {
    int o = s ^ 1;
    return may_close(d, s) && closed_sim(d->f, d->trump, d->hand[s], d->hand[o], count(d, s), count(d, o),
                                         d->tricks[s], d->tricks[o], d->mpending[s], d->mpending[o]);
}

/* State._can_exchange (exchange_on_close is never any_with_trick here). */
static int can_exchange(const Deal *d, int s) {
    if (d->turn_up < 0 || !(d->hand[s] >> d->ex_card & 1)) return 0;
    if (d->n_stock - d->stock_pos + 1 < d->f[F_EXCHANGE_MIN_TALON]) return 0;
    if (d->closed_by >= 0) return 0;
    if (d->f[F_EXCHANGE_NEEDS_TRICK] && !d->tricks[s]) return 0;
    if (!d->f[F_EXCHANGE_ON_FIRST_LEAD] && d->n_tricks == 0) return 0;
    return 1;
}

/* _open_lead_key: trumps last, then marriage halves, else by points. */
static int open_lead_key(int c, uint32_t h, int trump) {
    int r = c % 6, key = (c / 6 == trump ? 1000 : 0) + 2 * POINTS[c];
    if ((r == KING && (h >> (c + 1) & 1)) || (r == QUEEN && (h >> (c - 1) & 1))) key += 100;
    return key;
}

static int cheapest_open_lead(uint32_t h, int trump) {
    int best = -1, best_key = 1 << 30;
    for (uint32_t m = h; m; m &= m - 1) {
        int c = lowest(m), key = open_lead_key(c, h, trump);
        if (key < best_key) {
            best = c;
            best_key = key;
        }
    }
    return best;
}

/* _policy_lead. The Python builds legal_actions() to find an exchange or a marriage; the
 * same two tests of State.legal_actions are made here directly. */
static int policy_lead(const Deal *d, int s) {
    uint32_t h = d->hand[s];
    int trump = d->trump, ms = d->marriage_suit, step = d->step;
    if (d->tricks[s] && count(d, s) >= 66) return DECLARE;
    if (ms >= 0) {
        if (!d->strict && step <= 2 && close_pays(d, s)) return CLOSE;
        int k = ms * 6 + KING;
        return d->f[F_KING_ONLY] ? k : k + 1;
    }
    int may_exchange = step == 0 && d->turn_up >= 0 && (h >> d->ex_card & 1);
    if (may_exchange || (step <= 1 && marriages(h))) {
        if (step == 0 && can_exchange(d, s)) return EXCHANGE;
        if (step <= 1 && (!d->strict || d->f[F_MARRIAGE_AFTER_CLOSE]) &&
            (d->tricks[s] || !d->f[F_MARRIAGE_TO_DECLARE])) {
            uint32_t pairs = marriages(h); /* 40 first, else the first suit */
            if (pairs >> (6 * trump) & 1) return MARRY + trump;
            if (pairs) return MARRY + lowest(pairs) / 6;
        }
    }
    if (!d->strict && step <= 2 && close_pays(d, s)) return CLOSE;
    if (!d->strict) return cheapest_open_lead(h, trump);
    return strict_lead(h, d->hand[s ^ 1], trump);
}

/* _gone: cards in neither hand and not in the talon. */
static uint32_t gone_cards(const Deal *d) {
    uint32_t live = d->hand[0] | d->hand[1];
    if (d->turn_up >= 0) live |= 1u << d->turn_up;
    for (int i = d->stock_pos; i < d->n_stock; i++) live |= 1u << d->stock[i];
    return ALL_CARDS & ~live;
}

/* _keep: what card c is worth in hand h beyond its points. Doubles, as the Python's
 * floats (every value is a multiple of 0.5, so both are exact). */
static double keep(const Deal *d, int c, uint32_t h, uint32_t gone) {
    int s = c / 6, r = c % 6;
    double v;
    if (s == d->trump) {
        v = KEEP_TRUMP[r];
        if (r == TEN && ((gone | h) >> (s * 6) & 1)) v = 13;
        if (c == d->ex_card && d->turn_up >= 0 && talon_size(d) >= 4) v += 4;
    } else if (r == ACE) {
        v = 4;
    } else if (r == TEN) {
        v = ((gone | h) >> (s * 6) & 1) ? 4 : 1;
    } else {
        v = 0;
    }
    if (r == KING || r == QUEEN) {
        int partner = r == KING ? c + 1 : c - 1, mp = s == d->trump ? 40 : 20;
        if (h >> partner & 1) v += 0.75 * mp;
        else if (!(gone >> partner & 1)) v += mp / 10.0;
    }
    return v;
}

/* _follow_kv: the open-phase follow weighing the trick against the card's keep value;
 * the first best card in card order. */
static int follow_kv(const Deal *d, int s) {
    int lc = d->lead_card, trump = d->trump, lead = d->leader, ls = lc / 6;
    uint32_t h = d->hand[s], gone = gone_cards(d) | 1u << lc;
    int pend_s = d->tricks[s] ? 0 : d->mpending[s];
    int pend_l = d->tricks[lead] ? 0 : d->mpending[lead];
    int cnt_s = count(d, s), cnt_l = count(d, lead), pl = POINTS[lc];
    int best = -1;
    double best_v = -1e9;
    for (uint32_t m = h; m; m &= m - 1) {
        int f = lowest(m), fs = f / 6, g = pl + POINTS[f], x;
        if (fs == ls ? f < lc : fs == trump) {
            x = g + pend_s;
            if (cnt_s + x >= 66) x += 40;
            x += 1;
            for (uint32_t pairs = marriages(h & ~(1u << f)); pairs; pairs &= pairs - 1)
                x += lowest(pairs) / 6 == trump ? 8 : 4;
        } else {
            x = g + pend_l;
            if (cnt_l + x >= 66) x += 40;
            x = -x;
        }
        double val = x - keep(d, f, h, gone);
        if (val > best_v) {
            best = f;
            best_v = val;
        }
    }
    return best;
}

/* policy_action(st) with closes=None, for a fast variant (no out at any time). */
static int policy(const Deal *d) {
    int s = d->to_act;
    switch (d->phase) {
    case FOLLOW:
        if (d->strict)
            return strict_follow(d->hand[s], d->lead_card, d->trump, d->f[F_MUST_HEAD], d->f[F_MUST_TRUMP]);
        return follow_kv(d, s);
    case LEAD:
        return policy_lead(d, s);
    case DRAW_PENDING:
        if (d->tricks[s] && count(d, s) >= 66) return DECLARE;
        return close_pays(d, s) ? CLOSE : DRAW;
    default: /* CLOSE_OFFER */
        return EXCHANGE;
    }
}

/* -- Python interface ---------------------------------------------------------------------- */

typedef struct {
    PyTypeObject *rules_type;
} ModuleState;

static PyObject *Rules_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *flags;
    static char *kwlist[] = {"flags", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Rules", kwlist, &flags)) return NULL;
    if (!PyTuple_Check(flags)) {
        PyErr_Format(PyExc_TypeError, "Rules: flags must be a tuple of %d ints, got %.100s", N_FLAGS,
                     Py_TYPE(flags)->tp_name);
        return NULL;
    }
    if (PyTuple_GET_SIZE(flags) != N_FLAGS) {
        PyErr_Format(PyExc_ValueError, "Rules: flags must be a tuple of %d ints, got %zd", N_FLAGS,
                     PyTuple_GET_SIZE(flags));
        return NULL;
    }
    int f[N_FLAGS];
    for (int i = 0; i < N_FLAGS; i++) {
        long x = PyLong_AsLong(PyTuple_GET_ITEM(flags, i));
        if (x == -1 && PyErr_Occurred()) return NULL;
        if (x < FLAG_SPEC[i].lo || x > FLAG_SPEC[i].hi) {
            PyErr_Format(PyExc_ValueError, "Rules: flag %d (%s) must be in %d..%d, got %ld", i, FLAG_SPEC[i].name,
                         FLAG_SPEC[i].lo, FLAG_SPEC[i].hi, x);
            return NULL;
        }
        f[i] = (int)x;
    }
    RulesObject *self = (RulesObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    memcpy(self->f, f, sizeof f);
    return (PyObject *)self;
}

static void Rules_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free(self);
    Py_DECREF(tp); /* instances of a heap type own a reference to it */
}

static PyObject *Rules_get_flags(PyObject *self, void *Py_UNUSED(closure)) {
    const RulesObject *r = (const RulesObject *)self;
    PyObject *t = PyTuple_New(N_FLAGS);
    if (!t) return NULL;
    for (int i = 0; i < N_FLAGS; i++) {
        PyObject *x = PyLong_FromLong(r->f[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *Rules_repr(PyObject *self) {
    PyObject *flags = Rules_get_flags(self, NULL);
    if (!flags) return NULL;
    PyObject *s = PyUnicode_FromFormat("Rules(%R)", flags);
    Py_DECREF(flags);
    return s;
}

static PyGetSetDef Rules_getset[] = {
    {"flags", Rules_get_flags, NULL, "The flags, as given.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot Rules_slots[] = {
    {Py_tp_new, Rules_new},
    {Py_tp_dealloc, Rules_dealloc},
    {Py_tp_repr, Rules_repr},
    {Py_tp_getset, Rules_getset},
    {Py_tp_doc, "Rules(flags): a variant's flags as small ints (fast_playout.RULE_FLAGS), checked once."},
    {0, NULL},
};

static PyType_Spec Rules_spec = {
    "arena.bots._cplayout.Rules",
    sizeof(RulesObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    Rules_slots,
};

/* Read an int argument in lo..hi (a ValueError naming it and the function otherwise). */
static int arg_int(PyObject *o, const char *fn, const char *name, long lo, long hi, int *out) {
    long x = PyLong_AsLong(o);
    if (x == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: %s is out of range", fn, name);
        }
        return -1;
    }
    if (x < lo || x > hi) {
        PyErr_Format(PyExc_ValueError, "%s: %s must be in %ld..%ld, got %ld", fn, name, lo, hi, x);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int bad_state(const char *fn, const char *msg) {
    PyErr_Format(PyExc_ValueError, "%s: %s", fn, msg);
    return -1;
}

/* The consistency that makes every step below safe (a real State always has it): the
 * talon, the hand sizes and the seats fit the phase. */
static int check_deal(const Deal *d, const char *fn) {
    int ph = d->phase, s = d->to_act;
    int n_to_act = popcount(d->hand[s]), n_other = popcount(d->hand[s ^ 1]);
    if (!d->strict) {
        if (d->turn_up < 0 || (d->n_stock - d->stock_pos) % 2 != 1)
            return bad_state(fn, "an open talon needs a turn-up and an odd number of face-down cards");
        if (d->closed_by >= 0) return bad_state(fn, "a closed deal must be strict");
    } else if (d->closed_by < 0 && (d->turn_up >= 0 || d->stock_pos != d->n_stock)) {
        return bad_state(fn, "a strict deal must be closed or have an exhausted talon");
    }
    if (ph == FOLLOW) {
        if (d->lead_card < 0) return bad_state(fn, "phase follow needs a lead card");
        if (d->leader != (s ^ 1)) return bad_state(fn, "in phase follow the leader must be the other seat");
        if (n_to_act != n_other + 1) return bad_state(fn, "in phase follow the follower must hold one card more");
        return 0;
    }
    if (n_to_act != n_other || !n_to_act) return bad_state(fn, "both hands must hold as many cards, at least one");
    if (ph == CLOSE_OFFER) {
        if (!d->strict || d->closed_by != (s ^ 1) || d->turn_up < 0)
            return bad_state(fn, "phase close-offer needs a close by the other seat and a turn-up");
        return 0;
    }
    if (d->leader != s) return bad_state(fn, "in phases lead and draw the leader must be the seat to act");
    if (ph == DRAW_PENDING && d->strict) return bad_state(fn, "phase draw needs an open talon");
    if (ph == LEAD && d->marriage_suit >= 0 && (d->hand[s] >> (d->marriage_suit * 6 + KING) & 3) != 3)
        return bad_state(fn, "a declared marriage's king and queen must be in the leader's hand");
    return 0;
}

static PyObject *int_tuple(const int *v, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

#define N_ARGS 25     /* run's arguments: the rules and the deal */
#define N_ARGS_END 29 /* run_to_end's: the same, then the close facts ct0, ct1, cp0, cp1 */

/* Read the rules and the deal (the N_ARGS arguments both functions begin with) into d,
 * with no close facts yet; -1 with an exception set for a bad argument. */
static int parse_deal(PyObject *module, PyObject *const *args, const char *fn, Deal *d) {
    ModuleState *ms = PyModule_GetState(module);
    if (!PyObject_TypeCheck(args[0], ms->rules_type)) {
        PyErr_Format(PyExc_TypeError, "%s: rules must be a Rules object, got %.100s", fn, Py_TYPE(args[0])->tp_name);
        return -1;
    }
    d->f = ((RulesObject *)args[0])->f;

    /* The talon: a tuple (or list) of card ids. */
    PyObject *stock = PySequence_Fast(args[5], "stock must be a tuple of card ids");
    if (!stock) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) { /* name the function, as the other errors do */
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: stock must be a tuple of card ids, got %.100s", fn,
                         Py_TYPE(args[5])->tp_name);
        }
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(stock);
    if (n > 24) {
        Py_DECREF(stock);
        PyErr_Format(PyExc_ValueError, "%s: stock holds %zd cards, at most 24", fn, n);
        return -1;
    }
    d->n_stock = (int)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (arg_int(PySequence_Fast_GET_ITEM(stock, i), fn, "a stock card", 0, 23, &d->stock[i]) < 0) {
            Py_DECREF(stock);
            return -1;
        }
    }
    Py_DECREF(stock);

    /* The other arguments, each in its range (args[5], the stock, is read above). */
    int h0, h1;
    const struct {
        const char *name;
        long lo, hi;
        int *out;
    } spec[N_ARGS] = {
        {NULL, 0, 0, NULL}, /* the rules */
        {"trump", 0, 3, &d->trump},
        {"ex_card", 0, 23, &d->ex_card},
        {"h0", 0, ALL_CARDS, &h0},
        {"h1", 0, ALL_CARDS, &h1},
        {NULL, 0, 0, NULL}, /* the stock */
        {"stock_pos", 0, d->n_stock, &d->stock_pos},
        {"turn_up", -1, 23, &d->turn_up},
        {"strict", 0, 1, &d->strict},
        {"phase", 0, OVER, &d->phase},
        {"to_act", 0, 1, &d->to_act},
        {"leader", 0, 1, &d->leader},
        {"lead_card", -1, 23, &d->lead_card},
        {"step", 0, 3, &d->step},
        {"marriage_suit", -1, 3, &d->marriage_suit},
        {"closed_by", -1, 1, &d->closed_by},
        {"t0", 0, 99, &d->tricks[0]},
        {"t1", 0, 99, &d->tricks[1]},
        {"pts0", 0, 999, &d->points[0]},
        {"pts1", 0, 999, &d->points[1]},
        {"mcredit0", 0, 999, &d->mcredit[0]},
        {"mcredit1", 0, 999, &d->mcredit[1]},
        {"mpending0", 0, 999, &d->mpending[0]},
        {"mpending1", 0, 999, &d->mpending[1]},
        {"n_tricks", 0, 99, &d->n_tricks},
    };
    for (int i = 0; i < N_ARGS; i++)
        if (spec[i].name && arg_int(args[i], fn, spec[i].name, spec[i].lo, spec[i].hi, spec[i].out) < 0) return -1;
    if (d->phase == OVER) {
        PyErr_Format(PyExc_ValueError, "%s: the deal is over (phase 4)", fn);
        return -1;
    }
    d->hand[0] = (uint32_t)h0;
    d->hand[1] = (uint32_t)h1;
    d->ct[0] = d->ct[1] = d->cp[0] = d->cp[1] = 0;
    d->winner = -1;
    d->game_points = 0;
    return 0;
}

/* Play the policy's moves until the deal is over or, unless to_end, fast_ok holds. */
static int play(Deal *d, int to_end, const char *fn) {
    int steps = 0;
    while (d->phase != OVER && (to_end || !(d->strict && (d->phase == LEAD || d->phase == FOLLOW)))) {
        int a = policy(d);
        if (a < 0 || ++steps > MAX_ACTIONS) { /* unreachable for a checked deal */
            PyErr_Format(PyExc_RuntimeError, "%s: the playout got stuck (an inconsistent deal?)", fn);
            return -1;
        }
        apply(d, a);
    }
    return 0;
}

/* -- the policy with one step of lookahead --------------------------------------------------- */

/* A finished deal's worth to seat s: its game points, signed, then the count margin to
 * break ties between equal game points (ordered as playout.result_value in plain game
 * points orders them). */
static int outcome(const Deal *d, int s) {
    int gp = d->winner < 0 ? 0 : (d->winner == s ? d->game_points : -d->game_points);
    return 1000 * gp + count(d, s) - count(d, s ^ 1);
}

static int play_lookahead(Deal *d, int level, int width, const char *fn);

/* The `outcome` for the seat to act of playing card c in d, then the rest of the deal at
 * `level`, into *v; -1 with an exception set if the playout gets stuck. */
static int card_outcome(const Deal *d, int c, int level, int width, const char *fn, int *v) {
    Deal e = *d;
    apply(&e, c);
    if (play_lookahead(&e, level, width, fn) < 0) return -1;
    *v = outcome(&e, d->to_act);
    return 0;
}

/* The `width` - 1 best of the cards in `cands` by their outcome with the policy after them
 * (the earlier card first among equals), for lookahead at level 2 and up to look at with
 * the policy's own card; -1 with an exception set if a playout gets stuck. */
static int64_t prune(const Deal *d, uint32_t cands, int width, const char *fn) {
    int cards[32], vals[32], n = 0, v;
    for (uint32_t m = cands; m; m &= m - 1) {
        int c = lowest(m);
        if (card_outcome(d, c, 0, 0, fn, &v) < 0) return -1;
        int i = n++;
        for (; i > 0 && vals[i - 1] < v; i--) { /* stable: a later card passes only a worse one */
            vals[i] = vals[i - 1];
            cards[i] = cards[i - 1];
        }
        vals[i] = v;
        cards[i] = c;
    }
    uint32_t kept = 0;
    for (int i = 0; i < n && i < width - 1; i++) kept |= 1u << cards[i];
    return kept;
}

/* fast_playout.lookahead_action: while the talon is open, a card to lead or follow is
 * chosen by playing each candidate out to the end of the deal, in this deal, by the
 * policy (level 1) or by lookahead one level down (level 2 and up), and keeping the best
 * `outcome` for the seat to act (the policy's own card first, then the others in card
 * order; a later one must be strictly better). The candidates are the hand's cards but
 * a marriage's king and queen when leading (the policy declares a marriage it may; one
 * it may not declare is not led by lookahead either). Any other decision is the
 * policy's. -1 with an exception set if a playout gets stuck. */
static int lookahead(const Deal *d, int level, int width, const char *fn) {
    int a0 = policy(d);
    if (d->strict || a0 < 0 || a0 >= MARRY || (d->phase == LEAD && d->marriage_suit >= 0)) return a0;
    int s = d->to_act;
    uint32_t cands = d->hand[s] & ~(1u << a0);
    if (d->phase == LEAD) {
        uint32_t pairs = marriages(d->hand[s]);
        cands &= ~((pairs << KING) | (pairs << QUEEN));
    }
    if (width > 0 && level >= 2) {
        int64_t kept = prune(d, cands, width, fn);
        if (kept < 0) return -1;
        cands = (uint32_t)kept;
    }
    int best = a0, best_v, v;
    if (card_outcome(d, a0, level - 1, width, fn, &best_v) < 0) return -1;
    for (uint32_t m = cands; m; m &= m - 1) {
        int c = lowest(m);
        if (card_outcome(d, c, level - 1, width, fn, &v) < 0) return -1;
        if (v > best_v) {
            best = c;
            best_v = v;
        }
    }
    return best;
}

/* Play the deal to its end with `lookahead` at ``level`` for both seats (level 0: the policy). */
static int play_lookahead(Deal *d, int level, int width, const char *fn) {
    if (level <= 0) return play(d, 1, fn);
    int steps = 0;
    while (d->phase != OVER) {
        int a = lookahead(d, level, width, fn);
        if (a < 0) return -1;
        if (++steps > MAX_ACTIONS) {
            PyErr_Format(PyExc_RuntimeError, "%s: the playout got stuck (an inconsistent deal?)", fn);
            return -1;
        }
        apply(d, a);
    }
    return 0;
}

static PyObject *run(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    Deal d;
    if (nargs != N_ARGS) {
        PyErr_Format(PyExc_TypeError, "run() takes %d arguments (%zd given)", N_ARGS, nargs);
        return NULL;
    }
    if (parse_deal(module, args, "run", &d) < 0 || check_deal(&d, "run") < 0 || play(&d, 0, "run") < 0) return NULL;
    if (d.phase == OVER) {
        int out[5] = {0, d.winner, d.game_points, count(&d, 0), count(&d, 1)};
        return int_tuple(out, 5);
    }
    int msuit = d.marriage_suit >= 0 ? d.marriage_suit : (d.step <= 1 ? -1 : -2);
    int out[18] = {1, d.phase, d.leader, d.lead_card, (int)d.hand[0], (int)d.hand[1],
                   count(&d, 0), count(&d, 1), d.tricks[0], d.tricks[1], d.mpending[0], d.mpending[1],
                   msuit, d.closed_by, d.ct[0], d.ct[1], d.cp[0], d.cp[1]};
    return int_tuple(out, 18);
}

/* run_to_end and run_lookahead: the deal with its close facts, played to its end by the
 * policy or (ahead: then the level, and optionally the width) by lookahead. */
static PyObject *play_to_end(PyObject *module, PyObject *const *args, Py_ssize_t nargs, const char *fn, int ahead) {
    int level = 0, width = 0;
    static const char *const names[4] = {"ct0", "ct1", "cp0", "cp1"};
    Deal d;
    int facts[4];
    if (!ahead && nargs != N_ARGS_END) {
        PyErr_Format(PyExc_TypeError, "%s() takes %d arguments (%zd given)", fn, N_ARGS_END, nargs);
        return NULL;
    }
    if (ahead && nargs != N_ARGS_END + 1 && nargs != N_ARGS_END + 2) {
        PyErr_Format(PyExc_TypeError, "%s() takes %d or %d arguments (%zd given)", fn, N_ARGS_END + 1, N_ARGS_END + 2,
                     nargs);
        return NULL;
    }
    if (ahead && arg_int(args[N_ARGS_END], fn, "level", 1, 3, &level) < 0) return NULL;
    if (nargs == N_ARGS_END + 2 && arg_int(args[N_ARGS_END + 1], fn, "width", 0, 32, &width) < 0) return NULL;
    if (parse_deal(module, args, fn, &d) < 0) return NULL;
    for (int i = 0; i < 4; i++)
        if (arg_int(args[N_ARGS + i], fn, names[i], 0, i < 2 ? 99 : 999, &facts[i]) < 0) return NULL;
    if (d.closed_by < 0 && (facts[0] | facts[1] | facts[2] | facts[3])) {
        bad_state(fn, "close facts (ct0, ct1, cp0, cp1) must be 0 in a deal not closed");
        return NULL;
    }
    d.ct[0] = facts[0];
    d.ct[1] = facts[1];
    d.cp[0] = facts[2];
    d.cp[1] = facts[3];
    if (check_deal(&d, fn) < 0 || play_lookahead(&d, level, width, fn) < 0) return NULL;
    int out[4] = {d.winner, d.game_points, count(&d, 0), count(&d, 1)};
    return int_tuple(out, 4);
}

static PyObject *run_to_end(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return play_to_end(module, args, nargs, "run_to_end", 0);
}

static PyObject *run_lookahead(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    return play_to_end(module, args, nargs, "run_lookahead", 1);
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL,
     "run(rules, trump, ex_card, h0, h1, stock, stock_pos, turn_up, strict, phase, to_act, leader, lead_card,\n"
     "    step, marriage_suit, closed_by, t0, t1, pts0, pts1, mcredit0, mcredit1, mpending0, mpending1, n_tricks)\n"
     "Play the deal with the playout policy until it is over or the exact solver can take over.\n"
     "Returns (0, winner, game_points, count0, count1) for a finished deal (winner -1: drawn), else\n"
     "(1, phase, leader, lead_card, h0, h1, count0, count1, t0, t1, mpending0, mpending1, ms, closed_by,\n"
     " ct0, ct1, cp0, cp1); ct/cp are the close facts of a close made in this run, else 0."},
    {"run_to_end", (PyCFunction)(void (*)(void))run_to_end, METH_FASTCALL,
     "run_to_end(rules, <run's 24 deal arguments>, ct0, ct1, cp0, cp1)\n"
     "Play the deal with the playout policy to its end, through the strict phase. ct/cp are the\n"
     "close facts (State.close_tricks, State.close_points) of a deal closed before the call, else 0.\n"
     "Returns (winner, game_points, count0, count1) (winner -1: drawn; counts: State.result.points)."},
    {"run_lookahead", (PyCFunction)(void (*)(void))run_lookahead, METH_FASTCALL,
     "run_lookahead(rules, <run_to_end's 28 arguments>, level, width=0)\n"
     "As run_to_end, each open-phase card chosen by lookahead: every candidate played out to the end of\n"
     "the deal, by the policy (level 1) or by lookahead a level down (2, 3), the best for the seat to act\n"
     "kept (fast_playout.lookahead_action). A width w > 0 looks, at levels 2 and 3, at the policy's card\n"
     "and the w - 1 others best played out by the policy only."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *m) {
    ModuleState *ms = PyModule_GetState(m);
    ms->rules_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &Rules_spec, NULL);
    if (!ms->rules_type) return -1;
    return PyModule_AddType(m, ms->rules_type);
}

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
    ModuleState *ms = PyModule_GetState(m);
    if (ms) Py_VISIT(ms->rules_type);
    return 0;
}

static int module_clear(PyObject *m) {
    ModuleState *ms = PyModule_GetState(m);
    if (ms) Py_CLEAR(ms->rules_type);
    return 0;
}

static void module_free(void *m) { module_clear((PyObject *)m); }

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_cplayout",
    "The open-phase playout's C kernel (see arena/bots/playout.py and arena/bots/fast_playout.py).",
    sizeof(ModuleState),
    methods,
    module_slots,
    module_traverse,
    module_clear,
    module_free,
};

PyMODINIT_FUNC PyInit__cplayout(void) { return PyModuleDef_Init(&module_def); }
