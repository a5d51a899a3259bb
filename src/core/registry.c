/*
 * The one table of formats, input filters and codecs. Adding a module is
 * adding a line here (and its file under src/format/<family>/ or src/codec/).
 */
#include "filter.h"

extern const trowel_format trowel_format_szdd;
extern const trowel_format trowel_format_spz;
extern const trowel_format trowel_format_tres_wtd;
extern const trowel_format trowel_format_tres_pid;
extern const trowel_format trowel_format_groff;
extern const trowel_format trowel_format_cine_part;
extern const trowel_format trowel_format_cine_volcnf;
extern const trowel_format trowel_format_vsif;
extern const trowel_format trowel_format_vcd;
extern const trowel_format trowel_format_bvcd;
extern const trowel_format trowel_format_cine_font;
extern const trowel_format trowel_format_cine_bg;
extern const trowel_format trowel_format_cine_ani;
extern const trowel_format trowel_format_cine_msk;
extern const trowel_format trowel_format_cine_set;
extern const trowel_format trowel_format_cine_sample;
extern const trowel_format trowel_format_cine_script;
extern const trowel_format trowel_format_cine_save;
extern const trowel_format trowel_format_vpp;
extern const trowel_format trowel_format_scumm_res;
extern const trowel_format trowel_format_scumm_cost;
extern const trowel_format trowel_format_scumm_akos;
extern const trowel_format trowel_format_asm;
extern const trowel_filter trowel_filter_xor69;
extern const trowel_filter trowel_filter_szdd;
extern const trowel_codec trowel_codec_szdd;
extern const trowel_codec trowel_codec_spz;
extern const trowel_codec trowel_codec_bytekiller;
extern const trowel_codec trowel_codec_vsif_lzma;
extern const trowel_codec trowel_codec_zlib;
extern const trowel_codec trowel_codec_lz4;

const trowel_format *const trowel_formats[] = {
    &trowel_format_szdd,
    &trowel_format_spz,
    &trowel_format_tres_wtd,
    &trowel_format_tres_pid,
    &trowel_format_groff,
    &trowel_format_cine_part,
    &trowel_format_cine_volcnf,
    &trowel_format_vsif,
    &trowel_format_vcd,
    &trowel_format_bvcd,
    &trowel_format_cine_font,
    &trowel_format_cine_bg,
    &trowel_format_cine_ani,
    &trowel_format_cine_msk,
    &trowel_format_cine_set,
    &trowel_format_cine_sample,
    &trowel_format_cine_script,
    &trowel_format_cine_save,
    &trowel_format_vpp,
    &trowel_format_scumm_res,
    &trowel_format_scumm_cost,
    &trowel_format_scumm_akos,
    &trowel_format_asm,
};
const size_t trowel_formats_len = sizeof trowel_formats / sizeof trowel_formats[0];

/* Tried in this order before formats bid (filter.c). */
const trowel_filter *const trowel_filters[] = {&trowel_filter_xor69, &trowel_filter_szdd};
const size_t trowel_filters_len = sizeof trowel_filters / sizeof trowel_filters[0];

const trowel_codec *const trowel_codecs[] = {
    &trowel_codec_szdd,
    &trowel_codec_spz,
    &trowel_codec_bytekiller,
    &trowel_codec_vsif_lzma,
    &trowel_codec_zlib,
    &trowel_codec_lz4,
};
const size_t trowel_codecs_len = sizeof trowel_codecs / sizeof trowel_codecs[0];

const trowel_option_info *trowel_format_option_at(const trowel_format *f, size_t index)
{
    for (size_t i = 0; f->options && f->options[i].key; i++)
        if (i == index)
            return &f->options[i];
    return NULL;
}
