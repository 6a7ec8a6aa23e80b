/* Loading libmicrohttpd on demand; see http_mhd.h for why. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "http_mhd.h"

/* The soname of Debian 12's libmicrohttpd12 (the ABI we compile against). */
#define HTTP_MHD_SONAME		"libmicrohttpd.so.12"

/* Fetches one symbol into *slot; -1 with err if missing. */
static int
sym(struct http_mhd *m, const char *name, void **slot, char *err,
    size_t errlen)
{
	if ((*slot = dlsym(m->lib, name)) == NULL) {
		(void)snprintf(err, errlen, "%s has no %s", HTTP_MHD_SONAME,
		    name);
		return -1;
	}
	return 0;
}

int
http_mhd_load(struct http_mhd *m, char *err, size_t errlen)
{
	const char *why;

	memset(m, 0, sizeof(*m));
	if ((m->lib = dlopen(HTTP_MHD_SONAME, RTLD_LAZY | RTLD_LOCAL)) ==
	    NULL) {
		why = dlerror();
		(void)snprintf(err, errlen, "cannot load %s (install "
		    "libmicrohttpd12): %s", HTTP_MHD_SONAME,
		    why != NULL ? why : "unknown error");
		return -1;
	}
	/* POSIX dlsym returns void *; the casts below are the usual idiom */
	if (sym(m, "MHD_start_daemon", (void **)&m->start_daemon, err,
	    errlen) != 0 ||
	    sym(m, "MHD_stop_daemon", (void **)&m->stop_daemon, err,
	    errlen) != 0 ||
	    sym(m, "MHD_quiesce_daemon", (void **)&m->quiesce_daemon, err,
	    errlen) != 0 ||
	    sym(m, "MHD_get_daemon_info", (void **)&m->get_daemon_info, err,
	    errlen) != 0 ||
	    sym(m, "MHD_get_connection_info",
	    (void **)&m->get_connection_info, err, errlen) != 0 ||
	    sym(m, "MHD_lookup_connection_value",
	    (void **)&m->lookup_connection_value, err, errlen) != 0 ||
	    sym(m, "MHD_get_connection_values",
	    (void **)&m->get_connection_values, err, errlen) != 0 ||
	    sym(m, "MHD_create_response_from_buffer",
	    (void **)&m->response_from_buffer, err, errlen) != 0 ||
	    sym(m, "MHD_create_response_from_callback",
	    (void **)&m->response_from_callback, err, errlen) != 0 ||
	    sym(m, "MHD_add_response_header",
	    (void **)&m->add_response_header, err, errlen) != 0 ||
	    sym(m, "MHD_queue_response", (void **)&m->queue_response, err,
	    errlen) != 0 ||
	    sym(m, "MHD_destroy_response", (void **)&m->destroy_response, err,
	    errlen) != 0) {
		http_mhd_unload(m);
		return -1;
	}
	return 0;
}

void
http_mhd_unload(struct http_mhd *m)
{
	if (m->lib != NULL)
		(void)dlclose(m->lib);
	memset(m, 0, sizeof(*m));
}
