/*
 * Dispatch under allocation failure: while one message is handled, the
 * Nth malloc or calloc fails (ld --wrap: dispatch, session, jsonrpc, the
 * tools; json-c's own objects too where it is linked statically, the
 * release builds), for every N until the message needs fewer. Each answer
 * must be the one a run without failures gives (some notifications
 * dropped), or a -32603 "Internal error: out of memory" for the same id,
 * or nothing when not even that could be built; never a crash, a wrong
 * answer or a leak (LeakSanitizer in the sanitizer build).
 *
 * realloc is left alone: json-c 0.16's serializer ignores a failed growth
 * of its print buffer and returns the text without the bytes it could not
 * append, which nothing outside json-c can tell from a good text.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "dispatch.h"
#include "jsonrpc.h"
#include "log.h"
#include "policy.h"
#include "registry.h"
#include "session.h"
#include "tool.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);

/* Test-only state: dispatch runs these calls on this one thread. */
static long fail_at = -1, calls;

static int
should_fail(void)
{
	return fail_at > 0 && ++calls == fail_at;
}

void *
__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	return should_fail() ? NULL : __real_calloc(n, size);
}

#define META	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" \
	"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}"

/*
 * Every method, both eras, results and errors with data, a log line. The
 * tools called are fixtures: calculate's GMP aborts the process when an
 * allocation fails (its default allocator), which no caller can catch.
 */
static const char *const messages[] = {
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
	    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\","
	    "\"params\":{\"level\":\"info\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"test_multiple_content_types\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"test_simple_text\",\"arguments\":{\"x\":7}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"test_logging_tool\",\"arguments\":{}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"nope\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"server/discover\",\"params\":"
	    "{" META "}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\",\"params\":"
	    "{" META "}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"test_logging_tool\",\"arguments\":{},"
	    META ",\"io.modelcontextprotocol/logLevel\":\"debug\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"test_missing_capability\",\"arguments\":{}," META "}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"ping\",\"params\":"
	    "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"1999-01-01\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"subscriptions/listen\","
	    "\"params\":{\"notifications\":{}," META "}}}",
	/* resources: fixtures (the workspace does not exist), both eras */
	"{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"resources/list\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"resources/list\","
	    "\"params\":{" META "}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":"
	    "\"resources/templates/list\",\"params\":{" META "}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"resources/read\","
	    "\"params\":{\"uri\":\"test://static-text\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"resources/read\","
	    "\"params\":{\"uri\":\"test://template/7/data\"," META "}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"resources/read\","
	    "\"params\":{\"uri\":\"test://nothing\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"resources/read\","
	    "\"params\":{\"uri\":\"file:///workspace/x\"," META "}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"resources/subscribe\","
	    "\"params\":{\"uri\":\"test://watched-resource\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"resources/unsubscribe\","
	    "\"params\":{\"uri\":\"test://watched-resource\"}}",
};

/* What dispatch sent for one message, in order, newline-separated. */
struct capture {
	char buf[64 * 1024];
	size_t len;
	bool overflow;
};

static int
capture_send(void *arg, const char *msg, size_t len)
{
	struct capture *c = arg;

	if (c->len + len + 1 > sizeof(c->buf)) {
		c->overflow = true;
		return -1;
	}
	memcpy(c->buf + c->len, msg, len);
	c->len += len;
	c->buf[c->len++] = '\n';
	return 0;
}

/* One message through dispatch with allocation n failing (-1: none). */
static void
run(const struct server *srv, struct session *sess, const struct rpc_msg *msg,
    long n, struct capture *c)
{
	struct msg_sink sink = { capture_send, c };

	memset(c, 0, sizeof(*c));
	calls = 0;
	fail_at = n;
	(void)dispatch_message(srv, sess, msg, &sink);
	fail_at = -1;
}

/* The out-of-memory error for id, as dispatch builds it. */
static void
nomem_answer(const struct rpc_msg *msg, char *buf, size_t len)
{
	char *t = jsonrpc_error(msg->id, MCP_ERR_NOMEM,
	    "Internal error: out of memory", NULL, NULL);

	(void)snprintf(buf, len, "%s\n", t != NULL ? t : "");
	free(t);
}

/* The line of buf at *off (without its newline), advancing *off. */
static bool
next_line(const struct capture *c, size_t *off, const char **ret,
    size_t *ret_len)
{
	const char *nl;

	if (*off >= c->len)
		return false;
	*ret = c->buf + *off;
	nl = memchr(*ret, '\n', c->len - *off);
	*ret_len = (size_t)(nl - *ret);
	*off += *ret_len + 1;
	return true;
}

/*
 * Whether got is what want says with allocations failing: want's
 * notifications in order, some of them dropped, then want's answer, the
 * out-of-memory error nomem, or no answer at all.
 */
static bool
acceptable(const struct capture *got, const struct capture *want,
    const char *nomem)
{
	const char *g, *w, *answer = NULL;
	size_t goff = 0, woff = 0, glen, wlen, alen = 0, nlen;

	nlen = strlen(nomem) - 1;	/* without its newline */
	while (next_line(want, &woff, &w, &wlen)) {
		answer = w;
		alen = wlen;
	}
	woff = 0;
	while (next_line(got, &goff, &g, &glen)) {
		if (goff >= got->len)	/* the last line: the answer? */
			if ((glen == alen && memcmp(g, answer, alen) == 0) ||
			    (glen == nlen && memcmp(g, nomem, nlen) == 0))
				return true;
		/* else a notification of want's, in order */
		for (;;) {
			if (!next_line(want, &woff, &w, &wlen) || w == answer)
				return false;
			if (wlen == glen && memcmp(w, g, glen) == 0)
				break;
		}
	}
	return true;	/* no answer: not even the error could be built */
}

int
main(void)
{
	static struct capture want, got;
	struct tool_env env = { 0 };
	struct server srv = { 0 };
	struct toolset *ts = NULL;
	struct session sess;
	struct rpc_msg *msg;
	struct policy *p;
	char err[512], nomem[512], *reply;
	size_t i, tried = 0;
	long n;

	log_set_level(LOG_QUIET);
	if ((p = policy_new_default(err, sizeof(err))) == NULL ||
	    policy_finalize(p, err, sizeof(err)) != 0) {
		printf("policy: %s\n", err);
		return 2;
	}
	env.policy = p;
	env.fixtures = true;
	if (toolset_new(&env, &ts, err, sizeof(err)) != MCP_OK) {
		printf("toolset: %s\n", err);
		return 2;
	}
	srv.tools = ts;
	srv.env = &env;
	/* the fixtures touch no file: a path is all they need */
	session_init(&sess, "/nonexistent-workspace");
	for (i = 0; i < sizeof(messages) / sizeof(messages[0]); i++) {
		if (jsonrpc_decode(messages[i], strlen(messages[i]), &msg,
		    &reply) != MCP_OK) {
			printf("message %zu does not decode: %s\n", i, reply);
			return 2;
		}
		run(&srv, &sess, msg, -1, &want);
		if (want.len == 0 || want.overflow) {
			printf("message %zu: no answer without failures\n", i);
			return 1;
		}
		nomem_answer(msg, nomem, sizeof(nomem));
		for (n = 1;; n++) {
			run(&srv, &sess, msg, n, &got);
			if (calls < n)
				break;	/* nothing failed: done */
			tried++;
			if (got.overflow || !acceptable(&got, &want, nomem)) {
				printf("message %zu, allocation %ld failing: "
				    "got\n%.*s\nwanted\n%.*s\nor\n%s", i, n,
				    (int)got.len, got.buf, (int)want.len,
				    want.buf, nomem);
				return 1;
			}
		}
		if (got.len != want.len || memcmp(got.buf, want.buf,
		    got.len) != 0) {
			printf("message %zu: the answer changed\n", i);
			return 1;
		}
		rpc_msg_free(msg);
	}
	printf("dispatch allocation failures: %zu exit paths tried, all "
	    "clean\n", tried);
	session_fini(&sess);
	toolset_free(ts);
	policy_free(p);
	return 0;
}
