/*
 * What an ASM update changed (create -O asm=FILE, create -r): the ASM is
 * read before and after as the JSON 'convert --to json' gives, and the
 * containers whose base offset, read size or primitive sizes differ are
 * told: one line, and with -v one more line per container and primitive.
 */
#include "create.h"

#include <stdlib.h>
#include <string.h>

json_object *cli_asm_snapshot(cli_session *s, const char *path)
{
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_sink *mem = NULL;
    json_object *doc = NULL, *asm_part = NULL;
    const trowel_format *f = trowel_format_find("asm");
    if (f && trowel_input_open_file(s->ctx, path, &in) == TROWEL_OK &&
        trowel_archive_open(s->ctx, in, f, &a) == TROWEL_OK &&
        trowel_sink_open_memory(s->ctx, &mem) == TROWEL_OK &&
        trowel_convert(s->ctx, a, "json", NULL, 0, mem) == TROWEL_OK) {
        size_t size;
        const uint8_t *data = trowel_sink_data(mem, &size);
        json_tokener *tok = json_tokener_new();
        doc = tok ? json_tokener_parse_ex(tok, (const char *)data, (int)size) : NULL;
        json_tokener_free(tok);
    }
    trowel_ctx_clear_error(s->ctx);
    trowel_sink_discard(mem);
    trowel_archive_close(a);
    trowel_input_close(in);
    if (doc && json_object_object_get_ex(doc, "asm", &asm_part))
        json_object_get(asm_part);
    json_object_put(doc);
    return asm_part;
}

static int64_t field(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static const char *text(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static json_object *array(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array) ? v
                                                                                             : NULL;
}

static int64_t total_size(json_object *c)
{
    json_object *prims = array(c, "primitives");
    int64_t sum = 0;
    for (size_t i = 0; prims && i < json_object_array_length(prims); i++) {
        json_object *p = json_object_array_get_idx(prims, i);
        sum += field(p, "cpu_size") + field(p, "gpu_size");
    }
    return sum;
}

/* The primitives of container a (before) and b (after) whose sizes differ. */
static size_t changed_primitives(json_object *a, json_object *b, bool print)
{
    json_object *pa = array(a, "primitives"), *pb = array(b, "primitives");
    size_t n = pa && pb ? json_object_array_length(pa) : 0, changed = 0;
    for (size_t i = 0; i < n && i < json_object_array_length(pb); i++) {
        json_object *x = json_object_array_get_idx(pa, i), *y = json_object_array_get_idx(pb, i);
        if (field(x, "cpu_size") == field(y, "cpu_size") &&
            field(x, "gpu_size") == field(y, "gpu_size"))
            continue;
        changed++;
        if (print)
            fprintf(stderr, "    primitive %s: cpu size %lld -> %lld, gpu size %lld -> %lld\n",
                    text(y, "name"), (long long)field(x, "cpu_size"),
                    (long long)field(y, "cpu_size"), (long long)field(x, "gpu_size"),
                    (long long)field(y, "gpu_size"));
    }
    return changed;
}

static bool container_changed(json_object *a, json_object *b)
{
    return field(a, "base_offset") != field(b, "base_offset") ||
           field(a, "read_size") != field(b, "read_size") || changed_primitives(a, b, false) ||
           !json_object_equal(array(a, "sizes"), array(b, "sizes"));
}

static void print_container(json_object *a, json_object *b)
{
    fprintf(stderr, "%s (%zu primitive%s resized, size %lld -> %lld, read size %lld -> %lld)",
            text(b, "name"), changed_primitives(a, b, false),
            changed_primitives(a, b, false) == 1 ? "" : "s", (long long)total_size(a),
            (long long)total_size(b), (long long)field(a, "read_size"),
            (long long)field(b, "read_size"));
}

void cli_asm_report_change(cli_session *s, const char *shown, const char *stored_in,
                           json_object *before, json_object *after, bool quiet_if_same)
{
    json_object *ca = array(before, "containers"), *cb = array(after, "containers");
    if (s->quiet || !ca || !cb)
        return;
    size_t n = json_object_array_length(ca), changed = 0;
    if (n != json_object_array_length(cb))
        return; /* an update never adds or drops a container */
    for (size_t i = 0; i < n; i++)
        changed += container_changed(json_object_array_get_idx(ca, i),
                                     json_object_array_get_idx(cb, i));
    if (!changed && quiet_if_same && !s->verbose)
        return;
    cli_progress_clear(&s->progress);
    fputs(CLI_PROGRAM ": ", stderr);
    cli_put_safe(stderr, shown);
    if (!changed) {
        fputs(": ASM unchanged (its containers already matched)\n", stderr);
        return;
    }
    fputs(": ASM updated", stderr);
    if (stored_in) {
        fputs(" (the copy stored in ", stderr);
        cli_put_safe(stderr, stored_in);
        fputc(')', stderr);
    }
    fprintf(stderr, ", %zu container%s: ", changed, changed == 1 ? "" : "s");
    for (size_t i = 0, k = 0; i < n; i++) {
        json_object *a = json_object_array_get_idx(ca, i), *b = json_object_array_get_idx(cb, i);
        if (!container_changed(a, b))
            continue;
        fputs(k++ ? ", " : "", stderr);
        print_container(a, b);
    }
    fputc('\n', stderr);
    for (size_t i = 0; s->verbose && i < n; i++) {
        json_object *a = json_object_array_get_idx(ca, i), *b = json_object_array_get_idx(cb, i);
        if (!container_changed(a, b))
            continue;
        fprintf(stderr, "  container %s: base offset %lld -> %lld, read size %lld -> %lld\n",
                text(b, "name"), (long long)field(a, "base_offset"),
                (long long)field(b, "base_offset"), (long long)field(a, "read_size"),
                (long long)field(b, "read_size"));
        changed_primitives(a, b, true);
    }
}
