/*
 * Unit tests of rendering: UTF-8 checks and cuts, replacement of
 * ill-formed bytes, base64 both ways.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <json-c/json.h>

#include "render.h"

START_TEST(utf8_validity_follows_the_standard)
{
	ck_assert(render_utf8_valid("abc", 3));
	ck_assert(render_utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9));
	ck_assert(render_utf8_valid("a\0b", 3));
	ck_assert(!render_utf8_valid("\xc0\xaf", 2));		/* overlong */
	ck_assert(!render_utf8_valid("\xed\xa0\x80", 3));	/* surrogate */
	ck_assert(!render_utf8_valid("\xf4\x90\x80\x80", 4));	/* > U+10FFFF */
	ck_assert(!render_utf8_valid("\xff", 1));
	ck_assert(!render_utf8_valid("\xc3", 1));		/* cut */
	ck_assert(render_is_binary("a\0b", 3));
	ck_assert(!render_is_binary("text\n", 5));
}
END_TEST

START_TEST(utf8_cut_keeps_whole_characters)
{
	ck_assert_uint_eq(render_utf8_cut("a\xc3\xa9", 3), 3);
	ck_assert_uint_eq(render_utf8_cut("a\xc3", 2), 1);
	ck_assert_uint_eq(render_utf8_cut("a\xe2\x82", 3), 1);
	ck_assert_uint_eq(render_utf8_cut("a\xf0\x9f\x98", 4), 1);
	ck_assert_uint_eq(render_utf8_cut("ab\xff", 3), 3);	/* not a lead */
	ck_assert_uint_eq(render_utf8_cut("", 0), 0);
}
END_TEST

START_TEST(ill_formed_bytes_become_replacement_characters)
{
	size_t bad = 0;
	struct json_object *s = render_string("a\xff" "b\xc3", 4, &bad);

	ck_assert_str_eq(json_object_get_string(s),
	    "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	ck_assert_uint_eq(bad, 2);
	json_object_put(s);
}
END_TEST

/* The decoder of the documented scheme (render.h, render_text_bytes). */
static size_t
unescape(const char *t, char *out)
{
	size_t w = 0;
	unsigned v;

	while (*t != '\0') {
		if (t[0] == '\\' && t[1] == '\\') {
			out[w++] = '\\';
			t += 2;
		} else if (t[0] == '\\' && t[1] == 'x' &&
		    sscanf(t + 2, "%2x", &v) == 1 && isxdigit((unsigned char)t[2])
		    && isxdigit((unsigned char)t[3])) {
			out[w++] = (char)v;
			t += 4;
		} else {
			out[w++] = *t++;
		}
	}
	return w;
}

START_TEST(text_rendering_keeps_every_byte)
{
	static const struct { const char *in; size_t len; const char *out; }
	    cases[] = {
		{ "a\0b", 3, "a\\x00b" },
		{ "tab\tnl\ncr\r", 10, "tab\tnl\ncr\r" },
		{ "\x1b[31mred\x7f", 9, "\\x1b[31mred\\x7f" },
		{ "caf\xc3\xa9 \xff\xc3", 8, "caf\xc3\xa9 \\xff\\xc3" },
		{ "C:\\dir\\\\x", 9, "C:\\dir\\\\\\x" },
		{ "\\x41 \\xZ1 \\", 11, "\\\\x41 \\xZ1 \\" },
	};
	char *t, back[64];
	unsigned char buf[512];
	size_t i, n, esc;
	unsigned seed = 10;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = render_text_bytes(cases[i].in, cases[i].len, NULL);
		ck_assert_str_eq(t, cases[i].out);
		n = unescape(t, back);
		ck_assert_uint_eq(n, cases[i].len);
		ck_assert_int_eq(memcmp(back, cases[i].in, n), 0);
		free(t);
	}
	/* any bytes at all decode back exactly (backslashes, x, hex digits
	 * and NULs made frequent) */
	for (i = 0; i < 2000; i++) {
		static const char alpha[] = "\\x0aF\0\xc3\xa9\xff\n";
		char *dec;

		for (n = 0; n < sizeof(buf); n++) {
			seed = seed * 1103515245 + 12345;
			buf[n] = (seed >> 16) % 3 == 0 ? (unsigned char)(seed >> 8) :
			    (unsigned char)alpha[(seed >> 20) % (sizeof(alpha) - 1)];
		}
		t = render_text_bytes((const char *)buf, sizeof(buf), &esc);
		ck_assert_ptr_nonnull(t);
		ck_assert_ptr_nonnull(dec = malloc(strlen(t) + 1));
		ck_assert_uint_eq(unescape(t, dec), sizeof(buf));
		ck_assert_int_eq(memcmp(dec, buf, sizeof(buf)), 0);
		free(dec);
		free(t);
	}
}
END_TEST

/*
 * A name on one line of the server's text: what render_text_bytes escapes,
 * and tab, newline, carriage return, the C1 controls and U+2028/U+2029 too
 * (they break or steer lines), in the same reversible scheme.
 */
START_TEST(names_render_on_one_line_and_decode_back)
{
	static const struct { const char *in; size_t len; const char *out;
	    bool plain; } cases[] = {
		{ "plain/caf\xc3\xa9.txt", 15, "plain/caf\xc3\xa9.txt", true },
		{ "a\n- b (1 bytes)", 15, "a\\x0a- b (1 bytes)", false },
		{ "t\tc\rd", 5, "t\\x09c\\x0dd", false },
		{ "\x1b[2J\x7f", 5, "\\x1b[2J\\x7f", false },
		{ "c1\xc2\x9b\xc2\x85", 6, "c1\\xc2\\x9b\\xc2\\x85", false },
		{ "ls\xe2\x80\xa8ps\xe2\x80\xa9", 10,
		    "ls\\xe2\\x80\\xa8ps\\xe2\\x80\\xa9", false },
		{ "bad\xff\xc3", 5, "bad\\xff\\xc3", false },
		{ "back\\x41", 8, "back\\\\x41", true },
		{ "win\\dir", 7, "win\\dir", true },
	};
	char *t, back[64];
	unsigned char buf[512];
	size_t i, n;
	unsigned seed = 7;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = render_name_text(cases[i].in, cases[i].len);
		ck_assert_ptr_nonnull(t);
		ck_assert_str_eq(t, cases[i].out);
		n = unescape(t, back);
		ck_assert_uint_eq(n, cases[i].len);
		ck_assert_int_eq(memcmp(back, cases[i].in, n), 0);
		ck_assert(render_name_plain(cases[i].in, cases[i].len) ==
		    cases[i].plain);
		free(t);
	}
	for (i = 0; i < 2000; i++) {
		static const char alpha[] =
		    "\\x0aF\t\xc2\x9b\xe2\x80\xa8\xff\n";
		const unsigned char *u;
		char *dec;

		for (n = 0; n < sizeof(buf); n++) {
			seed = seed * 1103515245 + 12345;
			buf[n] = (seed >> 16) % 3 == 0 ?
			    (unsigned char)((seed >> 8) | 1) :
			    (unsigned char)alpha[(seed >> 20) %
			    (sizeof(alpha) - 1)];
		}
		t = render_name_text((const char *)buf, sizeof(buf));
		ck_assert_ptr_nonnull(t);
		/* one line of well-formed UTF-8 without controls */
		ck_assert(render_utf8_valid(t, strlen(t)));
		/* one check a buffer: check's asserts each cost a write */
		for (u = (const unsigned char *)t; *u != '\0'; u++)
			if (*u < 0x20 || *u == 0x7f || (u[0] == 0xc2 &&
			    u[1] >= 0x80 && u[1] <= 0x9f) || (u[0] == 0xe2 &&
			    u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)))
				break;
		ck_assert_uint_eq(*u, 0);
		ck_assert_ptr_nonnull(dec = malloc(strlen(t) + 1));
		ck_assert_uint_eq(unescape(t, dec), sizeof(buf));
		ck_assert_int_eq(memcmp(dec, buf, sizeof(buf)), 0);
		free(dec);
		free(t);
	}
}
END_TEST

START_TEST(base64_round_trips)
{
	static const char *const enc[] = { "", "Zg==", "Zm8=", "Zm9v",
	    "Zm9vYg==" };
	static const char *const dec[] = { "", "f", "fo", "foo", "foob" };
	size_t i, n;

	for (i = 0; i < 5; i++) {
		char *e = render_base64(dec[i], strlen(dec[i]));
		char *d = render_base64_decode(enc[i], strlen(enc[i]), &n);

		ck_assert_str_eq(e, enc[i]);
		ck_assert_ptr_nonnull(d);
		ck_assert_uint_eq(n, strlen(dec[i]));
		ck_assert_int_eq(memcmp(d, dec[i], n), 0);
		free(e);
		free(d);
	}
	ck_assert_ptr_null(render_base64_decode("Zm9v!", 5, &n));
	ck_assert_ptr_null(render_base64_decode("Z", 1, &n));
	ck_assert_ptr_null(render_base64_decode("Zg===", 5, &n));
}
END_TEST

static Suite *
render_suite(void)
{
	Suite *s = suite_create("tools_render");
	TCase *tc = tcase_create("render");

	tcase_add_test(tc, utf8_validity_follows_the_standard);
	tcase_add_test(tc, utf8_cut_keeps_whole_characters);
	tcase_add_test(tc, ill_formed_bytes_become_replacement_characters);
	tcase_add_test(tc, text_rendering_keeps_every_byte);
	tcase_add_test(tc, names_render_on_one_line_and_decode_back);
	tcase_add_test(tc, base64_round_trips);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(render_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
