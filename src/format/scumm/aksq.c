/*
 * The AKSQ command stream of AKOS costumes (v7, v8): how long each opcode
 * is, where its jump target sits, and the JSON disassembly.
 *
 * A byte below 0x80 is a cel; otherwise a big-endian word is read: words
 * 0xC0xx are commands with little-endian operands, other words are cels
 * (code & 0xFFF). One table (aksq_ops) gives each command's length, name
 * and jump-target position, so the walker (costume.c) and the disassembler
 * read operands only inside what the length says the command holds, and
 * every length is checked against the end of the block.
 *
 * Facts: ../shared/seeds/scumm-costumes.txt (2.3 Commands, argument lists),
 * ../shared/formats/scumm-costumes.md (lengths as ScummVM's akos.cpp
 * steps over them: akos_increaseAnim).
 */
#include "format/scumm/costume.h"

#include <json-c/json.h>
#include <stdio.h>

enum {
    LEN_VARIABLE = 0, /* the length is an operand: C021/C022/C045..C048 */
    LEN_DRAW_MANY = 1 /* C020/C025: a counted list of cels */
};

typedef struct aksq_op {
    uint16_t code;
    uint8_t length; /* bytes with the opcode; LEN_VARIABLE or LEN_DRAW_MANY */
    uint8_t target; /* operand offset of a u16 jump target from the opcode; 0: none */
    const char *name;
} aksq_op;

static const aksq_op aksq_ops[] = {
    {0xC001, 2, 0, "empty-cel"},
    {0xC010, 5, 0, "set-var"},
    {0xC015, 3, 0, "start-sound"},
    {0xC016, 5, 2, "if-sound-in-var-running-goto"},
    {0xC017, 5, 2, "if-sound-in-var-not-running-goto"},
    {0xC018, 5, 2, "if-sound-running-goto"},
    {0xC019, 5, 2, "if-sound-not-running-goto"},
    {0xC020, LEN_DRAW_MANY, 0, "draw-many"},
    {0xC021, LEN_VARIABLE, 0, "cond-draw-many"},
    {0xC022, LEN_VARIABLE, 0, "cond-relative-draw-many"},
    {0xC025, LEN_DRAW_MANY, 0, "relative-draw-many"},
    {0xC030, 4, 2, "goto"},
    {0xC031, 5, 2, "if-var-goto"},
    {0xC040, 5, 0, "add-var"},
    {0xC042, 3, 0, "soft-sound"},
    {0xC044, 3, 0, "soft-var-sound"},
    {0xC045, LEN_VARIABLE, 0, "set-user-condition"},
    {0xC046, LEN_VARIABLE, 0, "set-var-to-user-condition"},
    {0xC047, LEN_VARIABLE, 0, "set-talk-condition"},
    {0xC048, LEN_VARIABLE, 0, "set-var-to-talk-condition"},
    {0xC050, 3, 0, "start-script"},
    {0xC060, 2, 0, "inc-var"},
    {0xC061, 2, 0, "start-sound-0"},
    {0xC070, 7, 2, "if-var-eq-goto"},
    {0xC071, 7, 2, "if-var-ne-goto"},
    {0xC072, 7, 2, "if-var-lt-goto"},
    {0xC073, 7, 2, "if-var-le-goto"},
    {0xC074, 7, 2, "if-var-gt-goto"},
    {0xC075, 7, 2, "if-var-ge-goto"},
    {0xC080, 3, 0, "start-anim"},
    {0xC081, 3, 0, "start-var-anim"},
    {0xC082, 7, 0, "set-var-random"},
    {0xC083, 3, 0, "set-actor-z-clipping"},
    {0xC084, 4, 0, "start-actor-anim"},
    {0xC085, 6, 0, "set-actor-var"},
    {0xC086, 2, 0, "hide-actor"},
    {0xC087, 6, 0, "set-draw-offsets"},
    {0xC088, 3, 0, "jump-to-offset-in-var"},
    {0xC089, 8, 0, "sound-stuff"},
    {0xC08A, 4, 0, "flip"},
    {0xC08B, 3, 0, "start-action-on"},
    {0xC08C, 3, 0, "start-script-var"},
    {0xC08D, 3, 0, "start-sound-var"},
    {0xC08E, 4, 0, "display-aux-frame"},
    {0xC090, 5, 0, "if-var-eq-do"},
    {0xC091, 5, 0, "if-var-ne-do"},
    {0xC092, 5, 0, "if-var-lt-do"},
    {0xC093, 5, 0, "if-var-le-do"},
    {0xC094, 5, 0, "if-var-gt-do"},
    {0xC095, 5, 0, "if-var-ge-do"},
    {0xC09F, 2, 0, "end-if-do"},
    {0xC0A0, 4, 0, "start-actor-talkie"},
    {0xC0A1, 4, 2, "if-talking-goto"},
    {0xC0A2, 4, 2, "if-not-talking-goto"},
    {0xC0A3, 3, 0, "start-talkie-in-var"},
    {0xC0A4, 4, 2, "if-any-talking-goto"},
    {0xC0A5, 4, 2, "if-not-any-talking-goto"},
    {0xC0FF, 2, 0, "end-sequence"},
};

static const aksq_op *find_op(uint16_t code)
{
    for (size_t i = 0; i < sizeof aksq_ops / sizeof aksq_ops[0]; i++)
        if (aksq_ops[i].code == code)
            return &aksq_ops[i];
    return NULL;
}

/* The length of a draw-many list at `at`: its count byte, then per cel
 * 4 bytes of offsets and a 1- or 2-byte cel code; 0 when it is cut. */
static unsigned draw_many_length(const scumm_costume *c, uint32_t at, uint16_t code)
{
    uint64_t p = (uint64_t)at + (code == 0xC025 ? 7 : 3);
    if (p > c->cmd_count)
        return 0;
    unsigned count = c->cmds[p - 1];
    for (unsigned i = 0; i < count; i++) {
        p += 4;
        if (p >= c->cmd_count)
            return 0;
        p += (c->cmds[p] & 0x80) ? 2 : 1;
    }
    return p <= c->cmd_count ? (unsigned)(p - at) : 0;
}

/* A command's length in bytes (opcode included); 0: unknown or cut. */
static unsigned command_length(const scumm_costume *c, uint32_t at, const aksq_op *op)
{
    if (!op)
        return 0;
    if (op->length == LEN_DRAW_MANY)
        return draw_many_length(c, at, op->code);
    if (op->length == LEN_VARIABLE)
        return (uint64_t)at + 2 < c->cmd_count && c->cmds[at + 2] >= 3 ? c->cmds[at + 2] : 0;
    return op->length;
}

bool scumm_aksq_is_cel(uint16_t code)
{
    return code < 0x80 || (code & 0xF000) == 0x8000;
}

bool scumm_aksq_code(const scumm_costume *c, uint32_t at, uint16_t *code, unsigned *len)
{
    if (at >= c->cmd_count)
        return false;
    if (!(c->cmds[at] & 0x80)) {
        *code = c->cmds[at];
        *len = 1;
        return true;
    }
    if ((uint64_t)at + 1 >= c->cmd_count)
        return false;
    *code = (uint16_t)(c->cmds[at] << 8 | c->cmds[at + 1]);
    *len = (*code & 0xC000) == 0xC000 ? command_length(c, at, find_op(*code)) : 2;
    return *len != 0 && (uint64_t)at + *len <= c->cmd_count;
}

bool scumm_aksq_target(const scumm_costume *c, uint32_t at, uint16_t code, unsigned len,
                       uint32_t *target)
{
    const aksq_op *op = find_op(code);
    if (!op || op->target == 0 || op->target + 2u > len || (uint64_t)at + len > c->cmd_count)
        return false;
    const uint8_t *p = c->cmds + at + op->target;
    *target = (uint32_t)(p[0] | p[1] << 8);
    return true;
}

static json_object *jint(int64_t v) { return json_object_new_int64(v); }

/* The entry of a code that could not be read: its position and up to 16
 * of the bytes left. */
static json_object *cut_entry(const scumm_costume *c, uint32_t at)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "at", jint(at));
    json_object_object_add(o, "error", json_object_new_string("unknown or cut opcode"));
    json_object *rest = json_object_new_array();
    for (uint32_t i = at; i < c->cmd_count && i < at + 16; i++)
        json_object_array_add(rest, jint(c->cmds[i]));
    json_object_object_add(o, "bytes", rest);
    return o;
}

json_object *scumm_aksq_disassemble(const scumm_costume *c)
{
    json_object *arr = json_object_new_array();
    for (uint32_t at = 0; at < c->cmd_count;) {
        uint16_t code;
        unsigned len;
        if (!scumm_aksq_code(c, at, &code, &len)) {
            json_object_array_add(arr, cut_entry(c, at));
            break;
        }
        json_object *o = json_object_new_object();
        json_object_object_add(o, "at", jint(at));
        char op[8];
        snprintf(op, sizeof op, len == 1 ? "%02X" : "%04X", code);
        json_object_object_add(o, "op", json_object_new_string(op));
        if (scumm_aksq_is_cel(code)) {
            json_object_object_add(o, "name", json_object_new_string("cel"));
            json_object_object_add(o, "cel", jint(code & 0xFFF));
        } else {
            const aksq_op *info = find_op(code);
            json_object_object_add(o, "name",
                                   json_object_new_string(info ? info->name : "unknown"));
            if (len > 2) {
                json_object *args = json_object_new_array();
                for (uint32_t i = at + 2; i < at + len; i++)
                    json_object_array_add(args, jint(c->cmds[i]));
                json_object_object_add(o, "operands", args);
            }
            uint32_t target;
            if (scumm_aksq_target(c, at, code, len, &target))
                json_object_object_add(o, "target", jint(target));
        }
        json_object_array_add(arr, o);
        at += len;
    }
    return arr;
}
