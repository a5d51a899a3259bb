/*
 * Choreography scenes (Valve's Source engine): the internal API shared by
 * the `vcd` (text), `bvcd` (binary) and `vsif` (scenes.image) formats.
 *
 * A scene is parsed from text VCD or read from BVCD v4 into one model
 * (choreo_scene, opaque outside choreo_*.c), which can be written back as
 * either. Strings in a BVCD are 16-bit indices into a string pool
 * (choreo_pool): inside a scenes.image that is the image's pool; for a
 * standalone BVCD the `bvcd` format keeps its own table.
 *
 * Facts come from Source SDK 2013 (choreoscene.cpp, choreoevent.cpp,
 * choreoactor.cpp, choreochannel.cpp, scriplib.cpp, sceneimage.cpp), learnt
 * and rewritten, never copied.
 *
 * Ownership: every object returned here is allocated on the given context
 * (trowel_mem_*) and freed with the matching *_free; *_free(NULL) is a no-op.
 * On failure every function sets the context's error and returns its status;
 * *out is then NULL / untouched and nothing leaks.
 */
#ifndef TROWEL_VALVE_CHOREO_H
#define TROWEL_VALVE_CHOREO_H

#include "core/reader.h"

#include <stdbool.h>

typedef struct choreo_scene choreo_scene; /* the parsed scene model */
typedef struct choreo_pool choreo_pool;   /* an ordered string pool */

/* BVCD string indices are signed 16-bit: at most this many strings. */
#define CHOREO_POOL_MAX 32768u

/* ------------------------------------------------------------ string pool */

/* An empty pool in *out (NULL when memory runs out). */
trowel_status choreo_pool_new(trowel_ctx *ctx, choreo_pool **out);
void choreo_pool_free(choreo_pool *p);
/* Adds s as the next string exactly as read from a file: no de-duplication,
 * its index is the count before the call. Refuses (LIMIT) past
 * CHOREO_POOL_MAX strings. s is copied. */
trowel_status choreo_pool_append(choreo_pool *p, const char *s);
/* Valve's rule when building a pool: if a string equal to s ignoring ASCII
 * case is present, *index is its index (the first one's); otherwise s is
 * appended. Insertion order is kept. Refuses (LIMIT) past CHOREO_POOL_MAX.
 * index may be NULL. */
trowel_status choreo_pool_intern(choreo_pool *p, const char *s, uint32_t *index);
size_t choreo_pool_count(const choreo_pool *p);
/* The string at index, or NULL when index is out of range. */
const char *choreo_pool_get(const choreo_pool *p, uint32_t index);

/* --------------------------------------------------------------- scenes */

/* Parses a text VCD (the reader's whole window) into a scene and applies the
 * engine's post-parse fix-ups (relative tags, gesture timing, close captions),
 * so that the model equals what the engine holds after loading the text.
 * Errors: CORRUPT with the line and byte offset of the bad token; LIMIT
 * for tokens of 1024 bytes or more or inputs beyond the memory limit. */
trowel_status choreo_parse_vcd(trowel_ctx *ctx, trowel_reader *text, choreo_scene **out);

/* Writes the scene as text VCD (Faceposer's layout, LF line ends; a scene
 * read from BVCD gets a "// bvcd source crc" comment, see below).
 * Values that BVCD quantises (ramp/flex values in 1/255, absolute tag times
 * in 1/4096, tag percentages in 1/255) are printed at the midpoint of their
 * quantisation step when the scene came from BVCD, so text -> binary is
 * exact. Every other float (and every value of a scene parsed from text)
 * is printed with as many decimals as it needs to read back to the same
 * float (at least Faceposer's count). */
trowel_status choreo_write_vcd(trowel_ctx *ctx, const choreo_scene *s, trowel_sink *out);
/* choreo_write_vcd hands its text to the sink in writes of this many bytes
 * (the last shorter); on a failure, the whole ones made so far are given. */
enum { CHOREO_VCD_WRITE_SIZE = 8192 };

/* Reads a BVCD v4 (the reader's whole window: "bvcd", version, CRC, body).
 * Each string index is resolved through pool; an index out of the pool's
 * range is CORRUPT. Trailing bytes after the scene are ignored (the engine
 * ignores them too); on success the reader's cursor stands just past the
 * scene, so the caller can count them (scenes.image verify reports them). */
trowel_status choreo_read_bvcd(trowel_ctx *ctx, trowel_reader *bin, const choreo_pool *pool,
                               choreo_scene **out);

/* As choreo_read_bvcd, except that a string index outside the pool reads
 * as "" (what the engine's pool lookup gives) instead of failing: *missing
 * counts such indices, *first_missing is the first one. A scene read so
 * cannot become faithful text, but its structure and times are known
 * (scenes.image keeps such scenes as stored bytes, and summarises them). */
trowel_status choreo_read_bvcd_loose(trowel_ctx *ctx, trowel_reader *bin, const choreo_pool *pool,
                                     choreo_scene **out, size_t *missing, int *first_missing);

/* What a survey of a BVCD learns: as choreo_read_bvcd_loose reads it, the
 * string indices outside the pool (missing, the first of them), the
 * scene's stop time (choreo_stop_time) and the time of its last speech
 * (its last SPEAK event's end, or start without one; 0 without any). */
typedef struct choreo_bvcd_facts {
    size_t missing;
    int first_missing;
    float stop_time, last_speech_time;
} choreo_bvcd_facts;

/* choreo_read_bvcd that also notes the survey's times on the way (facts:
 * missing stays 0, as a strict read fails on an index outside the pool),
 * so that a caller making text needs no survey of its own. */
trowel_status choreo_read_bvcd_facts(trowel_ctx *ctx, trowel_reader *bin, const choreo_pool *pool,
                                     choreo_scene **out, choreo_bvcd_facts *facts);

/* Reads a BVCD as choreo_read_bvcd_loose does, failing where it fails
 * (the same status, message and offset) but building no model: nothing
 * is allocated. */
trowel_status choreo_survey_bvcd(trowel_ctx *ctx, trowel_reader *bin, const choreo_pool *pool,
                                 choreo_bvcd_facts *facts);

/* Writes the scene as BVCD v4 with source_crc in its header (by convention
 * the CRC-32 of the source .vcd's bytes, see choreo_scene_source_crc).
 * Every string is interned into pool (choreo_pool_intern) in serialization
 * order as it is written.
 *
 * POOL ORDER RULE (scenes.image): Valve's builder adds a scene's summary
 * sounds to the pool BEFORE the scene's BVCD strings. So a caller building
 * an image must, for each scene: choreo_summarize, choreo_pool_intern each
 * summary sound in order, then choreo_write_bvcd.
 *
 * Refuses (UNSUPPORTED) counts the format cannot hold (more than 255
 * events/actors/channels/tags/tracks/ramp samples per list, more than 32767
 * flex samples) and a pool that would pass CHOREO_POOL_MAX (LIMIT). On
 * failure nothing is written to out, but strings interned before the
 * failure stay in the pool. */
trowel_status choreo_write_bvcd(trowel_ctx *ctx, const choreo_scene *s, choreo_pool *pool,
                                uint32_t source_crc, trowel_sink *out);

/* The CRC stored in the header of the BVCD the scene was read from. Text
 * written from such a scene records it in a comment line
 * "// bvcd source crc XXXXXXXX" under the header; parsing text keeps it, so
 * binary -> text -> binary can give the same header. 0 and false when the
 * scene has none (then the caller uses the CRC of the text's bytes). */
uint32_t choreo_scene_source_crc(const choreo_scene *s);
bool choreo_scene_has_source_crc(const choreo_scene *s);

/* Counts for `info`. */
typedef struct choreo_counts {
    size_t actors, channels, events; /* events: all, including actor-less */
} choreo_counts;
void choreo_scene_counts(const choreo_scene *s, choreo_counts *out);

/* Duration as the engine computes it: the latest of (end if set, else start)
 * over every event; 0 for a scene with no events. */
double choreo_scene_duration(const choreo_scene *s);

/* A time in seconds as summary milliseconds, by the double or the single
 * precision rule (see choreo_summary). */
uint32_t choreo_msecs(float seconds, bool single_precision);

void choreo_scene_free(trowel_ctx *ctx, choreo_scene *s);

/* -------------------------------------------------------------- summary */

/* The per-scene summary stored in a scenes.image. */
typedef struct choreo_summary {
    /* (uint32)(duration * 1000 + 0.5), as Valve's builder writes it. Its
     * source says `stop * 1000.0f + 0.5f` with a float stop time; most
     * builds evaluated that in double precision (x87), an L4D2-branch image
     * in single precision (SSE): the product rounded to float, then the
     * sum rounded to float, then truncated. msecs is the double rule,
     * msecs_float the single one; they differ when the exact product lies
     * just under a half millisecond (2.9875f: 2987 against 2988). */
    uint32_t msecs, msecs_float;
    /* Image v3 only (zero is fine to ignore for v2): when the last speech
     * ends, in ms, by Valve's rule (FindLastSpeakTime): of the SPEAK events
     * (actor-less ones too), the LAST ONE IN EVENT ORDER (see sounds below)
     * counts, not the one that ends last: its end if set, else its start,
     * rounded as msecs (and as msecs_float). 0 when the scene has no SPEAK
     * event. */
    uint32_t lastspeech_msecs, lastspeech_msecs_float;
    /* Sound names, de-duplicated ignoring ASCII case (the engine compares
     * pool ids, and the pool ignores case), in the engine's event order
     * (text: file order of the events; BVCD: actor-less events, then actors /
     * channels / events): for
     * each SPEAK event its param1, then when it is a close-caption master
     * its cctoken (or param1 when the token is empty). The strings belong to
     * the summary. */
    const char **sounds;
    size_t sound_count;
} choreo_summary;

trowel_status choreo_summarize(trowel_ctx *ctx, const choreo_scene *s, choreo_summary *out);
void choreo_summary_free(trowel_ctx *ctx, choreo_summary *sum);

/* Whether msecs is a lastspeech that Valve's builder could have stored for
 * this scene (in either precision, see choreo_summary). Valve computes it from the text VCD, where actor-less events
 * sit wherever the author wrote them; BVCD (and so a scene read from it)
 * puts them before every actor. So for a scene read from BVCD the last
 * speech in the text's order was either the last SPEAK event on an actor or
 * any actor-less SPEAK event; for a scene parsed from text, only
 * choreo_summarize's value counts. 0 is the only answer without speech. */
bool choreo_lastspeech_possible(const choreo_scene *s, uint32_t msecs);

#endif
