/*
 * The scene model behind choreo.h, shared by choreo.c (model, pool, fix-ups,
 * summary), choreo_vcd.c (text) and choreo_bvcd.c (binary). Not used outside
 * those files: other modules see choreo_scene as opaque.
 *
 * The model holds what the engine's CChoreoScene holds after loading plus
 * what only the text form carries (map name, fps, snap, scale settings,
 * pitch/yaw, edges, ramp curve types, locked timing tags, Faceposer model),
 * so text -> model -> text keeps a scene's editor data.
 */
#ifndef TROWEL_VALVE_CHOREO_MODEL_H
#define TROWEL_VALVE_CHOREO_MODEL_H

#include "choreo.h"

/* Event types: the order of the engine's name table (BVCD stores the index).
 * CAMERA and SCRIPT exist in the Portal 2 / CS:GO branch only. */
enum choreo_type {
    CHOREO_UNSPECIFIED, CHOREO_SECTION, CHOREO_EXPRESSION, CHOREO_LOOKAT, CHOREO_MOVETO,
    CHOREO_SPEAK, CHOREO_GESTURE, CHOREO_SEQUENCE, CHOREO_FACE, CHOREO_FIRETRIGGER,
    CHOREO_FLEXANIMATION, CHOREO_SUBSCENE, CHOREO_LOOP, CHOREO_INTERRUPT, CHOREO_STOPPOINT,
    CHOREO_PERMIT_RESPONSES, CHOREO_GENERIC, CHOREO_CAMERA, CHOREO_SCRIPT,
    CHOREO_TYPE_COUNT
};

enum choreo_cc { CHOREO_CC_MASTER, CHOREO_CC_SLAVE, CHOREO_CC_DISABLED, CHOREO_CC_COUNT };

/* Curve types are (left interpolator << 8) | right interpolator. */
#define CHOREO_CURVE_DEFAULT 0x0000u
#define CHOREO_CURVE_CATMULL 0x0101u /* catmullrom_normalize_x both sides */
#define CHOREO_INTERP_COUNT 16

typedef struct choreo_sample {
    float time, value;
    uint16_t curve;
} choreo_sample;

typedef struct choreo_edge {
    bool active;
    uint16_t curve;
    float zero;
} choreo_edge;

typedef struct choreo_curve {
    choreo_sample *s;
    size_t n, cap;
    choreo_edge edge[2]; /* text only */
} choreo_curve;

typedef struct choreo_tag {
    char *name;
    float value;
    bool locked; /* timing tags, text only */
} choreo_tag;

typedef struct choreo_tags {
    choreo_tag *t;
    size_t n, cap;
} choreo_tags;

typedef struct choreo_track {
    char *name;
    bool active, combo;
    float min, max;
    choreo_curve samples[2]; /* [0] magnitude (edges here), [1] combo balance */
} choreo_track;

struct choreo_actor;
struct choreo_channel;

typedef struct choreo_event {
    int type;
    char *name;
    float start, end; /* end == -1: none */
    char *param[3];
    choreo_curve ramp;
    bool resume, lockbody, fixedlength, active, forceshort, playover, sync;
    float distance;
    int pitch, yaw;             /* text only */
    choreo_tags rel, timing, abs[2];
    float seqdur;               /* 0: not set */
    bool uses_tag;
    char *tag_name, *tag_wav;
    uint16_t default_curve;     /* for the text writer; binary keeps per-sample curves */
    choreo_track *tracks;
    size_t ntracks, track_cap;
    int loopcount;
    int cctype;
    char *cctoken;
    bool cc_combined, cc_gender, cc_noatten;
    bool in_actor; /* false: actor-less (scene level) */
} choreo_event;

typedef struct choreo_channel {
    char *name;
    choreo_event **ev; /* not owned: events belong to the scene */
    size_t n, cap;
    bool active;
} choreo_channel;

typedef struct choreo_actor {
    char *name;
    choreo_channel *ch;
    size_t n, cap;
    bool active;
    char *model; /* faceposermodel, text only */
} choreo_actor;

typedef struct choreo_scale {
    char *tool;
    int value;
} choreo_scale;

struct choreo_chunk;

/* The model's strings and events live in the scene's arena (its chunks),
 * freed with the scene and never one by one: a scene is built once, then
 * read. Its arrays are separate blocks, as they grow. */
struct choreo_scene {
    trowel_ctx *ctx;
    struct choreo_chunk *arena;
    choreo_event **events; /* every event, in the engine's allocation order */
    size_t nevents, event_cap;
    choreo_actor *actors;
    size_t nactors, actor_cap;
    choreo_curve ramp;
    bool ignore_phonemes;
    /* text only */
    char *mapname;
    int fps;
    bool snap;
    choreo_scale *scales;
    size_t nscales, scale_cap;
    /* provenance */
    bool from_binary; /* print quantised values at their midpoints */
    bool has_crc;     /* read from BVCD, or text carrying "// bvcd source crc X" */
    uint32_t source_crc;
};

/* ---- helpers shared by the choreo files (choreo.c) */
trowel_status choreo_scene_new(trowel_ctx *ctx, choreo_scene **out);
/* Grows *arr (of *cap elements of size elem) to hold at least need. */
trowel_status choreo_grow(trowel_ctx *ctx, void **arr, size_t *cap, size_t need, size_t elem);
/* A copy of s ("" for NULL) in *out: choreo_dup's a block of its own
 * (freed by the caller), choreo_scene_str's in the scene's arena. */
trowel_status choreo_dup(trowel_ctx *ctx, const char *s, char **out);
trowel_status choreo_scene_str(choreo_scene *scene, const char *s, char **out);
/* *dst becomes a copy of s in the scene's arena: written over the string
 * it held when s fits there, else a new copy (the old one stays until the
 * scene is freed). */
trowel_status choreo_set_str(choreo_scene *scene, char **dst, const char *s);
/* An event as a new one starts (what choreo_event_new gives, unlisted). */
void choreo_event_init(choreo_event *e);
/* Where an event stops: its end, or its start when it has none (-1). The
 * scene's stop time and last speech (choreo_stop_time, the summary, the
 * survey's note_event) count by it. */
float choreo_event_stop(const choreo_event *e);
/* New parts of the model, appended (an event to s->events) and handed
 * back in *out. */
trowel_status choreo_event_new(choreo_scene *s, choreo_event **out);
trowel_status choreo_actor_add(choreo_scene *s, choreo_actor **out);
trowel_status choreo_channel_add(choreo_scene *s, choreo_actor *a, choreo_channel **out);
trowel_status choreo_channel_push(choreo_scene *s, choreo_channel *c, choreo_event *e);
trowel_status choreo_curve_push(trowel_ctx *ctx, choreo_curve *c, float t, float v, uint16_t curve);
trowel_status choreo_tags_push(choreo_scene *s, choreo_tags *tags, const char *name, float v,
                               bool locked);
/* The engine sorts timing and absolute tags by value as it adds each one. */
void choreo_tags_sort(choreo_tags *tags);
trowel_status choreo_track_add(choreo_scene *s, choreo_event *e, const char *name,
                               choreo_track **out);
void choreo_event_set_type(choreo_event *e, int type);
void choreo_event_set_start(choreo_event *e, float t);
void choreo_event_set_end(choreo_event *e, float t);
float choreo_event_duration(const choreo_event *e);
void choreo_track_resort(const choreo_event *e, choreo_track *t, int which);
void choreo_curve_resort(choreo_curve *c, float duration);
float choreo_stop_time(const choreo_scene *s);
/* The engine's post-load fix-ups. */
void choreo_reconcile_tags(choreo_scene *s);
trowel_status choreo_reconcile_close_captions(choreo_scene *s);

const char *choreo_type_name(int type);
int choreo_type_for_name(const char *name); /* unknown: CHOREO_UNSPECIFIED */
const char *choreo_cc_name(int cc);
int choreo_cc_for_name(const char *name);   /* unknown: CHOREO_CC_MASTER */
const char *choreo_interp_name(unsigned interp);
/* "curve_A_to_curve_B" -> type; false when the text has the curve_ prefix
 * but no "_to_curve_" (the engine crashes on that). */
bool choreo_curve_for_name(const char *name, uint16_t *out);
int choreo_ascii_casecmp(const char *a, const char *b);

#endif
