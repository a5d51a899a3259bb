/*
 * trowel view's HTTP side, over libmicrohttpd (see view.h).
 *
 * Safety, as the page is a door into the user's files:
 * - it listens on 127.0.0.1 only, and a request whose Host header is not
 *   127.0.0.1:PORT or localhost:PORT is refused (DNS rebinding);
 * - every request carries the token, in the query of the first page and
 *   then in a cookie (HttpOnly, SameSite=Strict) that page sets;
 * - GET and HEAD only; the page's files are built in, three.js is read
 *   from the system at a fixed place; nothing in a request becomes a path;
 * - a strict Content-Security-Policy: scripts, styles and connections
 *   only from the page itself;
 * - one polling thread serves one request at a time, so a request for a
 *   broken entry is an error reply and the next request is served as
 *   usual.
 */
#include "mhd.h"
#include "view.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#define TOKEN_HEX 32
#define COOKIE_NAME "trowel_token"

static const char CSP[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "media-src 'self' blob:; connect-src 'self' blob: data:; worker-src 'self' blob:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/* three.js from Debian's libjs-three, served as /static/three/NAME. */
static const struct { const char *name, *path; } THREE_FILES[] = {
    {"three.min.js", "three.min.js"},
    {"GLTFLoader.js", "examples/js/loaders/GLTFLoader.js"},
    {"OrbitControls.js", "examples/js/controls/OrbitControls.js"},
};
#define THREE_COUNT (sizeof THREE_FILES / sizeof THREE_FILES[0])

typedef struct view_server {
    cli_session *s;
    char *three[THREE_COUNT]; /* NULL: not installed */
    size_t three_len[THREE_COUNT];
    view_model *m;
    unsigned port;
    char token[TOKEN_HEX + 1];
    char host_ip[32], host_name[32];
    view_mhd mhd; /* libmicrohttpd's functions (the caller loaded it) */
} view_server;

static bool make_token(char out[TOKEN_HEX + 1])
{
    unsigned char raw[TOKEN_HEX / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return true;
}

/* Constant-time comparison, so the token cannot be guessed byte by byte. */
static bool token_equal(const char *given, const char *token)
{
    if (!given || strlen(given) != TOKEN_HEX)
        return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < TOKEN_HEX; i++)
        diff |= (unsigned char)(given[i] ^ token[i]);
    return diff == 0;
}

/* data is only read (PERSISTENT) or freed (MUST_FREE) by libmicrohttpd,
 * whose signature takes it without const. */
static enum MHD_Result send_reply(const view_server *v, struct MHD_Connection *c,
                                  unsigned status, const char *type, const void *data,
                                  size_t len, enum MHD_ResponseMemoryMode mode,
                                  const char *filename, const char *cookie)
{
    const view_mhd *mhd = &v->mhd;
    struct MHD_Response *r =
        mhd->create_response_from_buffer(len, (void *)(uintptr_t)data, mode);
    if (!r)
        return MHD_NO;
    mhd->add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    mhd->add_response_header(r, "Content-Security-Policy", CSP);
    mhd->add_response_header(r, "X-Content-Type-Options", "nosniff");
    mhd->add_response_header(r, "Referrer-Policy", "no-referrer");
    mhd->add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
    mhd->add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (cookie)
        mhd->add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, cookie);
    if (filename) {
        char disp[600];
        char safe[400];
        size_t k = 0;
        for (const char *p = filename; *p && k + 1 < sizeof safe; p++)
            safe[k++] = (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || *p == '/')
                            ? '_'
                            : *p;
        safe[k] = '\0';
        snprintf(disp, sizeof disp, "attachment; filename=\"%s\"", safe);
        mhd->add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disp);
    }
    enum MHD_Result ret = mhd->queue_response(c, status, r);
    mhd->destroy_response(r);
    return ret;
}

static enum MHD_Result send_text(const view_server *v, struct MHD_Connection *c, unsigned status,
                                 const char *text)
{
    return send_reply(v, c, status, "text/plain; charset=utf-8", text, strlen(text),
                      MHD_RESPMEM_PERSISTENT, NULL, NULL);
}

static bool host_allowed(const view_server *v, struct MHD_Connection *c)
{
    const char *host = v->mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    return host && (strcmp(host, v->host_ip) == 0 || strcmp(host, v->host_name) == 0);
}

static const char *arg(const view_server *v, struct MHD_Connection *c, const char *key)
{
    return v->mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

static enum MHD_Result serve_api(view_server *v, struct MHD_Connection *c, const char *call)
{
    view_query q = {
        .call = call,
        .node = arg(v, c, "n"),
        .path = arg(v, c, "path"),
        .to = arg(v, c, "to"),
        .file = arg(v, c, "file"),
        .opt = arg(v, c, "opt"),
        .off = arg(v, c, "off"),
        .len = arg(v, c, "len"),
        .download = arg(v, c, "dl") != NULL,
    };
    view_reply r;
    view_api(v->m, &q, &r);
    if (!r.data)
        return send_text(v, c, 500, "out of memory\n");
    enum MHD_Result ret = send_reply(v, c, r.status, r.type, r.data, r.len, MHD_RESPMEM_MUST_FREE,
                                     r.filename, NULL);
    r.data = NULL; /* libmicrohttpd frees it */
    view_reply_free(&r);
    return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_size, void **state)
{
    (void)version, (void)upload_data;
    view_server *v = cls;
    if (*state == NULL) { /* the headers: answer once the whole request is in */
        *state = v;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0; /* a body is never read */
        return MHD_YES;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return send_text(v, c, 405, "read-only: GET only\n");
    if (!host_allowed(v, c))
        return send_text(v, c, 421, "wrong Host: trowel view answers only 127.0.0.1 and localhost\n");
    const char *cookie = v->mhd.lookup_connection_value(c, MHD_COOKIE_KIND, COOKIE_NAME);
    const char *query_token = arg(v, c, "token");
    bool by_query = token_equal(query_token, v->token);
    if (!by_query && !token_equal(cookie, v->token))
        return send_text(v, c, 403, "forbidden: open the URL trowel view printed (with its token)\n");
    if (strcmp(url, "/") == 0) {
        const view_asset *a = view_builtin_asset("index.html");
        char set_cookie[128];
        snprintf(set_cookie, sizeof set_cookie,
                 COOKIE_NAME "=%s; Path=/; HttpOnly; SameSite=Strict", v->token);
        return send_reply(v, c, 200, a->type, a->data, a->len, MHD_RESPMEM_PERSISTENT, NULL,
                          by_query ? set_cookie : NULL);
    }
    if (strncmp(url, "/api/", 5) == 0)
        return serve_api(v, c, url + 5);
    if (strncmp(url, "/static/three/", 14) == 0) {
        for (size_t i = 0; i < THREE_COUNT; i++)
            if (strcmp(url + 14, THREE_FILES[i].name) == 0 && v->three[i])
                return send_reply(v, c, 200, "text/javascript; charset=utf-8", v->three[i],
                                  v->three_len[i], MHD_RESPMEM_PERSISTENT, NULL, NULL);
        return send_text(v, c, 404, "three.js is not installed (Debian package libjs-three)\n");
    }
    if (strncmp(url, "/static/", 8) == 0) {
        const view_asset *a = view_builtin_asset(url + 8);
        if (a)
            return send_reply(v, c, 200, a->type, a->data, a->len, MHD_RESPMEM_PERSISTENT,
                              NULL, NULL);
    }
    return send_text(v, c, 404, "not found\n");
}

/* ---------------------------------------------------------------- serving */

static void open_browser(const char *url)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execlp("xdg-open", "xdg-open", url, (char *)NULL);
        _exit(127);
    }
}

/* Reads three.js once; a file missing only costs the 3D previews. */
static void load_three(view_server *v)
{
    bool quiet = v->s->quiet;
    v->s->quiet = true;
    for (size_t i = 0; i < THREE_COUNT; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", TROWEL_THREE_DIR, THREE_FILES[i].path);
        if (access(path, R_OK) != 0 ||
            cli_read_file(v->s, path, &v->three[i], &v->three_len[i]) != CLI_EXIT_OK)
            v->three[i] = NULL;
    }
    v->s->quiet = quiet;
    if (!v->three[0])
        cli_error("view: three.js is not in %s: 3D previews are off (install libjs-three)",
                  TROWEL_THREE_DIR);
}

static void free_three(view_server *v)
{
    for (size_t i = 0; i < THREE_COUNT; i++)
        free(v->three[i]);
}

int view_serve(cli_session *s, view_model *m, const view_config *cfg)
{
    view_server v = {.s = s, .m = m, .mhd = *cfg->mhd};
    load_three(&v);
    if (!make_token(v.token)) {
        free_three(&v);
        cli_error("view: no randomness for the token");
        return CLI_EXIT_FAILURE;
    }
    /* The signals end the wait below; the server's thread must not take them. */
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    signal(SIGCHLD, SIG_IGN); /* xdg-open is not waited for */

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = v.mhd.start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)cfg->port, NULL, NULL,
        handle, &v, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)256, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
    if (!d) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        free_three(&v);
        cli_error("view: cannot listen on 127.0.0.1:%u (%s)", cfg->port,
                  errno ? strerror(errno) : "in use?");
        return CLI_EXIT_FAILURE;
    }
    const union MHD_DaemonInfo *info = v.mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    v.port = info ? info->port : cfg->port;
    snprintf(v.host_ip, sizeof v.host_ip, "127.0.0.1:%u", v.port);
    snprintf(v.host_name, sizeof v.host_name, "localhost:%u", v.port);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/?token=%s", v.port, v.token);
    printf("%s\n", url);
    fflush(stdout);
    if (!s->quiet)
        fprintf(stderr, "trowel: view: serving %s; Ctrl-C stops\n", "127.0.0.1");
    if (cfg->open_browser)
        open_browser(url);
    int sig = 0;
    sigwait(&stop, &sig);
    v.mhd.stop_daemon(d);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    free_three(&v);
    return CLI_EXIT_OK;
}
