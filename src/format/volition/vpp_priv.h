/*
 * Volition packfiles: the reader's state, shared by the files that read
 * (vpp.c, vpp_data.c), verify (vpp_verify.c), keep padding (vpp_pad.c)
 * and rebuild from a base (vpp_base.c). Not for other code: vpp.h is the
 * family's interface.
 */
#ifndef TROWEL_VOLITION_VPP_PRIV_H
#define TROWEL_VOLITION_VPP_PRIV_H

#include "vpp.h"

#include "core/spill.h"
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

/* ---- vpp_data.c: where an open packfile's bytes are read from */

/* The packfile's size in bytes (its input's). */
uint64_t vpp_file_size(trowel_archive *a);
/* n bytes at off of the input, when the input holds them. */
bool vpp_read_at(trowel_archive *a, uint64_t off, void *dst, size_t n);
/* Where the header's file size is (v1 and v10 at 0x0C, v17 at 0x20). */
uint64_t vpp_file_size_offset(const vpp_header *h);
/* The solid stream's bytes: from the data start to the header's compressed
 * size (when it is smaller than the rest of the file and not 0xFFFFFFFF). */
trowel_status vpp_solid_window(trowel_archive *a, const vpp_state *st, trowel_reader *stream);
/* Opens a read cursor over the solid stream, from its start. */
trowel_status vpp_open_solid(trowel_archive *a, const vpp_state *st, trowel_codec_stream **out);
/* The codec of the solid stream (zlib; v17 LZ4). */
const trowel_stream_codec *vpp_solid_codec(const vpp_state *st);
/* Whether a console entry's bytes start with a zlib header (X360) rather
 * than a PS3 chunk. */
bool vpp_looks_like_zlib(trowel_reader *span);
/* trowel_entry_reader's cursor over entry index (the format's
 * entry_cursor): NULL for stored, cut and PS3-chunked entries. */
trowel_status vpp_entry_cursor(trowel_archive *a, size_t index, trowel_codec_stream **cursor,
                               uint64_t *start, bool *whole);
/* Whether the solid stream ends at a sync flush (the game's unfinished
 * streams) rather than with its checksum (peers' repacks). */
bool vpp_stream_unfinished(trowel_archive *a, const vpp_header *h);

/* ---- vpp_base.c: create -O base= and -O delete= */

/* Whether a delete= option names entry `name`. */
bool vpp_deleted(const trowel_create_params *p, const char *name);
/* A source's stored name under layout L: its last component before v17. */
const char *vpp_stored_name(const vpp_layout *L, const char *name);
/* Whether the base has an entry of that name. */
bool vpp_base_has(const trowel_archive *base, const char *name);
/* The items of the base archive, in its order (kept, replaced in place by
 * a source of the same name, or left out by delete=), into items from
 * index *n on; the decoded ones are read from *spill, which the caller
 * closes after writing. */
trowel_status vpp_base_items(trowel_ctx *ctx, const trowel_create_params *p, trowel_archive *base,
                             const vpp_layout *L, vpp_item *items, size_t *n,
                             trowel_spill **spill);
/* Every delete= names an entry of the base, and there is a base. */
trowel_status vpp_check_deletions(trowel_ctx *ctx, const trowel_create_params *p,
                                  const trowel_archive *base);
/* L's padding: the base's non-zero padding, except after the entries that
 * sources replace; *held owns what the pads point into. */
trowel_status vpp_padding_of_base(trowel_ctx *ctx, const trowel_create_params *p,
                                  trowel_archive *base, vpp_layout *L, struct json_object **held,
                                  vpp_pad **pads);

/* vpp_verify.c */
trowel_status vpp_verify(trowel_archive *a);
trowel_status vpp_verify_entry(trowel_archive *a, size_t index);
void vpp_verify_close(trowel_archive *a, vpp_state *st);

/* vpp_create.c: create's option rows and entry point, for the format table. */
extern const trowel_option_info vpp_options[];
trowel_status vpp_create(trowel_ctx *ctx, const trowel_create_params *p, struct json_object *m,
                         trowel_sink *out);

#endif
