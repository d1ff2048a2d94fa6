/* The exact endgame solver of arena/bots/endgame.py (`_Solver`), in C.
 *
 * Alpha-beta on the strict phase of one two-handed deal (the talon closed or exhausted),
 * for fixed close facts, with a transposition table of bounds on lead nodes. It searches
 * the same moves in the same order as the Python solver and returns the same values
 * (game points for seat 0); tests/test_csolve.py checks the two agree. Only the table
 * differs: a bounded open-addressing table that replaces old entries when full, where
 * the Python one is a dict cleared at a size limit. Bounds stay bounds either way, so
 * the values do not change.
 *
 * Cards are ids 0..23: suit c / 6, rank c % 6 in the order A T K Q J 9 (a lower id is
 * stronger within its suit). Hands are 24-bit masks.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INF 99
#define KING 2
#define TT_MIN_BITS 10
#define TT_MAX_BITS 17
#define PROBES 4

static const int POINTS[24] = {11, 10, 4, 3, 2, 0, 11, 10, 4, 3, 2, 0,
                               11, 10, 4, 3, 2, 0, 11, 10, 4, 3, 2, 0};

/* failed_close rules */
enum { FAILED_TWO_OR_THREE = 0, FAILED_THREE = 1, FAILED_BY_COUNT = 2 };

typedef struct {
    uint64_t lo, hi; /* the position; hi == 0 marks an empty slot (hi always has bit 63) */
    int8_t vlo, vhi, bm;
} Entry;

typedef struct {
    PyObject_HEAD
    /* rules */
    int sch, at_close, failed_rule, beaten_two, false_two, last_trick_wins;
    int head, must_trump, mar_ok, mar_needs_trick, king_only, weird, forced;
    /* close facts */
    int trump, closer, ct0, ct1, cp0, cp1;
    uint32_t tmask;
    int lead_key[24];
    /* transposition table */
    Entry *tt;
    uint32_t tt_bits;
    Py_ssize_t tt_used;
    long long nodes;
} Solver;

static inline int scale(const Solver *S, int t, int p) {
    if (!t) return 3;
    return p < S->sch ? 2 : 1;
}

static int closer_out(const Solver *S, int c, int p0, int p1, int t0, int t1) {
    if (c == 0) return S->at_close ? scale(S, S->ct1, S->cp1) : scale(S, t1, p1);
    return -(S->at_close ? scale(S, S->ct0, S->cp0) : scale(S, t0, p0));
}

static int failed(const Solver *S, int p0, int p1) {
    int cto = S->closer == 0 ? S->ct1 : S->ct0;
    int g;
    if (S->failed_rule == FAILED_THREE || !cto) g = 3;
    else if (S->failed_rule == FAILED_BY_COUNT) g = (S->closer == 0 ? p0 : p1) >= S->sch ? 1 : 2;
    else g = 2;
    return S->closer == 0 ? -g : g;
}

static int declare(const Solver *S, int s, int p0, int p1, int t0, int t1) {
    int ps = s == 0 ? p0 : p1, g;
    if (ps >= 66) {
        if (S->closer < 0) g = s == 0 ? scale(S, t1, p1) : scale(S, t0, p0);
        else if (S->closer == s) return closer_out(S, s, p0, p1, t0, t1);
        else g = (S->beaten_two || (s == 0 ? S->ct0 : S->ct1)) ? 2 : 3;
        return s == 0 ? g : -g;
    }
    if (S->closer == s) return failed(S, p0, p1);
    g = (S->false_two || (s == 0 ? t1 : t0)) ? 2 : 3;
    return s == 0 ? -g : g;
}

static int played_out(const Solver *S, int w, int p0, int p1, int t0, int t1) {
    if (S->closer >= 0) {
        if (w == S->closer && (w == 0 ? p0 : p1) >= 66) return closer_out(S, w, p0, p1, t0, t1);
        return failed(S, p0, p1);
    }
    if (S->last_trick_wins) return w == 0 ? 1 : -1;
    if (w == 0) p0 += 10;
    else p1 += 10;
    if (p0 == p1) return 0;
    if (p0 > p1) return scale(S, t1, p1);
    return -scale(S, t0, p0);
}

static inline uint32_t suit_mask(int s) { return 0x3Fu << (6 * s); }

static uint32_t follow_mask(const Solver *S, uint32_t h, int c) {
    uint32_t same = h & suit_mask(c / 6);
    if (same) {
        if (S->head) {
            uint32_t above = same & ((1u << c) - 1);
            return above ? above : same;
        }
        return same;
    }
    if (S->must_trump && (h & S->tmask)) return h & S->tmask;
    return h;
}

/* -- the transposition table ----------------------------------------------------------- */

static inline uint64_t mix(uint64_t lo, uint64_t hi) {
    uint64_t x = lo ^ (hi * 0x9E3779B97F4A7C15ULL);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 29;
    return x;
}

static int tt_alloc(Solver *S, uint32_t bits) {
    Entry *t = calloc((size_t)1 << bits, sizeof(Entry));
    if (!t) return -1;
    Entry *old = S->tt;
    uint32_t old_bits = S->tt_bits;
    S->tt = t;
    S->tt_bits = bits;
    S->tt_used = 0;
    if (old) {
        size_t n = (size_t)1 << old_bits, mask = ((size_t)1 << bits) - 1;
        for (size_t i = 0; i < n; i++) {
            if (!old[i].hi) continue;
            size_t j = mix(old[i].lo, old[i].hi) & mask;
            for (int k = 0; k < PROBES; k++, j = (j + 1) & mask) {
                if (!t[j].hi) {
                    t[j] = old[i];
                    S->tt_used++;
                    break;
                }
            }
        }
        free(old);
    }
    return 0;
}

static Entry *tt_find(Solver *S, uint64_t lo, uint64_t hi) {
    size_t mask = ((size_t)1 << S->tt_bits) - 1, j = mix(lo, hi) & mask;
    for (int k = 0; k < PROBES; k++, j = (j + 1) & mask) {
        Entry *e = &S->tt[j];
        if (!e->hi) return NULL;
        if (e->lo == lo && e->hi == hi) return e;
    }
    return NULL;
}

static void tt_store(Solver *S, uint64_t lo, uint64_t hi, int vlo, int vhi, int bm) {
    if (S->tt_used * 2 >= ((Py_ssize_t)1 << S->tt_bits) && S->tt_bits < TT_MAX_BITS)
        tt_alloc(S, S->tt_bits + 1); /* on failure, keep the old table */
    size_t mask = ((size_t)1 << S->tt_bits) - 1, j = mix(lo, hi) & mask, first = j;
    Entry *slot = NULL;
    for (int k = 0; k < PROBES; k++, j = (j + 1) & mask) {
        Entry *e = &S->tt[j];
        if (!e->hi) {
            slot = e;
            S->tt_used++;
            break;
        }
        if (e->lo == lo && e->hi == hi) {
            slot = e;
            break;
        }
    }
    if (!slot) slot = &S->tt[first]; /* full: the newest entry wins */
    slot->lo = lo;
    slot->hi = hi;
    slot->vlo = (int8_t)vlo;
    slot->vhi = (int8_t)vhi;
    slot->bm = (int8_t)bm;
}

/* -- the search ------------------------------------------------------------------------ */

static int lead(Solver *S, int L, uint32_t h0, uint32_t h1, int p0, int p1, int t0, int t1, int m0, int m1,
                int alpha, int beta, int ms);

static int follow(Solver *S, int L, int c, uint32_t h0, uint32_t h1, int p0, int p1, int t0, int t1, int m0,
                  int m1, int alpha, int beta) {
    S->nodes++;
    int cs = c / 6, cp = POINTS[c], trump = S->trump;
    int maxi = L != 0;
    uint32_t legal = follow_mask(S, L == 0 ? h1 : h0, c);
    /* winners first, then the rest; each cheapest first (a stable sort by points, as in
       Python, on ascending card ids) */
    int order[24], nw = 0, nl = 0, lose[24];
    for (int f = 0; f < 24; f++) {
        if (!(legal >> f & 1)) continue;
        int fs = f / 6;
        if ((fs == cs && f < c) || (fs != cs && fs == trump)) order[nw++] = f;
        else lose[nl++] = f;
    }
    for (int i = 1; i < nw; i++) { /* insertion sort: stable */
        int x = order[i], j = i - 1;
        while (j >= 0 && POINTS[order[j]] > POINTS[x]) { order[j + 1] = order[j]; j--; }
        order[j + 1] = x;
    }
    for (int i = 1; i < nl; i++) {
        int x = lose[i], j = i - 1;
        while (j >= 0 && POINTS[lose[j]] > POINTS[x]) { lose[j + 1] = lose[j]; j--; }
        lose[j + 1] = x;
    }
    for (int i = 0; i < nl; i++) order[nw + i] = lose[i];
    int n = nw + nl, best = maxi ? -INF : INF;
    for (int i = 0; i < n; i++) {
        int f = order[i], g = cp + POINTS[f], fs = f / 6, w;
        if ((fs == cs && f < c) || (fs != cs && fs == trump)) w = L ^ 1;
        else w = L;
        uint32_t n0 = h0, n1 = h1;
        if (L == 0) n1 ^= 1u << f;
        else n0 ^= 1u << f;
        int q0 = p0, q1 = p1, u0 = t0, u1 = t1, k0 = m0, k1 = m1;
        if (w == 0) {
            q0 += g;
            u0++;
            if (t0 == 0 && m0) { q0 += m0; k0 = 0; }
        } else {
            q1 += g;
            u1++;
            if (t1 == 0 && m1) { q1 += m1; k1 = 0; }
        }
        int val;
        if (!(n0 | n1)) val = played_out(S, w, q0, q1, u0, u1);
        else val = lead(S, w, n0, n1, q0, q1, u0, u1, k0, k1, alpha, beta, -1);
        if (maxi) {
            if (val > best) {
                best = val;
                if (val > alpha) {
                    alpha = val;
                    if (alpha >= beta || val >= 3) break;
                }
            }
        } else if (val < best) {
            best = val;
            if (val < beta) {
                beta = val;
                if (alpha >= beta || val <= -3) break;
            }
        }
    }
    return best;
}

static inline int play_lead(Solver *S, int L, int c, uint32_t h0, uint32_t h1, int p0, int p1, int t0, int t1,
                            int m0, int m1, int alpha, int beta) {
    if (L == 0) return follow(S, 0, c, h0 ^ (1u << c), h1, p0, p1, t0, t1, m0, m1, alpha, beta);
    return follow(S, 1, c, h0, h1 ^ (1u << c), p0, p1, t0, t1, m0, m1, alpha, beta);
}

/* The value of seat L leading. ms: -1 a normal lead; -2 no marriage on this lead (after
   a close); a suit: that marriage was just declared. */
static int lead(Solver *S, int L, uint32_t h0, uint32_t h1, int p0, int p1, int t0, int t1, int m0, int m1,
                int alpha, int beta, int ms) {
    S->nodes++;
    int maxi = L == 0;
    uint32_t h = L == 0 ? h0 : h1;
    int tl = L == 0 ? t0 : t1, pl = L == 0 ? p0 : p1;
    int closer_other = S->closer == (L == 0 ? 1 : 0);
    int best = maxi ? -INF : INF;
    if (tl) {
        int dv = declare(S, L, p0, p1, t0, t1);
        if (pl >= 66 && (S->forced || !(S->weird && closer_other))) return dv;
        best = dv;
        if (maxi) {
            if (dv > alpha) alpha = dv;
        } else if (dv < beta) beta = dv;
        if (alpha >= beta) return best;
    }
    if (ms >= 0) {
        int k = ms * 6 + KING;
        for (int i = 0; i < (S->king_only ? 1 : 2); i++) {
            int val = play_lead(S, L, k + i, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta);
            if (maxi) {
                if (val > best) {
                    best = val;
                    if (val > alpha) alpha = val;
                }
            } else if (val < best) {
                best = val;
                if (val < beta) beta = val;
            }
            if (alpha >= beta) break;
        }
        return best;
    }
    uint64_t klo = 0, khi = 0;
    int bm = -1;
    if (ms == -1) {
        klo = (uint64_t)h0 | (uint64_t)h1 << 24 | (uint64_t)L << 48;
        khi = (uint64_t)p0 | (uint64_t)p1 << 10 | (uint64_t)(t0 ? 0 : m0 + 1) << 20 |
              (uint64_t)(t1 ? 0 : m1 + 1) << 29 | (uint64_t)(t0 ? 1 : 0) << 38 | (uint64_t)(t1 ? 1 : 0) << 39 |
              (uint64_t)1 << 63;
        Entry *e = tt_find(S, klo, khi);
        if (e) {
            int lo = e->vlo, hi = e->vhi;
            bm = e->bm;
            if (lo >= beta) return lo;
            if (hi <= alpha) return hi;
            if (lo == hi) return lo;
            if (lo > alpha) alpha = lo;
            if (hi < beta) beta = hi;
        }
    }
    int a0 = alpha, b0 = beta, bmove = -1;
    if (ms == -1 && S->mar_ok && (tl || !S->mar_needs_trick)) {
        for (int s = 0; s < 4; s++) {
            if ((h >> (s * 6 + KING) & 3) != 3) continue;
            int mp = s == S->trump ? 40 : 20;
            int q0 = p0, q1 = p1, k0 = m0, k1 = m1;
            if (tl) {
                if (L == 0) q0 += mp;
                else q1 += mp;
            } else if (L == 0) k0 += mp;
            else k1 += mp;
            int val = lead(S, L, h0, h1, q0, q1, t0, t1, k0, k1, alpha, beta, s);
            if (maxi) {
                if (val > best) {
                    best = val;
                    bmove = 100 + s;
                    if (val > alpha) alpha = val;
                }
            } else if (val < best) {
                best = val;
                bmove = 100 + s;
                if (val < beta) beta = val;
            }
            if (alpha >= beta) break;
        }
    }
    if (alpha < beta) {
        int order[24], n = 0;
        for (int c = 0; c < 24; c++) /* sure-looking high cards first, then cheap ones */
            if (h >> c & 1) {
                int j = n++;
                while (j > 0 && S->lead_key[order[j - 1]] > S->lead_key[c]) { order[j] = order[j - 1]; j--; }
                order[j] = c;
            }
        if (bm >= 0 && bm < 24 && (h >> bm & 1)) { /* the table's best move first */
            int j = 0;
            while (order[j] != bm) j++;
            for (; j > 0; j--) order[j] = order[j - 1];
            order[0] = bm;
        }
        for (int i = 0; i < n; i++) {
            int c = order[i];
            int val = play_lead(S, L, c, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta);
            if (maxi) {
                if (val > best) {
                    best = val;
                    bmove = c;
                    if (val > alpha) {
                        alpha = val;
                        if (alpha >= beta || val >= 3) break;
                    }
                }
            } else if (val < best) {
                best = val;
                bmove = c;
                if (val < beta) {
                    beta = val;
                    if (alpha >= beta || val <= -3) break;
                }
            }
        }
    }
    if (ms == -1) {
        int lo = -INF, hi = INF;
        Entry *e = tt_find(S, klo, khi);
        if (e) { lo = e->vlo; hi = e->vhi; }
        if (best <= a0) { if (best < hi) hi = best; }
        else if (best >= b0) { if (best > lo) lo = best; }
        else lo = hi = best;
        tt_store(S, klo, khi, lo, hi, bmove);
    }
    return best;
}

/* -- the Python type ------------------------------------------------------------------- */

static void Solver_dealloc(Solver *S) {
    free(S->tt);
    Py_TYPE(S)->tp_free((PyObject *)S);
}

static int Solver_init(Solver *S, PyObject *args, PyObject *kw) {
    static char *names[] = {"rules", "trump", "closer", "ct0", "ct1", "cp0", "cp1", NULL};
    PyObject *rules;
    int trump, closer, ct0, ct1, cp0, cp1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!iiiiii", names, &PyTuple_Type, &rules, &trump, &closer, &ct0,
                                     &ct1, &cp0, &cp1))
        return -1;
    int r[12];
    if (PyTuple_GET_SIZE(rules) != 12) {
        PyErr_Format(PyExc_ValueError, "Solver: rules must be a tuple of 12 ints, got %zd",
                     PyTuple_GET_SIZE(rules));
        return -1;
    }
    for (int i = 0; i < 12; i++) {
        r[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(rules, i));
        if (r[i] == -1 && PyErr_Occurred()) return -1;
    }
    if (trump < 0 || trump > 3 || closer < -1 || closer > 1) {
        PyErr_Format(PyExc_ValueError, "Solver: trump must be 0..3 and closer -1..1, got %d and %d", trump, closer);
        return -1;
    }
    S->sch = r[0];
    S->at_close = r[1];
    S->failed_rule = r[2];
    S->beaten_two = r[3];
    S->false_two = r[4];
    S->last_trick_wins = r[5];
    S->head = r[6];
    S->must_trump = r[7];
    S->mar_ok = r[8];
    S->mar_needs_trick = r[9];
    S->king_only = r[10];
    S->forced = r[11];
    S->weird = S->failed_rule == FAILED_THREE || S->beaten_two;
    S->trump = trump;
    S->closer = closer;
    S->ct0 = ct0;
    S->ct1 = ct1;
    S->cp0 = cp0;
    S->cp1 = cp1;
    S->tmask = suit_mask(trump);
    for (int c = 0; c < 24; c++) /* Python sorts by (-2 * points - 8 if trump, id) */
        S->lead_key[c] = (-POINTS[c] * 2 - (c / 6 == trump ? 8 : 0)) * 32 + c;
    free(S->tt);
    S->tt = NULL;
    S->nodes = 0;
    if (tt_alloc(S, TT_MIN_BITS) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int check_hands(uint32_t h0, uint32_t h1) {
    if ((h0 | h1) >> 24 || (h0 & h1)) {
        PyErr_Format(PyExc_ValueError, "Solver: hands must be disjoint 24-bit masks, got %u and %u", h0, h1);
        return -1;
    }
    return 0;
}

static PyObject *Solver_lead(Solver *S, PyObject *args) {
    int L, p0, p1, t0, t1, m0, m1, alpha, beta, ms;
    unsigned int h0, h1;
    if (!PyArg_ParseTuple(args, "iIIiiiiiiiii", &L, &h0, &h1, &p0, &p1, &t0, &t1, &m0, &m1, &alpha, &beta, &ms))
        return NULL;
    if (check_hands(h0, h1) < 0) return NULL;
    if ((L != 0 && L != 1) || ms < -2 || ms > 3) {
        PyErr_Format(PyExc_ValueError, "Solver.lead: bad position (leader %d, ms %d)", L, ms);
        return NULL;
    }
    return PyLong_FromLong(lead(S, L, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta, ms));
}

static PyObject *Solver_follow(Solver *S, PyObject *args) {
    int L, c, p0, p1, t0, t1, m0, m1, alpha, beta;
    unsigned int h0, h1;
    if (!PyArg_ParseTuple(args, "iiIIiiiiiiii", &L, &c, &h0, &h1, &p0, &p1, &t0, &t1, &m0, &m1, &alpha, &beta))
        return NULL;
    if (check_hands(h0, h1) < 0) return NULL;
    if ((L != 0 && L != 1) || c < 0 || c > 23) {
        PyErr_Format(PyExc_ValueError, "Solver.follow: bad position (leader %d, card %d)", L, c);
        return NULL;
    }
    return PyLong_FromLong(follow(S, L, c, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta));
}

static PyObject *Solver_clear(Solver *S, PyObject *Py_UNUSED(ignored)) {
    memset(S->tt, 0, ((size_t)1 << S->tt_bits) * sizeof(Entry));
    S->tt_used = 0;
    Py_RETURN_NONE;
}

static PyObject *Solver_get_nodes(Solver *S, void *Py_UNUSED(closure)) { return PyLong_FromLongLong(S->nodes); }

static PyObject *Solver_get_size(Solver *S, void *Py_UNUSED(closure)) { return PyLong_FromSsize_t(S->tt_used); }

static PyMethodDef Solver_methods[] = {
    {"lead", (PyCFunction)Solver_lead, METH_VARARGS,
     "lead(L, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta, ms) -> value for seat 0 of seat L leading"},
    {"follow", (PyCFunction)Solver_follow, METH_VARARGS,
     "follow(L, c, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta) -> value for seat 0 once L has led c"},
    {"clear", (PyCFunction)Solver_clear, METH_NOARGS, "Empty the transposition table."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Solver_getset[] = {
    {"nodes", (getter)Solver_get_nodes, NULL, "Nodes visited so far.", NULL},
    {"size", (getter)Solver_get_size, NULL, "Entries in the transposition table.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject SolverType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "arena.bots._csolve.Solver",
    .tp_basicsize = sizeof(Solver),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Solver(rules, trump, closer, ct0, ct1, cp0, cp1): the strict phase of one deal, solved exactly.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Solver_init,
    .tp_dealloc = (destructor)Solver_dealloc,
    .tp_methods = Solver_methods,
    .tp_getset = Solver_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_csolve", "The exact endgame solver's C kernel (see arena/bots/endgame.py).", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__csolve(void) {
    if (PyType_Ready(&SolverType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&SolverType);
    if (PyModule_AddObject(m, "Solver", (PyObject *)&SolverType) < 0) {
        Py_DECREF(&SolverType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
