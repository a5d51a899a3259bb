/*
 * Shared by the `vcd` and `bvcd` formats: info, conversions, the
 * standalone BVCD layout (see choreo_format.h) and the JSON view of a
 * scene. The JSON pool list is written the way srctools (Python's
 * json.dumps) writes it, so our standalone BVCD of srctools' sample is
 * laid out as theirs.
 */
#include "choreo_format.h"
#include "choreo_model.h"
#include "core/sink.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

trowel_status choreo_fill_info(trowel_archive *a, const choreo_scene *s, const char *format)
{
    choreo_counts c;
    choreo_scene_counts(s, &c);
    choreo_summary sum;
    trowel_status st = choreo_summarize(a->ctx, s, &sum);
    if (st != TROWEL_OK)
        return st;
    trowel_props *info = a->info;
    if ((st = trowel_props_add_str(info, "format", format)) == TROWEL_OK &&
        (st = trowel_props_add_uint(info, "actors", c.actors)) == TROWEL_OK &&
        (st = trowel_props_add_uint(info, "channels", c.channels)) == TROWEL_OK &&
        (st = trowel_props_add_uint(info, "events", c.events)) == TROWEL_OK &&
        (st = trowel_props_add_uint(info, "msecs", sum.msecs)) == TROWEL_OK &&
        (st = trowel_props_add_uint(info, "lastspeech_msecs", sum.lastspeech_msecs)) == TROWEL_OK)
        st = trowel_props_add_list(info, "sounds", sum.sounds, sum.sound_count);
    if (st == TROWEL_OK && s->from_binary)
        st = trowel_props_add_hex(info, "source_crc", s->source_crc);
    choreo_summary_free(a->ctx, &sum);
    return st;
}

/* ----------------------------------------------------- JSON pool list */

typedef struct jbuf {
    trowel_ctx *ctx;
    char *p;
    size_t n, cap;
    trowel_status st;
} jbuf;

static void jput(jbuf *b, const char *s, size_t n)
{
    if (b->st == TROWEL_OK &&
        (b->st = choreo_grow(b->ctx, (void **)&b->p, &b->cap, b->n + n + 1, 1)) == TROWEL_OK) {
        memcpy(b->p + b->n, s, n);
        b->n += n;
    }
}

#define NOT_UTF8 0xFFFFFFFFu

/* One UTF-8 code point at s (len bytes left), or NOT_UTF8 for a byte that
 * does not start a valid sequence (*used is then 1). */
static uint32_t utf8_next(const uint8_t *s, size_t len, size_t *used)
{
    uint32_t c = s[0];
    size_t n = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 1;
    *used = 1;
    if (c < 0x80)
        return c;
    if (n == 1 || n > len)
        return NOT_UTF8;
    uint32_t v = c & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return NOT_UTF8;
        v = (v << 6) | (s[i] & 0x3F);
    }
    *used = n;
    return v;
}

static void json_string(jbuf *b, const char *str)
{
    const uint8_t *s = (const uint8_t *)str;
    size_t len = strlen(str);
    char tmp[16];
    jput(b, "\"", 1);
    for (size_t i = 0; i < len;) {
        size_t used;
        uint32_t c = utf8_next(s + i, len - i, &used);
        if (c == NOT_UTF8) {
            /* not text: the byte goes through as it is (json-c reads it
             * back unchanged), so the pool survives a round trip */
            jput(b, (const char *)s + i, 1);
            i++;
            continue;
        }
        i += used;
        if (c == '"' || c == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)c;
            jput(b, tmp, 2);
        } else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
            tmp[0] = '\\';
            tmp[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
            jput(b, tmp, 2);
        } else if (c < 0x20 || (c >= 0x7F && c < 0x10000)) {
            snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)c);
            jput(b, tmp, 6);
        } else if (c >= 0x10000) {
            c -= 0x10000;
            snprintf(tmp, sizeof tmp, "\\u%04x\\u%04x", (unsigned)(0xD800 + (c >> 10)),
                     (unsigned)(0xDC00 + (c & 0x3FF)));
            jput(b, tmp, 12);
        } else {
            tmp[0] = (char)c;
            jput(b, tmp, 1);
        }
    }
    jput(b, "\"", 1);
}

trowel_status choreo_write_standalone_bvcd(trowel_ctx *ctx, const choreo_scene *s, uint32_t crc,
                                           trowel_sink *out)
{
    choreo_pool *pool;
    trowel_sink *bin = NULL;
    trowel_status st = choreo_pool_new(ctx, &pool);
    if (st != TROWEL_OK)
        return st;
    st = trowel_sink_open_memory(ctx, &bin);
    if (st == TROWEL_OK)
        st = choreo_write_bvcd(ctx, s, pool, crc, bin);
    jbuf b = {ctx, NULL, 0, 0, st};
    jput(&b, "[", 1);
    for (size_t i = 0; i < choreo_pool_count(pool); i++) {
        if (i)
            jput(&b, ", ", 2);
        json_string(&b, choreo_pool_get(pool, (uint32_t)i));
    }
    jput(&b, "]", 1);
    st = b.st;
    if (st == TROWEL_OK)
        st = trowel_sink_write(out, b.p, b.n);
    size_t n = 0;
    const uint8_t *data = bin ? trowel_sink_data(bin, &n) : NULL;
    if (st == TROWEL_OK)
        st = trowel_sink_write(out, data, n);
    if (bin)
        trowel_sink_discard(bin);
    trowel_mem_free(ctx, b.p);
    choreo_pool_free(pool);
    return st;
}

/* ------------------------------------------------------- JSON of a scene */

static json_object *jfloat(float v) { return json_object_new_double((double)v); }

static json_object *curve_json(const choreo_curve *c)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < c->n; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "time", jfloat(c->s[i].time));
        json_object_object_add(o, "value", jfloat(c->s[i].value));
        if (c->s[i].curve) {
            char name[80];
            snprintf(name, sizeof name, "curve_%s_to_curve_%s", choreo_interp_name(c->s[i].curve >> 8),
                     choreo_interp_name(c->s[i].curve & 0xFF));
            json_object_object_add(o, "curve", json_object_new_string(name));
        }
        json_object_array_add(arr, o);
    }
    return arr;
}

static json_object *tags_json(const choreo_tags *t)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < t->n; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(t->t[i].name));
        json_object_object_add(o, "value", jfloat(t->t[i].value));
        json_object_array_add(arr, o);
    }
    return arr;
}

static json_object *str_or_empty(const char *s) { return json_object_new_string(s ? s : ""); }

static json_object *event_json(const choreo_event *e)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "type", json_object_new_string(choreo_type_name(e->type)));
    json_object_object_add(o, "name", str_or_empty(e->name));
    json_object_object_add(o, "start", jfloat(e->start));
    json_object_object_add(o, "end", jfloat(e->end));
    json_object *params = json_object_new_array();
    for (int i = 0; i < 3; i++)
        json_object_array_add(params, str_or_empty(e->param[i]));
    json_object_object_add(o, "params", params);
    if (e->ramp.n)
        json_object_object_add(o, "ramp", curve_json(&e->ramp));
    static const char *const flag_names[] = {"resumecondition", "lockbodyfacing", "fixedlength",
                                             "active", "forceshortmovement", "playoverscript"};
    const bool flags[] = {e->resume, e->lockbody, e->fixedlength, e->active, e->forceshort, e->playover};
    for (size_t i = 0; i < 6; i++)
        json_object_object_add(o, flag_names[i], json_object_new_boolean(flags[i]));
    if (e->distance != 0.0f)
        json_object_object_add(o, "distancetotarget", jfloat(e->distance));
    if (e->rel.n)
        json_object_object_add(o, "tags", tags_json(&e->rel));
    if (e->timing.n)
        json_object_object_add(o, "flextimingtags", tags_json(&e->timing));
    if (e->abs[0].n)
        json_object_object_add(o, "playback_time", tags_json(&e->abs[0]));
    if (e->abs[1].n)
        json_object_object_add(o, "shifted_time", tags_json(&e->abs[1]));
    if (e->type == CHOREO_GESTURE && e->seqdur != 0.0f)
        json_object_object_add(o, "sequenceduration", jfloat(e->seqdur));
    if (e->uses_tag) {
        json_object_object_add(o, "relativetag", str_or_empty(e->tag_name));
        json_object_object_add(o, "relativewav", str_or_empty(e->tag_wav));
    }
    if (e->ntracks) {
        json_object *tracks = json_object_new_array();
        for (size_t i = 0; i < e->ntracks; i++) {
            const choreo_track *t = &e->tracks[i];
            json_object *to = json_object_new_object();
            json_object_object_add(to, "controller", str_or_empty(t->name));
            json_object_object_add(to, "active", json_object_new_boolean(t->active));
            json_object_object_add(to, "min", jfloat(t->min));
            json_object_object_add(to, "max", jfloat(t->max));
            json_object_object_add(to, "samples", curve_json(&t->samples[0]));
            if (t->combo)
                json_object_object_add(to, "combo", curve_json(&t->samples[1]));
            json_object_array_add(tracks, to);
        }
        json_object_object_add(o, "flexanimations", tracks);
    }
    if (e->type == CHOREO_LOOP)
        json_object_object_add(o, "loopcount", json_object_new_int(e->loopcount));
    if (e->type == CHOREO_SPEAK) {
        json_object_object_add(o, "cctype", json_object_new_string(choreo_cc_name(e->cctype)));
        json_object_object_add(o, "cctoken", str_or_empty(e->cctoken));
        json_object_object_add(o, "cc_usingcombinedfile", json_object_new_boolean(e->cc_combined));
        json_object_object_add(o, "cc_combinedusesgender", json_object_new_boolean(e->cc_gender));
        json_object_object_add(o, "cc_noattenuate", json_object_new_boolean(e->cc_noatten));
    }
    return o;
}

trowel_status choreo_scene_json(trowel_ctx *ctx, const choreo_scene *s, json_object **out)
{
    (void)ctx;
    json_object *o = json_object_new_object();
    json_object *events = json_object_new_array();
    for (size_t i = 0; i < s->nevents; i++)
        if (!s->events[i]->in_actor)
            json_object_array_add(events, event_json(s->events[i]));
    json_object_object_add(o, "events", events);
    json_object *actors = json_object_new_array();
    for (size_t i = 0; i < s->nactors; i++) {
        const choreo_actor *a = &s->actors[i];
        json_object *ao = json_object_new_object();
        json_object_object_add(ao, "name", str_or_empty(a->name));
        json_object_object_add(ao, "active", json_object_new_boolean(a->active));
        json_object *chans = json_object_new_array();
        for (size_t j = 0; j < a->n; j++) {
            json_object *co = json_object_new_object();
            json_object_object_add(co, "name", str_or_empty(a->ch[j].name));
            json_object_object_add(co, "active", json_object_new_boolean(a->ch[j].active));
            json_object *evs = json_object_new_array();
            for (size_t k = 0; k < a->ch[j].n; k++)
                json_object_array_add(evs, event_json(a->ch[j].ev[k]));
            json_object_object_add(co, "events", evs);
            json_object_array_add(chans, co);
        }
        json_object_object_add(ao, "channels", chans);
        json_object_array_add(actors, ao);
    }
    json_object_object_add(o, "actors", actors);
    if (s->ramp.n)
        json_object_object_add(o, "scene_ramp", curve_json(&s->ramp));
    json_object_object_add(o, "ignorePhonemes", json_object_new_boolean(s->ignore_phonemes));
    *out = o;
    return TROWEL_OK;
}

/* ---------------------------------------------------------- conversion */

trowel_status choreo_convert(trowel_archive *a, const choreo_scene *s, uint32_t source_crc,
                             const char *target, const char *const *opts, size_t nopts,
                             trowel_sink *out)
{
    (void)opts; /* the archive layer refused any: these targets take none */
    (void)nopts;
    trowel_status st;
    if (strcmp(target, "vcd") == 0)
        return choreo_write_vcd(a->ctx, s, out);
    if (strcmp(target, "bvcd") == 0)
        return choreo_write_standalone_bvcd(a->ctx, s, source_crc, out);
    if (strcmp(target, "json-full") == 0) {
        json_object *o = NULL;
        if ((st = choreo_scene_json(a->ctx, s, &o)) != TROWEL_OK)
            return st;
        const char *text = trowel_json_text_utf8(
            o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
        st = trowel_sink_write(out, text, strlen(text));
        if (st == TROWEL_OK)
            st = trowel_sink_write(out, "\n", 1);
        json_object_put(o);
        return st;
    }
    return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                       "a scene converts to vcd, bvcd, json-full or json, not %s", target);
}
