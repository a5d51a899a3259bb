/*
 * Trespasser's GROFF container, shared by groff.c (the container: header,
 * section table, symbol table, SCN save header), groff_grf.c (the GRF
 * world inside: placements, meshes) and groff_sections.c (the lookups both
 * use). See docs/formats/groff.md.
 */
#ifndef TROWEL_FORMAT_GROFF_H
#define TROWEL_FORMAT_GROFF_H

#include "core/module.h"

#define GROFF_MAGIC 0x0ACEBABEu
#define GROFF_HEADER_SIZE 48
#define GROFF_SECTION_SIZE 32
#define GROFF_SYMBOL_HEAD 12
#define GROFF_VERSION 10
#define GROFF_SECTION_HANDLE_BASE 0x80000000u

/* File header flags. */
#define GROFF_HAS_SECTIONS 4u
#define GROFF_HAS_SYMBOLS 8u

typedef struct groff_section {
    uint32_t name_handle, io_flags, offset, size, reloc_offset, reloc_count, user_flags, handle;
    const char *name; /* the symbol's name, or NULL when the table lacks it */
    bool damaged;     /* its bytes are not all inside the file */
} groff_section;

typedef struct groff_symbol {
    uint32_t handle, length, refcount;
    char *name;     /* the name bytes up to the first NUL */
    bool odd_bytes; /* length is not strlen(name) + 1: keep the raw bytes */
    uint8_t *raw;   /* then: the length bytes as stored */
} groff_symbol;

typedef struct groff_state {
    uint32_t file_size, section_count, symbol_count, symtab_size, symtab_offset;
    uint32_t timestamp, flags, version, reserved[2], crc;
    uint64_t real_size;
    groff_section *sections;
    groff_symbol *symbols;
    struct groff_handle_index { uint32_t handle, index; } *by_handle; /* sorted by handle */
} groff_state;

/* Lookups (groff_sections.c). The symbol with this handle, or NULL. */
const groff_symbol *groff_symbol_find(const groff_state *st, uint32_t handle);
/* The section named name (first one), or SIZE_MAX. */
size_t groff_section_find(const groff_state *st, const char *name);
/* A reader over section i's bytes. */
trowel_status groff_section_reader(trowel_archive *a, size_t i, trowel_reader *out);

/* GRF (groff_grf.c): adds GRF info keys when a .header section is there. */
trowel_status groff_grf_info(trowel_archive *a);
/* GRF conversions: "placements" (JSON), "obj", "glb". */
trowel_status groff_grf_convert(trowel_archive *a, const char *target, const char *const *opts,
                                size_t nopts, trowel_sink *out);

#endif
