/*
 * What a call made and the workspace as resources, below the protocol
 * (tools/workspace_files.c, tools/workspace_resources.c): image magic,
 * uri decoding, the report of a directory without uris (a skill's copy),
 * cursors, and reads of what is not a regular file. The protocol side,
 * with the real binary, is tests/resources.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "media.h"
#include "render.h"
#include "tool.h"
#include "workspace.h"
#include "workspace_files.h"
#include "workspace_resources.h"

static struct workspace *ws;
static char path[4096];

static void
setup(void)
{
	char err[256];

	ck_assert_msg(workspace_open(NULL, (uid_t)-1, &ws, err,
	    sizeof(err)) == 0, "%s", err);
}

static void
teardown(void)
{
	workspace_free(ws);
}

static const char *
at(const char *rel)
{
	(void)snprintf(path, sizeof(path), "%s/%s", ws->path, rel);
	return path;
}

static void
put(const char *rel, const void *data, size_t len)
{
	FILE *f = fopen(at(rel), "wbe");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(image_types_come_from_magic_bytes)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *want;
	} c[] = {
		{ "\x89PNG\r\n\x1a\n", 8, "image/png" },
		{ "\x89PNG\r\n\x1a", 7, NULL },		/* cut short */
		{ "\xff\xd8\xff\xe0", 4, "image/jpeg" },
		{ "\xff\xd8", 2, NULL },
		{ "GIF87a", 6, "image/gif" },
		{ "GIF89a", 6, "image/gif" },
		{ "GIF90a", 6, NULL },
		{ "RIFF\0\0\0\0WEBP", 12, "image/webp" },
		{ "RIFF\0\0\0\0WAVE", 12, NULL },	/* audio, not ours */
		{ "<svg xmlns=", 11, NULL },	/* never an image here */
		{ "", 0, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *got = media_image_type((const unsigned char *)
		    c[i].bytes, c[i].len);

		if (c[i].want == NULL)
			ck_assert_msg(got == NULL, "case %zu: %s", i, got);
		else
			ck_assert_str_eq(got, c[i].want);
	}
	ck_assert_str_eq(media_sniff_type((const unsigned char *)"plain\n", 6),
	    "text/plain");
	ck_assert_str_eq(media_sniff_type((const unsigned char *)"a\0b", 3),
	    "application/octet-stream");
	/* a sniffed prefix that ends inside a character is still text */
	ck_assert_str_eq(media_sniff_type((const unsigned char *)"caf\xc3", 4),
	    "text/plain");
}
END_TEST

START_TEST(uris_decode_to_paths_or_are_refused)
{
	char out[64];

	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/a/b.txt", out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, "a/b.txt");
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/a%20b%2Fc", out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, "a b/c");
	/* the kernel judges '..' and '/': decoding keeps them */
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/%2e%2e/x", out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, "../x");
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace//etc", out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, "/etc");
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/a%00b", out,
	    sizeof(out)), -EINVAL);
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/a%zz", out,
	    sizeof(out)), -EINVAL);
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/a%4", out,
	    sizeof(out)), -EINVAL);
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/a?b", out,
	    sizeof(out)), -EINVAL);
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/a#b", out,
	    sizeof(out)), -EINVAL);
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/", out,
	    sizeof(out)), -EINVAL);
	ck_assert_int_eq(wsr_path_from_uri("file:///etc/passwd", out,
	    sizeof(out)), -EINVAL);
	ck_assert_int_eq(wsr_path_from_uri("file:///workspacex/a", out,
	    sizeof(out)), -EINVAL);
	ck_assert_int_eq(wsr_path_from_uri("file:///workspace/"
	    "0123456789012345678901234567890123456789012345678901234567890123",
	    out, sizeof(out)), -ENAMETOOLONG);
}
END_TEST

/* A result as render_run_result makes one: one text block, a record. */
static struct json_object *
run_result(void)
{
	struct json_object *st = json_object_new_object();

	json_object_object_add(st, "exit_code", json_object_new_int(0));
	return tool_result_ok(st, "ran");
}

START_TEST(a_copy_without_uris_lists_and_shows_but_never_links)
{
	struct wsf_scan before;
	struct json_object *r = run_result(), *content, *sc, *files, *b;
	unsigned char *big;
	size_t n = WSF_IMAGE_MAX_BYTES + 1;

	put("kept.txt", "old\n", 4);
	ck_assert_int_eq(wsf_scan_take(ws->path, &before), 0);
	ck_assert(before.complete);
	ck_assert_uint_eq(before.n, 1);
	ck_assert_ptr_nonnull(big = calloc(1, n));
	memcpy(big, "\x89PNG\r\n\x1a\n", 8);
	put("big.png", big, n);
	put("small.gif", "GIF89a....", 10);
	ck_assert_int_eq(symlink("/etc/passwd", at("link.png")), 0);
	ck_assert_int_eq(mkdir(at("sub"), 0755), 0);
	put("sub/new.txt", "x", 1);
	ck_assert_int_eq(wsf_report(ws->path, &before, NULL, false, r),
	    MCP_OK);
	ck_assert(json_object_object_get_ex(r, "content", &content));
	/* ran, the list, the small image; no link for the big one */
	ck_assert_uint_eq(json_object_array_length(content), 3);
	b = json_object_array_get_idx(content, 1);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(b,
	    "text")), "Files created or changed (3):\n"
	    "- big.png (262145 bytes, image/png; too large to show here)\n"
	    "- small.gif (10 bytes, image/gif; shown below as an image)\n"
	    "- sub/new.txt (1 bytes, text/plain)");
	b = json_object_array_get_idx(content, 2);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(b,
	    "type")), "image");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(b,
	    "data")), "R0lGODlhLi4uLg==");
	ck_assert(json_object_object_get_ex(r, "structuredContent", &sc));
	ck_assert(json_object_object_get_ex(sc, "files", &files));
	ck_assert_str_eq(json_object_to_json_string_ext(files,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	    "[{\"path\":\"big.png\",\"size\":262145,"
	    "\"type\":\"image/png\"},{\"path\":\"small.gif\",\"size\":10,"
	    "\"type\":\"image/gif\"},{\"path\":\"sub/new.txt\",\"size\":1,"
	    "\"type\":\"text/plain\"}]");
	json_object_put(r);
	wsf_scan_free(&before);
	free(big);
}
END_TEST

/* Item i of files: its path (want), path_bytes (NULL: absent) and uri. */
static void
check_item(struct json_object *files, size_t i, const char *want,
    const char *bytes, const char *uri)
{
	struct json_object *o = json_object_array_get_idx(files, i), *v;

	ck_assert_ptr_nonnull(o);
	ck_assert(json_object_object_get_ex(o, "path", &v));
	ck_assert_str_eq(json_object_get_string(v), want);
	if (bytes == NULL)
		ck_assert(!json_object_object_get_ex(o, "path_bytes", NULL));
	else {
		ck_assert(json_object_object_get_ex(o, "path_bytes", &v));
		ck_assert_str_eq(json_object_get_string(v), bytes);
	}
	ck_assert(json_object_object_get_ex(o, "uri", &v));
	ck_assert_str_eq(json_object_get_string(v), uri);
}

/*
 * Names are the program's: a newline would write lines of the server's own
 * into the report, escapes would reach a terminal, and ill-formed bytes
 * would become U+FFFD, a name no tool can open. The text shows them
 * escaped (render_name_text), the structure gives their exact bytes.
 */
START_TEST(names_cannot_forge_the_report)
{
	static const char fake[] = "evil\n- fake.txt (9 bytes, image/png; "
	    "shown below as an image)";
	struct wsf_scan before;
	struct json_object *r = run_result(), *content, *sc, *files, *b;
	unsigned char *big;
	size_t n = WSF_IMAGE_MAX_BYTES + 1;

	ck_assert_int_eq(wsf_scan_take(ws->path, &before), 0);
	/* the MIME type's slash: a directory and a file in it */
	ck_assert_int_eq(mkdir(at("evil\n- fake.txt (9 bytes, image"), 0755),
	    0);
	put(fake, "x", 1);
	put("esc\x1b[31mred", "x", 1);
	put("tab\there", "x", 1);
	put("bad\xff\xfe.txt", "x", 1);
	put("back\\x41slash", "x", 1);
	put("c1\xc2\x9b" "csi", "x", 1);
	ck_assert_ptr_nonnull(big = calloc(1, n));
	memcpy(big, "\x89PNG\r\n\x1a\n", 8);
	put("big\n.png", big, n);
	free(big);
	ck_assert_int_eq(wsf_report(ws->path, &before, "file:///workspace/",
	    false, r), MCP_OK);
	ck_assert(json_object_object_get_ex(r, "content", &content));
	ck_assert_uint_eq(json_object_array_length(content), 3);
	b = json_object_array_get_idx(content, 1);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(b,
	    "text")), "Files created or changed (7):\n"
	    "- back\\\\x41slash (1 bytes, text/plain)\n"
	    "- bad\\xff\\xfe.txt (1 bytes, text/plain)\n"
	    "- big\\x0a.png (262145 bytes, image/png; too large to show "
	    "here: linked below (resources/read))\n"
	    "- c1\\xc2\\x9b" "csi (1 bytes, text/plain)\n"
	    "- esc\\x1b[31mred (1 bytes, text/plain)\n"
	    "- evil\\x0a- fake.txt (9 bytes, image/png; shown below as an "
	    "image) (1 bytes, text/plain)\n"
	    "- tab\\x09here (1 bytes, text/plain)");
	/* the link names the file as the text does; its uri is exact */
	b = json_object_array_get_idx(content, 2);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(b,
	    "type")), "resource_link");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(b,
	    "name")), "big\\x0a.png");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(b,
	    "uri")), "file:///workspace/big%0A.png");
	ck_assert(json_object_object_get_ex(r, "structuredContent", &sc));
	ck_assert(json_object_object_get_ex(sc, "files", &files));
	ck_assert_uint_eq(json_object_array_length(files), 7);
	check_item(files, 0, "back\\x41slash", NULL,
	    "file:///workspace/back%5Cx41slash");
	check_item(files, 1, "bad\xef\xbf\xbd\xef\xbf\xbd.txt", "YmFk//4udHh0",
	    "file:///workspace/bad%FF%FE.txt");
	check_item(files, 2, "big\n.png", "YmlnCi5wbmc=",
	    "file:///workspace/big%0A.png");
	check_item(files, 3, "c1\xc2\x9b" "csi", "YzHCm2NzaQ==",
	    "file:///workspace/c1%C2%9Bcsi");
	check_item(files, 4, "esc\x1b[31mred", "ZXNjG1szMW1yZWQ=",
	    "file:///workspace/esc%1B%5B31mred");
	check_item(files, 5, fake, "ZXZpbAotIGZha2UudHh0ICg5IGJ5dGVzLCBpbWFn"
	    "ZS9wbmc7IHNob3duIGJlbG93IGFzIGFuIGltYWdlKQ==",
	    "file:///workspace/evil%0A-%20fake.txt%20%289%20bytes%2C%20"
	    "image/png%3B%20shown%20below%20as%20an%20image%29");
	check_item(files, 6, "tab\there", "dGFiCWhlcmU=",
	    "file:///workspace/tab%09here");
	json_object_put(r);
	wsf_scan_free(&before);
}
END_TEST

START_TEST(an_own_json_object_keeps_its_shape_when_nothing_changed)
{
	struct wsf_scan before;
	struct json_object *r = run_result(), *content, *sc;

	ck_assert_int_eq(wsf_scan_take(ws->path, &before), 0);
	ck_assert_int_eq(wsf_report(ws->path, &before, NULL, false, r),
	    MCP_OK);
	ck_assert(json_object_object_get_ex(r, "structuredContent", &sc));
	ck_assert(!json_object_object_get_ex(sc, "files", NULL));
	ck_assert(json_object_object_get_ex(r, "content", &content));
	ck_assert_uint_eq(json_object_array_length(content), 1);
	json_object_put(r);
	wsf_scan_free(&before);
}
END_TEST

START_TEST(cursors_we_did_not_make_are_refused)
{
	struct json_object *arr = json_object_new_array();
	char *next = NULL, *c;

	put("a", "1", 1);
	put("b", "2", 1);
	ck_assert_int_eq(wsr_list(ws->path, "", arr, &next), -EINVAL);
	ck_assert_int_eq(wsr_list(ws->path, "%%%", arr, &next), -EINVAL);
	c = render_base64("a\0b", 3);
	ck_assert_int_eq(wsr_list(ws->path, c, arr, &next), -EINVAL);
	free(c);
	ck_assert_uint_eq(json_object_array_length(arr), 0);
	/* after "a": only "b", and no next page */
	c = render_base64("a", 1);
	ck_assert_int_eq(wsr_list(ws->path, c, arr, &next), 0);
	free(c);
	ck_assert_ptr_null(next);
	ck_assert_uint_eq(json_object_array_length(arr), 1);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(arr, 0), "name")), "b");
	json_object_put(arr);
}
END_TEST

START_TEST(reads_refuse_what_is_not_a_regular_file)
{
	struct json_object *o = NULL;

	ck_assert_int_eq(mkfifo(at("fifo"), 0644), 0);
	ck_assert_int_eq(wsr_read(ws->path, "fifo", "u", 100, &o), -EINVAL);
	ck_assert_int_eq(mkdir(at("dir"), 0755), 0);
	ck_assert_int_eq(wsr_read(ws->path, "dir", "u", 100, &o), -EISDIR);
	ck_assert_int_eq(wsr_read(ws->path, "/etc/passwd", "u", 100, &o),
	    -EXDEV);
	ck_assert_int_eq(wsr_read(ws->path, "../x", "u", 100, &o), -EXDEV);
	ck_assert_int_eq(symlink("/etc/passwd", at("out")), 0);
	ck_assert_int_eq(wsr_read(ws->path, "out", "u", 100, &o), -EXDEV);
	ck_assert_int_eq(wsr_read(ws->path, "missing", "u", 100, &o),
	    -ENOENT);
	put("ten", "0123456789", 10);
	ck_assert_int_eq(wsr_read(ws->path, "ten", "u", 9, &o), -EFBIG);
	ck_assert_ptr_null(o);
	ck_assert_int_eq(wsr_read(ws->path, "ten", "u", 10, &o), 0);
	ck_assert_str_eq(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	    "{\"uri\":\"u\",\"mimeType\":"
	    "\"text/plain\",\"text\":\"0123456789\"}");
	json_object_put(o);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("workspace_files");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, image_types_come_from_magic_bytes);
	tcase_add_test(tc, uris_decode_to_paths_or_are_refused);
	tcase_add_test(tc, a_copy_without_uris_lists_and_shows_but_never_links);
	tcase_add_test(tc,
	    an_own_json_object_keeps_its_shape_when_nothing_changed);
	tcase_add_test(tc, names_cannot_forge_the_report);
	tcase_add_test(tc, cursors_we_did_not_make_are_refused);
	tcase_add_test(tc, reads_refuse_what_is_not_a_regular_file);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
