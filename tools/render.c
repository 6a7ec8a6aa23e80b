/*
 * Rendering of program output and file bytes into CallToolResults. Trusts
 * nothing about the bytes: every string handed to json-c is well-formed
 * UTF-8 (json-c would copy ill-formed bytes into the reply verbatim).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"
#include "render.h"
#include "sandbox.h"
#include "tool.h"

/* Length of the well-formed sequence at s[0..n), or 0 if ill-formed. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool
render_utf8_valid(const char *data, size_t len)
{
	const unsigned char *s = (const unsigned char *)data;
	size_t i = 0, k;

	while (i < len) {
		if ((k = utf8_seq(s + i, len - i)) == 0)
			return false;
		i += k;
	}
	return true;
}

size_t
render_utf8_cut(const char *data, size_t len)
{
	const unsigned char *s = (const unsigned char *)data;
	size_t i = len, need;

	/* back over at most 3 continuation bytes to the last lead byte */
	while (i > 0 && len - i < 3 && (s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0)
		return len;
	i--;
	if (s[i] < 0xc2 || s[i] > 0xf4)
		return len;	/* ASCII or not a lead byte: nothing is cut */
	need = s[i] >= 0xf0 ? 4 : s[i] >= 0xe0 ? 3 : 2;
	return len - i < need ? i : len;
}

bool
render_is_binary(const char *data, size_t len)
{
	return memchr(data, '\0', len) != NULL ||
	    !render_utf8_valid(data, len);
}

struct json_object *
render_string(const char *data, size_t len, size_t *replaced)
{
	const unsigned char *s = (const unsigned char *)data;
	struct json_object *o;
	char *buf;
	size_t i = 0, w = 0, k, bad = 0;

	if (render_utf8_valid(data, len)) {
		if (replaced != NULL)
			*replaced = 0;
		return json_object_new_string_len(data, (int)len);
	}
	/* each bad byte becomes 3 bytes of U+FFFD */
	if ((buf = malloc(len * 3 + 1)) == NULL)
		return NULL;
	while (i < len) {
		if ((k = utf8_seq(s + i, len - i)) == 0) {
			memcpy(buf + w, "\xef\xbf\xbd", 3);
			w += 3;
			i++;
			bad++;
			continue;
		}
		memcpy(buf + w, s + i, k);
		w += k;
		i += k;
	}
	o = json_object_new_string_len(buf, (int)w);
	free(buf);
	if (replaced != NULL)
		*replaced = bad;
	return o;
}

/* 1 if s[0..n) starts with "xHH" (two hex digits): a \xHH escape's tail. */
static int
looks_hex_escape(const unsigned char *s, size_t n)
{
	return n >= 3 && s[0] == 'x' && strchr("0123456789abcdefABCDEF",
	    s[1]) != NULL && s[1] != '\0' && strchr(
	    "0123456789abcdefABCDEF", s[2]) != NULL && s[2] != '\0';
}

/*
 * What the escaper escapes beyond the C0 controls but tab, newline and CR,
 * DEL and ill-formed bytes: ESC_LINE is text that must stay on its line (a
 * name in a list of the server's): tab, newline and CR too, the C1
 * controls (U+0080..U+009F: U+009B is CSI, U+0085 a newline to some) and
 * U+2028, U+2029 (line and paragraph separators).
 */
#define ESC_LINE	0x1

/* 1 if the byte at s[0..n) (n > 0) is rendered as \xHH. */
static int
escaped_byte(const unsigned char *s, size_t n, int flags)
{
	size_t k = utf8_seq(s, n);

	if (k == 0)
		return 1;
	if (k == 1)
		return (s[0] < 0x20 && ((flags & ESC_LINE) || (s[0] != '\t' &&
		    s[0] != '\n' && s[0] != '\r'))) || s[0] == 0x7f;
	if ((flags & ESC_LINE) == 0)
		return 0;
	/* its first byte escaped, the rest are lone continuation bytes */
	return (k == 2 && s[0] == 0xc2 && s[1] <= 0x9f) || (k == 3 &&
	    s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9));
}

/* render_text_bytes' scheme, with what flags add escaped too. */
static char *
escape_bytes(const char *data, size_t len, int flags, size_t *escaped)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)data;
	size_t i = 0, w = 0, k, n = 0;
	char *buf;

	/* at worst every byte becomes \xHH */
	if (len > (SIZE_MAX - 1) / 4 || (buf = malloc(len * 4 + 1)) == NULL)
		return NULL;
	while (i < len) {
		k = utf8_seq(s + i, len - i);
		if (s[i] == '\\') {
			/* doubled when what follows starts with a backslash */
			buf[w++] = '\\';
			if (i + 1 < len && (s[i + 1] == '\\' ||
			    escaped_byte(s + i + 1, len - i - 1, flags) ||
			    looks_hex_escape(s + i + 1, len - i - 1))) {
				buf[w++] = '\\';
				n++;
			}
			i++;
			continue;
		}
		if (escaped_byte(s + i, len - i, flags)) {
			buf[w++] = '\\';
			buf[w++] = 'x';
			buf[w++] = hex[s[i] >> 4];
			buf[w++] = hex[s[i] & 0xf];
			i++;
			n++;
			continue;
		}
		memcpy(buf + w, s + i, k);
		w += k;
		i += k;
	}
	buf[w] = '\0';
	if (escaped != NULL)
		*escaped = n;
	return buf;
}

char *
render_text_bytes(const char *data, size_t len, size_t *escaped)
{
	return escape_bytes(data, len, 0, escaped);
}

char *
render_name_text(const char *name, size_t len)
{
	return escape_bytes(name, len, ESC_LINE, NULL);
}

bool
render_name_plain(const char *name, size_t len)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t i = 0;

	while (i < len) {
		if (escaped_byte(s + i, len - i, ESC_LINE))
			return false;
		i += utf8_seq(s + i, len - i);
	}
	return true;
}

char *
render_base64(const void *data, size_t len)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = data;
	char *out, *w;
	size_t i;

	if ((out = malloc((len + 2) / 3 * 4 + 1)) == NULL)
		return NULL;
	w = out;
	for (i = 0; i + 2 < len; i += 3) {
		*w++ = tab[s[i] >> 2];
		*w++ = tab[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
		*w++ = tab[((s[i + 1] & 15) << 2) | (s[i + 2] >> 6)];
		*w++ = tab[s[i + 2] & 63];
	}
	if (i < len) {
		*w++ = tab[s[i] >> 2];
		if (i + 1 < len) {
			*w++ = tab[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
			*w++ = tab[(s[i + 1] & 15) << 2];
		} else {
			*w++ = tab[(s[i] & 3) << 4];
			*w++ = '=';
		}
		*w++ = '=';
	}
	*w = '\0';
	return out;
}

static int
b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

void *
render_base64_decode(const char *text, size_t len, size_t *ret_len)
{
	const unsigned char *s = (const unsigned char *)text;
	unsigned char *out;
	uint32_t acc = 0;
	size_t i, w = 0, bits = 0, pad = 0;

	*ret_len = 0;
	while (len > 0 && s[len - 1] == '=') {
		len--;
		pad++;
	}
	if (pad > 2 || len % 4 == 1) {
		errno = EINVAL;
		return NULL;
	}
	if ((out = malloc(len / 4 * 3 + 3)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		int v = b64_val(s[i]);
		if (v < 0) {
			free(out);
			errno = EINVAL;
			return NULL;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[w++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	out[w] = '\0';	/* room: w <= len / 4 * 3 + 2 */
	*ret_len = w;
	return out;
}

struct json_object *
render_run_structured(const struct sb_result *res)
{
	struct json_object *o, *v;

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	if (json_object_object_add(o, "exit_code", res->exited ?
	    json_object_new_int(res->exit_code) : NULL) != 0 ||
	    json_object_object_add(o, "signal", json_object_new_int(
	    res->exited ? 0 : res->signal)) != 0 ||
	    json_object_object_add(o, "timed_out",
	    json_object_new_boolean(res->timed_out)) != 0)
		goto fail;
	if ((v = render_string(res->out.data ? res->out.data : "",
	    res->out.len, NULL)) == NULL ||
	    json_object_object_add(o, "stdout", v) != 0)
		goto fail;
	if ((v = render_string(res->err_out.data ? res->err_out.data : "",
	    res->err_out.len, NULL)) == NULL ||
	    json_object_object_add(o, "stderr", v) != 0)
		goto fail;
	if (json_object_object_add(o, "stdout_bytes",
	    json_object_new_int64((int64_t)res->out.total)) != 0 ||
	    json_object_object_add(o, "stderr_bytes",
	    json_object_new_int64((int64_t)res->err_out.total)) != 0 ||
	    json_object_object_add(o, "stdout_truncated",
	    json_object_new_boolean(res->out.truncated)) != 0 ||
	    json_object_object_add(o, "stderr_truncated",
	    json_object_new_boolean(res->err_out.truncated)) != 0 ||
	    json_object_object_add(o, "duration_ms",
	    json_object_new_int64((int64_t)(res->duration_us / 1000))) != 0)
		goto fail;
	/* the cgroup's own accounting; null where the run had none */
	if (json_object_object_add(o, "memory_peak_bytes", res->cgroup &&
	    res->memory_peak_bytes > 0 ? json_object_new_int64(
	    (int64_t)res->memory_peak_bytes) : NULL) != 0 ||
	    json_object_object_add(o, "memory_limit_reached",
	    json_object_new_boolean(res->oom)) != 0 ||
	    json_object_object_add(o, "process_limit_reached",
	    json_object_new_boolean(res->forks_refused > 0)) != 0)
		goto fail;
	return o;
 fail:
	json_object_put(o);
	return NULL;
}

/*
 * The status sentence and its notes: the longest, out of memory with
 * forks refused and protect_moved full, is some 900 bytes.
 */
#define RENDER_STATUS_MAX	1024

/* One status sentence. */
static void
run_status(const struct sb_result *res, const char *what, uint32_t timeout_ms,
    char *buf, size_t len)
{
	size_t w;

	if (res->oom)
		(void)snprintf(buf, len, "Out of memory: the run reached its "
		    "memory limit of %llu MiB (shared memory and /tmp files "
		    "count) and was ended. Use less memory, or ask the operator "
		    "for a larger --memory-mb.",
		    (unsigned long long)(res->memory_limit_bytes >> 20));
	else if (res->cancelled)
		(void)snprintf(buf, len, "Cancelled: %s was killed.", what);
	else if (res->timed_out)
		(void)snprintf(buf, len, "Timed out: %s was killed after %u ms "
		    "(the deadline). Make it faster, or ask for a longer "
		    "timeout_ms within the policy.", what, timeout_ms);
	else if (!res->exited)
		(void)snprintf(buf, len, "%s was killed by signal %d%s.", what,
		    res->signal, res->signal == 9 ? " (a limit: memory, "
		    "processes or CPU time)" : res->signal == 25 ?
		    " (the file size limit)" : "");
	else if (res->exit_code != 0)
		(void)snprintf(buf, len, "%s exited with status %d.", what,
		    res->exit_code);
	else
		(void)snprintf(buf, len, "%s exited with status 0.", what);
	if (buf[0] >= 'a' && buf[0] <= 'z')
		buf[0] = (char)(buf[0] - 'a' + 'A');
	w = strlen(buf);
	if (res->forks_refused > 0 && w < len)
		(void)snprintf(buf + w, len - w, " The run reached its process "
		    "limit of %u: %llu fork(s) were refused.",
		    res->pids_limit,
		    (unsigned long long)res->forks_refused);
	w = strlen(buf);
	if (res->protect_moved[0] != '\0' && w < len)
		(void)snprintf(buf + w, len - w, " Protected names of the "
		    "workspace appeared during the run (%s): what they hold "
		    "would run on the host, so they were moved aside; the "
		    "policy's protected_paths lists them.", res->protect_moved);
}

/* Appends "--- name ---\n" + every byte (render_text_bytes) + notes. */
static void
text_stream(char *buf, size_t cap, size_t *w, const char *name,
    const struct sb_output *o)
{
	char *s;
	int n;

	if (o->len == 0 && o->total == 0)
		return;
	s = render_text_bytes(o->data ? o->data : "", o->len, NULL);
	n = snprintf(buf + *w, cap - *w, "\n--- %s ---\n%s%s", name,
	    s != NULL ? s : "[output not rendered: out of memory]",
	    o->len > 0 && o->data[o->len - 1] != '\n' ? "\n" : "");
	free(s);
	if (n > 0)
		*w = (size_t)n >= cap - *w ? cap - 1 : *w + (size_t)n;
	if (o->truncated) {
		n = snprintf(buf + *w, cap - *w,
		    "[%s truncated: %llu bytes written, first %zu kept]\n",
		    name, (unsigned long long)o->total, o->len);
		if (n > 0)
			*w = (size_t)n >= cap - *w ? cap - 1 : *w + (size_t)n;
	}
}

char *
render_run_text(const struct sb_result *res, const char *what,
    uint32_t timeout_ms)
{
	size_t cap, w;
	char *buf;

	/* status + both streams (each byte at most 4 escaped) + notes */
	cap = RENDER_STATUS_MAX + 4 * (res->out.len + res->err_out.len) + 256;
	if ((buf = malloc(cap)) == NULL)
		return NULL;
	run_status(res, what, timeout_ms, buf, RENDER_STATUS_MAX);
	w = strlen(buf);
	text_stream(buf, cap, &w, "stdout", &res->out);
	text_stream(buf, cap, &w, "stderr", &res->err_out);
	buf[w] = '\0';
	return buf;
}

void
render_audit_run(const struct sb_result *res, struct tool_audit *audit)
{
	audit->ran = true;
	audit->exit_code = res->exited ? res->exit_code : -1;
	audit->term_signal = res->exited ? 0 : res->signal;
	audit->duration_us = res->duration_us;
	audit->timed_out = res->timed_out;
	audit->truncated = res->out.truncated || res->err_out.truncated;
}

struct json_object *
render_run_result(const struct sb_result *res, const char *what,
    uint32_t timeout_ms, struct tool_audit *audit)
{
	struct json_object *st, *r;
	char *text;

	render_audit_run(res, audit);
	if ((st = render_run_structured(res)) == NULL)
		return NULL;
	if ((text = render_run_text(res, what, timeout_ms)) == NULL) {
		json_object_put(st);
		return NULL;
	}
	if (audit->network != NULL) {
		char *t = render_network_text(text, audit->network);

		free(text);
		if ((text = t) == NULL) {
			json_object_put(st);
			return NULL;
		}
		json_object_object_add(st, "network",
		    json_object_get(audit->network));
	}
	if (res->exited && res->exit_code == 0)
		r = tool_result_ok(st, text);
	else
		r = tool_result_error_structured(st, text);
	free(text);
	return r;
}

struct json_object *
render_sandbox_failure(const struct sb_result *res, const char *what,
    struct tool_audit *audit)
{
	render_refused(audit, "sandbox could not be built");
	return tool_result_error("%s was not run: the sandbox could not be "
	    "built (stage %s: %s). This is a problem of the server's host, "
	    "not of the request.", what, sb_stage_name(res->failed_stage),
	    res->message[0] != '\0' ? res->message : "no detail");
}

struct json_object *
render_ok_json(struct json_object *structured)
{
	const char *text;

	text = json_object_to_json_string_ext(structured,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text == NULL) {
		json_object_put(structured);
		return NULL;
	}
	/* tool_result_ok copies text before structured can go away */
	return tool_result_ok(structured, text);
}

void
render_refused(struct tool_audit *audit, const char *reason)
{
	audit->refused = true;
	(void)snprintf(audit->reason, sizeof(audit->reason), "%s", reason);
}

/* true if o is a string holding U+0000 (or an array or object with one). */
static bool
holds_nul(struct json_object *o)
{
	size_t i, n;

	switch (json_object_get_type(o)) {
	case json_type_string:
		return strlen(json_object_get_string(o)) !=
		    (size_t)json_object_get_string_len(o);
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if (holds_nul(json_object_array_get_idx(o, i)))
				return true;
		return false;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			(void)k;
			if (holds_nul(v))
				return true;
		}
		return false;
	}
	default:
		return false;
	}
}

const char *
render_nul_key(const struct json_object *args, const char *const *keys)
{
	struct json_object *v;	/* borrowed */

	for (; *keys != NULL; keys++)
		if (json_object_object_get_ex(args, *keys, &v) &&
		    holds_nul(v))
			return *keys;
	return NULL;
}

struct json_object *
render_nul_refusal(struct tool_audit *audit, const char *key)
{
	render_refused(audit, "NUL character");
	return tool_result_error("%s contains a NUL character (U+0000); "
	    "paths, names, arguments, environment values and code cannot "
	    "hold one, so nothing was done.", key);
}

/*
 * The network activity of one call (its proxy's records, egress/) as the
 * model reads it: structuredContent.network, a "--- network ---" part of
 * the text, and the same objects for the audit log's lines. Host names
 * and reasons come from the program's own requests: every string goes
 * through render_string (well-formed UTF-8), bounded by the records.
 */
/* Text lines of the network part at most; the structure has them all. */
#define RENDER_NET_LINES	32

static struct json_object *
net_str(const char *s)
{
	return render_string(s, strlen(s), NULL);
}

static struct json_object *
record_json(const struct egress_record *e, const struct egress_secrets *ss)
{
	struct json_object *o = json_object_new_object(), *a;
	size_t i;

	if (o == NULL)
		return NULL;
	json_object_object_add(o, "method", net_str(e->method));
	json_object_object_add(o, "host", net_str(e->host));
	json_object_object_add(o, "port", json_object_new_int(e->port));
	json_object_object_add(o, "allowed", json_object_new_boolean(
	    e->allowed));
	json_object_object_add(o, "rule", net_str(e->rule));
	json_object_object_add(o, "address", net_str(e->addr));
	json_object_object_add(o, "status", json_object_new_int(e->status));
	json_object_object_add(o, "reason", net_str(e->reason));
	json_object_object_add(o, "bytes_up", json_object_new_int64(
	    (int64_t)e->bytes_up));
	json_object_object_add(o, "bytes_down", json_object_new_int64(
	    (int64_t)e->bytes_down));
	if (ss == NULL || ss->n == 0)
		return o;
	json_object_object_add(o, "intercepted", json_object_new_boolean(
	    e->intercepted));
	a = json_object_new_array();
	for (i = 0; i < ss->n; i++)
		if ((e->secrets & (1u << i)) != 0)
			json_object_array_add(a, net_str(ss->s[i].name));
	json_object_object_add(o, "secrets", a);
	return o;
}

struct json_object *
render_network(const struct egress_call *ec)
{
	const struct egress_record *recs;
	struct egress_totals t;
	struct json_object *o, *a;
	size_t n, i;

	recs = egress_call_records(ec, &n);
	egress_call_totals(ec, &t);
	if ((o = json_object_new_object()) == NULL)
		return NULL;
	if ((a = json_object_new_array_ext((int)n)) == NULL) {
		json_object_put(o);
		return NULL;
	}
	for (i = 0; i < n; i++)
		json_object_array_add(a, record_json(&recs[i],
		    egress_call_secrets(ec)));
	json_object_object_add(o, "connections", a);
	json_object_object_add(o, "connection_count",
	    json_object_new_int64(t.connections));
	json_object_object_add(o, "refused", json_object_new_int64(t.refused));
	json_object_object_add(o, "bytes_up",
	    json_object_new_int64((int64_t)t.bytes_up));
	json_object_object_add(o, "bytes_down",
	    json_object_new_int64((int64_t)t.bytes_down));
	json_object_object_add(o, "connection_cap_hit",
	    json_object_new_boolean(t.connection_cap_hit));
	json_object_object_add(o, "byte_cap_hit",
	    json_object_new_boolean(t.byte_cap_hit));
	json_object_object_add(o, "not_recorded",
	    json_object_new_int64(t.not_recorded));
	return o;
}

static const char *
get_s(struct json_object *o, const char *k)
{
	struct json_object *v;	/* borrowed */

	return json_object_object_get_ex(o, k, &v) ?
	    json_object_get_string(v) : "";
}

static int64_t
get_i(struct json_object *o, const char *k)
{
	struct json_object *v;	/* borrowed */

	return json_object_object_get_ex(o, k, &v) ?
	    json_object_get_int64(v) : 0;
}

char *
render_network_text(const char *text, struct json_object *net)
{
	struct json_object *conns, *e;
	size_t n, i, cap, w;
	char *out;
	int k;

	if (!json_object_object_get_ex(net, "connections", &conns))
		return strdup(text);
	n = json_object_array_length(conns);
	/* one line a record: method, host, rule, address, reason, figures */
	cap = strlen(text) + 128 + (n < RENDER_NET_LINES ? n :
	    RENDER_NET_LINES) * (2 * EGRESS_MAX_HOST + 3 * EGRESS_MAX_PATTERN +
	    EGRESS_MAX_REASON + 128);
	if ((out = malloc(cap)) == NULL)
		return NULL;
	w = (size_t)snprintf(out, cap, "%s\n--- network ---\n", text);
	if (n == 0)
		w += (size_t)snprintf(out + w, cap - w, "no connection\n");
	for (i = 0; i < n && i < RENDER_NET_LINES && w < cap; i++) {
		e = json_object_array_get_idx(conns, i);
		if (json_object_get_boolean(json_object_object_get(e,
		    "allowed")))
			k = snprintf(out + w, cap - w, "%s %s:%lld allowed "
			    "(rule %s) via %s: %lld bytes up, %lld down%s%s\n",
			    get_s(e, "method"), get_s(e, "host"),
			    (long long)get_i(e, "port"), get_s(e, "rule"),
			    get_s(e, "address"), (long long)get_i(e,
			    "bytes_up"), (long long)get_i(e, "bytes_down"),
			    get_s(e, "reason")[0] ? "; ended: " : "",
			    get_s(e, "reason"));
		else
			k = snprintf(out + w, cap - w, "%s %s:%lld refused "
			    "(%lld): %s\n", get_s(e, "method")[0] ?
			    get_s(e, "method") : "?", get_s(e, "host")[0] ?
			    get_s(e, "host") : "?", (long long)get_i(e, "port"),
			    (long long)get_i(e, "status"), get_s(e, "reason"));
		if (k > 0)
			w = (size_t)k >= cap - w ? cap - 1 : w + (size_t)k;
	}
	if (n > RENDER_NET_LINES && w < cap) {
		k = snprintf(out + w, cap - w, "[%zu more in structuredContent."
		    "network]\n", n - RENDER_NET_LINES);
		if (k > 0)
			w = (size_t)k >= cap - w ? cap - 1 : w + (size_t)k;
	}
	if (get_i(net, "not_recorded") > 0 && w < cap)
		(void)snprintf(out + w, cap - w, "[%lld more connections "
		    "refused past the cap, not recorded]\n",
		    (long long)get_i(net, "not_recorded"));
	return out;
}
