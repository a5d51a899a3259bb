/*
 * Choreography scenes: the model, the string pool, the engine's post-load
 * fix-ups and the scenes.image summary (see choreo.h, choreo_model.h).
 *
 * Facts learnt from Source SDK 2013 (choreoscene.cpp, choreoevent.cpp,
 * choreochannel.cpp, sceneimage.cpp, interpolatortypes.cpp) and checked
 * against the real images in ../shared/corpus/valve; the code is our own.
 * Where the engine's behaviour matters for byte-exact output (sorting
 * samples and tags, clamping end times, fixing close captions) we follow
 * it step by step and say so.
 */
#include "choreo_model.h"

#include <string.h>

/* ------------------------------------------------------------- utilities */

static int ascii_lower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

int choreo_ascii_casecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int ca = ascii_lower((unsigned char)*a), cb = ascii_lower((unsigned char)*b);
        if (ca != cb || ca == 0)
            return ca - cb;
    }
}

trowel_status choreo_grow(trowel_ctx *ctx, void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return TROWEL_OK;
    size_t ncap = *cap ? *cap : 4;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "scene too large");
        ncap *= 2;
    }
    trowel_status s = trowel_mem_resize_array(ctx, arr, ncap, elem);
    if (s == TROWEL_OK)
        *cap = ncap;
    return s;
}

trowel_status choreo_dup(trowel_ctx *ctx, const char *s, char **out)
{
    return trowel_mem_dup(ctx, s ? s : "", out);
}

/* ------------------------------------------------------------- the arena
 * A scene's strings and events: about fifty small blocks a scene, which
 * made allocating and freeing them a fifth of the time spent turning
 * TF2's scenes.image into text. They are carved from chunks instead,
 * freed with the scene. */

enum { ARENA_FIRST = 4096, ARENA_MAX = 65536 };

struct choreo_chunk {
    struct choreo_chunk *next;
    size_t size, used; /* bytes of data, and how many are taken */
    max_align_t data[];
};

/* size bytes at a multiple of align (a power of two, at most that of
 * max_align_t) in the scene's arena. */
static trowel_status arena_alloc(choreo_scene *s, size_t size, size_t align, void **out)
{
    struct choreo_chunk *c = s->arena;
    size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
    if (!c || at > c->size || c->size - at < size) {
        size_t want = c ? (c->size < ARENA_MAX / 2 ? 2 * c->size : ARENA_MAX) : ARENA_FIRST;
        if (want < size)
            want = size;
        if (want > SIZE_MAX - sizeof *c)
            return trowel_fail(s->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "scene too large");
        trowel_status st = trowel_mem_new(s->ctx, sizeof *c + want, &c);
        if (st != TROWEL_OK)
            return st;
        c->next = s->arena;
        c->size = want;
        c->used = 0;
        s->arena = c;
        at = 0;
    }
    *out = (unsigned char *)c->data + at;
    c->used = at + size;
    return TROWEL_OK;
}

static void arena_free(choreo_scene *s)
{
    for (struct choreo_chunk *c = s->arena, *next; c; c = next) {
        next = c->next;
        trowel_mem_free(s->ctx, c);
    }
    s->arena = NULL;
}

/* The n bytes of s and a NUL, in the scene's arena. */
static trowel_status arena_copy(choreo_scene *scene, const char *s, size_t n, char **out)
{
    void *p;
    trowel_status st = arena_alloc(scene, n + 1, 1, &p);
    if (st != TROWEL_OK)
        return st;
    memcpy(p, s, n);
    ((char *)p)[n] = '\0';
    *out = p;
    return TROWEL_OK;
}

trowel_status choreo_scene_str(choreo_scene *scene, const char *s, char **out)
{
    return s ? arena_copy(scene, s, strlen(s), out) : arena_copy(scene, "", 0, out);
}

/* A field set again (a text VCD may repeat one) takes the old string's
 * room when the new one fits, so that repeating a field cannot make the
 * arena grow with the input. */
trowel_status choreo_set_str(choreo_scene *scene, char **dst, const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    if (*dst && strlen(*dst) >= n) {
        memmove(*dst, s, n + 1);
        return TROWEL_OK;
    }
    return arena_copy(scene, s, n, dst);
}

/* ----------------------------------------------------------- name tables */

static const char *const type_names[CHOREO_TYPE_COUNT] = {
    "unspecified", "section", "expression", "lookat", "moveto", "speak", "gesture",
    "sequence", "face", "firetrigger", "flexanimation", "subscene", "loop", "interrupt",
    "stoppoint", "permitresponses", "generic", "camera", "script"};

static const char *const cc_names[CHOREO_CC_COUNT] = {"cc_master", "cc_slave", "cc_disabled"};

static const char *const interp_names[CHOREO_INTERP_COUNT] = {
    "default", "catmullrom_normalize_x", "easein", "easeout", "easeinout", "bspline",
    "linear_interp", "kochanek", "kochanek_early", "kochanek_late", "simple_cubic",
    "catmullrom", "catmullrom_normalize", "catmullrom_tangent", "exponential_decay", "hold"};

const char *choreo_type_name(int type)
{
    return (type >= 0 && type < CHOREO_TYPE_COUNT) ? type_names[type] : type_names[0];
}

int choreo_type_for_name(const char *name)
{
    for (int i = 0; i < CHOREO_TYPE_COUNT; i++)
        if (choreo_ascii_casecmp(name, type_names[i]) == 0)
            return i;
    return CHOREO_UNSPECIFIED;
}

const char *choreo_cc_name(int cc) { return (cc >= 0 && cc < CHOREO_CC_COUNT) ? cc_names[cc] : cc_names[0]; }

int choreo_cc_for_name(const char *name)
{
    for (int i = 0; i < CHOREO_CC_COUNT; i++)
        if (choreo_ascii_casecmp(name, cc_names[i]) == 0)
            return i;
    return CHOREO_CC_MASTER;
}

const char *choreo_interp_name(unsigned interp)
{
    return interp < CHOREO_INTERP_COUNT ? interp_names[interp] : interp_names[0];
}

static unsigned interp_for_name(const char *name, size_t len)
{
    for (unsigned i = 0; i < CHOREO_INTERP_COUNT; i++) {
        size_t n = strlen(interp_names[i]);
        if (n != len)
            continue;
        size_t k = 0;
        while (k < n && ascii_lower((unsigned char)name[k]) == interp_names[i][k])
            k++;
        if (k == n)
            return i;
    }
    return 0; /* the engine's fallback: default */
}

static const char *ascii_casestr(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] && ascii_lower((unsigned char)hay[k]) == ascii_lower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return hay;
    }
    return NULL;
}

bool choreo_curve_for_name(const char *name, uint16_t *out)
{
    static const char prefix[] = "curve_", middle[] = "_to_curve_";
    *out = CHOREO_CURVE_DEFAULT;
    size_t plen = sizeof prefix - 1;
    for (size_t i = 0; i < plen; i++)
        if (ascii_lower((unsigned char)name[i]) != prefix[i])
            return true; /* not a curve name at all: the engine takes it as default */
    const char *left = name + plen;
    const char *mid = ascii_casestr(left, middle);
    if (!mid)
        return false;
    const char *right = mid + sizeof middle - 1;
    unsigned l = interp_for_name(left, (size_t)(mid - left));
    unsigned r = interp_for_name(right, strlen(right));
    *out = (uint16_t)((l << 8) | r);
    return true;
}

/* ----------------------------------------------------------------- pool */

/* The strings are copied into chunks the pool frees together: an image's
 * pool is read at every open (13,821 strings for TF2) and freed at every
 * close, and one allocation per string was most of both. */
enum { POOL_CHUNK_FIRST = 256, POOL_CHUNK_MAX = 16 << 10 };

struct choreo_pool {
    trowel_ctx *ctx;
    char **str;
    size_t n, cap;
    uint32_t *slots; /* open addressing: index + 1, 0 = empty */
    size_t nslots;
    size_t hashed; /* str[0, hashed) are in slots (pool_hash_all) */
    char **chunks;  /* where the strings are */
    size_t nchunks, chunk_cap;
    char *room;     /* the unused end of the last chunk */
    size_t room_left, chunk_size;
};

static uint32_t hash_ci(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint32_t)ascii_lower((unsigned char)*s)) * 16777619u;
    return h;
}

trowel_status choreo_pool_new(trowel_ctx *ctx, choreo_pool **out)
{
    trowel_status s = trowel_mem_new_zeroed(ctx, 1, sizeof **out, out);
    if (s == TROWEL_OK)
        (*out)->ctx = ctx;
    return s;
}

void choreo_pool_free(choreo_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nchunks; i++)
        trowel_mem_free(p->ctx, p->chunks[i]);
    trowel_mem_free(p->ctx, p->chunks);
    trowel_mem_free(p->ctx, p->str);
    trowel_mem_free(p->ctx, p->slots);
    trowel_mem_free(p->ctx, p);
}

size_t choreo_pool_count(const choreo_pool *p) { return p ? p->n : 0; }

const char *choreo_pool_get(const choreo_pool *p, uint32_t index)
{
    return (p && index < p->n) ? p->str[index] : NULL;
}

/* Finds the first string equal to s ignoring case (index + 1, 0 if none). */
static uint32_t pool_lookup(const choreo_pool *p, const char *s)
{
    if (!p->nslots)
        return 0;
    size_t mask = p->nslots - 1;
    for (size_t i = hash_ci(s) & mask;; i = (i + 1) & mask) {
        uint32_t v = p->slots[i];
        if (v == 0 || choreo_ascii_casecmp(p->str[v - 1], s) == 0)
            return v;
    }
}

/* Records index in the hash unless an equal (ignoring case) string is
 * already there: the first spelling wins, as in the engine. */
static void pool_hash_insert(choreo_pool *p, uint32_t index)
{
    size_t mask = p->nslots - 1;
    for (size_t i = hash_ci(p->str[index]) & mask;; i = (i + 1) & mask) {
        uint32_t v = p->slots[i];
        if (v == 0) {
            p->slots[i] = index + 1;
            return;
        }
        if (choreo_ascii_casecmp(p->str[v - 1], p->str[index]) == 0)
            return;
    }
}

static trowel_status pool_rehash(choreo_pool *p, size_t want)
{
    size_t n = 64;
    while (n < want * 2)
        n *= 2;
    uint32_t *slots;
    trowel_status st = trowel_mem_new_zeroed(p->ctx, n, sizeof *slots, &slots);
    if (st != TROWEL_OK)
        return st;
    trowel_mem_free(p->ctx, p->slots);
    p->slots = slots;
    p->nslots = n;
    for (size_t i = 0; i < p->n; i++)
        pool_hash_insert(p, (uint32_t)i);
    p->hashed = p->n;
    return TROWEL_OK;
}

/* Brings the hash up to every string. It is built on the first intern,
 * not as strings are appended: reading an image or a BVCD only looks
 * strings up by index, so the 13,821 strings of TF2's image are never
 * hashed there. Strings are inserted in index order, so the first
 * spelling still wins. */
static trowel_status pool_hash_all(choreo_pool *p)
{
    if ((p->n + 1) * 2 > p->nslots)
        return pool_rehash(p, p->n + 1);
    for (; p->hashed < p->n; p->hashed++)
        pool_hash_insert(p, (uint32_t)p->hashed);
    return TROWEL_OK;
}

/* A copy of s in the pool's chunks: a new chunk, twice the last (or one
 * of its own for a long string), when the room left is too small. */
static trowel_status pool_copy(choreo_pool *p, const char *s, char **out)
{
    size_t n = strlen(s) + 1;
    if (n > p->room_left) {
        size_t size = p->chunk_size ? p->chunk_size * 2 : POOL_CHUNK_FIRST;
        if (size > POOL_CHUNK_MAX)
            size = POOL_CHUNK_MAX;
        if (size < n)
            size = n;
        char *chunk;
        trowel_status st = choreo_grow(p->ctx, (void **)&p->chunks, &p->chunk_cap,
                                       p->nchunks + 1, sizeof *p->chunks);
        if (st != TROWEL_OK || (st = trowel_mem_new(p->ctx, size, &chunk)) != TROWEL_OK)
            return st;
        p->chunks[p->nchunks++] = chunk;
        p->chunk_size = size;
        p->room = chunk;
        p->room_left = size;
    }
    memcpy(p->room, s, n);
    *out = p->room;
    p->room += n;
    p->room_left -= n;
    return TROWEL_OK;
}

trowel_status choreo_pool_append(choreo_pool *p, const char *s)
{
    if (p->n >= UINT32_MAX - 1)
        return trowel_fail(p->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "string pool too large");
    trowel_status st = choreo_grow(p->ctx, (void **)&p->str, &p->cap, p->n + 1, sizeof *p->str);
    if (st != TROWEL_OK)
        return st;
    char *copy;
    if ((st = pool_copy(p, s, &copy)) != TROWEL_OK)
        return st;
    p->str[p->n] = copy;
    p->n++;
    return TROWEL_OK;
}

trowel_status choreo_pool_intern(choreo_pool *p, const char *s, uint32_t *index)
{
    trowel_status st = pool_hash_all(p);
    if (st != TROWEL_OK)
        return st;
    uint32_t found = pool_lookup(p, s);
    if (found) {
        if (index)
            *index = found - 1;
        return TROWEL_OK;
    }
    if (p->n >= CHOREO_POOL_MAX)
        return trowel_fail(p->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "more than %u distinct strings: BVCD indices are 16-bit",
                           CHOREO_POOL_MAX);
    if ((st = choreo_pool_append(p, s)) != TROWEL_OK)
        return st;
    /* pool_hash_all left room for one more (its (n + 1) * 2 slots) */
    pool_hash_insert(p, (uint32_t)(p->n - 1));
    p->hashed = p->n;
    if (index)
        *index = (uint32_t)(p->n - 1);
    return TROWEL_OK;
}

/* ---------------------------------------------------------------- model */

trowel_status choreo_scene_new(trowel_ctx *ctx, choreo_scene **out)
{
    trowel_status st = trowel_mem_new_zeroed(ctx, 1, sizeof **out, out);
    if (st != TROWEL_OK)
        return st;
    (*out)->ctx = ctx;
    (*out)->fps = 60;
    return TROWEL_OK;
}

static void free_curve(trowel_ctx *ctx, choreo_curve *c) { trowel_mem_free(ctx, c->s); }

/* What an event holds outside the arena: its arrays. */
static void free_event(trowel_ctx *ctx, choreo_event *e)
{
    free_curve(ctx, &e->ramp);
    trowel_mem_free(ctx, e->rel.t);
    trowel_mem_free(ctx, e->timing.t);
    trowel_mem_free(ctx, e->abs[0].t);
    trowel_mem_free(ctx, e->abs[1].t);
    for (size_t i = 0; i < e->ntracks; i++) {
        free_curve(ctx, &e->tracks[i].samples[0]);
        free_curve(ctx, &e->tracks[i].samples[1]);
    }
    trowel_mem_free(ctx, e->tracks);
}

void choreo_scene_free(trowel_ctx *ctx, choreo_scene *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nevents; i++)
        free_event(ctx, s->events[i]);
    trowel_mem_free(ctx, s->events);
    for (size_t i = 0; i < s->nactors; i++) {
        choreo_actor *a = &s->actors[i];
        for (size_t j = 0; j < a->n; j++)
            trowel_mem_free(ctx, a->ch[j].ev);
        trowel_mem_free(ctx, a->ch);
    }
    trowel_mem_free(ctx, s->actors);
    free_curve(ctx, &s->ramp);
    trowel_mem_free(ctx, s->scales);
    arena_free(s);
    trowel_mem_free(ctx, s);
}

void choreo_event_init(choreo_event *e)
{
    memset(e, 0, sizeof *e);
    e->end = -1.0f;
    e->active = true;
    e->loopcount = -1;
    e->cctype = CHOREO_CC_MASTER;
    e->default_curve = CHOREO_CURVE_CATMULL;
}

trowel_status choreo_event_new(choreo_scene *s, choreo_event **out)
{
    choreo_event *e;
    trowel_status st = choreo_grow(s->ctx, (void **)&s->events, &s->event_cap, s->nevents + 1,
                                   sizeof *s->events);
    if (st != TROWEL_OK ||
        (st = arena_alloc(s, sizeof *e, _Alignof(choreo_event), (void **)&e)) != TROWEL_OK)
        return st;
    choreo_event_init(e);
    s->events[s->nevents++] = e;
    *out = e;
    return TROWEL_OK;
}

trowel_status choreo_actor_add(choreo_scene *s, choreo_actor **out)
{
    trowel_status st = choreo_grow(s->ctx, (void **)&s->actors, &s->actor_cap, s->nactors + 1,
                                   sizeof *s->actors);
    if (st != TROWEL_OK)
        return st;
    choreo_actor *a = &s->actors[s->nactors++];
    memset(a, 0, sizeof *a);
    a->active = true;
    *out = a;
    return TROWEL_OK;
}

trowel_status choreo_channel_add(choreo_scene *s, choreo_actor *a, choreo_channel **out)
{
    trowel_status st = choreo_grow(s->ctx, (void **)&a->ch, &a->cap, a->n + 1, sizeof *a->ch);
    if (st != TROWEL_OK)
        return st;
    choreo_channel *c = &a->ch[a->n++];
    memset(c, 0, sizeof *c);
    c->active = true;
    *out = c;
    return TROWEL_OK;
}

trowel_status choreo_channel_push(choreo_scene *s, choreo_channel *c, choreo_event *e)
{
    trowel_status st = choreo_grow(s->ctx, (void **)&c->ev, &c->cap, c->n + 1, sizeof *c->ev);
    if (st == TROWEL_OK)
        c->ev[c->n++] = e;
    return st;
}

trowel_status choreo_curve_push(trowel_ctx *ctx, choreo_curve *c, float t, float v, uint16_t curve)
{
    trowel_status st = choreo_grow(ctx, (void **)&c->s, &c->cap, c->n + 1, sizeof *c->s);
    if (st == TROWEL_OK)
        c->s[c->n++] = (choreo_sample){t, v, curve};
    return st;
}

trowel_status choreo_tags_push(choreo_scene *s, choreo_tags *tags, const char *name, float v,
                               bool locked)
{
    trowel_status st =
        choreo_grow(s->ctx, (void **)&tags->t, &tags->cap, tags->n + 1, sizeof *tags->t);
    if (st != TROWEL_OK)
        return st;
    char *copy;
    if ((st = choreo_scene_str(s, name, &copy)) != TROWEL_OK)
        return st;
    tags->t[tags->n++] = (choreo_tag){copy, v, locked};
    return TROWEL_OK;
}

/* Lists up to this size are sorted with the engine's own exchange sort, so
 * equal keys end in the engine's order; longer ones (never seen in real
 * files) with a heap sort, to keep hostile input from taking quadratic
 * time (equal times may then end in another order than the engine's). */
#define ENGINE_SORT_MAX 256

static void exchange_sort_samples(choreo_sample *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (a[i].time > a[j].time) {
                choreo_sample t = a[i];
                a[i] = a[j];
                a[j] = t;
            }
}

static bool sample_less(const choreo_sample *a, const choreo_sample *b) { return a->time < b->time; }

static void sift_down(choreo_sample *a, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && sample_less(&a[child], &a[child + 1]))
            child++;
        if (!sample_less(&a[root], &a[child]))
            return;
        choreo_sample t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/* In place, O(n log n), no allocation; used only past ENGINE_SORT_MAX. */
static void heap_sort_samples(choreo_sample *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (size_t end = n; end-- > 1;) {
        choreo_sample t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

static bool samples_sorted(const choreo_sample *a, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (a[i - 1].time > a[i].time)
            return false;
    return true;
}

static void sort_samples(choreo_curve *c)
{
    if (samples_sorted(c->s, c->n))
        return;
    if (c->n <= ENGINE_SORT_MAX)
        exchange_sort_samples(c->s, c->n);
    else
        heap_sort_samples(c->s, c->n);
}

void choreo_tags_sort(choreo_tags *tags)
{
    /* The engine re-runs its exchange sort (for i, for j > i: swap when
     * a[i] > a[j]) after every insertion. With the older tags already in
     * order, that pass only ever swaps with the new last element, so one
     * linear walk gives exactly its result, equal values included. */
    size_t n = tags->n;
    choreo_tag *a = tags->t;
    for (size_t i = 0; i + 1 < n; i++)
        if (a[i].value > a[n - 1].value) {
            choreo_tag t = a[i];
            a[i] = a[n - 1];
            a[n - 1] = t;
        }
}

trowel_status choreo_track_add(choreo_scene *s, choreo_event *e, const char *name,
                               choreo_track **out)
{
    char *copy;
    trowel_status st = choreo_grow(s->ctx, (void **)&e->tracks, &e->track_cap, e->ntracks + 1,
                                   sizeof *e->tracks);
    if (st != TROWEL_OK || (st = choreo_scene_str(s, name, &copy)) != TROWEL_OK)
        return st;
    choreo_track *t = &e->tracks[e->ntracks++];
    memset(t, 0, sizeof *t);
    t->name = copy;
    *out = t;
    return TROWEL_OK;
}

void choreo_event_set_type(choreo_event *e, int type)
{
    e->type = type;
    /* the engine marks sounds and sub-scenes fixed-length when typed */
    e->fixedlength = (type == CHOREO_SPEAK || type == CHOREO_SUBSCENE);
}

float choreo_event_duration(const choreo_event *e)
{
    return e->end != -1.0f ? e->end - e->start : 0.0f;
}

static void remove_out_of_range(choreo_curve *c, float duration, bool ramp)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        float t = c->s[i].time;
        /* ramps allow 10 ms of slack (compared in double, as the engine) */
        bool out = ramp ? (t < 0 || (double)t > (double)duration + 0.01) : (t < 0 || t > duration);
        if (!out)
            c->s[k++] = c->s[i];
    }
    c->n = k;
}

void choreo_track_resort(const choreo_event *e, choreo_track *t, int which)
{
    (void)which; /* the engine sorts one list, then prunes both */
    sort_samples(&t->samples[which]);
    float d = choreo_event_duration(e);
    remove_out_of_range(&t->samples[0], d, false);
    remove_out_of_range(&t->samples[1], d, false);
}

void choreo_curve_resort(choreo_curve *c, float duration)
{
    sort_samples(c);
    remove_out_of_range(c, duration, true);
}

void choreo_event_set_start(choreo_event *e, float t)
{
    e->start = t;
    if (e->end != -1.0f && e->end < e->start)
        e->end = e->start;
}

void choreo_event_set_end(choreo_event *e, float t)
{
    bool changed = e->end != t;
    e->end = t;
    if (t == -1.0f)
        return;
    if (e->end < e->start)
        e->end = e->start;
    if (changed)
        for (size_t i = 0; i < e->ntracks; i++)
            choreo_track_resort(e, &e->tracks[i], 0);
}

float choreo_event_stop(const choreo_event *e)
{
    return e->end != -1.0f ? e->end : e->start;
}

float choreo_stop_time(const choreo_scene *s)
{
    float last = 0.0f;
    for (size_t i = 0; i < s->nevents; i++) {
        float t = choreo_event_stop(s->events[i]);
        if (t > last)
            last = t;
    }
    return last;
}

double choreo_scene_duration(const choreo_scene *s) { return (double)choreo_stop_time(s); }

uint32_t choreo_scene_source_crc(const choreo_scene *s) { return s->source_crc; }
bool choreo_scene_has_source_crc(const choreo_scene *s) { return s->has_crc; }

void choreo_scene_counts(const choreo_scene *s, choreo_counts *out)
{
    out->actors = s->nactors;
    out->channels = 0;
    for (size_t i = 0; i < s->nactors; i++)
        out->channels += s->actors[i].n;
    out->events = s->nevents;
}

/* -------------------------------------------------------------- fix-ups */

static choreo_tag *find_rel_tag(choreo_event *e, const char *name)
{
    for (size_t i = 0; i < e->rel.n; i++)
        if (choreo_ascii_casecmp(e->rel.t[i].name, name) == 0)
            return &e->rel.t[i];
    return NULL;
}

/* A speak event (on any actor's channel) whose sound contains wav and
 * that carries a relative tag named name. */
static bool find_tag_time(choreo_scene *s, const char *wav, const char *name, float *time)
{
    for (size_t i = 0; i < s->nactors; i++)
        for (size_t j = 0; j < s->actors[i].n; j++) {
            choreo_channel *c = &s->actors[i].ch[j];
            for (size_t k = 0; k < c->n; k++) {
                choreo_event *e = c->ev[k];
                if (e->type != CHOREO_SPEAK || !strstr(e->param[0] ? e->param[0] : "", wav))
                    continue;
                choreo_tag *t = find_rel_tag(e, name);
                if (!t)
                    continue;
                *time = e->start + choreo_event_duration(e) * t->value;
                return true;
            }
        }
    return false;
}

void choreo_reconcile_tags(choreo_scene *s)
{
    for (size_t i = 0; i < s->nactors; i++)
        for (size_t j = 0; j < s->actors[i].n; j++) {
            choreo_channel *c = &s->actors[i].ch[j];
            for (size_t k = 0; k < c->n; k++) {
                choreo_event *e = c->ev[k];
                if (!e->uses_tag)
                    continue;
                float t;
                if (find_tag_time(s, e->tag_wav ? e->tag_wav : "", e->tag_name ? e->tag_name : "", &t)) {
                    float dt = t - e->start;
                    if (e->end != -1.0f)
                        e->end += dt;
                    e->start += dt;
                } else {
                    /* a missing tag unflags the event */
                    e->uses_tag = false;
                    if (e->tag_name)
                        e->tag_name[0] = 0;
                    if (e->tag_wav)
                        e->tag_wav[0] = 0;
                }
            }
        }
}

static void cc_make_lone_master(choreo_event *e)
{
    e->cctype = CHOREO_CC_MASTER;
    e->cc_combined = false;
}

/* Per channel: speak events grouped by close-caption token (ignoring case),
 * each group ordered by start time (stable); the first is the master, the
 * others slaves sharing the master's combined-file flag; a lone event is a
 * master without a combined file; a slave without a token becomes a master. */
static trowel_status reconcile_channel_cc(choreo_scene *s, choreo_channel *c)
{
    choreo_event **grp = NULL;
    size_t cap = 0;
    trowel_status st = TROWEL_OK;
    bool *done;
    if ((st = trowel_mem_new_zeroed(s->ctx, c->n ? c->n : 1, sizeof *done, &done)) != TROWEL_OK)
        return st;
    for (size_t i = 0; i < c->n && st == TROWEL_OK; i++) {
        choreo_event *e = c->ev[i];
        if (done[i] || e->type != CHOREO_SPEAK)
            continue;
        if (e->cctype == CHOREO_CC_DISABLED) {
            e->cc_combined = false;
            continue;
        }
        if (!e->cctoken || !e->cctoken[0]) {
            if (e->cctype == CHOREO_CC_SLAVE)
                cc_make_lone_master(e);
            continue;
        }
        size_t n = 0;
        for (size_t j = i; j < c->n; j++) {
            choreo_event *o = c->ev[j];
            if (done[j] || o->type != CHOREO_SPEAK || o->cctype == CHOREO_CC_DISABLED ||
                !o->cctoken || choreo_ascii_casecmp(o->cctoken, e->cctoken) != 0)
                continue;
            if ((st = choreo_grow(s->ctx, (void **)&grp, &cap, n + 1, sizeof *grp)) != TROWEL_OK)
                break;
            /* insert after every event starting no later: stable by start */
            size_t k = n;
            while (k > 0 && o->start < grp[k - 1]->start) {
                grp[k] = grp[k - 1];
                k--;
            }
            grp[k] = o;
            n++;
            done[j] = true;
        }
        if (st != TROWEL_OK)
            break;
        if (n == 1) {
            cc_make_lone_master(grp[0]);
            continue;
        }
        grp[0]->cctype = CHOREO_CC_MASTER;
        for (size_t k = 1; k < n; k++) {
            grp[k]->cctype = CHOREO_CC_SLAVE;
            grp[k]->cc_combined = grp[0]->cc_combined;
        }
    }
    trowel_mem_free(s->ctx, grp);
    trowel_mem_free(s->ctx, done);
    return st;
}

trowel_status choreo_reconcile_close_captions(choreo_scene *s)
{
    trowel_status st = TROWEL_OK;
    for (size_t i = 0; i < s->nactors && st == TROWEL_OK; i++)
        for (size_t j = 0; j < s->actors[i].n && st == TROWEL_OK; j++)
            st = reconcile_channel_cc(s, &s->actors[i].ch[j]);
    return st;
}

/* -------------------------------------------------------------- summary */

/* Both rules computed in double, where every step is exact (a float times
 * 1000 needs 34 bits, adding 0.5 to it fits too), so no compiler setting
 * (x87 excess precision, contraction into fused multiply-add) can change
 * them: the single-precision rule rounds each exact step to float
 * explicitly, as SSE arithmetic does. */
static uint32_t to_msecs_rule(float t, bool single)
{
    double v = (double)t * 1000.0;
    if (!(v + 0.5 > 0.0)) /* negative or NaN */
        return 0;
    if (v >= 4294967295.0) /* (and out of float's range before rounding) */
        return UINT32_MAX;
    if (single)
        v = (double)(float)v;
    v += 0.5;
    if (single)
        v = (double)(float)v;
    return v >= 4294967295.0 ? UINT32_MAX : (uint32_t)v;
}

static uint32_t to_msecs(float t) { return to_msecs_rule(t, false); }

uint32_t choreo_msecs(float seconds, bool single_precision)
{
    return to_msecs_rule(seconds, single_precision);
}

/* Valve's rule for a v3 summary's lastspeech: the SPEAK event that comes
 * last in the scene's event order (not the one that ends last), its end
 * time, or its start when it has no end (end == -1); 0 without any SPEAK
 * event. An earlier speech that ends later does not count (a shipped v3
 * image has 93 of 1,933 scenes where that makes a difference). */
static float last_speech_time(const choreo_scene *s)
{
    for (size_t i = s->nevents; i-- > 0;) {
        const choreo_event *e = s->events[i];
        if (e->type == CHOREO_SPEAK)
            return choreo_event_stop(e);
    }
    return 0.0f;
}

static trowel_status summary_add(trowel_ctx *ctx, choreo_summary *sum, size_t *cap, const char *s)
{
    for (size_t i = 0; i < sum->sound_count; i++)
        if (choreo_ascii_casecmp(sum->sounds[i], s) == 0)
            return TROWEL_OK; /* the engine de-duplicates by pool id */
    trowel_status st = choreo_grow(ctx, (void **)&sum->sounds, cap, sum->sound_count + 1,
                                   sizeof *sum->sounds);
    if (st != TROWEL_OK)
        return st;
    char *copy;
    if ((st = choreo_dup(ctx, s, &copy)) != TROWEL_OK)
        return st;
    sum->sounds[sum->sound_count++] = copy;
    return TROWEL_OK;
}

static void set_times(const choreo_scene *s, choreo_summary *out)
{
    float stop = choreo_stop_time(s), speech = last_speech_time(s);
    out->msecs = to_msecs(stop);
    out->msecs_float = to_msecs_rule(stop, true);
    out->lastspeech_msecs = to_msecs(speech);
    out->lastspeech_msecs_float = to_msecs_rule(speech, true);
}

trowel_status choreo_summarize(trowel_ctx *ctx, const choreo_scene *s, choreo_summary *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    for (size_t i = 0; i < s->nevents; i++) {
        const choreo_event *e = s->events[i];
        if (e->type != CHOREO_SPEAK)
            continue;
        const char *p = e->param[0] ? e->param[0] : "";
        trowel_status st = summary_add(ctx, out, &cap, p);
        if (st == TROWEL_OK && e->cctype == CHOREO_CC_MASTER)
            st = summary_add(ctx, out, &cap, (e->cctoken && e->cctoken[0]) ? e->cctoken : p);
        if (st != TROWEL_OK) {
            choreo_summary_free(ctx, out);
            return st;
        }
    }
    set_times(s, out);
    return TROWEL_OK;
}

/* Whether a time is msecs by either precision rule. */
static bool msecs_fit(float t, uint32_t msecs)
{
    return to_msecs_rule(t, false) == msecs || to_msecs_rule(t, true) == msecs;
}

/* Whether a SPEAK event's time for lastspeech gives msecs. */
static bool speech_msecs_fit(const choreo_event *e, uint32_t msecs)
{
    return msecs_fit(choreo_event_stop(e), msecs);
}

bool choreo_lastspeech_possible(const choreo_scene *s, uint32_t msecs)
{
    const choreo_event *last_on_actor = NULL;
    bool any_speech = false;
    for (size_t i = 0; i < s->nevents; i++) {
        const choreo_event *e = s->events[i];
        if (e->type != CHOREO_SPEAK)
            continue;
        any_speech = true;
        if (e->in_actor)
            last_on_actor = e;
        else if (s->from_binary && speech_msecs_fit(e, msecs))
            return true; /* the text may have put it after every actor */
    }
    if (!any_speech)
        return msecs == 0;
    if (!s->from_binary)
        return msecs_fit(last_speech_time(s), msecs);
    return last_on_actor ? speech_msecs_fit(last_on_actor, msecs) : false;
}

void choreo_summary_free(trowel_ctx *ctx, choreo_summary *sum)
{
    if (!sum)
        return;
    for (size_t i = 0; i < sum->sound_count; i++)
        trowel_mem_free(ctx, (void *)(uintptr_t)sum->sounds[i]);
    trowel_mem_free(ctx, (void *)(uintptr_t)sum->sounds);
    memset(sum, 0, sizeof *sum);
}
