/*
 * Unit tests of read_file, write_file, list_directory and search_files:
 * results on valid input, and each escape a model could try through the
 * arguments (absolute paths, "..", symlinks out, writes through symlinks,
 * FIFOs and devices), with the exact outcome.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "files.h"
#include "tools_harness.h"

static struct th T;

static void
setup(void)
{
	th_init(&T);
}

static void
teardown(void)
{
	th_fini(&T);
}

static void
expect_error(const char *name, const char *args, const char *text)
{
	struct json_object *r = th_call(&T, name, args);

	ck_assert_msg(th_is_error(r), "%s %s: not an error: %s", name,
	    args, th_text(r));
	ck_assert_str_eq(th_text(r), text);
	ck_assert(T.audit.refused);
	json_object_put(r);
}

START_TEST(read_file_returns_text_and_metadata)
{
	struct json_object *r;

	th_write(&T, "a.txt", "hello\nworld\n", 12);
	r = th_call(&T, "read_file", "{\"path\":\"a.txt\"}");
	ck_assert(!th_is_error(r));
	ck_assert_str_eq(th_text(r), "hello\nworld\n");
	ck_assert_str_eq(json_object_get_string(th_sc(r, "content")),
	    "hello\nworld\n");
	ck_assert_str_eq(json_object_get_string(th_sc(r, "encoding")), "utf8");
	ck_assert_int_eq(json_object_get_int(th_sc(r, "size")), 12);
	ck_assert(!json_object_get_boolean(th_sc(r, "truncated")));
	ck_assert(T.audit.ran);
	json_object_put(r);
}
END_TEST

START_TEST(read_file_windows_with_offset_and_max_bytes)
{
	struct json_object *r;

	th_write(&T, "a.txt", "0123456789", 10);
	r = th_call(&T, "read_file",
	    "{\"path\":\"a.txt\",\"offset\":3,\"max_bytes\":4}");
	ck_assert_str_eq(th_text(r), "3456");
	ck_assert(json_object_get_boolean(th_sc(r, "truncated")));
	ck_assert(T.audit.truncated);
	json_object_put(r);
}
END_TEST

START_TEST(read_file_never_cuts_a_character)
{
	struct json_object *r;

	/* "é" is 2 bytes: 3 bytes of "aéé" would split the second one */
	th_write(&T, "u.txt", "a\xc3\xa9\xc3\xa9", 5);
	r = th_call(&T, "read_file",
	    "{\"path\":\"u.txt\",\"max_bytes\":4}");
	ck_assert_str_eq(th_text(r), "a\xc3\xa9");
	ck_assert_int_eq(json_object_get_int(th_sc(r, "bytes")), 3);
	json_object_put(r);
}
END_TEST

START_TEST(read_file_returns_binary_as_base64_resource)
{
	struct json_object *r, *c, *b, *res, *v;

	th_write(&T, "b.bin", "\x00\x01\xff", 3);
	r = th_call(&T, "read_file", "{\"path\":\"b.bin\"}");
	ck_assert(!th_is_error(r));
	ck_assert_str_eq(json_object_get_string(th_sc(r, "encoding")),
	    "base64");
	ck_assert_str_eq(json_object_get_string(th_sc(r, "content")), "AAH/");
	ck_assert(json_object_object_get_ex(r, "content", &c));
	b = json_object_array_get_idx(c, 0);
	ck_assert(json_object_object_get_ex(b, "type", &v));
	ck_assert_str_eq(json_object_get_string(v), "resource");
	ck_assert(json_object_object_get_ex(b, "resource", &res));
	ck_assert(json_object_object_get_ex(res, "blob", &v));
	ck_assert_str_eq(json_object_get_string(v), "AAH/");
	ck_assert(json_object_object_get_ex(res, "uri", &v));
	ck_assert_str_eq(json_object_get_string(v), "file:///workspace/b.bin");
	json_object_put(r);
}
END_TEST

START_TEST(read_file_refuses_binary_as_text)
{
	th_write(&T, "b.bin", "ab\xff", 3);
	expect_error("read_file",
	    "{\"path\":\"b.bin\",\"encoding\":\"text\"}",
	    "'b.bin' is binary (it has NUL bytes or is not UTF-8), so it "
	    "cannot be returned as text. Call again with encoding \"base64\" "
	    "(or \"auto\").");
}
END_TEST

START_TEST(read_file_refuses_absolute_paths)
{
	expect_error("read_file", "{\"path\":\"/etc/passwd\"}",
	    "'/etc/passwd' is outside the workspace: absolute paths are "
	    "refused. Use a path relative to the workspace root, without '..' "
	    "that climbs above it.");
}
END_TEST

START_TEST(read_file_refuses_dotdot_above_the_workspace)
{
	expect_error("read_file", "{\"path\":\"../../etc/passwd\"}",
	    "'../../etc/passwd' is outside the workspace: '..' above the "
	    "workspace and symbolic links pointing out of it are refused. Use "
	    "a path relative to the workspace root, without '..' that climbs "
	    "above it.");
}
END_TEST

START_TEST(read_file_allows_dotdot_that_stays_inside)
{
	struct json_object *r;

	ck_assert_int_eq(mkdir(th_ws(&T, "d"), 0755), 0);
	th_write(&T, "x", "in", 2);
	r = th_call(&T, "read_file", "{\"path\":\"d/../x\"}");
	ck_assert(!th_is_error(r));
	ck_assert_str_eq(th_text(r), "in");
	json_object_put(r);
}
END_TEST

START_TEST(read_file_refuses_symlink_pointing_out)
{
	ck_assert_int_eq(symlink("/etc/passwd", th_ws(&T, "link")), 0);
	expect_error("read_file", "{\"path\":\"link\"}",
	    "'link' is outside the workspace: '..' above the workspace and "
	    "symbolic links pointing out of it are refused. Use a path "
	    "relative to the workspace root, without '..' that climbs above "
	    "it.");
	/* relative links that climb out too */
	ck_assert_int_eq(symlink("../../../../../../etc", th_ws(&T, "up")), 0);
	expect_error("read_file", "{\"path\":\"up/passwd\"}",
	    "'up/passwd' is outside the workspace: '..' above the workspace "
	    "and symbolic links pointing out of it are refused. Use a path "
	    "relative to the workspace root, without '..' that climbs above "
	    "it.");
}
END_TEST

START_TEST(read_file_follows_symlink_inside)
{
	struct json_object *r;

	th_write(&T, "real", "data", 4);
	ck_assert_int_eq(symlink("real", th_ws(&T, "alias")), 0);
	r = th_call(&T, "read_file", "{\"path\":\"alias\"}");
	ck_assert(!th_is_error(r));
	ck_assert_str_eq(th_text(r), "data");
	json_object_put(r);
}
END_TEST

START_TEST(read_file_refuses_fifo_without_blocking)
{
	ck_assert_int_eq(mkfifo(th_ws(&T, "pipe"), 0644), 0);
	expect_error("read_file", "{\"path\":\"pipe\"}",
	    "'pipe' is a fifo, not a regular file; FIFOs, devices and "
	    "sockets are refused.");
}
END_TEST

START_TEST(read_file_refuses_magic_proc_links_and_missing_files)
{
	expect_error("read_file", "{\"path\":\"nope.txt\"}",
	    "'nope.txt' does not exist in the workspace (paths are relative "
	    "to the workspace root; list_directory shows what is there).");
	expect_error("read_file", "{\"path\":\".\"}",
	    "'.' is a directory; use list_directory for directories.");
}
END_TEST

START_TEST(read_file_schema_refuses_bad_arguments)
{
	ck_assert(!th_valid(&T, "read_file", "{}"));
	ck_assert(!th_valid(&T, "read_file", "{\"path\":\"\"}"));
	ck_assert(!th_valid(&T, "read_file",
	    "{\"path\":\"a\",\"extra\":1}"));
	ck_assert(!th_valid(&T, "read_file",
	    "{\"path\":\"a\",\"max_bytes\":0}"));
	ck_assert(!th_valid(&T, "read_file",
	    "{\"path\":\"a\",\"encoding\":\"hex\"}"));
	ck_assert(!th_valid(&T, "read_file", "{\"path\":7}"));
}
END_TEST

START_TEST(write_file_creates_and_then_reads_back)
{
	struct json_object *r;

	r = th_call(&T, "write_file",
	    "{\"path\":\"new.txt\",\"content\":\"abc\"}");
	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	ck_assert_str_eq(th_text(r),
	    "{\"path\":\"new.txt\",\"bytes_written\":3,\"size\":3,"
	    "\"created\":true}");
	json_object_put(r);
	r = th_call(&T, "read_file", "{\"path\":\"new.txt\"}");
	ck_assert_str_eq(th_text(r), "abc");
	json_object_put(r);
}
END_TEST

START_TEST(write_file_overwrites_appends_and_create_refuses_existing)
{
	struct json_object *r;

	th_write(&T, "f", "0123456789", 10);
	r = th_call(&T, "write_file", "{\"path\":\"f\",\"content\":\"ab\"}");
	ck_assert_int_eq(json_object_get_int(th_sc(r, "size")), 2);
	ck_assert(!json_object_get_boolean(th_sc(r, "created")));
	json_object_put(r);
	r = th_call(&T, "write_file",
	    "{\"path\":\"f\",\"content\":\"cd\",\"mode\":\"append\"}");
	ck_assert_int_eq(json_object_get_int(th_sc(r, "size")), 4);
	json_object_put(r);
	expect_error("write_file",
	    "{\"path\":\"f\",\"content\":\"x\",\"mode\":\"create\"}",
	    "'f' already exists (mode \"create\" never replaces a file; use "
	    "\"overwrite\" or \"append\").");
	r = th_call(&T, "read_file", "{\"path\":\"f\"}");
	ck_assert_str_eq(th_text(r), "abcd");
	json_object_put(r);
}
END_TEST

/* Entries of the workspace root, "." and ".." not counted. */
static int
ws_entries(void)
{
	DIR *d = opendir(T.ws->path);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	(void)closedir(d);
	return n;
}

static void
expect_content(const char *rel, const char *want)
{
	char buf[64];
	FILE *f = fopen(th_ws(&T, rel), "rbe");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	(void)fclose(f);
	ck_assert_str_eq(buf, want);
}

/*
 * A write that fails half-way (here the file size rlimit, as a full disk
 * would) leaves the old file whole, creates nothing and leaves no
 * temporary file behind, in every mode.
 */
START_TEST(write_file_that_fails_midway_loses_nothing)
{
	struct rlimit rl = { 4096, 4096 };
	char args[16384];
	struct stat st;
	int n;

	th_write(&T, "f", "old content", 11);
	ck_assert_int_eq(chmod(th_ws(&T, "f"), 0640), 0);
	(void)signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	n = snprintf(args, sizeof(args), "{\"path\":\"f\",\"content\":\"");
	memset(args + n, 'x', 8192);
	(void)snprintf(args + n + 8192, sizeof(args) - (size_t)n - 8192, "\"}");
	expect_error("write_file", args, "'f' is too large for this operation.");
	expect_content("f", "old content");
	ck_assert_int_eq(ws_entries(), 1);
	(void)snprintf(args + n + 8192, sizeof(args) - (size_t)n - 8192,
	    "\",\"mode\":\"append\"}");
	expect_error("write_file", args, "'f' is too large for this operation.");
	expect_content("f", "old content");
	args[9] = 'g';	/* the path: {"path":"g", */
	expect_error("write_file", args, "'g' is too large for this operation.");
	ck_assert_int_eq(ws_entries(), 1);
	(void)snprintf(args + n + 8192, sizeof(args) - (size_t)n - 8192,
	    "\",\"mode\":\"create\"}");
	expect_error("write_file", args, "'g' is too large for this operation.");
	ck_assert_int_eq(ws_entries(), 1);
	ck_assert_int_eq(stat(th_ws(&T, "f"), &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640);
}
END_TEST

/* An overwrite replaces the file whole and keeps its mode; a hard link to
 * the old file keeps the old content (the new one is a new inode). */
START_TEST(write_file_overwrite_keeps_mode_and_replaces_whole)
{
	struct json_object *r;
	struct stat st;
	char old[PATH_MAX];

	th_write(&T, "f", "old content", 11);
	ck_assert_int_eq(chmod(th_ws(&T, "f"), 0751), 0);
	(void)snprintf(old, sizeof(old), "%s", th_ws(&T, "f"));
	ck_assert_int_eq(link(old, th_ws(&T, "hard")), 0);
	r = th_call(&T, "write_file", "{\"path\":\"f\",\"content\":\"new\"}");
	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	json_object_put(r);
	expect_content("f", "new");
	expect_content("hard", "old content");
	ck_assert_int_eq(stat(th_ws(&T, "f"), &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0751);
	ck_assert_int_eq(st.st_nlink, 1);
	ck_assert_int_eq(ws_entries(), 2);
}
END_TEST

START_TEST(write_file_decodes_base64)
{
	struct json_object *r;
	struct stat st;

	r = th_call(&T, "write_file",
	    "{\"path\":\"b\",\"content\":\"AAH/\",\"encoding\":\"base64\"}");
	ck_assert_int_eq(json_object_get_int(th_sc(r, "bytes_written")), 3);
	json_object_put(r);
	ck_assert_int_eq(stat(th_ws(&T, "b"), &st), 0);
	ck_assert_int_eq(st.st_size, 3);
	expect_error("write_file",
	    "{\"path\":\"c\",\"content\":\"!!\",\"encoding\":\"base64\"}",
	    "content is not valid base64 (RFC 4648 alphabet, no whitespace).");
}
END_TEST

START_TEST(write_file_refuses_to_write_through_a_symlink)
{
	char target[PATH_MAX];
	struct stat st;

	/* a symlink to a file outside: must not be written */
	(void)snprintf(target, sizeof(target), "%s.outside", T.ws->path);
	th_write(&T, "dummy", "", 0);
	{
		FILE *f = fopen(target, "we");
		ck_assert_ptr_nonnull(f);
		fputs("keep", f);
		fclose(f);
	}
	ck_assert_int_eq(symlink(target, th_ws(&T, "out")), 0);
	expect_error("write_file", "{\"path\":\"out\",\"content\":\"x\"}",
	    "'out' is a symbolic link (or goes through one where links are "
	    "not followed); refusing to follow it. Use the path of the file "
	    "itself.");
	ck_assert_int_eq(stat(target, &st), 0);
	ck_assert_int_eq(st.st_size, 4);
	/* and a symlinked directory is not walked through */
	ck_assert_int_eq(symlink("/tmp", th_ws(&T, "tmpdir")), 0);
	expect_error("write_file",
	    "{\"path\":\"tmpdir/x\",\"content\":\"x\"}",
	    "A component of 'tmpdir/x' is not a directory (or is a symbolic "
	    "link, which writes do not follow).");
	unlink(target);
}
END_TEST

START_TEST(write_file_refuses_escapes_and_fifos)
{
	expect_error("write_file",
	    "{\"path\":\"/tmp/evil\",\"content\":\"x\"}",
	    "'/tmp/evil' is outside the workspace: absolute paths are refused. "
	    "Use a path relative to the workspace root, without '..' that "
	    "climbs above it.");
	expect_error("write_file",
	    "{\"path\":\"../evil\",\"content\":\"x\"}",
	    "'../evil' is outside the workspace: '..' above the workspace and "
	    "symbolic links pointing out of it are refused. Use a path "
	    "relative to the workspace root, without '..' that climbs above "
	    "it.");
	expect_error("write_file",
	    "{\"path\":\"a/../../evil\",\"content\":\"x\",\"create_dirs\":true}",
	    "'a/../../evil' is outside the workspace: '..' above the workspace "
	    "and symbolic links pointing out of it are refused. Use a path "
	    "relative to the workspace root, without '..' that climbs above "
	    "it.");
	ck_assert_int_eq(mkfifo(th_ws(&T, "p"), 0644), 0);
	expect_error("write_file", "{\"path\":\"p\",\"content\":\"x\"}",
	    "'p' is a fifo, not a regular file; FIFOs, devices and sockets "
	    "are refused.");
}
END_TEST

START_TEST(write_file_creates_parent_directories_on_request)
{
	struct json_object *r;
	struct stat st;

	/* what is missing, and how to make it */
	expect_error("write_file",
	    "{\"path\":\"x/y/z.txt\",\"content\":\"1\"}",
	    "'x/y/z.txt' was not written: the directory 'x' does not exist in "
	    "the workspace. Call write_file again with \"create_dirs\": true "
	    "to make the missing directories.");
	ck_assert_int_eq(mkdir(th_ws(&T, "x"), 0755), 0);
	if (geteuid() == 0)
		ck_assert_int_eq(chown(th_ws(&T, "x"), 65534, 65534), 0);
	expect_error("write_file",
	    "{\"path\":\"./x//y/z.txt\",\"content\":\"1\"}",
	    "'./x//y/z.txt' was not written: the directory './x//y' does not "
	    "exist in the workspace. Call write_file again with "
	    "\"create_dirs\": true to make the missing directories.");
	r = th_call(&T, "write_file",
	    "{\"path\":\"x/y/z.txt\",\"content\":\"1\",\"create_dirs\":true}");
	ck_assert(!th_is_error(r));
	json_object_put(r);
	ck_assert_int_eq(stat(th_ws(&T, "x/y/z.txt"), &st), 0);
}
END_TEST

START_TEST(write_file_enforces_the_file_size_limit)
{
	static const char *const flags[] = { "max-file-size-mb", "1", NULL };
	struct json_object *r;
	char *args, *big;
	size_t n = (1 << 20) + 1;

	th_fini(&T);
	th_init_flags(&T, flags);
	big = malloc(n + 1);
	memset(big, 'a', n);
	big[n] = '\0';
	ck_assert_int_ge(asprintf(&args, "{\"path\":\"big\",\"content\":\"%s\"}",
	    big), 0);
	r = th_call(&T, "write_file", args);
	ck_assert(th_is_error(r));
	ck_assert_str_eq(th_text(r), "Writing 1048577 bytes would make the "
	    "file larger than the policy's limit of 1 MiB; nothing was "
	    "written.");
	json_object_put(r);
	free(args);
	free(big);
}
END_TEST

START_TEST(list_directory_lists_sorted_with_types_and_never_follows)
{
	struct json_object *r;

	th_write(&T, "b.txt", "12", 2);
	ck_assert_int_eq(mkdir(th_ws(&T, "a"), 0755), 0);
	th_write(&T, "a/inner", "x", 1);
	ck_assert_int_eq(symlink("/etc", th_ws(&T, "c")), 0);
	ck_assert_int_eq(mkfifo(th_ws(&T, "d"), 0644), 0);
	r = th_call(&T, "list_directory", "{}");
	ck_assert_str_eq(th_text(r), "{\"path\":\".\",\"entries\":["
	    "{\"path\":\"a\",\"type\":\"directory\",\"size\":0},"
	    "{\"path\":\"b.txt\",\"type\":\"file\",\"size\":2},"
	    "{\"path\":\"c\",\"type\":\"symlink\",\"size\":0,\"target\":\"/etc\"},"
	    "{\"path\":\"d\",\"type\":\"fifo\",\"size\":0}],"
	    "\"truncated\":false}");
	json_object_put(r);
	r = th_call(&T, "list_directory",
	    "{\"path\":\"a\",\"depth\":2}");
	ck_assert_str_eq(th_text(r), "{\"path\":\"a\",\"entries\":["
	    "{\"path\":\"a/inner\",\"type\":\"file\",\"size\":1}],"
	    "\"truncated\":false}");
	json_object_put(r);
	r = th_call(&T, "list_directory",
	    "{\"depth\":3,\"max_entries\":2}");
	ck_assert(json_object_get_boolean(th_sc(r, "truncated")));
	ck_assert_int_eq(json_object_array_length(th_sc(r, "entries")), 2);
	json_object_put(r);
	expect_error("list_directory", "{\"path\":\"c\"}",
	    "'c' is outside the workspace: '..' above the workspace and "
	    "symbolic links pointing out of it are refused. Use a path "
	    "relative to the workspace root, without '..' that climbs above "
	    "it.");
	expect_error("list_directory", "{\"path\":\"d\"}",
	    "'d' is a fifo, not a directory; FIFOs, devices and sockets are "
	    "refused.");
}
END_TEST

START_TEST(search_files_finds_names_and_lines)
{
	struct json_object *r;

	ck_assert_int_eq(mkdir(th_ws(&T, "src"), 0755), 0);
	th_write(&T, "src/a.py", "import os\nprint('Hello')\n", 25);
	th_write(&T, "src/b.txt", "hello there\n", 12);
	th_write(&T, "src/c.bin", "hello\0", 6);
	r = th_call(&T, "search_files", "{\"name\":\"*.py\"}");
	ck_assert_str_eq(th_text(r), "{\"path\":\".\",\"matches\":["
	    "{\"path\":\"src/a.py\"}],\"files_scanned\":1,"
	    "\"skipped_binary\":0,\"truncated\":false}");
	json_object_put(r);
	r = th_call(&T, "search_files",
	    "{\"content\":\"hello\",\"case_sensitive\":false}");
	ck_assert_str_eq(th_text(r), "{\"path\":\".\",\"matches\":["
	    "{\"path\":\"src/a.py\",\"line\":2,\"text\":\"print('Hello')\"},"
	    "{\"path\":\"src/b.txt\",\"line\":1,\"text\":\"hello there\"}],"
	    "\"files_scanned\":3,\"skipped_binary\":1,\"truncated\":false}");
	json_object_put(r);
	expect_error("search_files", "{\"path\":\"src\"}",
	    "Give name (a glob such as \"*.py\"), content (text to find), or "
	    "both.");
	expect_error("search_files",
	    "{\"path\":\"..\",\"name\":\"*\"}",
	    "'..' is outside the workspace: '..' above the workspace and "
	    "symbolic links pointing out of it are refused. Use a path "
	    "relative to the workspace root, without '..' that climbs above "
	    "it.");
}
END_TEST

START_TEST(search_files_does_not_follow_symlinks_out)
{
	struct json_object *r;

	ck_assert_int_eq(symlink("/etc", th_ws(&T, "etc")), 0);
	ck_assert_int_eq(symlink("/etc/passwd", th_ws(&T, "pw")), 0);
	r = th_call(&T, "search_files", "{\"content\":\"root\"}");
	ck_assert_str_eq(th_text(r), "{\"path\":\".\",\"matches\":[],"
	    "\"files_scanned\":0,\"skipped_binary\":0,\"truncated\":false}");
	json_object_put(r);
}
END_TEST

START_TEST(write_file_writes_content_with_nul_whole)
{
	struct json_object *r = th_call(&T, "write_file",
	    "{\"path\":\"n.bin\",\"content\":\"data\\u0000more\"}");
	char buf[32];
	FILE *f;

	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	ck_assert_int_eq(json_object_get_int(th_sc(r, "bytes_written")), 9);
	ck_assert_int_eq(json_object_get_int(th_sc(r, "size")), 9);
	json_object_put(r);
	f = fopen(th_ws(&T, "n.bin"), "rbe");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(buf, 1, sizeof(buf), f), 9);
	fclose(f);
	ck_assert_mem_eq(buf, "data\0more", 9);
	/* base64 with a NUL is invalid, not decoded up to it */
	expect_error("write_file", "{\"path\":\"b.bin\",\"content\":"
	    "\"AP8=\\u0000AAAA\",\"encoding\":\"base64\"}",
	    "content is not valid base64 (RFC 4648 alphabet, no whitespace).");
}
END_TEST

#define NUL_PATH_TEXT	"path contains a NUL character (U+0000); paths, " \
	"names, arguments, environment values and code cannot hold one, so " \
	"nothing was done."

START_TEST(paths_and_names_with_nul_are_refused)
{
	struct stat st;

	th_write(&T, "a.txt", "secret\n", 7);
	expect_error("read_file", "{\"path\":\"a.txt\\u0000zzz\"}",
	    NUL_PATH_TEXT);
	expect_error("write_file", "{\"path\":\"w.txt\\u0000zzz\","
	    "\"content\":\"x\"}", NUL_PATH_TEXT);
	ck_assert_int_eq(stat(th_ws(&T, "w.txt"), &st), -1);
	expect_error("list_directory", "{\"path\":\".\\u0000zzz\"}",
	    NUL_PATH_TEXT);
	expect_error("search_files", "{\"name\":\"a.txt\\u0000*\"}",
	    "name contains a NUL character (U+0000); paths, names, "
	    "arguments, environment values and code cannot hold one, so "
	    "nothing was done.");
}
END_TEST

START_TEST(path_errors_are_fixed_sentences_without_strerror)
{
	struct json_object *r;

	r = files_path_error(&T.call, "x.txt", EIO);
	ck_assert_str_eq(th_text(r), "'x.txt' could not be opened or written "
	    "(an error on the server's side).");
	ck_assert_str_eq(T.audit.reason, "open failed: errno 5");
	json_object_put(r);
	r = files_path_error(&T.call, "x.txt", EAGAIN);
	ck_assert_str_eq(th_text(r), "'x.txt' changed while it was being "
	    "opened; nothing was done. Try again.");
	json_object_put(r);
	r = files_path_error(&T.call, "x.txt", EROFS);
	ck_assert_str_eq(th_text(r), "'x.txt' is on a read-only file system.");
	json_object_put(r);
}
END_TEST

static Suite *
files_suite(void)
{
	Suite *s = suite_create("tools_files");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, read_file_returns_text_and_metadata);
	tcase_add_test(tc, read_file_windows_with_offset_and_max_bytes);
	tcase_add_test(tc, read_file_never_cuts_a_character);
	tcase_add_test(tc, read_file_returns_binary_as_base64_resource);
	tcase_add_test(tc, read_file_refuses_binary_as_text);
	tcase_add_test(tc, read_file_refuses_absolute_paths);
	tcase_add_test(tc, read_file_refuses_dotdot_above_the_workspace);
	tcase_add_test(tc, read_file_allows_dotdot_that_stays_inside);
	tcase_add_test(tc, read_file_refuses_symlink_pointing_out);
	tcase_add_test(tc, read_file_follows_symlink_inside);
	tcase_add_test(tc, read_file_refuses_fifo_without_blocking);
	tcase_add_test(tc, read_file_refuses_magic_proc_links_and_missing_files);
	tcase_add_test(tc, read_file_schema_refuses_bad_arguments);
	tcase_add_test(tc, write_file_creates_and_then_reads_back);
	tcase_add_test(tc, write_file_overwrites_appends_and_create_refuses_existing);
	tcase_add_test(tc, write_file_decodes_base64);
	tcase_add_test(tc, write_file_that_fails_midway_loses_nothing);
	tcase_add_test(tc, write_file_overwrite_keeps_mode_and_replaces_whole);
	tcase_add_test(tc, write_file_refuses_to_write_through_a_symlink);
	tcase_add_test(tc, write_file_refuses_escapes_and_fifos);
	tcase_add_test(tc, write_file_creates_parent_directories_on_request);
	tcase_add_test(tc, write_file_enforces_the_file_size_limit);
	tcase_add_test(tc, list_directory_lists_sorted_with_types_and_never_follows);
	tcase_add_test(tc, search_files_finds_names_and_lines);
	tcase_add_test(tc, search_files_does_not_follow_symlinks_out);
	tcase_add_test(tc, write_file_writes_content_with_nul_whole);
	tcase_add_test(tc, paths_and_names_with_nul_are_refused);
	tcase_add_test(tc, path_errors_are_fixed_sentences_without_strerror);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(files_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
