/*
 * Text VCD (Faceposer's choreography scene text): parser and writer.
 *
 * The tokenizer behaves as Valve's scriplib (used by the scenes.image
 * builder): tokens are separated by bytes <= 32 (with Windows' signed
 * char, so bytes >= 0x80 outside quotes also separate), quoted strings run
 * to the next '"' with no escapes, comments are //, ; and # to the end of
 * the line and / * ... * /, tokens are shorter than 1024 bytes. Some reads
 * must stay on the current line ("time 1 2"); the optional trailing values
 * (end time, curve type) are taken only if a token follows on that line.
 *
 * The grammar and the order-dependent side effects (sorting and pruning
 * samples when they are added, clamping end times, converting old
 * attack/sustain/decay ramps) follow choreoscene.cpp in Source SDK 2013.
 * After parsing, the engine's fix-ups run: relative tags move events,
 * gesture times (a no-op for text input: it needs entry/exit tags that
 * only Faceposer's model data sets) and close captions are reconciled.
 *
 * Where Valve's tools only warn and go on (a missing '{', an empty token,
 * an unterminated quote or block, which can loop forever), we stop with a
 * clear error. Unknown keywords inside an event are skipped, as Valve does.
 *
 * The writer prints the layout Faceposer saves, with two changes that make
 * round trips exact: every float is printed with as many decimals as it
 * needs to read back to the same float (at least Faceposer's count), and a
 * scene read from BVCD prints its quantised values at the middle of their
 * step ((k + 0.5) / 255, (k + 0.5) / 4096), so truncating again gives k.
 */
#include "choreo_float.h"
#include "choreo_model.h"
#include "core/bytes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXTOKEN 1024

/* ============================================================ tokenizer */

typedef struct tok {
    trowel_ctx *ctx;
    const uint8_t *buf, *p, *end;
    uint64_t base; /* absolute offset of buf[0] */
    unsigned line;
    char text[MAXTOKEN];
    size_t len;
    uint64_t at; /* absolute offset of the current token */
} tok;

/* scriplib compares a signed char with 32: high bytes count as blanks. */
static bool is_blank(uint8_t c) { return c <= 32 || c >= 128; }

static trowel_status tok_fail(tok *t, const char *what)
{
    return trowel_fail(t->ctx, TROWEL_ERR_CORRUPT, t->base + (uint64_t)(t->p - t->buf),
                       "VCD line %u: %s", t->line, what);
}

static bool at_line_comment(const tok *t)
{
    return *t->p == ';' || *t->p == '#' || (*t->p == '/' && t->p + 1 < t->end && t->p[1] == '/');
}

/* The next token into t->text. At the end of the input *eof is set (an
 * error when the token had to be on the current line). */
static trowel_status tok_next(tok *t, bool crossline, bool *eof)
{
    *eof = false;
    for (;;) {
        while (t->p < t->end && is_blank(*t->p)) {
            if (*t->p++ == '\n') {
                if (!crossline)
                    return tok_fail(t, "line is incomplete");
                t->line++;
            }
        }
        if (t->p >= t->end) {
            if (!crossline)
                return tok_fail(t, "line is incomplete");
            *eof = true;
            return TROWEL_OK;
        }
        if (at_line_comment(t)) {
            if (!crossline)
                return tok_fail(t, "line is incomplete");
            while (t->p < t->end && *t->p != '\n')
                t->p++;
            continue;
        }
        if (*t->p == '/' && t->p + 1 < t->end && t->p[1] == '*') {
            t->p += 2;
            while (t->p < t->end && !(*t->p == '*' && t->p + 1 < t->end && t->p[1] == '/')) {
                if (*t->p == '\n')
                    t->line++;
                t->p++;
            }
            if (t->p >= t->end) {
                *eof = true; /* as scriplib: an open comment ends the script */
                if (!crossline)
                    return tok_fail(t, "line is incomplete");
                return TROWEL_OK;
            }
            t->p += 2;
            continue;
        }
        break;
    }
    t->at = t->base + (uint64_t)(t->p - t->buf);
    t->len = 0;
    if (*t->p == '"') {
        const uint8_t *start = t->p++;
        unsigned lines = 0;
        while (t->p < t->end && *t->p != '"') {
            if (t->len + 1 >= MAXTOKEN)
                return trowel_fail(t->ctx, TROWEL_ERR_LIMIT, t->at,
                                   "VCD line %u: token of %d bytes or more", t->line, MAXTOKEN);
            if (*t->p == '\n')
                lines++;
            t->text[t->len++] = (char)*t->p++;
        }
        if (t->p >= t->end) {
            t->p = start;
            return tok_fail(t, "unterminated quoted string");
        }
        t->p++;
        t->line += lines;
    } else {
        while (t->p < t->end && !is_blank(*t->p) && *t->p != ';') {
            if (t->len + 1 >= MAXTOKEN)
                return trowel_fail(t->ctx, TROWEL_ERR_LIMIT, t->at,
                                   "VCD line %u: token of %d bytes or more", t->line, MAXTOKEN);
            t->text[t->len++] = (char)*t->p++;
        }
    }
    t->text[t->len] = 0;
    return TROWEL_OK;
}

/* True when another token follows on the current line. */
static bool tok_available(const tok *t)
{
    const uint8_t *p = t->p;
    while (p < t->end && is_blank(*p)) {
        if (*p == '\n')
            return false;
        p++;
    }
    if (p >= t->end)
        return false;
    return !(*p == ';' || *p == '#' || (*p == '/' && p + 1 < t->end && p[1] == '/'));
}

/* ================================================================ parser */

typedef struct parser {
    tok t;
    choreo_scene *s;
} parser;

static bool is(const parser *ps, const char *word) { return choreo_ascii_casecmp(ps->t.text, word) == 0; }

/* A token that must exist (end of input is an error). */
static trowel_status need(parser *ps, bool crossline, const char *where)
{
    bool eof;
    trowel_status st = tok_next(&ps->t, crossline, &eof);
    if (st == TROWEL_OK && eof)
        return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.base + (uint64_t)(ps->t.end - ps->t.buf),
                           "VCD ends inside %s", where);
    return st;
}

static trowel_status expect_brace(parser *ps)
{
    if (strcmp(ps->t.text, "{") != 0)
        return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at,
                           "VCD line %u: expecting { but found \"%.40s\"", ps->t.line, ps->t.text);
    return TROWEL_OK;
}

/* The next token inside a { } block: *closed at '}'; an empty token is an
 * error (the engine warns and abandons the block). */
static trowel_status block_item(parser *ps, const char *where, bool *closed)
{
    trowel_status st = need(ps, true, where);
    if (st != TROWEL_OK)
        return st;
    *closed = strcmp(ps->t.text, "}") == 0;
    if (!*closed && ps->t.len == 0)
        return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at,
                           "VCD line %u: empty token inside %s", ps->t.line, where);
    return TROWEL_OK;
}

/* atof / atoi as the engine reads numbers: a leading numeric prefix, else 0. */
static float tok_float(const parser *ps)
{
    return (float)strtod(ps->t.text, NULL);
}

static int tok_int(const parser *ps)
{
    errno = 0;
    long v = strtol(ps->t.text, NULL, 10);
    if (v > INT32_MAX)
        return INT32_MAX;
    if (v < INT32_MIN)
        return INT32_MIN;
    return (int)v;
}

static trowel_status next_float(parser *ps, float *v)
{
    trowel_status st = need(ps, false, "a line");
    if (st == TROWEL_OK)
        *v = tok_float(ps);
    return st;
}

static trowel_status parse_curve_name(parser *ps, uint16_t *curve)
{
    if (!choreo_curve_for_name(ps->t.text, curve))
        return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at,
                           "VCD line %u: curve type \"%.60s\" lacks \"_to_curve_\"", ps->t.line,
                           ps->t.text);
    return TROWEL_OK;
}

/* "leftedge|rightedge curve zero", then the next token (any line). */
static trowel_status parse_edge(parser *ps, choreo_edge *edge)
{
    trowel_status st = need(ps, false, "an edge");
    if (st == TROWEL_OK)
        st = parse_curve_name(ps, &edge->curve);
    if (st == TROWEL_OK)
        st = next_float(ps, &edge->zero);
    if (st == TROWEL_OK)
        st = need(ps, true, "a curve");
    edge->active = true;
    return st;
}

/* A ramp (event_ramp, scene_ramp): optional edges, { time value [curve] }.
 * The engine clears the ramp first, then sorts and prunes it. */
static trowel_status parse_curve(parser *ps, choreo_curve *c, bool scene_level, choreo_event *e)
{
    c->n = 0;
    c->edge[0].active = c->edge[1].active = false;
    trowel_status st = need(ps, true, "a ramp");
    if (st == TROWEL_OK && is(ps, "leftedge"))
        st = parse_edge(ps, &c->edge[0]);
    if (st == TROWEL_OK && is(ps, "rightedge"))
        st = parse_edge(ps, &c->edge[1]);
    if (st == TROWEL_OK)
        st = expect_brace(ps);
    for (bool closed = false; st == TROWEL_OK;) {
        if ((st = block_item(ps, "a ramp", &closed)) != TROWEL_OK || closed)
            break;
        float time = tok_float(ps), value;
        uint16_t curve = CHOREO_CURVE_DEFAULT;
        if ((st = next_float(ps, &value)) != TROWEL_OK)
            break;
        if (tok_available(&ps->t)) {
            if ((st = need(ps, false, "a ramp")) != TROWEL_OK || (st = parse_curve_name(ps, &curve)) != TROWEL_OK)
                break;
        }
        st = choreo_curve_push(ps->t.ctx, c, time, value, curve);
    }
    if (st == TROWEL_OK)
        choreo_curve_resort(c, scene_level ? choreo_stop_time(ps->s) : choreo_event_duration(e));
    return st;
}

static trowel_status parse_tag_block(parser *ps, choreo_tags *tags, int kind)
{
    /* kind 0: relative tags (name pct), 1: timing (name pct locked), 2: absolute */
    trowel_status st = need(ps, true, "tags");
    if (st == TROWEL_OK)
        st = expect_brace(ps);
    for (bool closed = false; st == TROWEL_OK;) {
        if ((st = block_item(ps, "tags", &closed)) != TROWEL_OK || closed)
            break;
        char *name;
        if ((st = choreo_dup(ps->t.ctx, ps->t.text, &name)) != TROWEL_OK)
            return st;
        float v = 0;
        int locked = 0;
        st = next_float(ps, &v);
        if (st == TROWEL_OK && kind == 1 && (st = need(ps, false, "a timing tag")) == TROWEL_OK)
            locked = tok_int(ps);
        if (st == TROWEL_OK)
            st = choreo_tags_push(ps->s, tags, name, v, locked != 0);
        trowel_mem_free(ps->t.ctx, name);
        if (st == TROWEL_OK && kind != 0)
            choreo_tags_sort(tags);
    }
    return st;
}

static void free_tracks(trowel_ctx *ctx, choreo_event *e)
{
    for (size_t i = 0; i < e->ntracks; i++) { /* names stay in the scene's arena */
        trowel_mem_free(ctx, e->tracks[i].samples[0].s);
        trowel_mem_free(ctx, e->tracks[i].samples[1].s);
    }
    e->ntracks = 0;
}

/* One track's sample lists, { time value [curve] } (twice for combo). */
static trowel_status parse_track_samples(parser *ps, choreo_curve *list, bool realtime,
                                         float event_time, uint16_t def)
{
    trowel_status st = expect_brace(ps);
    for (bool closed = false; st == TROWEL_OK;) {
        if ((st = block_item(ps, "flex animation data", &closed)) != TROWEL_OK || closed)
            break;
        float time = tok_float(ps), value;
        if ((st = next_float(ps, &value)) != TROWEL_OK)
            break;
        uint16_t curve = def;
        if (tok_available(&ps->t) &&
            ((st = need(ps, false, "a sample")) != TROWEL_OK || (st = parse_curve_name(ps, &curve)) != TROWEL_OK))
            break;
        /* old files give times as fractions of the event */
        st = choreo_curve_push(ps->t.ctx, list, realtime ? time : time * event_time, value, curve);
    }
    return st;
}

static trowel_status parse_default_curve(parser *ps, uint16_t *def)
{
    char rest[MAXTOKEN];
    snprintf(rest, sizeof rest, "%s", ps->t.text + 16);
    trowel_status st = TROWEL_OK;
    if (!rest[0]) {
        if ((st = need(ps, true, "flexanimations")) != TROWEL_OK)
            return st;
        snprintf(rest, sizeof rest, "%s", ps->t.text);
    }
    if (rest[0] != '=')
        return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at, "VCD line %u: expecting =",
                           ps->t.line);
    const char *p = rest + 1;
    char name[MAXTOKEN];
    if (!*p) {
        if ((st = need(ps, true, "flexanimations")) != TROWEL_OK)
            return st;
        p = ps->t.text;
    }
    snprintf(name, sizeof name, "%s", p);
    if (!choreo_curve_for_name(name, def))
        return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at,
                           "VCD line %u: bad default curve type", ps->t.line);
    return need(ps, true, "flexanimations");
}

static trowel_status parse_one_track(parser *ps, choreo_event *e, bool realtime, float event_time,
                                     uint16_t def)
{
    char *name;
    trowel_status st = choreo_dup(ps->t.ctx, ps->t.text, &name);
    if (st != TROWEL_OK)
        return st;
    bool active = true, combo = false;
    float mn = 0.0f, mx = 1.0f;
    choreo_edge edge[2] = {{false, 0, 0.0f}, {false, 0, 0.0f}};
    choreo_curve lists[2];
    memset(lists, 0, sizeof lists);
    st = need(ps, true, "a flex track");
    if (st == TROWEL_OK && is(ps, "disabled")) {
        active = false;
        st = need(ps, true, "a flex track");
    }
    if (st == TROWEL_OK && is(ps, "combo")) {
        combo = true;
        st = need(ps, true, "a flex track");
    }
    if (st == TROWEL_OK && is(ps, "range") && (st = next_float(ps, &mn)) == TROWEL_OK &&
        (st = next_float(ps, &mx)) == TROWEL_OK)
        st = need(ps, true, "a flex track");
    if (st == TROWEL_OK && is(ps, "leftedge"))
        st = parse_edge(ps, &edge[0]);
    if (st == TROWEL_OK && is(ps, "rightedge"))
        st = parse_edge(ps, &edge[1]);
    for (int k = 0; k < (combo ? 2 : 1) && st == TROWEL_OK; k++) {
        st = parse_track_samples(ps, &lists[k], realtime, event_time, def);
        if (st == TROWEL_OK && combo && k == 0)
            st = need(ps, true, "a combo track");
    }
    if (st == TROWEL_OK && (active || lists[0].n >= 1)) {
        choreo_track *t;
        if ((st = choreo_track_add(ps->s, e, name, &t)) == TROWEL_OK) {
            t->active = active;
            t->combo = combo;
            t->min = mn;
            t->max = mx;
            t->samples[0] = lists[0];
            t->samples[1] = lists[1];
            memset(lists, 0, sizeof lists);
            t->samples[0].edge[0] = edge[0];
            t->samples[0].edge[1] = edge[1];
            choreo_track_resort(e, t, 0);
            choreo_track_resort(e, t, 1);
        }
    }
    trowel_mem_free(ps->t.ctx, lists[0].s);
    trowel_mem_free(ps->t.ctx, lists[1].s);
    trowel_mem_free(ps->t.ctx, name);
    return st;
}

static trowel_status parse_flex(parser *ps, choreo_event *e)
{
    free_tracks(ps->t.ctx, e);
    bool realtime = false;
    float event_time = e->end - e->start; /* as the engine: even without an end */
    uint16_t def = CHOREO_CURVE_DEFAULT;
    trowel_status st = need(ps, true, "flexanimations");
    if (st == TROWEL_OK && is(ps, "samples_use_time")) {
        realtime = true;
        st = need(ps, true, "flexanimations");
    }
    if (st == TROWEL_OK && ps->t.len >= 16) {
        char head[17];
        memcpy(head, ps->t.text, 16);
        head[16] = 0;
        if (choreo_ascii_casecmp(head, "defaultcurvetype") == 0) {
            st = parse_default_curve(ps, &def);
            e->default_curve = def;
        }
    }
    if (st == TROWEL_OK)
        st = expect_brace(ps);
    for (bool closed = false; st == TROWEL_OK;) {
        if ((st = block_item(ps, "flexanimations", &closed)) != TROWEL_OK || closed)
            break;
        st = parse_one_track(ps, e, realtime, event_time, def);
    }
    return st;
}

static trowel_status set_param(parser *ps, choreo_event *e, int which)
{
    trowel_status st = need(ps, false, "a parameter");
    if (st != TROWEL_OK)
        return st;
    if (which > 0 && ps->t.len > 0 && ps->t.text[ps->t.len - 1] == ' ')
        ps->t.text[--ps->t.len] = 0; /* the engine drops one trailing space */
    return choreo_set_str(ps->s, &e->param[which], ps->t.text);
}

/* Converts an old "ramp attack sustain decay" into ramp samples, as the
 * engine does when the event has no new-style ramp. */
static trowel_status convert_old_ramp(parser *ps, choreo_event *e, const float asd[3])
{
    if (e->ramp.n || (asd[0] == 1.0f && asd[1] == 1.0f && asd[2] == 1.0f))
        return TROWEL_OK;
    float d = choreo_event_duration(e);
    float attack = (1.0f - asd[0]) * d, decay = asd[2] * d, mid = (attack + decay) * 0.5f;
    trowel_status st = choreo_curve_push(ps->t.ctx, &e->ramp, attack, asd[1], 0);
    if (st == TROWEL_OK)
        st = choreo_curve_push(ps->t.ctx, &e->ramp, mid, asd[1], 0);
    if (st == TROWEL_OK)
        st = choreo_curve_push(ps->t.ctx, &e->ramp, decay, asd[1], 0);
    if (st == TROWEL_OK)
        choreo_curve_resort(&e->ramp, d);
    return st;
}

static bool event_flag(parser *ps, choreo_event *e)
{
    if (is(ps, "resumecondition"))
        e->resume = true;
    else if (is(ps, "fixedlength"))
        e->fixedlength = true;
    else if (is(ps, "lockbodyfacing"))
        e->lockbody = true;
    else if (is(ps, "forceshortmovement"))
        e->forceshort = true;
    else if (is(ps, "synctofollowinggesture"))
        e->sync = true;
    else if (is(ps, "playoverscript"))
        e->playover = true;
    else if (is(ps, "cc_usingcombinedfile"))
        e->cc_combined = true;
    else if (is(ps, "cc_combinedusesgender"))
        e->cc_gender = true;
    else if (is(ps, "cc_noattenuate"))
        e->cc_noatten = true;
    else
        return false;
    return true;
}

static trowel_status parse_event_item(parser *ps, choreo_event *e, bool *hadramp, float asd[3])
{
    trowel_status st = TROWEL_OK;
    if (event_flag(ps, e))
        return TROWEL_OK;
    if (is(ps, "time")) {
        float start, end = 1.0f;
        if ((st = next_float(ps, &start)) != TROWEL_OK)
            return st;
        if (tok_available(&ps->t) && (st = next_float(ps, &end)) != TROWEL_OK)
            return st;
        choreo_event_set_start(e, start);
        choreo_event_set_end(e, end);
    } else if (is(ps, "ramp")) {
        *hadramp = true;
        if ((st = next_float(ps, &asd[0])) == TROWEL_OK && tok_available(&ps->t))
            st = next_float(ps, &asd[1]);
        if (st == TROWEL_OK && tok_available(&ps->t))
            st = next_float(ps, &asd[2]);
    } else if (is(ps, "param")) {
        st = set_param(ps, e, 0);
    } else if (is(ps, "param2")) {
        st = set_param(ps, e, 1);
    } else if (is(ps, "param3")) {
        st = set_param(ps, e, 2);
    } else if (is(ps, "pitch") || is(ps, "yaw") || is(ps, "loopcount") || is(ps, "active")) {
        int key = is(ps, "pitch") ? 0 : is(ps, "yaw") ? 1 : is(ps, "loopcount") ? 2 : 3;
        if ((st = need(ps, false, "a value")) != TROWEL_OK)
            return st;
        int v = tok_int(ps);
        if (key == 0)
            e->pitch = v;
        else if (key == 1)
            e->yaw = v;
        else if (key == 2)
            e->loopcount = v < -1 ? -1 : v;
        else
            e->active = v != 0;
    } else if (is(ps, "distancetotarget")) {
        st = next_float(ps, &e->distance);
    } else if (is(ps, "sequenceduration")) {
        st = next_float(ps, &e->seqdur);
    } else if (is(ps, "tags")) {
        st = parse_tag_block(ps, &e->rel, 0);
    } else if (is(ps, "flextimingtags")) {
        st = parse_tag_block(ps, &e->timing, 1);
    } else if (is(ps, "absolutetags")) {
        if ((st = need(ps, true, "absolutetags")) != TROWEL_OK)
            return st;
        int which = is(ps, "playback_time") ? 0 : is(ps, "shifted_time") ? 1 : -1;
        if (which < 0)
            return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at,
                               "VCD line %u: absolutetags needs playback_time or shifted_time",
                               ps->t.line);
        st = parse_tag_block(ps, &e->abs[which], 2);
    } else if (is(ps, "relativetag")) {
        if ((st = need(ps, false, "relativetag")) == TROWEL_OK &&
            (st = choreo_set_str(ps->s, &e->tag_name, ps->t.text)) == TROWEL_OK &&
            (st = need(ps, false, "relativetag")) == TROWEL_OK)
            st = choreo_set_str(ps->s, &e->tag_wav, ps->t.text);
        e->uses_tag = true;
    } else if (is(ps, "flexanimations")) {
        st = parse_flex(ps, e);
    } else if (is(ps, "event_ramp")) {
        st = parse_curve(ps, &e->ramp, false, e);
    } else if (is(ps, "cctype")) {
        if ((st = need(ps, false, "cctype")) == TROWEL_OK)
            e->cctype = choreo_cc_for_name(ps->t.text);
    } else if (is(ps, "cctoken")) {
        if ((st = need(ps, false, "cctoken")) == TROWEL_OK)
            st = choreo_set_str(ps->s, &e->cctoken, ps->t.text);
    }
    /* anything else: ignored, as the engine ignores it */
    return st;
}

static trowel_status parse_event(parser *ps, choreo_channel *channel)
{
    choreo_event *e;
    trowel_status st = choreo_event_new(ps->s, &e);
    if (st != TROWEL_OK)
        return st;
    st = need(ps, false, "an event");
    if (st != TROWEL_OK)
        return st;
    choreo_event_set_type(e, choreo_type_for_name(ps->t.text));
    if ((st = need(ps, false, "an event")) != TROWEL_OK ||
        (st = choreo_set_str(ps->s, &e->name, ps->t.text)) != TROWEL_OK ||
        (st = need(ps, true, "an event")) != TROWEL_OK || (st = expect_brace(ps)) != TROWEL_OK)
        return st;
    bool hadramp = false;
    float asd[3] = {1.0f, 1.0f, 1.0f};
    for (bool closed = false;;) {
        if ((st = block_item(ps, "an event", &closed)) != TROWEL_OK || closed)
            break;
        if ((st = parse_event_item(ps, e, &hadramp, asd)) != TROWEL_OK)
            break;
    }
    if (st != TROWEL_OK)
        return st;
    if (channel) {
        e->in_actor = true;
        if ((st = choreo_channel_push(ps->s, channel, e)) != TROWEL_OK)
            return st;
    }
    return hadramp ? convert_old_ramp(ps, e, asd) : TROWEL_OK;
}

static trowel_status parse_channel(parser *ps, choreo_actor *a)
{
    choreo_channel *c;
    trowel_status st = choreo_channel_add(ps->s, a, &c);
    if (st != TROWEL_OK)
        return st;
    st = need(ps, false, "a channel");
    if (st == TROWEL_OK)
        st = choreo_set_str(ps->s, &c->name, ps->t.text);
    if (st == TROWEL_OK && (st = need(ps, true, "a channel")) == TROWEL_OK)
        st = expect_brace(ps);
    for (bool eof; st == TROWEL_OK;) {
        if ((st = tok_next(&ps->t, true, &eof)) != TROWEL_OK)
            break;
        if (eof)
            return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "VCD ends inside a channel");
        if (!strcmp(ps->t.text, "}"))
            break;
        if (is(ps, "event")) {
            st = parse_event(ps, c);
        } else if (is(ps, "active")) {
            if ((st = need(ps, true, "a channel")) == TROWEL_OK)
                c->active = tok_int(ps) != 0;
        } else {
            return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at,
                               "VCD line %u: expecting event, found \"%.40s\"", ps->t.line, ps->t.text);
        }
    }
    return st;
}

static trowel_status parse_actor(parser *ps)
{
    choreo_actor *a;
    trowel_status st = choreo_actor_add(ps->s, &a);
    if (st != TROWEL_OK)
        return st;
    size_t index = ps->s->nactors - 1;
    st = need(ps, false, "an actor");
    if (st == TROWEL_OK)
        st = choreo_set_str(ps->s, &a->name, ps->t.text);
    if (st == TROWEL_OK && (st = need(ps, true, "an actor")) == TROWEL_OK)
        st = expect_brace(ps);
    for (bool eof; st == TROWEL_OK;) {
        a = &ps->s->actors[index];
        if ((st = tok_next(&ps->t, true, &eof)) != TROWEL_OK)
            break;
        if (eof)
            return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "VCD ends inside an actor");
        if (!strcmp(ps->t.text, "}"))
            break;
        if (is(ps, "channel")) {
            st = parse_channel(ps, a);
        } else if (is(ps, "faceposermodel")) {
            if ((st = need(ps, true, "an actor")) == TROWEL_OK)
                st = choreo_set_str(ps->s, &a->model, ps->t.text);
        } else if (is(ps, "active")) {
            if ((st = need(ps, true, "an actor")) == TROWEL_OK)
                a->active = tok_int(ps) != 0;
        } else {
            return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at,
                               "VCD line %u: expecting channel, found \"%.40s\"", ps->t.line, ps->t.text);
        }
    }
    return st;
}

static trowel_status parse_scales(parser *ps)
{
    choreo_scene *s = ps->s;
    trowel_status st = need(ps, true, "scalesettings");
    if (st == TROWEL_OK)
        st = expect_brace(ps);
    for (bool closed = false; st == TROWEL_OK;) {
        if ((st = block_item(ps, "scalesettings", &closed)) != TROWEL_OK || closed)
            break;
        size_t i = 0; /* a tool named again keeps its first spelling */
        while (i < s->nscales && choreo_ascii_casecmp(s->scales[i].tool, ps->t.text) != 0)
            i++;
        char *tool = NULL; /* a new tool's name, in the scene's arena */
        if (i == s->nscales && (st = choreo_scene_str(s, ps->t.text, &tool)) != TROWEL_OK)
            return st;
        if ((st = need(ps, false, "scalesettings")) != TROWEL_OK)
            break;
        int v = tok_int(ps);
        if (v <= 0)
            v = 100;
        if (i < s->nscales) {
            s->scales[i].value = v;
            continue;
        }
        if ((st = choreo_grow(ps->t.ctx, (void **)&s->scales, &s->scale_cap, s->nscales + 1,
                              sizeof *s->scales)) != TROWEL_OK)
            break;
        s->scales[s->nscales++] = (choreo_scale){tool, v};
    }
    return st;
}

static trowel_status parse_top(parser *ps)
{
    choreo_scene *s = ps->s;
    for (;;) {
        bool eof;
        trowel_status st = tok_next(&ps->t, true, &eof);
        if (st != TROWEL_OK || eof)
            return st;
        if (ps->t.len == 0)
            return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at,
                               "VCD line %u: empty token at the top level", ps->t.line);
        if (is(ps, "event")) {
            st = parse_event(ps, NULL);
        } else if (is(ps, "actor")) {
            st = parse_actor(ps);
        } else if (is(ps, "mapname")) {
            if ((st = need(ps, true, "mapname")) == TROWEL_OK)
                st = choreo_set_str(ps->s, &s->mapname, ps->t.text);
        } else if (is(ps, "fps")) {
            if ((st = need(ps, true, "fps")) == TROWEL_OK) {
                int v = tok_int(ps);
                s->fps = v < 10 ? 10 : v > 240 ? 240 : v;
            }
        } else if (is(ps, "snap") || is(ps, "ignorePhonemes")) {
            bool snap = is(ps, "snap");
            if ((st = need(ps, true, "a setting")) == TROWEL_OK) {
                if (snap)
                    s->snap = is(ps, "on");
                else
                    s->ignore_phonemes = is(ps, "on");
            }
        } else if (is(ps, "scene_ramp")) {
            st = parse_curve(ps, &s->ramp, true, NULL);
        } else if (is(ps, "scalesettings")) {
            st = parse_scales(ps);
        } else {
            return trowel_fail(ps->t.ctx, TROWEL_ERR_CORRUPT, ps->t.at,
                               "VCD line %u: unexpected token \"%.40s\"", ps->t.line, ps->t.text);
        }
        if (st != TROWEL_OK)
            return st;
    }
}

/* "// bvcd source crc XXXXXXXX" among the comment lines that open the file
 * (our writer puts it there for scenes decompiled from BVCD). */
static void find_crc_comment(choreo_scene *s, const uint8_t *p, size_t n)
{
    static const char key[] = "// bvcd source crc ";
    size_t i = 0;
    while (i < n) {
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
            i++;
        if (i + 1 >= n || p[i] != '/' || p[i + 1] != '/')
            return;
        size_t k = sizeof key - 1;
        if (n - i > k + 8 && memcmp(p + i, key, k) == 0) {
            uint32_t v = 0;
            size_t j = 0;
            for (; j < 8; j++) {
                int c = p[i + k + j], d = c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
                if (d < 0)
                    break;
                v = v << 4 | (uint32_t)d;
            }
            if (j == 8) {
                s->source_crc = v;
                s->has_crc = true;
                return;
            }
        }
        while (i < n && p[i] != '\n')
            i++;
    }
}

trowel_status choreo_parse_vcd(trowel_ctx *ctx, trowel_reader *text, choreo_scene **out)
{
    *out = NULL;
    uint64_t base = trowel_reader_abs(text); /* load reads from the cursor on */
    uint8_t *data = NULL;
    size_t size = 0;
    trowel_status st = trowel_reader_load(text, &data, &size);
    if (st != TROWEL_OK)
        return st;
    parser *ps = NULL;
    choreo_scene *s = NULL;
    if ((st = trowel_mem_new_zeroed(ctx, 1, sizeof *ps, &ps)) != TROWEL_OK ||
        (st = choreo_scene_new(ctx, &s)) != TROWEL_OK)
        goto done;
    ps->t.ctx = ctx;
    ps->t.buf = ps->t.p = data;
    ps->t.end = data + size;
    ps->t.base = base;
    ps->t.line = 1;
    ps->s = s;
    find_crc_comment(s, data, size);
    st = parse_top(ps);
    if (st == TROWEL_OK) {
        choreo_reconcile_tags(s);
        /* gesture reconciling needs entry/exit tags, never set from text */
        st = choreo_reconcile_close_captions(s);
    }
done:
    trowel_mem_free(ctx, ps);
    trowel_mem_free(ctx, data);
    if (st != TROWEL_OK) {
        choreo_scene_free(ctx, s);
        return st;
    }
    *out = s;
    return TROWEL_OK;
}

/* ================================================================ writer */

typedef struct outbuf {
    trowel_ctx *ctx;
    trowel_sink *sink;
    char buf[CHOREO_VCD_WRITE_SIZE];
    size_t len;
    trowel_status st;
} outbuf;

static void ob_flush(outbuf *o)
{
    if (o->st == TROWEL_OK && o->len)
        o->st = trowel_sink_write(o->sink, o->buf, o->len);
    o->len = 0;
}

/* The writer puts a scene out a few bytes at a time, mostly literals: its
 * common case is inlined, so that the copy of a literal is a move or two
 * instead of a call. */
#if defined(__GNUC__)
#define OB_INLINE static inline __attribute__((always_inline))
#else
#define OB_INLINE static inline
#endif

/* What does not fit: flushed and copied a buffer at a time. */
static void ob_put_rest(outbuf *o, const char *s, size_t n)
{
    while (n && o->st == TROWEL_OK) {
        if (o->len == sizeof o->buf)
            ob_flush(o);
        size_t k = sizeof o->buf - o->len;
        if (k > n)
            k = n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
    }
}

OB_INLINE void ob_put(outbuf *o, const char *s, size_t n)
{
    if (n <= sizeof o->buf - o->len) { /* the common case: it fits */
        memcpy(o->buf + o->len, s, n);
        o->len += n;
        return;
    }
    ob_put_rest(o, s, n);
}

OB_INLINE void ob_str(outbuf *o, const char *s) { ob_put(o, s, strlen(s)); }

static void ob_indent(outbuf *o, int level)
{
    static const char spaces[] = "                                ";
    size_t n = level > 0 ? 2 * (size_t)level : 0;
    for (size_t k; n; n -= k) {
        k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        ob_put(o, spaces, k);
    }
}

/* An int in decimal, as "%d" writes it: scenes hold many, and printf's
 * machinery costs more than the digits. */
static void ob_int(outbuf *o, int v)
{
    char tmp[sizeof(int) * 3 + 2]; /* digits, a sign */
    size_t i = sizeof tmp;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do
        tmp[--i] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        tmp[--i] = '-';
    ob_put(o, tmp + i, sizeof tmp - i);
}

/* An int between two strings ("pitch \"", v, "\"\n"). */
static void ob_int_between(outbuf *o, const char *before, int v, const char *after)
{
    ob_str(o, before);
    ob_int(o, v);
    ob_str(o, after);
}

/* Would s read back whole as an unquoted token? */
static bool bare_token_ok(const char *s)
{
    const uint8_t *p = (const uint8_t *)s;
    if (!*p || *p == '"' || *p == '#' || (p[0] == '/' && (p[1] == '/' || p[1] == '*')))
        return false;
    for (; *p; p++)
        if (is_blank(*p) || *p == ';')
            return false;
    return true;
}

/* A quoted string (with one space added when pad); the format has no
 * escapes, so '"' cannot be written. */
static void ob_quoted_pad(outbuf *o, const char *s, bool pad)
{
    s = s ? s : "";
    if (strchr(s, '"')) {
        /* an unquoted token may hold a '"' after its first byte */
        if (!pad && bare_token_ok(s)) {
            ob_str(o, s);
            return;
        }
        if (o->st == TROWEL_OK)
            o->st = trowel_fail(o->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                                "the string \"%.60s\" holds a double quote, which VCD text cannot hold", s);
        return;
    }
    ob_put(o, "\"", 1);
    ob_str(o, s);
    ob_str(o, pad ? " \"" : "\"");
}

static void ob_quoted(outbuf *o, const char *s) { ob_quoted_pad(o, s, false); }

static void ob_float(outbuf *o, float v, int min_dec)
{
    char tmp[64];
    choreo_format_float(tmp, sizeof tmp, v, min_dec);
    ob_str(o, tmp);
}

/* A value the BVCD stores as trunc(v * scale): from binary, the middle of
 * its step; from text, exactly as parsed. */
static void ob_quant(outbuf *o, const choreo_scene *s, float v, float scale, int dec)
{
    if (!s->from_binary) {
        ob_float(o, v, dec);
        return;
    }
    double x = (double)v * scale + 0.5; /* v is k / scale, 0 <= k <= 65535 */
    double k = (x > 0.0 && x < 1e9) ? (double)(long)x : 0.0; /* floor without libm */
    double mid = (k + 0.5) / scale;
    if (k >= 255.0 && scale == 255.0f)
        mid = k / scale; /* the top step: 1.0 itself truncates back to 255 */
    char tmp[64];
    choreo_format_fixed(tmp, sizeof tmp, mid, dec);
    ob_str(o, tmp);
}

static void write_curve_name(outbuf *o, uint16_t curve)
{
    unsigned l = curve >> 8, r = curve & 0xFF;
    if ((l >= CHOREO_INTERP_COUNT || r >= CHOREO_INTERP_COUNT) && o->st == TROWEL_OK)
        trowel_warn(o->ctx, TROWEL_NO_OFFSET, "curve type 0x%04x has no name; written as default", curve);
    ob_str(o, "curve_");
    ob_str(o, choreo_interp_name(l));
    ob_str(o, "_to_curve_");
    ob_str(o, choreo_interp_name(r));
}

static void write_edges(outbuf *o, const choreo_edge edge[2], bool trailing_space)
{
    for (int i = 0; i < 2; i++) {
        if (!edge[i].active)
            continue;
        ob_str(o, trailing_space ? (i ? "rightedge " : "leftedge ") : (i ? " rightedge " : " leftedge "));
        write_curve_name(o, edge[i].curve);
        ob_put(o, " ", 1);
        ob_float(o, edge[i].zero, 3);
        if (trailing_space)
            ob_put(o, " ", 1);
    }
}

static void write_ramp(outbuf *o, const choreo_scene *s, const choreo_curve *c, int level, const char *name)
{
    ob_indent(o, level);
    ob_str(o, name);
    write_edges(o, c->edge, false);
    ob_put(o, "\n", 1);
    ob_indent(o, level);
    ob_str(o, "{\n");
    for (size_t i = 0; i < c->n; i++) {
        ob_indent(o, level + 1);
        ob_float(o, c->s[i].time, 4);
        ob_put(o, " ", 1);
        ob_quant(o, s, c->s[i].value, 255.0f, 4);
        if (c->s[i].curve != CHOREO_CURVE_DEFAULT) {
            ob_str(o, " \"");
            write_curve_name(o, c->s[i].curve);
            ob_str(o, "\"");
        }
        ob_put(o, "\n", 1);
    }
    ob_indent(o, level);
    ob_str(o, "}\n");
}

static void write_tags(outbuf *o, const choreo_scene *s, const choreo_tags *t, int level,
                       const char *head, int kind)
{
    if (!t->n)
        return;
    ob_indent(o, level);
    ob_str(o, head);
    ob_put(o, "\n", 1);
    ob_indent(o, level);
    ob_str(o, "{\n");
    for (size_t i = 0; i < t->n; i++) {
        ob_indent(o, level + 1);
        ob_quoted(o, t->t[i].name);
        ob_put(o, " ", 1);
        ob_quant(o, s, t->t[i].value, kind == 2 ? 4096.0f : 255.0f, 6);
        if (kind == 1)
            ob_str(o, t->t[i].locked ? " 1" : " 0");
        ob_put(o, "\n", 1);
    }
    ob_indent(o, level);
    ob_str(o, "}\n");
}

/* The default curve the text declares: a sample whose curve is "default"
 * (0) can only be written when the declared default is 0 too. */
static uint16_t flex_default(const choreo_event *e)
{
    for (size_t i = 0; i < e->ntracks; i++)
        for (int k = 0; k < 2; k++)
            for (size_t j = 0; j < e->tracks[i].samples[k].n; j++)
                if (e->tracks[i].samples[k].s[j].curve == CHOREO_CURVE_DEFAULT)
                    return CHOREO_CURVE_DEFAULT;
    return e->default_curve;
}

static void write_samples(outbuf *o, const choreo_scene *s, const choreo_curve *c, int level, uint16_t def)
{
    ob_indent(o, level);
    ob_str(o, "{\n");
    for (size_t j = 0; j < c->n; j++) {
        ob_indent(o, level + 1);
        ob_float(o, c->s[j].time, 4);
        ob_put(o, " ", 1);
        ob_quant(o, s, c->s[j].value, 255.0f, 4);
        if (c->s[j].curve != def) {
            ob_str(o, " \"");
            write_curve_name(o, c->s[j].curve);
            ob_str(o, "\"");
        }
        ob_put(o, "\n", 1);
    }
    ob_indent(o, level);
    ob_str(o, "}\n");
}

static void write_flex(outbuf *o, const choreo_scene *s, const choreo_event *e, int level)
{
    uint16_t def = flex_default(e);
    ob_indent(o, level + 1);
    ob_str(o, "flexanimations samples_use_time");
    if (def != CHOREO_CURVE_DEFAULT) {
        ob_str(o, " defaultcurvetype=");
        write_curve_name(o, def);
    }
    ob_put(o, "\n", 1);
    ob_indent(o, level + 1);
    ob_str(o, "{\n");
    for (size_t i = 0; i < e->ntracks; i++) {
        const choreo_track *t = &e->tracks[i];
        if (!t->active && t->samples[0].n == 0)
            continue;
        ob_indent(o, level + 2);
        ob_quoted(o, t->name);
        ob_put(o, " ", 1);
        if (!t->active)
            ob_str(o, "disabled ");
        if (t->combo)
            ob_str(o, "combo ");
        if (t->min != 0.0f || t->max != 1.0f) {
            ob_str(o, "range ");
            ob_float(o, t->min, 1);
            ob_put(o, " ", 1);
            ob_float(o, t->max, 1);
            ob_put(o, " ", 1);
        }
        write_edges(o, t->samples[0].edge, true);
        ob_put(o, "\n", 1);
        write_samples(o, s, &t->samples[0], level + 2, def);
        if (t->combo)
            write_samples(o, s, &t->samples[1], level + 2, def);
    }
    ob_indent(o, level + 1);
    ob_str(o, "}\n");
}

static void write_line(outbuf *o, int level, const char *text)
{
    ob_indent(o, level);
    ob_str(o, text);
    ob_put(o, "\n", 1);
}

static void write_event(outbuf *o, const choreo_scene *s, const choreo_event *e, int level)
{
    int in = level + 1;
    ob_indent(o, level);
    ob_str(o, "event ");
    ob_str(o, choreo_type_name(e->type));
    ob_put(o, " ", 1);
    ob_quoted(o, e->name);
    ob_put(o, "\n", 1);
    write_line(o, level, "{");
    ob_indent(o, in);
    ob_str(o, "time ");
    ob_float(o, e->start, 6);
    ob_put(o, " ", 1);
    ob_float(o, e->end, 6);
    ob_str(o, "\n");
    for (int i = 0; i < 3; i++) {
        const char *p = e->param[i] ? e->param[i] : "";
        if (i > 0 && !*p)
            continue;
        ob_indent(o, in);
        ob_str(o, i == 0 ? "param " : i == 1 ? "param2 " : "param3 ");
        size_t n = strlen(p);
        /* parsing drops one trailing space of param2/3: give it one to drop */
        ob_quoted_pad(o, p, i > 0 && n && p[n - 1] == ' ');
        ob_put(o, "\n", 1);
    }
    if (e->ramp.n)
        write_ramp(o, s, &e->ramp, in, "event_ramp");
    if (e->pitch) {
        ob_indent(o, in);
        ob_int_between(o, "pitch \"", e->pitch, "\"\n");
    }
    if (e->yaw) {
        ob_indent(o, in);
        ob_int_between(o, "yaw \"", e->yaw, "\"\n");
    }
    if (e->resume)
        write_line(o, in, "resumecondition");
    if (e->lockbody)
        write_line(o, in, "lockbodyfacing");
    if (e->distance != 0.0f) { /* Faceposer writes only positive ones */
        ob_indent(o, in);
        ob_str(o, "distancetotarget ");
        ob_float(o, e->distance, 2);
        ob_put(o, "\n", 1);
    }
    if (e->forceshort)
        write_line(o, in, "forceshortmovement");
    if (e->sync)
        write_line(o, in, "synctofollowinggesture");
    if (!e->active)
        write_line(o, in, "active 0");
    if (e->playover)
        write_line(o, in, "playoverscript");
    if (e->fixedlength)
        write_line(o, in, "fixedlength");
    write_tags(o, s, &e->rel, in, "tags", 0);
    write_tags(o, s, &e->timing, in, "flextimingtags", 1);
    write_tags(o, s, &e->abs[0], in, "absolutetags playback_time", 2);
    write_tags(o, s, &e->abs[1], in, "absolutetags shifted_time", 2);
    if (e->type == CHOREO_GESTURE && e->seqdur != 0.0f) {
        ob_indent(o, in);
        ob_str(o, "sequenceduration ");
        ob_float(o, e->seqdur, 6);
        ob_put(o, "\n", 1);
    }
    if (e->uses_tag) {
        ob_indent(o, in);
        ob_str(o, "relativetag ");
        ob_quoted(o, e->tag_name);
        ob_put(o, " ", 1);
        ob_quoted(o, e->tag_wav);
        ob_put(o, "\n", 1);
    }
    if (e->ntracks)
        write_flex(o, s, e, level);
    if (e->type == CHOREO_LOOP) {
        ob_indent(o, in);
        ob_int_between(o, "loopcount \"", e->loopcount, "\"\n");
    }
    if (e->type == CHOREO_SPEAK) {
        ob_indent(o, in);
        ob_str(o, "cctype \"");
        ob_str(o, choreo_cc_name(e->cctype));
        ob_str(o, "\"\n");
        ob_indent(o, in);
        ob_str(o, "cctoken ");
        ob_quoted(o, e->cctoken);
        ob_put(o, "\n", 1);
        if (e->cctype != CHOREO_CC_DISABLED && e->cc_combined)
            write_line(o, in, "cc_usingcombinedfile");
        if (e->cc_gender)
            write_line(o, in, "cc_combinedusesgender");
        if (e->cc_noatten)
            write_line(o, in, "cc_noattenuate");
    }
    write_line(o, level, "}");
}

static void write_actor(outbuf *o, const choreo_scene *s, const choreo_actor *a)
{
    ob_str(o, "actor ");
    ob_quoted(o, a->name);
    ob_str(o, "\n{\n");
    for (size_t j = 0; j < a->n; j++) {
        const choreo_channel *c = &a->ch[j];
        ob_str(o, "  channel ");
        ob_quoted(o, c->name);
        ob_str(o, "\n  {\n");
        for (size_t k = 0; k < c->n; k++)
            write_event(o, s, c->ev[k], 2);
        if (!c->active)
            write_line(o, 2, "active \"0\"");
        write_line(o, 1, "}");
    }
    if (a->model && a->model[0]) {
        ob_str(o, "  faceposermodel ");
        ob_quoted(o, a->model);
        ob_put(o, "\n", 1);
    }
    if (!a->active)
        write_line(o, 1, "active \"0\"");
    ob_str(o, "}\n\n");
}

/* "// bvcd source crc %08x\n", written directly (every scene has one):
 * the CRC's bytes, most significant first, as hex. */
static void write_crc_line(outbuf *o, uint32_t crc)
{
    uint8_t be[4];
    char hex[9];
    trowel_put_be32(be, crc);
    trowel_hex_encode(be, sizeof be, hex);
    ob_str(o, "// bvcd source crc ");
    ob_put(o, hex, 8);
    ob_put(o, "\n", 1);
}

trowel_status choreo_write_vcd(trowel_ctx *ctx, const choreo_scene *s, trowel_sink *out)
{
    outbuf *o; /* not zeroed: its 8 KiB buffer is written before it is read */
    trowel_status st = trowel_mem_new(ctx, sizeof *o, &o);
    if (st != TROWEL_OK)
        return st;
    o->ctx = ctx;
    o->sink = out;
    o->len = 0;
    o->st = TROWEL_OK;
    ob_str(o, "// Choreo version 1\n");
    if (s->has_crc)
        write_crc_line(o, s->source_crc);
    for (size_t i = 0; i < s->nevents; i++)
        if (!s->events[i]->in_actor)
            write_event(o, s, s->events[i], 0);
    for (size_t i = 0; i < s->nactors; i++)
        write_actor(o, s, &s->actors[i]);
    if (s->mapname && s->mapname[0]) {
        ob_str(o, "mapname ");
        ob_quoted(o, s->mapname);
        ob_put(o, "\n", 1);
    }
    if (s->ramp.n || s->ramp.edge[0].active || s->ramp.edge[1].active)
        write_ramp(o, s, &s->ramp, 0, "scene_ramp");
    if (s->nscales) {
        ob_str(o, "scalesettings\n{\n");
        for (size_t i = 0; i < s->nscales; i++) {
            ob_str(o, "  ");
            ob_quoted(o, s->scales[i].tool);
            ob_int_between(o, " \"", s->scales[i].value, "\"\n");
        }
        ob_str(o, "}\n");
    }
    ob_int_between(o, "fps ", s->fps, "\n");
    ob_str(o, s->snap ? "snap on\n" : "snap off\n");
    ob_str(o, s->ignore_phonemes ? "ignorePhonemes on\n" : "ignorePhonemes off\n");
    ob_flush(o);
    st = o->st;
    trowel_mem_free(ctx, o);
    return st;
}
