/*
 * Unit tests of workspaces: a fresh one is private and removed with all
 * it holds; removal never follows a symlink out, copes with directories
 * left without permissions and with trees deeper than its fd budget; a
 * user's workspace is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "workspace.h"

static struct workspace *
fresh(void)
{
	struct workspace *ws = NULL;
	char err[256];

	ck_assert_msg(workspace_open(NULL, (uid_t)-1, &ws, err,
	    sizeof(err)) == 0, "%s", err);
	return ws;
}

START_TEST(fresh_workspace_is_private_and_removed)
{
	struct workspace *ws = fresh();
	char path[PATH_MAX], kept[PATH_MAX];
	struct stat st;

	ck_assert_int_eq(stat(ws->path, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert(ws->owned);
	(void)snprintf(path, sizeof(path), "%s/a", ws->path);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	(void)snprintf(path, sizeof(path), "%s/a/f", ws->path);
	ck_assert_int_ge(creat(path, 0644), 0);
	(void)snprintf(kept, sizeof(kept), "%s", ws->path);
	workspace_free(ws);
	ck_assert_int_eq(stat(kept, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(removal_never_follows_symlinks_out)
{
	struct workspace *ws = fresh();
	char outside[] = "/tmp/tools-ws-outside-XXXXXX", path[PATH_MAX],
	    victim[PATH_MAX];
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(outside));
	(void)snprintf(victim, sizeof(victim), "%s/victim", outside);
	ck_assert_int_ge(creat(victim, 0644), 0);
	(void)snprintf(path, sizeof(path), "%s/dirlink", ws->path);
	ck_assert_int_eq(symlink(outside, path), 0);
	(void)snprintf(path, sizeof(path), "%s/filelink", ws->path);
	ck_assert_int_eq(symlink(victim, path), 0);
	workspace_free(ws);
	ck_assert_int_eq(stat(victim, &st), 0);
	ck_assert_int_eq(workspace_remove_tree(outside), 0);
}
END_TEST

START_TEST(removal_copes_with_locked_and_deep_trees)
{
	struct workspace *ws = fresh();
	char kept[PATH_MAX];
	struct stat st;
	int fd, next, i;

	/* 300 levels: deeper than the fd budget of the removal */
	fd = open(ws->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; i < 300; i++) {
		ck_assert_int_eq(mkdirat(fd, "d", 0755), 0);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(next, 0);
		close(fd);
		fd = next;
	}
	ck_assert_int_ge(openat(fd, "leaf", O_WRONLY | O_CREAT | O_CLOEXEC,
	    0644), 0);
	/* and a directory with no permissions at all */
	ck_assert_int_eq(mkdirat(fd, "locked", 0755), 0);
	ck_assert_int_ge(openat(fd, "locked/x", O_WRONLY | O_CREAT | O_CLOEXEC,
	    0644), 0);
	ck_assert_int_eq(fchmodat(fd, "locked", 0, 0), 0);
	close(fd);
	(void)snprintf(kept, sizeof(kept), "%s", ws->path);
	workspace_free(ws);
	ck_assert_int_eq(stat(kept, &st), -1);
}
END_TEST

START_TEST(user_workspace_is_kept)
{
	char dir[] = "/tmp/tools-ws-user-XXXXXX", err[256];
	struct workspace *ws = NULL;
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(workspace_open(dir, (uid_t)-1, &ws, err,
	    sizeof(err)), 0);
	ck_assert(!ws->owned);
	ck_assert_str_eq(ws->path, dir);
	workspace_free(ws);
	ck_assert_int_eq(stat(dir, &st), 0);
	rmdir(dir);
	ck_assert_int_eq(workspace_open("/nonexistent-ws", (uid_t)-1, &ws,
	    err, sizeof(err)), -1);
	ck_assert_str_eq(err, "workspace /nonexistent-ws: cannot use it: No "
	    "such file or directory");
	ck_assert_int_eq(workspace_open("/etc/hostname", (uid_t)-1, &ws,
	    err, sizeof(err)), -1);
	ck_assert_str_eq(err, "workspace /etc/hostname: cannot use it: Not a "
	    "directory");
}
END_TEST

static Suite *
workspace_suite(void)
{
	Suite *s = suite_create("tools_workspace");
	TCase *tc = tcase_create("workspace");

	tcase_add_test(tc, fresh_workspace_is_private_and_removed);
	tcase_add_test(tc, removal_never_follows_symlinks_out);
	tcase_add_test(tc, removal_copes_with_locked_and_deep_trees);
	tcase_add_test(tc, user_workspace_is_kept);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(workspace_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
