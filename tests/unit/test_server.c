/* Unit tests of the server layer: JSON-RPC envelope, SHA-256, sessions. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "session.h"
#include "sha256.h"
#include "tasks.h"

static struct rpc_msg *
decode_ok(const char *text)
{
	struct rpc_msg *m = NULL;
	char *reply = NULL;

	ck_assert_int_eq(jsonrpc_decode(text, strlen(text), &m, &reply), MCP_OK);
	ck_assert_ptr_null(reply);
	return m;
}

static void
decode_fails(const char *text, enum mcp_err want, const char *want_reply)
{
	struct rpc_msg *m = NULL;
	char *reply = NULL;

	ck_assert_int_eq(jsonrpc_decode(text, strlen(text), &m, &reply), want);
	ck_assert_ptr_null(m);
	if (want_reply == NULL)
		ck_assert_ptr_null(reply);
	else
		ck_assert_str_eq(reply, want_reply);
	free(reply);
}

START_TEST(jsonrpc_classifies_requests_notifications_responses)
{
	struct rpc_msg *m;

	m = decode_ok("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
	ck_assert_int_eq(m->kind, RPC_REQUEST);
	ck_assert_str_eq(m->method, "ping");
	ck_assert_str_eq(m->id_key, "i:7");
	rpc_msg_free(m);
	m = decode_ok("{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"x\","
	    "\"params\":{}}");
	ck_assert_str_eq(m->id_key, "s:7");
	ck_assert_ptr_nonnull(m->params);
	rpc_msg_free(m);
	m = decode_ok("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}");
	ck_assert_int_eq(m->kind, RPC_NOTIFICATION);
	ck_assert_ptr_null(m->id);
	rpc_msg_free(m);
	m = decode_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	ck_assert_int_eq(m->kind, RPC_RESPONSE);
	rpc_msg_free(m);
}
END_TEST

START_TEST(jsonrpc_rejects_bad_envelopes_with_exact_codes)
{
	struct rpc_msg *m;

	decode_fails("{", MCP_ERR_PARSE, "{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"error\":{\"code\":-32700,\"message\":\"Parse error: not valid "
	    "JSON\"}}");
	decode_fails("[]", MCP_ERR_INVALID_REQUEST, "{\"jsonrpc\":\"2.0\","
	    "\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid "
	    "Request: batch arrays are not supported\"}}");
	decode_fails("{\"jsonrpc\":\"2.0\",\"id\":3}", MCP_ERR_INVALID_REQUEST,
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32600,"
	    "\"message\":\"Invalid Request: \\\"method\\\" is missing\"}}");
	decode_fails("{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"a\"}",
	    MCP_ERR_INVALID_REQUEST, "{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"error\":{\"code\":-32600,\"message\":\"Invalid Request: "
	    "\\\"id\\\" must be a string or an integer\"}}");
	/* the id is read first: a wrong "jsonrpc" still echoes it */
	decode_fails("{\"id\":5,\"method\":\"a\"}", MCP_ERR_INVALID_REQUEST,
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32600,"
	    "\"message\":\"Invalid Request: \\\"jsonrpc\\\" must be "
	    "\\\"2.0\\\"\"}}");
	/* ids json-c cannot give back as sent are refused, with id null */
	decode_fails("{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775808,"
	    "\"method\":\"a\"}", MCP_ERR_INVALID_REQUEST, "{\"jsonrpc\":\"2.0\","
	    "\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid "
	    "Request: integer \\\"id\\\" must be within "
	    "-9223372036854775807..18446744073709551614\"}}");
	decode_fails("{\"jsonrpc\":\"2.0\",\"id\":\"\\udbff\",\"method\":\"a\"}",
	    MCP_ERR_INVALID_REQUEST, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	    "{\"code\":-32600,\"message\":\"Invalid Request: \\\"id\\\" has a "
	    "lone surrogate escape (\\\\ud800-\\\\udfff), which cannot be "
	    "echoed\"}}");
	/* an escaped backslash before "ud800" is no escape: echoed */
	m = decode_ok("{\"jsonrpc\":\"2.0\",\"id\":\"\\ufffd\",\"method\":\"a\","
	    "\"params\":{\"x\":\"\\\\ud800\"}}");
	ck_assert_str_eq(m->id_key, "s:\xef\xbf\xbd");
	rpc_msg_free(m);
	/* a notification with bad params is dropped silently */
	decode_fails("{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":1}",
	    MCP_ERR_INVALID_PARAMS, NULL);
}
END_TEST

START_TEST(jsonrpc_caps_depth_and_id_length)
{
	char deep[300], id[400];
	size_t n;
	int i;

	for (i = 0; i < 100; i++)
		deep[i] = '[';
	for (; i < 200; i++)
		deep[i] = ']';
	deep[i] = '\0';
	decode_fails(deep, MCP_ERR_TOO_DEEP, "{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"error\":{\"code\":-32600,\"message\":\"Invalid Request: JSON "
	    "nested deeper than 64 levels\"}}");
	strcpy(id, "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"id\":\"");
	n = strlen(id);
	memset(id + n, 'x', 300);
	strcpy(id + n + 300, "\"}");
	decode_fails(id, MCP_ERR_INVALID_REQUEST, "{\"jsonrpc\":\"2.0\","
	    "\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid "
	    "Request: \\\"id\\\" is longer than 256 bytes\"}}");
}
END_TEST

START_TEST(jsonrpc_maps_every_error_to_its_code)
{
	ck_assert_int_eq(jsonrpc_code(MCP_ERR_PARSE), -32700);
	ck_assert_int_eq(jsonrpc_code(MCP_ERR_INVALID_REQUEST), -32600);
	ck_assert_int_eq(jsonrpc_code(MCP_ERR_TOO_LARGE), -32600);
	ck_assert_int_eq(jsonrpc_code(MCP_ERR_NO_METHOD), -32601);
	ck_assert_int_eq(jsonrpc_code(MCP_ERR_INVALID_PARAMS), -32602);
	ck_assert_int_eq(jsonrpc_code(MCP_ERR_INTERNAL), -32603);
	ck_assert_int_eq(jsonrpc_code(MCP_ERR_HEADER_MISMATCH), -32020);
	ck_assert_int_eq(jsonrpc_code(MCP_ERR_MISSING_CAPABILITY), -32021);
	ck_assert_int_eq(jsonrpc_code(MCP_ERR_UNSUPPORTED_VERSION), -32022);
}
END_TEST

START_TEST(sha256_matches_fips_vectors)
{
	static const uint8_t abc[SHA256_LEN] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41,
		0x40, 0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3,
		0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00,
		0x15, 0xad };
	static const uint8_t two_blocks[SHA256_LEN] = {
		0x24, 0x8d, 0x6a, 0x61, 0xd2, 0x06, 0x38, 0xb8, 0xe5, 0xc0,
		0x26, 0x93, 0x0c, 0x3e, 0x60, 0x39, 0xa3, 0x3c, 0xe4, 0x59,
		0x64, 0xff, 0x21, 0x67, 0xf6, 0xec, 0xed, 0xd4, 0x19, 0xdb,
		0x06, 0xc1 };
	uint8_t out[SHA256_LEN];
	const char *s = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	sha256("abc", 3, out);
	ck_assert_mem_eq(out, abc, SHA256_LEN);
	sha256(s, strlen(s), out);
	ck_assert_mem_eq(out, two_blocks, SHA256_LEN);
}
END_TEST

START_TEST(session_cancel_marks_only_the_named_call)
{
	struct session s;
	struct inflight a, b;

	session_init(&s, NULL);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	strcpy(a.key, "i:1");
	strcpy(b.key, "s:1");
	ck_assert_int_eq(session_begin(&s, &a), 0);
	ck_assert_int_eq(session_begin(&s, &b), 0);
	session_cancel(&s, "i:1");
	ck_assert(session_end(&s, &a));
	ck_assert(!session_end(&s, &b));
	session_fini(&s);
}
END_TEST

/* A task's work that ends with a result of `len` bytes and its NUL, the
 * rest never touched: the store only counts them, so a large one costs
 * little memory until a view copies it. */
struct sized_result {
	size_t len;
};

static void
finish_sized(void *arg, struct task *t)
{
	const struct sized_result *r = arg;
	char *payload = malloc(r->len + 1);

	ck_assert_ptr_nonnull(payload);
	payload[r->len] = '\0';
	(void)task_finish(t, payload, r->len, false, false, NULL);
}

static void
no_op(void *arg)
{
	(void)arg;
}

static enum task_status
run_sized(struct tasks *ts, size_t len, struct task_view *v)
{
	struct sized_result r = { len };
	struct task_work w = { finish_sized, no_op, no_op, &r };
	struct task_view made;
	char err[256];

	ck_assert_int_eq(tasks_create(ts, "stdio", 60000, &w, &made, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(tasks_wait(ts, "stdio", made.id, NULL, NULL, v),
	    TASKS_OK);
	task_view_fini(&made);
	return v->status;
}

START_TEST(tasks_result_past_the_bytes_held_ends_failed)
{
	struct tasks *ts = tasks_new();
	struct task_view first, second;
	size_t most = MCP_TASKS_RESULT_BYTES / 4 * 3;

	ck_assert_ptr_nonnull(ts);
	/* Three quarters of the cap is held; another half is past it. */
	ck_assert_int_eq(run_sized(ts, most, &first), TASK_COMPLETED);
	ck_assert_uint_eq(first.payload_len, most);
	ck_assert_int_eq(run_sized(ts, MCP_TASKS_RESULT_BYTES / 2, &second),
	    TASK_FAILED);
	ck_assert_str_eq(second.message, "its result was too large to hold");
	ck_assert_ptr_nonnull(second.payload);
	ck_assert_str_eq(second.payload, "{\"code\":-32603,\"message\":"
	    "\"Internal error: the task's result (134217728 bytes) is more "
	    "than the server may still hold (MCP_TASKS_RESULT_BYTES, 256 MiB, "
	    "for all tasks); the files it made are in the workspace\"}");
	task_view_fini(&first);
	task_view_fini(&second);
	tasks_free(ts);
}
END_TEST

static Suite *
server_suite(void)
{
	Suite *s = suite_create("server");
	TCase *tc = tcase_create("jsonrpc");

	tcase_add_test(tc, jsonrpc_classifies_requests_notifications_responses);
	tcase_add_test(tc, jsonrpc_rejects_bad_envelopes_with_exact_codes);
	tcase_add_test(tc, jsonrpc_caps_depth_and_id_length);
	tcase_add_test(tc, jsonrpc_maps_every_error_to_its_code);
	suite_add_tcase(s, tc);
	tc = tcase_create("sha256");
	tcase_add_test(tc, sha256_matches_fips_vectors);
	suite_add_tcase(s, tc);
	tc = tcase_create("session");
	tcase_add_test(tc, session_cancel_marks_only_the_named_call);
	suite_add_tcase(s, tc);
	tc = tcase_create("tasks");
	tcase_add_test(tc, tasks_result_past_the_bytes_held_ends_failed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(server_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
