/*
 * Volition packfiles (VPP): what the reader (vpp.c) and the writer
 * (vpp_write.c) share, and the writer's internal entry point, which other
 * Volition code (the ASM updater) calls to rebuild a packfile.
 */
#ifndef TROWEL_VOLITION_VPP_H
#define TROWEL_VOLITION_VPP_H

#include "core/module.h"

#define VPP_MAGIC 0x51890ACEu
#define VPP_SECTOR 2048u
#define VPP_FLAG_COMPRESSED 1u
#define VPP_FLAG_CONDENSED 2u
#define VPP_V1_NAME 60u          /* v1: char name[60], NUL included */
#define VPP_V1_MAX_FILES 65536u  /* v1: the most files Red Faction reads */

/* Where padding lies: after the header's fields, the directory, the names,
 * the extensions (v4), or an entry's stored bytes. */
typedef enum vpp_pad_section {
    VPP_PAD_HEADER,
    VPP_PAD_DIRECTORY,
    VPP_PAD_NAMES,
    VPP_PAD_EXTENSIONS,
    VPP_PAD_ENTRY
} vpp_pad_section;

/* Non-zero padding bytes kept from an archive (its manifest) for an exact
 * rebuild: len bytes at offset `at` of a padding span (old buffer contents
 * that Volition's packer wrote out; zeros everywhere else). */
typedef struct vpp_pad {
    vpp_pad_section section;
    const char *entry; /* VPP_PAD_ENTRY: the entry the padding follows */
    uint64_t at;
    uint8_t *bytes;
    size_t len;
} vpp_pad;

/* How a packfile is laid out when written. */
typedef struct vpp_layout {
    unsigned version;   /* 1, 3, 4, 6, 10 or 17 */
    bool compressed;    /* flags bit 0 */
    bool condensed;     /* flags bit 1 */
    unsigned alignment; /* condensed data: 1, 16, 64 (v10/v17: per entry) */
    int level;          /* zlib level (1 fastest .. 9 best) */
    bool finish;        /* compressed+condensed: finish the stream (Adler-32);
                         * the game's own never are */
    const char *short_name; /* v3/v4/v6 header fields ("" when none) */
    const char *path;
    uint64_t timestamp; /* v17 */
    bool big_endian;    /* not written yet: refused */
    /* v3/v4/v6: the 20 bytes after the counts (0x16C, v4 0x170), where the
     * game leaves its runtime pointers; zero unless a manifest kept them. */
    uint8_t runtime[20];
    /* Padding bytes to write instead of zeros (from a manifest). */
    const vpp_pad *pads;
    size_t pad_count;
} vpp_layout;

/* One file of a new packfile: its stored name and size, and where its
 * bytes are: a file (path, opened only while it is read, so that any
 * number of sources can be given) or a reader (the caller's input, kept
 * open). Optionally the same bytes already encoded as the layout stores a
 * file on its own (one finished zlib stream for v3/v4/v6/v10
 * compressed-only, one LZ4 frame for v17), copied as they are: an
 * untouched entry of a base archive. */
typedef struct vpp_item {
    const char *name;
    uint64_t size;
    const char *path;   /* NULL: data */
    trowel_reader data;
    bool has_stored;
    trowel_reader stored;
} vpp_item;

/* What vpp_write wrote, for callers that record it elsewhere (an ASM
 * container: base offset = data_start, total read size = compressed_size
 * when compressed, else data_size). */
typedef struct vpp_written {
    uint64_t data_start;      /* offset of the data in the file */
    uint64_t data_size;       /* decoded data, padding included but the last */
    uint64_t compressed_size; /* data as stored (= data_size when not compressed) */
    uint64_t file_size;
    uint64_t *packed;         /* caller's array of count, or NULL: each entry's
                               * stored bytes (solid: the stream's growth) */
} vpp_written;

/* Writes a packfile of the given layout holding items in order to out
 * (the caller finishes or discards out); fills *written when not NULL.
 * Entry bytes are read twice when compressed (once to size them for the
 * directory, once to write them), so memory stays flat whatever the sizes.
 * Bad layouts or names are TROWEL_ERR_USAGE. */
trowel_status vpp_write(trowel_ctx *ctx, const vpp_layout *layout, const vpp_item *items,
                        size_t count, trowel_sink *out, vpp_written *written);

/* The layout of an open packfile (version, mode, alignment, zlib level,
 * finished stream, names, runtime bytes), to rebuild it the same way. The
 * strings point into the archive: valid while it is open. */
void vpp_layout_of(trowel_archive *a, vpp_layout *layout);

/* create -O asm=: updates the job's companion ASM (asm_update.c) from what
 * vpp_write wrote to out (the container: out's file name). */
trowel_status vol_asm_after_vpp_write(trowel_ctx *ctx, const trowel_create_job *job,
                                      const trowel_sink *out, const vpp_item *items, size_t n,
                                      const vpp_written *w);

/* Volition's name hash (v3): rotate left 6, XOR each byte, A-Z lowered. */
uint32_t vpp_name_hash(const char *name);
/* The v10/v17 header checksum: CRC-32 (reflected 0xEDB88320), initial 0,
 * no final XOR. */
uint32_t vpp_header_crc(const uint8_t *data, size_t n);

/* A padding span of an open archive: [start, end) of the file, after
 * `section` (VPP_PAD_ENTRY: after entry `entry`'s stored bytes). */
typedef struct vpp_span {
    vpp_pad_section section;
    size_t entry;
    uint64_t start, end;
} vpp_span;

/* The padding spans of an open archive, in file order, where its writer
 * puts padding (stored bytes only: not inside a compressed stream); out
 * holds entry_count + 4. Returns how many. */
size_t vpp_padding_spans(trowel_archive *a, vpp_span *out);

/* extract --manifest: records a's non-zero padding as "padding":
 * [{"section" or "entry", "at", "hex"}] (nothing when all is zero). */
trowel_status vpp_manifest_padding(trowel_archive *a, struct json_object *m);
/* create --manifest: L->pads from the manifest's "padding" (*owned: what
 * to give vpp_pads_free). */
trowel_status vpp_pads_from_manifest(trowel_ctx *ctx, struct json_object *m, vpp_layout *L,
                                     vpp_pad **owned);
void vpp_pads_free(trowel_ctx *ctx, vpp_pad *pads, size_t count);

/* vpp_write's defaults for a version: the modes the game writes. */
vpp_layout vpp_layout_default(unsigned version);

#endif
