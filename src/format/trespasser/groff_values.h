/*
 * GRF value tables (the attribute section), see groff_values.c.
 */
#ifndef TROWEL_FORMAT_GROFF_VALUES_H
#define TROWEL_FORMAT_GROFF_VALUES_H

#include "core/core.h"

enum {
    GRF_VALUE_BOOL = 1,
    GRF_VALUE_CHAR = 2,
    GRF_VALUE_INT = 3,
    GRF_VALUE_FLOAT = 4,
    GRF_VALUE_STRING = 5,
    GRF_VALUE_OBJECT = 6,
};

typedef struct grf_value {
    uint8_t type, scope, ref;
    uint32_t id, symbol, target, key; /* handle ids */
    int64_t i;
    double f;
    const char *s;     /* inside the table's buffer */
    uint32_t *members; /* object: member value keys */
    uint32_t member_count;
} grf_value;

typedef struct grf_values {
    trowel_ctx *ctx;
    const char *name, *symtab_name;
    struct grf_value_symbol { const char *name; uint32_t id; } *symbols;
    uint32_t symbol_count;
    grf_value *values; /* as written */
    grf_value *by_key; /* the same, sorted by key (shares members and strings) */
    uint32_t value_count;
} grf_values;

/* Parses size bytes at data (which must outlive t); base is their offset
 * in the file, for messages. */
trowel_status grf_values_read(trowel_ctx *ctx, const uint8_t *data, size_t size, uint64_t base,
                              grf_values *t);
void grf_values_free(grf_values *t);
const grf_value *grf_values_find(const grf_values *t, uint32_t key);
const char *grf_values_symbol(const grf_values *t, uint32_t id);
/* The "Class" string of the object value filed under key object, or NULL. */
const char *grf_values_class(const grf_values *t, uint32_t object);
struct json_object *grf_values_json(const grf_values *t);

#endif
