/*
 * What COST and AKOS share once decoded (costume.h): info and entries,
 * limb sequences, palettes, the PNG folder (pictures, sheet, atlas), GIF
 * animations composited in engine order, the JSON structure.
 */
#include "format/scumm/costume.h"

#include "core/input.h"
#include "export/gif.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *const direction_names[8] = {"W", "E", "S", "N", "SW", "SE", "NW", "NE"};

void scumm_costume_free(scumm_costume *c)
{
    if (!c->ctx)
        return;
    for (size_t i = 0; i < c->picture_count; i++)
        trowel_mem_free(c->ctx, c->pictures[i].pixels);
    trowel_mem_free(c->ctx, c->pictures);
    for (unsigned l = 0; l < SCUMM_LIMBS; l++)
        trowel_mem_free(c->ctx, c->limb_pics[l]);
    trowel_mem_free(c->ctx, c->anims);
    trowel_mem_free(c->ctx, c->cmds);
    memset(c, 0, sizeof *c);
}

trowel_status scumm_costume_decode_with(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                        scumm_costume *c, scumm_costume_decoder decode)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    trowel_status s = decode(c, data, size);
    if (s != TROWEL_OK)
        scumm_costume_free(c);
    return s;
}

void scumm_costume_palette(const scumm_costume *c, const uint8_t room_rgb[768],
                           trowel_palette *pal)
{
    memset(pal, 0, sizeof *pal);
    pal->count = c->colours;
    for (unsigned i = 0; i < c->colours; i++) {
        unsigned room = c->raw_colours ? i : c->palette[i];
        memcpy(pal->rgba[i], room_rgb + 3 * room, 3);
        pal->rgba[i][3] = 255;
    }
    pal->rgba[c->raw_colours ? 255 : 0][3] = 0;
}

/* ------------------------------------------------------------ sequences */

static size_t cost_steps(scumm_costume *c, const scumm_limb_def *d, unsigned limb,
                         scumm_step *steps, size_t max)
{
    size_t n = 0;
    for (uint32_t i = d->start; i <= (uint32_t)d->start + d->len && n < max; i++) {
        uint8_t code = i < c->cmd_count ? c->cmds[i] : 0x7C;
        scumm_step *s = &steps[n++];
        s->code = code;
        s->at = i;
        s->picture = SCUMM_NO_PICTURE;
        if (code >= 0x71 && code <= 0x7C)
            continue;
        unsigned idx = code & 0x7F;
        if (idx < c->limb_pic_count[limb])
            s->picture = c->limb_pics[limb][idx];
    }
    return n;
}

/* Runs a limb's AKSQ from start like the engine's loop and run layers:
 * cels are frames, commands are stepped over, jumps followed (conditions
 * taken as false); a jump outside AKSQ restarts the sequence. */
static size_t akos_steps(scumm_costume *c, const scumm_limb_def *d, scumm_step *steps,
                         size_t max, bool *loops)
{
    uint32_t pos = d->start, end = (uint32_t)d->start + d->len;
    size_t n = 0, ops = 0;
    *loops = d->mode == 2 || d->mode == 6;
    while (n < max) {
        uint16_t code;
        unsigned len;
        if (++ops > SCUMM_MAX_AKSQ_STEPS) {
            if (c->warnings++ < 8)
                trowel_warn(c->ctx, TROWEL_NO_OFFSET,
                            "AKOS: a sequence at %u runs %u opcodes without a frame; stopped",
                            d->start, SCUMM_MAX_AKSQ_STEPS);
            break;
        }
        if (!scumm_aksq_code(c, pos, &code, &len)) {
            if (c->warnings++ < 8)
                trowel_warn(c->ctx, TROWEL_NO_OFFSET,
                            "AKOS: sequence position %lu is outside AKSQ; restarting",
                            (unsigned long)pos);
            if (n == 0)
                break;
            *loops = true;
            break;
        }
        if (scumm_aksq_is_cel(code) || code == 0xC001 || code == 0xC0FF) {
            steps[n].code = code;
            steps[n].at = pos;
            steps[n].picture = scumm_aksq_is_cel(code) && (code & 0xFFF) < c->picture_count
                                   ? (uint32_t)(code & 0xFFF)
                                   : SCUMM_NO_PICTURE;
            n++;
            ops = 0;
            if (d->mode == 3 && pos >= end)
                break; /* play once: stays on the last */
            if (d->mode != 2 && d->mode != 3 && d->mode != 6)
                break;
            if (code == 0xC0FF)
                break;
            pos += len;
            if (d->mode == 2 && pos > end)
                break; /* loops back to start */
            continue;
        }
        uint32_t to;
        if (code == 0xC030 && scumm_aksq_target(c, pos, code, len, &to)) { /* GoToState */
            if (to >= c->cmd_count) {
                if (c->warnings++ < 8)
                    trowel_warn(c->ctx, TROWEL_NO_OFFSET,
                                "AKOS: a jump at %lu goes to %lu, outside AKSQ (%zu bytes); the "
                                "animation restarts there",
                                (unsigned long)pos, (unsigned long)to, c->cmd_count);
                *loops = true;
                break;
            }
            if (to <= pos && n > 0 && to == d->start) {
                *loops = true;
                break;
            }
            pos = to;
            continue;
        }
        pos += len;
    }
    return n;
}

size_t scumm_limb_steps(scumm_costume *c, const scumm_anim *a, unsigned limb, scumm_step *steps,
                        size_t max, bool *loops)
{
    const scumm_limb_def *d = &a->limb[limb];
    *loops = false;
    if (d->kind != SCUMM_LIMB_SEQUENCE)
        return 0;
    if (!c->akos) {
        *loops = d->loop;
        return cost_steps(c, d, limb, steps, max);
    }
    return akos_steps(c, d, steps, max, loops);
}

/* --------------------------------------------------------------- archive */

typedef struct costume_state {
    scumm_costume c;
    uint8_t *bytes; /* the whole input */
    size_t size;
} costume_state;

static trowel_status add_info(trowel_archive *a, const scumm_costume *c)
{
    trowel_props *info = a->info;
    size_t present = 0;
    for (size_t i = 0; i < c->anim_count; i++)
        present += c->anims[i].present;
    trowel_status s;
    if ((s = trowel_props_add_str(info, "format", c->akos ? "scumm-akos" : "scumm-cost")) ||
        (s = trowel_props_add_uint(info, "version", c->version)) ||
        (c->akos ? (s = trowel_props_add_hex(info, "flags", c->flags)) ||
                       (s = trowel_props_add_uint(info, "codec", c->codec))
                 : (s = trowel_props_add_hex(info, "format_byte", c->format))) ||
        (s = trowel_props_add_uint(info, "colours", c->colours)) ||
        (s = trowel_props_add_bool(info, "never_mirror", c->never_mirror)) ||
        (s = trowel_props_add_uint(info, "directions", c->directions)) ||
        (s = trowel_props_add_uint(info, "animations", c->anim_count)) ||
        (s = trowel_props_add_uint(info, "animations_defined", present)) ||
        (s = trowel_props_add_uint(info, "pictures", c->picture_count)))
        return s;
    return TROWEL_OK;
}

trowel_status scumm_costume_open(trowel_archive *a, trowel_reader *r,
                                 scumm_costume_decode_fn decode)
{
    costume_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    s = trowel_reader_load(r, &st->bytes, &st->size);
    if (s == TROWEL_OK)
        s = decode(a->ctx, st->bytes, st->size, &st->c);
    if (s != TROWEL_OK)
        return s;
    bool akos = st->c.akos;
    if ((s = add_info(a, &st->c)) != TROWEL_OK)
        return s;
    for (size_t i = 0; i < st->c.picture_count; i++) {
        const scumm_picture *p = &st->c.pictures[i];
        char name[32];
        snprintf(name, sizeof name, "pic_%03zu", i);
        uint64_t off = (uint64_t)st->c.base + (akos ? p->data_offset : p->offset);
        uint64_t size = akos ? p->data_size : (uint64_t)p->data_offset + p->data_size - p->offset;
        trowel_entry e = {.name = name, .size = size, .packed_size = size, .offset = off,
                          .method = akos ? "akos" : "cost-rle"};
        trowel_props *x;
        if ((s = trowel_archive_add(a, &e, &x)) ||
            (s = trowel_props_add_uint(x, "width", p->width)) ||
            (s = trowel_props_add_uint(x, "height", p->height)) ||
            (s = trowel_props_add_int(x, "rel_x", p->rel_x)) ||
            (s = trowel_props_add_int(x, "rel_y", p->rel_y)))
            return s;
    }
    return TROWEL_OK;
}

trowel_status scumm_costume_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    const costume_state *st = a->priv;
    const trowel_entry *e = &a->entries[index];
    if (e->offset > st->size || e->packed_size > st->size - e->offset)
        return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, e->offset, "picture bytes past the input");
    return trowel_sink_write(out, st->bytes + e->offset, (size_t)e->packed_size);
}

void scumm_costume_close(trowel_archive *a)
{
    costume_state *st = a->priv;
    if (!st)
        return;
    scumm_costume_free(&st->c);
    trowel_mem_free(a->ctx, st->bytes);
    trowel_mem_free(a->ctx, st);
    a->priv = NULL;
}

/* ------------------------------------------------------------------ JSON */

static json_object *jint(int64_t v) { return json_object_new_int64(v); }

static const char *cost_command_name(uint8_t code)
{
    switch (code) {
    case 0x79: return "stop";
    case 0x7A: return "start";
    case 0x7B: return "hide";
    case 0x7C: return "skip";
    default: return code >= 0x71 && code <= 0x78 ? "sound" : NULL;
    }
}

static const char *limb_kind_name(uint8_t kind)
{
    static const char *const names[] = {"unused", "disabled", "sequence", "hide", "show"};
    return kind < 5 ? names[kind] : "unused";
}

static json_object *steps_json(scumm_costume *c, const scumm_anim *an, unsigned limb)
{
    scumm_step steps[SCUMM_MAX_FRAMES];
    bool loops;
    size_t n = scumm_limb_steps(c, an, limb, steps, SCUMM_MAX_FRAMES, &loops);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "at", jint(steps[i].at));
        if (steps[i].picture != SCUMM_NO_PICTURE) {
            json_object_object_add(o, "picture", jint(steps[i].picture));
        } else {
            const char *name = c->akos ? (steps[i].code == 0xC0FF ? "end" : "empty")
                                       : cost_command_name((uint8_t)steps[i].code);
            json_object_object_add(o, "command", json_object_new_string(name ? name : "none"));
            if (!c->akos && steps[i].code >= 0x71 && steps[i].code <= 0x78)
                json_object_object_add(o, "sound", jint(steps[i].code - 0x71));
        }
        json_object_array_add(arr, o);
    }
    return arr;
}

static json_object *anims_json(scumm_costume *c)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < c->anim_count; i++) {
        const scumm_anim *an = &c->anims[i];
        if (!an->present)
            continue;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "index", jint((int64_t)i));
        json_object_object_add(o, "direction",
                               json_object_new_string(direction_names[i % c->directions]));
        json_object_object_add(o, "frame", jint((int64_t)(i / c->directions)));
        json_object *limbs = json_object_new_array();
        for (unsigned l = 0; l < SCUMM_LIMBS; l++) {
            const scumm_limb_def *d = &an->limb[l];
            if (d->kind == SCUMM_LIMB_UNUSED)
                continue;
            json_object *lo = json_object_new_object();
            json_object_object_add(lo, "limb", jint(l));
            json_object_object_add(lo, "kind", json_object_new_string(limb_kind_name(d->kind)));
            if (c->akos)
                json_object_object_add(lo, "mode", jint(d->mode));
            if (d->kind == SCUMM_LIMB_SEQUENCE) {
                json_object_object_add(lo, "start", jint(d->start));
                json_object_object_add(lo, c->akos ? "length" : "last", jint(d->len));
                if (!c->akos)
                    json_object_object_add(lo, "loop", json_object_new_boolean(d->loop));
                else
                    json_object_object_add(lo, "loop",
                                           json_object_new_boolean(d->mode == 2 || d->mode == 6));
                json_object_object_add(lo, "steps", steps_json(c, an, l));
            }
            json_object_array_add(limbs, lo);
        }
        json_object_object_add(o, "limbs", limbs);
        json_object_array_add(arr, o);
    }
    return arr;
}

/* The costume as JSON: the atlas when sheet is given (file names and sheet
 * cells), else the structure with offsets. */
static json_object *costume_json(scumm_costume *c, const trowel_sheet *sheet,
                                 const trowel_palette *rgb)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "format",
                           json_object_new_string(c->akos ? "scumm-akos" : "scumm-cost"));
    json_object_object_add(o, "version", jint(c->version));
    if (c->akos) {
        json_object_object_add(o, "flags", jint(c->flags));
        json_object_object_add(o, "codec", jint(c->codec));
    } else {
        json_object_object_add(o, "format_byte", jint(c->format));
        if (c->size_field == 0) /* no extra animation slot (create keeps it so) */
            json_object_object_add(o, "size_field", jint(0));
    }
    json_object_object_add(o, "colours", jint(c->colours));
    json_object_object_add(o, "never_mirror", json_object_new_boolean(c->never_mirror));
    json_object_object_add(o, "directions", jint(c->directions));
    json_object *pal = json_object_new_array();
    for (unsigned i = 0; !c->raw_colours && i < c->colours; i++)
        json_object_array_add(pal, jint(c->palette[i]));
    json_object_object_add(o, "palette", pal);
    if (sheet && c->palette_from[0])
        json_object_object_add(o, "palette_from", json_object_new_string(c->palette_from));
    if (rgb && !c->raw_colours) { /* the pictures' colours, for create's RGBA frames */
        json_object *hex = json_object_new_array();
        for (unsigned i = 0; i < c->colours; i++) {
            char text[8];
            snprintf(text, sizeof text, "%02x%02x%02x", rgb->rgba[i][0], rgb->rgba[i][1],
                     rgb->rgba[i][2]);
            json_object_array_add(hex, json_object_new_string(text));
        }
        json_object_object_add(o, "palette_rgb", hex);
    }
    if (sheet) {
        json_object *sh = json_object_new_object();
        json_object_object_add(sh, "file", json_object_new_string("sheet.png"));
        json_object_object_add(sh, "width", jint(sheet->width));
        json_object_object_add(sh, "height", jint(sheet->height));
        json_object_object_add(o, "sheet", sh);
    }
    json_object *pics = json_object_new_array();
    for (size_t i = 0; i < c->picture_count; i++) {
        const scumm_picture *p = &c->pictures[i];
        json_object *po = json_object_new_object();
        char file[32];
        snprintf(file, sizeof file, "pic_%03zu.png", i);
        if (sheet) {
            uint32_t x, y;
            trowel_sheet_cell(sheet, i, &x, &y);
            json_object_object_add(po, "file", json_object_new_string(file));
            json_object_object_add(po, "x", jint(x));
            json_object_object_add(po, "y", jint(y));
        } else {
            json_object_object_add(po, "offset", jint(p->offset));
            json_object_object_add(po, "data_offset", jint(p->data_offset));
            json_object_object_add(po, "data_size", jint(p->data_size));
        }
        json_object_object_add(po, "w", jint(p->width));
        json_object_object_add(po, "h", jint(p->height));
        json_object_object_add(po, "rel_x", jint(p->rel_x));
        json_object_object_add(po, "rel_y", jint(p->rel_y));
        json_object_object_add(po, "move_x", jint(p->move_x));
        json_object_object_add(po, "move_y", jint(p->move_y));
        if (p->redirect_limb >= 0) {
            json_object *rd = json_object_new_array();
            json_object_array_add(rd, jint(p->redirect_limb));
            json_object_array_add(rd, jint(p->redirect_pic));
            json_object_object_add(po, "redirect", rd);
        }
        json_object_array_add(pics, po);
    }
    json_object_object_add(o, "pictures", pics);
    if (!c->akos) {
        json_object *limbs = json_object_new_array();
        for (unsigned l = 0; l < SCUMM_LIMBS; l++) {
            if (c->limb_table[l] == 0) {
                json_object_array_add(limbs, NULL);
                continue;
            }
            json_object *t = json_object_new_array();
            for (size_t i = 0; i < c->limb_pic_count[l]; i++)
                json_object_array_add(t, c->limb_pics[l][i] == SCUMM_NO_PICTURE
                                             ? NULL
                                             : jint(c->limb_pics[l][i]));
            json_object_array_add(limbs, t);
        }
        json_object_object_add(o, "limbs", limbs);
        json_object *cmds = json_object_new_array();
        for (size_t i = 0; i < c->cmd_count; i++)
            json_object_array_add(cmds, jint(c->cmds[i]));
        json_object_object_add(o, "commands", cmds);
        json_object_object_add(o, "animation_count", jint((int64_t)c->anim_count));
    } else {
        json_object_object_add(o, "animation_count", jint((int64_t)c->anim_count));
        json_object_object_add(o, "aksq", scumm_aksq_disassemble(c));
    }
    json_object_object_add(o, "animations", anims_json(c));
    return o;
}

trowel_status scumm_costume_structure(trowel_archive *a, json_object *root)
{
    costume_state *st = a->priv;
    json_object_object_add(root, "structure", costume_json(&st->c, NULL, NULL));
    return TROWEL_OK;
}

/* ---------------------------------------------------------------- output */

/* name inside the costume's folder: the output folder itself, or the
 * costume's own folder in it (c->folder, for the costumes of a game). */
static trowel_status write_sink(const scumm_costume *c, trowel_outdir *dir, const char *name,
                                trowel_sink **sink)
{
    if (!c->folder)
        return trowel_outdir_create(dir, name, sink);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", c->folder, name);
    return trowel_outdir_create(dir, path, sink);
}

static trowel_status finish(trowel_sink *sink, trowel_status s)
{
    if (s == TROWEL_OK)
        return trowel_sink_finish(sink);
    trowel_sink_discard(sink);
    return s;
}

static void pic_size(const void *user, size_t i, uint32_t *w, uint32_t *h)
{
    const scumm_costume *c = user;
    *w = c->pictures[i].width;
    *h = c->pictures[i].height;
}

static trowel_status pic_decode(const void *user, size_t i, uint8_t *px)
{
    const scumm_costume *c = user;
    memcpy(px, c->pictures[i].pixels, (size_t)c->pictures[i].width * c->pictures[i].height);
    return TROWEL_OK;
}

static trowel_status write_png_folder(scumm_costume *c, const trowel_palette *pal,
                                      unsigned long columns, trowel_outdir *dir)
{
    trowel_ctx *ctx = c->ctx;
    trowel_frames f = {.ctx = ctx, .user = c, .count = c->picture_count, .colours = c->colours,
                       .transparent = c->raw_colours ? 255 : 0, .own = pal,
                       .size = pic_size, .decode = pic_decode};
    trowel_status s = TROWEL_OK;
    for (size_t i = 0; s == TROWEL_OK && i < c->picture_count; i++) {
        if (c->pictures[i].width == 0 || c->pictures[i].height == 0)
            continue; /* nothing to draw: the atlas still lists it */
        char name[32];
        snprintf(name, sizeof name, "pic_%03zu.png", i);
        trowel_sink *out;
        if ((s = write_sink(c, dir, name, &out)) == TROWEL_OK)
            s = finish(out, trowel_image_png_one(&f, i, pal, out));
    }
    trowel_sheet sheet = {0};
    if (s == TROWEL_OK && c->picture_count > 0) {
        trowel_palette sheet_pal = *pal;
        trowel_sink *out;
        if ((s = write_sink(c, dir, "sheet.png", &out)) == TROWEL_OK)
            s = finish(out, trowel_image_png_sheet(&f, (uint32_t)columns, &sheet_pal, out, &sheet));
    }
    if (s != TROWEL_OK)
        return s;
    json_object *atlas = costume_json(c, c->picture_count ? &sheet : NULL, pal);
    const char *text = trowel_json_text_utf8(
        atlas, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    trowel_sink *out;
    if ((s = write_sink(c, dir, "costume.json", &out)) == TROWEL_OK) {
        s = trowel_sink_write(out, text, strlen(text));
        if (s == TROWEL_OK)
            s = trowel_sink_write(out, "\n", 1);
        s = finish(out, s);
    }
    json_object_put(atlas);
    return s;
}

/* One animation's frames composited on a common screen. */
typedef struct gif_plan {
    size_t frames;
    scumm_step steps[SCUMM_LIMBS][SCUMM_MAX_FRAMES];
    size_t counts[SCUMM_LIMBS];
    bool loops[SCUMM_LIMBS];
} gif_plan;

static const scumm_picture *limb_picture_at(const scumm_costume *c, const gif_plan *g,
                                            unsigned limb, size_t t)
{
    size_t n = g->counts[limb];
    if (n == 0)
        return NULL;
    size_t k = g->loops[limb] ? t % n : (t < n ? t : n - 1);
    uint32_t p = g->steps[limb][k].picture;
    return p == SCUMM_NO_PICTURE ? NULL : &c->pictures[p];
}

/* Calls place for each picture of frame t: where it lands, mirrored or not. */
typedef void (*place_fn)(void *user, const scumm_picture *p, int32_t x, int32_t y, bool mirror);

static void compose(const scumm_costume *c, const gif_plan *g, size_t t, bool mirror,
                    place_fn place, void *user)
{
    int32_t xmove = 0, ymove = 0;
    for (unsigned l = 0; l < SCUMM_LIMBS; l++) {
        const scumm_picture *p = limb_picture_at(c, g, l, t);
        if (!p)
            continue;
        int32_t x = xmove + p->rel_x, y = ymove + p->rel_y;
        xmove += p->move_x;
        ymove -= p->move_y;
        if (mirror)
            x = -(x + p->width);
        place(user, p, x, y, mirror);
    }
}

typedef struct bbox {
    int32_t x0, y0, x1, y1;
    bool any;
} bbox;

static void grow(void *user, const scumm_picture *p, int32_t x, int32_t y, bool mirror)
{
    (void)mirror;
    bbox *b = user;
    if (p->width == 0 || p->height == 0)
        return;
    if (!b->any || x < b->x0) b->x0 = x;
    if (!b->any || y < b->y0) b->y0 = y;
    if (!b->any || x + p->width > b->x1) b->x1 = x + p->width;
    if (!b->any || y + p->height > b->y1) b->y1 = y + p->height;
    b->any = true;
}

typedef struct canvas {
    uint8_t *px;
    uint32_t w, h;
    int32_t ox, oy;
    uint8_t clear;
} canvas;

static void paint(void *user, const scumm_picture *p, int32_t x, int32_t y, bool mirror)
{
    canvas *cv = user;
    for (uint32_t row = 0; row < p->height; row++)
        for (uint32_t col = 0; col < p->width; col++) {
            uint8_t v = p->pixels[(size_t)row * p->width + (mirror ? p->width - 1 - col : col)];
            if (v == cv->clear)
                continue;
            int64_t sx = (int64_t)x + col - cv->ox, sy = (int64_t)y + row - cv->oy;
            if (sx >= 0 && sy >= 0 && sx < cv->w && sy < cv->h)
                cv->px[sy * cv->w + sx] = v;
        }
}

static trowel_status write_gif(scumm_costume *c, size_t index, gif_plan *g,
                               const trowel_palette *pal, unsigned delay, trowel_outdir *dir)
{
    trowel_ctx *ctx = c->ctx;
    const scumm_anim *an = &c->anims[index];
    g->frames = 0;
    for (unsigned l = 0; l < SCUMM_LIMBS; l++) {
        g->counts[l] = scumm_limb_steps(c, an, l, g->steps[l], SCUMM_MAX_FRAMES, &g->loops[l]);
        if (g->counts[l] > g->frames)
            g->frames = g->counts[l];
    }
    unsigned direction = (unsigned)(index % c->directions);
    bool mirror = direction == 0 && !c->never_mirror;
    bbox b = {0};
    for (size_t t = 0; t < g->frames; t++)
        compose(c, g, t, mirror, grow, &b);
    if (!b.any)
        return TROWEL_OK; /* nothing visible: no GIF */
    uint32_t w = (uint32_t)(b.x1 - b.x0), h = (uint32_t)(b.y1 - b.y0);
    if (w > 65535 || h > 65535)
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "animation %zu spans %lux%lu pixels; GIF stops at 65535", index,
                           (unsigned long)w, (unsigned long)h);
    size_t screen = (size_t)w * h;
    trowel_gif_frame *frames;
    uint8_t *px;
    trowel_status s = trowel_mem_new_zeroed(ctx, g->frames, sizeof *frames, &frames);
    if (s == TROWEL_OK && (s = trowel_mem_new(ctx, screen * g->frames, &px)) != TROWEL_OK)
        trowel_mem_free(ctx, frames);
    if (s != TROWEL_OK)
        return s;
    uint8_t clear = c->raw_colours ? 255 : 0;
    for (size_t t = 0; t < g->frames; t++) {
        canvas cv = {.px = px + screen * t, .w = w, .h = h, .ox = b.x0, .oy = b.y0,
                     .clear = clear};
        memset(cv.px, clear, screen);
        compose(c, g, t, mirror, paint, &cv);
        frames[t] = (trowel_gif_frame){.w = w, .h = h, .pixels = cv.px, .transparent = clear,
                                       .delay_cs = delay,
                                       .disposal = TROWEL_GIF_DISPOSE_BACKGROUND};
    }
    bool loops = false;
    for (unsigned l = 0; l < SCUMM_LIMBS; l++)
        loops |= g->loops[l] && g->counts[l] > 1;
    trowel_gif gif = {.width = w, .height = h, .palette = pal, .background = clear,
                      .loops = loops ? 0 : -1};
    char name[40];
    snprintf(name, sizeof name, "anim%03zu_%s.gif", index, direction_names[direction]);
    trowel_sink *out;
    s = write_sink(c, dir, name, &out);
    if (s == TROWEL_OK)
        s = finish(out, trowel_gif_write(ctx, out, &gif, frames, g->frames));
    trowel_mem_free(ctx, px);
    trowel_mem_free(ctx, frames);
    return s;
}

static trowel_status write_gif_folder(scumm_costume *c, const trowel_palette *pal, unsigned delay,
                                      trowel_outdir *dir)
{
    gif_plan *g;
    trowel_status s = trowel_mem_new(c->ctx, sizeof *g, &g);
    for (size_t i = 0; s == TROWEL_OK && i < c->anim_count; i++)
        if (c->anims[i].present)
            s = write_gif(c, i, g, pal, delay, dir);
    trowel_mem_free(c->ctx, g);
    return s;
}

/* The RGB palette of c's pixels, and where it came from (c->palette_from):
 * -O palette=FILE first, then the room palette the caller found, then the
 * costume's own RGBS (AKOS), else the stand-in, said once. */
static trowel_status choose_palette(scumm_costume *c, const uint8_t *room_rgb,
                                    const char *room_from, const char *const *opts, size_t nopts,
                                    trowel_palette *pal)
{
    uint8_t rgb[768];
    const char *file = trowel_options_get(opts, nopts, "palette");
    if (file) {
        const char *kind;
        trowel_status s = scumm_palette_load(c->ctx, file, rgb, &kind);
        if (s != TROWEL_OK)
            return s;
        snprintf(c->palette_from, sizeof c->palette_from, "palette=%s (%s)", file, kind);
        if (!scumm_palette_usable(c, rgb) && c->warnings++ < 8)
            trowel_warn(c->ctx, TROWEL_NO_OFFSET,
                        "palette=%s draws every colour of this costume the same", file);
    } else if (room_rgb) {
        memcpy(rgb, room_rgb, 768);
        snprintf(c->palette_from, sizeof c->palette_from, "%s", room_from ? room_from : "room");
    } else if (c->has_rgbs) {
        memcpy(rgb, c->rgbs, 768);
        snprintf(c->palette_from, sizeof c->palette_from, "the costume's RGBS block");
    } else {
        scumm_standalone_palette(c, pal);
        snprintf(c->palette_from, sizeof c->palette_from,
                 "stand-in: costume colour k drawn as EGA colour k (no room palette)");
        trowel_warn(c->ctx, TROWEL_NO_OFFSET,
                    "no room palette: colours are a stand-in (costume colour k as EGA colour "
                    "k); -O palette=FILE takes a room's CLUT/PALS/APAL, a PNG or GIF, or 768 "
                    "bytes of RGB");
        return TROWEL_OK;
    }
    scumm_costume_palette(c, rgb, pal);
    return TROWEL_OK;
}

trowel_status scumm_costume_convert(scumm_costume *c, const uint8_t *room_rgb,
                                    const char *room_from, const char *target,
                                    const char *const *opts, size_t nopts, trowel_outdir *dir)
{
    trowel_ctx *ctx = c->ctx;
    trowel_palette pal;
    trowel_status s = choose_palette(c, room_rgb, room_from, opts, nopts, &pal);
    if (s != TROWEL_OK)
        return s;
    unsigned long columns = 0, delay = 10;
    if ((s = trowel_image_option_uint(ctx, opts, nopts, "columns", 4096, &columns, NULL)) ||
        (s = trowel_image_option_uint(ctx, opts, nopts, "delay", 65535, &delay, NULL)))
        return s;
    if (strcmp(target, "png") == 0)
        return write_png_folder(c, &pal, columns, dir);
    if (strcmp(target, "gif") == 0)
        return write_gif_folder(c, &pal, (unsigned)delay, dir);
    return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                       "costumes convert to png or gif folders, or json, not %s", target);
}

trowel_status scumm_costume_convert_folder(trowel_archive *a, const char *target,
                                           const char *const *opts, size_t nopts,
                                           trowel_outdir *dir)
{
    costume_state *st = a->priv;
    return scumm_costume_convert(&st->c, NULL, NULL, target, opts, nopts, dir);
}
