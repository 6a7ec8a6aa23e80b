/*
 * Unit tests of the toolset's two builds (tools/registry.h): one started
 * on its own thread (a stdio server's) gives exactly the toolset built in
 * place (an HTTP server's, the tests'), and may be freed while it builds.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "policy.h"
#include "registry.h"

static struct policy *
default_policy(void)
{
	struct policy *p;
	char err[512];

	p = policy_new_default(err, sizeof(err));
	ck_assert_msg(p != NULL, "%s", err);
	ck_assert_msg(policy_finalize(p, err, sizeof(err)) == 0, "%s", err);
	return p;
}

static void
same_toolset(bool fixtures)
{
	struct policy *p = default_policy();
	struct tool_env env = { .policy = p, .fixtures = fixtures };
	struct toolset *made, *started;
	const char *a, *b;
	size_t alen, blen;
	char err[512];

	ck_assert_msg(toolset_new(&env, &made, err, sizeof(err)) == MCP_OK,
	    "%s", err);
	ck_assert_int_eq(toolset_start(&env, &started), MCP_OK);
	/* known before the build ends: what the start-up line says */
	ck_assert_uint_eq(toolset_count(started), toolset_count(made));
	ck_assert_ptr_null(toolset_error(started));
	a = toolset_list_text(made, &alen);
	b = toolset_list_text(started, &blen);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(alen, blen);
	ck_assert_mem_eq(a, b, alen);
	ck_assert_uint_eq(json_object_array_length(toolset_list(started)),
	    toolset_count(made));
	ck_assert_ptr_nonnull(toolset_lookup(started, "run_command"));
	ck_assert_ptr_nonnull(toolset_lookup(started, "run_command")->input);
	ck_assert_ptr_null(toolset_lookup(started, "no_such_tool"));
	ck_assert((toolset_lookup(started, "greet") != NULL) == fixtures);
	toolset_free(started);
	toolset_free(made);
	policy_free(p);
}

START_TEST(a_started_toolset_is_the_one_built_in_place)
{
	same_toolset(false);
}
END_TEST

START_TEST(a_started_toolset_with_fixtures_is_the_one_built_in_place)
{
	same_toolset(true);
}
END_TEST

/* A stdio client that hangs up at once: the build is waited for, and
 * nothing of it is left (LeakSanitizer in the sanitizer build). */
START_TEST(a_toolset_freed_while_it_builds_leaves_nothing)
{
	struct policy *p = default_policy();
	struct tool_env env = { .policy = p, .fixtures = true };
	struct toolset *ts;
	int i;

	for (i = 0; i < 20; i++) {
		ck_assert_int_eq(toolset_start(&env, &ts), MCP_OK);
		toolset_free(ts);
	}
	policy_free(p);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("build");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, a_started_toolset_is_the_one_built_in_place);
	tcase_add_test(tc,
	    a_started_toolset_with_fixtures_is_the_one_built_in_place);
	tcase_add_test(tc, a_toolset_freed_while_it_builds_leaves_nothing);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
