/*
 * The 4 KiB-window LZSS shared by MS COMPRESS.EXE (SZDD), QBasic's COMPRESS
 * and Trespasser's SPZ: a fast bounded decoder and an optimal-parse encoder.
 *
 * Facts (bitstream, window fill, start positions) come from the project's
 * format notes (shared/formats/trespasser.md, "SZDD and SPZ") and were checked
 * against the real SZDD files of the shared corpus; docs/formats/lzss.md
 * describes the stream, the decoder's checks and the encoder in full.
 *
 * Decoder. Instead of a 4096-byte ring it writes into one flat buffer whose
 * first 4096 bytes are the previous output (at the start: the fill byte), so
 * a match is a plain copy from `distance` bytes back, and references to ring
 * bytes never written read the fill for free. The ring position of the next
 * output byte is the buffer offset plus a bias, which gives the distance of a
 * match as (write position - p) mod 4096, where 0 means 4096. A whole group
 * (flag byte + 8 items, at most 17 input and 144 output bytes) is decoded with
 * a single bounds check when that much input, output room and declared size
 * remain; everything near an end goes item by item with every check.
 *
 * Encoder. Any prefix of a match is a match at the same distance, so the
 * longest match at each position (at most 18 bytes, within 4096 bytes back,
 * the initial fill counting as 4096 bytes of history) describes every choice
 * the parser has. A binary-tree match finder gives that longest match exactly;
 * a backward pass then picks the cheapest parse in bits (literal 9, match 17,
 * flag bits included). Input goes through in blocks of up to 1 MiB with the
 * last 4096 bytes carried over, so memory stays bounded for any input size.
 */
#include "codec/lzss.h"

#include "core/module.h"

#include <string.h>

const trowel_lzss_params trowel_lzss_szdd = {' ', 4096 - 16};
const trowel_lzss_params trowel_lzss_qbasic = {' ', 4096 - 18};
const trowel_lzss_params trowel_lzss_spz = {0, 4096 - 18};

enum {
    LZ_N = 4096,      /* window size; also the longest distance */
    LZ_MASK = LZ_N - 1,
    LZ_MIN = 3,       /* shortest match */
    LZ_MAX = 18,      /* longest match */
    GROUP_IN = 17,    /* most input bytes one flag group takes */
    GROUP_OUT = 8 * LZ_MAX,
    COPY_SLACK = 32   /* wide match copies may write up to 6 bytes past a match */
};

/* ------------------------------------------------------------------ decoder */

#define DEC_CHUNK_MAX ((size_t)256 * 1024) /* output gathered before a sink write */
#define DEC_IN_MAX ((size_t)64 * 1024)     /* input staged from the reader at once */

typedef struct lz_dec {
    trowel_ctx *ctx;
    trowel_reader *r;
    trowel_sink *out;
    uint8_t *in;     /* staged input: [in_pos, in_len) not yet decoded */
    size_t in_cap, in_pos, in_len;
    uint64_t in_abs; /* absolute input offset of in[0] */
    uint8_t *buf;    /* [0, LZ_N) history, then output not yet written */
    size_t flush_at; /* write out once the output reaches this buffer offset */
    size_t bias;     /* ring position of buffer offset o is (o + bias) & LZ_MASK */
    uint64_t written;
    uint64_t expected;
} lz_dec;

/* Moves what is left of the staged input to the front and tops it up from
 * the reader. Stops early only at the end of the reader's window. */
static trowel_status dec_refill(lz_dec *d)
{
    size_t keep = d->in_len - d->in_pos;
    if (d->in_pos) {
        memmove(d->in, d->in + d->in_pos, keep);
        d->in_abs += d->in_pos;
        d->in_pos = 0;
        d->in_len = keep;
    }
    while (d->in_len < d->in_cap && trowel_reader_remaining(d->r) > 0) {
        const uint8_t *span;
        size_t got;
        trowel_status s = trowel_reader_borrow(d->r, d->in_cap - d->in_len, &span, &got);
        if (s != TROWEL_OK)
            return s;
        if (got == 0)
            break;
        memcpy(d->in + d->in_len, span, got);
        d->in_len += got;
    }
    return TROWEL_OK;
}

/* Writes the output gathered so far and keeps its last LZ_N bytes as the
 * history later matches copy from. Returns the new output offset. */
static trowel_status dec_flush(lz_dec *d, size_t *o)
{
    size_t end = *o;
    if (end == LZ_N)
        return TROWEL_OK;
    trowel_status s = trowel_sink_write(d->out, d->buf + LZ_N, end - LZ_N);
    if (s != TROWEL_OK)
        return s;
    d->written += end - LZ_N;
    memmove(d->buf, d->buf + end - LZ_N, LZ_N);
    d->bias = (d->bias + end - LZ_N) & LZ_MASK;
    *o = LZ_N;
    trowel_progress(d->ctx, d->written,
                    d->expected == TROWEL_SIZE_UNKNOWN ? 0 : d->expected);
    return TROWEL_OK;
}

/* Copies a match of len (3..18) bytes from dist (1..4096) bytes back, the way
 * the ring does it: byte by byte, so an overlapping source repeats. Writes
 * up to 24 bytes at dst; the caller keeps COPY_SLACK bytes of room. */
static inline void copy_match(uint8_t *dst, size_t dist, unsigned len)
{
    const uint8_t *src = dst - dist;
    if (dist >= 8) {
        /* Each 8-byte piece reads only bytes already in place. */
        memcpy(dst, src, 8);
        memcpy(dst + 8, src + 8, 8);
        memcpy(dst + 16, src + 16, 8);
    } else if (dist == 1) {
        memset(dst, src[0], LZ_MAX);
    } else {
        for (unsigned k = 0; k < len; k++)
            dst[k] = src[k];
    }
}

static inline size_t match_distance(size_t o, size_t bias, unsigned p)
{
    /* (write position - p) mod 4096, with 0 standing for 4096. */
    return ((o + bias - p - 1) & LZ_MASK) + 1;
}

/* The declared size has been produced: what follows may only be padding,
 * i.e. nothing, or a single flag byte when a group had just ended. */
static trowel_status dec_check_tail(lz_dec *d, bool at_group_start)
{
    uint64_t left = (d->in_len - d->in_pos) + trowel_reader_remaining(d->r);
    if (left > (at_group_start ? 1u : 0u))
        return trowel_fail(d->ctx, TROWEL_ERR_CORRUPT, d->in_abs + d->in_pos,
                           "LZSS stream has %llu more bytes after all %llu declared bytes "
                           "were produced",
                           (unsigned long long)left, (unsigned long long)d->expected);
    return TROWEL_OK;
}

static trowel_status dec_truncated(lz_dec *d, uint64_t produced, const char *what)
{
    uint64_t off = d->in_abs + d->in_len;
    if (d->expected == TROWEL_SIZE_UNKNOWN)
        return trowel_fail(d->ctx, TROWEL_ERR_TRUNCATED, off,
                           "LZSS stream ends after %llu bytes (%s)",
                           (unsigned long long)produced, what);
    return trowel_fail(d->ctx, TROWEL_ERR_TRUNCATED, off,
                       "LZSS stream ends after %llu of %llu bytes (%s)",
                       (unsigned long long)produced, (unsigned long long)d->expected, what);
}

static trowel_status dec_run(lz_dec *d, const trowel_lzss_params *p)
{
    const bool known = d->expected != TROWEL_SIZE_UNKNOWN;
    /* Bytes still to produce; with no declared size, a count that never
     * reaches zero (no stream is 2^64 bytes long). */
    uint64_t left = d->expected;
    uint8_t *const buf = d->buf;
    size_t o = LZ_N;
    trowel_status s;

    memset(buf, p->fill, LZ_N);
    d->bias = p->start; /* offset LZ_N is ring position start */

    for (;;) {
        if (o >= d->flush_at && (s = dec_flush(d, &o)) != TROWEL_OK)
            return s;
        if (d->in_len - d->in_pos < GROUP_IN && (s = dec_refill(d)) != TROWEL_OK)
            return s;

        const uint8_t *ip = d->in + d->in_pos;
        const size_t avail = d->in_len - d->in_pos;

        if (TROWEL_LIKELY(avail >= GROUP_IN && left >= GROUP_OUT)) {
            /* Fast path: the group fits in the input, the output room
             * (o < flush_at leaves GROUP_OUT + COPY_SLACK) and the size. */
            const size_t o0 = o;
            unsigned flags = *ip++;
            for (int k = 0; k < 8; k++, flags >>= 1) {
                if (flags & 1) {
                    buf[o++] = *ip++;
                } else {
                    unsigned pos = ip[0] | (unsigned)(ip[1] & 0xF0) << 4;
                    unsigned len = (ip[1] & 0x0F) + LZ_MIN;
                    ip += 2;
                    copy_match(buf + o, match_distance(o, d->bias, pos), len);
                    o += len;
                }
            }
            d->in_pos = (size_t)(ip - d->in);
            left -= o - o0;
            continue;
        }

        /* Slow path: one item at a time, every end checked. The input is
         * short here only at the end of the reader's window. */
        if (known && left == 0) {
            if ((s = dec_check_tail(d, true)) != TROWEL_OK)
                return s;
            goto done;
        }
        if (avail == 0) {
            if (known)
                return dec_truncated(d, d->expected - left, "a flag byte is missing");
            break;
        }
        const uint8_t *const iend = d->in + d->in_len;
        unsigned flags = *ip++;
        for (int k = 0; k < 8; k++, flags >>= 1) {
            if (known && left == 0) {
                d->in_pos = (size_t)(ip - d->in);
                if ((s = dec_check_tail(d, false)) != TROWEL_OK)
                    return s;
                goto done;
            }
            if (ip == iend) {
                d->in_pos = (size_t)(ip - d->in);
                if (known)
                    return dec_truncated(d, d->expected - left, "an item is missing");
                goto done;
            }
            if (flags & 1) {
                buf[o++] = *ip++;
                left--;
                continue;
            }
            if (iend - ip < 2) {
                d->in_pos = (size_t)(ip - d->in);
                return dec_truncated(d, d->written + (o - LZ_N), "a match is cut short");
            }
            unsigned pos = ip[0] | (unsigned)(ip[1] & 0xF0) << 4;
            unsigned len = (ip[1] & 0x0F) + LZ_MIN;
            if (len > left)
                return trowel_fail(d->ctx, TROWEL_ERR_CORRUPT,
                                   d->in_abs + (size_t)(ip - d->in),
                                   "LZSS match of %u bytes runs past the declared size "
                                   "(%llu of %llu bytes produced)",
                                   len, (unsigned long long)(d->expected - left),
                                   (unsigned long long)d->expected);
            ip += 2;
            copy_match(buf + o, match_distance(o, d->bias, pos), len);
            o += len;
            left -= len;
        }
        d->in_pos = (size_t)(ip - d->in);
    }
done:
    return dec_flush(d, &o);
}

trowel_status trowel_lzss_decode(trowel_ctx *ctx, const trowel_lzss_params *p, trowel_reader *r,
                                 uint64_t expected_size, trowel_sink *out)
{
    lz_dec d;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    d.r = r;
    d.out = out;
    d.expected = expected_size;
    d.in_abs = trowel_reader_abs(r);

    /* Small outputs and inputs get small buffers; large ones fixed caps. */
    size_t chunk = DEC_CHUNK_MAX;
    if (expected_size != TROWEL_SIZE_UNKNOWN && expected_size < chunk)
        chunk = expected_size < 1024 ? 1024 : (size_t)expected_size;
    uint64_t in_total = trowel_reader_remaining(r);
    d.in_cap = in_total < DEC_IN_MAX ? (size_t)in_total : DEC_IN_MAX;
    if (d.in_cap < 64)
        d.in_cap = 64;
    d.flush_at = LZ_N + chunk;

    d.buf = trowel_mem_alloc(ctx, LZ_N + chunk + GROUP_OUT + COPY_SLACK);
    if (!d.buf)
        return ctx->last_error.status;
    d.in = trowel_mem_alloc(ctx, d.in_cap);
    if (!d.in) {
        trowel_mem_free(ctx, d.buf);
        return ctx->last_error.status;
    }
    trowel_status s = dec_run(&d, p);
    trowel_mem_free(ctx, d.in);
    trowel_mem_free(ctx, d.buf);
    return s;
}

uint64_t trowel_lzss_max_output(uint64_t n)
{
    /* A full group is 1 flag byte and 8 two-byte matches of 18 bytes. What
     * is left over is a flag byte, as many matches as fit, and a literal for
     * an odd last byte. */
    uint64_t groups = n / GROUP_IN, rest = n % GROUP_IN;
    if (groups > UINT64_MAX / GROUP_OUT)
        return UINT64_MAX;
    uint64_t total = groups * GROUP_OUT;
    if (rest > 0)
        total += (rest - 1) / 2 * LZ_MAX + (rest - 1) % 2;
    return total;
}

/* ------------------------------------------------------------------ encoder */

#define ENC_BLOCK_MAX ((size_t)1 << 20) /* positions parsed together */
#define ENC_LOOKAHEAD (LZ_MAX - 1)      /* bytes a block's last match may read on */
#define ENC_OUT_CHUNK ((size_t)64 * 1024)
#define WIN_SLACK 8 /* see common_length */
#define BT_SLOTS 8192u  /* tree nodes: a power of two above LZ_N + 1 live ones */
#define HASH_BITS 15
/* Stream position of the first virtual fill byte. Positions below it are
 * never used, so 0 can mean "no node": it is always out of the window. */
#define POS0 ((uint64_t)2 * LZ_N)

typedef struct lz_source {
    const uint8_t *mem; /* memory input, or NULL for the reader */
    size_t mem_len, mem_pos;
    trowel_reader *r;
} lz_source;

typedef struct lz_enc {
    trowel_ctx *ctx;
    const trowel_lzss_params *p;
    trowel_sink *out;
    lz_source *src;
    bool src_done;
    uint64_t total;   /* input size, for progress */

    /* The bytes at stream positions [win_pos, win_pos + win_len). */
    uint8_t *win;
    size_t win_cap, win_len;
    uint64_t win_pos;

    /* Binary trees of the strings starting at the last LZ_N positions, one
     * tree per 3-byte hash; each node's subtree holds only older positions,
     * so a node that has left the window cuts off everything below it. */
    uint64_t *head;
    uint64_t *son; /* [2 * slot] smaller strings, [2 * slot + 1] larger */

    /* Per position of the block being parsed. */
    size_t block;
    uint8_t *mlen;   /* longest match, 0 if under LZ_MIN */
    uint16_t *mdist;
    uint32_t *cost;  /* bits from here to the block's end */

    /* Output: complete flag groups are written in chunks. */
    uint8_t *obuf;
    size_t olen, flag_at;
    unsigned items; /* items in the current group, 8 = group full */
} lz_enc;

static trowel_status src_read(lz_source *s, uint8_t *dst, size_t want, size_t *got)
{
    *got = 0;
    if (s->mem) {
        size_t n = s->mem_len - s->mem_pos;
        if (n > want)
            n = want;
        memcpy(dst, s->mem + s->mem_pos, n);
        s->mem_pos += n;
        *got = n;
        return TROWEL_OK;
    }
    while (*got < want) {
        const uint8_t *span;
        size_t n;
        trowel_status st = trowel_reader_borrow(s->r, want - *got, &span, &n);
        if (st != TROWEL_OK)
            return st;
        if (n == 0)
            break;
        memcpy(dst + *got, span, n);
        *got += n;
    }
    return TROWEL_OK;
}

/* How many bytes a and b share, from len on, capped at limit. Reads whole
 * words, so up to 7 bytes past b + limit: the window keeps WIN_SLACK bytes
 * of initialised room after its end for that. */
static inline unsigned common_length(const uint8_t *a, const uint8_t *b, unsigned len,
                                     unsigned limit)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (len < limit) {
        uint64_t x, y;
        memcpy(&x, a + len, 8);
        memcpy(&y, b + len, 8);
        if (x != y) {
            len += (unsigned)__builtin_ctzll(x ^ y) / 8;
            return len < limit ? len : limit;
        }
        len += 8;
    }
    return limit;
#else
    while (len < limit && a[len] == b[len])
        len++;
    return len;
#endif
}

static inline uint32_t hash3(const uint8_t *b)
{
    uint32_t v = (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
    return (v * 2654435761u) >> (32 - HASH_BITS);
}

/* Inserts the string at stream position cur (limit = bytes available there,
 * at least LZ_MIN) into its tree, and returns the longest match among the
 * strings of the window, capped at min(limit, LZ_MAX), with its distance.
 *
 * The search walks down from the root, splitting the tree into the strings
 * smaller and larger than cur, which become cur's subtrees. The longest match
 * is with cur's neighbours in sorted order, and both lie on this path, so the
 * result is exact. A string equal to cur over the whole cap is replaced by
 * cur: it is older, so it can never give a longer or nearer match. */
static inline unsigned bt_insert(lz_enc *e, uint64_t cur, unsigned limit, unsigned *dist)
{
    const uint8_t *const win = e->win;
    const uint64_t win_pos = e->win_pos;
    const uint8_t *cp = win + (size_t)(cur - win_pos);
    uint64_t *const son = e->son;
    if (limit > LZ_MAX)
        limit = LZ_MAX;

    uint32_t h = hash3(cp);
    uint64_t m = e->head[h];
    e->head[h] = cur;

    uint64_t *smaller = &son[2 * (size_t)(cur & (BT_SLOTS - 1))];
    uint64_t *larger = smaller + 1;
    unsigned smaller_len = 0, larger_len = 0, best = 0;
    *dist = 0;

    for (;;) {
        if (cur - m > LZ_N) { /* gone from the window, or no node */
            *smaller = *larger = 0;
            break;
        }
        const uint8_t *mp = win + (size_t)(m - win_pos);
        uint64_t *node = &son[2 * (size_t)(m & (BT_SLOTS - 1))];
        /* Everything below this point shares at least this much with cur. */
        unsigned len = smaller_len < larger_len ? smaller_len : larger_len;
        len = common_length(mp, cp, len, limit);
        if (len > best) {
            best = len;
            *dist = (unsigned)(cur - m);
        }
        if (len == limit) {
            *smaller = node[0];
            *larger = node[1];
            break;
        }
        if (mp[len] < cp[len]) {
            *smaller = m;
            smaller = &node[1];
            smaller_len = len;
            m = node[1];
        } else {
            *larger = m;
            larger = &node[0];
            larger_len = len;
            m = node[0];
        }
    }
    return best;
}

static trowel_status enc_flush(lz_enc *e)
{
    if (e->olen == 0)
        return TROWEL_OK;
    trowel_status s = trowel_sink_write(e->out, e->obuf, e->olen);
    e->olen = 0;
    return s;
}

/* Starts an item: opens a new flag group when the last is full, writing out
 * the buffered groups (all complete at that moment) when there are many. */
static inline trowel_status enc_item(lz_enc *e, bool literal)
{
    if (e->items == 8) {
        if (e->olen >= ENC_OUT_CHUNK) {
            trowel_status s = enc_flush(e);
            if (s != TROWEL_OK)
                return s;
        }
        e->flag_at = e->olen++;
        e->obuf[e->flag_at] = 0;
        e->items = 0;
    }
    if (literal)
        e->obuf[e->flag_at] |= (uint8_t)(1u << e->items);
    e->items++;
    return TROWEL_OK;
}

/* Parses and writes positions [first, first + n) of the window: every
 * position gets its longest match, then a backward pass finds the fewest
 * bits to the block's end, then the chosen items are written. */
static trowel_status enc_block(lz_enc *e, uint64_t first, size_t n)
{
    const uint64_t win_end = e->win_pos + e->win_len;
    for (size_t i = 0; i < n; i++) {
        uint64_t cur = first + i;
        uint64_t avail = win_end - cur;
        unsigned dist = 0, len = 0;
        if (avail >= LZ_MIN)
            len = bt_insert(e, cur, avail > LZ_MAX ? LZ_MAX : (unsigned)avail, &dist);
        e->mlen[i] = (uint8_t)(len >= LZ_MIN ? len : 0);
        e->mdist[i] = (uint16_t)dist;
    }

    /* Backward: cost[i] = fewest bits for positions i..n-1. Every length
     * from LZ_MIN to the longest match is allowed. A match may reach past
     * the block into the lookahead: cost[n + 1 .. n + LZ_MAX] are "never",
     * so such lengths are not taken. */
    uint32_t *const cost = e->cost;
    const uint8_t *const mlen = e->mlen;
    for (size_t k = 0; k <= LZ_MAX; k++)
        cost[n + k] = k == 0 ? 0 : UINT32_MAX;
    for (size_t i = n; i-- > 0;) {
        uint32_t best = 9 + cost[i + 1];
        unsigned top = mlen[i];
        if (top >= LZ_MIN) {
            uint32_t m = UINT32_MAX;
            for (unsigned l = LZ_MIN; l <= top; l++)
                m = cost[i + l] < m ? cost[i + l] : m;
            if (m != UINT32_MAX && 17 + m < best)
                best = 17 + m;
        }
        cost[i] = best;
    }

    /* Forward: follow the cheapest choices, taking the longest match that
     * keeps the optimum (fewer items, same bits) over a literal. Output byte
     * number k lands at ring position start + k. */
    const uint64_t data_pos = POS0 + LZ_N;
    const uint8_t *win = e->win + (size_t)(first - e->win_pos);
    for (size_t i = 0; i < n;) {
        unsigned pick = 1;
        for (unsigned l = mlen[i]; l >= LZ_MIN; l--) {
            if (i + l <= n && cost[i + l] + 17 == cost[i]) {
                pick = l;
                break;
            }
        }
        trowel_status s = enc_item(e, pick == 1);
        if (s != TROWEL_OK)
            return s;
        if (pick == 1) {
            e->obuf[e->olen++] = win[i];
            i++;
            continue;
        }
        unsigned ring = (unsigned)((e->p->start + (first + i - data_pos) - e->mdist[i]) & LZ_MASK);
        e->obuf[e->olen++] = (uint8_t)ring;
        e->obuf[e->olen++] = (uint8_t)((ring >> 4 & 0xF0) | (pick - LZ_MIN));
        i += pick;
    }
    return TROWEL_OK;
}

/* Reads until the window holds want bytes, or the input ends. */
static trowel_status enc_fill(lz_enc *e, size_t want)
{
    while (!e->src_done && e->win_len < want) {
        size_t got;
        trowel_status s = src_read(e->src, e->win + e->win_len, want - e->win_len, &got);
        if (s != TROWEL_OK)
            return s;
        if (got == 0)
            e->src_done = true;
        e->win_len += got;
    }
    return TROWEL_OK;
}

static trowel_status enc_run(lz_enc *e)
{
    trowel_status s;
    /* The virtual history: LZ_N fill bytes before the data. */
    memset(e->win, e->p->fill, LZ_N);
    e->win_pos = POS0;
    e->win_len = LZ_N;
    if ((s = enc_fill(e, LZ_N + e->block + ENC_LOOKAHEAD)) != TROWEL_OK)
        return s;
    if (e->win_len == LZ_N)
        return TROWEL_OK; /* empty input: empty stream */
    {
        unsigned dist;
        for (uint64_t cur = POS0; cur < POS0 + LZ_N; cur++) {
            uint64_t avail = POS0 + e->win_len - cur;
            if (avail >= LZ_MIN)
                bt_insert(e, cur, avail > LZ_MAX ? LZ_MAX : (unsigned)avail, &dist);
        }
    }

    uint64_t next = POS0 + LZ_N; /* first position not yet parsed */
    uint64_t done = 0;
    for (;;) {
        uint64_t ready = e->win_pos + e->win_len - next;
        if (ready == 0)
            break;
        /* Unless the input has ended, keep ENC_LOOKAHEAD bytes after the
         * block so its matches see as far as they would without blocks. */
        size_t n = e->block;
        if (e->src_done && ready < n)
            n = (size_t)ready;
        if ((s = enc_block(e, next, n)) != TROWEL_OK)
            return s;
        next += n;
        done += n;
        trowel_progress(e->ctx, done, e->total);

        /* Keep the last LZ_N parsed bytes and the lookahead; read on. */
        size_t drop = (size_t)(next - LZ_N - e->win_pos);
        memmove(e->win, e->win + drop, e->win_len - drop);
        e->win_len -= drop;
        e->win_pos += drop;
        if ((s = enc_fill(e, LZ_N + e->block + ENC_LOOKAHEAD)) != TROWEL_OK)
            return s;
    }
    return enc_flush(e);
}

static trowel_status enc_encode(trowel_ctx *ctx, const trowel_lzss_params *p, lz_source *src,
                                uint64_t total, trowel_sink *out)
{
    lz_enc e;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.p = p;
    e.out = out;
    e.src = src;
    e.total = total;
    e.items = 8;
    e.block = total < ENC_BLOCK_MAX ? (size_t)(total ? total : 1) : ENC_BLOCK_MAX;
    e.win_cap = LZ_N + e.block + ENC_LOOKAHEAD;

    trowel_status s = TROWEL_OK;
    e.win = trowel_mem_calloc(ctx, e.win_cap + WIN_SLACK, 1);
    e.head = e.win ? trowel_mem_calloc(ctx, (size_t)1 << HASH_BITS, sizeof *e.head) : NULL;
    e.son = e.head ? trowel_mem_calloc(ctx, 2 * (size_t)BT_SLOTS, sizeof *e.son) : NULL;
    e.mlen = e.son ? trowel_mem_alloc(ctx, e.block) : NULL;
    e.mdist = e.mlen ? trowel_mem_alloc(ctx, e.block * sizeof *e.mdist) : NULL;
    e.cost = e.mdist ? trowel_mem_alloc(ctx, (e.block + 1 + LZ_MAX) * sizeof *e.cost) : NULL;
    /* Room for one more full group past the chunk size. */
    e.obuf = e.cost ? trowel_mem_alloc(ctx, ENC_OUT_CHUNK + GROUP_IN + 8) : NULL;
    if (!e.obuf)
        s = ctx->last_error.status;
    else
        s = enc_run(&e);

    trowel_mem_free(ctx, e.obuf);
    trowel_mem_free(ctx, e.cost);
    trowel_mem_free(ctx, e.mdist);
    trowel_mem_free(ctx, e.mlen);
    trowel_mem_free(ctx, e.son);
    trowel_mem_free(ctx, e.head);
    trowel_mem_free(ctx, e.win);
    return s;
}

trowel_status trowel_lzss_encode(trowel_ctx *ctx, const trowel_lzss_params *p,
                                 const uint8_t *data, size_t size, trowel_sink *out)
{
    static const uint8_t none[1];
    lz_source src = {data ? data : none, data ? size : 0, 0, NULL};
    return enc_encode(ctx, p, &src, src.mem_len, out);
}

trowel_status trowel_lzss_encode_reader(trowel_ctx *ctx, const trowel_lzss_params *p,
                                        trowel_reader *r, trowel_sink *out)
{
    lz_source src = {NULL, 0, 0, r};
    return enc_encode(ctx, p, &src, trowel_reader_remaining(r), out);
}

/* ------------------------------------------------------------------- codecs */

static trowel_status szdd_compress(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out)
{
    return trowel_lzss_encode_reader(ctx, &trowel_lzss_szdd, in, out);
}

static trowel_status szdd_decompress(trowel_ctx *ctx, trowel_reader *in, uint64_t expected_size,
                                     trowel_sink *out)
{
    return trowel_lzss_decode(ctx, &trowel_lzss_szdd, in, expected_size, out);
}

static trowel_status spz_compress(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out)
{
    return trowel_lzss_encode_reader(ctx, &trowel_lzss_spz, in, out);
}

static trowel_status spz_decompress(trowel_ctx *ctx, trowel_reader *in, uint64_t expected_size,
                                    trowel_sink *out)
{
    return trowel_lzss_decode(ctx, &trowel_lzss_spz, in, expected_size, out);
}

const struct trowel_codec trowel_codec_szdd = {
    "szdd",
    "LZSS of MS COMPRESS.EXE (SZDD): window of spaces, start 4080; raw stream, no header",
    szdd_compress,
    szdd_decompress,
    NULL,
};

const struct trowel_codec trowel_codec_spz = {
    "spz",
    "LZSS of Trespasser's SPZ: zero-filled window, start 4078; raw stream, no size field",
    spz_compress,
    spz_decompress,
    NULL,
};
