/*
 * The bounded reader: the only code in trowel that touches raw input bytes.
 *
 * A reader is a window [base, base + size) over an input, with a cursor.
 * Every read is checked against the window; a read that would cross its end
 * fails with TROWEL_ERR_TRUNCATED and an error naming the absolute offset.
 * Sub-readers narrow the window (a section, an entry), so a parser can never
 * wander into bytes that belong to something else.
 *
 * Codecs that must go fast borrow contiguous spans (trowel_reader_borrow):
 * a pointer and an explicit length, valid until the next call on the reader.
 */
#ifndef TROWEL_READER_H
#define TROWEL_READER_H

#include "core.h"

typedef struct trowel_reader {
    trowel_ctx *ctx;
    trowel_input *in;
    uint64_t base; /* absolute offset of the window in the input */
    uint64_t size; /* window length */
    uint64_t pos;  /* cursor, relative to base */
} trowel_reader;

/* The most bytes trowel_reader_peek and trowel_reader_borrow give at once. */
#define TROWEL_READER_SPAN_MAX ((size_t)1 << 16)

void trowel_reader_init(trowel_reader *r, trowel_ctx *ctx, trowel_input *in);
/* A reader over [off, off + len) of r's window (relative offsets). */
trowel_status trowel_reader_sub(const trowel_reader *r, uint64_t off, uint64_t len,
                                trowel_reader *out);
/* The rest of r's window, from its cursor on. */
trowel_status trowel_reader_rest(const trowel_reader *r, trowel_reader *out);

static inline uint64_t trowel_reader_tell(const trowel_reader *r) { return r->pos; }
static inline uint64_t trowel_reader_size(const trowel_reader *r) { return r->size; }
static inline uint64_t trowel_reader_remaining(const trowel_reader *r) { return r->size - r->pos; }
static inline uint64_t trowel_reader_abs(const trowel_reader *r) { return r->base + r->pos; }

trowel_status trowel_reader_seek(trowel_reader *r, uint64_t pos);
trowel_status trowel_reader_skip(trowel_reader *r, uint64_t n);

trowel_status trowel_read_bytes(trowel_reader *r, void *dst, size_t n);
trowel_status trowel_read_u8(trowel_reader *r, uint8_t *v);
trowel_status trowel_read_u16le(trowel_reader *r, uint16_t *v);
trowel_status trowel_read_u16be(trowel_reader *r, uint16_t *v);
trowel_status trowel_read_u32le(trowel_reader *r, uint32_t *v);
trowel_status trowel_read_u32be(trowel_reader *r, uint32_t *v);
trowel_status trowel_read_u64le(trowel_reader *r, uint64_t *v);
trowel_status trowel_read_i32le(trowel_reader *r, int32_t *v);
trowel_status trowel_read_f32le(trowel_reader *r, float *v);

/* A string in a fixed field of field_len bytes, ending at the first NUL or
 * the field's end; refused (CORRUPT) if it does not fit in cap-1 bytes. */
trowel_status trowel_read_fixed_string(trowel_reader *r, size_t field_len, char *dst, size_t cap);
/* A NUL-terminated string of at most cap-1 bytes; the NUL is consumed. */
trowel_status trowel_read_cstring(trowel_reader *r, char *dst, size_t cap);

/* n (<= TROWEL_READER_SPAN_MAX) bytes at the cursor without moving it. */
trowel_status trowel_reader_peek(trowel_reader *r, size_t n, const uint8_t **out);
/* Up to max (>= 1) contiguous bytes at the cursor; the cursor moves past
 * them. At the window's end *got is 0 and the status is TROWEL_OK. */
trowel_status trowel_reader_borrow(trowel_reader *r, size_t max, const uint8_t **out, size_t *got);

/* Writes the rest of r's window to out and moves the cursor to its end.
 * Stored entries of every format come out this way: a large run of a
 * plain file into a file goes inside the kernel (splice or copy_file_range,
 * no trip through user memory), the rest in borrowed spans. */
trowel_status trowel_reader_copy_to(trowel_reader *r, trowel_sink *out);

/* Loads the whole window into memory (within the memory limit). */
trowel_status trowel_reader_load(trowel_reader *r, uint8_t **out, size_t *size);

#endif
