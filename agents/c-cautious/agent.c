/*
 * c-cautious: a Sixty-Six agent in plain C99 + POSIX, for every game of the arena.
 *
 * Speaks protocol versions 1 and 2 of protocol/SPEC.md on stdin/stdout: one JSON
 * object per line; it answers hello with the highest version offered (a version-1
 * referee, whose hello has no "protocols", gets a version-1 ready).
 *
 * Two-handed strategy ("cautious"; also three-sitout's deals, which are two-handed
 * hands): claim 66 only when the count really is >= 66, never close, always exchange
 * the trump card when allowed, draw rather than close, show marriages (the trump
 * marriage first), and otherwise play a uniformly random legal card from a PRNG seeded
 * by hello.seed, then by each match_start's seed.
 *
 * At a table of three or four (version 2, SPEC section 12) it plays a fixed policy
 * with no randomness, from the observation and `legal` only (see choose_table).
 *
 * Exit status: 0 on quit or end of input, 2 on a malformed referee line or an
 * unsupported protocol version, 1 if stdout can no longer be written.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGENT_NAME "c-cautious"
#define AGENT_VERSION "1.0.0"
#define MIN_PROTOCOL 1
#define MAX_PROTOCOL 2 /* version 2 seats three or four at a table */
#define GAMES "[\"sixty-six\",\"schnapsen\",\"three-pagat\",\"three-cutthroat\",\"three-sitout\"," \
              "\"four-pagat\",\"kreuzmariage\",\"four-bidding\"]"

/* The referee's lines are at most 1 MiB; refuse absurd ones instead of eating memory. */
#define MAX_LINE ((size_t)64 * 1024 * 1024)
/* Deeper nesting than this is not a message of the protocol (observations nest ~4). */
#define MAX_DEPTH 128

/* ------------------------------------------------------------------------------------ */
/* Errors                                                                               */

static unsigned long line_no;

#if defined(__GNUC__)
#define DIE_ATTRS __attribute__((noreturn, format(printf, 2, 3)))
#else
#define DIE_ATTRS
#endif

static void die(int status, const char *fmt, ...) DIE_ATTRS;

static void die(int status, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, AGENT_NAME ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(status);
}

#define malformed(...) die(2, __VA_ARGS__)

/* ------------------------------------------------------------------------------------ */
/* JSON: a validating recursive-descent reader over one line, no allocation.           */
/* A value is described by its type and the [start, end) span of its raw text.         */

enum { J_NONE, J_OBJ, J_ARR, J_STR, J_NUM, J_TRUE, J_FALSE, J_NULL };

typedef struct {
    int type;
    int is_int;   /* J_NUM without fraction or exponent */
    size_t start; /* first byte of the value (the quote of a string, the bracket, ...) */
    size_t end;   /* one past its last byte */
} JVal;

typedef struct {
    const char *s;
    size_t n;
    size_t i;
    const char *err; /* first error, NULL if none */
    size_t err_at;
} JParser;

static int jp_fail(JParser *p, const char *msg)
{
    if (!p->err) {
        p->err = msg;
        p->err_at = p->i;
    }
    return -1;
}

static void jp_ws(JParser *p)
{
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            p->i++;
        else
            break;
    }
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Length of a valid UTF-8 sequence starting at s[0] (non-ASCII lead byte), or 0. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    size_t len, k;
    unsigned long cp;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (avail < len) return 0;
    for (k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
    return len;
}

/* At a '"': validate the string and move past its closing quote. */
static int jp_string(JParser *p)
{
    const unsigned char *s = (const unsigned char *)p->s;
    if (p->i >= p->n || s[p->i] != '"') return jp_fail(p, "expected a string");
    p->i++;
    for (;;) {
        unsigned c;
        if (p->i >= p->n) return jp_fail(p, "unterminated string");
        c = s[p->i];
        if (c == '"') {
            p->i++;
            return 0;
        }
        if (c < 0x20) return jp_fail(p, "control character in string");
        if (c == '\\') {
            if (p->i + 1 >= p->n) return jp_fail(p, "unterminated escape");
            c = s[p->i + 1];
            if (c == 'u') {
                size_t k;
                if (p->i + 6 > p->n) return jp_fail(p, "truncated \\u escape");
                for (k = 2; k < 6; k++)
                    if (hexval(s[p->i + k]) < 0) return jp_fail(p, "bad \\u escape");
                p->i += 6;
            } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                       c == 'r' || c == 't') {
                p->i += 2;
            } else {
                return jp_fail(p, "bad escape in string");
            }
        } else if (c < 0x80) {
            p->i++;
        } else {
            size_t len = utf8_len(s + p->i, p->n - p->i);
            if (!len) return jp_fail(p, "invalid UTF-8 in string");
            p->i += len;
        }
    }
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int jp_number(JParser *p, int *is_int)
{
    const char *s = p->s;
    *is_int = 1;
    if (p->i < p->n && s[p->i] == '-') p->i++;
    if (p->i >= p->n || !is_digit(s[p->i])) return jp_fail(p, "bad number");
    if (s[p->i] == '0') {
        p->i++;
    } else {
        while (p->i < p->n && is_digit(s[p->i])) p->i++;
    }
    if (p->i < p->n && s[p->i] == '.') {
        *is_int = 0;
        p->i++;
        if (p->i >= p->n || !is_digit(s[p->i])) return jp_fail(p, "bad number fraction");
        while (p->i < p->n && is_digit(s[p->i])) p->i++;
    }
    if (p->i < p->n && (s[p->i] == 'e' || s[p->i] == 'E')) {
        *is_int = 0;
        p->i++;
        if (p->i < p->n && (s[p->i] == '+' || s[p->i] == '-')) p->i++;
        if (p->i >= p->n || !is_digit(s[p->i])) return jp_fail(p, "bad number exponent");
        while (p->i < p->n && is_digit(s[p->i])) p->i++;
    }
    return 0;
}

static int jp_literal(JParser *p, const char *word)
{
    size_t len = strlen(word);
    if (p->n - p->i < len || memcmp(p->s + p->i, word, len) != 0) return jp_fail(p, "unexpected character");
    p->i += len;
    return 0;
}

/* Parse (validate and skip) one value at p->i, leading whitespace allowed. */
static int jp_value(JParser *p, JVal *v, int depth)
{
    char c;
    jp_ws(p);
    if (p->i >= p->n) return jp_fail(p, "unexpected end of line");
    v->start = p->i;
    v->is_int = 0;
    c = p->s[p->i];
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        int first = 1;
        if (depth >= MAX_DEPTH) return jp_fail(p, "nesting too deep");
        v->type = c == '{' ? J_OBJ : J_ARR;
        p->i++;
        for (;;) {
            JVal item;
            jp_ws(p);
            if (p->i >= p->n) return jp_fail(p, "unterminated object or array");
            if (p->s[p->i] == close) {
                if (!first) return jp_fail(p, "trailing comma");
                p->i++;
                break;
            }
            if (!first) {
                if (p->s[p->i] != ',') return jp_fail(p, "expected ',' or a closing bracket");
                p->i++;
                jp_ws(p);
            }
            if (v->type == J_OBJ) {
                if (jp_string(p) < 0) return -1;
                jp_ws(p);
                if (p->i >= p->n || p->s[p->i] != ':') return jp_fail(p, "expected ':'");
                p->i++;
            }
            if (jp_value(p, &item, depth + 1) < 0) return -1;
            jp_ws(p);
            if (p->i < p->n && p->s[p->i] == close) {
                p->i++;
                break;
            }
            first = 0;
        }
    } else if (c == '"') {
        v->type = J_STR;
        if (jp_string(p) < 0) return -1;
    } else if (c == '-' || is_digit(c)) {
        v->type = J_NUM;
        if (jp_number(p, &v->is_int) < 0) return -1;
    } else if (c == 't') {
        v->type = J_TRUE;
        if (jp_literal(p, "true") < 0) return -1;
    } else if (c == 'f') {
        v->type = J_FALSE;
        if (jp_literal(p, "false") < 0) return -1;
    } else if (c == 'n') {
        v->type = J_NULL;
        if (jp_literal(p, "null") < 0) return -1;
    } else {
        return jp_fail(p, "unexpected character");
    }
    v->end = p->i;
    return 0;
}

/* Validate a whole line: exactly one value, surrounded by optional whitespace. */
static int json_parse(const char *s, size_t n, JVal *root, const char **err, size_t *err_at)
{
    JParser p;
    p.s = s;
    p.n = n;
    p.i = 0;
    p.err = NULL;
    p.err_at = 0;
    if (jp_value(&p, root, 0) == 0) {
        jp_ws(&p);
        if (p.i != n) jp_fail(&p, "trailing characters after the value");
    }
    *err = p.err;
    *err_at = p.err_at;
    return p.err ? -1 : 0;
}

/* Iteration over a validated object or array. */
typedef struct {
    JParser p;
    int type;
    int done;
} JIter;

static void jiter_init(JIter *it, const char *s, JVal container)
{
    it->p.s = s;
    it->p.n = container.end;
    it->p.i = container.start + 1;
    it->p.err = NULL;
    it->p.err_at = 0;
    it->type = container.type;
    it->done = !(container.type == J_OBJ || container.type == J_ARR);
}

/* Next member: for objects *key is the key string (as a J_STR value). 1 if got, else 0. */
static int jiter_next(JIter *it, JVal *key, JVal *val)
{
    JParser *p = &it->p;
    if (it->done) return 0;
    jp_ws(p);
    if (p->i >= p->n) goto end;
    if (p->s[p->i] == ',') {
        p->i++;
        jp_ws(p);
    }
    if (p->i >= p->n || p->s[p->i] == '}' || p->s[p->i] == ']') goto end;
    if (it->type == J_OBJ) {
        key->type = J_STR;
        key->is_int = 0;
        key->start = p->i;
        if (jp_string(p) < 0) goto end;
        key->end = p->i;
        jp_ws(p);
        if (p->i >= p->n || p->s[p->i] != ':') goto end;
        p->i++;
    }
    if (jp_value(p, val, 1) < 0) goto end;
    return 1;
end:
    it->done = 1;
    return 0;
}

/*
 * Decode a validated string value into out (NUL-terminated, at most cap-1 bytes).
 * Non-ASCII characters (raw UTF-8 or \u escapes, a surrogate pair counting as one)
 * and \u0000 become '?'. Returns the decoded length, or -1 if it does not fit.
 */
static long json_str(const char *s, JVal v, char *out, size_t cap)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = v.start + 1, end = v.end - 1, o = 0;
    if (v.type != J_STR || cap == 0) return -1;
    while (i < end) {
        unsigned c = u[i];
        char ch;
        if (c == '\\') {
            unsigned e = u[i + 1];
            if (e == 'u') {
                unsigned long cp = 0;
                size_t k;
                for (k = 2; k < 6; k++) cp = (cp << 4) | (unsigned)hexval(u[i + k]);
                i += 6;
                if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= end && u[i] == '\\' && u[i + 1] == 'u') {
                    unsigned long lo = 0;
                    for (k = 2; k < 6; k++) lo = (lo << 4) | (unsigned)hexval(u[i + k]);
                    if (lo >= 0xDC00 && lo <= 0xDFFF) i += 6; /* one character for the pair */
                }
                ch = (cp >= 0x01 && cp < 0x80) ? (char)cp : '?';
            } else {
                switch (e) {
                case 'b': ch = '\b'; break;
                case 'f': ch = '\f'; break;
                case 'n': ch = '\n'; break;
                case 'r': ch = '\r'; break;
                case 't': ch = '\t'; break;
                default: ch = (char)e; break; /* " \ / */
                }
                i += 2;
            }
        } else if (c < 0x80) {
            ch = (char)c;
            i++;
        } else {
            size_t len = utf8_len(u + i, end - i);
            i += len ? len : 1;
            ch = '?';
        }
        if (o + 1 >= cap) return -1;
        out[o++] = ch;
    }
    out[o] = '\0';
    return (long)o;
}

static int json_str_eq(const char *s, JVal v, const char *want)
{
    char buf[128];
    return v.type == J_STR && json_str(s, v, buf, sizeof buf) >= 0 && strcmp(buf, want) == 0;
}

/* The value of key in obj (the last one if the key repeats, as Python's json does). */
static int json_get(const char *s, JVal obj, const char *key, JVal *out)
{
    JIter it;
    JVal k, v;
    int found = 0;
    if (obj.type != J_OBJ) return 0;
    jiter_init(&it, s, obj);
    while (jiter_next(&it, &k, &v)) {
        if (json_str_eq(s, k, key)) {
            *out = v;
            found = 1;
        }
    }
    return found;
}

/* Copy an integer token into buf; 0 if it is not an integer or too long. */
static int int_text(const char *s, JVal v, char *buf, size_t cap)
{
    size_t len = v.end - v.start;
    if (v.type != J_NUM || !v.is_int || len + 1 > cap) return 0;
    memcpy(buf, s + v.start, len);
    buf[len] = '\0';
    return 1;
}

/* A JSON integer as a long long; 0 if it is not an integer or out of range. */
static int json_ll(const char *s, JVal v, long long *out)
{
    char buf[32], *endp;
    long long x;
    if (!int_text(s, v, buf, sizeof buf)) return 0;
    errno = 0;
    x = strtoll(buf, &endp, 10);
    if (errno != 0 || *endp != '\0') return 0;
    *out = x;
    return 1;
}

/* A JSON integer in 0..2^64-1; 0 if it is not one. */
static int json_u64(const char *s, JVal v, unsigned long long *out)
{
    char buf[32], *endp;
    unsigned long long x;
    if (!int_text(s, v, buf, sizeof buf) || buf[0] == '-') return 0;
    errno = 0;
    x = strtoull(buf, &endp, 10);
    if (errno != 0 || *endp != '\0') return 0;
    *out = x;
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* PRNG: splitmix64, unbiased bounded draws by rejection.                               */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static size_t rng_below(size_t n)
{
    uint64_t bound = (uint64_t)n, limit, x;
    if (n <= 1) return 0;
    limit = UINT64_MAX - UINT64_MAX % bound; /* accept x < limit: a multiple of n values */
    do {
        x = rng_next();
    } while (x >= limit);
    return (size_t)(x % bound);
}

/* ------------------------------------------------------------------------------------ */
/* Output                                                                               */

static void flush_out(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) die(1, "cannot write to stdout: %s", strerror(errno));
}

/* ------------------------------------------------------------------------------------ */
/* Strategy                                                                             */

typedef struct {
    JVal raw;     /* the string as it appears on the wire, quotes included */
    char text[64]; /* decoded; "" if it did not fit (then it matches nothing we look for) */
} Action;

static Action *acts;
static size_t acts_cap;

static long find_action(const Action *a, size_t n, const char *want)
{
    size_t k;
    for (k = 0; k < n; k++)
        if (strcmp(a[k].text, want) == 0) return (long)k;
    return -1;
}

/* Which legal action to answer: an index into a[0..n-1] (n >= 1). */
static size_t choose(const char *s, JVal obs, const Action *a, size_t n, long long req_seat)
{
    char phase[32] = "", trump[8] = "", want[16];
    long long seat = req_seat, pts = -1;
    JVal v, e;
    long k;
    size_t i, m, *cand;

    if (obs.type == J_OBJ) {
        long long x;
        if (json_get(s, obs, "seat", &v) && json_ll(s, v, &x)) seat = x;
        if (json_get(s, obs, "phase", &v) && json_str(s, v, phase, sizeof phase) < 0) phase[0] = '\0';
        if (json_get(s, obs, "trump", &v) && json_str(s, v, trump, sizeof trump) < 0) trump[0] = '\0';
        if (seat >= 0 && json_get(s, obs, "points", &v) && v.type == J_ARR) {
            JIter it;
            JVal key;
            long long idx = 0;
            jiter_init(&it, s, v);
            while (jiter_next(&it, &key, &e)) {
                if (idx++ == seat) {
                    if (!json_ll(s, e, &pts)) pts = -1;
                    break;
                }
            }
        }
    }

    /* Claim 66 only when it is true. */
    if ((k = find_action(a, n, "declare")) >= 0 && pts >= 66) return (size_t)k;
    /* Take the trump card whenever allowed (also at the opponent's close). */
    if ((k = find_action(a, n, "exchange")) >= 0) return (size_t)k;
    /* Never close before drawing ("draw" is only offered in phase "draw"). */
    if ((k = find_action(a, n, "draw")) >= 0) return (size_t)k;
    if (strcmp(phase, "close-offer") == 0 && (k = find_action(a, n, "pass")) >= 0) return (size_t)k;
    /* Show a marriage: the trump one if possible, else the first in suit order. */
    if (trump[0] != '\0' && trump[1] == '\0') {
        snprintf(want, sizeof want, "marry:%s", trump);
        if ((k = find_action(a, n, want)) >= 0) return (size_t)k;
    }
    for (i = 0; i < n; i++)
        if (strncmp(a[i].text, "marry:", 6) == 0) return i;

    /* Otherwise a uniformly random card. */
    cand = malloc(n * sizeof *cand);
    if (!cand) die(1, "out of memory");
    for (m = 0, i = 0; i < n; i++)
        if (strncmp(a[i].text, "play:", 5) == 0) cand[m++] = i;
    if (m == 0) { /* no card to play (not expected): anything but a close or a false claim */
        if ((k = find_action(a, n, "pass")) >= 0) {
            free(cand);
            return (size_t)k;
        }
        for (i = 0; i < n; i++)
            if (strcmp(a[i].text, "close") != 0 && strcmp(a[i].text, "declare") != 0) cand[m++] = i;
    }
    if (m == 0) { /* only close and/or a false declare: a failed close may still be won */
        free(cand);
        k = find_action(a, n, "close");
        return k >= 0 ? (size_t)k : 0;
    }
    i = cand[rng_below(m)];
    free(cand);
    return i;
}

/* ------------------------------------------------------------------------------------ */
/* Strategy at a table of three or four (protocol version 2)                            */
/*
 * A fixed policy, no randomness, read from the table observation and `legal` only:
 * claim 66 only with at least 66 for its side; show a marriage whenever one is legal
 * (the trump one first; before trumps are set, the one in the longest suit); bid only
 * on a strong hand, never over the partner and never the moon; name trumps
 * (three-pagat) only with two cards of a suit, or its A or 10, among the three seen.
 * Lead: before trumps are set, the top card of the longest suit (it becomes trumps);
 * then a side-suit card that no unplayed card beats, else the cheapest card. Follow:
 * never overtake a partner who is winning (team = seat mod 2), and give him the richest
 * card when playing last; else beat the winning card with the cheapest winner, else
 * throw the cheapest card.
 */

#define MAX_CARDS 32

typedef struct {
    int rank; /* 0..7: A T K Q J 9 8 7, strongest first */
    int suit; /* 0..3: C D H S */
    int points;
} Card;

static const char RANK_CHARS[] = "ATKQJ987";
static const char SUIT_CHARS[] = "CDHS";
static const int RANK_POINTS[8] = {11, 10, 4, 3, 2, 0, 0, 0};

static int parse_card(const char *t, Card *c)
{
    const char *r, *su;
    if (!t[0] || !t[1] || t[2]) return 0;
    r = strchr(RANK_CHARS, t[0]);
    su = strchr(SUIT_CHARS, t[1]);
    if (!r || !su) return 0;
    c->rank = (int)(r - RANK_CHARS);
    c->suit = (int)(su - SUIT_CHARS);
    c->points = RANK_POINTS[c->rank];
    return 1;
}

static int card_bit(Card c) { return c.suit * 8 + c.rank; }

static int suit_of(char ch)
{
    const char *su = ch ? strchr(SUIT_CHARS, ch) : NULL;
    return su ? (int)(su - SUIT_CHARS) : -1;
}

/* A JSON string holding a card; 0 if it is not one. */
static int json_card(const char *s, JVal v, Card *c)
{
    char buf[8];
    return v.type == J_STR && json_str(s, v, buf, sizeof buf) >= 0 && parse_card(buf, c);
}

/* The i-th element of an array (0 if absent). */
static int json_at(const char *s, JVal arr, long long i, JVal *out)
{
    JIter it;
    JVal key;
    long long k = 0;
    if (arr.type != J_ARR) return 0;
    jiter_init(&it, s, arr);
    while (jiter_next(&it, &key, out))
        if (k++ == i) return 1;
    return 0;
}

/* An integer field of obj, or dflt (also for null). */
static long long json_int_field(const char *s, JVal obj, const char *key, long long dflt)
{
    JVal v;
    long long x;
    return json_get(s, obj, key, &v) && json_ll(s, v, &x) ? x : dflt;
}

/* Each [seat, card] of a trick's "cards" into the played mask; the card of seat `who` into *won. */
static int trick_cards(const char *s, JVal cards, unsigned long *played, long long who, Card *won)
{
    JIter it;
    JVal key, pair, sv, cv;
    Card c;
    long long seat;
    int n = 0;
    if (cards.type != J_ARR) return 0;
    jiter_init(&it, s, cards);
    while (jiter_next(&it, &key, &pair)) {
        n++;
        if (!json_at(s, pair, 1, &cv) || !json_card(s, cv, &c)) continue;
        *played |= 1UL << card_bit(c);
        if (won && json_at(s, pair, 0, &sv) && json_ll(s, sv, &seat) && seat == who) *won = c;
    }
    return n;
}

/* Per suit: how many cards and points in cards[0..n-1]; returns the longest suit (more
   points break a tie, then suit order). */
static int longest_suit(const Card *cards, size_t n, int len[4], int pts[4])
{
    size_t i;
    int su, best = 0;
    for (su = 0; su < 4; su++) len[su] = pts[su] = 0;
    for (i = 0; i < n; i++) {
        len[cards[i].suit]++;
        pts[cards[i].suit] += cards[i].points;
    }
    for (su = 1; su < 4; su++)
        if (len[su] > len[best] || (len[su] == len[best] && pts[su] > pts[best])) best = su;
    return best;
}

/* Sort keys, smallest chosen: cheapest to give away (a non-trump, few points, weak). */
static long key_cheap(Card c, int trump) { return (c.suit == trump) * 10000L + c.points * 100L + (7 - c.rank); }
/* The richest card to give a partner's trick (and not a trump if it can help it). */
static long key_rich(Card c, int trump) { return -c.points * 1000L + (c.suit == trump) * 100L + (7 - c.rank); }

/* The play among cand[0..m-1] (indexes into plays) with the smallest key. */
static size_t pick_min(const Card *plays, const size_t *cand, size_t m, int trump, long (*key)(Card, int))
{
    size_t i, best = cand[0];
    for (i = 1; i < m; i++)
        if (key(plays[cand[i]], trump) < key(plays[best], trump)) best = cand[i];
    return best;
}

static int beats(Card c, Card w, int trump)
{
    if (c.suit == w.suit) return c.rank < w.rank;
    return c.suit == trump && w.suit != trump;
}

static long find_bid(const Action *a, size_t n, int b)
{
    char want[16];
    snprintf(want, sizeof want, "bid:%d", b);
    return find_action(a, n, want);
}

static size_t table_bid(const char *s, JVal obs, const Card *hand, size_t nh, const Action *a, size_t n)
{
    int len[4], pts[4], su, want = 0, b;
    long k, pass = find_action(a, n, "pass");
    long long players = json_int_field(s, obs, "players", 0);
    long long partner = json_int_field(s, obs, "partner", -1);
    long long bidder = json_int_field(s, obs, "bidder", -2);
    size_t i;
    long v;
    su = longest_suit(hand, nh, len, pts);
    v = pts[su] + 8L * len[su]; /* its longest suit as trumps, and its aces beside */
    for (i = 0; i < nh; i++)
        if (hand[i].suit != su && hand[i].rank == 0) v += 8;
    if (len[su] >= 3 && v >= (players == 4 ? 45 : 48)) want = 1;
    if (len[su] >= 4 && v >= (players == 4 ? 65 : 70)) want = 2;
    if (pass >= 0 && partner >= 0 && bidder == partner) return (size_t)pass;
    for (b = want; b >= 1; b--)
        if ((k = find_bid(a, n, b)) >= 0) return (size_t)k;
    if (pass >= 0) return (size_t)pass;
    for (b = 1; b <= 5; b++) /* the dealer must bid (all_pass = dealer_forced): the lowest */
        if ((k = find_bid(a, n, b)) >= 0) return (size_t)k;
    return 0;
}

static size_t table_name(const Card *hand, size_t nh, const Action *a, size_t n)
{
    int len[4], pts[4], su = longest_suit(hand, nh, len, pts);
    char want[16];
    long k, pass = find_action(a, n, "pass");
    snprintf(want, sizeof want, "trump:%c", SUIT_CHARS[su]);
    if ((len[su] >= 2 || pts[su] >= 10) && (k = find_action(a, n, want)) >= 0) return (size_t)k;
    return pass >= 0 ? (size_t)pass : 0;
}

/* A marriage to show, or -1. */
static long table_marriage(const Card *hand, size_t nh, const Action *a, size_t n, int trump)
{
    int len[4], pts[4], su, bs = -1;
    long best = -1;
    size_t i;
    char want[16];
    if (trump >= 0) {
        snprintf(want, sizeof want, "marry:%c", SUIT_CHARS[trump]);
        if ((best = find_action(a, n, want)) >= 0) return best;
    }
    /* before trumps are set every marriage is worth 40: the one in the longest suit */
    longest_suit(hand, nh, len, pts);
    for (i = 0; i < n; i++) {
        if (strncmp(a[i].text, "marry:", 6) != 0 || (su = suit_of(a[i].text[6])) < 0) continue;
        if (best < 0 || (trump < 0 && (len[su] > len[bs] || (len[su] == len[bs] && pts[su] > pts[bs])))) {
            best = (long)i;
            bs = su;
        }
    }
    return best;
}

static size_t choose_table(const char *s, JVal obs, const Action *a, size_t n)
{
    char phase[16] = "", trump_text[8] = "";
    Card hand[MAX_CARDS], plays[MAX_CARDS], c, won;
    size_t act[MAX_CARDS], cand[MAX_CARDS], nh = 0, np = 0, m, i;
    long long seat = json_int_field(s, obs, "seat", -1), team = json_int_field(s, obs, "team", 0);
    long long players = json_int_field(s, obs, "players", 0), mine = 0;
    unsigned long played = 0, held = 0;
    int trump = -1;
    long k;
    JVal v, e, key;
    JIter it;

    if (json_get(s, obs, "phase", &v) && json_str(s, v, phase, sizeof phase) < 0) phase[0] = '\0';
    if (json_get(s, obs, "trump", &v) && v.type == J_STR && json_str(s, v, trump_text, sizeof trump_text) == 1)
        trump = suit_of(trump_text[0]);
    if (json_get(s, obs, "points", &v) && json_at(s, v, team, &e) && !json_ll(s, e, &mine)) mine = 0;
    if (json_get(s, obs, "hand", &v) && v.type == J_ARR) {
        jiter_init(&it, s, v);
        while (nh < MAX_CARDS && jiter_next(&it, &key, &e))
            if (json_card(s, e, &hand[nh])) held |= 1UL << card_bit(hand[nh++]);
    }

    if ((k = find_action(a, n, "declare")) >= 0 && mine >= 66) return (size_t)k;
    if (n == 1) return 0;
    if (strcmp(phase, "bid") == 0) return table_bid(s, obs, hand, nh, a, n);
    if (strcmp(phase, "name") == 0) return table_name(hand, nh, a, n);
    if (strcmp(phase, "last") == 0) return (k = find_action(a, n, "pass")) >= 0 ? (size_t)k : 0;
    if ((k = table_marriage(hand, nh, a, n, trump)) >= 0) return (size_t)k;
    if (strcmp(phase, "meld") == 0) return (k = find_action(a, n, "pass")) >= 0 ? (size_t)k : 0;

    for (i = 0; i < n && np < MAX_CARDS; i++)
        if (strncmp(a[i].text, "play:", 5) == 0 && parse_card(a[i].text + 5, &plays[np])) act[np++] = i;
    if (np == 0) return (k = find_action(a, n, "pass")) >= 0 ? (size_t)k : 0;

    if (json_get(s, obs, "tricks", &v) && v.type == J_ARR) {
        JVal t, cards;
        jiter_init(&it, s, v);
        while (jiter_next(&it, &key, &t))
            if (json_get(s, t, "cards", &cards)) trick_cards(s, cards, &played, -1, NULL);
    }

    if (strcmp(phase, "follow") == 0 && json_get(s, obs, "current_trick", &v) && v.type == J_OBJ) {
        JVal cards;
        long long w = json_int_field(s, v, "winning", -1), out = json_int_field(s, obs, "sitting_out", -1);
        int on_table, last, partner_wins;
        size_t nw = 0, nl = 0, winners[MAX_CARDS];
        won = plays[0];
        on_table = json_get(s, v, "cards", &cards) ? trick_cards(s, cards, &played, w, &won) : 0;
        last = on_table + 1 == players - (out >= 0 ? 1 : 0);
        partner_wins = players == 4 && w >= 0 && w != seat && w % 2 == seat % 2;
        for (i = 0; i < np; i++) {
            if (beats(plays[i], won, trump))
                winners[nw++] = i;
            else
                cand[nl++] = i;
        }
        if (partner_wins) {
            if (nl == 0) return act[pick_min(plays, winners, nw, trump, key_cheap)];
            return act[pick_min(plays, cand, nl, trump, last ? key_rich : key_cheap)];
        }
        if (nw > 0) return act[pick_min(plays, winners, nw, trump, key_cheap)];
        for (i = 0; i < np; i++) cand[i] = i;
        return act[pick_min(plays, cand, np, trump, key_cheap)];
    }

    /* a lead */
    if (trump < 0) { /* the first card led sets trumps: the top card of the longest suit */
        int len[4], pts[4], su = longest_suit(plays, np, len, pts);
        size_t best = np;
        for (i = 0; i < np; i++)
            if (plays[i].suit == su && (best == np || plays[i].rank < plays[best].rank)) best = i;
        return act[best];
    }
    for (m = 0, i = 0; i < np; i++) { /* side-suit cards that no unplayed card beats */
        int r, boss = plays[i].suit != trump;
        for (r = 0; boss && r < plays[i].rank; r++) {
            c.rank = r;
            c.suit = plays[i].suit;
            if (!(((played | held) >> card_bit(c)) & 1UL)) boss = 0;
        }
        if (boss) cand[m++] = i;
    }
    if (m > 0) {
        size_t best = cand[0];
        for (i = 1; i < m; i++) {
            Card x = plays[cand[i]], y = plays[best];
            if (x.points > y.points || (x.points == y.points && x.rank < y.rank)) best = cand[i];
        }
        return act[best];
    }
    for (i = 0; i < np; i++) cand[i] = i;
    return act[pick_min(plays, cand, np, trump, key_cheap)];
}

/* ------------------------------------------------------------------------------------ */
/* Messages                                                                             */

static int said_hello;

/* The version to speak: the highest of hello.protocols (absent: [hello.protocol]) that
   this agent speaks, or 0 if none. */
static long long negotiate(const char *s, JVal msg, long long proto)
{
    JVal list, key, item;
    JIter it;
    long long v, best = 0;
    if (!json_get(s, msg, "protocols", &list) || list.type != J_ARR)
        return proto >= MIN_PROTOCOL && proto <= MAX_PROTOCOL ? proto : 0;
    jiter_init(&it, s, list);
    while (jiter_next(&it, &key, &item))
        if (json_ll(s, item, &v) && v >= MIN_PROTOCOL && v <= MAX_PROTOCOL && v > best) best = v;
    return best;
}

static void on_hello(const char *s, JVal msg)
{
    JVal v;
    long long proto, speak;
    unsigned long long seed = 0;
    if (!json_get(s, msg, "protocol", &v) || v.type != J_NUM || !v.is_int)
        malformed("line %lu: hello needs an integer 'protocol'", line_no);
    if (!json_ll(s, v, &proto)) proto = 0;
    speak = negotiate(s, msg, proto);
    if (!speak)
        die(2, "the referee speaks protocol version %.*s; this agent speaks version %d or %d",
            (int)(v.end - v.start > 40 ? 40 : v.end - v.start), s + v.start, MIN_PROTOCOL, MAX_PROTOCOL);
    if (!json_get(s, msg, "seed", &v) || !json_u64(s, v, &seed))
        malformed("line %lu: hello needs an integer 'seed' in 0..2^64-1", line_no);
    if (said_hello) {
        fprintf(stderr, AGENT_NAME ": line %lu: second hello ignored\n", line_no);
        return;
    }
    rng_state = (uint64_t)seed;
    said_hello = 1;
    fprintf(stderr, AGENT_NAME " " AGENT_VERSION ": protocol %lld, seed %llu\n", speak, seed);
    fflush(stderr);
    printf("{\"type\":\"ready\",\"protocol\":%lld,\"name\":\"" AGENT_NAME "\",\"version\":\"" AGENT_VERSION
           "\",\"capacity\":1%s}\n",
           speak, speak >= 2 ? ",\"games\":" GAMES : "");
    flush_out();
}

static void on_request(const char *s, JVal msg)
{
    JVal id, legal, obs, v, key, item;
    JIter it;
    size_t n = 0, pick;
    long long seat = -1;

    if (!json_get(s, msg, "id", &id) || id.type != J_NUM || !id.is_int)
        malformed("line %lu: request needs an integer 'id'", line_no);
    if (!json_get(s, msg, "legal", &legal) || legal.type != J_ARR)
        malformed("line %lu: request needs a 'legal' array", line_no);
    jiter_init(&it, s, legal);
    while (jiter_next(&it, &key, &item)) {
        if (item.type != J_STR) malformed("line %lu: request 'legal' holds a non-string", line_no);
        if (n == acts_cap) {
            size_t nc = acts_cap ? acts_cap * 2 : 32;
            Action *na = realloc(acts, nc * sizeof *na);
            if (!na) die(1, "out of memory");
            acts = na;
            acts_cap = nc;
        }
        acts[n].raw = item;
        if (json_str(s, item, acts[n].text, sizeof acts[n].text) < 0) acts[n].text[0] = '\0';
        n++;
    }
    if (n == 0) malformed("line %lu: request 'legal' is empty", line_no);
    if (json_get(s, msg, "seat", &v) && !json_ll(s, v, &seat)) seat = -1;
    if (!json_get(s, msg, "observation", &obs) || obs.type != J_OBJ) {
        fprintf(stderr, AGENT_NAME ": line %lu: request without an observation object\n", line_no);
        obs.type = J_NONE;
    }

    if (obs.type == J_OBJ && json_get(s, obs, "players", &v) && !json_get(s, obs, "talon_size", &v))
        pick = choose_table(s, obs, acts, n); /* three-sitout's deals have the two-handed observation */
    else
        pick = choose(s, obs, acts, n, seat);
    printf("{\"type\":\"action\",\"id\":%.*s,\"action\":%.*s}\n", (int)(id.end - id.start), s + id.start,
           (int)(acts[pick].raw.end - acts[pick].raw.start), s + acts[pick].raw.start);
    flush_out();
}

static void on_ping(const char *s, JVal msg)
{
    JVal id;
    if (!json_get(s, msg, "id", &id) || id.type != J_NUM || !id.is_int)
        malformed("line %lu: ping needs an integer 'id'", line_no);
    printf("{\"type\":\"pong\",\"id\":%.*s}\n", (int)(id.end - id.start), s + id.start);
    flush_out();
}

/* Handle one line (without its newline). Returns 1 to go on, 0 to exit normally. */
static int handle_line(const char *s, size_t n)
{
    JVal root, v;
    const char *err;
    size_t err_at;
    char type[32];

    if (json_parse(s, n, &root, &err, &err_at) < 0)
        malformed("line %lu is not valid JSON: %s at byte %lu", line_no, err, (unsigned long)err_at);
    if (root.type != J_OBJ) malformed("line %lu is not a JSON object", line_no);
    if (!json_get(s, root, "type", &v) || v.type != J_STR)
        malformed("line %lu has no string 'type'", line_no);
    if (json_str(s, v, type, sizeof type) < 0) type[0] = '\0'; /* too long: an unknown type */

    if (strcmp(type, "quit") == 0) return 0;
    if (strcmp(type, "hello") == 0) {
        on_hello(s, root);
        return 1;
    }
    if (strcmp(type, "request") == 0 || strcmp(type, "ping") == 0) {
        if (!said_hello) malformed("line %lu: '%s' before hello", line_no, type);
        if (type[0] == 'r')
            on_request(s, root);
        else
            on_ping(s, root);
        return 1;
    }
    if (strcmp(type, "match_start") == 0) {
        /* A seed per match (protocol 1 sends one): the match then plays the same way
           whatever this process played before. */
        unsigned long long seed;
        if (json_get(s, root, "seed", &v) && json_u64(s, v, &seed)) rng_state = (uint64_t)seed;
        return 1;
    }
    /* deal_start, deal_end, match_end and unknown types: no answer. */
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* Input: one line at a time into a growable buffer.                                    */

/* 1 with a line in *buf (length *len, newline and a '\r' before it removed), 0 at EOF. */
static int read_line(char **buf, size_t *cap, size_t *len)
{
    size_t n = 0;
    int c, any = 0;
    for (;;) {
        c = getc(stdin);
        if (c == EOF) {
            if (ferror(stdin)) die(2, "cannot read stdin: %s", strerror(errno));
            if (!any) return 0;
            break; /* a last line without its newline */
        }
        any = 1;
        if (c == '\n') break;
        if (n + 1 >= *cap) {
            size_t nc = *cap ? *cap * 2 : 8192;
            char *nb;
            if (nc > MAX_LINE + 2) malformed("line %lu is longer than %lu bytes", line_no, (unsigned long)MAX_LINE);
            nb = realloc(*buf, nc);
            if (!nb) die(1, "out of memory");
            *buf = nb;
            *cap = nc;
        }
        (*buf)[n++] = (char)c;
    }
    if (n > 0 && (*buf)[n - 1] == '\r') n--;
    if (*buf) (*buf)[n] = '\0';
    *len = n;
    return 1;
}

int main(void)
{
    char *buf = NULL;
    size_t cap = 0, len = 0;

    signal(SIGPIPE, SIG_IGN); /* a closed stdout is reported by flush_out, not by a signal */
    while (read_line(&buf, &cap, &len)) {
        line_no++;
        if (!handle_line(buf ? buf : "", len)) break;
    }
    free(buf);
    free(acts);
    return 0;
}
