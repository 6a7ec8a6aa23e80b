/*
 * Unit tests of the HTTP session table (transport/http_session.c): ids,
 * binding to the creating token, the per-session call cap, the session
 * cap, idle expiry (by ageing last_used, so no test waits 30 minutes),
 * DELETE, and the workspace of each session going with it.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_internal.h"
#include "workspace.h"

static const uint8_t alice[SHA256_LEN] = { 1 };
static const uint8_t bob[SHA256_LEN] = { 2 };

struct fixture {
	struct http_metrics m;
	struct http_sessions t;
};

static void
fx_init(struct fixture *fx)
{
	memset(&fx->m, 0, sizeof(fx->m));
	http_sessions_init(&fx->t, NULL, (uid_t)-1, &fx->m);
}

static bool
is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Makes s look unused for longer than the idle time. */
static void
age(struct http_sessions *t, struct http_session *s)
{
	(void)pthread_mutex_lock(&t->lock);
	s->last_used.tv_sec -= MCP_HTTP_SESSION_IDLE_S + 1;
	(void)pthread_mutex_unlock(&t->lock);
}

static struct http_session *
create(struct fixture *fx, const uint8_t *who)
{
	struct http_session *s = NULL;

	ck_assert_int_eq(http_session_create(&fx->t, who, &s), HTTP_SESS_OK);
	http_session_release(&fx->t, s);	/* as after initialize */
	return s;
}

START_TEST(session_ids_are_hex_and_distinct)
{
	struct fixture fx;
	struct http_session *a, *b;
	size_t i;

	fx_init(&fx);
	a = create(&fx, alice);
	b = create(&fx, alice);
	ck_assert_uint_eq(strlen(a->id), 2 * MCP_HTTP_SESSION_ID_BYTES);
	for (i = 0; a->id[i] != '\0'; i++)
		ck_assert(strchr("0123456789abcdef", a->id[i]) != NULL);
	ck_assert_str_ne(a->id, b->id);
	ck_assert_str_ne(a->ws->path, b->ws->path);
	ck_assert_str_eq(a->sess.workspace, a->ws->path);
	ck_assert_uint_eq(http_sessions_count(&fx.t), 2);
	http_sessions_fini(&fx.t);
}
END_TEST

START_TEST(a_session_is_found_only_by_its_principal)
{
	struct fixture fx;
	struct http_session *s, *got = NULL;
	char id[sizeof(s->id)];

	fx_init(&fx);
	s = create(&fx, alice);
	memcpy(id, s->id, sizeof(id));
	ck_assert_int_eq(http_session_acquire(&fx.t, id, bob, &got),
	    HTTP_SESS_UNKNOWN);
	ck_assert_int_eq(http_session_acquire(&fx.t, "0123", alice, &got),
	    HTTP_SESS_UNKNOWN);
	ck_assert_int_eq(http_session_acquire(&fx.t, id, alice, &got),
	    HTTP_SESS_OK);
	ck_assert_ptr_eq(got, s);
	http_session_release(&fx.t, got);
	ck_assert_int_eq(http_session_delete(&fx.t, id, bob),
	    HTTP_SESS_UNKNOWN);
	ck_assert_uint_eq(http_sessions_count(&fx.t), 1);
	http_sessions_fini(&fx.t);
}
END_TEST

START_TEST(calls_per_session_are_capped)
{
	struct fixture fx;
	struct http_session *s, *got[MCP_HTTP_MAX_SESSION_CALLS], *extra;
	int i;

	fx_init(&fx);
	s = create(&fx, alice);
	for (i = 0; i < MCP_HTTP_MAX_SESSION_CALLS; i++)
		ck_assert_int_eq(http_session_acquire(&fx.t, s->id, alice,
		    &got[i]), HTTP_SESS_OK);
	ck_assert_int_eq(http_session_acquire(&fx.t, s->id, alice, &extra),
	    HTTP_SESS_BUSY);
	http_session_release(&fx.t, got[0]);
	ck_assert_int_eq(http_session_acquire(&fx.t, s->id, alice, &got[0]),
	    HTTP_SESS_OK);
	for (i = 0; i < MCP_HTTP_MAX_SESSION_CALLS; i++)
		http_session_release(&fx.t, got[i]);
	http_sessions_fini(&fx.t);
}
END_TEST

START_TEST(idle_sessions_expire_with_their_workspace)
{
	struct fixture fx;
	struct http_session *s, *keep, *got;
	char id[sizeof(s->id)], ws[4096];

	fx_init(&fx);
	s = create(&fx, alice);
	keep = create(&fx, alice);
	memcpy(id, s->id, sizeof(id));
	(void)snprintf(ws, sizeof(ws), "%s", s->ws->path);
	ck_assert(is_dir(ws));
	age(&fx.t, s);
	http_sessions_sweep(&fx.t);
	ck_assert_uint_eq(http_sessions_count(&fx.t), 1);
	ck_assert(!is_dir(ws));
	ck_assert_uint_eq(atomic_load(&fx.m.sessions_expired), 1);
	ck_assert_int_eq(http_session_acquire(&fx.t, id, alice, &got),
	    HTTP_SESS_UNKNOWN);
	ck_assert_int_eq(http_session_acquire(&fx.t, keep->id, alice, &got),
	    HTTP_SESS_OK);
	http_session_release(&fx.t, got);
	http_sessions_fini(&fx.t);
}
END_TEST

START_TEST(a_session_with_a_call_in_flight_does_not_expire)
{
	struct fixture fx;
	struct http_session *s, *got;

	fx_init(&fx);
	s = create(&fx, alice);
	ck_assert_int_eq(http_session_acquire(&fx.t, s->id, alice, &got),
	    HTTP_SESS_OK);
	age(&fx.t, s);
	http_sessions_sweep(&fx.t);
	ck_assert_uint_eq(http_sessions_count(&fx.t), 1);
	http_session_release(&fx.t, got);
	/* the end of the call counts as use */
	http_sessions_sweep(&fx.t);
	ck_assert_uint_eq(http_sessions_count(&fx.t), 1);
	age(&fx.t, s);
	http_sessions_sweep(&fx.t);
	ck_assert_uint_eq(http_sessions_count(&fx.t), 0);
	http_sessions_fini(&fx.t);
}
END_TEST

/* With calls running in every session nothing can give way: 503. */
START_TEST(the_session_cap_holds_while_every_session_is_busy)
{
	struct fixture fx;
	struct http_session *all[MCP_HTTP_MAX_SESSIONS], *s = NULL;
	char id7[2 * MCP_HTTP_SESSION_ID_BYTES + 1];
	int i;

	fx_init(&fx);
	for (i = 0; i < MCP_HTTP_MAX_SESSIONS; i++)	/* each still active */
		ck_assert_int_eq(http_session_create(&fx.t, alice, &all[i]),
		    HTTP_SESS_OK);
	ck_assert_int_eq(http_session_create(&fx.t, alice, &s),
	    HTTP_SESS_FULL);
	ck_assert_uint_eq(http_sessions_count(&fx.t), MCP_HTTP_MAX_SESSIONS);
	/* one call ends: that session is idle and gives way */
	http_session_release(&fx.t, all[7]);
	(void)snprintf(id7, sizeof(id7), "%s", all[7]->id);
	ck_assert_int_eq(http_session_create(&fx.t, alice, &s), HTTP_SESS_OK);
	http_session_release(&fx.t, s);
	ck_assert_int_eq(http_session_acquire(&fx.t, id7, alice, &s),
	    HTTP_SESS_UNKNOWN);
	ck_assert_uint_eq(http_sessions_count(&fx.t), MCP_HTTP_MAX_SESSIONS);
	for (i = 0; i < MCP_HTTP_MAX_SESSIONS; i++)
		if (i != 7)
			http_session_release(&fx.t, all[i]);
	http_sessions_fini(&fx.t);
}
END_TEST

/*
 * Two principals share the cap equally. Alice at her share loses her own
 * oldest idle session, never Bob's; Bob can still start sessions; Alice
 * with every session busy gets 503 while Bob's share is free.
 */
START_TEST(each_principal_has_its_share)
{
	struct fixture fx;
	struct http_session *a[MCP_HTTP_MAX_SESSIONS], *s = NULL;
	char ids[MCP_HTTP_MAX_SESSIONS][2 * MCP_HTTP_SESSION_ID_BYTES + 1];
	char bid[2 * MCP_HTTP_SESSION_ID_BYTES + 1];
	size_t share = MCP_HTTP_MAX_SESSIONS / 2;
	size_t i;

	fx_init(&fx);
	http_sessions_set_principals(&fx.t, 2);
	memcpy(bid, create(&fx, bob)->id, sizeof(bid));
	/* ids copied at once: an evicted session is freed */
	for (i = 0; i < MCP_HTTP_MAX_SESSIONS; i++)
		memcpy(ids[i], create(&fx, alice)->id, sizeof(ids[i]));
	ck_assert_uint_eq(http_sessions_count(&fx.t), share + 1);
	/* the oldest of Alice's went, in order; Bob's stayed */
	for (i = 0; i < MCP_HTTP_MAX_SESSIONS - share; i++)
		ck_assert_int_eq(http_session_acquire(&fx.t, ids[i], alice,
		    &s), HTTP_SESS_UNKNOWN);
	ck_assert_int_eq(http_session_acquire(&fx.t, ids[i], alice, &s),
	    HTTP_SESS_OK);
	http_session_release(&fx.t, s);
	ck_assert_int_eq(http_session_acquire(&fx.t, bid, bob, &s),
	    HTTP_SESS_OK);
	http_session_release(&fx.t, s);
	ck_assert_uint_eq(atomic_load(&fx.m.sessions_evicted),
	    MCP_HTTP_MAX_SESSIONS - share);
	/* Alice's sessions all busy: her next is refused, Bob's is not */
	for (i = MCP_HTTP_MAX_SESSIONS - share; i < MCP_HTTP_MAX_SESSIONS; i++)
		ck_assert_int_eq(http_session_acquire(&fx.t, ids[i], alice,
		    &a[i]), HTTP_SESS_OK);
	ck_assert_int_eq(http_session_create(&fx.t, alice, &s),
	    HTTP_SESS_FULL);
	(void)create(&fx, bob);
	for (i = MCP_HTTP_MAX_SESSIONS - share; i < MCP_HTTP_MAX_SESSIONS; i++)
		http_session_release(&fx.t, a[i]);
	http_sessions_fini(&fx.t);
}
END_TEST

START_TEST(delete_ends_the_session_and_removes_its_workspace)
{
	struct fixture fx;
	struct http_session *s, *got;
	char id[sizeof(s->id)], ws[4096];

	fx_init(&fx);
	s = create(&fx, alice);
	memcpy(id, s->id, sizeof(id));
	(void)snprintf(ws, sizeof(ws), "%s", s->ws->path);
	ck_assert_int_eq(http_session_delete(&fx.t, id, alice), HTTP_SESS_OK);
	ck_assert(!is_dir(ws));
	ck_assert_int_eq(http_session_delete(&fx.t, id, alice),
	    HTTP_SESS_UNKNOWN);
	ck_assert_int_eq(http_session_acquire(&fx.t, id, alice, &got),
	    HTTP_SESS_UNKNOWN);
	ck_assert_uint_eq(atomic_load(&fx.m.sessions_deleted), 1);
	http_sessions_fini(&fx.t);
}
END_TEST

START_TEST(a_workspace_outlives_delete_while_a_call_holds_it)
{
	struct fixture fx;
	struct http_session *s, *got;
	char ws[4096];

	fx_init(&fx);
	s = create(&fx, alice);
	ck_assert_int_eq(http_session_acquire(&fx.t, s->id, alice, &got),
	    HTTP_SESS_OK);
	(void)snprintf(ws, sizeof(ws), "%s", s->ws->path);
	ck_assert_int_eq(http_session_delete(&fx.t, s->id, alice),
	    HTTP_SESS_OK);
	ck_assert(is_dir(ws));		/* the call still runs in it */
	http_session_release(&fx.t, got);
	ck_assert(!is_dir(ws));
	http_sessions_fini(&fx.t);
}
END_TEST

static Suite *
session_suite(void)
{
	Suite *s = suite_create("http_session");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, session_ids_are_hex_and_distinct);
	tcase_add_test(tc, a_session_is_found_only_by_its_principal);
	tcase_add_test(tc, calls_per_session_are_capped);
	tcase_add_test(tc, idle_sessions_expire_with_their_workspace);
	tcase_add_test(tc, a_session_with_a_call_in_flight_does_not_expire);
	tcase_add_test(tc, the_session_cap_holds_while_every_session_is_busy);
	tcase_add_test(tc, each_principal_has_its_share);
	tcase_add_test(tc, delete_ends_the_session_and_removes_its_workspace);
	tcase_add_test(tc, a_workspace_outlives_delete_while_a_call_holds_it);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(session_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
