/*
 * Volition asset-assembler files (.asm_pc): the in-memory model shared by
 * the `asm` format (asm.c), its JSON form (asm_json.c) and the update after
 * a `.str2_pc` is rebuilt (asm_update.c). Internal; not installed.
 *
 * Every field of the file is kept as stored, including the size list of a
 * container separately from its primitives' own sizes, so that writing a
 * model read from a file gives the same bytes back.
 */
#ifndef TROWEL_VOLITION_ASM_H
#define TROWEL_VOLITION_ASM_H

#include "core/reader.h"

struct trowel_json_writer;

#define VOL_ASM_MAGIC 0xBEEFFEEDu
#define VOL_ASM_FLAG_SIZE_LIST 0x80u /* v5: the container stores a size list */
#define VOL_ASM_PRIM_SPLIT 0x04u     /* primitive split into CPU and GPU files */

typedef struct vol_asm_remap {
    char *name;
    uint8_t index;
} vol_asm_remap;

typedef struct vol_asm_primitive {
    char *name;
    uint8_t type, allocator, flags, split_ext;
    uint32_t cpu_size, gpu_size;
    uint8_t alloc_group; /* v11/v12 only */
} vol_asm_primitive;

typedef struct vol_asm_container {
    char *name;
    uint8_t type;
    uint16_t flags;
    uint32_t base_offset;  /* where the str2's data starts */
    uint8_t compression;   /* v12 only */
    char *stub_parent;     /* v11/v12 only */
    uint8_t *aux;          /* v11/v12 only */
    uint32_t aux_size;
    uint32_t read_size;    /* the str2's total compressed read size */
    uint32_t *sizes;       /* the size list as stored */
    uint32_t size_count;
    vol_asm_primitive *prims;
    uint16_t prim_count;
    /* Read from a file: the primitives' names, one after another, in one
     * allocation (a name inside it is not freed on its own); NULL when
     * each name has its own (the JSON reader). */
    char *name_block;
    size_t name_block_size;
} vol_asm_container;

enum { VOL_ASM_ALLOCATORS, VOL_ASM_PRIMITIVE_TYPES, VOL_ASM_CONTAINER_TYPES, VOL_ASM_REMAPS };

typedef struct vol_asm {
    uint16_t version; /* 5, 11 or 12 */
    vol_asm_remap *remaps[VOL_ASM_REMAPS]; /* v11/v12 */
    uint32_t remap_count[VOL_ASM_REMAPS];
    vol_asm_container *containers;
    uint16_t container_count;
    /* Set only by vol_asm_read_damaged: the file could not be read whole.
     * container_count then counts the containers before the fault (of the
     * declared_count the header gives); damage says what and where. */
    bool damaged;
    uint16_t declared_count;
    trowel_error damage;
    /* Set by the `asm` format's open: every primitive's name, container
     * after container, the entries' "primitives" lists (not copied). */
    const char **prim_names;
} vol_asm;

/* Parses the reader's whole window; any fault refuses the file. */
trowel_status vol_asm_read(trowel_ctx *ctx, trowel_reader *r, vol_asm **out);
/* The same, but a fault in a container (a file cut short, a count or name
 * that does not fit) or bytes after the last one still give the model of
 * the containers before it, marked damaged. Header and remap tables must
 * read. */
trowel_status vol_asm_read_damaged(trowel_ctx *ctx, trowel_reader *r, vol_asm **out);
/* Writes the file's bytes. */
trowel_status vol_asm_write(trowel_ctx *ctx, const vol_asm *m, trowel_sink *out);
void vol_asm_free(trowel_ctx *ctx, vol_asm *m);

/* The JSON form (the "asm" object of `convert --to json`), written as one
 * value (after its key) through w; the writer holds the first failure. */
void vol_asm_write_json(const vol_asm *m, struct trowel_json_writer *w);
/* And back: the model of the "asm" member of the JSON document text (len
 * bytes), read as it streams by, every allocation counted. The whole text
 * must be valid JSON; a field that is missing, of the wrong type or out of
 * range is refused naming it (TROWEL_ERR_USAGE), a document without "asm"
 * too. */
trowel_status vol_asm_read_json(trowel_ctx *ctx, const char *text, size_t len, vol_asm **out);

/* The container named name (compared without case and without a
 * ".str2_pc" ending on either side), or NULL. */
vol_asm_container *vol_asm_find(vol_asm *m, const char *name);

/* What the update needs to know of a rebuilt .str2_pc. */
typedef struct vol_str2_file {
    const char *name;
    uint64_t size; /* bytes after decoding */
} vol_str2_file;

typedef struct vol_str2_facts {
    const char *name;          /* the str2's name ("x.str2_pc"): the container */
    uint64_t data_start;       /* where its data starts */
    uint64_t read_size;        /* compressed size, or data size if raw */
    const vol_str2_file *files;/* its entries in directory order */
    size_t file_count;
} vol_str2_facts;

/* The facts of an opened `vpp` archive (entry names stay owned by it;
 * *files is freed with trowel_mem_free). */
trowel_status vol_str2_facts_of(trowel_archive *a, const char *name, vol_str2_facts *facts,
                                vol_str2_file **files);

/* Updates the container of the str2's name: base offset, total read size,
 * every primitive's CPU and GPU size and the size list (v5: only the
 * non-zero sizes, flag 0x80 set when there are any). The str2's files must
 * be the container's primitives in order, each followed by its GPU file
 * (".cXXX" -> ".gXXX") when it has one; anything else is refused
 * (TROWEL_ERR_USAGE) naming what differs, and the model is left unchanged. */
trowel_status vol_asm_update(trowel_ctx *ctx, vol_asm *m, const vol_str2_facts *facts);

/* Reads the ASM in asm_in, updates the container facts->name names and
 * writes the whole ASM to out. */
trowel_status vol_asm_rewrite(trowel_ctx *ctx, trowel_input *asm_in, const vol_str2_facts *facts,
                              trowel_sink *out);

#endif
