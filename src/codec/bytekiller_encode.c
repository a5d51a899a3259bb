/*
 * The Delphine packer's encoder (Bytekiller 1.3 family; the stream and its
 * commands are described at the top of bytekiller.c, the decoder's file).
 * Every stream it writes is checked against `scummvm-tools-cli --tool
 * extract_cine` in the tests.
 *
 * Encoder. Reversing the input turns the format into ordinary LZ77: the
 * decoder's output order is the reversed input's forward order, and a copy
 * from `o` bytes above becomes a match `o` bytes back. Per position the
 * encoder finds the nearest match of at least 2, 3 and 4 bytes (the short
 * copies' costs depend on the distance; a pair table and two hash chains)
 * and the longest match within 4095 bytes (the long copy costs 23 bits
 * whatever its distance and length; binary trees keyed by a hash of 3
 * bytes). A backward dynamic programme then picks the cheapest parse in
 * bits; the literal-run costs (5 + 8n up to 8 bytes, 11 + 8n up to 264) and
 * the long copy's range of lengths are minimised over sliding windows
 * without data-dependent branches (see parse_segment and
 * copy_minima_add), so each position costs O(1) besides the match search.
 *
 * Segments. The reversed input is cut into segments (32 to 256 KiB, a
 * sixteenth of the input, the first taking the remainder; see
 * segment_size) that are packed independently:
 * each starts a fresh match finder, first fed the 4095 bytes before the
 * segment so that matches still reach back across the cut, and parses up
 * to its own end. Their bit strings are then joined. This costs a few
 * bytes per megabyte (the parse cannot run a command across a cut), and it
 * lets threads pack segments side by side (trowel_ctx_set_threads): the
 * cut depends only on the input's size, so the output is the same whatever
 * the number of threads. The last segment also keeps to the in-place rule
 * (see parse_segment) when it can.
 */
#include "codec/bytekiller.h"
#include "codec/bytekiller_int.h"

#include "core/bytes.h"
#include "core/module.h"
#include "core/sink.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Segments are packed independently (see the encoder's notes above). */
#define BK_SEGMENT_MIN ((size_t)1 << 15)
#define BK_SEGMENT_MAX ((size_t)1 << 18)
/* The parse's window keys hold costs below 2^24 bits (see window_key): at
 * most 13 bits a byte (even a parse held to the in-place rule never pays
 * more than a one-byte run), plus 8 per position, over a segment, which is
 * under twice BK_SEGMENT_MAX (see segment_size). */
_Static_assert(2 * BK_SEGMENT_MAX * 21 < ((size_t)1 << 24), "segments too long for window keys");

/* The low w (<= 24) bits of x in reverse order. */
static inline uint32_t rev_bits24(uint32_t x, unsigned w)
{
    uint32_t r = (uint32_t)rev8[x & 0xff] << 16 | (uint32_t)rev8[(x >> 8) & 0xff] << 8 |
                 rev8[(x >> 16) & 0xff];
    return r >> (24 - w);
}

/* ------------------------------------------------------------------ encoder */

enum bk_kind { K_RUN, K_COPY2, K_COPY3, K_COPY4, K_COPYN };

/* One segment of the reversed input and the bits it packed to, in decoding
 * order, least significant bit first: `words` whole words, then `tail`
 * bits of bits[words]. */
typedef struct bk_segment {
    size_t start, len;
    uint32_t *bits;
    size_t words;
    unsigned tail;
} bk_segment;

typedef struct bk_job {
    trowel_ctx *ctx;
    const uint8_t *r; /* the input reversed */
    size_t n;
    bk_segment *segs;
    size_t nsegs;
    atomic_size_t next; /* the next segment to take */
    atomic_size_t done; /* input bytes packed so far */
} bk_job;

/* Everything one packer (thread) needs for a segment; one allocation. */
typedef struct bk_worker {
    bk_job *job;
    bool reports; /* this one calls the progress callback */
    const uint8_t *r;
    size_t n;
    int32_t *root;  /* binary-tree roots, by a hash of 3 bytes */
    int32_t *son;   /* the trees' child links for the last 4096 positions */
    int32_t *last2; /* last position of each byte pair */
    int32_t *prev2; /* ring: the previous position with the same pair */
    /* per position of the segment */
    uint16_t *d2, *d3, *d4, *dl, *ml;
    uint32_t *cost;
    uint16_t *clen;
    uint8_t *ckind;
    uint32_t (*copy_minima)[BK_RING]; /* see copy_minima_add */
    uint32_t *run_suffix, *run_prefix; /* see parse_segment */
    /* bit output of the segment in hand */
    uint32_t *bits;
    size_t bits_len;
    uint64_t acc;
    unsigned nacc;
} bk_worker;

/* The tree a position belongs to: a hash of its first 3 bytes. Keying by
 * 3 bytes rather than 2 keeps the trees small; a long copy of 2 bytes is
 * never worth its 23 bits, and the nearest pair is known anyway. */
static inline unsigned tree_key(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - BK_ROOT_BITS);
}

static inline size_t match_len(const uint8_t *a, const uint8_t *b, size_t cap)
{
    size_t l = 0;
    while (l + 8 <= cap) {
        uint64_t x, y;
        memcpy(&x, a + l, 8);
        memcpy(&y, b + l, 8);
        if (x != y) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            return l + (size_t)(__builtin_clzll(x ^ y) >> 3);
#else
            return l + (size_t)(__builtin_ctzll(x ^ y) >> 3);
#endif
        }
        l += 8;
    }
    while (l < cap && a[l] == b[l])
        l++;
    return l;
}

/* Whether the 8 bytes at a and b differ; if so, adds to *len how many
 * lead bytes are equal and says whether a's first differing byte is the
 * smaller. The bytes are taken from the words already loaded: a byte load
 * that waits for the length would lengthen the tree walk's chain of
 * dependent steps. */
static inline bool first_difference(const uint8_t *a, const uint8_t *b, size_t *len,
                                    bool *smaller)
{
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    if (x == y)
        return false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    unsigned shift = 56 - ((unsigned)__builtin_clzll(x ^ y) & ~7u);
    *len += (56 - shift) >> 3;
#else
    unsigned shift = (unsigned)__builtin_ctzll(x ^ y) & ~7u;
    *len += shift >> 3;
#endif
    *smaller = ((x >> shift) & 0xff) < ((y >> shift) & 0xff);
    return true;
}

/* The nearest earlier position within max_dist whose first `need` (3 or
 * 4) bytes equal those at i, walking the positions with i's byte pair from
 * c, the latest of them; 0 if none. */
static uint16_t nearest_on_pairs(const uint8_t *r, const int32_t *prev2, int32_t c, size_t i,
                                 size_t need, size_t max_dist)
{
    while (c >= 0 && i - (size_t)c <= max_dist) {
        if (r[c + 2] == r[i + 2] && (need == 3 || r[c + 3] == r[i + 3]))
            return (uint16_t)(i - (size_t)c);
        c = prev2[(size_t)c & BK_WINDOW];
    }
    return 0;
}

/* Inserts i into the binary tree of its key (positions ordered by the
 * bytes that follow) and returns the longest match within the window, up to
 * cap bytes, with its distance. The tree is walked down once: each node
 * passed is hung on the left or right spine of the new root, so the search
 * and the insertion are the same pass. *latest: the tree's root before i,
 * the latest earlier position with the same key (-1: none). */
BK_ALWAYS_INLINE size_t tree_match(bk_worker *w, size_t i, size_t cap, uint16_t *dist,
                                   int32_t *latest)
{
    const uint8_t *r = w->r;
    unsigned key = tree_key(r + i);
    int32_t cur = w->root[key];
    *latest = cur;
    w->root[key] = (int32_t)i;
    int32_t *left = &w->son[2 * (i & BK_WINDOW)];
    int32_t *right = left + 1;
    size_t len_left = 0, len_right = 0, best = 0;
    int32_t best_at = 0; /* where best was found */
    unsigned depth = BK_TREE_DEPTH;
    while (cur >= 0 && i - (size_t)cur <= BK_WINDOW && depth--) {
        int32_t *pair = &w->son[2 * ((size_t)cur & BK_WINDOW)];
        size_t len = len_left < len_right ? len_left : len_right;
        bool smaller;
        if (TROWEL_LIKELY(cap - len >= 8) && first_difference(r + cur + len, r + i + len, &len,
                                                              &smaller)) {
            /* The usual node: the strings part within 8 bytes. */
        } else {
            len += match_len(r + cur + len, r + i + len, cap - len);
            smaller = len < cap && r[cur + len] < r[i + len];
        }
        /* Selects, not a branch: a longer match turns up at random, and
         * nothing in the walk waits for these two. */
        best_at = len > best ? cur : best_at;
        best = len > best ? len : best;
        if (len == cap) {
            /* Equal as far as we look: cur's subtrees become i's. */
            *left = pair[0];
            *right = pair[1];
            *dist = (uint16_t)(i - (size_t)best_at);
            return best;
        }
        if (smaller) {
            *left = cur;
            left = &pair[1];
            cur = *left;
            len_left = len;
        } else {
            *right = cur;
            right = &pair[0];
            cur = *right;
            len_right = len;
        }
    }
    *left = -1;
    *right = -1;
    if (best > 0)
        *dist = (uint16_t)(i - (size_t)best_at);
    return best;
}

/* A fresh match finder that has seen the positions [from, to): the state
 * find_matches would have left had it run over them. */
static void finder_start(bk_worker *w, size_t from, size_t to)
{
    memset(w->root, 0xff, ((size_t)1 << BK_ROOT_BITS) * sizeof(int32_t));
    memset(w->last2, 0xff, 65536 * sizeof(int32_t));
    const uint8_t *r = w->r;
    for (size_t i = from; i < to; i++) {
        unsigned pair = (unsigned)r[i] << 8 | r[i + 1];
        w->prev2[i & BK_WINDOW] = w->last2[pair];
        w->last2[pair] = (int32_t)i;
        if (i + 2 < w->n) {
            size_t whole = w->n - i < BK_MAX_COPY ? w->n - i : BK_MAX_COPY;
            uint16_t d;
            int32_t latest;
            tree_match(w, i, whole < BK_NICE ? whole : BK_NICE, &d, &latest);
        }
    }
}

/* Match facts for the positions [bs, be) of the reversed input: the nearest
 * matches of 2, 3 and 4 bytes (the short copies' offset limits make the
 * nearest the only one worth knowing) and the longest match. Matches may
 * run past the segment's end in the search (so that the finder's state does
 * not depend on where segments end); lengths are then cut there. */
static void find_matches(bk_worker *w, size_t bs, size_t be)
{
    const uint8_t *r = w->r;
    const size_t n = w->n;
    /* The previous position's long match (length before the cut,
     * distance), if the tree gave it BK_NICE bytes and it was extended:
     * in a long repeat each position would otherwise compare up to 192
     * bytes its neighbour has just compared. */
    size_t prev_len = 0;
    uint16_t prev_dist = 0;
    for (size_t i = bs; i < be; i++) {
        size_t k = i - bs;
        size_t room = be - i;
        uint16_t d2 = 0, d3 = 0, d4 = 0, dl = 0, ml = 0;
        int32_t latest = -1, pair_prev = -1;
        if (i + 1 < n) {
            unsigned pair = (unsigned)r[i] << 8 | r[i + 1];
            pair_prev = w->last2[pair];
            w->last2[pair] = (int32_t)i;
            w->prev2[i & BK_WINDOW] = pair_prev;
            if (pair_prev >= 0 && i - (size_t)pair_prev <= BK_WINDOW && room >= 2)
                d2 = (uint16_t)(i - (size_t)pair_prev);
        }
        if (i + 2 < n) {
            size_t whole = n - i < BK_MAX_COPY ? n - i : BK_MAX_COPY;
            uint16_t d = 0;
            size_t l = tree_match(w, i, whole < BK_NICE ? whole : BK_NICE, &d, &latest);
            if (l == BK_NICE) {
                /* The tree stops there: follow this one on. The match at
                 * i - 1 with the same distance, of prev_len bytes, shows
                 * that prev_len - 1 bytes here are equal already. */
                if (d == prev_dist && prev_len > l + 1)
                    l = prev_len - 1 < whole ? prev_len - 1 : whole;
                l += match_len(r + i + l, r + i - d + l, whole - l);
                prev_len = l;
                prev_dist = d;
            } else {
                prev_len = 0;
            }
            if (l > room)
                l = room;
            if (l >= 3) {
                ml = (uint16_t)l;
                dl = d;
            }
        }
        if (!ml && d2) {
            /* The trees hold 3-byte keys; the nearest pair is a match of 2. */
            ml = 2;
            dl = d2;
        }
        /* The nearest 3- and 4-byte matches, mostly without a search.
         * Every position goes into its tree, so the tree's previous root
         * is the latest position with the same key: if it is out of the
         * window, no position in it shares the first 3 bytes; if it
         * shares them, it is the nearest 3-byte match, and the nearest
         * 4-byte one too if it shares the fourth. Otherwise (the key is
         * a hash; or the fourth byte differs) the positions with the same
         * pair are walked, nearest first. */
        bool know3 = false, know4 = false;
        uint16_t near3 = 0, near4 = 0;
        if (i + 2 < n) {
            size_t dq = i - (size_t)latest; /* latest < i, or -1 */
            if (latest < 0 || dq > BK_WINDOW) {
                know3 = know4 = true;
            } else if (r[latest] == r[i] && r[latest + 1] == r[i + 1] &&
                       r[latest + 2] == r[i + 2]) {
                know3 = true;
                near3 = dq <= 511 ? (uint16_t)dq : 0;
                if (i + 3 < n && r[latest + 3] == r[i + 3]) {
                    know4 = true;
                    near4 = dq <= 1023 ? (uint16_t)dq : 0;
                }
            }
        }
        if (room >= 3 && ml >= 3)
            d3 = know3 ? near3 : nearest_on_pairs(r, w->prev2, pair_prev, i, 3, 511);
        if (room >= 4 && ml >= 4 && i + 3 < n)
            d4 = know4 ? near4 : nearest_on_pairs(r, w->prev2, pair_prev, i, 4, 1023);
        w->d2[k] = d2;
        w->d3[k] = d3;
        w->d4[k] = d4;
        w->dl[k] = dl;
        w->ml[k] = ml;
    }
}

/* In-place decoding (see trowel_bytekiller_in_place_safe) holds when, at
 * each output byte written, the stream bits still unread fill no more whole
 * words than the bytes below that output byte hold: with R bits left and
 * the lowest byte written at file position p, R < 32 * (p / 4 + 1). In the
 * reversed input, the bits left after a command ending at index e are
 * exactly cost[e] (the parse from e on), so the rule becomes a test of
 * cost[e] against a limit that depends only on e. For a literal run, which
 * writes its bytes one by one, the limit is the smallest over its bytes;
 * it repeats every 4 bytes, so runs of 4 or more share one limit.
 * Only the last segment is constrained: before it the bits of later ones
 * are not known yet, and only an input that does not pack at all could
 * break the rule that far from its start. */
#define BK_INF (UINT32_MAX / 2)

static inline uint64_t in_place_limit(uint64_t p)
{
    return 32 * (p / 4) + 31;
}

/* The limit for a command (or run of `run` bytes, 1 or more) whose lowest
 * byte is file position p: the smallest of in_place_limit(p + t) - 8t over
 * the bytes t < run. The first term falls by 8 a byte and rises by 32 where
 * p + t crosses into the next word, so the smallest is the last byte before
 * that crossing (or the run's last byte): t = min(run - 1, 3 - p % 4).
 * From 4 bytes on that is 8p + 7. This is evaluated for every choice at
 * every position of the last segment, so it is a formula, not a loop. */
static inline uint64_t run_limit(uint64_t p, unsigned run)
{
    uint64_t t = 3 - p % 4;
    if (run - 1 < t)
        t = run - 1;
    return in_place_limit(p) - 8 * t;
}

/* A parse choice as one sortable key: its cost in bits, then the order
 * in which the choices are weighed (ties go to the first), then what to
 * emit. */
static inline uint64_t bk_choice(uint32_t cost, unsigned order, unsigned kind, unsigned len)
{
    return (uint64_t)cost << 32 | (uint64_t)order << 24 | (uint64_t)kind << 16 | len;
}

/* Window minima for the parse, which runs from the segment's end down.
 * A key packs a cost (high bits) over the low 8 bits of its position, so
 * the smallest key also says where (no window is over 256 wide); costs in
 * a segment of under 512 KiB stay below 2^24, so a key fits 32 bits.
 * Ties go to whichever position's low bits are smaller: any of them gives
 * the same cost. The tables are rings of BK_RING entries: every window
 * lies within 264 positions of the lowest one added. */
static inline uint32_t window_key(uint32_t cost, size_t j)
{
    return cost << 8 | (uint32_t)(j & 255);
}

/* The position a window's key names, the window starting at a. */
static inline size_t window_at(uint32_t key, size_t a)
{
    return a + (((size_t)(key & 255) - (a & 255)) & 255);
}

/* Long copies: windows [k + 2, k + longest match], any width up to 255, so
 * a sparse table: level p at x holds the smallest key of [x, x + 2^p), and
 * a window is the smaller of two overlapping entries of one level. */
static inline void copy_minima_add(uint32_t (*level)[BK_RING], size_t x, uint32_t key)
{
    size_t at = x & (BK_RING - 1);
    uint32_t m = key;
    level[0][at] = m;
    /* Spelt out (a loop here was not unrolled): level p from p - 1. */
#define BK_LEVEL(p)                                                                                \
    do {                                                                                           \
        uint32_t hi = level[(p) - 1][(x + ((size_t)1 << ((p) - 1))) & (BK_RING - 1)];             \
        m = m < hi ? m : hi;                                                                       \
        level[p][at] = m;                                                                          \
    } while (0)
    BK_LEVEL(1);
    BK_LEVEL(2);
    BK_LEVEL(3);
    BK_LEVEL(4);
    BK_LEVEL(5);
    BK_LEVEL(6);
    BK_LEVEL(7);
#undef BK_LEVEL
}

static inline uint32_t copy_minima_get(uint32_t (*level)[BK_RING], size_t x, size_t count)
{
    unsigned p = 31u - (unsigned)__builtin_clz((unsigned)count);
    uint32_t lo = level[p][x & (BK_RING - 1)];
    uint32_t hi = level[p][(x + count - ((size_t)1 << p)) & (BK_RING - 1)];
    return lo < hi ? lo : hi;
}

/* The cheapest parse of the segment's K positions, ending at its end.
 * constrained: the segment ends the input, and the file position of its
 * index e is tail_base - e; the parse keeps to the in-place rule above.
 * False if no parse can. */
BK_ALWAYS_INLINE bool parse_segment(bk_worker *e, size_t K, bool constrained, uint64_t tail_base)
{
    uint32_t *cost = e->cost;
    uint32_t *suffix = e->run_suffix, *prefix = e->run_prefix;
    uint32_t(*copies)[BK_RING] = e->copy_minima;
    memset(e->copy_minima, 0xff, sizeof(uint32_t) * BK_COPY_LEVELS * BK_RING);
    cost[K] = 0;
    /* Every run_limit(p, run) is at least 8p + 7, and away from the file's
     * start the bits left are well below that: with p = tail_base - j,
     * cost[j] <= 8p + 7 is cost[j] + 8j <= 8 * tail_base + 7, one
     * comparison; only near the start is the exact limit needed. */
    const uint64_t slack_top = 8 * tail_base + 7;
#define BK_OK(j, run)                                                                              \
    (!constrained || (uint64_t)cost[j] + 8 * (uint64_t)(j) <= slack_top ||                         \
     cost[j] <= run_limit(tail_base - (j), (run)))
    /* A long literal run from k ending at j costs cost[j] + 8j - 8k + 11:
     * its key is cost[j] + 8j (runs of 9 or more keep to the strictest
     * in-place limit, that of 4 bytes). */
#define BK_RUN_KEY(j)                                                                              \
    ((!constrained || cost[j] < BK_INF) && BK_OK(j, 4)                                             \
         ? window_key(cost[j] + 8 * (uint32_t)(j), (j))                                            \
         : UINT32_MAX)
    for (size_t k = K; k-- > 0;) {
        /* Each choice is one bk_choice key and the cheapest key wins:
         * minima, not branches, which would be mispredicted. */
        uint64_t best = bk_choice(BK_INF, 0, K_RUN, 1);
#define BK_SHORT(m)                                                                                \
    do {                                                                                           \
        uint64_t c = bk_choice(5 + 8 * (uint32_t)(m) + cost[k + (m)], (unsigned)(m) - 1, K_RUN,   \
                               (unsigned)(m));                                                     \
        c = BK_OK(k + (m), (m) < 4 ? (unsigned)(m) : 4) ? c : UINT64_MAX;                          \
        best = c < best ? c : best;                                                                \
    } while (0)
        if (K - k >= BK_SHORT_RUN) {
            /* Spelt out: the loop's exit was mispredicted once a position. */
            BK_SHORT(1);
            BK_SHORT(2);
            BK_SHORT(3);
            BK_SHORT(4);
            BK_SHORT(5);
            BK_SHORT(6);
            BK_SHORT(7);
            BK_SHORT(8);
        } else {
            for (size_t m = 1; m <= K - k; m++)
                BK_SHORT(m);
        }
#undef BK_SHORT
        if (k + 9 <= K) {
            /* Long runs: windows [k + 9, k + 264], all 256 wide but near
             * the end, so van Herk's method: with the positions cut into
             * blocks of 256, a window is a suffix of one block and a
             * prefix of the next. Suffix minima grow down one position a
             * step; a block's prefix minima are made when its lowest
             * position arrives. */
            size_t a = k + 9;
            uint32_t key = BK_RUN_KEY(a);
            uint32_t up = suffix[(a + 1) & (BK_RING - 1)];
            suffix[a & (BK_RING - 1)] = (a & 255) == 255 || a == K ? key : (key < up ? key : up);
            if ((a & 255) == 0) {
                size_t end = a + 255 < K ? a + 255 : K;
                uint32_t m = UINT32_MAX;
                for (size_t x = a; x <= end; x++) {
                    uint32_t kx = BK_RUN_KEY(x);
                    m = kx < m ? kx : m;
                    prefix[x & (BK_RING - 1)] = m;
                }
            }
            size_t b = k + 264 < K ? k + 264 : K;
            uint32_t lo = suffix[a & (BK_RING - 1)], hi = prefix[b & (BK_RING - 1)];
            uint32_t w = (a >> 8) == (b >> 8) || lo < hi ? lo : hi;
            size_t j = window_at(w, a);
            uint64_t c = bk_choice((w >> 8) - 8 * (uint32_t)k + 11, 8, K_RUN, (unsigned)(j - k));
            c = w == UINT32_MAX ? UINT64_MAX : c;
            best = c < best ? c : best;
        }
        if (k + 2 <= K)
            copy_minima_add(copies, k + 2,
                            (!constrained || cost[k + 2] < BK_INF) && BK_OK(k + 2, 1)
                                ? window_key(cost[k + 2], k + 2)
                                : UINT32_MAX);
        if (e->ml[k] >= 2) {
            uint32_t w = copy_minima_get(copies, k + 2, e->ml[k] - 1u);
            size_t j = window_at(w, k + 2);
            uint64_t c = bk_choice((w >> 8) + 23, 9, K_COPYN, (unsigned)(j - k));
            c = w == UINT32_MAX ? UINT64_MAX : c;
            best = c < best ? c : best;
        }
        /* The short copies (distance 0: none here; a nonzero one always
         * fits in the segment, the match finder cut it at its end). */
        uint64_t c2 = e->d2[k] && e->d2[k] <= 255 && BK_OK(k + 2, 1)
                          ? bk_choice(10 + cost[k + 2], 10, K_COPY2, 2)
                          : UINT64_MAX;
        uint64_t c3 = e->d3[k] && BK_OK(k + 3, 1) ? bk_choice(12 + cost[k + 3], 11, K_COPY3, 3)
                                                  : UINT64_MAX;
        uint64_t c4 = e->d4[k] && BK_OK(k + 4, 1) ? bk_choice(13 + cost[k + 4], 12, K_COPY4, 4)
                                                  : UINT64_MAX;
        best = c2 < best ? c2 : best;
        best = c3 < best ? c3 : best;
        best = c4 < best ? c4 : best;
        cost[k] = (uint32_t)(best >> 32);
        e->ckind[k] = (uint8_t)(best >> 16);
        e->clen[k] = (uint16_t)best;
    }
#undef BK_RUN_KEY
#undef BK_OK
    return cost[0] < BK_INF;
}

/* parse_segment twice over, so that the unconstrained parse of every segment
 * but the last carries no in-place tests at all. */
static bool parse_free(bk_worker *e, size_t K)
{
    return parse_segment(e, K, false, 0);
}

static bool parse_last(bk_worker *e, size_t K, uint64_t tail_base)
{
    return parse_segment(e, K, true, tail_base);
}

/* Appends a w-bit (<= 24) field, most significant bit first in decoding order. */
static inline void put_field(bk_worker *e, uint32_t v, unsigned w)
{
    e->acc |= (uint64_t)rev_bits24(v, w) << e->nacc;
    e->nacc += w;
    if (e->nacc >= 32) {
        e->bits[e->bits_len++] = (uint32_t)e->acc;
        e->acc >>= 32;
        e->nacc -= 32;
    }
}

static void emit_segment(bk_worker *e, size_t bs, size_t K)
{
    const uint8_t *r = e->r + bs;
    for (size_t k = 0; k < K;) {
        unsigned len = e->clen[k];
        switch (e->ckind[k]) {
        case K_RUN:
            if (len <= BK_SHORT_RUN)
                put_field(e, len - 1, 5); /* 0 0 nnn */
            else
                put_field(e, 7u << 8 | (len - 9), 11); /* 1 1 1 n*8 */
            for (unsigned i = 0; i < len; i++)
                put_field(e, r[k + i], 8);
            break;
        case K_COPY2:
            put_field(e, 1u << 8 | e->d2[k], 10);
            break;
        case K_COPY3:
            put_field(e, 4u << 9 | e->d3[k], 12);
            break;
        case K_COPY4:
            put_field(e, 5u << 10 | e->d4[k], 13);
            break;
        default:
            put_field(e, (6u << 8 | (len - 1)) << 12 | e->dl[k], 23);
            break;
        }
        k += len;
    }
}

/* ---- segments and their packers */

/* Packs one segment: a match finder warmed on the window before it, the
 * matches, the cheapest parse, the bits. The last segment keeps to the
 * in-place rule when it can. */
static void pack_segment(bk_worker *w, bk_segment *seg)
{
    size_t bs = seg->start, K = seg->len;
    finder_start(w, bs > BK_WINDOW ? bs - BK_WINDOW : 0, bs);
    find_matches(w, bs, bs + K);
    bool last = bs + K == w->n;
    if (!last || !parse_last(w, K, w->n - bs))
        parse_free(w, K);
    w->bits = seg->bits;
    w->bits_len = 0;
    w->acc = 0;
    w->nacc = 0;
    emit_segment(w, bs, K);
    seg->words = w->bits_len;
    seg->tail = w->nacc;
    if (w->nacc)
        seg->bits[w->bits_len] = (uint32_t)w->acc;
}

/* Takes segments until none is left. */
static void pack_segments(bk_worker *w)
{
    bk_job *job = w->job;
    for (;;) {
        size_t s = atomic_fetch_add(&job->next, 1);
        if (s >= job->nsegs)
            return;
        pack_segment(w, &job->segs[s]);
        size_t done = atomic_fetch_add(&job->done, job->segs[s].len) + job->segs[s].len;
        if (w->reports)
            trowel_progress(job->ctx, done, job->n);
    }
}

static void *pack_thread(void *arg)
{
    pack_segments(arg);
    return NULL;
}

/* The bytes one worker takes for segments of up to seg bytes. */
static size_t worker_bytes(size_t seg)
{
    return (((size_t)1 << BK_ROOT_BITS) + 65536 + 3 * (BK_WINDOW + 1)) * sizeof(int32_t) +
           (seg + 1 + (BK_COPY_LEVELS + 2) * BK_RING) * sizeof(uint32_t) +
           6 * seg * sizeof(uint16_t) + seg + 64;
}

/* Carves a worker's tables out of one allocation (largest elements first,
 * so every table is aligned). */
static bk_worker *worker_new(trowel_ctx *ctx, bk_job *job, size_t seg)
{
    bk_worker *w = trowel_mem_calloc(ctx, 1, sizeof *w);
    uint8_t *p = w ? trowel_mem_alloc(ctx, worker_bytes(seg)) : NULL;
    if (!p) {
        trowel_mem_free(ctx, w);
        return NULL;
    }
    w->job = job;
    w->r = job->r;
    w->n = job->n;
#define BK_CARVE(field, count)                                                                     \
    do {                                                                                           \
        w->field = (void *)p;                                                                      \
        p += (count) * sizeof *w->field;                                                           \
    } while (0)
    BK_CARVE(root, (size_t)1 << BK_ROOT_BITS);
    BK_CARVE(son, 2 * (BK_WINDOW + 1));
    BK_CARVE(last2, 65536);
    BK_CARVE(prev2, BK_WINDOW + 1);
    BK_CARVE(cost, seg + 1);
    BK_CARVE(copy_minima, BK_COPY_LEVELS);
    BK_CARVE(run_suffix, BK_RING);
    BK_CARVE(run_prefix, BK_RING);
    BK_CARVE(d2, seg);
    BK_CARVE(d3, seg);
    BK_CARVE(d4, seg);
    BK_CARVE(dl, seg);
    BK_CARVE(ml, seg);
    BK_CARVE(clen, seg);
    BK_CARVE(ckind, seg);
#undef BK_CARVE
    return w;
}

static void worker_free(trowel_ctx *ctx, bk_worker *w)
{
    if (w) {
        trowel_mem_free(ctx, w->root); /* the start of the tables' block */
        trowel_mem_free(ctx, w);
    }
}

/* Runs the job (segments of up to `seg` bytes) on up to `threads` packers,
 * this thread one of them (and the only one to report progress). Fewer
 * threads are used if the memory limit leaves room for fewer packers or a
 * thread cannot be started; none of that changes the output. */
static trowel_status run_job(trowel_ctx *ctx, bk_job *job, size_t seg, unsigned threads)
{
    uint64_t room = ctx->mem_limit > ctx->mem_in_use ? ctx->mem_limit - ctx->mem_in_use : 0;
    uint64_t fit = room / (worker_bytes(seg) + sizeof(bk_worker) + 64);
    if (threads > fit)
        threads = fit ? (unsigned)fit : 1;
    if (threads > BK_MAX_THREADS)
        threads = BK_MAX_THREADS;
    bk_worker *workers[BK_MAX_THREADS] = {NULL};
    pthread_t tids[BK_MAX_THREADS];
    bool started[BK_MAX_THREADS] = {false};
    if (!(workers[0] = worker_new(ctx, job, seg)))
        return ctx->last_error.status;
    workers[0]->reports = true;
    for (unsigned t = 1; t < threads; t++) {
        trowel_error saved = ctx->last_error;
        workers[t] = worker_new(ctx, job, seg);
        if (!workers[t]) {
            ctx->last_error = saved; /* one packer fewer is no failure */
            break;
        }
        started[t] = pthread_create(&tids[t], NULL, pack_thread, workers[t]) == 0;
        if (!started[t])
            break;
    }
    pack_segments(workers[0]);
    for (unsigned t = 0; t < threads; t++) {
        if (started[t])
            pthread_join(tids[t], NULL);
        worker_free(ctx, workers[t]);
    }
    return TROWEL_OK;
}

/* ---- the stream */

/* The segments' bits as one string, taken w (1..32) at a time. */
typedef struct bk_bitcat {
    const bk_segment *seg;
    size_t word; /* next word of *seg to load */
    uint64_t acc;
    unsigned nacc;
} bk_bitcat;

static uint32_t bitcat_take(bk_bitcat *q, unsigned w)
{
    while (q->nacc < w) {
        const bk_segment *s = q->seg;
        if (q->word < s->words) {
            q->acc |= (uint64_t)s->bits[q->word++] << q->nacc;
            q->nacc += 32;
        } else if (q->word == s->words && s->tail) {
            q->acc |= (uint64_t)(s->bits[q->word++] & ((1u << s->tail) - 1u)) << q->nacc;
            q->nacc += s->tail;
        } else {
            q->seg++;
            q->word = 0;
        }
    }
    uint32_t v = (uint32_t)(q->acc & (((uint64_t)1 << w) - 1));
    q->acc >>= w;
    q->nacc -= w;
    return v;
}

/* Lays the decoding-order bits out as the file's words: the last data word
 * is read first and takes the odd bits under its marker. */
static trowel_status assemble(trowel_ctx *ctx, const bk_job *job, uint8_t **out, size_t *out_len)
{
    uint64_t total = 0;
    for (size_t s = 0; s < job->nsegs; s++)
        total += 32 * (uint64_t)job->segs[s].words + job->segs[s].tail;
    unsigned odd = (unsigned)(total % 32);
    size_t full = (size_t)(total / 32);
    size_t words = full + 1;
    size_t size = 4 * (words + 2);
    uint8_t *o = trowel_mem_alloc(ctx, size);
    if (!o)
        return ctx->last_error.status;
    bk_bitcat q = {job->segs, 0, 0, 0};
    uint32_t first = (odd ? bitcat_take(&q, odd) : 0) | 1u << odd;
    uint32_t sum = first;
    trowel_put_be32(o + 4 * (words - 1), first);
    for (size_t j = 0; j < full; j++) {
        uint32_t v = bitcat_take(&q, 32);
        trowel_put_be32(o + 4 * (words - 2 - j), v);
        sum ^= v;
    }
    trowel_put_be32(o + 4 * words, sum);
    trowel_put_be32(o + 4 * words + 4, (uint32_t)job->n);
    *out = o;
    *out_len = size;
    return TROWEL_OK;
}

/* The segment length for an input of `size` bytes: about a sixteenth of
 * it, so that even a file of a few hundred kilobytes splits evenly over
 * the threads, within bounds: a segment costs a warm-up of 4095 positions
 * and ends a parse, so not below 32 KiB; the per-position tables grow
 * with it, so not above 256 KiB. It depends on the size alone, never on
 * the threads, so the output does not either. */
static size_t segment_size(size_t size)
{
    size_t seg = (size / 16 + 4095) & ~(size_t)4095;
    if (seg < BK_SEGMENT_MIN)
        seg = BK_SEGMENT_MIN;
    if (seg > BK_SEGMENT_MAX)
        seg = BK_SEGMENT_MAX;
    return size < seg ? (size ? size : 1) : seg;
}

/* The most words a segment of len bytes packs to: 8 bits a byte, a run
 * header per 264 bytes (under 1/16 bit a byte), a few to spare. */
static size_t segment_words(size_t len)
{
    return len / 4 + len / 512 + 16;
}

trowel_status trowel_bytekiller_encode(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                       uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if ((uint64_t)size > UINT32_MAX || size > (size_t)INT32_MAX)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "the packer's length field has 32 bits: %zu bytes is too large", size);
    size_t seg = segment_size(size);
    size_t nsegs = size / seg;
    /* The first segment takes what is left over, so it is seg to 2 seg - 1
     * bytes: no segment is so short that its warm-up and its thread cost
     * more than they save, and the last one, the start of the file (where
     * the in-place rule binds), is whole. */
    size_t first = size - (nsegs ? nsegs - 1 : 0) * seg;
    size_t all_words = segment_words(first) + (nsegs ? nsegs - 1 : 0) * segment_words(seg);
    uint8_t *rev = trowel_mem_alloc(ctx, size ? size : 1);
    bk_segment *segs = rev ? trowel_mem_calloc(ctx, nsegs ? nsegs : 1, sizeof *segs) : NULL;
    uint32_t *bits = segs ? trowel_mem_alloc(ctx, (all_words ? all_words : 1) * sizeof *bits)
                          : NULL;
    trowel_status s = bits ? TROWEL_OK : ctx->last_error.status;
    if (s == TROWEL_OK) {
        for (size_t i = 0; i < size; i++)
            rev[i] = data[size - 1 - i];
        uint32_t *slice = bits;
        for (size_t i = 0; i < nsegs; i++) {
            segs[i].start = i ? first + (i - 1) * seg : 0;
            segs[i].len = i ? seg : first;
            segs[i].bits = slice;
            slice += segment_words(segs[i].len);
        }
        bk_job job = {.ctx = ctx, .r = rev, .n = size, .segs = segs, .nsegs = nsegs};
        atomic_init(&job.next, 0);
        atomic_init(&job.done, 0);
        unsigned threads = trowel_threads_for(ctx, nsegs);
        if (nsegs)
            s = run_job(ctx, &job, first, threads);
        if (s == TROWEL_OK)
            s = assemble(ctx, &job, out, out_len);
    }
    trowel_mem_free(ctx, bits);
    trowel_mem_free(ctx, segs);
    trowel_mem_free(ctx, rev);
    return s;
}
