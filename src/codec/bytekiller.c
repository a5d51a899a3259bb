/*
 * The Delphine packer (Bytekiller 1.3 family): a checking block decoder and
 * an optimal-parse encoder.
 *
 * Facts come from the project's notes (shared/seeds/delphine-cinematique.txt,
 * shared/formats/delphine-cinematique.md) and from how the decoders of
 * ScummVM and scummvm-tools behave; every stream the encoder writes is
 * checked against `scummvm-tools-cli --tool extract_cine` in the tests. One
 * fact differs from the seed: the long copy (prefix 1 1 0) carries its
 * 8-bit length BEFORE its 12-bit offset, as both ScummVM decoders read it.
 *
 * The stream, in decoding order: the last data word first, then the words
 * before it down to the first. The first word read holds as many bits as
 * the position of its highest set bit (that bit is a marker); every other
 * word holds 32. Bits leave a word least significant first. A field of w
 * bits is read most significant bit first. Commands:
 *   0 0 nnn          nnn+1 (1..8) literal bytes, 8 bits each
 *   1 1 1 nnnnnnnn   n+9 (9..264) literal bytes
 *   0 1 o*8          copy 2 bytes from `o` bytes above
 *   1 0 0 o*9        copy 3
 *   1 0 1 o*10       copy 4
 *   1 1 0 l*8 o*12   copy l+1 (1..256)
 * Output is written from the end backwards; a copy writes each byte from the
 * byte `o` positions above it, so `o` counts already-written bytes and 0 is
 * meaningless (it would copy the byte being written).
 *
 * Decoder. The whole stream is in memory (the data words must be read from
 * the end), the output is a buffer of the declared size. Bits are taken from
 * a 64-bit register topped up a word at a time, so each command costs a few
 * shifts, not one call per bit; fields are bit-reversed through a table.
 *
 * Encoder. Reversing the input turns the format into ordinary LZ77: the
 * decoder's output order is the reversed input's forward order, and a copy
 * from `o` bytes above becomes a match `o` bytes back. Per position the
 * encoder finds the nearest match of at least 2, 3 and 4 bytes (the short
 * copies' costs depend on the distance; a pair table and two hash chains)
 * and the longest match within 4095 bytes (the long copy costs 23 bits
 * whatever its distance and length; a binary tree of the window).
 * A backward dynamic programme then picks the cheapest parse in bits; the
 * literal-run costs (5 + 8n up to 8 bytes, 11 + 8n up to 264) and the long
 * copy's range of lengths are minimised with sliding-window minimum queues,
 * so each position costs O(1) besides the match search. Blocks of 1 MiB are
 * parsed one at a time (matches reach into earlier blocks). The last block
 * also keeps to the in-place rule (see parse_block) when it can.
 */
#include "codec/bytekiller.h"

#include "core/bytes.h"
#include "core/module.h"
#include "core/sink.h"

#include <string.h>

enum {
    BK_WINDOW = 4095,   /* the longest offset (12 bits) */
    BK_MAX_COPY = 256,
    BK_MAX_RUN = 264,
    BK_SHORT_RUN = 8,
    BK_TREE_DEPTH = 64,  /* tree nodes examined per position */
    BK_NICE = 64,        /* the tree orders positions by this many bytes */
    BK_HASH_BITS = 12
};

#define BK_BLOCK ((size_t)1 << 20)

/* rev8[b]: b with its 8 bits in reverse order. */
#define BK_R2(n) n, n + 2 * 64, n + 1 * 64, n + 3 * 64
#define BK_R4(n) BK_R2(n), BK_R2(n + 2 * 16), BK_R2(n + 1 * 16), BK_R2(n + 3 * 16)
#define BK_R6(n) BK_R4(n), BK_R4(n + 2 * 4), BK_R4(n + 1 * 4), BK_R4(n + 3 * 4)
static const uint8_t rev8[256] = {BK_R6(0), BK_R6(2), BK_R6(1), BK_R6(3)};

static inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}


/* The low w (<= 16) bits of x in reverse order. */
static inline unsigned rev_bits16(unsigned x, unsigned w)
{
    unsigned r = (unsigned)rev8[x & 0xff] << 8 | rev8[(x >> 8) & 0xff];
    return r >> (16 - w);
}

/* The low w (<= 24) bits of x in reverse order. */
static inline uint32_t rev_bits24(uint32_t x, unsigned w)
{
    uint32_t r = (uint32_t)rev8[x & 0xff] << 16 | (uint32_t)rev8[(x >> 8) & 0xff] << 8 |
                 rev8[(x >> 16) & 0xff];
    return r >> (24 - w);
}

/* ------------------------------------------------------------------ decoder */

trowel_status trowel_bytekiller_length(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                       uint64_t base, uint32_t *length)
{
    if (n < TROWEL_BYTEKILLER_MIN_STREAM)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base,
                           "packed stream of %zu bytes is shorter than the 12 bytes of one data "
                           "word, checksum and length",
                           n);
    if (n % 4 != 0)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base,
                           "packed stream of %zu bytes is not a whole number of 32-bit words", n);
    *length = be32(src + n - 4);
    return TROWEL_OK;
}

typedef struct bk_bits {
    const uint8_t *src;
    size_t next;    /* words [0, next) are not loaded yet */
    uint64_t bits;  /* loaded bits, the next one at bit 0 */
    unsigned count; /* how many */
} bk_bits;

static inline void bk_refill(bk_bits *b)
{
    while (b->count <= 32 && b->next > 0) {
        b->next--;
        b->bits |= (uint64_t)be32(b->src + 4 * b->next) << b->count;
        b->count += 32;
    }
}

/* w (1..16) bits as a field (first bit most significant); false when the
 * input has run out. */
static inline bool bk_take(bk_bits *b, unsigned w, unsigned *v)
{
    if (TROWEL_UNLIKELY(b->count < w)) {
        bk_refill(b);
        if (b->count < w)
            return false;
    }
    unsigned raw = (unsigned)(b->bits & ((1u << w) - 1));
    b->bits >>= w;
    b->count -= w;
    *v = rev_bits16(raw, w);
    return true;
}

/* Absolute offset of the word being consumed, for messages. */
static uint64_t bk_where(const bk_bits *b, uint64_t base)
{
    return base + 4 * (uint64_t)b->next;
}

static trowel_status bk_exhausted(trowel_ctx *ctx, uint64_t base, size_t done, size_t total)
{
    return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, base,
                       "packed data ran out after %zu of %zu output bytes", done, total);
}

/* Words an in-place decoder (ScummVM's, extract_cine's) has loaded after
 * `used` bits: the first-read word at once, each next one when its first
 * bit is wanted. */
static size_t words_loaded(uint64_t used, unsigned first_bits)
{
    return used <= first_bits ? 1 : 1 + (size_t)((used - first_bits + 31) / 32);
}

/* The decoder. dst NULL: parse only. in_place non-NULL: also tell whether
 * the stream decodes in place, packed bytes at the start of the output
 * buffer: no byte may be written over a data word not yet read. */
static trowel_status decode_core(trowel_ctx *ctx, const uint8_t *src, size_t n, uint64_t base,
                                 uint8_t *dst, size_t dst_len, bool *in_place)
{
    uint32_t length = 0;
    trowel_status s = trowel_bytekiller_length(ctx, src, n, base, &length);
    if (s != TROWEL_OK)
        return s;
    if (length != dst_len)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base + n - 4,
                           "length field says %lu bytes but %zu are expected",
                           (unsigned long)length, dst_len);
    size_t data_words = n / 4 - 2;
    uint32_t stored = be32(src + n - 8), sum = 0;
    for (size_t i = 0; i < data_words; i++)
        sum ^= be32(src + 4 * i);
    if (sum != stored)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base + n - 8,
                           "checksum mismatch: stored 0x%08lx, the data words give 0x%08lx",
                           (unsigned long)stored, (unsigned long)sum);

    bk_bits b = {src, data_words - 1, 0, 0};
    uint32_t first = be32(src + 4 * (data_words - 1));
    if (first != 0) {
        unsigned top = 31u - (unsigned)__builtin_clz(first);
        b.bits = first & ((1u << top) - 1u);
        b.count = top;
    }
    const unsigned first_bits = b.count;
    const uint64_t all_bits = first_bits + 32 * (uint64_t)(data_words - 1);
    if (in_place)
        *in_place = true;
#define BK_USED() (all_bits - (uint64_t)b.next * 32 - b.count)
#define BK_CHECK_IN_PLACE(lowest)                                                                  \
    do {                                                                                           \
        if (in_place && (lowest) < 4 * (data_words - words_loaded(BK_USED(), first_bits)))        \
            *in_place = false;                                                                     \
    } while (0)

    size_t pos = dst_len; /* dst[pos..] is written */
    while (pos > 0) {
        unsigned len = 0, off = 0;
        bool literal;
        if (b.count < 32)
            bk_refill(&b);
        if (TROWEL_LIKELY(b.count >= 23)) {
            /* Fast path: the longest command head (23 bits) is loaded, so
             * it is decoded straight from the register. */
            uint64_t x = b.bits;
            unsigned used;
            if (!(x & 1)) {
                literal = !(x & 2);
                if (literal) {
                    len = rev_bits16((unsigned)(x >> 2) & 7, 3) + 1;
                    used = 5;
                } else {
                    len = 2;
                    off = rev8[(x >> 2) & 0xff];
                    used = 10;
                }
            } else {
                unsigned c = (unsigned)((x >> 1) & 1) << 1 | (unsigned)((x >> 2) & 1);
                literal = c == 3;
                if (literal) {
                    len = rev8[(x >> 3) & 0xff] + 9u;
                    used = 11;
                } else if (c < 2) {
                    len = c + 3;
                    off = rev_bits16((unsigned)(x >> 3) & ((1u << (c + 9)) - 1), c + 9);
                    used = 3 + c + 9;
                } else {
                    len = rev8[(x >> 3) & 0xff] + 1u;
                    off = rev_bits16((unsigned)(x >> 11) & 0xfff, 12);
                    used = 23;
                }
            }
            b.bits >>= used;
            b.count -= used;
        } else {
            /* Near the end of the input: field by field, each checked. */
            unsigned a1 = 0, c = 0;
            if (!bk_take(&b, 1, &a1))
                return bk_exhausted(ctx, base, dst_len - pos, dst_len);
            if (a1 == 0) {
                if (!bk_take(&b, 1, &c))
                    return bk_exhausted(ctx, base, dst_len - pos, dst_len);
                literal = c == 0;
                bool ok = literal ? bk_take(&b, 3, &len) : bk_take(&b, 8, &off);
                if (!ok)
                    return bk_exhausted(ctx, base, dst_len - pos, dst_len);
                len = literal ? len + 1 : 2;
            } else {
                if (!bk_take(&b, 2, &c))
                    return bk_exhausted(ctx, base, dst_len - pos, dst_len);
                literal = c == 3;
                bool ok;
                if (literal) {
                    ok = bk_take(&b, 8, &len);
                    len += 9;
                } else if (c < 2) {
                    len = c + 3;
                    ok = bk_take(&b, c + 9, &off);
                } else {
                    ok = bk_take(&b, 8, &len) && bk_take(&b, 12, &off);
                    len += 1;
                }
                if (!ok)
                    return bk_exhausted(ctx, base, dst_len - pos, dst_len);
            }
        }
        if (len > pos)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, bk_where(&b, base),
                               "a %s of %u bytes runs past the start of the output (%zu bytes "
                               "left to write)",
                               literal ? "literal run" : "copy", len, pos);
        if (literal) {
            while (len > 0) {
                if (b.count < 8) {
                    bk_refill(&b);
                    if (b.count < 8)
                        return bk_exhausted(ctx, base, dst_len - pos, dst_len);
                }
                /* As many whole bytes as the register holds, unchecked. */
                unsigned take = b.count / 8 < len ? b.count / 8 : len;
                len -= take;
                while (take--) {
                    uint8_t v = rev8[b.bits & 0xff];
                    b.bits >>= 8;
                    b.count -= 8;
                    --pos;
                    BK_CHECK_IN_PLACE(pos);
                    if (dst)
                        dst[pos] = v;
                }
            }
            continue;
        }
        if (off == 0)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, bk_where(&b, base),
                               "copy with offset 0 would read the byte being written");
        if (off > dst_len - pos)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, bk_where(&b, base),
                               "copy from %u bytes back reaches past the end of the output "
                               "(only %zu bytes decoded)",
                               off, dst_len - pos);
        pos -= len;
        BK_CHECK_IN_PLACE(pos);
        if (!dst)
            continue;
        if (off >= len) {
            memcpy(dst + pos, dst + pos + off, len);
        } else if (off == 1) {
            memset(dst + pos, dst[pos + len], len); /* a run of one byte */
        } else {
            /* Overlapping: the copy repeats with period off, top down. */
            for (size_t i = pos + len; i-- > pos;)
                dst[i] = dst[i + off];
        }
    }
    uint64_t left = (uint64_t)b.next * 32 + b.count;
    if (left >= 32)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base,
                           "%llu whole data words were never read: the stream is longer than "
                           "its commands",
                           (unsigned long long)(left / 32));
    return TROWEL_OK;
#undef BK_USED
#undef BK_CHECK_IN_PLACE
}

trowel_status trowel_bytekiller_decode_mem(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                           uint64_t base, uint8_t *dst, size_t dst_len)
{
    return decode_core(ctx, src, n, base, dst, dst_len, NULL);
}

bool trowel_bytekiller_in_place_safe(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                     size_t out_len)
{
    bool safe = false;
    trowel_error saved = ctx->last_error;
    if (decode_core(ctx, src, n, 0, NULL, out_len, &safe) != TROWEL_OK)
        safe = false;
    ctx->last_error = saved;
    return safe;
}

/* The most bytes a stream of n bytes can produce: 256 bytes per 23 bits. */
static uint64_t bk_max_output(uint64_t n)
{
    return n / 23 * 8 * BK_MAX_COPY + 8 * BK_MAX_COPY;
}

trowel_status trowel_bytekiller_decode(trowel_ctx *ctx, trowel_reader *r, uint64_t expected_size,
                                       trowel_sink *out)
{
    trowel_reader rest;
    trowel_status s = trowel_reader_rest(r, &rest);
    if (s != TROWEL_OK)
        return s;
    uint64_t base = trowel_reader_abs(&rest);
    uint64_t n = trowel_reader_size(&rest);
    if (n < TROWEL_BYTEKILLER_MIN_STREAM || n % 4 != 0)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base,
                           "packed stream of %llu bytes is not a whole number of 32-bit words "
                           "of at least 12 bytes (data, checksum, length)",
                           (unsigned long long)n);
    /* The length field first, so nothing is allocated for a lie. */
    uint8_t tail[4];
    trowel_reader at_end;
    if ((s = trowel_reader_sub(&rest, n - 4, 4, &at_end)) != TROWEL_OK ||
        (s = trowel_read_bytes(&at_end, tail, 4)) != TROWEL_OK)
        return s;
    uint32_t length = be32(tail);
    if (expected_size != TROWEL_SIZE_UNKNOWN && expected_size != length)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base + n - 4,
                           "length field says %lu bytes but %llu are expected",
                           (unsigned long)length, (unsigned long long)expected_size);
    if (length > bk_max_output(n))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base + n - 4,
                           "length field says %lu bytes, more than a %llu-byte stream can hold",
                           (unsigned long)length, (unsigned long long)n);
    if ((s = trowel_mem_check(ctx, n + (uint64_t)length, "packed stream and its output")) !=
        TROWEL_OK)
        return s;
    uint8_t *src;
    size_t got;
    if ((s = trowel_reader_load(&rest, &src, &got)) != TROWEL_OK)
        return s;
    uint8_t *dst = trowel_mem_alloc(ctx, length ? length : 1);
    if (!dst) {
        trowel_mem_free(ctx, src);
        return ctx->last_error.status;
    }
    s = trowel_bytekiller_decode_mem(ctx, src, got, base, dst, length);
    trowel_mem_free(ctx, src);
    trowel_progress(ctx, length, length);
    if (s == TROWEL_OK && length)
        s = trowel_sink_write(out, dst, length);
    trowel_mem_free(ctx, dst);
    return s;
}

/* ------------------------------------------------------------------ encoder */

enum bk_kind { K_RUN, K_COPY2, K_COPY3, K_COPY4, K_COPYN };

typedef struct bk_enc {
    trowel_ctx *ctx;
    const uint8_t *r; /* the input reversed */
    size_t n;
    int32_t *head2;   /* last position of each byte pair: the tree roots */
    int32_t *son;     /* binary trees of the last 4096 positions, per pair */
    int32_t *head3;   /* last position of each 3-byte hash */
    int32_t *prev3;   /* ring: previous position with the same 3-byte hash */
    int32_t *head4;   /* the same for 4 bytes */
    int32_t *prev4;
    /* per position of the current block */
    uint16_t *d2, *d3, *d4, *dl, *ml;
    uint32_t *cost;
    uint16_t *clen;
    uint8_t *ckind;
    uint32_t *qrun, *qcopy; /* window-minimum queues (indices) */
    /* bit output, in decoding order, least significant bit first */
    uint32_t *bits;
    size_t bits_cap, bits_len;
    uint64_t acc;
    unsigned nacc;
} bk_enc;

static inline unsigned hash3(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - BK_HASH_BITS);
}

static inline unsigned hash4(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return (v * 2246822519u) >> (32 - BK_HASH_BITS);
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

/* The nearest earlier position within max_dist whose first `need` bytes
 * equal those at i, following a hash chain; 0 if none. Inserts i. */
static inline uint16_t nearest(const uint8_t *r, size_t i, int32_t *head, int32_t *prev, unsigned h,
                        size_t need, size_t max_dist, bool may_match)
{
    int32_t c = head[h];
    uint16_t found = 0;
    while (may_match && c >= 0 && i - (size_t)c <= max_dist) {
        if (r[c] == r[i] && r[c + 1] == r[i + 1] && r[c + 2] == r[i + 2] &&
            (need == 3 || r[c + 3] == r[i + 3])) {
            found = (uint16_t)(i - (size_t)c);
            break;
        }
        c = prev[(size_t)c & BK_WINDOW];
    }
    prev[i & BK_WINDOW] = head[h];
    head[h] = (int32_t)i;
    return found;
}

/* Inserts i into the binary tree of its byte pair (positions ordered by the
 * bytes that follow) and returns the longest match within the window, up to
 * cap bytes, with its distance. The tree is walked down once: each node
 * passed is hung on the left or right spine of the new root, so the search
 * and the insertion are the same pass. */
static size_t tree_match(bk_enc *e, size_t i, size_t cap, uint16_t *dist)
{
    const uint8_t *r = e->r;
    unsigned key = (unsigned)r[i] << 8 | r[i + 1];
    int32_t cur = e->head2[key];
    e->head2[key] = (int32_t)i;
    int32_t *left = &e->son[2 * (i & BK_WINDOW)];
    int32_t *right = left + 1;
    size_t len_left = 0, len_right = 0, best = 0;
    int32_t best_at = 0; /* where best was found */
    unsigned depth = BK_TREE_DEPTH;
    while (cur >= 0 && i - (size_t)cur <= BK_WINDOW && depth--) {
        int32_t *pair = &e->son[2 * ((size_t)cur & BK_WINDOW)];
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

/* Match facts for the positions [bs, be) of the reversed input: the nearest
 * matches of 2, 3 and 4 bytes (the short copies' offset limits make the
 * nearest the only one worth knowing) and the longest match. The tree works
 * to the end of the whole input so that it stays consistent across blocks;
 * lengths are then cut at the block's end. */
static void find_matches(bk_enc *e, size_t bs, size_t be)
{
    const uint8_t *r = e->r;
    /* The previous position's long match (length before the block cut,
     * distance), if the tree gave it BK_NICE bytes and it was extended:
     * in a long repeat each position would otherwise compare up to 192
     * bytes its neighbour has just compared. */
    size_t prev_len = 0;
    uint16_t prev_dist = 0;
    for (size_t i = bs; i < be; i++) {
        size_t k = i - bs;
        size_t room = be - i;
        uint16_t d2 = 0, d3 = 0, d4 = 0, dl = 0, ml = 0;
        if (i + 1 < e->n) {
            size_t whole = e->n - i < BK_MAX_COPY ? e->n - i : BK_MAX_COPY;
            unsigned key = (unsigned)r[i] << 8 | r[i + 1];
            int32_t c = e->head2[key];
            if (c >= 0 && i - (size_t)c <= BK_WINDOW && room >= 2)
                d2 = (uint16_t)(i - (size_t)c);
            uint16_t d = 0;
            size_t l = tree_match(e, i, whole < BK_NICE ? whole : BK_NICE, &d);
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
            if (l >= 2) {
                ml = (uint16_t)l;
                dl = d;
            }

        }
        /* The previous position with the same pair, if it matches 3 (4)
         * bytes and is near enough, is the nearest such match: the hash
         * chain need not be walked. */
        bool pair3 = d2 && d2 <= 511 && i + 2 < e->n && r[i + 2] == r[i - d2 + 2];
        bool pair4 = pair3 && d2 <= 1023 && i + 3 < e->n && r[i + 3] == r[i - d2 + 3];
        if (i + 2 < e->n)
            d3 = nearest(r, i, e->head3, e->prev3, hash3(r + i), 3, 511,
                         room >= 3 && ml >= 3 && !pair3);
        if (i + 3 < e->n)
            d4 = nearest(r, i, e->head4, e->prev4, hash4(r + i), 4, 1023,
                         room >= 4 && ml >= 4 && !pair4);
        if (pair3 && room >= 3 && ml >= 3)
            d3 = d2;
        if (pair4 && room >= 4 && ml >= 4)
            d4 = d2;
        e->d2[k] = d2;
        e->d3[k] = d3;
        e->d4[k] = d4;
        e->dl[k] = dl;
        e->ml[k] = ml;
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
 * Only the last block is constrained: before it the bits of later blocks
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
 * every position of the last block, so it is a formula, not a loop. */
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

/* The cheapest parse of the block's K positions, ending at its end.
 * tail: the block ends the input, file position of its index e is
 * tail_base - e; constrained as above. False if no parse meets them. */
static bool parse_block(bk_enc *e, size_t K, bool constrained, uint64_t tail_base)
{
    uint32_t *cost = e->cost;
    cost[K] = 0;
    /* Queues hold indices j with increasing values from front (largest j)
     * to back (smallest j); qrun keys cost[j] + 8j, qcopy keys cost[j].
     * An entry dropped from the back has a smaller-or-equal newer entry
     * that every later window holding it also holds, so dropping is safe
     * whatever the windows' upper ends do. Entries that break the
     * in-place rule are never queued. */
    size_t rf = 0, rb = 0, cf = 0, cb = 0;
    /* Every run_limit(p, run) is at least 8p + 7, and away from the file's
     * start the bits left are well below that: with p = tail_base - j,
     * cost[j] <= 8p + 7 is cost[j] + 8j <= 8 * tail_base + 7, one
     * comparison; only near the start is the exact limit needed. */
    const uint64_t slack_top = 8 * tail_base + 7;
#define BK_OK(j, run)                                                                              \
    (!constrained || (uint64_t)cost[j] + 8 * (uint64_t)(j) <= slack_top ||                         \
     cost[j] <= run_limit(tail_base - (j), (run)))
    for (size_t k = K; k-- > 0;) {
        /* Each choice is one bk_choice key and the cheapest key wins; a
         * key's low bits keep the order the choices were once tried in
         * (first tried wins a tie), so the parse stays the same. Taking
         * minima instead of branching on each comparison saves a
         * mispredicted branch or two per choice. */
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
            size_t j = k + 9;
            if (cost[j] < BK_INF && BK_OK(j, 4)) {
                uint32_t key = cost[j] + 8 * (uint32_t)j;
                while (rb > rf && cost[e->qrun[rb - 1]] + 8 * e->qrun[rb - 1] >= key)
                    rb--;
                e->qrun[rb++] = (uint32_t)j;
            }
            while (rb > rf && e->qrun[rf] > k + BK_MAX_RUN)
                rf++;
            if (rb > rf) {
                size_t jb = e->qrun[rf];
                uint64_t c = bk_choice(11 + 8 * (uint32_t)(jb - k) + cost[jb], 8, K_RUN,
                                       (unsigned)(jb - k));
                best = c < best ? c : best;
            }
        }
        if (k + 2 <= K && cost[k + 2] < BK_INF && BK_OK(k + 2, 1)) {
            size_t j = k + 2;
            while (cb > cf && cost[e->qcopy[cb - 1]] >= cost[j])
                cb--;
            e->qcopy[cb++] = (uint32_t)j;
        }
        /* Entries more than 256 ahead serve no later position either. */
        while (cb > cf && e->qcopy[cf] > k + BK_MAX_COPY)
            cf++;
        size_t top = k + e->ml[k];
        if (e->ml[k] >= 2 && cb > cf && e->qcopy[cb - 1] <= top) {
            /* Indices fall from front to back: the first one <= top holds
             * the window's minimum. */
            size_t lo = cf, hi = cb - 1;
            if (e->qcopy[lo] > top && e->ml[k] <= 16) {
                /* A short window: its entries are few, at the back. */
                lo = hi;
                while (lo > cf && e->qcopy[lo - 1] <= top)
                    lo--;
            } else if (e->qcopy[lo] > top) {
                while (hi - lo > 1) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (e->qcopy[mid] > top)
                        lo = mid;
                    else
                        hi = mid;
                }
                lo = hi;
            }
            size_t jb = e->qcopy[lo];
            uint64_t c = bk_choice(23 + cost[jb], 9, K_COPYN, (unsigned)(jb - k));
            best = c < best ? c : best;
        }
        /* The short copies (distance 0: none here; a nonzero one always
         * fits in the block, the match finder cut it at the block's end). */
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
#undef BK_OK
    return cost[0] < BK_INF;
}

/* Appends a w-bit (<= 24) field, most significant bit first in decoding order. */
static inline void put_field(bk_enc *e, uint32_t v, unsigned w)
{
    e->acc |= (uint64_t)rev_bits24(v, w) << e->nacc;
    e->nacc += w;
    if (e->nacc >= 32) {
        e->bits[e->bits_len++] = (uint32_t)e->acc;
        e->acc >>= 32;
        e->nacc -= 32;
    }
}

static void emit_block(bk_enc *e, size_t bs, size_t K)
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

/* Lays the decoding-order bits out as the file's words: the last data word
 * is read first and takes the odd bits under its marker. */
static trowel_status assemble(bk_enc *e, uint8_t **out, size_t *out_len)
{
    uint64_t total = (uint64_t)e->bits_len * 32 + e->nacc;
    if (e->nacc)
        e->bits[e->bits_len] = (uint32_t)e->acc;
    e->bits[e->bits_len + 1] = 0;
    unsigned odd = (unsigned)(total % 32);
    size_t full = (size_t)(total / 32);
    size_t words = full + 1;
    size_t size = 4 * (words + 2);
    uint8_t *o = trowel_mem_alloc(e->ctx, size);
    if (!o)
        return e->ctx->last_error.status;
    uint32_t sum = 0;
    uint32_t first = (odd ? e->bits[0] & ((1u << odd) - 1u) : 0) | 1u << odd;
    trowel_put_be32(o + 4 * (words - 1), first);
    sum ^= first;
    for (size_t j = 0; j < full; j++) {
        uint64_t at = odd + 32 * (uint64_t)j;
        size_t idx = (size_t)(at / 32);
        unsigned sh = (unsigned)(at % 32);
        uint32_t v = e->bits[idx] >> sh;
        if (sh)
            v |= e->bits[idx + 1] << (32 - sh);
        trowel_put_be32(o + 4 * (words - 2 - j), v);
        sum ^= v;
    }
    trowel_put_be32(o + 4 * words, sum);
    trowel_put_be32(o + 4 * words + 4, (uint32_t)e->n);
    *out = o;
    *out_len = size;
    return TROWEL_OK;
}

static void enc_free(bk_enc *e)
{
    trowel_ctx *ctx = e->ctx;
    void *ptrs[] = {(void *)(uintptr_t)e->r, e->head2, e->son, e->head3, e->prev3, e->head4, e->prev4, e->d2, e->d3, e->d4,
                    e->dl, e->ml, e->cost, e->clen, e->ckind, e->qrun, e->qcopy, e->bits};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        trowel_mem_free(ctx, ptrs[i]);
}

static trowel_status enc_alloc(bk_enc *e, size_t block)
{
    trowel_ctx *ctx = e->ctx;
    size_t blocks = e->n / BK_BLOCK + 1;
    /* Per block at most 8.05 bits a byte plus a run header at its end. */
    e->bits_cap = e->n / 4 + e->n / 512 + 16 * blocks + 16;
    e->head2 = trowel_mem_alloc(ctx, 65536 * sizeof(int32_t));
    size_t hash_bytes = ((size_t)1 << BK_HASH_BITS) * sizeof(int32_t);
    size_t ring_bytes = (BK_WINDOW + 1) * sizeof(int32_t);
    e->son = e->head2 ? trowel_mem_alloc(ctx, 2 * ring_bytes) : NULL;
    e->head3 = e->son ? trowel_mem_alloc(ctx, hash_bytes) : NULL;
    e->prev3 = e->head3 ? trowel_mem_alloc(ctx, ring_bytes) : NULL;
    e->head4 = e->prev3 ? trowel_mem_alloc(ctx, hash_bytes) : NULL;
    e->prev4 = e->head4 ? trowel_mem_alloc(ctx, ring_bytes) : NULL;
    e->d2 = e->prev4 ? trowel_mem_alloc(ctx, block * sizeof(uint16_t)) : NULL;
    e->d3 = e->d2 ? trowel_mem_alloc(ctx, block * sizeof(uint16_t)) : NULL;
    e->d4 = e->d3 ? trowel_mem_alloc(ctx, block * sizeof(uint16_t)) : NULL;
    e->dl = e->d4 ? trowel_mem_alloc(ctx, block * sizeof(uint16_t)) : NULL;
    e->ml = e->dl ? trowel_mem_alloc(ctx, block * sizeof(uint16_t)) : NULL;
    e->cost = e->ml ? trowel_mem_alloc(ctx, (block + 1) * sizeof(uint32_t)) : NULL;
    e->clen = e->cost ? trowel_mem_alloc(ctx, block * sizeof(uint16_t)) : NULL;
    e->ckind = e->clen ? trowel_mem_alloc(ctx, block) : NULL;
    e->qrun = e->ckind ? trowel_mem_alloc(ctx, (block + 1) * sizeof(uint32_t)) : NULL;
    e->qcopy = e->qrun ? trowel_mem_alloc(ctx, (block + 1) * sizeof(uint32_t)) : NULL;
    e->bits = e->qcopy ? trowel_mem_calloc(ctx, e->bits_cap + 2, sizeof(uint32_t)) : NULL;
    if (!e->bits)
        return ctx->last_error.status;
    memset(e->head2, 0xff, 65536 * sizeof(int32_t));
    memset(e->son, 0xff, 2 * ring_bytes);
    memset(e->head3, 0xff, hash_bytes);
    memset(e->prev3, 0xff, ring_bytes);
    memset(e->head4, 0xff, hash_bytes);
    memset(e->prev4, 0xff, ring_bytes);
    return TROWEL_OK;
}

trowel_status trowel_bytekiller_encode(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                       uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if ((uint64_t)size > UINT32_MAX || size > (size_t)INT32_MAX)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "the packer's length field has 32 bits: %zu bytes is too large", size);
    bk_enc e;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.n = size;
    uint8_t *rev = trowel_mem_alloc(ctx, size ? size : 1);
    if (!rev)
        return ctx->last_error.status;
    for (size_t i = 0; i < size; i++)
        rev[i] = data[size - 1 - i];
    e.r = rev;
    size_t block = size < BK_BLOCK ? (size ? size : 1) : BK_BLOCK;
    trowel_status s = enc_alloc(&e, block);
    for (size_t bs = 0; s == TROWEL_OK && bs < size; bs += block) {
        size_t K = size - bs < block ? size - bs : block;
        find_matches(&e, bs, bs + K);
        /* The last block keeps to the in-place rule when it can. */
        bool last = bs + K == size;
        if (!parse_block(&e, K, last, size - bs))
            parse_block(&e, K, false, 0);
        emit_block(&e, bs, K);
        trowel_progress(ctx, bs + K, size);
    }
    if (s == TROWEL_OK)
        s = assemble(&e, out, out_len);
    enc_free(&e);
    return s;
}

/* ------------------------------------------------------------------- codec */

static trowel_status bk_compress(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out)
{
    uint8_t *data = NULL, *packed = NULL;
    size_t size = 0, packed_len = 0;
    trowel_status s = trowel_reader_load(in, &data, &size);
    if (s == TROWEL_OK)
        s = trowel_bytekiller_encode(ctx, data, size, &packed, &packed_len);
    trowel_mem_free(ctx, data);
    if (s == TROWEL_OK)
        s = trowel_sink_write(out, packed, packed_len);
    trowel_mem_free(ctx, packed);
    return s;
}

static trowel_status bk_decompress(trowel_ctx *ctx, trowel_reader *in, uint64_t expected_size,
                                   trowel_sink *out)
{
    return trowel_bytekiller_decode(ctx, in, expected_size, out);
}

const struct trowel_codec trowel_codec_bytekiller = {
    "bytekiller",
    "Delphine packer (Bytekiller 1.3) of Cinematique games: data words, XOR checksum, "
    "unpacked length (big-endian); the stream carries its own length",
    bk_compress,
    bk_decompress,
};
