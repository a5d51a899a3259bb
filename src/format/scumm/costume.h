/*
 * SCUMM costumes (COST v5/v6 in cost.c, AKOS v7/v8 in akos.c) decoded into
 * one model: pictures (cels) with their pixels, limbs, animations and the
 * command streams that drive them; costume.c turns the model into PNG
 * pictures + a sheet + a JSON atlas, animated GIFs, and the JSON structure.
 *
 * Pixels of COST and AKOS codec 1 are local costume colours (0 transparent)
 * that the costume palette maps to room colours; AKOS codecs 5 and 16 hold
 * raw room colours (255 transparent). A 256-colour room palette (768 bytes
 * RGB) turns room colours into RGB: -O palette=FILE, or the caller's (a
 * costume inside a game file, see scumm_costume_convert), else a stand-in
 * (palette.c).
 *
 * Facts: ../shared/seeds/scumm-costumes.txt, ../shared/formats/scumm-costumes.md,
 * ScummVM engines/scumm/costume.cpp, akos.cpp.
 */
#ifndef TROWEL_SCUMM_COSTUME_H
#define TROWEL_SCUMM_COSTUME_H

#include "core/module.h"
#include "export/image.h"

struct json_object;

enum {
    SCUMM_LIMBS = 16,
    SCUMM_MAX_FRAMES = 256,     /* frames of one animation (GIF, atlas sequences) */
    SCUMM_MAX_AKSQ_STEPS = 1024 /* AKSQ opcodes run to find one frame */
};

#define SCUMM_NO_PICTURE UINT32_MAX

typedef struct scumm_picture {
    uint32_t offset; /* its header, from the costume base (AKOS: AKOF index) */
    uint16_t width, height;
    int16_t rel_x, rel_y, move_x, move_y;
    int redirect_limb, redirect_pic; /* COST 0x60/0x61; -1: none */
    uint32_t data_offset;            /* coded pixels, from the base (AKOS: in AKCD) */
    uint32_t data_size;              /* coded bytes used */
    uint8_t *pixels;                 /* width*height */
} scumm_picture;

typedef enum scumm_limb_kind {
    SCUMM_LIMB_UNUSED = 0, /* the animation leaves the limb as it is */
    SCUMM_LIMB_DISABLED,   /* COST start 0xFFFF, AKOS mode 1: cleared */
    SCUMM_LIMB_SEQUENCE,   /* plays commands from start */
    SCUMM_LIMB_HIDE,       /* AKOS mode 4 */
    SCUMM_LIMB_SHOW        /* AKOS mode 5 */
} scumm_limb_kind;

typedef struct scumm_limb_def {
    uint8_t kind;  /* scumm_limb_kind */
    uint8_t mode;  /* AKOS AKCH mode byte */
    uint16_t start;
    uint16_t len;  /* COST: last-frame offset; AKOS: length */
    bool loop;
} scumm_limb_def;

typedef struct scumm_anim {
    bool present;
    uint32_t offset;
    uint16_t mask;
    scumm_limb_def limb[SCUMM_LIMBS];
} scumm_anim;

typedef struct scumm_costume {
    trowel_ctx *ctx;
    bool akos;
    unsigned version;   /* COST: 5 or 6 (0: bare v3/v4 header); AKOS: AKHD version */
    uint32_t base;      /* where offsets count from, in the input */
    uint32_t size;      /* bytes from base to the end of the costume */
    uint8_t format;     /* COST format byte */
    uint32_t size_field; /* COST: the LE u32 at the base (0: no extra animation) */
    uint16_t flags;     /* AKOS AKHD flags */
    uint16_t codec;     /* AKOS codec (COST: 1) */
    unsigned colours;   /* pixel values: local colours (16, 32, 64) or 256 raw */
    bool raw_colours;   /* AKOS codecs 5 and 16 */
    bool never_mirror;
    unsigned directions; /* 4 or 8 */
    uint8_t palette[256]; /* local colour -> room colour */
    bool has_rgbs;
    uint8_t rgbs[768];
    uint8_t *cmds;      /* COST animation commands / AKOS AKSQ */
    size_t cmd_count;
    uint32_t cmds_offset;
    uint16_t limb_table[SCUMM_LIMBS];  /* COST limb table offsets */
    uint32_t *limb_pics[SCUMM_LIMBS];  /* COST: picture index per table entry */
    size_t limb_pic_count[SCUMM_LIMBS];
    scumm_anim *anims;
    size_t anim_count;
    scumm_picture *pictures;
    size_t picture_count;
    size_t warnings;
    char palette_from[160]; /* where the conversion's colours came from */
    const char *folder; /* output names go inside it (NULL: the output folder) */
} scumm_costume;

/* One step of a limb's sequence: a picture, or a command without one. */
typedef struct scumm_step {
    uint32_t picture; /* SCUMM_NO_PICTURE: none */
    uint16_t code;    /* the command or cel code read */
    uint32_t at;      /* its position in cmds */
} scumm_step;

/* Decoders: costume bytes [0, size) (a whole COST or AKOS block, or a
 * bare v3/v4 costume) into c. Failures leave c freed. The format that
 * opens a costume passes its decoder in (scumm_costume_open), so the
 * shared code calls neither by name. */
typedef trowel_status (*scumm_costume_decode_fn)(trowel_ctx *ctx, const uint8_t *data,
                                                 size_t size, scumm_costume *c);
trowel_status scumm_cost_decode(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                scumm_costume *c);
trowel_status scumm_akos_decode(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                scumm_costume *c);
void scumm_costume_free(scumm_costume *c);
/* What the two decoders share: c zeroed and bound to ctx, decode run over
 * [data, data + size), and c freed again when it fails. */
typedef trowel_status (*scumm_costume_decoder)(scumm_costume *c, const uint8_t *data, size_t size);
trowel_status scumm_costume_decode_with(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                        scumm_costume *c, scumm_costume_decoder decode);

/* The steps a limb plays in an animation, up to max; *loops: it repeats. */
size_t scumm_limb_steps(scumm_costume *c, const scumm_anim *a, unsigned limb, scumm_step *steps,
                        size_t max, bool *loops);

/* palette.c: -O palette=FILE (a CLUT, APAL or PALS block as extract writes
 * it, 768 bytes of RGB, an indexed PNG, a GIF), opened through the open
 * hook; *kind says which it was. */
trowel_status scumm_palette_load(trowel_ctx *ctx, const char *path, uint8_t rgb[768],
                                 const char **kind);
/* The same from the bytes of such a file (path names it in messages). */
trowel_status scumm_palette_from_bytes(trowel_ctx *ctx, const char *path, const uint8_t *d,
                                       size_t n, uint8_t rgb[768], const char **kind);
/* Does rgb (a room palette) show c: do the colours c draws map to at least
 * two different RGB values? (An all-black room palette does not.) */
bool scumm_palette_usable(const scumm_costume *c, const uint8_t rgb[768]);
/* The stand-in for a costume without a room palette: its own colour k
 * drawn as EGA colour k (then further distinct colours), not as room
 * colours. */
void scumm_standalone_palette(const scumm_costume *c, trowel_palette *pal);

/* The PNG/GIF palette of a costume's pixels: local colours through the
 * costume palette into room_rgb (0 transparent), or raw room colours (255
 * transparent). */
void scumm_costume_palette(const scumm_costume *c, const uint8_t room_rgb[768],
                           trowel_palette *pal);

/* Shared format glue: open (decode with the format's decoder, info, one
 * entry per picture), read_entry, the structure for --to json,
 * convert_folder (png, gif), close. */
trowel_status scumm_costume_open(trowel_archive *a, trowel_reader *r,
                                 scumm_costume_decode_fn decode);
trowel_status scumm_costume_read_entry(trowel_archive *a, size_t index, trowel_sink *out);
trowel_status scumm_costume_structure(trowel_archive *a, struct json_object *root);
trowel_status scumm_costume_convert_folder(trowel_archive *a, const char *target,
                                           const char *const *opts, size_t nopts,
                                           trowel_outdir *dir);
void scumm_costume_close(trowel_archive *a);

/* Writes c's png or gif files into dir (inside c->folder when set). The
 * palette: -O palette=FILE, else room_rgb (768 bytes; room_from says whose,
 * for costume.json), else the costume's RGBS, else the stand-in (warned). */
trowel_status scumm_costume_convert(scumm_costume *c, const uint8_t *room_rgb,
                                    const char *room_from, const char *target,
                                    const char *const *opts, size_t nopts, trowel_outdir *dir);

/* AKSQ (aksq.c): the code at `at` (a byte below 0x80, or a big-endian
 * word) and its length in bytes, false when it is unknown or passes the
 * stream; whether a code is a cel; the u16 jump target of a command whose
 * operands hold one (false: none, or not inside its length). */
bool scumm_aksq_code(const scumm_costume *c, uint32_t at, uint16_t *code, unsigned *len);
bool scumm_aksq_is_cel(uint16_t code);
bool scumm_aksq_target(const scumm_costume *c, uint32_t at, uint16_t code, unsigned len,
                       uint32_t *target);

/* The AKSQ disassembly (a JSON array of {"at", "op", "name", args}). */
struct json_object *scumm_aksq_disassemble(const scumm_costume *c);

#define SCUMM_COSTUME_OPTIONS                                                                  \
    {"palette", "FILE", "room colours from FILE: a CLUT, PALS or APAL block as extract "      \
                        "writes it, 768 bytes of RGB, or an indexed PNG or a GIF", "png gif",  \
     .type = TROWEL_OPTION_STRING},                                                            \
    {"delay", "CS", "GIF frame delay in hundredths of a second (default 10)", "gif",           \
     .type = TROWEL_OPTION_UINT, .min = 0, .max = 65535, .def = "10"},                         \
    {"columns", "N", "pictures per row of the sheet (default: about square)", "png",           \
     .type = TROWEL_OPTION_UINT, .min = 0, .max = 4096}

#endif
