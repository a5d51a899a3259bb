/*
 * cine-sample: AMI and SPL sound effects of the Amiga and Atari ST versions
 * of Operation Stealth and Future Wars.
 *
 * The files are bare signed 8-bit mono samples with no header (ScummVM
 * engines/cine sound.cpp; ../shared/formats/delphine-cinematique.md). The
 * game picks the playback rate per sound (a Paula period from the script)
 * and zeroes the first and last two bytes before playing; the file keeps
 * them, and so does trowel.
 *
 * With no structure to check, trowel claims a file only by its name (*.AMI,
 * *.SPL) and only when it is not an SZDD file; `convert -t cine-sample`
 * forces it. convert --to wav writes 8-bit PCM at -O rate=N samples per
 * second, 8287 by default: the PAL Paula clock (3546895 Hz) over period 428,
 * the middle C of Amiga trackers.
 */
#include "core/module.h"
#include "export/wav.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RATE 8287u
#define MAX_RATE 1000000u

static bool has_ext(const trowel_input *in, const char *ext)
{
    const char *path = trowel_input_name(in);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t n = strlen(name), e = strlen(ext);
    if (n <= e)
        return false;
    for (size_t i = 0; i < e; i++)
        if (toupper((unsigned char)name[n - e + i]) != ext[i])
            return false;
    return true;
}

static int sample_bid(trowel_reader *r)
{
    const uint8_t *p;
    if (!has_ext(r->in, ".AMI") && !has_ext(r->in, ".SPL"))
        return TROWEL_BID_NONE;
    if (trowel_reader_size(r) == 0)
        return TROWEL_BID_NONE;
    if (trowel_reader_size(r) >= 4 && trowel_reader_peek(r, 4, &p) == TROWEL_OK &&
        (memcmp(p, "SZDD", 4) == 0 || memcmp(p, "SZ \x88", 4) == 0))
        return TROWEL_BID_NONE;
    /* Only the name speaks for it: less than any structural evidence. */
    return TROWEL_BID_WEAK / 2;
}

static trowel_status sample_open(trowel_archive *a, trowel_reader *r)
{
    uint64_t n = trowel_reader_size(r);
    trowel_status s;
    if (n == 0)
        return trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED, 0, "the sample is empty");
    if ((s = trowel_props_add_str(a->info, "format", "cine-sample")) ||
        (s = trowel_props_add_uint(a->info, "version", 0)) ||
        (s = trowel_props_add_str(a->info, "encoding", "signed 8-bit mono")) ||
        (s = trowel_props_add_uint(a->info, "samples", n)) ||
        (s = trowel_props_add_uint(a->info, "default_rate", DEFAULT_RATE)))
        return s;
    return TROWEL_OK;
}

static const trowel_option_info sample_options[] = {
    {"rate", "N", "samples per second written in the WAV header (default 8287)", "wav",
     .type = TROWEL_OPTION_UINT, .min = 1, .max = MAX_RATE, .def = "8287"},
    {0},
};

static trowel_status sample_convert(trowel_archive *a, const char *target, const char *const *opts,
                                    size_t nopts, trowel_sink *out)
{
    if (strcmp(target, "wav") != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "cine-sample converts to wav or json, not %s", target);
    /* rate= was checked against sample_options (1 to MAX_RATE, default 8287) */
    trowel_option_values o = trowel_option_values_of(sample_options, target, opts, nopts);
    uint32_t rate = (uint32_t)trowel_option_uint(&o, "rate");
    trowel_reader r;
    trowel_reader_init(&r, a->ctx, a->in);
    return trowel_wav_write_reader(a->ctx, out, &r, rate, true);
}


const trowel_format trowel_format_cine_sample = {
    .id = "cine-sample",
    .family = "cinematique",
    .description = "Delphine Cinematique sound effect (.AMI, .SPL: signed 8-bit samples)",
    .extensions = ".ami .spl",
    .caps = 0,
    .create_options = "",
    .convert_targets = "wav",
    .options = sample_options,
    .bid = sample_bid,
    .open = sample_open,
    .convert = sample_convert,
};
