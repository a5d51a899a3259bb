/*
 * Volition asset-assembler files: reading and writing the model of asm.h.
 *
 * Header: magic 0xBEEFFEED, u16 version, u16 container count. Strings are a
 * u16 length and that many bytes (no NUL). Versions:
 *   5 (Red Faction Guerrilla): no remap tables. Container: name, u8 type,
 *     u16 flags, u16 primitive count, u32 base offset, u32 size count, u32
 *     total compressed read size, size_count u32 sizes. Primitive: name, u8
 *     type, allocator, flags, split extension index, u32 CPU size, u32 GPU
 *     size.
 *   11 (Saints Row: The Third): three remap tables (allocators, primitive
 *     types, container types), each an i32 count of {string, u8 index}.
 *     Container: name, u8 type, u16 flags, i16 primitive count, u32 base
 *     offset, stub parent name, i32 aux size + bytes, i32 total read size,
 *     2 x primitive count u32 sizes (CPU, GPU per primitive). Primitive: as
 *     v5 plus a u8 allocation group.
 *   12 (Saints Row IV, Gat out of Hell): v11 with a u8 compression type
 *     after the base offset.
 * Facts: ../shared/seeds/volition-vpp-asm.txt (the developer's structs),
 * ../shared/formats/volition-vpp-asm.md (v5 layout and its size-list rule),
 * checked on the corpus files (two v5 files, one v12 template).
 */
#include "asm.h"
#include "core/reader.h"

#include <stdio.h>
#include <string.h>

#define STRING_MIN 2u    /* an empty string: its length */
#define PRIM_MIN 14u      /* empty name + 4 bytes + 2 sizes (v5; v11/v12 one more) */
#define CONTAINER_MIN 19u /* empty name + type, flags, count and 3 u32 (v5); v11/v12:
                           * offset, empty stub name, aux size, read size: as many */

static bool has_remaps(uint16_t version) { return version >= 11; }

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static trowel_status read_string(trowel_reader *r, char **out)
{
    uint16_t len;
    trowel_status s = trowel_read_u16le(r, &len);
    if (s != TROWEL_OK)
        return s;
    uint64_t at = trowel_reader_abs(r);
    if (len > trowel_reader_remaining(r))
        return trowel_fail(r->ctx, TROWEL_ERR_TRUNCATED, at,
                           "a %u-byte name runs past the end of the file", len);
    char *str;
    if ((s = trowel_mem_new(r->ctx, (size_t)len + 1, &str)) != TROWEL_OK)
        return s;
    s = trowel_read_bytes(r, str, len);
    str[len] = '\0';
    for (size_t i = 0; s == TROWEL_OK && i < len; i++)
        if ((unsigned char)str[i] < 0x20 || (unsigned char)str[i] >= 0x7F)
            s = trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, at + i,
                            "a name holds byte 0x%02X (names are printable ASCII)",
                            (unsigned char)str[i]);
    if (s != TROWEL_OK) {
        trowel_mem_free(r->ctx, str);
        return s;
    }
    *out = str;
    return TROWEL_OK;
}

/* A count read from the file, refused unless count items of at least
 * min_each bytes fit in what is left. */
static trowel_status check_count(trowel_reader *r, uint64_t count, uint64_t min_each,
                                 const char *what)
{
    uint64_t need;
    if (trowel_mul_overflows(count, min_each, &need) || need > trowel_reader_remaining(r))
        return trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, trowel_reader_abs(r),
                           "%llu %s cannot fit in the %llu bytes left", (unsigned long long)count,
                           what, (unsigned long long)trowel_reader_remaining(r));
    return TROWEL_OK;
}

static trowel_status read_remaps(trowel_reader *r, vol_asm *m, int which)
{
    uint32_t count;
    trowel_status s = trowel_read_u32le(r, &count);
    if (s == TROWEL_OK)
        s = check_count(r, count, STRING_MIN + 1, "remap entries");
    if (s != TROWEL_OK)
        return s;
    if ((s = trowel_mem_new_zeroed(r->ctx, count ? count : 1, sizeof(vol_asm_remap),
                                   &m->remaps[which])) != TROWEL_OK)
        return s;
    for (uint32_t i = 0; i < count; i++) {
        if ((s = read_string(r, &m->remaps[which][i].name)) != TROWEL_OK)
            return s;
        m->remap_count[which] = i + 1;
        if ((s = trowel_read_u8(r, &m->remaps[which][i].index)) != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

/* True when the n bytes at s are all printable ASCII (0x20-0x7E), tested
 * eight at a time (a large ASM has megabytes of names): a word holds a
 * byte below 0x20 when (x - 0x20..20) & ~x has a top bit set, and one
 * above 0x7E when (x + 0x01..01) | x has. Both tests are exact as to
 * whether there is such a byte. */
static bool all_printable(const uint8_t *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, tops = 0x8080808080808080u;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (((x - 0x20 * ones) & ~x & tops) || (((x + ones) | x) & tops))
            return false;
    }
    for (; i < n; i++)
        if (s[i] < 0x20 || s[i] >= 0x7F)
            return false;
    return true;
}

/* One primitive's name (len bytes at name, at offset at of the input) and
 * fixed fields (at f), checked and copied into p; the name goes into the
 * container's name block at *names when it has one. */
static trowel_status take_primitive(trowel_ctx *ctx, uint16_t version, const uint8_t *name,
                                    size_t len, const uint8_t *f, uint64_t at,
                                    vol_asm_primitive *p, char **names)
{
    bool printable = all_printable(name, len); /* the fast test; the slow one says where */
    for (size_t j = 0; !printable && j < len; j++)
        if (name[j] < 0x20 || name[j] >= 0x7F)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at + j,
                               "a name holds byte 0x%02X (names are printable ASCII)", name[j]);
    if (*names) { /* the container's name block has room: counted for it */
        p->name = *names;
        *names += len + 1;
    } else {
        trowel_status s = trowel_mem_new(ctx, len + 1, &p->name);
        if (s != TROWEL_OK)
            return s;
    }
    memcpy(p->name, name, len);
    p->name[len] = '\0';
    p->type = f[0], p->allocator = f[1], p->flags = f[2], p->split_ext = f[3];
    p->cpu_size = le32(f + 4), p->gpu_size = le32(f + 8);
    if (has_remaps(version))
        p->alloc_group = f[12];
    return TROWEL_OK;
}

/* A primitive that lies in one span of the input (nearly all do), read
 * from it at once: the checks of read_primitive, a few calls instead of
 * one a field (an ASM holds up to 100,000s of primitives). False, with
 * nothing read, when it does not lie in one span. */
static bool read_primitive_span(trowel_reader *r, uint16_t version, vol_asm_primitive *p,
                                char **names, trowel_status *s)
{
    size_t fixed = has_remaps(version) ? 13 : 12; /* 4 u8, 2 u32, v11/v12 a u8 */
    const uint8_t *b;
    if (trowel_reader_remaining(r) < 2 || trowel_reader_peek(r, 2, &b) != TROWEL_OK)
        return false;
    size_t len = (size_t)b[0] | (size_t)b[1] << 8, need = 2 + len + fixed;
    if (need > TROWEL_READER_SPAN_MAX || need > trowel_reader_remaining(r) ||
        trowel_reader_peek(r, need, &b) != TROWEL_OK)
        return false;
    const uint8_t *name = b + 2, *f = b + 2 + len;
    *s = take_primitive(r->ctx, version, name, len, f, trowel_reader_abs(r) + 2, p, names);
    if (*s == TROWEL_OK)
        *s = trowel_reader_skip(r, need);
    return true;
}

static trowel_status read_primitive(trowel_reader *r, uint16_t version, vol_asm_primitive *p,
                                    char **names)
{
    trowel_status span_status;
    if (read_primitive_span(r, version, p, names, &span_status))
        return span_status;
    trowel_status s;
    if ((s = read_string(r, &p->name)) || (s = trowel_read_u8(r, &p->type)) ||
        (s = trowel_read_u8(r, &p->allocator)) || (s = trowel_read_u8(r, &p->flags)) ||
        (s = trowel_read_u8(r, &p->split_ext)) || (s = trowel_read_u32le(r, &p->cpu_size)) ||
        (s = trowel_read_u32le(r, &p->gpu_size)))
        return s;
    return has_remaps(version) ? trowel_read_u8(r, &p->alloc_group) : TROWEL_OK;
}

static trowel_status read_sizes(trowel_reader *r, vol_asm_container *c, uint32_t count)
{
    trowel_status s = check_count(r, count, 4, "sizes");
    if (s != TROWEL_OK)
        return s;
    if ((s = trowel_mem_new_zeroed(r->ctx, count ? count : 1, sizeof *c->sizes, &c->sizes)))
        return s;
    c->size_count = count;
    /* In spans of whole sizes (check_count made sure they are all there). */
    for (uint32_t i = 0; i < count && s == TROWEL_OK;) {
        uint32_t n = count - i < TROWEL_READER_SPAN_MAX / 4 ? count - i : TROWEL_READER_SPAN_MAX / 4;
        const uint8_t *b;
        if ((s = trowel_reader_peek(r, (size_t)n * 4, &b)) != TROWEL_OK)
            break;
        for (uint32_t k = 0; k < n; k++)
            c->sizes[i + k] = le32(b + 4 * k);
        i += n;
        s = trowel_reader_skip(r, (uint64_t)n * 4);
    }
    return s;
}

/* The fields between the primitive count and the size list. */
static trowel_status read_container_middle(trowel_reader *r, uint16_t version,
                                           vol_asm_container *c, uint32_t *size_count)
{
    trowel_status s = trowel_read_u32le(r, &c->base_offset);
    if (s != TROWEL_OK)
        return s;
    if (!has_remaps(version)) {
        if ((s = trowel_read_u32le(r, size_count)) == TROWEL_OK)
            s = trowel_read_u32le(r, &c->read_size);
        return s;
    }
    if (version >= 12 && (s = trowel_read_u8(r, &c->compression)) != TROWEL_OK)
        return s;
    int32_t aux;
    if ((s = read_string(r, &c->stub_parent)) || (s = trowel_read_i32le(r, &aux)))
        return s;
    if (aux < 0 || (uint64_t)aux > trowel_reader_remaining(r))
        return trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, trowel_reader_abs(r) - 4,
                           "container '%s': aux data of %d bytes does not fit in the file",
                           c->name, aux);
    c->aux_size = (uint32_t)aux;
    if ((s = trowel_mem_new(r->ctx, c->aux_size ? c->aux_size : 1, &c->aux)) != TROWEL_OK)
        return s;
    if ((s = trowel_read_bytes(r, c->aux, c->aux_size)) ||
        (s = trowel_read_u32le(r, &c->read_size)))
        return s;
    *size_count = 2u * c->prim_count;
    return TROWEL_OK;
}


/* How many whole primitives (at most want) lie at the start of the n
 * bytes at b: their bytes in *used, their names' bytes (each with its NUL)
 * in *names. */
static uint32_t whole_primitives(const uint8_t *b, size_t n, size_t fixed, uint32_t want,
                                 size_t *used, size_t *names)
{
    size_t pos = 0, name_bytes = 0;
    uint32_t k = 0;
    while (k < want && n - pos >= 2) {
        size_t len = (size_t)b[pos] | (size_t)b[pos + 1] << 8;
        if (n - pos - 2 < len + fixed)
            break;
        pos += 2 + len + fixed;
        name_bytes += len + 1;
        k++;
    }
    *used = pos;
    *names = name_bytes;
    return k;
}

/* The span of up to TROWEL_READER_SPAN_MAX bytes at the reader's cursor
 * (its length in *n; 0 at the end of the window). */
static trowel_status span_at(trowel_reader *r, const uint8_t **b, size_t *n)
{
    uint64_t left = trowel_reader_remaining(r);
    *n = left < TROWEL_READER_SPAN_MAX ? (size_t)left : TROWEL_READER_SPAN_MAX;
    *b = NULL;
    return *n ? trowel_reader_peek(r, *n, b) : TROWEL_OK;
}

/* One allocation for the names of a container's primitives (one malloc
 * a name was a third of parsing a large ASM), sized by a first look at
 * their lengths. When they cannot all be seen (a file cut short, a name
 * too long for one span), there is no block: each name then gets its own,
 * and the reading proper meets the fault and reports it. */
static trowel_status alloc_name_block(trowel_reader *r, uint16_t version, vol_asm_container *c)
{
    size_t fixed = has_remaps(version) ? 13 : 12, total = 0;
    trowel_reader scan = *r;
    for (uint32_t i = 0; i < c->prim_count;) {
        const uint8_t *b;
        size_t n, used, names;
        trowel_status s = span_at(&scan, &b, &n);
        if (s != TROWEL_OK)
            return s; /* the input failed: no fault of the file's */
        uint32_t k = whole_primitives(b, n, fixed, c->prim_count - i, &used, &names);
        if (k == 0 || (s = trowel_reader_skip(&scan, used)) != TROWEL_OK)
            return TROWEL_OK; /* cannot be seen whole: no block */
        i += k;
        total += names;
    }
    if (!total)
        return TROWEL_OK;
    trowel_status s = trowel_mem_new(r->ctx, total, &c->name_block);
    if (s == TROWEL_OK)
        c->name_block_size = total;
    return s;
}

/* The k primitives whole_primitives found at b, read into p (names into
 * the block at *names when there is one). at: b's offset in the input. */
static trowel_status primitives_from_span(trowel_ctx *ctx, uint16_t version, const uint8_t *b,
                                          uint64_t at, uint32_t k, vol_asm_primitive *p,
                                          char **names)
{
    size_t fixed = has_remaps(version) ? 13 : 12, pos = 0;
    for (uint32_t i = 0; i < k; i++, p++) {
        size_t len = (size_t)b[pos] | (size_t)b[pos + 1] << 8;
        const uint8_t *name = b + pos + 2, *f = name + len;
        trowel_status s = take_primitive(ctx, version, name, len, f, at + pos + 2, p, names);
        if (s != TROWEL_OK)
            return s;
        pos += 2 + len + fixed;
    }
    return TROWEL_OK;
}

/* A container's primitives, as many at once as lie in one span of the
 * input (an ASM holds up to 100,000s of them); one that does not (cut
 * short, or a name longer than a span) is read field by field, which
 * reports what is wrong. */
static trowel_status read_primitives(trowel_reader *r, uint16_t version, vol_asm_container *c)
{
    size_t fixed = has_remaps(version) ? 13 : 12;
    char *names = c->name_block;
    trowel_status s = TROWEL_OK;
    for (uint32_t i = 0; s == TROWEL_OK && i < c->prim_count;) {
        const uint8_t *b;
        size_t n, used, name_bytes;
        if ((s = span_at(r, &b, &n)) != TROWEL_OK)
            break;
        uint32_t k = whole_primitives(b, n, fixed, c->prim_count - i, &used, &name_bytes);
        if (k == 0) {
            s = read_primitive(r, version, &c->prims[i++], &names);
            continue;
        }
        s = primitives_from_span(r->ctx, version, b, trowel_reader_abs(r), k, &c->prims[i],
                                 &names);
        if (s == TROWEL_OK)
            s = trowel_reader_skip(r, used);
        i += k;
    }
    return s;
}

static trowel_status read_container(trowel_reader *r, uint16_t version, vol_asm_container *c)
{
    trowel_status s;
    uint32_t size_count = 0;
    if ((s = read_string(r, &c->name)) || (s = trowel_read_u8(r, &c->type)) ||
        (s = trowel_read_u16le(r, &c->flags)) || (s = trowel_read_u16le(r, &c->prim_count)))
        return s;
    if (has_remaps(version) && c->prim_count >= 0x8000)
        return trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, trowel_reader_abs(r) - 2,
                           "container '%s' has a negative primitive count", c->name);
    if ((s = read_container_middle(r, version, c, &size_count)) ||
        (s = read_sizes(r, c, size_count)) ||
        (s = check_count(r, c->prim_count, PRIM_MIN, "primitives")))
        return s;
    if ((s = trowel_mem_new_zeroed(r->ctx, c->prim_count ? c->prim_count : 1, sizeof *c->prims,
                                   &c->prims)) != TROWEL_OK)
        return s;
    if ((s = alloc_name_block(r, version, c)) != TROWEL_OK)
        return s;
    return read_primitives(r, version, c);
}

/* True when name lies in the container's name block. */
static bool in_block(const vol_asm_container *c, const char *name)
{
    uintptr_t at = (uintptr_t)name, block = (uintptr_t)c->name_block;
    return c->name_block && at >= block && at < block + c->name_block_size;
}

static void free_container(trowel_ctx *ctx, vol_asm_container *c)
{
    for (uint16_t k = 0; c->prims && k < c->prim_count; k++)
        if (!in_block(c, c->prims[k].name))
            trowel_mem_free(ctx, c->prims[k].name);
    trowel_mem_free(ctx, c->name_block);
    trowel_mem_free(ctx, c->prims);
    trowel_mem_free(ctx, c->sizes);
    trowel_mem_free(ctx, c->aux);
    trowel_mem_free(ctx, c->stub_parent);
    trowel_mem_free(ctx, c->name);
    memset(c, 0, sizeof *c);
}

/* Container i could not be read (ctx's last error says why): the model
 * keeps those before it, and the damage names it and what is lost. */
static void keep_before(trowel_ctx *ctx, vol_asm *m, uint16_t i)
{
    vol_asm_container *c = &m->containers[i];
    trowel_error *d = &m->damage;
    *d = ctx->last_error;
    unsigned lost = (unsigned)m->declared_count - i - 1u;
    char name[80] = "";
    if (c->name)
        snprintf(name, sizeof name, " (%.*s)", 64, c->name);
    char tail[64];
    if (lost)
        snprintf(tail, sizeof tail, "it and the %u after it are not listed", lost);
    else
        snprintf(tail, sizeof tail, "it is not listed");
    snprintf(d->message, sizeof d->message, "container %u%s: %.*s; %s", (unsigned)i, name, 320,
             ctx->last_error.message, tail);
    free_container(ctx, c);
    m->container_count = i;
    m->damaged = true;
}

/* The model; with partial, faults after the remap tables leave the model
 * of what came before them, marked damaged. */
static trowel_status read_model(trowel_ctx *ctx, trowel_reader *r, bool partial, vol_asm **out)
{
    *out = NULL;
    uint32_t magic;
    uint16_t version, count;
    trowel_status s;
    if ((s = trowel_read_u32le(r, &magic)) || (s = trowel_read_u16le(r, &version)) ||
        (s = trowel_read_u16le(r, &count)))
        return s;
    if (magic != VOL_ASM_MAGIC)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, r->base, "not an ASM file (magic 0x%08X)",
                           magic);
    if (version != 5 && version != 11 && version != 12)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, r->base + 4,
                           "ASM version %u is not supported (5, 11 and 12 are)", version);
    vol_asm *m;
    if ((s = trowel_mem_new_zeroed(ctx, 1, sizeof *m, &m)) != TROWEL_OK)
        return s;
    m->version = version;
    m->declared_count = count;
    for (int i = 0; s == TROWEL_OK && has_remaps(version) && i < VOL_ASM_REMAPS; i++)
        s = read_remaps(r, m, i);
    /* A damaged file reads only as many containers as its bytes can hold
     * (each takes at least CONTAINER_MIN), so that is all it needs room for. */
    uint64_t room = count;
    if (s == TROWEL_OK && !partial)
        s = check_count(r, count, CONTAINER_MIN, "containers");
    else if (s == TROWEL_OK && trowel_reader_remaining(r) / CONTAINER_MIN + 1 < room)
        room = trowel_reader_remaining(r) / CONTAINER_MIN + 1;
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, room ? room : 1, sizeof *m->containers, &m->containers);
    uint16_t i = 0;
    for (; s == TROWEL_OK && i < count && i < room; i++) {
        m->container_count = i + 1;
        s = read_container(r, version, &m->containers[i]);
    }
    if (s == TROWEL_OK && i < count) /* cannot happen: room is more than fits */
        s = check_count(r, count - i, CONTAINER_MIN, "containers");
    if (s == TROWEL_OK && trowel_reader_remaining(r) != 0) {
        s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, trowel_reader_abs(r),
                        "%llu bytes follow the last container",
                        (unsigned long long)trowel_reader_remaining(r));
        if (partial) {
            m->damage = ctx->last_error;
            m->damaged = true;
            s = TROWEL_OK;
        }
    } else if (s != TROWEL_OK && partial && m->container_count && s != TROWEL_ERR_LIMIT &&
               s != TROWEL_ERR_NOMEM) {
        keep_before(ctx, m, (uint16_t)(m->container_count - 1));
        s = TROWEL_OK;
    }
    if (s != TROWEL_OK) {
        vol_asm_free(ctx, m);
        return s;
    }
    *out = m;
    return TROWEL_OK;
}

trowel_status vol_asm_read(trowel_ctx *ctx, trowel_reader *r, vol_asm **out)
{
    return read_model(ctx, r, false, out);
}

trowel_status vol_asm_read_damaged(trowel_ctx *ctx, trowel_reader *r, vol_asm **out)
{
    return read_model(ctx, r, true, out);
}

void vol_asm_free(trowel_ctx *ctx, vol_asm *m)
{
    if (!m)
        return;
    for (int i = 0; i < VOL_ASM_REMAPS; i++) {
        for (uint32_t k = 0; m->remaps[i] && k < m->remap_count[i]; k++)
            trowel_mem_free(ctx, m->remaps[i][k].name);
        trowel_mem_free(ctx, m->remaps[i]);
    }
    for (uint16_t i = 0; m->containers && i < m->container_count; i++)
        free_container(ctx, &m->containers[i]);
    trowel_mem_free(ctx, m->containers);
    trowel_mem_free(ctx, m->prim_names);
    trowel_mem_free(ctx, m);
}

/* ----------------------------------------------------------------- write */

/* Fields gather in a small buffer on their way to the sink (an ASM has
 * millions of them); the first failure sticks. */
typedef struct asm_writer {
    trowel_sink *out;
    trowel_status s;
    size_t used;
    uint8_t buf[8192];
} asm_writer;

static void flush(asm_writer *w)
{
    if (w->s == TROWEL_OK && w->used)
        w->s = trowel_sink_write(w->out, w->buf, w->used);
    w->used = 0;
}

static void put(asm_writer *w, const void *p, size_t n)
{
    if (n > sizeof w->buf - w->used)
        flush(w);
    if (w->s != TROWEL_OK || !n)
        return;
    if (n > sizeof w->buf) { /* a long aux block: straight through */
        w->s = trowel_sink_write(w->out, p, n);
        return;
    }
    memcpy(w->buf + w->used, p, n);
    w->used += n;
}

static void put_u8(asm_writer *w, uint8_t v) { put(w, &v, 1); }

static void put_u16(asm_writer *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(w, b, 2);
}

static void put_u32(asm_writer *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(w, b, 4);
}

static void put_string(asm_writer *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_u16(w, (uint16_t)n); /* lengths were checked when the model was made */
    put(w, s, n);
}

static void write_container(asm_writer *w, uint16_t version, const vol_asm_container *c)
{
    put_string(w, c->name);
    put_u8(w, c->type);
    put_u16(w, c->flags);
    put_u16(w, c->prim_count);
    put_u32(w, c->base_offset);
    if (!has_remaps(version)) {
        put_u32(w, c->size_count);
        put_u32(w, c->read_size);
    } else {
        if (version >= 12)
            put_u8(w, c->compression);
        put_string(w, c->stub_parent);
        put_u32(w, c->aux_size);
        put(w, c->aux, c->aux_size);
        put_u32(w, c->read_size);
    }
    for (uint32_t i = 0; i < c->size_count; i++)
        put_u32(w, c->sizes[i]);
    for (uint16_t i = 0; i < c->prim_count; i++) {
        const vol_asm_primitive *p = &c->prims[i];
        put_string(w, p->name);
        put_u8(w, p->type);
        put_u8(w, p->allocator);
        put_u8(w, p->flags);
        put_u8(w, p->split_ext);
        put_u32(w, p->cpu_size);
        put_u32(w, p->gpu_size);
        if (has_remaps(version))
            put_u8(w, p->alloc_group);
    }
}

trowel_status vol_asm_write(trowel_ctx *ctx, const vol_asm *m, trowel_sink *out)
{
    for (uint16_t i = 0; i < m->container_count; i++)
        if (has_remaps(m->version) && m->containers[i].size_count != 2u * m->containers[i].prim_count)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "container '%s': version %u stores 2 sizes per primitive "
                               "(%u), not %u",
                               m->containers[i].name, m->version,
                               2u * m->containers[i].prim_count, m->containers[i].size_count);
    asm_writer *w;
    trowel_status s = trowel_mem_new(ctx, sizeof *w, &w);
    if (s != TROWEL_OK)
        return s;
    w->out = out;
    w->s = TROWEL_OK;
    w->used = 0;
    put_u32(w, VOL_ASM_MAGIC);
    put_u16(w, m->version);
    put_u16(w, m->container_count);
    for (int i = 0; has_remaps(m->version) && i < VOL_ASM_REMAPS; i++) {
        put_u32(w, m->remap_count[i]);
        for (uint32_t k = 0; k < m->remap_count[i]; k++) {
            put_string(w, m->remaps[i][k].name);
            put_u8(w, m->remaps[i][k].index);
        }
    }
    for (uint16_t i = 0; i < m->container_count; i++)
        write_container(w, m->version, &m->containers[i]);
    flush(w);
    trowel_status st = w->s;
    trowel_mem_free(ctx, w);
    return st;
}

/* ------------------------------------------------------------------ find */

static size_t stem_len(const char *name)
{
    static const char ext[] = ".str2_pc";
    size_t n = strlen(name), e = sizeof ext - 1;
    if (n >= e) {
        bool same = true;
        for (size_t i = 0; i < e && same; i++) {
            char c = name[n - e + i];
            same = (c >= 'A' && c <= 'Z' ? c + 32 : c) == ext[i];
        }
        if (same)
            return n - e;
    }
    return n;
}

static bool same_stem(const char *a, const char *b)
{
    size_t na = stem_len(a), nb = stem_len(b);
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        char x = a[i], y = b[i];
        if ((x >= 'A' && x <= 'Z' ? x + 32 : x) != (y >= 'A' && y <= 'Z' ? y + 32 : y))
            return false;
    }
    return true;
}

vol_asm_container *vol_asm_find(vol_asm *m, const char *name)
{
    for (uint16_t i = 0; i < m->container_count; i++)
        if (same_stem(m->containers[i].name, name))
            return &m->containers[i];
    return NULL;
}
