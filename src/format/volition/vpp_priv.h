/*
 * Volition packfiles: the reader's state, shared by the files that read
 * (vpp.c), verify (vpp_verify.c) and keep padding (vpp_pad.c). Not for
 * other code: vpp.h is the family's interface.
 */
#ifndef TROWEL_VOLITION_VPP_PRIV_H
#define TROWEL_VOLITION_VPP_PRIV_H

#include "vpp.h"

#include "core/stream.h"

#define V10_HEADER 0x28u
#define V17_HEADER 0x78u

enum vpp_method { M_STORED, M_ZLIB, M_SOLID, M_LZ4, M_CONSOLE /* zlib or PS3 chunks */ };

typedef struct vpp_header {
    uint32_t version;
    bool be; /* big-endian (console) */
    uint32_t flags, num_files, num_paths, checksum;
    uint32_t dir_size, names_size, ext_size;
    uint64_t file_size, data_size, compressed_size, timestamp;
    uint64_t dir_start, names_start, ext_start, data_start;
    unsigned entry_size;
    char short_name[66];
    char path[257];
} vpp_header;

typedef struct vpp_entry {
    uint64_t pos;    /* absolute offset; solid: offset in the decoded stream */
    uint64_t packed; /* bytes as stored */
    uint64_t start;  /* the stored start, for verify */
    uint64_t placed; /* where start should point (data-relative), for verify */
    uint32_t hash;
    uint8_t method;
    bool cut; /* its stored bytes pass the end of the file */
} vpp_entry;

/* verify's own pass over the solid stream (vpp_verify.c). */
typedef struct vpp_solid_check vpp_solid_check;

typedef struct vpp_state {
    vpp_header h;
    unsigned alignment; /* v3/v4/v6 condensed modes */
    int level;          /* zlib level the data was written with (0: unknown) */
    vpp_entry *ent;
    trowel_codec_stream *solid; /* both: the cursor, opened on first read */
    vpp_solid_check *check;     /* verify's pass over the solid stream */
} vpp_state;

static inline uint64_t vpp_align_up(uint64_t v, uint64_t a)
{
    return a <= 1 ? v : (v + a - 1) / a * a;
}

static inline bool vpp_solid_mode(const vpp_header *h)
{
    return (h->flags & 3) == 3;
}

/* n bytes at off of the input, when the input holds them. */
bool vpp_read_at(trowel_archive *a, uint64_t off, void *dst, size_t n);
/* Where the header's file size is (v1 and v10 at 0x0C, v17 at 0x20). */
uint64_t vpp_file_size_offset(const vpp_header *h);
/* The solid stream's bytes: from the data start to the header's compressed
 * size (when it is smaller than the rest of the file and not 0xFFFFFFFF). */
trowel_status vpp_solid_window(trowel_archive *a, const vpp_state *st, trowel_reader *stream);
/* Opens st->solid, the read cursor over the solid stream. */
trowel_status vpp_open_solid(trowel_archive *a, const vpp_state *st, trowel_codec_stream **out);
/* The codec of the solid stream (zlib; v17 LZ4). */
const trowel_stream_codec *vpp_solid_codec(const vpp_state *st);

/* trowel_entry_reader's cursor over entry index (the format's
 * entry_cursor): NULL for stored, cut and PS3-chunked entries. */
trowel_status vpp_entry_cursor(trowel_archive *a, size_t index, trowel_codec_stream **cursor,
                               uint64_t *start, bool *whole);

/* vpp_verify.c */
trowel_status vpp_verify(trowel_archive *a);
trowel_status vpp_verify_entry(trowel_archive *a, size_t index);
void vpp_verify_close(trowel_archive *a, vpp_state *st);

#endif
