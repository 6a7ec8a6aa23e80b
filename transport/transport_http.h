/*
 * The Streamable HTTP transport (libmicrohttpd): one endpoint, /mcp, for
 * both protocol eras, plus /healthz and /metrics. main.c owns the flags'
 * values; their names, parsing and checks live here (http_config.c).
 */
#ifndef TRANSPORT_HTTP_H
#define TRANSPORT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "http_limits.h"

struct server;

/* One flag for main.c's getopt_long table and --help. */
struct http_flag {
	const char *name;	/* long option, without "--" */
	int has_arg;		/* no_argument or required_argument */
	const char *metavar;	/* for --help, or NULL */
	const char *help;	/* one line for --help */
};

/* Terminated by an entry whose name is NULL. */
extern const struct http_flag http_flags[];

struct http_config {
	bool enabled;			/* --http given */
	struct sockaddr_storage addr;	/* where to listen */
	socklen_t addrlen;
	bool loopback;			/* addr is 127.0.0.0/8 or ::1 */
	char listen_text[80];		/* "127.0.0.1:8080", for logs */
	const char *token_file;		/* borrowed; NULL: no auth */
	const char *metrics_token_file;	/* borrowed; NULL: see http_guard.c */
	/* --allow-origin values, borrowed from argv */
	const char *origins[MCP_HTTP_MAX_ORIGINS];
	size_t n_origins;
	unsigned header_deadline_s;	/* --header-deadline, 1..10 (10) */
	unsigned body_deadline_s;	/* --body-deadline, 1..30 (30) */
	unsigned shutdown_grace_s;	/* --shutdown-grace, 1..10 (10) */
	const char *seconds_flag;	/* the first of those given, or NULL */
};

void http_config_init(struct http_config *cfg);

/* Applies one flag of http_flags[]. Returns 0, or -1 with a one-line err
 * naming the flag. */
int http_config_set_flag(struct http_config *cfg, const char *name,
    const char *value, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Checks the whole: a non-loopback address needs --token-file. Returns 0,
 * or -1 with err. */
int http_config_check(const struct http_config *cfg, char *err,
    size_t errlen) __attribute__((warn_unused_result));

/*
 * Serves until SIGTERM/SIGINT/SIGHUP (blocked beforehand in every thread,
 * as for stdio). Sessions of the handshake era get a fresh private
 * workspace each, removed when they end; stateless (2026-07-28) requests
 * share one fresh workspace for the life of the server. When workspace_dir
 * is non-NULL every session and request uses that directory instead (it is
 * never removed). ws_owner: see workspace_open(). Returns 0 after a clean
 * stop, 1 if it could not start.
 */
int transport_http_run(const struct server *srv,
    const struct http_config *cfg, const char *workspace_dir,
    uid_t ws_owner);

#endif
