/*
 * trowel mount ARCHIVE MOUNTPOINT [-f] [-r] [--views] [--raw] [--names LIST] [-O KEY=VALUE]...
 * trowel umount MOUNTPOINT
 * The archive as a read-only folder through FUSE (cli/mount/): the tree
 * extract would write, and with --views other views under .trowel/. umount asks
 * fusermount3 -u, as a user would. Built without libfuse3, mount says so.
 */
#include "cli.h"
#ifdef TROWEL_HAVE_FUSE
#include "mount/mount.h"
#endif

#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NO_FUSE_HELP "This trowel was built without libfuse3: mount is not available.\n"

const char *cli_mount_fuse_version(void)
{
#ifdef TROWEL_HAVE_FUSE
    return TROWEL_FUSE_VERSION;
#else
    return NULL;
#endif
}

/* ----------------------------------------------------------------- mount */

#ifdef TROWEL_HAVE_FUSE
/* The decoded bytes kept: --cache, else half the memory limit (the other
 * half is for decoding the entry being read). */
static int cache_limit(const cli_session *s, const cli_args *args, uint64_t *out)
{
    const char *text = cli_args_last(args, OPT_CACHE);
    *out = trowel_ctx_mem_limit(s->ctx) / 2;
    if (text && !cli_parse_size(text, out))
        return cli_usage_error(s->verb, "--cache takes a byte count such as 256M, not '%s'", text);
    return CLI_EXIT_OK;
}

/* A mount point that is missing or no folder is a bad operand, not a
 * misuse of the command line: exit 1, as cp and mount(8) fail for it. */
static int check_mountpoint(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            cli_error("%s: no such folder to mount on (make it first)", path);
        else
            cli_error("%s: cannot use as the mount point: %s", path, strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    if (!S_ISDIR(st.st_mode)) {
        cli_error("%s: the mount point must be a folder", path);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

/* The same input opened again with raw=1, for .trowel/raw/. */
static int open_raw(cli_session *s, const char *path, const trowel_format *fmt,
                    const cli_args *args, cli_opened *out)
{
    int rc = cli_open_archive(s, path, fmt, out);
    if (rc == CLI_EXIT_OK)
        rc = cli_apply_names(s, path, out->a, cli_args_last(args, OPT_NAMES));
    static const char *const raw[] = {"raw=1"};
    if (rc == CLI_EXIT_OK && trowel_archive_set_options(out->a, raw, 1) != TROWEL_OK)
        rc = cli_report(s, path, NULL);
    return rc;
}

static int run_mount(const cli_args *args, cli_session *s)
{
    const trowel_format *fmt;
    int rc = cli_need_operands(s, args, 2, 2, "ARCHIVE and MOUNTPOINT operands");
    if (rc == CLI_EXIT_OK)
        rc = cli_forced_format(s, args, &fmt);
    if (rc == CLI_EXIT_OK && cli_is_stdin(args->operands[0]))
        rc = cli_usage_error(s->verb, "mount reads a file, not standard input");
    if (rc == CLI_EXIT_OK)
        rc = check_mountpoint(args->operands[1]);
    uint64_t cache = 0;
    if (rc == CLI_EXIT_OK)
        rc = cache_limit(s, args, &cache);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *path = args->operands[0];
    mount_config cfg = {.archive = path, .mountpoint = args->operands[1],
                        .foreground = cli_args_has(args, OPT_FOREGROUND),
                        .debug = cli_args_has(args, OPT_DEBUG),
                        .recursive = cli_args_has(args, OPT_RECURSIVE),
                        .views = cli_args_has(args, OPT_VIEWS), .cache_limit = cache};
    cli_opened o = {0}, raw = {0};
    rc = cli_open_archive(s, path, fmt, &o);
    if (rc == CLI_EXIT_OK)
        rc = cli_apply_names(s, path, o.a, cli_args_last(args, OPT_NAMES));
    if (rc == CLI_EXIT_OK)
        rc = cli_apply_read_options(s, path, o.a, args);
    if (rc == CLI_EXIT_OK && cfg.views && !cli_args_has(args, OPT_RAW) &&
        mount_format_has_raw_option(trowel_archive_format(o.a)))
        rc = open_raw(s, path, fmt, args, &raw);
    /* What opening found (a damaged file's problems) is summed up before
     * the mount serves: the session never ends while it does. */
    cli_summarise_messages(s);
    if (rc == CLI_EXIT_OK)
        rc = mount_serve(s, o.a, raw.a, &cfg);
    cli_close_archive(&raw);
    cli_close_archive(&o);
    return rc;
}
#else
static int run_mount(const cli_args *args, cli_session *s)
{
    (void)args;
    cli_error("%s: this trowel was built without libfuse3 (install libfuse3-dev and rebuild)",
              s->verb);
    return CLI_EXIT_FAILURE;
}
#endif

static void mount_help(FILE *f)
{
#ifdef TROWEL_HAVE_FUSE
    fputs("\nUnmount with 'fusermount3 -u MOUNTPOINT' or '" CLI_PROGRAM " umount MOUNTPOINT';\n"
          "with -f, Ctrl-C unmounts too.\n",
          f);
#else
    fputs("\n" NO_FUSE_HELP, f);
#endif
}

static const cli_option mount_options[] = {
    {OPT_FOREGROUND, 'f', "foreground", NULL,
     "stay in the foreground (errors on stderr; Ctrl-C unmounts)"},
    {OPT_RECURSIVE, 'r', "recursive", NULL,
     "show entries that are archives as folders too (ENTRY.d/, as extract -r)"},
    {OPT_VIEWS, 0, "views", NULL,
     "add the folder .trowel/ of other views (raw/, convert/, archive.json, manifest.json)"},
    {OPT_CACHE, 0, "cache", "SIZE", "keep at most SIZE decoded bytes (default: half of --mem-limit)"},
    {OPT_RAW, 0, "raw", NULL, "show entries as stored, not converted (as extract --raw)"},
    {OPT_NAMES, 0, "names", "LIST", "recover entry names from LIST (formats that store hashes)"},
    {OPT_OPTION, 'O', "option", "KEY=VALUE", "a reading option of the format (repeatable)"},
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_DEBUG, 0, "debug", NULL, NULL},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_mount = {
    .name = "mount",
    .synopsis = "mount ARCHIVE MOUNTPOINT [-f] [-r] [--views] [--cache SIZE] [--raw] "
                "[--names LIST] [-O KEY=VALUE]...",
    .summary = "show an archive as a read-only folder (FUSE)",
    .description =
        "Mount ARCHIVE on the folder MOUNTPOINT, read-only: the files and folders\n"
        "are those 'extract' would write, read without extracting. Stored entries\n"
        "and a VPP's zlib and LZ4 entries are read where they are asked for, so\n"
        "any size reads under --mem-limit; others are decoded whole on first read\n"
        "(or stat, when only decoding tells their size) and kept in a cache\n"
        "(--cache, least recently used out). With --views, the folder .trowel/\n"
        "holds archive.json (convert --to json), manifest.json (extract\n"
        "--manifest), raw/ (the entries as stored, where the format converts\n"
        "them) and convert/ (each entry in every format it converts to as one\n"
        "file, made when read); without it, find and grep -r see the entries\n"
        "only. With -r, an entry that is an archive itself (a .str2_pc in a\n"
        ".vpp_pc) also shows as the folder ENTRY.d/ beside it, holding its tree\n"
        "as 'extract -r' writes it; it is opened when first listed, and so on\n"
        "down; with --views, .trowel/raw/ENTRY.d/ and .trowel/convert/ENTRY.d/\n"
        "hold its views. An entry (or nested archive) that cannot be read gives\n"
        "EIO and an error on stderr (the system log once detached); the others\n"
        "stay readable. A MOUNTPOINT that is missing or no folder: exit 1.",
    .options = mount_options,
    .more_help = mount_help,
    .run = run_mount,
};

/* ---------------------------------------------------------------- umount */

/* fusermount3 -u, which a user may run for their own mounts; root may
 * also unmount directly when it is missing. */
static int run_umount(const cli_args *args, cli_session *s)
{
    int rc = cli_need_operands(s, args, 1, 1, "MOUNTPOINT operand");
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *point = args->operands[0];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("fusermount3", "fusermount3", "-u", "--", point, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0)
        return CLI_EXIT_OK;
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127 && umount2(point, 0) == 0)
        return CLI_EXIT_OK; /* no fusermount3, but allowed to unmount */
    cli_error("%s: cannot unmount (not a trowel mount, or busy?)", point);
    return CLI_EXIT_FAILURE;
}

const cli_command cli_cmd_umount = {
    .name = "umount",
    .synopsis = "umount MOUNTPOINT",
    .summary = "unmount what 'mount' mounted",
    .description = "Unmount the folder MOUNTPOINT, as 'fusermount3 -u MOUNTPOINT' does.",
    .options = (const cli_option[]){{OPT_NONE, 0, NULL, NULL, NULL}},
    .run = run_umount,
};
