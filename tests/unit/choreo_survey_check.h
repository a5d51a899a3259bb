/*
 * The one comparison of the scenes.image survey's BVCD read
 * (choreo_survey_bvcd, no model) with the full read, shared by
 * tests/unit/test_choreo.c (which counts disagreements) and
 * fuzz/fuzz_bvcd.c (which aborts on one).
 */
#ifndef TROWEL_CHOREO_SURVEY_CHECK_H
#define TROWEL_CHOREO_SURVEY_CHECK_H

#include "format/valve/choreo.h"
#include "format/valve/choreo_model.h"

#include <stdio.h>
#include <string.h>

/* Reads the BVCD data[0, n) loosely both ways: the survey must fail
 * exactly where the full read fails (status, message, offset) and
 * otherwise learn what the full read and its summary give (indices
 * outside the pool, the stop time to the bit, both rules' msecs of it and
 * of the last speech). True when they agree; else why says how they
 * differ. With memory_may_refuse, a full read refused for memory (the
 * model did not fit, where the survey needs none) is no disagreement. */
static inline bool choreo_survey_agrees(trowel_ctx *ctx, const uint8_t *data, size_t n,
                                        const choreo_pool *pool, bool memory_may_refuse,
                                        char *why, size_t cap)
{
    trowel_input *in = NULL;
    if (trowel_input_open_memory(ctx, data, n, "mem.bvcd", &in) != TROWEL_OK) {
        snprintf(why, cap, "the input did not open");
        return memory_may_refuse;
    }
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    choreo_scene *s = NULL;
    size_t missing = 0;
    int first = 0;
    trowel_status full = choreo_read_bvcd_loose(ctx, &r, pool, &s, &missing, &first);
    trowel_error full_error = *trowel_ctx_last_error(ctx);
    trowel_ctx_clear_error(ctx); /* the survey's error must be its own */
    trowel_reader_init(&r, ctx, in);
    choreo_bvcd_facts f;
    trowel_status light = choreo_survey_bvcd(ctx, &r, pool, &f);
    const trowel_error *light_error = trowel_ctx_last_error(ctx);
    bool same = full == light ||
                (memory_may_refuse && (full == TROWEL_ERR_LIMIT || full == TROWEL_ERR_NOMEM));
    if (same && full == light && full != TROWEL_OK)
        same = light_error->offset == full_error.offset &&
               strcmp(light_error->message, full_error.message) == 0;
    choreo_summary sum;
    if (same && full == TROWEL_OK && light == TROWEL_OK &&
        choreo_summarize(ctx, s, &sum) == TROWEL_OK) {
        float stop = choreo_stop_time(s);
        same = f.missing == missing && f.first_missing == first &&
               memcmp(&f.stop_time, &stop, sizeof stop) == 0 &&
               choreo_msecs(f.stop_time, false) == sum.msecs &&
               choreo_msecs(f.stop_time, true) == sum.msecs_float &&
               choreo_msecs(f.last_speech_time, false) == sum.lastspeech_msecs &&
               choreo_msecs(f.last_speech_time, true) == sum.lastspeech_msecs_float;
        choreo_summary_free(ctx, &sum);
    }
    if (!same)
        snprintf(why, cap, "%zu bytes: full %d (%.200s), survey %d (%.200s)", n, (int)full,
                 full_error.message, (int)light, light_error->message);
    trowel_ctx_clear_error(ctx);
    choreo_scene_free(ctx, s);
    trowel_input_close(in);
    return same;
}

#endif
