/*
 * The endpoint's guards, checked on every request before its body is read:
 * the connection and header caps, Host (DNS rebinding, when bound to
 * loopback) and Origin, the bearer token (compared as SHA-256 digests, in
 * constant time, against every configured token; /healthz and a CORS
 * preflight need none), the method, the body
 * size announced, Content-Type and Accept. They only decide; the transport
 * answers. Also reads --token-file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "http_internal.h"
#include "log.h"
#include "mcp_limits.h"

static const char *
header(const struct http_ctx *ctx, struct MHD_Connection *conn,
    const char *name)
{
	return ctx->mhd.lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

static enum MHD_Result
count_header(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	size_t *sum = cls;

	*sum += strlen(key) + (value != NULL ? strlen(value) : 0) + 4;
	return MHD_YES;
}

/* Whether host (of a Host header or an origin, with optional :port) is a
 * loopback name. */
static bool
loopback_host(const char *h, size_t n)
{
	static const char *const names[] = { "localhost", "127.0.0.1",
	    "[::1]" };
	size_t i, l;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		l = strlen(names[i]);
		if (n < l || strncasecmp(h, names[i], l) != 0)
			continue;
		if (n == l)
			return true;
		if (h[l] != ':' || n == l + 1)
			continue;
		for (l++; l < n && h[l] >= '0' && h[l] <= '9'; l++)
			;
		if (l == n)
			return true;
	}
	return false;
}

bool
http_origin_allowed(const struct http_ctx *ctx, const char *origin)
{
	const char *rest = NULL;
	size_t i;

	for (i = 0; i < ctx->cfg->n_origins; i++)
		if (strcmp(origin, ctx->cfg->origins[i]) == 0)
			return true;
	if (strncmp(origin, "http://", 7) == 0)
		rest = origin + 7;
	else if (strncmp(origin, "https://", 8) == 0)
		rest = origin + 8;
	return rest != NULL && loopback_host(rest, strlen(rest));
}

/* Digest of the bearer token; 0 when it matches one of ours (every one
 * is compared, in constant time), -1 when missing or wrong. */
static int
token_in(const struct http_ctx *ctx, struct MHD_Connection *conn,
    const uint8_t (*tokens)[SHA256_LEN], size_t n,
    uint8_t principal[SHA256_LEN])
{
	const char *auth = header(ctx, conn, "Authorization");
	uint8_t diff, match = 0;
	size_t i, j;

	memset(principal, 0, SHA256_LEN);
	if (n == 0)
		return 0;
	if (auth == NULL || strncasecmp(auth, "Bearer ", 7) != 0)
		return -1;
	for (auth += 7; *auth == ' '; auth++)
		;
	sha256(auth, strlen(auth), principal);
	for (i = 0; i < n; i++) {
		diff = 0;
		for (j = 0; j < SHA256_LEN; j++)
			diff |= principal[j] ^ tokens[i][j];
		match |= diff == 0;
	}
	return match ? 0 : -1;
}

/* A principal's token (none needed without --token-file). */
static int
check_token(const struct http_ctx *ctx, struct MHD_Connection *conn,
    uint8_t principal[SHA256_LEN])
{
	return token_in(ctx, conn, (const uint8_t (*)[SHA256_LEN])ctx->tokens,
	    ctx->n_tokens, principal);
}


/* Whether an Accept header takes type ("application/json"). */
static bool
accepts(const char *accept, const char *type)
{
	const char *p = accept, *e, *slash = strchr(type, '/');
	size_t n, major = (size_t)(slash - type);

	while (p != NULL && *p != '\0') {
		while (*p == ' ' || *p == ',')
			p++;
		for (e = p; *e != '\0' && *e != ',' && *e != ';' && *e != ' ';
		    e++)
			;
		n = (size_t)(e - p);
		if ((n == strlen(type) && strncasecmp(p, type, n) == 0) ||
		    (n == 3 && strncmp(p, "*/*", 3) == 0) ||
		    (n == major + 2 && strncasecmp(p, type, major + 1) == 0 &&
		    p[major + 1] == '*'))
			return true;
		p = strchr(e, ',');
	}
	return false;
}

static bool
is_json_type(const char *ct)
{
	static const char j[] = "application/json";

	return ct != NULL && strncasecmp(ct, j, sizeof(j) - 1) == 0 &&
	    (ct[sizeof(j) - 1] == '\0' || ct[sizeof(j) - 1] == ';' ||
	    ct[sizeof(j) - 1] == ' ');
}

/* Fills *no and returns 1: the request is refused. */
static int
refuse(struct http_refusal *no, unsigned int status, enum http_reject why,
    enum mcp_err err, const char *message, const struct http_hdr *extra)
{
	no->status = status;
	no->why = why;
	no->err = err;
	no->message = message;
	no->extra = extra;
	return 1;
}

/*
 * /metrics counts every principal's calls, sessions and refusals: with
 * --metrics-token-file it answers those tokens only (an operator's, a
 * scraper's; they open no session and call no tool), and without one
 * it answers a principal only where there is one principal (a single
 * token, or none on loopback): the figures are then its own.
 */
static int
check_metrics(const struct http_ctx *ctx, struct MHD_Connection *conn,
    uint8_t principal[SHA256_LEN], struct http_refusal *no)
{
	static const struct http_hdr h_auth[] = { { "WWW-Authenticate",
	    "Bearer realm=\"mcp-sandbox\"" }, { NULL, NULL } };

	if (ctx->n_metrics_tokens > 0) {
		if (token_in(ctx, conn, (const uint8_t (*)[SHA256_LEN])
		    ctx->metrics_tokens, ctx->n_metrics_tokens,
		    principal) == 0)
			return 0;
		return refuse(no, MHD_HTTP_UNAUTHORIZED, HTTP_REJ_AUTH,
		    MCP_ERR_INVALID_REQUEST, "Unauthorized: /metrics needs "
		    "a token of --metrics-token-file", h_auth);
	}
	if (check_token(ctx, conn, principal) != 0)
		return refuse(no, MHD_HTTP_UNAUTHORIZED, HTTP_REJ_AUTH,
		    MCP_ERR_INVALID_REQUEST, "Unauthorized: a valid bearer "
		    "token is required", h_auth);
	if (ctx->n_tokens > 1)
		return refuse(no, MHD_HTTP_FORBIDDEN, HTTP_REJ_AUTH,
		    MCP_ERR_INVALID_REQUEST, "Forbidden: /metrics has every "
		    "principal's figures; with several tokens it answers a "
		    "token of --metrics-token-file only", NULL);
	return 0;
}

int
http_guard(const struct http_ctx *ctx, struct MHD_Connection *conn,
    const char *url, const char *method, uint8_t principal[SHA256_LEN],
    struct http_refusal *no)
{
	static const struct http_hdr h_busy[] = { { "Retry-After", "1" },
	    { "Connection", "close" }, { NULL, NULL } };
	static const struct http_hdr h_auth[] = { { "WWW-Authenticate",
	    "Bearer realm=\"mcp-sandbox\"" }, { NULL, NULL } };
	static const struct http_hdr h_allow[] = {
		{ "Allow", "POST, DELETE, OPTIONS" }, { NULL, NULL },
	};
	static const struct http_hdr h_allow_get[] = { { "Allow", "GET, HEAD" },
	    { NULL, NULL } };
	const char *v;
	size_t hbytes = 0;
	char *end;
	unsigned long long clen;
	bool mcp = strcmp(url, "/mcp") == 0;

	if (atomic_load((atomic_int *)&ctx->metrics.connections) >
	    MCP_HTTP_MAX_CONNECTIONS)
		return refuse(no, MHD_HTTP_SERVICE_UNAVAILABLE,
		    HTTP_REJ_CONNECTIONS, MCP_ERR_INTERNAL, "Server busy: too "
		    "many connections", h_busy);
	(void)ctx->mhd.get_connection_values(conn, MHD_HEADER_KIND,
	    count_header, &hbytes);
	if (hbytes > MCP_HTTP_MAX_HEADER_BYTES)
		return refuse(no,
		    MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, HTTP_REJ_HEADERS,
		    MCP_ERR_INVALID_REQUEST, "Request headers too large", NULL);
	if (ctx->cfg->loopback && (v = header(ctx, conn, "Host")) != NULL &&
	    !loopback_host(v, strlen(v)))
		return refuse(no, MHD_HTTP_FORBIDDEN, HTTP_REJ_HOST,
		    MCP_ERR_INVALID_REQUEST, "Forbidden: Host is not a "
		    "loopback name", NULL);
	if ((v = header(ctx, conn, "Origin")) != NULL &&
	    !http_origin_allowed(ctx, v))
		return refuse(no, MHD_HTTP_FORBIDDEN,
		    HTTP_REJ_ORIGIN, MCP_ERR_INVALID_REQUEST, "Forbidden: "
		    "Origin not allowed", NULL);
	if (!mcp && strcmp(url, "/healthz") != 0 &&
	    strcmp(url, "/metrics") != 0)
		return refuse(no, MHD_HTTP_NOT_FOUND,
		    HTTP_REJ_PROTOCOL, MCP_ERR_INVALID_REQUEST, "Not found: "
		    "the endpoint is /mcp", NULL);
	if (!mcp && strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return refuse(no, MHD_HTTP_METHOD_NOT_ALLOWED,
		    HTTP_REJ_PROTOCOL, MCP_ERR_INVALID_REQUEST, "Method not "
		    "allowed: use GET", h_allow_get);
	if (strcmp(url, "/healthz") == 0)
		return 0;		/* liveness needs no token */
	if (mcp && strcmp(method, "OPTIONS") == 0)
		return 0;		/* a CORS preflight carries no token */
	if (strcmp(url, "/metrics") == 0)
		return check_metrics(ctx, conn, principal, no);
	if (check_token(ctx, conn, principal) != 0)
		return refuse(no, MHD_HTTP_UNAUTHORIZED,
		    HTTP_REJ_AUTH, MCP_ERR_INVALID_REQUEST, "Unauthorized: a "
		    "valid bearer token is required", h_auth);
	if (!mcp)
		return 0;
	if (strcmp(method, "POST") != 0 && strcmp(method, "DELETE") != 0)
		return refuse(no, MHD_HTTP_METHOD_NOT_ALLOWED,
		    HTTP_REJ_PROTOCOL, MCP_ERR_INVALID_REQUEST, "Method not "
		    "allowed: this server offers no GET stream", h_allow);
	if (strcmp(method, "POST") != 0)
		return 0;
	if ((v = header(ctx, conn, "Content-Length")) != NULL) {
		errno = 0;
		clen = strtoull(v, &end, 10);
		if (errno == 0 && *end == '\0' && clen > MCP_MAX_MSG)
			return refuse(no, MHD_HTTP_CONTENT_TOO_LARGE,
			    HTTP_REJ_BODY, MCP_ERR_TOO_LARGE, "Request body "
			    "larger than 4194304 bytes", NULL);
	}
	if (!is_json_type(header(ctx, conn, "Content-Type")))
		return refuse(no,
		    MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, HTTP_REJ_PROTOCOL,
		    MCP_ERR_INVALID_REQUEST, "Unsupported Media Type: "
		    "Content-Type must be application/json", NULL);
	v = header(ctx, conn, "Accept");
	if (v == NULL || !accepts(v, "application/json") ||
	    !accepts(v, "text/event-stream"))
		return refuse(no, MHD_HTTP_NOT_ACCEPTABLE,
		    HTTP_REJ_PROTOCOL, MCP_ERR_INVALID_REQUEST, "Not "
		    "Acceptable: Accept must list application/json and "
		    "text/event-stream", NULL);
	return 0;
}


/* Reads a token file (flag names it): one token per line; blank lines and
 * # comments are skipped. Keeps only digests, in tokens[*n]. */
int
http_load_tokens(const char *flag, const char *path,
    uint8_t tokens[][SHA256_LEN], size_t *n_tokens)
{
	char buf[MCP_HTTP_TOKEN_FILE_MAX + 1], *line, *save = NULL, *end;
	ssize_t n;
	size_t got = 0;
	int fd, rc = -1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW |
	    O_NONBLOCK)) < 0) {
		log_err("%s %s: %s", flag, path, errno == ELOOP ?
		    "it is a symbolic link" : strerror(errno));
		return -1;
	}
	{
		struct stat st;

		/* a FIFO would block the start; a device is no token list */
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			log_err("%s %s: not a regular file", flag, path);
			goto out;
		}
	}
	while (got < sizeof(buf) &&
	    (n = read(fd, buf + got, sizeof(buf) - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_err("%s %s: %s", flag, path, strerror(errno));
			goto out;
		}
		got += (size_t)n;
	}
	if (got > MCP_HTTP_TOKEN_FILE_MAX) {
		log_err("%s %s: larger than %u bytes", flag, path,
		    MCP_HTTP_TOKEN_FILE_MAX);
		goto out;
	}
	buf[got] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		end = line + strlen(line);
		while (end > line && (end[-1] == '\r' || end[-1] == ' ' ||
		    end[-1] == '\t'))
			*--end = '\0';
		if (*line == '\0' || *line == '#')
			continue;
		if (strlen(line) < MCP_HTTP_MIN_TOKEN_LEN) {
			log_err("%s %s: a token is shorter than %d "
			    "characters", flag, path, MCP_HTTP_MIN_TOKEN_LEN);
			goto out;
		}
		if (*n_tokens == MCP_HTTP_MAX_TOKENS) {
			log_err("%s %s: more than %d tokens", flag, path,
			    MCP_HTTP_MAX_TOKENS);
			goto out;
		}
		sha256(line, strlen(line), tokens[(*n_tokens)++]);
	}
	if (*n_tokens == 0) {
		log_err("%s %s: no token in it", flag, path);
		goto out;
	}
	rc = 0;
 out:
	explicit_bzero(buf, sizeof(buf));
	(void)close(fd);
	return rc;
}
