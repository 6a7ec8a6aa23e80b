/*
 * Unit tests of a session call's framing (tools/repl_driver.h): what a
 * driver writes, cut into reads at every place, gives exactly the call's
 * output, its status, and "done" only once both streams have ended it;
 * what comes before the first boundary is dropped (kept only on a
 * session's first call), text that looks like the start of a boundary is
 * output like any other, and a stream past its cap is counted whole.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "repl_driver.h"

/* A frame and two capped outputs (the caps of a run's streams). */
struct fx {
	struct repl_frame f;
	struct sb_output out, err;
};

static void
fx_init(struct fx *x, bool first, size_t cap)
{
	ck_assert_int_eq(repl_frame_init(&x->f, "print(1)", first), 0);
	ck_assert_uint_eq(strlen(x->f.b), REPL_BOUNDARY_LEN);
	ck_assert(strncmp(x->f.b, REPL_BOUNDARY_PREFIX,
	    strlen(REPL_BOUNDARY_PREFIX)) == 0);
	memset(&x->out, 0, sizeof(x->out));
	memset(&x->err, 0, sizeof(x->err));
	x->out.data = calloc(1, cap + 1);
	x->err.data = calloc(1, cap + 1);
	x->out.cap = x->err.cap = cap;
}

static void
fx_fini(struct fx *x)
{
	repl_frame_fini(&x->f);
	free(x->out.data);
	free(x->err.data);
}

/* Feeds text to stream in pieces of at most step bytes, the first cut at
 * first_cut; true when the frame said done, and only at the very end. */
static bool
feed(struct fx *x, int stream, const char *text, size_t first_cut,
    size_t step)
{
	size_t len = strlen(text), off = 0, k;
	bool done = false;

	while (off < len) {
		k = off == 0 ? first_cut : step;
		if (k == 0 || k > len - off)
			k = len - off;
		ck_assert_msg(!done, "done before the stream's end");
		done = repl_frame_sink(&x->f, stream, text + off, k,
		    stream == 1 ? &x->out : &x->err);
		off += k;
	}
	return done;
}

static char *
framed(const char *b, const char *before, const char *body,
    const char *tail)
{
	size_t n = strlen(before) + strlen(body) + strlen(tail) +
	    2 * strlen(b) + 1;
	char *s = malloc(n);

	ck_assert_ptr_nonnull(s);
	(void)snprintf(s, n, "%s%s%s%s%s", before, b, body, b, tail);
	return s;
}

/* Every cut of both streams into two reads, then byte by byte. */
START_TEST(every_cut_gives_the_same_output_and_status)
{
	size_t cut, len;

	for (cut = 0;; cut++) {
		struct fx x;
		char *o, *e;
		bool d1, d2;

		fx_init(&x, false, 4096);
		o = framed(x.f.b, "left over\n", "out: \x1emcp-sandbox-t\n",
		    "130\n");
		e = framed(x.f.b, "", "Traceback ...\n", "");
		len = strlen(o);
		if (cut > len)
			cut = len;
		d1 = feed(&x, 1, o, cut, cut == len ? 1 : len);
		ck_assert(!d1);	/* stderr has not ended yet */
		d2 = feed(&x, 2, e, cut % (strlen(e) + 1), 1);
		ck_assert(d2);
		ck_assert_uint_eq(x.out.len, strlen("out: \x1emcp-sandbox-t\n"));
		ck_assert_mem_eq(x.out.data, "out: \x1emcp-sandbox-t\n",
		    x.out.len);
		ck_assert_uint_eq(x.err.len, strlen("Traceback ...\n"));
		ck_assert_mem_eq(x.err.data, "Traceback ...\n", x.err.len);
		x.f.status[x.f.status_len] = '\0';
		ck_assert_str_eq(x.f.status, "130");
		free(o);
		free(e);
		fx_fini(&x);
		if (cut == len)
			break;
	}
}
END_TEST

/* A boundary's own first bytes, then more: output, never held back. */
START_TEST(a_near_boundary_is_output)
{
	struct fx x;
	char near[REPL_BOUNDARY_LEN + 8], *o;

	fx_init(&x, false, 4096);
	memcpy(near, x.f.b, REPL_BOUNDARY_LEN - 1);
	near[REPL_BOUNDARY_LEN - 1] = x.f.b[REPL_BOUNDARY_LEN - 1] == 'f' ?
	    'e' : 'f';
	memcpy(near + REPL_BOUNDARY_LEN, "!", 2);
	o = framed(x.f.b, "", near, "0\n");
	ck_assert(!feed(&x, 1, o, 7, 3));
	ck_assert_uint_eq(x.out.len, strlen(near));
	ck_assert_mem_eq(x.out.data, near, x.out.len);
	free(o);
	fx_fini(&x);
}
END_TEST

/* Before the first boundary: dropped, but kept on a first call. */
START_TEST(what_comes_before_is_dropped_but_on_a_first_call)
{
	int first;

	for (first = 0; first <= 1; first++) {
		struct fx x;
		char *o, *e;

		fx_init(&x, first == 1, 4096);
		o = framed(x.f.b, "", "", "0\n");
		e = framed(x.f.b, "ModuleNotFoundError\n", "", "");
		(void)feed(&x, 1, o, 0, 0);
		ck_assert(feed(&x, 2, e, 0, 0));
		ck_assert_uint_eq(x.out.len, 0);
		if (first)
			ck_assert_mem_eq(x.err.data, "ModuleNotFoundError\n",
			    x.err.len);
		else
			ck_assert_uint_eq(x.err.len, 0);
		free(o);
		free(e);
		fx_fini(&x);
	}
}
END_TEST

/* Past the cap: the rest counted, the boundary still found. */
START_TEST(past_the_cap_the_stream_is_counted_and_ends)
{
	struct fx x;
	char *big, *o;
	size_t n = 3 * REPL_PIECE + 17;

	fx_init(&x, false, 100);
	big = malloc(n + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, 'a', n);
	big[n] = '\0';
	o = framed(x.f.b, "", big, "0\n");
	(void)feed(&x, 1, o, REPL_PIECE + 5, 2 * REPL_PIECE + 1);
	ck_assert_uint_eq(x.out.len, 100);
	ck_assert_uint_eq(x.out.total, n);
	ck_assert(x.out.truncated);
	x.f.status[x.f.status_len] = '\0';
	ck_assert_str_eq(x.f.status, "0");
	free(o);
	free(big);
	fx_fini(&x);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("tools_repl");
	TCase *tc = tcase_create("frame");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, every_cut_gives_the_same_output_and_status);
	tcase_add_test(tc, a_near_boundary_is_output);
	tcase_add_test(tc, what_comes_before_is_dropped_but_on_a_first_call);
	tcase_add_test(tc, past_the_cap_the_stream_is_counted_and_ends);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
