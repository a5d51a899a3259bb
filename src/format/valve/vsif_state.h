/*
 * What the scenes.image format's files share of an open image (vsif.c:
 * open, read ahead, settle, names; vsif_verify.c: verify). Private to
 * them.
 */
#ifndef TROWEL_VALVE_VSIF_STATE_H
#define TROWEL_VALVE_VSIF_STATE_H

#include "format/valve/vsif_image.h"

/* Scenes the worker turns into text while the caller writes earlier ones:
 * at most this many a batch. */
enum { TEXT_BATCH_MAX = 128 };

typedef struct text_batch text_batch; /* vsif.c */

typedef struct vsif_state {
    vsif_image img;
    bool raw; /* extract the stored BVCD rather than text */
    trowel_worker *worker;  /* NULL: one thread does everything */
    text_batch *ahead;      /* being made by the worker (busy) */
    text_batch *ready;      /* taken from it: pieces not read yet */
    size_t batch_size;
    size_t next_in_turn;    /* the entry after the one read last (SIZE_MAX: none) */
    bool gave_way;          /* the memory limit was reached: no more reading ahead */
    size_t gap;             /* entries this thread does before the worker's next batch */
    bool survey_short;      /* a scene's survey ran out of memory (told once) */
    const char **sounds;    /* every entry's "sounds" list: pool strings */
    uint8_t *spent[2 * TEXT_BATCH_MAX]; /* texts handed out (spend_text) */
    size_t spent_count;
    choreo_scene *held;     /* read in order: the scene settle_reading read, */
    size_t held_index;      /* for reading entry held_index next */
    size_t read_to;         /* entries before it have been read (some, at least) */
    bool reclaims;          /* the context's reclaim function is this archive's */
    bool bookkeeping;       /* reading a batch's bytes or taking it: give_way waits */
} vsif_state;

/* Whether entry index is written as its stored BVCD rather than as text. */
static inline bool vsif_written_stored(const vsif_state *st, size_t index)
{
    return st->raw || st->img.scenes[index].textless;
}

/* verify and verify_entry (vsif_verify.c). */
trowel_status vsif_verify(trowel_archive *a);
trowel_status vsif_verify_entry(trowel_archive *a, size_t index);

#endif
