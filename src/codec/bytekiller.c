/*
 * The Delphine packer (Bytekiller 1.3 family): a checking block decoder
 * (this file, with the codec's table) and an optimal-parse encoder
 * (bytekiller_encode.c).
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
 * the end), the output is a buffer of the declared size. Past the first word
 * read, the stream is its bytes from the last down, each least significant
 * bit first. A stream the decoder owns has each data byte's bits flipped
 * once, before or while it is decoded (flip_and_xor; the loader thread does
 * it for a large one), which makes the stream a plain run of bits read from
 * the last byte down, each byte from its top bit: the bits are then kept in
 * a 64-bit register (plain locals, so it stays in machine registers) in
 * reading order from its top bit down, topped up by one unaligned 8-byte
 * load with no branch, and each field is a shift off the top. A stream the
 * decoder may not write to (trowel_bytekiller_decode_mem, the in-place
 * check) has each loaded 8 bytes flipped in the register instead. A
 * command's head is decoded by its first three bits (one table row, no
 * branch per kind). The common commands, a short literal run or a copy of
 * up to 32 bytes that does not overlap itself, are then one branch-free step
 * of a 32-byte load and store; the others, and every error, take a checked
 * path. Every length and offset is checked once against the output, and the
 * bytes of a run or copy are moved in bulk. Around a large stream read from
 * a file, three more threads work while it decodes: one loads the stream
 * from its end down, flips it and works out its checksum (bk_loader; the
 * checksum's verdict still comes before the decoder's), one has the kernel
 * map the output's pages ahead of the decoder (bk_prefault), one writes the
 * finished output (bk_writer), which then needs to be in memory only a
 * window at a time.
 *
 * Encoder: bytekiller_encode.c; what both halves share:
 * bytekiller_int.h.
 */
/* madvise and MADV_POPULATE_WRITE (Linux) are outside POSIX. */
#define _DEFAULT_SOURCE
#include "codec/bytekiller.h"
#include "codec/bytekiller_int.h"

#include "core/bytes.h"
#include "core/input.h"
#include "core/module.h"
#include "core/sink.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

static inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ------------------------------------------------------------------ decoder */

/* Reverses the bits of each byte of x in place (rev8 of each): x is a
 * uint64_t or a vector of them (bk_lanes below), which a function could
 * not take both of. */
#define BK_FLIP_BYTES(x)                                                                    \
    do {                                                                                    \
        (x) = ((x) >> 1 & 0x5555555555555555u) | ((x) & 0x5555555555555555u) << 1;         \
        (x) = ((x) >> 2 & 0x3333333333333333u) | ((x) & 0x3333333333333333u) << 2;         \
        (x) = ((x) >> 4 & 0x0f0f0f0f0f0f0f0fu) | ((x) & 0x0f0f0f0f0f0f0f0fu) << 4;         \
    } while (0)

/* x with the bits of each of its bytes in reverse order. */
static inline uint64_t flip_bytes64(uint64_t x)
{
    BK_FLIP_BYTES(x);
    return x;
}

#if defined(__GNUC__)
/* Two 8-byte lanes, so that the compiler uses vector instructions (SSE2 on
 * any x86-64) where it has them. */
typedef uint64_t bk_lanes __attribute__((vector_size(16)));
#define BK_LANE_BYTES 16
#else
typedef uint64_t bk_lanes;
#define BK_LANE_BYTES 8
#endif

/* The XOR of the `words` 4-byte words at in, as they lie in memory (XOR
 * works byte by byte, so they are XORed a lane at a time and folded);
 * with out, the bytes are also copied there flipped (out may be in). */
BK_ALWAYS_INLINE uint32_t xor_words(const uint8_t *in, uint8_t *out, size_t words)
{
    size_t bytes = 4 * words, i = 0;
    bk_lanes acc;
    memset(&acc, 0, sizeof acc);
    for (; i + BK_LANE_BYTES <= bytes; i += BK_LANE_BYTES) {
        bk_lanes w;
        memcpy(&w, in + i, sizeof w);
        acc ^= w;
        if (out) {
            BK_FLIP_BYTES(w);
            memcpy(out + i, &w, sizeof w);
        }
    }
    uint32_t folded = 0;
    uint32_t part[BK_LANE_BYTES / 4];
    memcpy(part, &acc, sizeof part);
    for (size_t k = 0; k < BK_LANE_BYTES / 4; k++)
        folded ^= part[k];
    for (; i < bytes; i += 4) {
        uint32_t w;
        memcpy(&w, in + i, 4);
        folded ^= w;
        if (out) {
            uint32_t low = (uint32_t)flip_bytes64(w); /* its bytes flipped, where they lie */
            memcpy(out + i, &low, 4);
        }
    }
    return folded;
}

/* The checksum the stream stores, from the XOR of its data words as they
 * lie in memory (xor_words): that XOR read as a big-endian number. */
static uint32_t checksum_of(uint32_t folded)
{
    uint8_t bytes[4];
    memcpy(bytes, &folded, 4);
    return be32(bytes);
}

/* The checksum of the data words at src. */
static uint32_t data_checksum(const uint8_t *src, size_t words)
{
    return checksum_of(xor_words(src, NULL, words));
}

/* Flips the bytes of the data words at src (see the top of the file) and
 * gives their XOR before the flip, for checksum_of. */
static uint32_t flip_and_xor(uint8_t *src, size_t words)
{
    return xor_words(src, src, words);
}

/* v as the host holds the eight bytes of v least significant first. */
static inline uint64_t le64_bytes(uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return v;
#else
    return __builtin_bswap64(v);
#endif
}

/* Eight bytes at p, least significant first, whatever the host's order. */
static inline void store_le64(uint8_t *p, uint64_t v)
{
    v = le64_bytes(v);
    memcpy(p, &v, 8);
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

/* The eight bytes at p, least significant first: the stream's next 64 bits
 * in reading order from the top bit down when p + 8 is the end of what is
 * unread and the bytes are flipped (see the top of the file). */
static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return le64_bytes(v);
}

/* The stream's next 64 bits, from the 8 bytes at p (the last 8 unread),
 * as the register wants them: bytes flipped already, or flipped here. */
BK_ALWAYS_INLINE uint64_t stream64(const uint8_t *p, bool flipped)
{
    return flipped ? load_le64(p) : flip_bytes64(load_le64(p));
}

/* The stream's byte b as the register wants it. */
BK_ALWAYS_INLINE uint8_t stream8(uint8_t b, bool flipped)
{
    return flipped ? b : rev8[b];
}

/* The bit register of the slow path, as the decoder's (the next bit at
 * bit 63), loaded a byte at a time. */
typedef struct bk_bits {
    const uint8_t *src;
    size_t next;    /* bytes [0, next) are not loaded yet */
    uint64_t bits;  /* loaded bits in reading order from bit 63 down */
    unsigned count; /* how many */
    bool flipped;   /* src's bytes are flipped */
} bk_bits;

static inline void bk_refill(bk_bits *b)
{
    while (b->count <= 55 && b->next > 0) {
        b->bits |= (uint64_t)stream8(b->src[--b->next], b->flipped) << (56 - b->count);
        b->count += 8;
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
    *v = (unsigned)(b->bits >> (64 - w));
    b->bits <<= w;
    b->count -= w;
    return true;
}

/* The command heads by their first three bits (the first read is the
 * index's most significant): the bits the head takes, and where its length
 * and offset fields lie in the register (a field of w bits that starts a
 * bits after the command's first is (register >> (64 - a - w)) & (2^w - 1),
 * its first bit the most significant; mask 0: no such field), with the
 * length's base and, for a literal run, which has no offset, BK_RUN_FROM
 * (see the fast loop in decode_core) as its offset. Decoding by table takes
 * the branches on the command's kind, which the data decides and no
 * predictor guesses, out of the fast path. */
typedef struct bk_head_shape {
    uint8_t used, len_base, len_shift, off_shift;
    uint16_t len_mask, off_mask, off_base;
    bool literal;
} bk_head_shape;

enum { BK_RUN_FROM = 4096 };

static const bk_head_shape head_shapes[8] = {
    [0] = {5, 1, 59, 0, 0x7, 0, BK_RUN_FROM, true},   /* 0 0 nnn: nnn+1 literals */
    [1] = {5, 1, 59, 0, 0x7, 0, BK_RUN_FROM, true},   /* (the third bit is nnn's) */
    [2] = {10, 2, 0, 54, 0, 0xff, 0, false},          /* 0 1 o*8: copy 2 */
    [3] = {10, 2, 0, 54, 0, 0xff, 0, false},          /* (the third bit is o's) */
    [4] = {12, 3, 0, 52, 0, 0x1ff, 0, false},         /* 1 0 0 o*9: copy 3 */
    [5] = {13, 4, 0, 51, 0, 0x3ff, 0, false},         /* 1 0 1 o*10: copy 4 */
    [6] = {23, 1, 53, 41, 0xff, 0xfff, 0, false},     /* 1 1 0 l*8 o*12: copy l+1 */
    [7] = {11, 9, 53, 0, 0xff, 0, BK_RUN_FROM, true}, /* 1 1 1 n*8: n+9 literals */
};

/* The shape of the command at the register's top, with its length and
 * offset (a literal run's offset is BK_RUN_FROM); at least 23 bits loaded. */
BK_ALWAYS_INLINE const bk_head_shape *head_of(uint64_t bits, unsigned *len, unsigned *off)
{
    const bk_head_shape *h = &head_shapes[bits >> 61];
    *len = h->len_base + (unsigned)((bits >> h->len_shift) & h->len_mask);
    *off = h->off_base + (unsigned)((bits >> h->off_shift) & h->off_mask);
    return h;
}

/* The bits a whole command takes, by its first five (as head_shapes): the
 * head and bytes of a 0 0 nnn run, the head of a copy; 255 (more than the
 * register ever holds) for a 1 1 1 run, whose length lies further on. */
static const uint8_t command_bits[32] = {
    13, 21, 29, 37, 45, 53, 61, 69,         /* 0 0 nnn: 5 + 8 (nnn + 1) */
    10, 10, 10, 10, 10, 10, 10, 10,         /* 0 1 */
    12, 12, 12, 12, 13, 13, 13, 13,         /* 1 0 0, 1 0 1 */
    23, 23, 23, 23, 255, 255, 255, 255,     /* 1 1 0, 1 1 1 */
};

/* A command head: a literal run of len bytes, or a copy of len bytes
 * from off above. ok false: the input ran out inside it. */
typedef struct bk_head {
    unsigned len, off;
    bool literal, ok;
} bk_head;

/* The head read field by field, each field checked: for the last few
 * bits of the input, where the whole-register fast path cannot run. Out
 * of line and by value, so that the decoder's bit register, which it
 * never hands out, stays in machine registers. */
static __attribute__((noinline, cold)) bk_head bk_slow_head(bk_bits *b)
{
    bk_head h = {0, 0, false, false};
    unsigned a1 = 0, c = 0;
    if (!bk_take(b, 1, &a1))
        return h;
    if (a1 == 0) {
        if (!bk_take(b, 1, &c))
            return h;
        h.literal = c == 0;
        h.ok = h.literal ? bk_take(b, 3, &h.len) : bk_take(b, 8, &h.off);
        h.len = h.literal ? h.len + 1 : 2;
        return h;
    }
    if (!bk_take(b, 2, &c))
        return h;
    h.literal = c == 3;
    if (h.literal) {
        h.ok = bk_take(b, 8, &h.len);
        h.len += 9;
    } else if (c < 2) {
        h.len = c + 3;
        h.ok = bk_take(b, c + 9, &h.off);
    } else {
        h.ok = bk_take(b, 8, &h.len) && bk_take(b, 12, &h.off);
        h.len += 1;
    }
    return h;
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

/* The data words a decoder that loads a word whenever it holds 32 bits or
 * fewer has not loaded yet, with `left` bits unread: it holds 33..64. */
static size_t words_unloaded(uint64_t left)
{
    return left >= 33 ? (size_t)((left - 33) / 32) : 0;
}

/* A thread that writes the decoded output while the rest is decoded. The
 * decoder finishes the output from the end down, so what lies above its
 * position is final: it publishes that position now and then, and the
 * writer writes what is new at its place in the file (a positional sink).
 * The output then never needs to be in memory whole: the decoder works in
 * a window of BK_WINDOW bytes of it, and a copy reaches at most 4,095
 * bytes above the byte it writes. When the decoder nears the window's
 * bottom, it waits for the writer to have written everything above its
 * position, keeps the BK_KEEP bytes above it that it may still read, and
 * moves the window down under them (window_slide). */
typedef struct bk_writer {
    trowel_sink *out;
    uint8_t *win;   /* the window: output [lo, lo + win_len) */
    size_t win_len;
    size_t length;  /* of the whole output */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more; /* the decoder to the writer and back: broadcast */
    size_t lo;      /* where the window lies (under lock) */
    size_t ready;   /* output [ready, length) is final (under lock) */
    size_t written; /* output [written, length) is in the file (under lock) */
    bool finished;  /* decoding succeeded: ready is 0 (under lock) */
    bool abandon;   /* decoding failed: stop (under lock) */
    bool failed;    /* the writer stopped at an error (under lock) */
    int err;        /* the writer's errno, read after the join */
} bk_writer;

enum { BK_WRITER_PIECE = 1 << 20 }; /* publish every MiB */
#define BK_WRITER_MIN ((size_t)8 << 20) /* smaller outputs are written at the end */
#define BK_WINDOW ((size_t)8 << 20)     /* the output in memory while a writer writes it */
/* The bytes above its position the decoder may still read are at most
 * BK_RUN_FROM (4,096: a copy's offset is at most 4,095, and a literal run's
 * 32-byte step reads 4,096 above); twice that is kept. */
enum { BK_KEEP = 8192 };
/* The room the decoder needs below its position for one command: a run of
 * 264 bytes or a copy of 256, and the bytes a step may write below them. */
enum { BK_SLIDE_AT = 512 };

static void writer_publish(bk_writer *wr, size_t ready, bool finished, bool abandon)
{
    pthread_mutex_lock(&wr->lock);
    wr->ready = ready;
    wr->finished = finished;
    wr->abandon = abandon;
    pthread_cond_broadcast(&wr->more);
    pthread_mutex_unlock(&wr->lock);
}

static void *writer_run(void *arg)
{
    bk_writer *wr = arg;
    size_t done = wr->length; /* output [done, length) is written */
    for (;;) {
        pthread_mutex_lock(&wr->lock);
        while (wr->ready == done && !wr->finished && !wr->abandon)
            pthread_cond_wait(&wr->more, &wr->lock);
        size_t ready = wr->ready, lo = wr->lo;
        bool finished = wr->finished, abandon = wr->abandon;
        pthread_mutex_unlock(&wr->lock);
        if (abandon)
            return NULL;
        if (ready < done) {
            wr->err = trowel_sink_pwrite(wr->out, ready, wr->win + (ready - lo), done - ready);
            done = ready;
            pthread_mutex_lock(&wr->lock);
            wr->written = done;
            wr->failed = wr->err != 0;
            pthread_cond_broadcast(&wr->more);
            pthread_mutex_unlock(&wr->lock);
            if (wr->err)
                return NULL;
        }
        if (finished && done == 0)
            return NULL;
    }
}

/* The decoder at pos is near the bottom of the window at lo: publishes pos,
 * waits until the writer has written everything above it (or has stopped
 * at an error, which it reports at the end: the output is lost anyway),
 * keeps the bytes above pos the decoder may still read, and puts the window
 * down under them. Returns where it now lies. */
static size_t window_slide(bk_writer *wr, size_t pos, size_t lo)
{
    pthread_mutex_lock(&wr->lock);
    wr->ready = pos;
    pthread_cond_broadcast(&wr->more);
    while (wr->written > pos && !wr->failed)
        pthread_cond_wait(&wr->more, &wr->lock);
    size_t keep = wr->length - pos < BK_KEEP ? wr->length - pos : BK_KEEP;
    size_t to = pos + keep > wr->win_len ? pos + keep - wr->win_len : 0;
    memmove(wr->win + (pos - to), wr->win + (pos - lo), keep);
    wr->lo = to;
    pthread_mutex_unlock(&wr->lock);
    return to;
}

/* Where the decoder at pos, its window at lo, next has the writer's
 * attention: a piece further down, or the window's bottom (lo 0: the
 * output's start, which needs no move). Below pos. */
static size_t writer_mark(size_t pos, size_t lo)
{
    size_t piece = pos > BK_WRITER_PIECE ? pos - BK_WRITER_PIECE : 0;
    size_t bottom = lo > 0 ? lo + BK_SLIDE_AT : 0; /* below pos: see window_slide's caller */
    return piece > bottom ? piece : bottom;
}

/* A helper thread with the lock and condition it shares with the decoder
 * (the writer's, the loader's): all made, or none (false). */
static bool start_locked_thread(pthread_t *thread, pthread_mutex_t *lock, pthread_cond_t *more,
                                void *(*run)(void *), void *arg)
{
    if (pthread_mutex_init(lock, NULL) != 0)
        return false;
    if (pthread_cond_init(more, NULL) == 0) {
        if (pthread_create(thread, NULL, run, arg) == 0)
            return true;
        pthread_cond_destroy(more);
    }
    pthread_mutex_destroy(lock);
    return false;
}

/* Waits for such a thread to end and unmakes its lock and condition. */
static void join_locked_thread(pthread_t thread, pthread_mutex_t *lock, pthread_cond_t *more)
{
    pthread_join(thread, NULL);
    pthread_cond_destroy(more);
    pthread_mutex_destroy(lock);
}

static bool writer_start(bk_writer *wr)
{
    return start_locked_thread(&wr->thread, &wr->lock, &wr->more, writer_run, wr);
}

/* Decoding is over: the writer writes the rest (decoded: the output is
 * whole) or stops where it is; then it is gone. */
static void writer_stop(bk_writer *wr, bool decoded)
{
    writer_publish(wr, decoded ? 0 : wr->ready, decoded, !decoded);
    join_locked_thread(wr->thread, &wr->lock, &wr->more);
}

#if defined(__linux__) && (defined(MADV_HUGEPAGE) || defined(MADV_POPULATE_WRITE))
/* The whole pages inside [p, p + length): [*low, *high), maybe empty. */
static void whole_pages(const uint8_t *p, size_t length, uintptr_t *low, uintptr_t *high)
{
    long size = sysconf(_SC_PAGESIZE);
    uintptr_t page = size > 0 ? (uintptr_t)size : 4096;
    *low = ((uintptr_t)p + page - 1) / page * page;
    *high = ((uintptr_t)p + length) / page * page;
    if (*high < *low)
        *high = *low;
}
#endif

/* A large buffer of the decoder's own (the packed stream, the output's
 * window) asks the kernel for huge pages (want): each is written from end
 * to end, and 2 MiB pages take a 29 MB stream's faults from about 7,200 to
 * about 15, with their page-table work. Advice only: with
 * transparent huge pages off, or none free, the kernel maps small pages as
 * before. Before the buffer is freed the range is marked for small pages
 * (!want: Linux has no "as by default"; with THP in its usual "madvise"
 * mode that is the default, with "always" the range then keeps small
 * pages): the allocator may keep those pages for later, small allocations,
 * which should not get huge pages (or wait for the kernel to find them). */
static void advise_huge_pages(uint8_t *p, size_t length, bool want)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    uintptr_t low, high;
    whole_pages(p, length, &low, &high);
    if (high > low)
        (void)madvise((void *)low, high - low, want ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#else
    (void)p;
    (void)length;
    (void)want;
#endif
}

/* Frees a buffer of the decoder's own, marked for small pages first when
 * it asked for huge ones (advised; see advise_huge_pages). */
static void free_buffer(trowel_ctx *ctx, uint8_t *p, size_t length, bool advised)
{
    if (advised && p)
        advise_huge_pages(p, length, false);
    trowel_mem_free(ctx, p);
}

/* A thread that has the kernel map the output's pages ahead of the
 * decoder, from the top down a piece at a time: the decoder's first write
 * to each page would otherwise stop it for the fault (about a sixth of
 * its time for a large output), and the second core takes them instead.
 * MADV_POPULATE_WRITE maps pages writable without touching their bytes,
 * so it never races the decoder's writes; at its first refusal (a kernel
 * before 5.14, no memory) the thread stops, and the decoder takes the
 * faults itself as it would have. Only whole pages inside the output. */
typedef struct bk_prefault {
    uint8_t *dst;
    size_t length;
    atomic_bool stop; /* decoding is over */
    pthread_t thread;
} bk_prefault;

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
static void *prefault_run(void *arg)
{
    bk_prefault *pf = arg;
    uintptr_t low, high;
    whole_pages(pf->dst, pf->length, &low, &high);
    while (high > low && !atomic_load_explicit(&pf->stop, memory_order_relaxed)) {
        uintptr_t from = high - low > BK_WRITER_PIECE ? high - BK_WRITER_PIECE : low;
        if (madvise((void *)from, high - from, MADV_POPULATE_WRITE) != 0)
            break;
        high = from;
    }
    return NULL;
}

/* Starts pf's thread; false (nothing to undo) if it cannot. */
static bool prefault_start(bk_prefault *pf)
{
    atomic_init(&pf->stop, false);
    return pthread_create(&pf->thread, NULL, prefault_run, pf) == 0;
}

static void prefault_stop(bk_prefault *pf)
{
    atomic_store_explicit(&pf->stop, true, memory_order_relaxed);
    pthread_join(pf->thread, NULL);
}
#else
static bool prefault_start(bk_prefault *pf)
{
    (void)pf;
    return false;
}

static void prefault_stop(bk_prefault *pf)
{
    (void)pf;
}
#endif

/* A thread that reads a large packed stream from its file while it is
 * decoded. The decoder reads the stream from its end down, so the loader
 * reads it in pieces from the end down and publishes how far it has come;
 * the decoder waits only when it catches up (it never does on a sound
 * disk: reading is several times faster than decoding). It flips each
 * piece's data bytes for the decoder (see the top of the file) before it
 * publishes it, and works out the checksum of the data words as it goes.
 * The checksum, which one thread checks before decoding, is checked after
 * decoding, before anything else: the same errors in the same order of
 * precedence (the file's read error, the checksum, the first bad command). Only for a
 * stream lying in a plain file (the descriptor and offset of the input);
 * a read that fails is done again the ordinary way, to report it. */
typedef struct bk_loader {
    int fd;
    uint64_t file_off;  /* where the stream starts in the file */
    uint8_t *src;       /* n bytes */
    size_t n;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more;
    size_t from;        /* src[from, n) is loaded (under lock) */
    bool failed;        /* a read failed or came short (under lock) */
    uint32_t checksum;  /* of the data words, once from is 0 */
    uint32_t xored;     /* xor_words of the data words loaded so far */
} bk_loader;

enum { BK_LOAD_PIECE = 1 << 20 };
/* Pieces keep the stream's 4-byte words whole (loader_run flips and XORs
 * whole words), and the first holds the checksum and length. */
_Static_assert(BK_LOAD_PIECE % 4 == 0 && BK_LOAD_PIECE >= 8, "loader pieces hold whole words");
/* The bytes below the cursor one command may read: a head and a run of 264
 * bytes, and the 8-byte loads around them (the fast loop in decode_core may
 * leave the cursor up to 7 bytes below the loader's mark before the long
 * way takes a command without waiting: still well inside). */
enum { BK_LOAD_MARGIN = 512 };

static void *loader_run(void *arg)
{
    bk_loader *ld = arg;
    size_t from = ld->n;
    bool failed = false;
    while (from > 0 && !failed) {
        size_t low = from > BK_LOAD_PIECE ? from - BK_LOAD_PIECE : 0;
        failed = trowel_pread_full(ld->fd, ld->src + low, from - low, ld->file_off + low, NULL) != 0;
        size_t data_end = ld->n - 8; /* the checksum and length stay as they are */
        if (!failed && low < data_end) {
            size_t top = from < data_end ? from : data_end;
            ld->xored ^= flip_and_xor(ld->src + low, (top - low) / 4);
        }
        if (!failed && low == 0)
            ld->checksum = checksum_of(ld->xored);
        pthread_mutex_lock(&ld->lock);
        ld->from = failed ? ld->from : low;
        ld->failed = failed;
        pthread_cond_broadcast(&ld->more);
        pthread_mutex_unlock(&ld->lock);
        from = low;
    }
    return NULL;
}

/* Waits until the loader holds everything from `need` bytes below cursor
 * `next` up (or all of it); the cursor below which the decoder must wait
 * again in *mark. False when a read failed. */
static bool loader_wait(bk_loader *ld, size_t next, size_t *mark)
{
    size_t need = next > BK_LOAD_MARGIN ? next - BK_LOAD_MARGIN : 0;
    pthread_mutex_lock(&ld->lock);
    while (ld->from > need && !ld->failed)
        pthread_cond_wait(&ld->more, &ld->lock);
    bool ok = !ld->failed;
    *mark = ld->from ? ld->from + BK_LOAD_MARGIN : 0;
    pthread_mutex_unlock(&ld->lock);
    return ok;
}

/* Starts loading the n bytes at abs of r's input into a new buffer on ctx
 * (ld->src), when they lie in a plain file; false (nothing to undo, no
 * error set) otherwise. */
static bool loader_start(trowel_ctx *ctx, trowel_reader *r, size_t n, bk_loader *ld)
{
    memset(ld, 0, sizeof *ld);
    ld->fd = trowel_input_file_at(r->in, trowel_reader_abs(r), &ld->file_off);
    if (ld->fd < 0)
        return false;
    trowel_error before = ctx->last_error;
    ld->src = trowel_mem_alloc(ctx, n);
    if (!ld->src) {
        ctx->last_error = before; /* the ordinary load will say it */
        return false;
    }
    ld->n = ld->from = n;
    advise_huge_pages(ld->src, n, true);
    if (start_locked_thread(&ld->thread, &ld->lock, &ld->more, loader_run, ld))
        return true;
    free_buffer(ctx, ld->src, n, true);
    return false;
}

/* Waits for the loader to end; false when a read failed. */
static bool loader_join(bk_loader *ld)
{
    join_locked_thread(ld->thread, &ld->lock, &ld->more);
    return !ld->failed;
}

/* The decoder. dst NULL: parse only. in_place non-NULL: also tell whether
 * the stream decodes in place, packed bytes at the start of the output
 * buffer: no byte may be written over a data word not yet read. wr
 * non-NULL: publish finished output to it as decoding goes down; dst is
 * then its window (output byte p is AT(p)), dst_len the whole output's
 * length. flipped:
 * the data words' bytes are flipped (see the top of the file), and the
 * XOR of the words before the flip is in `xored` (ld: the loader flips
 * them and checks the sum after). Always inlined, so that each caller's
 * constant dst, in_place and flipped take their tests out of the loops. */
BK_ALWAYS_INLINE trowel_status decode_core(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                           uint64_t base, uint8_t *dst, size_t dst_len,
                                           bool *in_place, bk_writer *wr, bk_loader *ld,
                                           bool flipped, uint32_t xored)
{
    size_t in_mark = 0; /* ld: below this cursor, wait for the loader */
    if (ld && !loader_wait(ld, n, &in_mark)) /* the stream's last words first */
        return TROWEL_ERR_IO;                /* the caller reports the read */
    uint32_t length = 0;
    trowel_status s = trowel_bytekiller_length(ctx, src, n, base, &length);
    if (s != TROWEL_OK)
        return s;
    if (length != dst_len)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base + n - 4,
                           "length field says %lu bytes but %zu are expected",
                           (unsigned long)length, dst_len);
    size_t data_words = n / 4 - 2;
    uint32_t stored = be32(src + n - 8);
    uint32_t sum = ld         ? stored /* checked after */
                   : flipped ? checksum_of(xored)
                             : data_checksum(src, data_words);
    if (sum != stored)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base + n - 8,
                           "checksum mismatch: stored 0x%08lx, the data words give 0x%08lx",
                           (unsigned long)stored, (unsigned long)sum);

    /* The bit register: loaded bits in reading order from bit 63 down;
     * stream bytes [0, next) are not loaded yet. Plain locals (see
     * bk_slow_head). The first word's bits below its marker are read
     * least significant first: as the register wants them, its bytes
     * flipped and in memory order, the marker the lowest bit set. */
    size_t next = 4 * (data_words - 1);
    uint64_t bits = 0;
    unsigned count = 0;
    uint32_t first = 0;
    for (unsigned k = 0; k < 4; k++)
        first |= (uint32_t)stream8(src[next + k], flipped) << 8 * k;
    if (first != 0) {
        unsigned top = 31u - (unsigned)__builtin_ctz(first);
        bits = top ? (uint64_t)first << 32 & ~(UINT64_MAX >> top) : 0;
        count = top;
    }
    const unsigned first_bits = count;
    const uint64_t all_bits = first_bits + 8 * (uint64_t)next;
    if (in_place)
        *in_place = true;
/* Tops the register up to 56..63 bits (it never holds 64). With 8 bytes
 * below `next`, one load with no branch: its whole bytes that fit are
 * taken, and the bits of a byte that fits only in part are the stream's
 * next ones too (a later load ORs the same bits over them), so the
 * register's lower bits are never wrong, only not counted. Near the start
 * of the stream, a byte at a time. BK_LOAD: the load alone, for callers
 * that know 8 bytes are left. */
#define BK_LOAD()                                                                                  \
    do {                                                                                           \
        bits |= stream64(src + next - 8, flipped) >> count;                                        \
        next -= (63 - count) >> 3;                                                                 \
        count |= 56;                                                                               \
    } while (0)
#define BK_REFILL()                                                                                \
    do {                                                                                           \
        if (TROWEL_LIKELY(next >= 8)) {                                                            \
            BK_LOAD();                                                                             \
        } else {                                                                                   \
            while (count <= 55 && next > 0) {                                                      \
                bits |= (uint64_t)stream8(src[--next], flipped) << (56 - count);                   \
                count += 8;                                                                        \
            }                                                                                      \
        }                                                                                          \
    } while (0)
/* Where the current command lies, as the data word a word-at-a-time
 * decoder (one that loads while it holds 32 bits or fewer) would load
 * next: from the bits unread when the command began. */
#define BK_WHERE() (base + 4 * (uint64_t)words_unloaded(head_left))
#define BK_LEFT() ((uint64_t)next * 8 + count)
#define BK_USED() (all_bits - BK_LEFT())
#define BK_CHECK_IN_PLACE(lowest)                                                                  \
    do {                                                                                           \
        if (in_place && (lowest) < 4 * (data_words - words_loaded(BK_USED(), first_bits)))        \
            *in_place = false;                                                                     \
    } while (0)

    size_t pos = dst_len; /* output [pos, dst_len) is written */
    /* Output byte p is AT(p): dst holds output [win_lo, ...), all of it without
     * a writer, else the writer's window (see bk_writer). */
    size_t win_lo = wr ? wr->lo : 0;
#define AT(p) (dst + ((p) - win_lo))
    /* With a writer, once pos is at or below mark: publish pos, or move the
     * window down when pos nears its bottom (never without a writer). */
    size_t mark = wr ? writer_mark(pos, win_lo) : 0;
    while (pos > 0) {
        if (TROWEL_UNLIKELY(pos <= mark)) {
            if (win_lo > 0 && pos <= win_lo + BK_SLIDE_AT)
                win_lo = window_slide(wr, pos, win_lo);
            else
                writer_publish(wr, pos, false, false);
            mark = writer_mark(pos, win_lo);
        }
        if (ld && TROWEL_UNLIKELY(next < in_mark) && !loader_wait(ld, next, &in_mark))
            return TROWEL_ERR_IO;
        if (dst && !in_place) {
            /* The common commands, in a loop of their own while the output
             * and the input are clear of both ends and of the marks above
             * (so it tests two floors a command, not each mark and end): a
             * 0 0 nnn run the register holds, or a copy of up to 32 bytes
             * from at least as many above (so its bytes come from output
             * already final). Either is one 32-byte store ending at pos of
             * 32 bytes read first from off above: a copy's, or for a run
             * those BK_RUN_FROM above with the run over their top 8
             * (output written long ago: a load that straddles recent
             * stores waits for them, and a page first touched by a read
             * would fault twice). The bytes below the command land in
             * output not decoded yet (it is written over later), never
             * below dst (the window's bottom is a mark). Each command is
             * decoded by its shape, with no branch on its kind. The loop
             * stops at a mark (the checks above come first) or at a
             * command it does not take, which goes the long way below, as
             * does every error. */
            size_t pos_floor = mark > 32 ? mark : 32;
            size_t next_floor = ld && in_mark > 8 ? in_mark : 8;
            size_t from = pos;
            bool other = false; /* stopped at a command not taken here */
            while (pos > pos_floor && next >= next_floor) {
                BK_LOAD();
                unsigned len, off;
                const bk_head_shape *h = head_of(bits, &len, &off);
                unsigned total = command_bits[bits >> 59];
                bool fast = (len <= 32) & (total <= count) & (off >= len) & (off <= dst_len - pos);
                if (TROWEL_UNLIKELY(!fast)) {
                    other = true;
                    break;
                }
                uint8_t *d = AT(pos) - 32;
                uint8_t low[16];
                uint64_t lo, hi, keep = (uint64_t)h->literal - 1;
                memcpy(low, d + off, 16);
                memcpy(&lo, d + off + 16, 8);
                memcpy(&hi, d + off + 24, 8);
                hi = (hi & keep) | (le64_bytes(bits << h->used) & ~keep);
                memcpy(d, low, 16);
                memcpy(d + 16, &lo, 8);
                memcpy(d + 24, &hi, 8);
                bits <<= total;
                count -= total;
                pos -= len;
            }
            if (pos != from && !other)
                continue; /* at a mark */
        }
        unsigned len = 0, off = 0;
        bool literal;
        uint64_t run; /* the register from the bit after the head */
        BK_REFILL();
        uint64_t head_left = BK_LEFT(); /* for BK_WHERE */
        if (TROWEL_LIKELY(count >= 23)) {
            /* The longest command head (23 bits) is loaded, so it is
             * decoded straight from the register, by its shape. */
            const bk_head_shape *h = head_of(bits, &len, &off);
            literal = h->literal;
            run = bits << h->used;
            bits <<= h->used;
            count -= h->used;
        } else {
            /* Near the end of the input: field by field, each checked. */
            bk_bits t = {src, next, bits, count, flipped};
            bk_head h = bk_slow_head(&t);
            next = t.next;
            bits = t.bits;
            count = t.count;
            if (!h.ok)
                return bk_exhausted(ctx, base, dst_len - pos, dst_len);
            len = h.len;
            off = h.off;
            literal = h.literal;
            run = bits;
        }
        if (len > pos)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, BK_WHERE(),
                               "a %s of %u bytes runs past the start of the output (%zu bytes "
                               "left to write)",
                               literal ? "literal run" : "copy", len, pos);
        if (literal) {
            if (TROWEL_LIKELY(dst && !in_place && pos - len >= 8 && 8 * len <= count)) {
                /* A short run the register holds (most are): its bytes
                 * are at the register's top in output order, top byte
                 * first, so one 8-byte store writes it; the bytes below the run land in
                 * output not decoded yet (it is written over later),
                 * never below dst. len <= 7, as count <= 63. */
                store_le64(AT(pos) - 8, run);
                bits <<= 8 * len;
                count -= 8 * len;
                pos -= len;
                continue;
            }
            if (TROWEL_LIKELY(dst && !in_place && pos - len >= 8 && next >= len + 16)) {
                /* Longer: up to 7 bytes a step, each stored as above
                 * from the register topped up. The steps
                 * load at most len + 8 bytes, so each finds 8 left. */
                do {
                    BK_LOAD();
                    unsigned take = len < 7 ? len : 7;
                    store_le64(AT(pos) - 8, bits);
                    bits <<= 8 * take;
                    count -= 8 * take;
                    pos -= take;
                    len -= take;
                } while (len > 0);
                continue;
            }
            /* Near either end: as many bytes as the register holds at a
             * time, the input checked. */
            while (len > 0) {
                if (count < 8) {
                    BK_REFILL();
                    if (count < 8)
                        return bk_exhausted(ctx, base, dst_len - pos, dst_len);
                }
                /* As many whole bytes as the register holds, unchecked. */
                unsigned take = count / 8 < len ? count / 8 : len;
                len -= take;
                if (dst && !in_place && take >= 4 && pos >= 8) {
                    /* Four or more at once: the register holds them in
                     * output order, top byte first. The bytes
                     * below the run land in output not decoded yet (it
                     * is written over later), never below dst. */
                    store_le64(AT(pos) - 8, bits);
                    bits = take == 8 ? 0 : bits << 8 * take;
                    count -= 8 * take;
                    pos -= take;
                    continue;
                }
                while (take--) {
                    uint8_t v = (uint8_t)(bits >> 56);
                    bits <<= 8;
                    count -= 8;
                    --pos;
                    BK_CHECK_IN_PLACE(pos);
                    if (dst)
                        *AT(pos) = v;
                }
            }
            continue;
        }
        if (off == 0)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, BK_WHERE(),
                               "copy with offset 0 would read the byte being written");
        if (off > dst_len - pos)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, BK_WHERE(),
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
            uint8_t *d = AT(pos) + len;
            size_t t = len;
            do {
                uint8_t chunk[16];
                d -= 16;
                memcpy(chunk, d + off, 16);
                memcpy(d, chunk, 16);
                t = t > 16 ? t - 16 : 0;
            } while (t > 0);
        } else if (off >= len) {
            memcpy(AT(pos), AT(pos) + off, len);
        } else if (off == 1) {
            memset(AT(pos), AT(pos)[len], len); /* a run of one byte */
        } else {
            /* Overlapping: the copy repeats with period off, top down. */
            uint8_t *d = AT(pos);
            for (size_t i = len; i-- > 0;)
                d[i] = d[i + off];
        }
    }
    uint64_t left = BK_LEFT();
    if (left >= 32)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base,
                           "%llu whole data words were never read: the stream is longer than "
                           "its commands",
                           (unsigned long long)(left / 32));
    return TROWEL_OK;
#undef BK_REFILL
#undef AT
#undef BK_WHERE
#undef BK_LEFT
#undef BK_USED
#undef BK_CHECK_IN_PLACE
}

trowel_status trowel_bytekiller_decode_mem(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                           uint64_t base, uint8_t *dst, size_t dst_len)
{
    return decode_core(ctx, src, n, base, dst, dst_len, NULL, NULL, NULL, false, 0);
}

bool trowel_bytekiller_in_place_safe(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                     size_t out_len)
{
    bool safe = false;
    trowel_error saved = ctx->last_error;
    if (decode_core(ctx, src, n, 0, NULL, out_len, &safe, NULL, NULL, false, 0) != TROWEL_OK)
        safe = false;
    ctx->last_error = saved;
    return safe;
}

/* The buffer of out when it is a memory sink with room for length bytes
 * and nothing written yet, else NULL. The decoder then fills it in place
 * and sets its length once the whole output is good. */
static uint8_t *memory_sink_room(trowel_sink *out, size_t length)
{
    return trowel_sink_room(out, length);
}

/* The most bytes a stream of n bytes can produce: 256 bytes per 23 bits. */
static uint64_t bk_max_output(uint64_t n)
{
    return n / 23 * 8 * BK_MAX_COPY + 8 * BK_MAX_COPY;
}

/* After decoding from a loader (status s): what one thread would have
 * reported, by its order of checks: the read (done again the ordinary way
 * to say what failed), then the checksum, then the decoding's own. */
static trowel_status loaded_outcome(trowel_ctx *ctx, trowel_reader *rest, bk_loader *ld,
                                    uint64_t base, trowel_status s)
{
    if (!loader_join(ld)) {
        uint8_t *again;
        size_t size;
        trowel_status t = trowel_reader_load(rest, &again, &size);
        if (t != TROWEL_OK)
            return t;
        trowel_mem_free(ctx, again);
        return trowel_fail(ctx, TROWEL_ERR_IO, base,
                           "the packed stream changed while it was read (run again)");
    }
    uint32_t stored = be32(ld->src + ld->n - 8);
    if (ld->checksum != stored)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, base + ld->n - 8,
                           "checksum mismatch: stored 0x%08lx, the data words give 0x%08lx",
                           (unsigned long)stored, (unsigned long)ld->checksum);
    return s;
}

/* A stream the decoder loaded and flipped (ld: loads and flips while it
 * decodes; else the XOR of its words in xored) decoded into dst. Two calls,
 * so that the one without a loader has its tests compiled out (decode_core
 * is inlined for each constant). */
BK_ALWAYS_INLINE trowel_status decode_owned(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                            uint64_t base, uint8_t *dst, size_t length,
                                            bk_writer *wr, bk_loader *ld, uint32_t xored)
{
    if (ld)
        return decode_core(ctx, src, n, base, dst, length, NULL, wr, ld, true, 0);
    return decode_core(ctx, src, n, base, dst, length, NULL, wr, NULL, true, xored);
}

/* decode_owned built for any x86-64, and (where the compiler can) built
 * for processors with BMI2, whose shifts by a count in any register are
 * one instruction instead of three: the decoder shifts its register by a
 * different count several times a command, and decodes the benchmark
 * entry about 6 % faster so. Which one runs is the processor's affair
 * (decode_owned_here); the results are the same. */
static trowel_status decode_owned_any(trowel_ctx *ctx, const uint8_t *src, size_t n, uint64_t base,
                                      uint8_t *dst, size_t length, bk_writer *wr, bk_loader *ld,
                                      uint32_t xored)
{
    return decode_owned(ctx, src, n, base, dst, length, wr, ld, xored);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define BK_BMI2_BUILD 1
__attribute__((target("bmi2"))) static trowel_status
decode_owned_bmi2(trowel_ctx *ctx, const uint8_t *src, size_t n, uint64_t base, uint8_t *dst,
                  size_t length, bk_writer *wr, bk_loader *ld, uint32_t xored)
{
    return decode_owned(ctx, src, n, base, dst, length, wr, ld, xored);
}
#endif

/* The build of decode_owned for this processor (portable: the one for any). */
static trowel_status decode_owned_here(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                       uint64_t base, uint8_t *dst, size_t length, bk_writer *wr,
                                       bk_loader *ld, uint32_t xored, bool portable)
{
#if defined(BK_BMI2_BUILD)
    if (!portable && __builtin_cpu_supports("bmi2"))
        return decode_owned_bmi2(ctx, src, n, base, dst, length, wr, ld, xored);
#else
    (void)portable;
#endif
    return decode_owned_any(ctx, src, n, base, dst, length, wr, ld, xored);
}

/* trowel_bytekiller_decode; portable: with the decoder built for any
 * processor of the architecture (see decode_owned_here). */
BK_ALWAYS_INLINE trowel_status decode_reader(trowel_ctx *ctx, trowel_reader *r,
                                             uint64_t expected_size, trowel_sink *out,
                                             bool portable)
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
    size_t got = (size_t)n;
    bk_loader ld;
    /* A large output gets helper threads, when a second one is allowed:
     * below, the loader, the writer and the page mapper. */
    bool helped = length >= BK_WRITER_MIN && trowel_threads_for(ctx, 2) > 1;
    bool loading = helped && loader_start(ctx, &rest, (size_t)n, &ld);
    uint32_t xored = 0; /* without a loader: the data words' XOR, flipped here */
    if (loading)
        src = ld.src;
    else if ((s = trowel_reader_load(&rest, &src, &got)) != TROWEL_OK)
        return s;
    else
        xored = flip_and_xor(src, got / 4 - 2);
    /* A large output going to a file is written by a second thread while
     * it is decoded (writing it after would take about as long again), and
     * then only a window of it is in memory (see bk_writer). The memory
     * check above stays the whole output's, so that the outcome is the
     * same on one thread. */
    bool windowed = helped && !direct && trowel_sink_takes_positional(out);
    size_t room = windowed && length > BK_WINDOW ? BK_WINDOW : length;
    uint8_t *dst = direct ? direct : trowel_mem_alloc(ctx, room ? room : 1);
    bk_writer wr = {.out = out, .win = dst, .win_len = room, .length = length,
                    .lo = length - room, .ready = length, .written = length};
    bool writing = dst && windowed && writer_start(&wr);
    if (dst && windowed && !writing && room < length) { /* no thread: the whole output */
        trowel_mem_free(ctx, dst);
        dst = trowel_mem_alloc(ctx, length);
        room = length;
    }
    if (!dst) {
        if (loading)
            (void)loader_join(&ld);
        free_buffer(ctx, src, got, loading);
        return ctx->last_error.status;
    }
    /* The window asks for huge pages (and takes it back). A whole output
     * does not: written once and freed, 68 MB of fresh huge pages gained
     * nothing here and made one run in three twice as slow (a virtual
     * machine that hands freed memory back to its host has to fetch it
     * again), see docs/PERFORMANCE.md. */
    if (writing)
        advise_huge_pages(dst, room, true);
    bk_prefault pf = {.dst = dst, .length = room};
    bool prefaulting = helped && prefault_start(&pf);
    s = decode_owned_here(ctx, src, got, base, dst, length, writing ? &wr : NULL,
                          loading ? &ld : NULL, xored, portable);
    if (loading)
        s = loaded_outcome(ctx, &rest, &ld, base, s);
    if (prefaulting)
        prefault_stop(&pf);
    free_buffer(ctx, src, got, loading);
    trowel_progress(ctx, length, length);
    if (writing) {
        writer_stop(&wr, s == TROWEL_OK);
        if (s == TROWEL_OK)
            s = trowel_sink_positional_done(out, length, wr.err);
    } else if (direct) {
        if (s == TROWEL_OK)
            trowel_sink_filled(out, length);
        return s;
    } else if (s == TROWEL_OK && length) {
        s = trowel_sink_write(out, dst, length);
    }
    free_buffer(ctx, dst, room, writing);
    return s;
}

trowel_status trowel_bytekiller_decode(trowel_ctx *ctx, trowel_reader *r, uint64_t expected_size,
                                       trowel_sink *out)
{
    return decode_reader(ctx, r, expected_size, out, false);
}

trowel_status trowel_bytekiller_decode_portable(trowel_ctx *ctx, trowel_reader *r,
                                                uint64_t expected_size, trowel_sink *out)
{
    return decode_reader(ctx, r, expected_size, out, true);
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
