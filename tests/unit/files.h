/*
 * Whole-file helpers for tests that compare trowel's work with real files,
 * and the little-endian fields they read and patch. Test-only; failures
 * show up as an empty result the test then checks.
 */
#ifndef TROWEL_TEST_FILES_H
#define TROWEL_TEST_FILES_H

#include "test.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct bytes {
    uint8_t *data; /* malloc'd, one spare byte; NULL when unreadable */
    size_t size;
} bytes;

static inline bytes read_file(const char *path)
{
    bytes b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return b;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.data = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b.data && fread(b.data, 1, (size_t)n, f) == (size_t)n)
        b.size = (size_t)n;
    fclose(f);
    return b;
}

/* Writes n bytes to path (a failure shows when the file is read back). */
static inline void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

/* True when path (a corpus file) can be read; else the case records a
 * skip naming it. */
static inline bool have_file(const char *path)
{
    if (access(path, R_OK) == 0)
        return true;
    test_skip("%s is absent", path);
    return false;
}

static inline uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void set_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A fresh folder under /tmp (a static buffer: one at a time), or NULL. */
static inline char *make_temp_dir(void)
{
    static char templ[64];
    snprintf(templ, sizeof templ, "/tmp/trowel-test-XXXXXX");
    return mkdtemp(templ);
}

/* Whether dir holds name (any kind of file; a link is not followed). */
static inline bool exists_in(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return lstat(path, &st) == 0;
}

/* How many names a folder holds (dot files included), or -1. */
static inline int count_dir_entries(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

/* Kills child pid as kill -9 would and waits for it to end. */
static inline void kill_child(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A child process that runs work(dir, name) and, when that succeeds,
 * tells the parent and waits to be killed (what kill -9 leaves is then
 * the test's to look at): its pid once it is ready, or -1. */
static inline pid_t start_waiting_child(bool (*work)(const char *dir, const char *name),
                                        const char *dir, const char *name)
{
    int ready[2];
    if (pipe(ready) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        if (!work(dir, name))
            _exit(1);
        (void)!write(ready[1], "k", 1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c;
    bool ok = pid > 0 && read(ready[0], &c, 1) == 1;
    close(ready[0]);
    if (!ok && pid > 0) {
        kill_child(pid);
        return -1;
    }
    return pid;
}

static inline void remove_tree(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "  could not remove %s\n", dir);
}

#endif
