/* Loading libmicrohttpd at run time (see mhd.h). */
#include "mhd.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef TROWEL_MHD_SONAME
#define TROWEL_MHD_SONAME "libmicrohttpd.so.12"
#endif

/* dlsym gives an object pointer; POSIX guarantees it converts to a
 * function pointer, which ISO C does not say: through memcpy, the
 * conversion is explicit and -Wpedantic has nothing to say. */
static bool find(void *library, const char *name, void *slot, size_t size, char *why, size_t cap)
{
    void *p = dlsym(library, name);
    if (!p) {
        snprintf(why, cap, "%s has no %s", TROWEL_MHD_SONAME, name);
        return false;
    }
    memcpy(slot, &p, size);
    return true;
}

#define FIND(field, name) find(api->library, name, &api->field, sizeof api->field, why, cap)

bool view_mhd_load(view_mhd *api, char *why, size_t cap)
{
    memset(api, 0, sizeof *api);
    api->library = dlopen(TROWEL_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!api->library) {
        const char *err = dlerror();
        snprintf(why, cap, "%s", err ? err : "cannot load " TROWEL_MHD_SONAME);
        return false;
    }
    bool ok = FIND(start_daemon, "MHD_start_daemon") && FIND(stop_daemon, "MHD_stop_daemon") &&
              FIND(get_daemon_info, "MHD_get_daemon_info") &&
              FIND(create_response_from_buffer, "MHD_create_response_from_buffer") &&
              FIND(add_response_header, "MHD_add_response_header") &&
              FIND(queue_response, "MHD_queue_response") &&
              FIND(destroy_response, "MHD_destroy_response") &&
              FIND(lookup_connection_value, "MHD_lookup_connection_value");
    if (!ok)
        view_mhd_unload(api);
    return ok;
}

void view_mhd_unload(view_mhd *api)
{
    if (api->library)
        dlclose(api->library);
    memset(api, 0, sizeof *api);
}
