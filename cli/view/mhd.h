/*
 * libmicrohttpd, loaded when `trowel view` starts rather than linked into
 * the program: linked, it and the TLS stack it pulls in (gnutls, nettle,
 * gmp, p11-kit and five more) cost every trowel command about 1.5 ms of
 * loading and relocation, several times what the rest of a small command
 * costs (measured: a program that prints one line takes 0.67 ms with
 * libc alone, 2.20 ms linked with libmicrohttpd).
 *
 * The pointers take their types from <microhttpd.h> itself, so a call
 * through them is checked as a direct call would be.
 */
#ifndef TROWEL_CLI_VIEW_MHD_H
#define TROWEL_CLI_VIEW_MHD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct view_mhd {
    void *library;
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_get_daemon_info) *get_daemon_info;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
} view_mhd;

/* Loads the library (TROWEL_MHD_SONAME, the name it was built against) and
 * every function above: true, or false with why (cap bytes) saying what is
 * missing. */
bool view_mhd_load(view_mhd *api, char *why, size_t cap);
void view_mhd_unload(view_mhd *api);

#endif
