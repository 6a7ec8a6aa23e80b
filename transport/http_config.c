/*
 * The HTTP transport's command-line flags: names and help for main.c's
 * table, parsing of each value, and the start-up checks. Values that fail
 * are one-line errors (main exits 2).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport_http.h"

#define HTTP_STR_(x)	#x
#define HTTP_STR(x)	HTTP_STR_(x)

const struct http_flag http_flags[] = {
	{ "http", 1, "[ADDR:]PORT", "serve HTTP at ADDR:PORT/mcp (127.0.0.1)" },
	{ "token-file", 1, "FILE", "require a bearer token (one per line)" },
	{ "metrics-token-file", 1, "FILE", "/metrics answers these tokens "
	    "only (one per line)" },
	{ "allow-origin", 1, "ORIGIN", "also accept this Origin (repeatable)" },
	{ "header-deadline", 1, "SECONDS", "headers must arrive in this ("
	    HTTP_STR(MCP_HTTP_FLAG_MIN_S) "-"
	    HTTP_STR(MCP_HTTP_HEADER_DEADLINE_S) ", the default)" },
	{ "body-deadline", 1, "SECONDS", "a body must arrive in this ("
	    HTTP_STR(MCP_HTTP_FLAG_MIN_S) "-"
	    HTTP_STR(MCP_HTTP_BODY_DEADLINE_S) ", the default)" },
	{ "shutdown-grace", 1, "SECONDS", "SIGTERM lets calls run this ("
	    HTTP_STR(MCP_HTTP_FLAG_MIN_S) "-"
	    HTTP_STR(MCP_HTTP_SHUTDOWN_GRACE_S) ", the default)" },
	{ NULL, 0, NULL, NULL },
};

void
http_config_init(struct http_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->header_deadline_s = MCP_HTTP_HEADER_DEADLINE_S;
	cfg->body_deadline_s = MCP_HTTP_BODY_DEADLINE_S;
	cfg->shutdown_grace_s = MCP_HTTP_SHUTDOWN_GRACE_S;
}

/*
 * A flag that may only shorten a time of http_limits.h: whole seconds
 * from MCP_HTTP_FLAG_MIN_S to max, the default.
 */
static int
parse_seconds(struct http_config *cfg, const char *name, const char *v,
    unsigned max, unsigned *ret_s, char *err, size_t errlen)
{
	unsigned long s;
	char *end;

	s = v[0] >= '0' && v[0] <= '9' ? strtoul(v, &end, 10) : 0;
	if (s < MCP_HTTP_FLAG_MIN_S || s > max || *end != '\0') {
		(void)snprintf(err, errlen, "bad --%s \"%.32s\": use whole "
		    "seconds from %d to %u", name, v, MCP_HTTP_FLAG_MIN_S, max);
		return -1;
	}
	*ret_s = (unsigned)s;
	if (cfg->seconds_flag == NULL)
		cfg->seconds_flag = name;
	return 0;
}

/*
 * "127.0.0.1:8080", "[::1]:8080", "localhost:8080", "0.0.0.0:80", or a
 * bare port: loopback unless an address is given.
 */
static int
parse_listen(struct http_config *cfg, const char *v, char *err,
    size_t errlen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&cfg->addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&cfg->addr;
	char host[64];
	const char *colon, *port_s;
	char *end;
	unsigned long port;
	size_t hlen;

	if (v[0] != '\0' && strspn(v, "0123456789") == strlen(v)) {
		(void)snprintf(host, sizeof(host), "127.0.0.1");
		port_s = v;
	} else if (v[0] == '[') {
		if ((colon = strstr(v, "]:")) == NULL)
			goto bad;
		hlen = (size_t)(colon - v - 1);
		if (hlen == 0 || hlen >= sizeof(host))
			goto bad;
		memcpy(host, v + 1, hlen);
		host[hlen] = '\0';
		port_s = colon + 2;
	} else {
		if ((colon = strrchr(v, ':')) == NULL)
			goto bad;
		hlen = (size_t)(colon - v);
		if (hlen == 0 || hlen >= sizeof(host))
			goto bad;
		memcpy(host, v, hlen);
		host[hlen] = '\0';
		port_s = colon + 1;
	}
	if (*port_s == '\0' || *port_s == '-' || *port_s == '+')
		goto bad;
	port = strtoul(port_s, &end, 10);
	if (*end != '\0' || port > 65535)
		goto bad;
	memset(&cfg->addr, 0, sizeof(cfg->addr));
	if (strcmp(host, "localhost") == 0)
		(void)snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		cfg->addrlen = sizeof(*sin);
		cfg->loopback = (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		cfg->addrlen = sizeof(*sin6);
		cfg->loopback = IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
	} else
		goto bad;
	(void)snprintf(cfg->listen_text, sizeof(cfg->listen_text), "%s%s%s:%lu",
	    cfg->addr.ss_family == AF_INET6 ? "[" : "", host,
	    cfg->addr.ss_family == AF_INET6 ? "]" : "", port);
	cfg->enabled = true;
	return 0;
 bad:
	(void)snprintf(err, errlen, "bad --http \"%s\": use PORT (loopback) or "
	    "ADDR:PORT with a numeric IPv4 address, [IPv6] or localhost, e.g. "
	    "127.0.0.1:8080", v);
	return -1;
}

/* An origin is scheme://host[:port] with nothing after it. */
static int
parse_origin(struct http_config *cfg, const char *v, char *err,
    size_t errlen)
{
	const char *rest;
	size_t i;

	if (strncmp(v, "http://", 7) == 0)
		rest = v + 7;
	else if (strncmp(v, "https://", 8) == 0)
		rest = v + 8;
	else
		rest = NULL;
	if (rest == NULL || *rest == '\0' ||
	    strlen(v) > MCP_HTTP_MAX_ORIGIN_LEN)
		goto bad;
	for (i = 0; rest[i] != '\0'; i++)
		if (rest[i] == '/' || rest[i] <= ' ' || rest[i] > '~')
			goto bad;
	if (cfg->n_origins >= MCP_HTTP_MAX_ORIGINS) {
		(void)snprintf(err, errlen, "too many --allow-origin (at most "
		    "%d)", MCP_HTTP_MAX_ORIGINS);
		return -1;
	}
	cfg->origins[cfg->n_origins++] = v;
	return 0;
 bad:
	(void)snprintf(err, errlen, "bad --allow-origin \"%.300s\": use "
	    "http(s)://host[:port], without a path", v);
	return -1;
}

int
http_config_set_flag(struct http_config *cfg, const char *name,
    const char *value, char *err, size_t errlen)
{
	if (strcmp(name, "http") == 0)
		return parse_listen(cfg, value, err, errlen);
	if (strcmp(name, "token-file") == 0) {
		if (*value == '\0') {
			(void)snprintf(err, errlen,
			    "--token-file needs a file");
			return -1;
		}
		cfg->token_file = value;
		return 0;
	}
	if (strcmp(name, "metrics-token-file") == 0) {
		if (*value == '\0') {
			(void)snprintf(err, errlen,
			    "--metrics-token-file needs a file");
			return -1;
		}
		cfg->metrics_token_file = value;
		return 0;
	}
	if (strcmp(name, "allow-origin") == 0)
		return parse_origin(cfg, value, err, errlen);
	if (strcmp(name, "header-deadline") == 0)
		return parse_seconds(cfg, "header-deadline", value,
		    MCP_HTTP_HEADER_DEADLINE_S, &cfg->header_deadline_s, err,
		    errlen);
	if (strcmp(name, "body-deadline") == 0)
		return parse_seconds(cfg, "body-deadline", value,
		    MCP_HTTP_BODY_DEADLINE_S, &cfg->body_deadline_s, err, errlen);
	if (strcmp(name, "shutdown-grace") == 0)
		return parse_seconds(cfg, "shutdown-grace", value,
		    MCP_HTTP_SHUTDOWN_GRACE_S, &cfg->shutdown_grace_s, err,
		    errlen);
	(void)snprintf(err, errlen, "unknown option \"--%s\"", name);
	return -1;
}

int
http_config_check(const struct http_config *cfg, char *err, size_t errlen)
{
	if (!cfg->enabled) {
		if (cfg->token_file != NULL || cfg->n_origins > 0 ||
		    cfg->metrics_token_file != NULL) {
			(void)snprintf(err, errlen, "--token-file, "
			    "--metrics-token-file and --allow-origin need --http");
			return -1;
		}
		if (cfg->seconds_flag != NULL) {
			(void)snprintf(err, errlen, "--%s needs --http",
			    cfg->seconds_flag);
			return -1;
		}
		return 0;
	}
	if (!cfg->loopback && cfg->token_file == NULL) {
		(void)snprintf(err, errlen, "refusing to serve %s without "
		    "--token-file: only loopback addresses may go without "
		    "authentication", cfg->listen_text);
		return -1;
	}
	return 0;
}
