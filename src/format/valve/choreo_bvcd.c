/*
 * Binary VCD (BVCD version 4): the compiled scene stored in scenes.image.
 *
 * Layout (little-endian; facts from choreoscene.cpp, choreoevent.cpp,
 * choreoactor.cpp, choreochannel.cpp in Source SDK 2013 and
 * ../shared/formats/valve-vsif-bvcd.md): "bvcd", u8 version 4, u32 CRC of
 * the source text; u8 count + actor-less events; u8 count + actors (i16
 * name, u8 count + channels (i16 name, u8 count + events, u8 active),
 * u8 active); the scene ramp; u8 ignorePhonemes. Strings are i16 indices
 * into a pool kept outside the BVCD. Quantised values are truncated when
 * written (value * 255 into a u8, absolute tag times * 4096 into a u16)
 * and divided back when read.
 *
 * The reader is stricter than the engine: a string index outside the pool,
 * an unknown event type or close-caption type, or a negative sample count
 * is CORRUPT (the engine would print garbage or skip). As the engine, it
 * then reconciles close captions (a no-op for a scene Valve compiled).
 * The writer refuses counts the format cannot hold instead of wrapping.
 */
#include "choreo_model.h"

#include <string.h>

#define BVCD_VERSION 4

/* ================================================================ reader */

/* One reader serves two callers. With a scene (s) it builds the model.
 * Without one (a survey, choreo_survey_bvcd) it reads and checks every
 * byte exactly as then, so it fails where the full read fails, but keeps
 * nothing: only the facts a survey needs, in facts. A full read may note
 * the same facts on the way (choreo_read_bvcd_facts). */
typedef struct breader {
    trowel_reader *r;
    trowel_ctx *ctx;
    choreo_scene *s;   /* NULL: a survey */
    const choreo_pool *pool;
    size_t *missing;   /* loose reading: indices outside the pool counted here */
    int *first_missing;
    choreo_bvcd_facts *facts; /* a survey's, or NULL */
} breader;

static trowel_status rd_u8(breader *b, uint8_t *v) { return trowel_read_u8(b->r, v); }
static trowel_status rd_f32(breader *b, float *v) { return trowel_read_f32le(b->r, v); }

static trowel_status rd_i16(breader *b, int16_t *v)
{
    uint16_t u;
    trowel_status st = trowel_read_u16le(b->r, &u);
    *v = (int16_t)u;
    return st;
}

/* A string index, resolved through the pool (borrowed pointer). */
static trowel_status rd_str(breader *b, const char **out)
{
    uint64_t at = trowel_reader_abs(b->r);
    int16_t idx;
    trowel_status st = rd_i16(b, &idx);
    if (st != TROWEL_OK)
        return st;
    const char *s = idx < 0 ? NULL : choreo_pool_get(b->pool, (uint32_t)idx);
    if (!s && b->missing) { /* the engine's pool lookup gives "" */
        if ((*b->missing)++ == 0)
            *b->first_missing = idx;
        s = "";
    }
    if (!s)
        return trowel_fail(b->ctx, TROWEL_ERR_CORRUPT, at,
                           "BVCD string index %d outside the pool of %zu strings", (int)idx,
                           choreo_pool_count(b->pool));
    *out = s;
    return TROWEL_OK;
}

static trowel_status rd_str_into(breader *b, char **dst)
{
    const char *s = NULL;
    trowel_status st = rd_str(b, &s);
    return st == TROWEL_OK && b->s ? choreo_set_str(b->s, dst, s) : st;
}

/* The model's pushes, skipped by a survey. */
static trowel_status curve_push(breader *b, choreo_curve *c, float t, float v, uint16_t curve)
{
    return b->s ? choreo_curve_push(b->ctx, c, t, v, curve) : TROWEL_OK;
}

static trowel_status tags_push(breader *b, choreo_tags *tags, const char *name, float v, bool sort)
{
    if (!b->s)
        return TROWEL_OK;
    trowel_status st = choreo_tags_push(b->s, tags, name, v, false);
    if (st == TROWEL_OK && sort)
        choreo_tags_sort(tags);
    return st;
}

static float from_u8(uint8_t v) { return (float)v * 1.0f / 255.0f; }

static trowel_status rd_curve(breader *b, choreo_curve *c)
{
    uint8_t n = 0;
    trowel_status st = rd_u8(b, &n);
    for (unsigned i = 0; st == TROWEL_OK && i < n; i++) {
        float t;
        uint8_t v;
        if ((st = rd_f32(b, &t)) == TROWEL_OK && (st = rd_u8(b, &v)) == TROWEL_OK)
            st = curve_push(b, c, t, from_u8(v), CHOREO_CURVE_DEFAULT);
    }
    return st;
}

static trowel_status rd_tags(breader *b, choreo_tags *tags, bool wide, bool sort)
{
    uint8_t n = 0;
    trowel_status st = rd_u8(b, &n);
    for (unsigned i = 0; st == TROWEL_OK && i < n; i++) {
        const char *name = NULL;
        float v;
        if ((st = rd_str(b, &name)) != TROWEL_OK)
            break;
        if (wide) {
            uint16_t q;
            if ((st = trowel_read_u16le(b->r, &q)) != TROWEL_OK)
                break;
            v = (float)q * 1.0f / 4096.0f;
        } else {
            uint8_t q;
            if ((st = rd_u8(b, &q)) != TROWEL_OK)
                break;
            v = from_u8(q);
        }
        st = tags_push(b, tags, name, v, sort);
    }
    return st;
}

static trowel_status rd_samples(breader *b, choreo_curve *c, uint32_t n)
{
    trowel_status st = TROWEL_OK;
    /* each sample is 7 bytes: refuse counts the data cannot hold */
    if ((uint64_t)n * 7 > trowel_reader_remaining(b->r))
        return trowel_fail(b->ctx, TROWEL_ERR_TRUNCATED, trowel_reader_abs(b->r),
                           "BVCD flex track claims %u samples, more than the data holds", n);
    for (uint32_t i = 0; i < n && st == TROWEL_OK; i++) {
        float t;
        uint8_t v;
        uint16_t curve;
        if ((st = rd_f32(b, &t)) == TROWEL_OK && (st = rd_u8(b, &v)) == TROWEL_OK &&
            (st = trowel_read_u16le(b->r, &curve)) == TROWEL_OK)
            st = curve_push(b, c, t, from_u8(v), curve);
    }
    return st;
}

static trowel_status rd_tracks(breader *b, choreo_event *e)
{
    uint8_t n = 0;
    trowel_status st = rd_u8(b, &n);
    for (unsigned i = 0; st == TROWEL_OK && i < n; i++) {
        const char *name = NULL;
        uint8_t flags;
        float mn, mx;
        int16_t count;
        uint64_t at;
        if ((st = rd_str(b, &name)) != TROWEL_OK || (st = rd_u8(b, &flags)) != TROWEL_OK ||
            (st = rd_f32(b, &mn)) != TROWEL_OK || (st = rd_f32(b, &mx)) != TROWEL_OK)
            break;
        at = trowel_reader_abs(b->r);
        if ((st = rd_i16(b, &count)) != TROWEL_OK)
            break;
        if (count < 0)
            return trowel_fail(b->ctx, TROWEL_ERR_CORRUPT, at, "BVCD flex track with %d samples", count);
        choreo_track scratch = {0}, *t = &scratch; /* a survey's */
        if (b->s && (st = choreo_track_add(b->s, e, name, &t)) != TROWEL_OK)
            return st;
        t->active = flags & 1;
        t->combo = (flags & 2) != 0;
        t->min = mn;
        t->max = mx;
        if ((st = rd_samples(b, &t->samples[0], (uint32_t)count)) != TROWEL_OK || !t->combo)
            continue;
        uint16_t combo;
        if ((st = trowel_read_u16le(b->r, &combo)) == TROWEL_OK)
            st = rd_samples(b, &t->samples[1], combo);
    }
    return st;
}

static trowel_status rd_event_tail(breader *b, choreo_event *e, uint64_t at)
{
    trowel_status st = TROWEL_OK;
    if (e->type == CHOREO_GESTURE) {
        float d;
        if ((st = rd_f32(b, &d)) != TROWEL_OK)
            return st;
        if (d != -1.0f)
            e->seqdur = d;
    }
    uint8_t uses;
    if ((st = rd_u8(b, &uses)) != TROWEL_OK)
        return st;
    if (uses == 1) {
        e->uses_tag = true;
        if ((st = rd_str_into(b, &e->tag_name)) != TROWEL_OK || (st = rd_str_into(b, &e->tag_wav)) != TROWEL_OK)
            return st;
    }
    if ((st = rd_tracks(b, e)) != TROWEL_OK)
        return st;
    if (e->type == CHOREO_LOOP) {
        uint8_t n;
        if ((st = rd_u8(b, &n)) != TROWEL_OK)
            return st;
        int v = (int8_t)n;
        e->loopcount = v < -1 ? -1 : v;
    }
    if (e->type == CHOREO_SPEAK) {
        uint8_t cc, flags;
        if ((st = rd_u8(b, &cc)) != TROWEL_OK)
            return st;
        if (cc >= CHOREO_CC_COUNT)
            return trowel_fail(b->ctx, TROWEL_ERR_CORRUPT, at, "BVCD event with close-caption type %u", cc);
        e->cctype = cc;
        if ((st = rd_str_into(b, &e->cctoken)) != TROWEL_OK || (st = rd_u8(b, &flags)) != TROWEL_OK)
            return st;
        e->cc_combined = flags & 1;
        e->cc_gender = (flags & 2) != 0;
        e->cc_noatten = (flags & 4) != 0;
    }
    return st;
}

/* What a survey keeps of an event: the scene's stop time and its last
 * speech, by the rules of choreo_stop_time and choreo_summarize (the
 * events come in the model's order). */
static void note_event(choreo_bvcd_facts *f, const choreo_event *e)
{
    float t = choreo_event_stop(e);
    if (t > f->stop_time)
        f->stop_time = t;
    if (e->type == CHOREO_SPEAK)
        f->last_speech_time = t;
}

static trowel_status rd_event(breader *b, choreo_channel *c)
{
    uint64_t at = trowel_reader_abs(b->r);
    uint8_t type;
    trowel_status st = rd_u8(b, &type);
    if (st != TROWEL_OK)
        return st;
    if (type >= CHOREO_TYPE_COUNT)
        return trowel_fail(b->ctx, TROWEL_ERR_CORRUPT, at, "BVCD event of unknown type %u", type);
    choreo_event scratch, *e = &scratch; /* a survey's */
    if (b->s)
        st = choreo_event_new(b->s, &e);
    else
        choreo_event_init(e);
    if (st != TROWEL_OK)
        return st;
    choreo_event_set_type(e, type);
    float start, end;
    if ((st = rd_str_into(b, &e->name)) != TROWEL_OK || (st = rd_f32(b, &start)) != TROWEL_OK ||
        (st = rd_f32(b, &end)) != TROWEL_OK)
        return st;
    choreo_event_set_start(e, start);
    choreo_event_set_end(e, end);
    /* The engine drops one trailing space of param2/param3 here too (as
     * when parsing text); we keep the stored bytes so that binary -> binary
     * is exact, and the text writer pads such values with one more space. */
    for (int i = 0; i < 3 && st == TROWEL_OK; i++)
        st = rd_str_into(b, &e->param[i]);
    uint8_t flags;
    if (st != TROWEL_OK || (st = rd_curve(b, &e->ramp)) != TROWEL_OK || (st = rd_u8(b, &flags)) != TROWEL_OK ||
        (st = rd_f32(b, &e->distance)) != TROWEL_OK)
        return st;
    e->resume = flags & 1;
    e->lockbody = (flags & 2) != 0;
    e->fixedlength = (flags & 4) != 0;
    e->active = (flags & 8) != 0;
    e->forceshort = (flags & 16) != 0;
    e->playover = (flags & 32) != 0;
    if ((st = rd_tags(b, &e->rel, false, false)) != TROWEL_OK ||
        (st = rd_tags(b, &e->timing, false, true)) != TROWEL_OK ||
        (st = rd_tags(b, &e->abs[0], true, true)) != TROWEL_OK ||
        (st = rd_tags(b, &e->abs[1], true, true)) != TROWEL_OK ||
        (st = rd_event_tail(b, e, at)) != TROWEL_OK)
        return st;
    if (b->facts)
        note_event(b->facts, e);
    if (b->s && c) {
        e->in_actor = true;
        st = choreo_channel_push(b->s, c, e);
    }
    return st;
}

static trowel_status rd_actor(breader *b)
{
    choreo_actor scratch = {0}, *a = &scratch; /* a survey's */
    trowel_status st = b->s ? choreo_actor_add(b->s, &a) : TROWEL_OK;
    if (st != TROWEL_OK)
        return st;
    uint8_t nch = 0, active;
    st = rd_str_into(b, &a->name);
    if (st == TROWEL_OK)
        st = rd_u8(b, &nch);
    for (unsigned i = 0; st == TROWEL_OK && i < nch; i++) {
        choreo_channel lone = {0}, *c = &lone; /* a survey's */
        if (b->s && (st = choreo_channel_add(b->s, a, &c)) != TROWEL_OK)
            return st;
        uint8_t nev = 0, cact = 0;
        if ((st = rd_str_into(b, &c->name)) != TROWEL_OK || (st = rd_u8(b, &nev)) != TROWEL_OK)
            break;
        for (unsigned k = 0; st == TROWEL_OK && k < nev; k++)
            st = rd_event(b, c);
        if (st == TROWEL_OK && (st = rd_u8(b, &cact)) == TROWEL_OK)
            c->active = cact == 1;
    }
    if (st == TROWEL_OK && (st = rd_u8(b, &active)) == TROWEL_OK)
        a->active = active == 1;
    return st;
}

/* "bvcd" and the version. */
static trowel_status read_signature(trowel_ctx *ctx, trowel_reader *bin)
{
    uint8_t magic[4], version;
    uint64_t at = trowel_reader_abs(bin);
    trowel_status st = trowel_read_bytes(bin, magic, 4);
    if (st != TROWEL_OK)
        return st;
    if (memcmp(magic, "bvcd", 4) != 0)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, at, "not a BVCD (no \"bvcd\" signature)");
    if ((st = trowel_read_u8(bin, &version)) != TROWEL_OK)
        return st;
    if (version != BVCD_VERSION)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, at + 4, "BVCD version %u (only 4 is known)", version);
    return TROWEL_OK;
}

/* Everything after the version: the CRC, the actor-less events, the
 * actors, the scene ramp and ignorePhonemes. */
static trowel_status read_body(breader *b, uint32_t *crc, choreo_curve *ramp, uint8_t *ignore)
{
    uint8_t n = 0;
    trowel_status st = trowel_read_u32le(b->r, crc);
    if (st == TROWEL_OK)
        st = rd_u8(b, &n);
    for (unsigned i = 0; st == TROWEL_OK && i < n; i++)
        st = rd_event(b, NULL);
    if (st == TROWEL_OK)
        st = rd_u8(b, &n);
    for (unsigned i = 0; st == TROWEL_OK && i < n; i++)
        st = rd_actor(b);
    if (st == TROWEL_OK && (st = rd_curve(b, ramp)) == TROWEL_OK)
        st = rd_u8(b, ignore);
    return st;
}

static trowel_status read_bvcd(trowel_ctx *ctx, trowel_reader *bin, const choreo_pool *pool,
                               choreo_scene **out, size_t *missing, int *first_missing,
                               choreo_bvcd_facts *facts)
{
    *out = NULL;
    trowel_status st = read_signature(ctx, bin);
    choreo_scene *s;
    if (st != TROWEL_OK || (st = choreo_scene_new(ctx, &s)) != TROWEL_OK)
        return st;
    s->from_binary = true;
    s->has_crc = true;
    breader b = {bin, ctx, s, pool, missing, first_missing, facts};
    uint8_t ignore = 0;
    st = read_body(&b, &s->source_crc, &s->ramp, &ignore);
    s->ignore_phonemes = ignore != 0;
    if (st == TROWEL_OK)
        st = choreo_reconcile_close_captions(s);
    if (st != TROWEL_OK) {
        choreo_scene_free(ctx, s);
        return st;
    }
    *out = s;
    return TROWEL_OK;
}

trowel_status choreo_read_bvcd(trowel_ctx *ctx, trowel_reader *bin, const choreo_pool *pool,
                               choreo_scene **out)
{
    return read_bvcd(ctx, bin, pool, out, NULL, NULL, NULL);
}

trowel_status choreo_read_bvcd_facts(trowel_ctx *ctx, trowel_reader *bin, const choreo_pool *pool,
                                     choreo_scene **out, choreo_bvcd_facts *facts)
{
    memset(facts, 0, sizeof *facts);
    return read_bvcd(ctx, bin, pool, out, NULL, NULL, facts);
}

trowel_status choreo_read_bvcd_loose(trowel_ctx *ctx, trowel_reader *bin, const choreo_pool *pool,
                                     choreo_scene **out, size_t *missing, int *first_missing)
{
    *missing = 0;
    *first_missing = 0;
    return read_bvcd(ctx, bin, pool, out, missing, first_missing, NULL);
}

trowel_status choreo_survey_bvcd(trowel_ctx *ctx, trowel_reader *bin, const choreo_pool *pool,
                                 choreo_bvcd_facts *facts)
{
    memset(facts, 0, sizeof *facts);
    trowel_status st = read_signature(ctx, bin);
    if (st != TROWEL_OK)
        return st;
    breader b = {bin, ctx, NULL, pool, &facts->missing, &facts->first_missing, facts};
    uint32_t crc;
    choreo_curve ramp = {0};
    uint8_t ignore;
    return read_body(&b, &crc, &ramp, &ignore);
}

/* ================================================================ writer */

typedef struct bwriter {
    trowel_ctx *ctx;
    choreo_pool *pool;
    uint8_t *buf;
    size_t len, cap;
    trowel_status st;
} bwriter;

static void put(bwriter *w, const void *p, size_t n)
{
    if (w->st != TROWEL_OK)
        return;
    if ((w->st = choreo_grow(w->ctx, (void **)&w->buf, &w->cap, w->len + n, 1)) == TROWEL_OK) {
        memcpy(w->buf + w->len, p, n);
        w->len += n;
    }
}

static void put_u8(bwriter *w, unsigned v)
{
    uint8_t b = (uint8_t)v;
    put(w, &b, 1);
}

static void put_u16(bwriter *w, unsigned v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(w, b, 2);
}

static void put_u32(bwriter *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(w, b, 4);
}

static void put_f32(bwriter *w, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32(w, u);
}

static void put_str(bwriter *w, const char *s)
{
    uint32_t idx = 0;
    if (w->st == TROWEL_OK && (w->st = choreo_pool_intern(w->pool, s ? s : "", &idx)) == TROWEL_OK)
        put_u16(w, idx);
}

/* A count the format stores in a byte (or 15 bits): refuse, never wrap. */
static bool count_ok(bwriter *w, size_t n, size_t max, const char *what)
{
    if (w->st == TROWEL_OK && n > max)
        w->st = trowel_fail(w->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                            "%zu %s: BVCD holds at most %zu", n, what, max);
    return w->st == TROWEL_OK;
}

/* value * scale truncated, as the engine's float-to-integer conversion on
 * x86 (out-of-range values give the "integer indefinite" 0x80000000). */
static uint32_t quantise(float v, float scale)
{
    float f = v * scale;
    int32_t i = (f > -2147483648.0f && f < 2147483648.0f) ? (int32_t)f : INT32_MIN;
    return (uint32_t)i;
}

static void put_curve(bwriter *w, const choreo_curve *c, const char *what)
{
    if (!count_ok(w, c->n, 255, what))
        return;
    put_u8(w, (unsigned)c->n);
    for (size_t i = 0; i < c->n; i++) {
        put_f32(w, c->s[i].time);
        put_u8(w, quantise(c->s[i].value, 255.0f) & 0xFF);
    }
}

static void put_tags(bwriter *w, const choreo_tags *t, bool wide, const char *what)
{
    if (!count_ok(w, t->n, 255, what))
        return;
    put_u8(w, (unsigned)t->n);
    for (size_t i = 0; i < t->n; i++) {
        put_str(w, t->t[i].name);
        if (wide)
            put_u16(w, quantise(t->t[i].value, 4096.0f) & 0xFFFF);
        else
            put_u8(w, quantise(t->t[i].value, 255.0f) & 0xFF);
    }
}

static void put_samples(bwriter *w, const choreo_curve *c)
{
    for (size_t j = 0; j < c->n; j++) {
        put_f32(w, c->s[j].time);
        put_u8(w, quantise(c->s[j].value, 255.0f) & 0xFF);
        put_u16(w, c->s[j].curve);
    }
}

static void put_tracks(bwriter *w, const choreo_event *e)
{
    if (!count_ok(w, e->ntracks, 255, "flex tracks in an event"))
        return;
    put_u8(w, (unsigned)e->ntracks);
    for (size_t i = 0; i < e->ntracks; i++) {
        const choreo_track *t = &e->tracks[i];
        put_str(w, t->name);
        put_u8(w, (t->active ? 1u : 0u) | (t->combo ? 2u : 0u));
        put_f32(w, t->min);
        put_f32(w, t->max);
        if (!count_ok(w, t->samples[0].n, 32767, "samples in a flex track"))
            return;
        put_u16(w, (unsigned)t->samples[0].n);
        put_samples(w, &t->samples[0]);
        if (t->combo) {
            if (!count_ok(w, t->samples[1].n, 32767, "samples in a combo track"))
                return;
            put_u16(w, (unsigned)t->samples[1].n);
            put_samples(w, &t->samples[1]);
        }
    }
}

static void put_event(bwriter *w, const choreo_event *e)
{
    put_u8(w, (unsigned)e->type);
    put_str(w, e->name);
    put_f32(w, e->start);
    put_f32(w, e->end);
    for (int i = 0; i < 3; i++)
        put_str(w, e->param[i]);
    put_curve(w, &e->ramp, "ramp samples in an event");
    put_u8(w, (e->resume ? 1u : 0u) | (e->lockbody ? 2u : 0u) | (e->fixedlength ? 4u : 0u) |
                  (e->active ? 8u : 0u) | (e->forceshort ? 16u : 0u) | (e->playover ? 32u : 0u));
    put_f32(w, e->distance);
    put_tags(w, &e->rel, false, "relative tags");
    put_tags(w, &e->timing, false, "timing tags");
    put_tags(w, &e->abs[0], true, "playback tags");
    put_tags(w, &e->abs[1], true, "shifted tags");
    if (e->type == CHOREO_GESTURE)
        put_f32(w, e->seqdur != 0.0f ? e->seqdur : -1.0f);
    put_u8(w, e->uses_tag ? 1 : 0);
    if (e->uses_tag) {
        put_str(w, e->tag_name);
        put_str(w, e->tag_wav);
    }
    put_tracks(w, e);
    if (e->type == CHOREO_LOOP)
        put_u8(w, (unsigned)e->loopcount & 0xFF);
    if (e->type == CHOREO_SPEAK) {
        put_u8(w, (unsigned)e->cctype);
        put_str(w, e->cctoken);
        put_u8(w, ((e->cctype != CHOREO_CC_DISABLED && e->cc_combined) ? 1u : 0u) |
                      (e->cc_gender ? 2u : 0u) | (e->cc_noatten ? 4u : 0u));
    }
}

trowel_status choreo_write_bvcd(trowel_ctx *ctx, const choreo_scene *s, choreo_pool *pool,
                                uint32_t source_crc, trowel_sink *out)
{
    bwriter w = {ctx, pool, NULL, 0, 0, TROWEL_OK};
    put(&w, "bvcd", 4);
    put_u8(&w, BVCD_VERSION);
    put_u32(&w, source_crc);
    size_t globals = 0;
    for (size_t i = 0; i < s->nevents; i++)
        globals += !s->events[i]->in_actor;
    if (count_ok(&w, globals, 255, "actor-less events"))
        put_u8(&w, (unsigned)globals);
    for (size_t i = 0; i < s->nevents && w.st == TROWEL_OK; i++)
        if (!s->events[i]->in_actor)
            put_event(&w, s->events[i]);
    if (count_ok(&w, s->nactors, 255, "actors"))
        put_u8(&w, (unsigned)s->nactors);
    for (size_t i = 0; i < s->nactors && w.st == TROWEL_OK; i++) {
        const choreo_actor *a = &s->actors[i];
        put_str(&w, a->name);
        if (!count_ok(&w, a->n, 255, "channels in an actor"))
            break;
        put_u8(&w, (unsigned)a->n);
        for (size_t j = 0; j < a->n && w.st == TROWEL_OK; j++) {
            const choreo_channel *c = &a->ch[j];
            put_str(&w, c->name);
            if (!count_ok(&w, c->n, 255, "events in a channel"))
                break;
            put_u8(&w, (unsigned)c->n);
            for (size_t k = 0; k < c->n && w.st == TROWEL_OK; k++)
                put_event(&w, c->ev[k]);
            put_u8(&w, c->active ? 1 : 0);
        }
        put_u8(&w, a->active ? 1 : 0);
    }
    put_curve(&w, &s->ramp, "scene ramp samples");
    put_u8(&w, s->ignore_phonemes ? 1 : 0);
    if (w.st == TROWEL_OK)
        w.st = trowel_sink_write(out, w.buf, w.len);
    trowel_mem_free(ctx, w.buf);
    return w.st;
}
