/*
 * The requestState of 2026-07-28 approvals (server/approval_state.c): a
 * state opens only with its own key, for its owner, tool and arguments
 * (in any member order), before its expiry; every altered byte of it is
 * refused.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "approval_state.h"

static const uint8_t key[SHA256_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t other_key[SHA256_LEN] = { 9 };

static struct json_object *
args(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	ck_assert_ptr_nonnull(o);
	return o;
}

static char *
made(struct json_object *a)
{
	struct tool_ask ask;
	char *s;

	memset(&ask, 0, sizeof(ask));
	ask.ndomains = 2;
	strcpy(ask.domains[0], "files.pythonhosted.org");
	strcpy(ask.domains[1], "b.test:8443");
	ask.timeout_ms = 90000;
	s = approval_state_make(key, "p:alice", "run_code", a, &ask, 5000);
	ck_assert_ptr_nonnull(s);
	return s;
}

START_TEST(a_state_opens_for_its_own_call)
{
	struct json_object *a = args("{\"code\":\"x\",\"allow_domains\":"
	    "[\"b.test:8443\"],\"n\":{\"z\":1,\"a\":[true,null]}}");
	struct json_object *same = args("{\"n\":{\"a\":[true,null],\"z\":1},"
	    "\"allow_domains\":[\"b.test:8443\"],\"code\":\"x\"}");
	struct approval_state st;
	char *s = made(a);

	ck_assert_ptr_null(approval_state_open(key, s, "p:alice", "run_code",
	    a, 4999, &st));
	ck_assert_uint_eq(st.asked.ndomains, 2);
	ck_assert_str_eq(st.asked.domains[1], "b.test:8443");
	ck_assert_uint_eq(st.asked.timeout_ms, 90000);
	ck_assert_uint_eq(st.expires_ms, 5000);
	ck_assert_ptr_null(approval_state_open(key, s, "p:alice", "run_code",
	    same, 4999, &st));
	free(s);
	json_object_put(a);
	json_object_put(same);
}
END_TEST

START_TEST(a_state_refuses_every_other_call)
{
	struct json_object *a = args("{\"code\":\"x\"}");
	struct json_object *b = args("{\"code\":\"y\"}");
	struct approval_state st;
	char *s = made(a);

	ck_assert_str_eq(approval_state_open(key, s, "p:alice", "run_code", a,
	    5000, &st), "it expired (limits.ask_wait_ms): call again without "
	    "it");
	ck_assert_str_eq(approval_state_open(key, s, "p:bob", "run_code", a,
	    1, &st), "it was issued to another principal");
	ck_assert_ptr_nonnull(strstr(approval_state_open(key, s, "p:alice",
	    "run_command", a, 1, &st), "another tool or other arguments"));
	ck_assert_ptr_nonnull(strstr(approval_state_open(key, s, "p:alice",
	    "run_code", b, 1, &st), "another tool or other arguments"));
	ck_assert_ptr_nonnull(strstr(approval_state_open(other_key, s,
	    "p:alice", "run_code", a, 1, &st), "signature does not match"));
	free(s);
	/* the payload of a state, sealed for another purpose (a fixture's):
	 * never a state */
	s = approval_seal(key, "fixture", "{\"d\":[],\"v\":1,\"n\":"
	    "\"00112233445566778899aabbccddeeff\",\"e\":9,\"o\":"
	    "\"p:alice\",\"t\":\"run_code\",\"a\":\"x\"}", 96);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(approval_state_open(key, s, "p:alice",
	    "run_code", a, 1, &st), "signature does not match"));
	free(s);
	json_object_put(a);
	json_object_put(b);
}
END_TEST

/* Each byte replaced by another base64url character: never accepted. */
START_TEST(every_altered_byte_is_refused)
{
	static const char alphabet[] = "ABab09-_";
	struct json_object *a = args("{\"code\":\"x\"}");
	struct approval_state st;
	char *s = made(a), *t;
	size_t i, j, len = strlen(s);

	t = strdup(s);
	for (i = 0; i < len; i++) {
		if (s[i] == '.')
			continue;
		for (j = 0; alphabet[j] != '\0'; j++) {
			if (alphabet[j] == s[i])
				continue;
			t[i] = alphabet[j];
			ck_assert_msg(approval_state_open(key, t, "p:alice",
			    "run_code", a, 1, &st) != NULL, "byte %zu", i);
		}
		t[i] = s[i];
	}
	ck_assert_ptr_nonnull(approval_state_open(key, "", "p:alice",
	    "run_code", a, 1, &st));
	ck_assert_ptr_nonnull(approval_state_open(key, "a.b.c", "p:alice",
	    "run_code", a, 1, &st));
	free(t);
	free(s);
	json_object_put(a);
}
END_TEST

/* RFC 4231's vectors use other key lengths; ours is always 32 bytes, so
 * the check is against a digest computed independently: python3's
 * hmac.new(key, msg, hashlib.sha256) with the same key and message. */
START_TEST(hmac_matches_an_independent_digest)
{
	static const uint8_t k[SHA256_LEN] = "0123456789abcdef0123456789abcde";
	static const uint8_t want[SHA256_LEN] = {
		0xce, 0x9c, 0xc0, 0xca, 0x51, 0x37, 0x86, 0xda,
		0x8d, 0x85, 0x3c, 0x16, 0x3a, 0x5d, 0xa0, 0xf7,
		0x67, 0x15, 0x48, 0x74, 0xf8, 0x90, 0xae, 0x10,
		0x36, 0xd3, 0x6c, 0x41, 0x78, 0x06, 0x9c, 0x90,
	};
	uint8_t out[SHA256_LEN];

	ck_assert_int_eq(approval_hmac(k, "what do ya want for nothing?", 28,
	    out), 0);
	ck_assert_mem_eq(out, want, SHA256_LEN);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("approval_state");
	TCase *tc = tcase_create("state");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, a_state_opens_for_its_own_call);
	tcase_add_test(tc, a_state_refuses_every_other_call);
	tcase_add_test(tc, every_altered_byte_is_refused);
	tcase_add_test(tc, hmac_matches_an_independent_digest);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
