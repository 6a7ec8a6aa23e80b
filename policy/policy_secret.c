/*
 * The policy's "secrets" key and --secret, --egress-ca (issue 24): values
 * bound to hosts that the egress proxy adds to requests to those hosts
 * only; the sandbox sees a placeholder. Read at start (policy_finalize),
 * never shown: --print-config gives the name, hosts and source.
 *
 *   "secrets": [{ "name": "GITHUB_TOKEN",
 *                 "hosts": ["github.com", "api.github.com"],
 *                 "from": "file:/run/secrets/gh" | "env:GH_TOKEN",
 *                 "header": "Authorization", "format": "Bearer {}",
 *                 "allow_http": false }]
 *   --secret NAME=HOSTS:SOURCE   (HOSTS comma-separated)
 *   --egress-ca FILE             trust for the real hosts (default: the
 *                                system's store)
 *
 * A secret's hosts must be allowed by the egress rules too. With a secret
 * bound, the proxy's CA (egress/tls.c) is made here, and the bundle the
 * sandboxes trust (the system's CAs and it) is written to a directory of
 * its own, removed at the end; it holds certificates, never a key.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "egress.h"
#include "tls.h"
#include "policy.h"
#include "policy_internal.h"
#include "policy_secret.h"

/* Where the system's CAs are (Debian's ca-certificates). */
#define POLICY_SYSTEM_CAS	"/etc/ssl/certs/ca-certificates.crt"
/* The system bundle is ~200 KiB; a bound on what is copied. */
#define POLICY_MAX_CA_BUNDLE	(8u << 20)

static struct egress_secrets *
secrets_of(struct policy *p)
{
	if (p->secrets == NULL)
		p->secrets = calloc(1, sizeof(*p->secrets));
	return p->secrets;
}

/* NAME: an environment name, not one the policy's env or loader uses. */
static int
check_name(const char *name, char *msg, size_t msglen)
{
	if (strlen(name) > EGRESS_MAX_SECRET_NAME || !policy_env_name_ok(name)) {
		(void)snprintf(msg, msglen, "'%.*s' is not an environment "
		    "variable name (letters, digits, '_', at most %d)", 80,
		    name, EGRESS_MAX_SECRET_NAME);
		return -1;
	}
	if (policy_env_name_forbidden(name)) {
		(void)snprintf(msg, msglen, "'%s' is a name the sandbox's "
		    "environment may not carry", name);
		return -1;
	}
	return 0;
}

static int
check_source(const char *src, char *msg, size_t msglen)
{
	if ((strncmp(src, "file:/", 6) == 0 && strlen(src) <=
	    EGRESS_MAX_SECRET_SOURCE) || (strncmp(src, "env:", 4) == 0 &&
	    policy_env_name_ok(src + 4)))
		return 0;
	(void)snprintf(msg, msglen, "source '%.*s' is neither file:/ABSOLUTE "
	    "nor env:NAME", 80, src);
	return -1;
}

/* A new secret with name, or NULL with msg. */
static struct egress_secret *
secret_add(struct policy *p, const char *name, char *msg, size_t msglen)
{
	struct egress_secrets *ss = secrets_of(p);
	size_t i;

	if (ss == NULL) {
		(void)snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	if (check_name(name, msg, msglen) != 0)
		return NULL;
	for (i = 0; i < ss->n; i++)
		if (strcmp(ss->s[i].name, name) == 0) {
			(void)snprintf(msg, msglen, "'%s' is bound twice",
			    name);
			return NULL;
		}
	if (ss->n == EGRESS_MAX_SECRETS) {
		(void)snprintf(msg, msglen, "more than %d secrets",
		    EGRESS_MAX_SECRETS);
		return NULL;
	}
	memset(&ss->s[ss->n], 0, sizeof(ss->s[0]));
	(void)snprintf(ss->s[ss->n].name, sizeof(ss->s[0].name), "%s", name);
	(void)snprintf(ss->s[ss->n].format, sizeof(ss->s[0].format), "{}");
	return &ss->s[ss->n++];
}

static int
host_add(struct egress_secret *s, const char *text, char *msg, size_t msglen)
{
	char err[160];

	if (s->nhosts == EGRESS_MAX_SECRET_HOSTS) {
		(void)snprintf(msg, msglen, "%s: more than %d hosts", s->name,
		    EGRESS_MAX_SECRET_HOSTS);
		return -1;
	}
	if (egress_pattern_parse(text, &s->hosts[s->nhosts], err,
	    sizeof(err)) != 0) {
		(void)snprintf(msg, msglen, "%s: host '%.*s': %s", s->name, 80,
		    text, err);
		return -1;
	}
	if (s->hosts[s->nhosts].is_addr || s->hosts[s->nhosts].any_port) {
		(void)snprintf(msg, msglen, "%s: host '%.*s': a secret is bound "
		    "to names (and a port), not to addresses or every port",
		    s->name, 80, text);
		return -1;
	}
	s->nhosts++;
	return 0;
}

int
policy_secret_flag(struct policy *p, const char *flag, const char *value,
    char *msg, size_t msglen)
{
	struct egress_secret *s;
	char name[EGRESS_MAX_SECRET_NAME + 2], *hosts, *tok, *save = NULL;
	const char *eq, *src;
	int rc = 0;

	if (strcmp(flag, "egress-ca") == 0) {
		if (value[0] != '/') {
			(void)snprintf(msg, msglen, "an absolute path");
			return -1;
		}
		free(p->egress_ca);
		if ((p->egress_ca = strdup(value)) == NULL) {
			(void)snprintf(msg, msglen, "out of memory");
			return -1;
		}
		return 1;
	}
	if (strcmp(flag, "secret") != 0)
		return 0;
	/* NAME=HOSTS:SOURCE; a port is digits, so ":file:" / ":env:" ends HOSTS */
	if ((eq = strchr(value, '=')) == NULL || (size_t)(eq - value) >=
	    sizeof(name) || ((src = strstr(eq, ":file:")) == NULL &&
	    (src = strstr(eq, ":env:")) == NULL) || src == eq + 1) {
		(void)snprintf(msg, msglen, "expected NAME=HOSTS:file:PATH or "
		    "NAME=HOSTS:env:VAR");
		return -1;
	}
	memcpy(name, value, (size_t)(eq - value));
	name[eq - value] = '\0';
	if ((s = secret_add(p, name, msg, msglen)) == NULL)
		return -1;
	if (check_source(src + 1, msg, msglen) != 0)
		return -1;
	(void)snprintf(s->source, sizeof(s->source), "%s", src + 1);
	if ((hosts = strndup(eq + 1, (size_t)(src - eq - 1))) == NULL) {
		(void)snprintf(msg, msglen, "out of memory");
		return -1;
	}
	for (tok = strtok_r(hosts, ",", &save); tok != NULL && rc == 0;
	    tok = strtok_r(NULL, ",", &save))
		rc = host_add(s, tok, msg, msglen);
	free(hosts);
	return rc == 0 ? 1 : -1;
}

static int
cfg_str(struct json_object *v, const char *key, char *dst, size_t len,
    char *msg, size_t msglen)
{
	if (!json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) >= len ||
	    json_object_get_string_len(v) == 0) {
		(void)snprintf(msg, msglen, "%s: must be a string of 1 to %zu "
		    "characters", key, len - 1);
		return -1;
	}
	(void)snprintf(dst, len, "%s", json_object_get_string(v));
	return 0;
}

static int
cfg_one(struct policy *p, struct json_object *o, char *msg, size_t msglen)
{
	struct json_object *name, *hosts;
	struct egress_secret *s;
	size_t i;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "name", &name) ||
	    !json_object_is_type(name, json_type_string)) {
		(void)snprintf(msg, msglen, "each secret is an object with "
		    "name, hosts and from");
		return -1;
	}
	if ((s = secret_add(p, json_object_get_string(name), msg, msglen)) ==
	    NULL)
		return -1;
	json_object_object_foreach(o, k, val) {
		int rc = 0;

		if (k[0] == '_' || strcmp(k, "name") == 0)
			continue;
		if (strcmp(k, "from") == 0) {
			rc = cfg_str(val, k, s->source, sizeof(s->source), msg,
			    msglen);
			if (rc == 0)
				rc = check_source(s->source, msg, msglen);
		} else if (strcmp(k, "header") == 0)
			rc = cfg_str(val, k, s->header, sizeof(s->header), msg,
			    msglen);
		else if (strcmp(k, "format") == 0) {
			rc = cfg_str(val, k, s->format, sizeof(s->format), msg,
			    msglen);
			if (rc == 0 && (strstr(s->format, "{}") == NULL ||
			    strstr(strstr(s->format, "{}") + 2, "{}") != NULL)) {
				(void)snprintf(msg, msglen, "format: must hold "
				    "{} once, where the value goes");
				rc = -1;
			}
		} else if (strcmp(k, "allow_http") == 0) {
			if (!json_object_is_type(val, json_type_boolean)) {
				(void)snprintf(msg, msglen, "allow_http: must "
				    "be true or false");
				rc = -1;
			} else
				s->allow_http = json_object_get_boolean(val);
		} else if (strcmp(k, "hosts") == 0) {
			hosts = val;
			if (!json_object_is_type(hosts, json_type_array) ||
			    json_object_array_length(hosts) == 0) {
				(void)snprintf(msg, msglen, "hosts: must be a "
				    "list of names");
				return -1;
			}
			for (i = 0; i < json_object_array_length(hosts) &&
			    rc == 0; i++) {
				struct json_object *h = json_object_array_get_idx(
				    hosts, i);

				if (!json_object_is_type(h, json_type_string)) {
					(void)snprintf(msg, msglen, "hosts: must "
					    "be a list of names");
					return -1;
				}
				rc = host_add(s, json_object_get_string(h), msg,
				    msglen);
			}
		} else {
			(void)snprintf(msg, msglen, "%s: unknown key (name, "
			    "hosts, from, header, format, allow_http)", k);
			rc = -1;
		}
		if (rc != 0)
			return -1;
	}
	return 0;
}

int
policy_secret_cfg(struct policy *p, struct json_object *v, char *msg,
    size_t msglen)
{
	size_t i;

	if (!json_object_is_type(v, json_type_array)) {
		(void)snprintf(msg, msglen, "must be a list of secrets");
		return -1;
	}
	if (p->secrets != NULL)
		egress_secrets_wipe(p->secrets), p->secrets->n = 0;
	for (i = 0; i < json_object_array_length(v); i++)
		if (cfg_one(p, json_object_array_get_idx(v, i), msg,
		    msglen) != 0)
			return -1;
	return 0;
}

/* Reads a secret's file: regular, not a link, for its owner only. */
static int
read_file(const char *path, char *buf, size_t *len, char *msg, size_t msglen)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW |
	    O_NONBLOCK)) < 0) {
		(void)snprintf(msg, msglen, "%s: %s", path, errno == ELOOP ?
		    "it is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		(void)snprintf(msg, msglen, "%s: not a regular file", path);
		(void)close(fd);
		return -1;
	}
	if ((st.st_mode & 077) != 0) {
		(void)snprintf(msg, msglen, "%s: group or others may read or "
		    "write it (mode %04o): chmod 600 it", path,
		    (unsigned)(st.st_mode & 07777));
		(void)close(fd);
		return -1;
	}
	while (got < *len && (n = read(fd, buf + got, *len - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			(void)snprintf(msg, msglen, "%s: %s", path,
			    strerror(errno));
			(void)close(fd);
			return -1;
		}
		got += (size_t)n;
	}
	(void)close(fd);
	*len = got;
	return 0;
}

/* The value of s from its source; the server's copy of an env: is dropped. */
static int
load_value(struct egress_secret *s, char *msg, size_t msglen)
{
	char buf[EGRESS_MAX_SECRET + 3], err[200];
	size_t len = sizeof(buf);
	const char *v;
	int rc;

	if (strncmp(s->source, "env:", 4) == 0) {
		if ((v = getenv(s->source + 4)) == NULL) {
			(void)snprintf(msg, msglen, "%s: %s is not set", s->name,
			    s->source + 4);
			return -1;
		}
		len = strlen(v);
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, v, len);
		explicit_bzero((char *)v, strlen(v));
		(void)unsetenv(s->source + 4);
	} else if (read_file(s->source + 5, buf, &len, err, sizeof(err)) != 0) {
		(void)snprintf(msg, msglen, "%s: %s", s->name, err);
		return -1;
	}
	/* what an editor or echo leaves at the end */
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	rc = egress_secret_set(s, buf, len, err, sizeof(err));
	explicit_bzero(buf, sizeof(buf));
	if (rc != 0)
		(void)snprintf(msg, msglen, "%s: %s", s->name, err);
	return rc;
}

/* Is every name pattern h covers also allowed by the rules? */
static bool
host_allowed(const struct egress_rules *r, const struct egress_pattern *h)
{
	struct egress_verdict v;
	size_t i;

	if (!h->wildcard) {
		egress_decide(r, h->host, h->port != 0 ? h->port : 443, &v);
		return v.allowed;
	}
	for (i = 0; i < r->nallow; i++) {
		const struct egress_pattern *a = &r->allow[i];
		size_t hl = strlen(h->host), al = strlen(a->host);

		if (!a->wildcard || a->is_addr || (!a->any_port &&
		    a->port != h->port))
			continue;
		if (strcmp(a->host, h->host) == 0 || (hl > al + 1 &&
		    h->host[hl - al - 1] == '.' &&
		    strcmp(h->host + hl - al, a->host) == 0))
			return true;
	}
	return false;
}

/* The bundle the sandboxes trust: the system's CAs, then the proxy's. */
static int
write_bundle(struct policy *p, char *msg, size_t msglen)
{
	const char *tmp = getenv("TMPDIR"), *ca = egress_tls_ca_pem(
	    p->secrets->tls);
	char dir[4096], *sys = NULL;
	size_t len = POLICY_MAX_CA_BUNDLE;
	FILE *f;
	int fd, rc = -1;

	if (tmp == NULL || tmp[0] != '/')
		tmp = "/tmp";
	if ((size_t)snprintf(dir, sizeof(dir), "%s/mcp-sandbox-ca-XXXXXX",
	    tmp) >= sizeof(dir) || mkdtemp(dir) == NULL ||
	    chmod(dir, 0755) != 0) {
		(void)snprintf(msg, msglen, "no directory for the CA bundle "
		    "in %s: %s", tmp, strerror(errno));
		return -1;
	}
	if ((p->ca_dir = strdup(dir)) == NULL ||
	    asprintf(&p->ca_bundle, "%s/ca.pem", dir) < 0) {
		p->ca_bundle = NULL;
		(void)snprintf(msg, msglen, "out of memory");
		return -1;
	}
	if ((fd = open(POLICY_SYSTEM_CAS, O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t n;
		size_t got = 0;

		if ((sys = malloc(len)) != NULL)
			while (got < len && (n = read(fd, sys + got,
			    len - got)) > 0)
				got += (size_t)n;
		len = got;
		(void)close(fd);
	} else
		len = 0;
	if ((fd = open(p->ca_bundle, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) < 0 || (f = fdopen(fd, "w")) == NULL) {
		(void)snprintf(msg, msglen, "%s: %s", p->ca_bundle,
		    strerror(errno));
		if (fd >= 0)
			(void)close(fd);
		goto out;
	}
	if (sys != NULL && len > 0)
		(void)fwrite(sys, 1, len, f);
	(void)fprintf(f, "%s%s", len > 0 && sys[len - 1] != '\n' ? "\n" : "",
	    ca);
	if (fchmod(fd, 0644) != 0 || fclose(f) != 0) {
		(void)snprintf(msg, msglen, "%s: %s", p->ca_bundle,
		    strerror(errno));
		goto out;
	}
	rc = 0;
 out:
	free(sys);
	return rc;
}

int
policy_secrets_finalize(struct policy *p, char *err, size_t errlen)
{
	struct egress_secrets *ss = p->secrets;
	char msg[600];
	size_t i, j;

	if (ss == NULL || ss->n == 0 || ss->tls != NULL)
		return 0;
	for (i = 0; i < ss->n; i++) {
		struct egress_secret *s = &ss->s[i];

		if (s->nhosts == 0 || s->source[0] == '\0') {
			policy_set_err(err, errlen, "secrets: %s needs hosts "
			    "and from", s->name);
			return -1;
		}
		for (j = 0; j < p->nenv; j++)
			if (strcmp(p->env[j].name, s->name) == 0) {
				policy_set_err(err, errlen, "secrets: %s is "
				    "also in env: the sandbox gets its "
				    "placeholder there", s->name);
				return -1;
			}
		for (j = 0; j < s->nhosts; j++)
			if (!host_allowed(p->egress, &s->hosts[j])) {
				policy_set_err(err, errlen, "secrets: %s is "
				    "bound to '%s', which network."
				    "allowed_domains does not allow "
				    "(--allow-domain %s)", s->name,
				    s->hosts[j].text, s->hosts[j].text);
				return -1;
			}
		if (load_value(s, msg, sizeof(msg)) != 0) {
			policy_set_err(err, errlen, "secrets: %s", msg);
			return -1;
		}
	}
	if ((ss->tls = egress_tls_new(p->egress_ca, msg, sizeof(msg))) ==
	    NULL) {
		policy_set_err(err, errlen, "secrets: %s", msg);
		return -1;
	}
	if (write_bundle(p, msg, sizeof(msg)) != 0) {
		policy_set_err(err, errlen, "secrets: %s", msg);
		return -1;
	}
	p->egress->secrets = ss;
	return 0;
}

struct json_object *
policy_secret_json(const struct policy *p)
{
	struct json_object *a = json_object_new_array(), *o, *h;
	const struct egress_secrets *ss = p->secrets;
	size_t i, j;

	for (i = 0; a != NULL && ss != NULL && i < ss->n; i++) {
		const struct egress_secret *s = &ss->s[i];

		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(
		    s->name));
		h = json_object_new_array();
		for (j = 0; j < s->nhosts; j++)
			json_object_array_add(h, json_object_new_string(
			    s->hosts[j].text));
		json_object_object_add(o, "hosts", h);
		json_object_object_add(o, "from", json_object_new_string(
		    s->source));
		if (s->header[0] != '\0') {
			json_object_object_add(o, "header",
			    json_object_new_string(s->header));
			json_object_object_add(o, "format",
			    json_object_new_string(s->format));
		}
		json_object_object_add(o, "allow_http",
		    json_object_new_boolean(s->allow_http));
		json_object_array_add(a, o);
	}
	return a;
}

void
policy_secret_summary(const struct policy *p, char *buf, size_t len)
{
	const struct egress_secrets *ss = p->secrets;
	size_t i, j, w = 0;
	int n;

	if (ss == NULL || ss->n == 0) {
		(void)snprintf(buf, len, "none bound (nothing is intercepted, "
		    "TLS is not loaded)");
		return;
	}
	buf[0] = '\0';
	for (i = 0; i < ss->n && w < len; i++) {
		n = snprintf(buf + w, len - w, "%s%s (%zu bytes, from %s) to",
		    i > 0 ? "; " : "", ss->s[i].name, ss->s[i].len,
		    ss->s[i].source);
		w += n > 0 ? (size_t)n : 0;
		for (j = 0; j < ss->s[i].nhosts && w < len; j++) {
			n = snprintf(buf + w, len - w, " %s",
			    ss->s[i].hosts[j].text);
			w += n > 0 ? (size_t)n : 0;
		}
	}
	if (w < len)
		(void)snprintf(buf + w, len - w, "; upstream trust: %s; the "
		    "sandbox trusts %s", p->egress_ca != NULL ? p->egress_ca :
		    "the system's store", p->ca_bundle != NULL ? p->ca_bundle :
		    "(not made)");
}

void
policy_secrets_free(struct policy *p)
{
	if (p->secrets != NULL) {
		egress_secrets_wipe(p->secrets);
		egress_tls_free(p->secrets->tls);
		explicit_bzero(p->secrets, sizeof(*p->secrets));
		free(p->secrets);
		p->secrets = NULL;
	}
	if (p->ca_bundle != NULL)
		(void)unlink(p->ca_bundle);
	if (p->ca_dir != NULL)
		(void)rmdir(p->ca_dir);
	free(p->ca_bundle);
	free(p->ca_dir);
	free(p->egress_ca);
	p->ca_bundle = p->ca_dir = p->egress_ca = NULL;
}
