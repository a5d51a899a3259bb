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

#include "core/bytes.h"
#include "core/module.h"
#include "core/sink.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

enum {
    BK_WINDOW = 4095,   /* the longest offset (12 bits) */
    BK_MAX_COPY = 256,
    BK_MAX_RUN = 264,
    BK_SHORT_RUN = 8,
    BK_TREE_DEPTH = 64,  /* tree nodes examined per position */
    BK_NICE = 64,        /* the tree orders positions by this many bytes */
    BK_ROOT_BITS = 16,   /* 65536 trees */
    BK_MAX_THREADS = 16,
    BK_RING = 512,       /* the parse's window tables */
    BK_COPY_LEVELS = 8   /* long-copy windows of up to 255 (copy_minima_add) */
};

/* Segments are packed independently (see the encoder's notes above). */
#define BK_SEGMENT_MIN ((size_t)1 << 15)
#define BK_SEGMENT_MAX ((size_t)1 << 18)
/* The parse's window keys hold costs below 2^24 bits (see window_key): at
 * most 13 bits a byte (even a parse held to the in-place rule never pays
 * more than a one-byte run), plus 8 per position, over a segment, which is
 * under twice BK_SEGMENT_MAX (see segment_size). */
_Static_assert(2 * BK_SEGMENT_MAX * 21 < ((size_t)1 << 24), "segments too long for window keys");

#if defined(__GNUC__)
#define BK_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define BK_ALWAYS_INLINE static inline
#endif

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

/* The XOR of the data words as big-endian numbers. XOR works byte by byte,
 * so the words are XORed as they lie, eight bytes at a time, and the
 * result's bytes are read big-endian once at the end. */
static uint32_t data_checksum(const uint8_t *src, size_t words)
{
    uint64_t acc = 0;
    size_t i = 0;
    for (; i + 2 <= words; i += 2) {
        uint64_t w;
        memcpy(&w, src + 4 * i, 8);
        acc ^= w;
    }
    uint32_t half[2];
    memcpy(half, &acc, 8);
    uint32_t folded = half[0] ^ half[1];
    if (i < words) {
        uint32_t w;
        memcpy(&w, src + 4 * i, 4);
        folded ^= w;
    }
    uint8_t bytes[4];
    memcpy(bytes, &folded, 4);
    return be32(bytes);
}

/* x with its 64 bits in reverse order: byte k of x becomes byte 7 - k of
 * the result, its bits reversed (rev8 of it). */
static inline uint64_t bit_reverse64(uint64_t x)
{
    x = (x >> 1 & 0x5555555555555555u) | (x & 0x5555555555555555u) << 1;
    x = (x >> 2 & 0x3333333333333333u) | (x & 0x3333333333333333u) << 2;
    x = (x >> 4 & 0x0f0f0f0f0f0f0f0fu) | (x & 0x0f0f0f0f0f0f0f0fu) << 4;
    return __builtin_bswap64(x);
}

/* Eight bytes at p, least significant first, whatever the host's order. */
static inline void store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 8);
#else
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> 8 * i);
#endif
}

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

/* A thread that writes the decoded output while the rest is decoded. The
 * decoder finishes the output from the end down, so what lies above its
 * position is final: it publishes that position now and then, and the
 * writer writes what is new at its place in the file (a positional sink). */
typedef struct bk_writer {
    trowel_sink *out;
    const uint8_t *dst;
    size_t length;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more;
    size_t ready;   /* dst[ready, length) is final (under lock) */
    bool finished;  /* decoding succeeded: ready is 0 (under lock) */
    bool abandon;   /* decoding failed: stop (under lock) */
    int err;        /* the writer's errno, read after the join */
} bk_writer;

enum { BK_WRITER_PIECE = 1 << 20 }; /* publish every MiB */
#define BK_WRITER_MIN ((size_t)8 << 20) /* smaller outputs are written at the end */

static void writer_publish(bk_writer *wr, size_t ready, bool finished, bool abandon)
{
    pthread_mutex_lock(&wr->lock);
    wr->ready = ready;
    wr->finished = finished;
    wr->abandon = abandon;
    pthread_cond_signal(&wr->more);
    pthread_mutex_unlock(&wr->lock);
}

static void *writer_run(void *arg)
{
    bk_writer *wr = arg;
    size_t done = wr->length; /* dst[done, length) is written */
    for (;;) {
        pthread_mutex_lock(&wr->lock);
        while (wr->ready == done && !wr->finished && !wr->abandon)
            pthread_cond_wait(&wr->more, &wr->lock);
        size_t ready = wr->ready;
        bool finished = wr->finished, abandon = wr->abandon;
        pthread_mutex_unlock(&wr->lock);
        if (abandon)
            return NULL;
        if (ready < done) {
            wr->err = trowel_sink_pwrite(wr->out, ready, wr->dst + ready, done - ready);
            if (wr->err)
                return NULL;
            done = ready;
        }
        if (finished && done == 0)
            return NULL;
    }
}

/* Starts wr's thread; false (nothing to undo) if it cannot. */
static bool writer_start(bk_writer *wr)
{
    if (pthread_mutex_init(&wr->lock, NULL) != 0)
        return false;
    if (pthread_cond_init(&wr->more, NULL) == 0) {
        if (pthread_create(&wr->thread, NULL, writer_run, wr) == 0)
            return true;
        pthread_cond_destroy(&wr->more);
    }
    pthread_mutex_destroy(&wr->lock);
    return false;
}

/* Decoding is over: the writer writes the rest (decoded: the output is
 * whole) or stops where it is; then it is gone. */
static void writer_stop(bk_writer *wr, bool decoded)
{
    writer_publish(wr, decoded ? 0 : wr->ready, decoded, !decoded);
    pthread_join(wr->thread, NULL);
    pthread_cond_destroy(&wr->more);
    pthread_mutex_destroy(&wr->lock);
}

/* The decoder. dst NULL: parse only. in_place non-NULL: also tell whether
 * the stream decodes in place, packed bytes at the start of the output
 * buffer: no byte may be written over a data word not yet read. wr
 * non-NULL: publish finished output to it as decoding goes down.
 * Always inlined, so that each caller's constant dst and in_place take
 * their per-byte tests out of the loops. */
BK_ALWAYS_INLINE trowel_status decode_core(trowel_ctx *ctx, const uint8_t *src, size_t n, uint64_t base,
                                 uint8_t *dst, size_t dst_len, bool *in_place, bk_writer *wr)
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
    uint32_t stored = be32(src + n - 8), sum = data_checksum(src, data_words);
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
    /* Publish to the writer once pos is at or below mark (never without one). */
    size_t mark = wr && dst_len > BK_WRITER_PIECE ? dst_len - BK_WRITER_PIECE : 0;
    while (pos > 0) {
        unsigned len = 0, off = 0;
        if (TROWEL_UNLIKELY(pos <= mark)) {
            writer_publish(wr, pos, false, false);
            mark = pos > BK_WRITER_PIECE ? pos - BK_WRITER_PIECE : 0;
        }
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
                if (dst && !in_place && take >= 4 && pos >= 8) {
                    /* Four or more at once: the register reversed holds
                     * them in output order, top byte first. The bytes
                     * below the run land in output not decoded yet (it
                     * is written over later), never below dst. */
                    store_le64(dst + pos - 8, bit_reverse64(b.bits));
                    b.bits = take == 8 ? 0 : b.bits >> 8 * take;
                    b.count -= 8 * take;
                    pos -= take;
                    continue;
                }
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
        if (off >= 16 && pos >= 16) {
            /* 16 bytes at a time from the top down: with off >= 16 a
             * chunk never reads what it writes, and what it reads from an
             * earlier chunk is already final, as byte by byte. The last
             * chunk may write up to 15 bytes below pos, into output not
             * decoded yet (it will be overwritten), never below dst. */
            uint8_t *d = dst + pos + len;
            size_t t = len;
            do {
                uint8_t chunk[16];
                d -= 16;
                memcpy(chunk, d + off, 16);
                memcpy(d, chunk, 16);
                t = t > 16 ? t - 16 : 0;
            } while (t > 0);
        } else if (off >= len) {
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
    return decode_core(ctx, src, n, base, dst, dst_len, NULL, NULL);
}

bool trowel_bytekiller_in_place_safe(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                     size_t out_len)
{
    bool safe = false;
    trowel_error saved = ctx->last_error;
    if (decode_core(ctx, src, n, 0, NULL, out_len, &safe, NULL) != TROWEL_OK)
        safe = false;
    ctx->last_error = saved;
    return safe;
}

/* The buffer of out when it is a memory sink with room for length bytes
 * and nothing written yet, else NULL. The decoder then fills it in place
 * and sets its length once the whole output is good. */
static uint8_t *memory_sink_room(trowel_sink *out, size_t length)
{
    if (out->kind != TROWEL_SINK_MEMORY || out->failed || out->written || out->len ||
        length == 0 || out->cap < length)
        return NULL;
    return out->buf;
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
    /* A memory sink that has room for the whole output and nothing in it
     * yet (trowel_archive_read_entry_data reserves it) is decoded into
     * directly: no second buffer, no copy, and only the packed stream
     * still to allocate. */
    uint8_t *direct = memory_sink_room(out, length);
    if ((s = trowel_mem_check(ctx, n + (direct ? 0 : (uint64_t)length),
                              "the packed stream and its output")) != TROWEL_OK)
        return s;
    uint8_t *src;
    size_t got;
    if ((s = trowel_reader_load(&rest, &src, &got)) != TROWEL_OK)
        return s;
    uint8_t *dst = direct ? direct : trowel_mem_alloc(ctx, length ? length : 1);
    if (!dst) {
        trowel_mem_free(ctx, src);
        return ctx->last_error.status;
    }
    /* A large output goes to a file while it is decoded, by a second
     * thread: writing it after would take about as long again. */
    bk_writer wr = {.out = out, .dst = dst, .length = length, .ready = length};
    bool writing = length >= BK_WRITER_MIN && trowel_sink_takes_positional(out) &&
                   trowel_threads_for(ctx, 2) > 1 && writer_start(&wr);
    s = decode_core(ctx, src, got, base, dst, length, NULL, writing ? &wr : NULL);
    trowel_mem_free(ctx, src);
    trowel_progress(ctx, length, length);
    if (writing) {
        writer_stop(&wr, s == TROWEL_OK);
        if (s == TROWEL_OK)
            s = trowel_sink_positional_done(out, length, wr.err);
    } else if (direct) {
        if (s == TROWEL_OK)
            out->len = out->written = length;
        return s;
    } else if (s == TROWEL_OK && length) {
        s = trowel_sink_write(out, dst, length);
    }
    trowel_mem_free(ctx, dst);
    return s;
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

/* ------------------------------------------------------------------- codec */

static trowel_status bk_compress(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out)
{
    return trowel_codec_compress_whole(ctx, in, out, trowel_bytekiller_encode);
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
    NULL, /* whole-buffer: the packer parses from the end */
};
