/* The signed requestState (approval_state.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "approval_state.h"
#include "json_build.h"
#include "render.h"

#define STATE_VERSION	1
/* The payload is an object of arrays of strings: two levels, and room. */
#define STATE_JSON_DEPTH	4
/* Canonical form of arguments: those of the tools that ask (run_command,
 * run_code) are three levels deep at most by their schemas; past it the
 * digest fails closed. */
#define CANON_MAX_DEPTH		32
/* The longest requestState read: a payload of 16 hosts, base64. */
#define APPROVAL_MAX_STATE	8192

/* What one key's MACs cover, kept apart (approval_seal()). */
#define STATE_PURPOSE	"approval-state-v1"

int
approval_hmac(const uint8_t key[SHA256_LEN], const void *msg, size_t len,
    uint8_t out[SHA256_LEN])
{
	uint8_t pad[64], inner[SHA256_LEN], *buf;
	size_t i;

	/* no MAC at all when it cannot be computed: a fixed one would
	 * match a forgery's */
	if ((buf = malloc(64 + (len > SHA256_LEN ? len : SHA256_LEN))) ==
	    NULL)
		return -1;
	memset(pad, 0, sizeof(pad));
	memcpy(pad, key, SHA256_LEN);
	for (i = 0; i < 64; i++)
		buf[i] = pad[i] ^ 0x36;
	memcpy(buf + 64, msg, len);
	sha256(buf, 64 + len, inner);
	for (i = 0; i < 64; i++)
		buf[i] = pad[i] ^ 0x5c;
	memcpy(buf + 64, inner, SHA256_LEN);
	sha256(buf, 64 + SHA256_LEN, out);
	explicit_bzero(pad, sizeof(pad));
	explicit_bzero(buf, 64);
	free(buf);
	return 0;
}

/* The MAC of purpose, a NUL, then text: a text sealed for one purpose
 * never opens for another. -1: no memory. */
static int
mac_for(const uint8_t key[SHA256_LEN], const char *purpose, const void *text,
    size_t len, uint8_t out[SHA256_LEN])
{
	size_t plen = strlen(purpose) + 1;
	uint8_t *buf;
	int rc;

	if ((buf = malloc(plen + len + 1)) == NULL)
		return -1;
	memcpy(buf, purpose, plen);
	memcpy(buf + plen, text, len);
	rc = approval_hmac(key, buf, plen + len, out);
	free(buf);
	return rc;
}

/* A growing string for the canonical form of the arguments. */
struct canon {
	char *buf;
	size_t len, cap;
	bool failed;
};

static void
canon_put(struct canon *c, const char *s, size_t n)
{
	char *nb;

	if (c->failed)
		return;
	if (c->len + n + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 256;

		while (cap < c->len + n + 1)
			cap *= 2;
		if ((nb = realloc(c->buf, cap)) == NULL) {
			c->failed = true;
			return;
		}
		c->buf = nb;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, s, n);
	c->len += n;
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* JSON with object members in key order: the same arguments give the same
 * digest however a client orders them. */
static void
canon_json(struct canon *c, struct json_object *o, int depth)
{
	const char *s, **keys;
	size_t i, n;

	if (depth > CANON_MAX_DEPTH) {
		c->failed = true;
		return;
	}
	if (json_object_is_type(o, json_type_object)) {
		n = (size_t)json_object_object_length(o);
		if ((keys = calloc(n + 1, sizeof(*keys))) == NULL) {
			c->failed = true;
			return;
		}
		i = 0;
		json_object_object_foreach(o, k, v) {
			(void)v;
			keys[i++] = k;
		}
		qsort(keys, n, sizeof(*keys), key_cmp);
		canon_put(c, "{", 1);
		for (i = 0; i < n; i++) {
			struct json_object *ks = json_object_new_string(keys[i]);

			if (i > 0)
				canon_put(c, ",", 1);
			s = json_object_to_json_string_ext(ks,
			    JSON_C_TO_STRING_PLAIN);
			canon_put(c, s, strlen(s));
			json_object_put(ks);
			canon_put(c, ":", 1);
			canon_json(c, json_object_object_get(o, keys[i]),
			    depth + 1);
		}
		canon_put(c, "}", 1);
		free(keys);
		return;
	}
	if (json_object_is_type(o, json_type_array)) {
		n = json_object_array_length(o);
		canon_put(c, "[", 1);
		for (i = 0; i < n; i++) {
			if (i > 0)
				canon_put(c, ",", 1);
			canon_json(c, json_object_array_get_idx(o, i),
			    depth + 1);
		}
		canon_put(c, "]", 1);
		return;
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	canon_put(c, s, strlen(s));
}

/* The hex digest of the canonical arguments; -1 on allocation failure. */
static int
args_digest(const struct json_object *args, char hex[2 * SHA256_LEN + 1])
{
	struct canon c = { NULL, 0, 0, false };
	uint8_t d[SHA256_LEN];
	size_t i;

	canon_json(&c, (struct json_object *)args, 0);
	if (c.failed) {
		free(c.buf);
		return -1;
	}
	sha256(c.buf, c.len, d);
	free(c.buf);
	for (i = 0; i < SHA256_LEN; i++)
		(void)snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return 0;
}

/* base64url without padding, from render's base64. Owned. */
static char *
b64url(const void *data, size_t len)
{
	char *s = render_base64(data, len), *p;

	if (s == NULL)
		return NULL;
	for (p = s; *p != '\0'; p++) {
		if (*p == '+')
			*p = '-';
		else if (*p == '/')
			*p = '_';
		else if (*p == '=') {
			*p = '\0';
			break;
		}
	}
	return s;
}

static void *
b64url_decode(const char *s, size_t len, size_t *ret_len)
{
	char *t;
	void *out;
	size_t i;

	if ((t = malloc(len + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] == '+' || s[i] == '/' || s[i] == '=') {
			free(t);
			return NULL;	/* one spelling only */
		}
		t[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
	}
	t[len] = '\0';
	out = render_base64_decode(t, len, ret_len);
	free(t);
	t = NULL;
	/* one spelling only: the unused bits of the last character too */
	if (out != NULL && ((t = b64url(out, *ret_len)) == NULL ||
	    strlen(t) != len || memcmp(t, s, len) != 0)) {
		free(out);
		out = NULL;
	}
	free(t);
	return out;
}

static const char *
jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) &&
	    json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL;
}

/* Constant time: a MAC compared byte by byte leaks where it differs. */
static bool
mac_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static int
hex_nonce(const char *s, uint8_t out[APPROVAL_NONCE_LEN])
{
	size_t i;
	unsigned v;

	if (s == NULL || strlen(s) != 2 * APPROVAL_NONCE_LEN)
		return -1;
	for (i = 0; i < APPROVAL_NONCE_LEN; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}


char *
approval_seal(const uint8_t key[SHA256_LEN], const char *purpose,
    const void *text, size_t len)
{
	uint8_t mac[SHA256_LEN];
	char *p64 = NULL, *m64 = NULL, *out = NULL;

	if (mac_for(key, purpose, text, len, mac) != 0)
		return NULL;
	if ((p64 = b64url(text, len)) != NULL &&
	    (m64 = b64url(mac, sizeof(mac))) != NULL &&
	    (out = malloc(strlen(p64) + strlen(m64) + 2)) != NULL)
		(void)sprintf(out, "%s.%s", p64, m64);
	free(p64);
	free(m64);
	return out;
}

int
approval_unseal(const uint8_t key[SHA256_LEN], const char *purpose,
    const char *sealed, char **ret, size_t *ret_len)
{
	const char *dot;
	uint8_t *payload = NULL, *mac = NULL, want[SHA256_LEN];
	size_t plen, mlen;
	int rc = -1;

	*ret = NULL;
	if (strlen(sealed) > APPROVAL_MAX_STATE ||
	    (dot = strchr(sealed, '.')) == NULL)
		return -1;
	if ((payload = b64url_decode(sealed, (size_t)(dot - sealed),
	    &plen)) == NULL || (mac = b64url_decode(dot + 1, strlen(dot + 1),
	    &mlen)) == NULL || mlen != SHA256_LEN)
		goto out;
	if (mac_for(key, purpose, payload, plen, want) != 0)
		goto out;
	rc = -2;
	if (!mac_equal(want, mac, SHA256_LEN))
		goto out;
	if ((*ret = malloc(plen + 1)) == NULL) {
		rc = -1;
		goto out;
	}
	memcpy(*ret, payload, plen);
	(*ret)[plen] = '\0';
	*ret_len = plen;
	rc = 0;
 out:
	free(payload);
	free(mac);
	return rc;
}

char *
approval_state_make(const uint8_t key[SHA256_LEN], const char *owner,
    const char *tool, const struct json_object *args,
    const struct tool_ask *ask, uint64_t expires_ms)
{
	struct json_object *o, *d;
	uint8_t nonce[APPROVAL_NONCE_LEN];
	char nhex[2 * APPROVAL_NONCE_LEN + 1], ahex[2 * SHA256_LEN + 1];
	char *out;
	const char *text;
	size_t i, len;

	if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce) ||
	    args_digest(args, ahex) != 0)
		return NULL;
	for (i = 0; i < APPROVAL_NONCE_LEN; i++)
		(void)snprintf(nhex + 2 * i, 3, "%02x", nonce[i]);
	d = json_object_new_array();
	for (i = 0; d != NULL && i < ask->ndomains; i++)
		if (jb_push(d, json_object_new_string(ask->domains[i])) != 0) {
			json_object_put(d);
			d = NULL;
		}
	o = json_object_new_object();
	if ((o = jb_built(o, jb_add(o, "d", d) ||
	    jb_add(o, "v", json_object_new_int(STATE_VERSION)) ||
	    jb_add(o, "n", json_object_new_string(nhex)) ||
	    jb_add(o, "e", json_object_new_int64((int64_t)expires_ms)) ||
	    jb_add(o, "o", json_object_new_string(owner)) ||
	    jb_add(o, "t", json_object_new_string(tool)) ||
	    jb_add(o, "a", json_object_new_string(ahex)) ||
	    jb_add(o, "to", json_object_new_int64(ask->timeout_ms)) ||
	    jb_add(o, "net", json_object_new_boolean(ask->network)))) == NULL)
		return NULL;
	text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN,
	    &len);
	out = approval_seal(key, STATE_PURPOSE, text, len);
	json_object_put(o);
	return out;
}

/* The payload's JSON (signed, so ours; still parsed with its length). */
static struct json_object *
parse_payload(const uint8_t *payload, size_t len)
{
	struct json_tokener *tok;
	struct json_object *o;

	if ((tok = json_tokener_new_ex(STATE_JSON_DEPTH)) == NULL)
		return NULL;
	o = json_tokener_parse_ex(tok, (const char *)payload, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* The fields of a checked payload into st; -1 when one is missing. */
static int
read_fields(struct json_object *o, struct approval_state *st)
{
	struct json_object *v, *d;
	size_t i, n;

	memset(st, 0, sizeof(*st));
	if (!json_object_object_get_ex(o, "e", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    hex_nonce(jstr(o, "n"), st->nonce) != 0 ||
	    !json_object_object_get_ex(o, "d", &d) ||
	    !json_object_is_type(d, json_type_array))
		return -1;
	st->expires_ms = (uint64_t)json_object_get_int64(v);
	n = json_object_array_length(d);
	for (i = 0; i < n && i < TOOL_MAX_ASK_DOMAINS; i++)
		(void)snprintf(st->asked.domains[st->asked.ndomains++],
		    TOOL_ASK_HOST_LEN, "%s", json_object_get_string(
		    json_object_array_get_idx(d, i)));
	if (json_object_object_get_ex(o, "to", &v))
		st->asked.timeout_ms = (uint32_t)json_object_get_int64(v);
	st->asked.network = json_object_object_get_ex(o, "net", &v) &&
	    json_object_get_boolean(v);
	return 0;
}

const char *
approval_state_open(const uint8_t key[SHA256_LEN], const char *text,
    const char *owner, const char *tool, const struct json_object *args,
    uint64_t now_ms, struct approval_state *st)
{
	static const char not_ours[] = "it is not one this server issued";
	const char *why = NULL, *s;
	struct json_object *o = NULL;
	char ahex[2 * SHA256_LEN + 1], *payload = NULL;
	size_t plen;

	switch (approval_unseal(key, STATE_PURPOSE, text, &payload, &plen)) {
	case 0:
		break;
	case -2:
		return "its signature does not match (altered, or from another "
		    "server run)";
	default:
		return not_ours;
	}
	if ((o = parse_payload((const uint8_t *)payload, plen)) == NULL ||
	    read_fields(o, st) != 0) {
		why = not_ours;
		goto out;
	}
	if (st->expires_ms <= now_ms)
		why = "it expired (limits.ask_wait_ms): call again without it";
	else if ((s = jstr(o, "o")) == NULL || strcmp(s, owner) != 0)
		why = "it was issued to another principal";
	else if ((s = jstr(o, "t")) == NULL || strcmp(s, tool) != 0 ||
	    args_digest(args, ahex) != 0 || (s = jstr(o, "a")) == NULL ||
	    strcmp(s, ahex) != 0)
		why = "it was issued for another tool or other arguments: "
		    "retry with the exact arguments of the call that was asked";
 out:
	json_object_put(o);
	free(payload);
	return why;
}
