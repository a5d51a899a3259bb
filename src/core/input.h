/* Internal side of trowel_input: used by the bounded reader only. */
#ifndef TROWEL_INPUT_H
#define TROWEL_INPUT_H

#include "core.h"

struct trowel_input {
    trowel_ctx *ctx;
    char *name;
    bool name_is_label; /* a stream's name says what it is ("(standard
                         * input)"), it is no file's name */
    uint64_t size;
    const uint8_t *mem; /* memory input, or NULL */
    int fd;             /* file input, or -1 */
    uint8_t *cache;     /* file input: bytes [cache_off, cache_off + cache_len) */
    uint64_t cache_off;
    size_t cache_len;
    unsigned refills;   /* file input: times the cache window has moved */
    unsigned detecting; /* bids are reading (nested brackets count): none of
                         * it is a pattern */
    uint8_t *window;    /* file input read whole: the old window, kept until
                         * close so that no span handed out dangles */
    trowel_input *under; /* XOR input: the input it reads (not owned), or NULL */
    uint8_t xor_key;     /* XOR input: every byte of under XORed with this */
    trowel_input *parent; /* a window: bytes [parent_base, parent_base + size)
                           * of parent, which must outlive it */
    uint64_t parent_base;
};

/* Why a file of this st_mode (not a regular file) is refused as an input:
 * "is a named pipe (FIFO), not a regular file" and the like. */
const char *trowel_input_kind_refusal(unsigned mode);

/* An input over [off, off + len) of parent (checked against its size), for
 * an entry stored as is inside an archive: reads go to the parent. */
trowel_status trowel_input_open_window(trowel_ctx *ctx, trowel_input *parent, uint64_t off,
                                       uint64_t len, const char *name, trowel_input **out);
/* A virtual input that reads under's bytes XORed with key as it goes (no
 * copy of the whole; a 256 KiB window, or the whole when small and read
 * back and forth). under must outlive it. Name and size are under's. */
trowel_status trowel_input_open_xor(trowel_ctx *ctx, trowel_input *under, uint8_t key,
                                    trowel_input **out);
/* A memory input that takes over data (trowel_mem_alloc'ed on ctx) and
 * frees it at close; on failure data is freed too. */
trowel_status trowel_input_adopt_memory(trowel_ctx *ctx, uint8_t *data, size_t size,
                                        const char *name, trowel_input **out);

/* Brackets format detection: bids look wherever they like (the header,
 * the end, a scan), and none of that may make a small file be read whole.
 * Only how the chosen format then reads decides whether that pays;
 * trowel_input_end_detection forgets the bids' reads. Both act on every
 * input the reads pass through: a window's parent, an XOR input's source. */
void trowel_input_begin_detection(trowel_input *in);
void trowel_input_end_detection(trowel_input *in);

/* The descriptor of the plain file holding byte off of in, and that byte's
 * offset in it (*file_off); -1 when in's bytes are not a file's as they
 * stand (memory, read whole, XOR). Windows resolve to their parent's file. */
int trowel_input_file_at(const trowel_input *in, uint64_t off, uint64_t *file_off);

/* Copies n bytes at off (off + n <= size, checked by the caller). */
trowel_status trowel_input_copy(trowel_input *in, uint64_t off, void *dst, size_t n);
/* Up to want contiguous bytes at off (off <= size); *got may be less than
 * want only at the end of the input or past the cache size. */
trowel_status trowel_input_span(trowel_input *in, uint64_t off, size_t want, const uint8_t **out,
                                size_t *got);

#endif
