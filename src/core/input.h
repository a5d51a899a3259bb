/* Internal side of trowel_input: used by the bounded reader only.
 *
 * An input is the shared part below (name, size, the cache window, the
 * detection brackets) plus one kind: a small table of functions and the
 * kind's own state (impl, allocated with the input). The kinds, one file
 * each: input_file.c (a file read with pread), input_memory.c (a caller's
 * memory, adopted memory, a stream read whole), input_window.c (a part of
 * another input), input_xor.c (another input XORed with a key),
 * input_callbacks.c (a caller's functions, trowel.h). input.c
 * serves every read: from memory when all bytes are there, through the
 * kind's span_at when it has one (windows), else through the cache window
 * that read_at fills. */
#ifndef TROWEL_INPUT_H
#define TROWEL_INPUT_H

#include "core.h"

/* The functions of one kind of input. */
typedef struct trowel_input_kind {
    /* Copies exactly n bytes at off into dst (off + n <= in->size, checked
     * by the caller); a failure sets the context's error. Required. */
    trowel_status (*read_at)(trowel_input *in, uint64_t off, void *dst, size_t n);
    /* Optional: up to want contiguous bytes at off (off + want <= size)
     * served by the kind itself, *got < want only past the span size. A
     * kind with span_at gets no cache window: it reads through another
     * input that has one (a window through its parent). */
    trowel_status (*span_at)(trowel_input *in, uint64_t off, size_t want, const uint8_t **out,
                             size_t *got);
    /* Optional: the descriptor of the plain file holding byte off, and
     * that byte's offset in it; -1 when there is none. */
    int (*file_at)(const trowel_input *in, uint64_t off, uint64_t *file_off);
    /* Optional: releases what impl holds (a descriptor); impl's memory
     * goes with the input. */
    void (*close)(trowel_input *in);
} trowel_input_kind;

struct trowel_input {
    trowel_ctx *ctx;
    const trowel_input_kind *kind;
    void *impl;            /* the kind's own state, allocated with the input */
    trowel_input *source;  /* the input this one reads (a window's parent, an
                            * XOR input's source), which must outlive it; NULL */
    char *name;
    bool name_is_label;    /* a stream's name says what it is ("(standard
                            * input)"), it is no file's name */
    uint64_t size;
    const uint8_t *mem;    /* every byte in memory (a memory or stream input,
                            * a file once read whole): reads are served from
                            * here; else NULL */
    uint8_t *owned;        /* memory the input frees at close, or NULL */
    uint8_t *cache;        /* kinds without span_at: bytes [cache_off,
                            * cache_off + cache_len) of the input; kept until
                            * close even once read whole, so that no span
                            * handed out dangles */
    uint64_t cache_off;
    size_t cache_len;
    unsigned refills;      /* times the cache window has moved */
    unsigned detecting;    /* bids are reading (nested brackets count): none
                            * of it is a pattern */
};

/* Reads exactly n bytes of the file fd at off into buf, EINTR retried: 0;
 * an errno value when a read fails; -1 when the file ends first. *reached
 * (NULL: not wanted) says where reading stopped. Every pread loop of the
 * library is this one. */
int trowel_pread_full(int fd, void *buf, size_t n, uint64_t off, uint64_t *reached);

/* data (size bytes, not copied, outliving the input) as bytes [origin,
 * origin + size) of an input: offsets, and so every error, are those of
 * the file the bytes were loaded from. Nothing lies below origin. */
trowel_status trowel_input_open_memory_at(trowel_ctx *ctx, const void *data, size_t size,
                                          uint64_t origin, const char *name, trowel_input **out);

/* A new input of kind with impl_size zeroed bytes of state (in->impl),
 * named name ("(memory)" when NULL), of size bytes; NULL (the error set)
 * when memory runs out. The constructor fills impl, then hands the input
 * out directly or through trowel_input_give_cache. */
trowel_input *trowel_input_new(trowel_ctx *ctx, const trowel_input_kind *kind, size_t impl_size,
                               const char *name, uint64_t size);
/* Gives a new input its cache window (what: the buffer, for the memory
 * limit's message) and hands it out; on failure the input is closed. */
trowel_status trowel_input_give_cache(trowel_input *in, const char *what, trowel_input **out);

/* Why a file of this st_mode (not a regular file) is refused as an input:
 * "is a named pipe (FIFO), not a regular file" and the like. */
const char *trowel_input_kind_refusal(unsigned mode);
/* in is a file opened by path (trowel_input_open_file), not memory, a
 * stream, a window or a filter's view. */
bool trowel_input_is_file(const trowel_input *in);

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
