/*
 * cine-save: savegames of Future Wars and Operation Stealth.
 *
 * Four layouts, all big-endian unless said (../shared/seeds/delphine-
 * cinematique.txt for Operation Stealth; ../shared/formats/delphine-
 * cinematique.md and ScummVM engines/cine saveload.cpp for the others):
 *  - os-pc: the original Operation Stealth PC save. Names of the current
 *    part, procedure, relation, message, 8 backgrounds and Ct (13 bytes
 *    each), the object table (u16 count, u16 entry size 32, 255 objects),
 *    two 768-byte palettes, 255 global variables, zone data, command
 *    variables and buffer, zone query, music name, 20 flag words, the
 *    animation table (u16 count, u16 entry size 36, 255 entries whose data
 *    pointer is a little-endian far pointer), 6 screen parameters; from
 *    0x4D46 lists of scripts, sequences, overlays and incrusts whose entry
 *    sizes are not all known.
 *  - fw-pc: the original Future Wars save: no header, names as above with
 *    the music name and a playing flag, the object table, two 16-colour
 *    palettes, variables, 14 flag words, then at 0x2315 255 animation
 *    entries of 23 bytes (early) or 30 bytes, told apart by which reading
 *    gives plausible names, then 6 screen parameters and the lists.
 *  - scummvm-fw, scummvm-os: ScummVM's saves, a 12-byte header (id C1FW,
 *    C2OS or TEMP, u32 version, u32 0) before a body laid out as fw-pc
 *    (30-byte entries) or os-pc (with 30-byte animation entries).
 * What follows the known part is kept as hex ("rest"), so nothing is lost.
 *
 * trowel decodes the fields into info (summary) and, with --to savejson,
 * into a JSON document that `create -t cine-save -o OUT SAVE.json` turns
 * back into the same bytes. Fixed-size names are JSON strings when they are
 * clean (printable ASCII, zero padded), else {"hex": "..."}.
 */
#include "format/cine/cine_gfx.h"
#include "core/bytes.h"
#include "core/source.h"

#include <json-c/json.h>

#define SAVE_MAX_SIZE (1u << 20) /* real saves stay under 256 KiB */
#define HEADER_SIZE 12

enum kind { K_U8, K_U16, K_I16, K_U32, K_U32LE, K_STR, K_HEX, K_U16S, K_TABLE, K_REST };

typedef struct field {
    const char *key;
    enum kind kind;
    unsigned n;              /* STR/HEX: bytes; U16S: values; TABLE: entries */
    const struct field *sub; /* TABLE: one entry's fields */
} field;

#define END {NULL, K_U8, 0, NULL}

static const field object_fields[] = {
    {"x", K_I16, 0, NULL},       {"y", K_I16, 0, NULL},     {"mask", K_U16, 0, NULL},
    {"frame", K_I16, 0, NULL},   {"costume", K_I16, 0, NULL}, {"name", K_STR, 20, NULL},
    {"part", K_U16, 0, NULL},    END};

static const field anim36_fields[] = {
    {"width", K_U16, 0, NULL},      {"var1", K_U16, 0, NULL},       {"bpp", K_U16, 0, NULL},
    {"height", K_U16, 0, NULL},     {"data_ptr", K_U32LE, 0, NULL}, {"file_index", K_I16, 0, NULL},
    {"frame_index", K_I16, 0, NULL}, {"name", K_STR, 20, NULL},     END};

static const field anim30_fields[] = {
    {"width", K_U16, 0, NULL},       {"var1", K_U16, 0, NULL},     {"bpp", K_U16, 0, NULL},
    {"height", K_U16, 0, NULL},      {"data_ptr", K_U32, 0, NULL}, {"mask_ptr", K_U32, 0, NULL},
    {"file_index", K_I16, 0, NULL},  {"frame_index", K_I16, 0, NULL}, {"name", K_STR, 10, NULL},
    END};

static const field anim23_fields[] = {
    {"width", K_U16, 0, NULL},      {"var1", K_U16, 0, NULL},        {"bpp", K_U16, 0, NULL},
    {"height", K_U16, 0, NULL},     {"file_index", K_I16, 0, NULL}, {"frame_index", K_I16, 0, NULL},
    {"name", K_STR, 10, NULL},      {"valid", K_U8, 0, NULL},        END};

#define NAMES_OS                                                                             \
    {"disk", K_U16, 0, NULL}, {"part_name", K_STR, 13, NULL}, {"procedure_name", K_STR, 13, NULL}, \
        {"relation_name", K_STR, 13, NULL}, {"message_name", K_STR, 13, NULL},              \
        {"background_names", K_TABLE, 8, bg_name_fields}, {"ct_name", K_STR, 13, NULL}

static const field bg_name_fields[] = {{"name", K_STR, 13, NULL}, END};

#define OBJECTS                                                                              \
    {"object_count", K_U16, 0, NULL}, {"object_entry_size", K_U16, 0, NULL},                 \
        {"objects", K_TABLE, 255, object_fields}

#define OS_MIDDLE                                                                            \
    {"palette_temp", K_HEX, 768, NULL}, {"palette", K_HEX, 768, NULL},                       \
        {"global_vars", K_U16S, 255, NULL}, {"zone_data", K_U16S, 16, NULL},                 \
        {"command_vars", K_U16S, 4, NULL}, {"command_buffer", K_STR, 80, NULL},              \
        {"zone_query", K_U16S, 16, NULL}, {"music_name", K_STR, 13, NULL},                   \
        {"music_loaded", K_U16, 0, NULL}, {"music_playing", K_U16, 0, NULL},                 \
        {"command_y", K_U16, 0, NULL}, {"unknown_2938", K_U16, 0, NULL},                     \
        {"allow_player_input", K_U16, 0, NULL}, {"player_command", K_U16, 0, NULL},          \
        {"command_var1", K_U16, 0, NULL}, {"draw_command_enabled", K_U16, 0, NULL},          \
        {"var5", K_U16, 0, NULL}, {"var4", K_U16, 0, NULL}, {"var3", K_U16, 0, NULL},        \
        {"var2", K_U16, 0, NULL}, {"command_var2", K_U16, 0, NULL},                          \
        {"menu_background_colour", K_U16, 0, NULL}, {"ad_bg_var1", K_U16, 0, NULL},          \
        {"additional_bg_index", K_U16, 0, NULL}, {"additional_bg_index2", K_U16, 0, NULL},   \
        {"additional_bg_vscroll", K_U16, 0, NULL}, {"ad_bg_var0", K_U16, 0, NULL},           \
        {"system_menu_disabled", K_U16, 0, NULL}, {"anim_count", K_U16, 0, NULL},            \
        {"anim_entry_size", K_U16, 0, NULL}

static const field os36_layout[] = {NAMES_OS, OBJECTS, OS_MIDDLE,
                                    {"anims", K_TABLE, 255, anim36_fields},
                                    {"screen_params", K_U16S, 6, NULL}, {"rest", K_REST, 0, NULL},
                                    END};
static const field os30_layout[] = {NAMES_OS, OBJECTS, OS_MIDDLE,
                                    {"anims", K_TABLE, 255, anim30_fields},
                                    {"screen_params", K_U16S, 6, NULL}, {"rest", K_REST, 0, NULL},
                                    END};

#define FW_START                                                                             \
    {"disk", K_U16, 0, NULL}, {"part_name", K_STR, 13, NULL}, {"music_name", K_STR, 13, NULL}, \
        {"music_playing", K_I16, 0, NULL}, {"procedure_name", K_STR, 13, NULL},              \
        {"relation_name", K_STR, 13, NULL}, {"message_name", K_STR, 13, NULL},              \
        {"background_name", K_STR, 13, NULL}, {"ct_name", K_STR, 13, NULL}, OBJECTS,        \
        {"palette", K_U16S, 16, NULL}, {"palette_backup", K_U16S, 16, NULL},                 \
        {"global_vars", K_U16S, 255, NULL}, {"zone_data", K_U16S, 16, NULL},                 \
        {"command_vars", K_U16S, 4, NULL}, {"command_buffer", K_STR, 80, NULL},              \
        {"command_y", K_U16, 0, NULL}, {"bg_var0", K_U16, 0, NULL},                          \
        {"allow_player_input", K_U16, 0, NULL}, {"player_command", K_U16, 0, NULL},          \
        {"command_var1", K_U16, 0, NULL}, {"draw_command_enabled", K_U16, 0, NULL},          \
        {"last_type20_overlay_bg", K_U16, 0, NULL}, {"var4", K_U16, 0, NULL},                \
        {"var3", K_U16, 0, NULL}, {"var2", K_U16, 0, NULL}, {"command_var2", K_U16, 0, NULL}, \
        {"message_bg", K_U16, 0, NULL}, {"unknown_2311", K_U16, 0, NULL},                    \
        {"unknown_2313", K_U16, 0, NULL}

static const field fw30_layout[] = {FW_START, {"anims", K_TABLE, 255, anim30_fields},
                                    {"screen_params", K_U16S, 6, NULL}, {"rest", K_REST, 0, NULL},
                                    END};
static const field fw23_layout[] = {FW_START, {"anims", K_TABLE, 255, anim23_fields},
                                    {"screen_params", K_U16S, 6, NULL}, {"rest", K_REST, 0, NULL},
                                    END};

static const field scummvm_header[] = {{"id", K_STR, 4, NULL}, {"save_version", K_U32, 0, NULL},
                                       {"header_size", K_U32, 0, NULL}, END};

/* Offsets the detection needs (from the layouts above). */
#define OS_OBJECT_SIZE_AT 0xAD
#define OS_ANIM_COUNT_AT 0x295A
#define OS_ANIM_SIZE_AT 0x295C
#define OS_ANIMS_AT 0x295E
#define FW_OBJECT_SIZE_AT 0x61
#define FW_ANIMS_AT 0x2315
#define SCREEN_PARAMS 12

typedef struct save_layout {
    const char *name;
    bool headered;
    const field *body;
} save_layout;

/* ------------------------------------------------------------ sizes */

static uint64_t fields_size(const field *f)
{
    uint64_t n = 0;
    for (; f->key; f++) {
        switch (f->kind) {
        case K_U8: n += 1; break;
        case K_U16: case K_I16: n += 2; break;
        case K_U32: case K_U32LE: n += 4; break;
        case K_STR: case K_HEX: n += f->n; break;
        case K_U16S: n += 2 * (uint64_t)f->n; break;
        case K_TABLE: n += f->n * fields_size(f->sub); break;
        case K_REST: break;
        }
    }
    return n;
}

/* ---------------------------------------------------------- detection */

static bool u16_at(trowel_reader *r, uint64_t at, uint16_t *v)
{
    return trowel_reader_seek(r, at) == TROWEL_OK && trowel_read_u16be(r, v) == TROWEL_OK;
}

/* Every animation entry's name field holds printable ASCII or zeros. */
static bool names_plausible(trowel_reader *r, uint64_t table_at, unsigned entry, unsigned name_at)
{
    for (unsigned i = 0; i < 255; i++) {
        const uint8_t *p;
        if (trowel_reader_seek(r, table_at + (uint64_t)i * entry + name_at) != TROWEL_OK ||
            trowel_reader_peek(r, 10, &p) != TROWEL_OK)
            return false;
        for (unsigned k = 0; k < 10; k++)
            if (p[k] != 0 && (p[k] < 0x20 || p[k] > 0x7e))
                return false;
    }
    return true;
}

/* The body layout starting at base, or NULL. */
static const field *body_layout(trowel_reader *r, uint64_t base, bool prefer_os, const char **name)
{
    uint64_t size = trowel_reader_size(r);
    uint16_t v, count;
    if (u16_at(r, base + OS_OBJECT_SIZE_AT, &v) && v == 32 &&
        u16_at(r, base + OS_ANIM_SIZE_AT, &v) && u16_at(r, base + OS_ANIM_COUNT_AT, &count) &&
        count == 255 && (v == 36 || v == 30) &&
        size >= base + OS_ANIMS_AT + 255u * v + SCREEN_PARAMS && (prefer_os || v == 36)) {
        *name = "os";
        return v == 36 ? os36_layout : os30_layout;
    }
    if (u16_at(r, base + FW_OBJECT_SIZE_AT, &v) && v == 32) {
        *name = "fw";
        bool fits30 = size >= base + FW_ANIMS_AT + 255u * 30 + SCREEN_PARAMS;
        bool fits23 = size >= base + FW_ANIMS_AT + 255u * 23 + SCREEN_PARAMS;
        if (fits30 && names_plausible(r, base + FW_ANIMS_AT, 30, 20))
            return fw30_layout;
        if (fits23 && names_plausible(r, base + FW_ANIMS_AT, 23, 12))
            return fw23_layout;
    }
    return NULL;
}

static bool scummvm_id(trowel_reader *r, bool *os)
{
    const uint8_t *p;
    if (trowel_reader_size(r) < HEADER_SIZE || trowel_reader_seek(r, 0) != TROWEL_OK ||
        trowel_reader_peek(r, 4, &p) != TROWEL_OK)
        return false;
    *os = memcmp(p, "C2OS", 4) == 0 || memcmp(p, "TEMP", 4) == 0;
    return *os || memcmp(p, "C1FW", 4) == 0;
}

static bool detect(trowel_reader *r, save_layout *out)
{
    bool os;
    const char *kind = NULL;
    if (trowel_reader_size(r) > SAVE_MAX_SIZE)
        return false;
    if (scummvm_id(r, &os)) {
        out->headered = true;
        out->body = body_layout(r, HEADER_SIZE, os, &kind);
        out->name = !out->body ? NULL : strcmp(kind, "os") == 0 ? "scummvm-os" : "scummvm-fw";
    } else {
        out->headered = false;
        out->body = body_layout(r, 0, false, &kind);
        out->name = !out->body ? NULL : strcmp(kind, "os") == 0 ? "os-pc" : "fw-pc";
    }
    return out->body != NULL;
}

static int save_bid(trowel_reader *r)
{
    save_layout l;
    bool os;
    uint16_t objects;
    if (cine_is_szdd(r) || !detect(r, &l))
        return TROWEL_BID_NONE;
    if (scummvm_id(r, &os))
        return TROWEL_BID_MAGIC;
    /* Without a magic, also ask for the 255 objects every known save has
     * (the engine ignores the count, so open does not insist). */
    uint64_t count_at = (l.body == fw30_layout || l.body == fw23_layout) ? FW_OBJECT_SIZE_AT - 2
                                                                        : OS_OBJECT_SIZE_AT - 2;
    return u16_at(r, count_at, &objects) && objects == 255 ? TROWEL_BID_WEAK : TROWEL_BID_NONE;
}

/* ------------------------------------------------------ bytes to JSON */

static trowel_status hex_string(trowel_ctx *ctx, const uint8_t *p, size_t n, json_object **out)
{
    char *text;
    trowel_status s = trowel_mem_new(ctx, 2 * n + 1, &text);
    *out = NULL;
    if (s != TROWEL_OK)
        return s;
    trowel_hex_encode(p, n, text);
    *out = json_object_new_string_len(text, (int)(2 * n));
    trowel_mem_free(ctx, text);
    return TROWEL_OK;
}

/* A string when the field round-trips as one, else {"hex": ...}. */
static trowel_status fixed_string(trowel_ctx *ctx, const uint8_t *p, size_t n, json_object **out)
{
    size_t len = 0;
    while (len < n && p[len] >= 0x20 && p[len] <= 0x7e)
        len++;
    bool clean = true;
    for (size_t i = len; i < n; i++)
        clean = clean && p[i] == 0;
    if (clean) {
        *out = json_object_new_string_len((const char *)p, (int)len);
        return TROWEL_OK;
    }
    json_object *hex;
    trowel_status s = hex_string(ctx, p, n, &hex);
    *out = NULL;
    if (s != TROWEL_OK)
        return s;
    *out = json_object_new_object();
    json_object_object_add(*out, "hex", hex);
    return TROWEL_OK;
}

static trowel_status decode_fields(trowel_reader *r, const field *f, json_object *obj);

static trowel_status decode_one(trowel_reader *r, const field *f, json_object *obj)
{
    uint8_t buf[768];
    uint16_t u16;
    uint32_t u32;
    uint8_t u8;
    trowel_status s = TROWEL_OK;
    json_object *v = NULL;
    switch (f->kind) {
    case K_U8:
        if ((s = trowel_read_u8(r, &u8)) == TROWEL_OK)
            v = json_object_new_int(u8);
        break;
    case K_U16:
    case K_I16:
        if ((s = trowel_read_u16be(r, &u16)) == TROWEL_OK)
            v = json_object_new_int(f->kind == K_I16 ? (int16_t)u16 : u16);
        break;
    case K_U32:
        if ((s = trowel_read_u32be(r, &u32)) == TROWEL_OK)
            v = json_object_new_int64(u32);
        break;
    case K_U32LE:
        if ((s = trowel_read_u32le(r, &u32)) == TROWEL_OK)
            v = json_object_new_int64(u32);
        break;
    case K_STR:
    case K_HEX:
        if ((s = trowel_read_bytes(r, buf, f->n)) == TROWEL_OK)
            s = f->kind == K_STR ? fixed_string(r->ctx, buf, f->n, &v)
                                 : hex_string(r->ctx, buf, f->n, &v);
        break;
    case K_U16S:
        v = json_object_new_array();
        for (unsigned i = 0; i < f->n && s == TROWEL_OK; i++)
            if ((s = trowel_read_u16be(r, &u16)) == TROWEL_OK)
                json_object_array_add(v, json_object_new_int(u16));
        break;
    case K_TABLE:
        v = json_object_new_array();
        for (unsigned i = 0; i < f->n && s == TROWEL_OK; i++) {
            json_object *e = json_object_new_object();
            json_object_array_add(v, e);
            s = decode_fields(r, f->sub, e);
        }
        break;
    case K_REST: {
        uint8_t *rest;
        size_t n;
        trowel_reader tail;
        if ((s = trowel_reader_rest(r, &tail)) == TROWEL_OK &&
            (s = trowel_reader_load(&tail, &rest, &n)) == TROWEL_OK) {
            s = hex_string(r->ctx, rest, n, &v);
            trowel_mem_free(r->ctx, rest);
        }
        break;
    }
    }
    if (v)
        json_object_object_add(obj, f->key, v);
    return s;
}

static trowel_status decode_fields(trowel_reader *r, const field *f, json_object *obj)
{
    trowel_status s = TROWEL_OK;
    for (; f->key && s == TROWEL_OK; f++)
        s = decode_one(r, f, obj);
    return s;
}

/* The whole save as JSON: {"format", "layout", header fields, fields}. */
static trowel_status save_to_json(trowel_archive *a, json_object **out)
{
    save_layout l;
    trowel_reader r;
    trowel_reader_init(&r, a->ctx, a->in);
    *out = NULL;
    if (!detect(&r, &l))
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, 0,
                           "not a Future Wars or Operation Stealth savegame layout trowel knows");
    json_object *root = json_object_new_object();
    json_object_object_add(root, "format", json_object_new_string("cine-save"));
    json_object_object_add(root, "layout", json_object_new_string(l.name));
    trowel_status s = trowel_reader_seek(&r, 0);
    if (s == TROWEL_OK && l.headered)
        s = decode_fields(&r, scummvm_header, root);
    if (s == TROWEL_OK)
        s = decode_fields(&r, l.body, root);
    if (s != TROWEL_OK) {
        json_object_put(root);
        return s;
    }
    *out = root;
    return TROWEL_OK;
}

/* ------------------------------------------------------------- open */

static trowel_status add_str(trowel_props *p, json_object *root, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(root, key, &v))
        return TROWEL_OK;
    return trowel_props_add_str(p, key, json_object_is_type(v, json_type_string)
                                            ? json_object_get_string(v)
                                            : "(not text)");
}

static trowel_status save_open(trowel_archive *a, trowel_reader *r)
{
    if (trowel_reader_size(r) > SAVE_MAX_SIZE)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, 0,
                           "%llu bytes is far larger than any savegame (at most %u)",
                           (unsigned long long)trowel_reader_size(r), SAVE_MAX_SIZE);
    json_object *root;
    trowel_status s = save_to_json(a, &root);
    if (s != TROWEL_OK)
        return s;
    json_object *v;
    json_object_object_get_ex(root, "layout", &v);
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "cine-save")) == TROWEL_OK &&
        (s = trowel_props_add_uint(info, "version", 0)) == TROWEL_OK &&
        (s = trowel_props_add_str(info, "layout", json_object_get_string(v))) == TROWEL_OK) {
        if (json_object_object_get_ex(root, "save_version", &v))
            s = trowel_props_add_uint(info, "save_version", (uint64_t)json_object_get_int64(v));
        const char *keys[] = {"part_name", "procedure_name", "relation_name", "message_name",
                              "music_name", "background_name", "ct_name"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0] && s == TROWEL_OK; i++)
            s = add_str(info, root, keys[i]);
        if (s == TROWEL_OK && json_object_object_get_ex(root, "disk", &v))
            s = trowel_props_add_uint(info, "disk", (uint64_t)json_object_get_int(v));
        save_layout l;
        if (s == TROWEL_OK && detect(r, &l))
            s = trowel_props_add_uint(info, "fixed_bytes",
                                      (l.headered ? HEADER_SIZE : 0) + fields_size(l.body));
        if (s == TROWEL_OK && json_object_object_get_ex(root, "rest", &v))
            s = trowel_props_add_uint(info, "rest_bytes", (uint64_t)json_object_get_string_len(v) / 2);
    }
    json_object_put(root);
    return s;
}

static trowel_status save_convert(trowel_archive *a, const char *target, const char *const *opts,
                                  size_t nopts, trowel_sink *out)
{
    if (strcmp(target, "savejson") != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "cine-save converts to savejson or json, not %s", target);
    (void)opts; /* the archive layer refused any: savejson takes none */
    (void)nopts;
    json_object *root = NULL;
    trowel_status s = save_to_json(a, &root);
    if (s != TROWEL_OK)
        return s;
    const char *text = trowel_json_text_utf8(root, JSON_C_TO_STRING_PRETTY |
                                             JSON_C_TO_STRING_SPACED |
                                             JSON_C_TO_STRING_NOSLASHESCAPE);
    s = trowel_sink_write(out, text, strlen(text));
    if (s == TROWEL_OK)
        s = trowel_sink_write(out, "\n", 1);
    json_object_put(root);
    return s;
}

/* ------------------------------------------------------ JSON to bytes */

typedef struct writer {
    trowel_ctx *ctx;
    trowel_sink *out;
    char path[160]; /* the field being written, for messages */
} writer;

static trowel_status bad_field(writer *w, const char *what)
{
    return trowel_fail(w->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "savegame JSON: %s %s",
                       w->path, what);
}

static trowel_status put_bytes(writer *w, const void *p, size_t n)
{
    return trowel_sink_write(w->out, p, n);
}

static trowel_status put_int(writer *w, json_object *v, enum kind k)
{
    if (!v || !json_object_is_type(v, json_type_int))
        return bad_field(w, "must be a whole number");
    int64_t x = json_object_get_int64(v);
    int64_t lo = k == K_I16 ? INT16_MIN : 0;
    int64_t hi = k == K_U8 ? UINT8_MAX : k == K_I16 ? INT16_MAX : k == K_U16 ? UINT16_MAX
                                                                           : UINT32_MAX;
    if (x < lo || x > hi)
        return bad_field(w, "is out of range");
    uint32_t u = (uint32_t)x;
    uint8_t b[4];
    switch (k) {
    case K_U8: b[0] = (uint8_t)u; return put_bytes(w, b, 1);
    case K_U32LE:
        b[0] = (uint8_t)u, b[1] = (uint8_t)(u >> 8), b[2] = (uint8_t)(u >> 16), b[3] = (uint8_t)(u >> 24);
        return put_bytes(w, b, 4);
    case K_U32:
        b[0] = (uint8_t)(u >> 24), b[1] = (uint8_t)(u >> 16), b[2] = (uint8_t)(u >> 8), b[3] = (uint8_t)u;
        return put_bytes(w, b, 4);
    default:
        b[0] = (uint8_t)(u >> 8), b[1] = (uint8_t)u;
        return put_bytes(w, b, 2);
    }
}

static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Hex text of exactly n bytes (n 0: any even length). */
static trowel_status put_hex(writer *w, json_object *v, size_t n)
{
    if (!v || !json_object_is_type(v, json_type_string))
        return bad_field(w, "must be a hex string");
    const char *t = json_object_get_string(v);
    size_t len = (size_t)json_object_get_string_len(v);
    if (len % 2 || (n && len != 2 * n))
        return bad_field(w, "has the wrong number of hex digits");
    uint8_t buf[256];
    size_t k = 0;
    trowel_status s = TROWEL_OK;
    for (size_t i = 0; i < len && s == TROWEL_OK; i += 2) {
        int hi = hex_value(t[i]), lo = hex_value(t[i + 1]);
        if (hi < 0 || lo < 0)
            return bad_field(w, "is not hex");
        buf[k++] = (uint8_t)(hi << 4 | lo);
        if (k == sizeof buf || i + 2 == len) {
            s = put_bytes(w, buf, k);
            k = 0;
        }
    }
    return s;
}

static trowel_status put_string(writer *w, json_object *v, size_t n)
{
    json_object *hex;
    if (v && json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, "hex", &hex))
        return put_hex(w, hex, n);
    if (!v || !json_object_is_type(v, json_type_string))
        return bad_field(w, "must be a string or {\"hex\": ...}");
    size_t len = (size_t)json_object_get_string_len(v);
    if (len > n)
        return bad_field(w, "is longer than its field");
    uint8_t buf[80] = {0};
    memcpy(buf, json_object_get_string(v), len);
    return put_bytes(w, buf, n);
}

static trowel_status encode_fields(writer *w, const field *f, json_object *obj);

static trowel_status put_array(writer *w, const field *f, json_object *v)
{
    if (!v || !json_object_is_type(v, json_type_array) || json_object_array_length(v) != f->n)
        return bad_field(w, "must be an array of the field's length");
    trowel_status s = TROWEL_OK;
    size_t base = strlen(w->path);
    for (size_t i = 0; i < f->n && s == TROWEL_OK; i++) {
        json_object *e = json_object_array_get_idx(v, i);
        snprintf(w->path + base, sizeof w->path - base, "[%zu]", i);
        s = f->kind == K_U16S ? put_int(w, e, K_U16) : encode_fields(w, f->sub, e);
        w->path[base] = '\0';
    }
    return s;
}

static trowel_status encode_one(writer *w, const field *f, json_object *obj)
{
    json_object *v = NULL;
    if (!json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, f->key, &v))
        return bad_field(w, "is missing");
    switch (f->kind) {
    case K_STR: return put_string(w, v, f->n);
    case K_HEX: return put_hex(w, v, f->n);
    case K_REST: return put_hex(w, v, 0);
    case K_U16S:
    case K_TABLE: return put_array(w, f, v);
    default: return put_int(w, v, f->kind);
    }
}

static trowel_status encode_fields(writer *w, const field *f, json_object *obj)
{
    trowel_status s = TROWEL_OK;
    size_t base = strlen(w->path);
    for (; f->key && s == TROWEL_OK; f++) {
        snprintf(w->path + base, sizeof w->path - base, "%s%s", base ? "." : "", f->key);
        s = encode_one(w, f, obj);
        w->path[base] = '\0';
    }
    return s;
}

static const field *layout_by_name(const char *name, json_object *root, bool *headered)
{
    json_object *anims = NULL, *e = NULL;
    bool short_entries = json_object_object_get_ex(root, "anims", &anims) &&
                         json_object_is_type(anims, json_type_array) &&
                         (e = json_object_array_get_idx(anims, 0)) &&
                         json_object_object_get_ex(e, "valid", NULL);
    bool os36 = e && json_object_object_get_ex(e, "data_ptr", NULL) &&
                !json_object_object_get_ex(e, "mask_ptr", NULL);
    *headered = strncmp(name, "scummvm-", 8) == 0;
    if (strcmp(name, "os-pc") == 0 || strcmp(name, "scummvm-os") == 0)
        return os36 ? os36_layout : os30_layout;
    if (strcmp(name, "fw-pc") == 0 || strcmp(name, "scummvm-fw") == 0)
        return short_entries ? fw23_layout : fw30_layout;
    return NULL;
}

static trowel_status read_json_source(trowel_ctx *ctx, const trowel_source *src,
                                       json_object **out)
{
    const char *path = src->path;
    trowel_input *in;
    trowel_status s = trowel_source_open(ctx, src, &in);
    if (s != TROWEL_OK)
        return s;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    uint8_t *text = NULL;
    size_t n = 0;
    if (trowel_reader_size(&r) > 8 * (uint64_t)SAVE_MAX_SIZE)
        s = trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                        "%s is too large for a savegame JSON", path);
    else
        s = trowel_reader_load(&r, &text, &n);
    trowel_input_close(in);
    if (s != TROWEL_OK)
        return s;
    json_tokener *tok = json_tokener_new();
    *out = tok ? json_tokener_parse_ex(tok, (const char *)text, (int)n) : NULL;
    bool complete = tok && json_tokener_get_error(tok) == json_tokener_success;
    json_tokener_free(tok);
    trowel_mem_free(ctx, text);
    if (!*out || !complete || !json_object_is_type(*out, json_type_object)) {
        json_object_put(*out);
        *out = NULL;
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "%s is not a JSON object (make one with convert --to savejson)", path);
    }
    return TROWEL_OK;
}

static trowel_status save_create(trowel_ctx *ctx, const trowel_create_params *p,
                                 json_object *manifest, trowel_sink *out)
{
    (void)manifest;
    trowel_status s = TROWEL_OK; /* it takes no options: core refused any given */
    if (p->source_count != 1)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "give exactly one savegame JSON (from convert --to savejson), not %zu",
                           p->source_count);
    json_object *root, *v;
    if ((s = read_json_source(ctx, &p->sources[0], &root)) != TROWEL_OK)
        return s;
    bool headered = false;
    const field *layout = NULL;
    if (json_object_object_get_ex(root, "layout", &v) && json_object_is_type(v, json_type_string))
        layout = layout_by_name(json_object_get_string(v), root, &headered);
    writer w = {.ctx = ctx, .out = out, .path = ""};
    if (!layout)
        s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                        "savegame JSON: \"layout\" must be os-pc, fw-pc, scummvm-os or scummvm-fw");
    if (s == TROWEL_OK && headered)
        s = encode_fields(&w, scummvm_header, root);
    if (s == TROWEL_OK)
        s = encode_fields(&w, layout, root);
    json_object_put(root);
    return s;
}

const trowel_format trowel_format_cine_save = {
    .id = "cine-save",
    .family = "cinematique",
    .description = "Future Wars / Operation Stealth savegame (original PC, ScummVM C1FW/C2OS)",
    .extensions = "",
    .caps = 0,
    .create_options = "",
    .convert_targets = "savejson",
    .bid = save_bid,
    .open = save_open,
    .convert = save_convert,
    .create = save_create,
};
