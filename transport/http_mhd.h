/*
 * libmicrohttpd, loaded only when --http is given. Debian's build links
 * GnuTLS, and loading it runs gnutls_global_init(): about 3 MiB of
 * resident memory and 1.5 ms of start-up (measured on this machine) that
 * the stdio server, `exec` and `--check` must not pay. The transport calls
 * it through this table, whose types are taken from <microhttpd.h>.
 */
#ifndef HTTP_MHD_H
#define HTTP_MHD_H

#include <stddef.h>

#include <microhttpd.h>

struct http_mhd {
	void *lib;			/* dlopen handle, owned */
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_quiesce_daemon) *quiesce_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_get_connection_values) *get_connection_values;
	__typeof__(MHD_create_response_from_buffer) *response_from_buffer;
	__typeof__(MHD_create_response_from_callback) *response_from_callback;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
};

/* Loads the library and every symbol. 0, or -1 with err. */
int http_mhd_load(struct http_mhd *m, char *err, size_t errlen)
    __attribute__((warn_unused_result));
/* After the daemon has stopped. */
void http_mhd_unload(struct http_mhd *m);

#endif
