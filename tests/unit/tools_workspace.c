/*
 * Unit tests of workspaces: a fresh one is private and removed with all
 * it holds; removal never follows a symlink out, copes with directories
 * left without permissions and with trees deeper than its fd budget; a
 * user's workspace is kept.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static void
mk(const char *base, const char *name)
{
	char path[PATH_MAX], f[PATH_MAX + 8];
	FILE *fp;

	(void)snprintf(path, sizeof(path), "%s/%s", base, name);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	(void)snprintf(f, sizeof(f), "%s/file", path);
	fp = fopen(f, "we");
	ck_assert_ptr_nonnull(fp);
	(void)fclose(fp);
}

static bool
there(const char *base, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	(void)snprintf(path, sizeof(path), "%s/%s", base, name);
	return lstat(path, &st) == 0;
}

/*
 * A process in a pid namespace of its own (pid 1 there) holding a shared
 * lock on dir, as a live server in a container sharing TMPDIR would;
 * *go's write end lets it go. Its pid here, or 0 where we cannot unshare.
 */
static pid_t
holder_elsewhere(const char *dir, int *go)
{
	int p[2], r[2], fd;
	pid_t pid, kid;
	char c;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(r, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		(void)close(p[1]);
		(void)close(r[0]);
		if (unshare(CLONE_NEWPID) != 0)
			_exit(3);
		if ((kid = fork()) == 0) {
			if (getpid() != 1 || (fd = open(dir, O_RDONLY |
			    O_DIRECTORY)) < 0 || flock(fd, LOCK_SH) != 0 ||
			    write(r[1], "r", 1) != 1)
				_exit(1);
			(void)!read(p[0], &c, 1);	/* EOF: let go */
			_exit(0);
		}
		(void)close(r[1]);
		_exit(kid > 0 && waitpid(kid, NULL, 0) == kid ? 0 : 2);
	}
	(void)close(p[0]);
	(void)close(r[1]);
	ck_assert_int_gt(pid, 0);
	if (read(r[0], &c, 1) != 1) {
		(void)close(r[0]);
		(void)close(p[1]);
		(void)waitpid(pid, NULL, 0);
		return 0;
	}
	(void)close(r[0]);
	*go = p[1];
	return pid;
}

/*
 * workspace_reap_dead removes exactly the parents whose lock is free, as
 * an attacker sharing TMPDIR would have it try otherwise: a dir named
 * like a parent whose lock nobody holds goes with its hostile tree (a
 * symlink out, a deep chain, a dir without permissions), never following
 * a link; one held here, or by pid 1 of another pid namespace, stays; so
 * do a symlink and a file named like parents, names of another shape
 * (--check's), and a dir of another owner. Released, a held one goes.
 */
START_TEST(reap_removes_exactly_the_unheld_parents)
{
	static const char *const keep[] = { "mcp-sandbox-aB3dE8",
	    "mcp-sandbox-aB3dE7", "mcp-sandbox-aB3dE6", "mcp-sandbox-aB3dE5",
	    "mcp-sandbox-check-aB3dE4", "mcp-sandbox-aB3dE",
	    "mcp-sandbox-aB3d-9",
	    "mcp-sandbox-ws-aB3dE3" };
	char base[] = "/tmp/tools-ws-reap-XXXXXX", outside[PATH_MAX];
	char path[PATH_MAX + 200], deep[PATH_MAX];
	struct stat st;
	size_t i;
	pid_t far;
	int live, go = -1;

	ck_assert_ptr_nonnull(mkdtemp(base));
	(void)snprintf(outside, sizeof(outside), "%s.outside", base);
	ck_assert_int_eq(mkdir(outside, 0700), 0);
	(void)snprintf(path, sizeof(path), "%s/kept", outside);
	ck_assert_int_eq(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC,
	    0600)), 0);
	/* removed: unheld, with a hostile tree */
	mk(base, "mcp-sandbox-aB3dE9");
	(void)snprintf(path, sizeof(path), "%s/mcp-sandbox-aB3dE9/out", base);
	ck_assert_int_eq(symlink(outside, path), 0);
	(void)snprintf(deep, sizeof(deep), "%s/mcp-sandbox-aB3dE9", base);
	for (i = 0; i < 40; i++) {
		(void)strcat(deep, "/d");
		ck_assert_int_eq(mkdir(deep, 0700), 0);
	}
	(void)snprintf(path, sizeof(path), "%s/up", deep);
	ck_assert_int_eq(symlink("../../../../../../..", path), 0);
	(void)snprintf(path, sizeof(path), "%s/mcp-sandbox-aB3dE9/locked",
	    base);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	(void)snprintf(path, sizeof(path), "%s/mcp-sandbox-aB3dE9/locked/f",
	    base);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	(void)snprintf(path, sizeof(path), "%s/mcp-sandbox-aB3dE9/locked",
	    base);
	ck_assert_int_eq(chmod(path, 0), 0);
	/* kept: held here; held elsewhere; a symlink and a file named like
	 * parents; names of other shapes */
	mk(base, keep[0]);
	(void)snprintf(path, sizeof(path), "%s/%s", base, keep[0]);
	ck_assert_int_ge(live = open(path, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC), 0);
	ck_assert_int_eq(flock(live, LOCK_SH), 0);
	mk(base, keep[1]);
	(void)snprintf(path, sizeof(path), "%s/%s", base, keep[1]);
	far = geteuid() == 0 ? holder_elsewhere(path, &go) : 0;
	(void)snprintf(path, sizeof(path), "%s/%s", base, keep[2]);
	ck_assert_int_eq(symlink(outside, path), 0);
	(void)snprintf(path, sizeof(path), "%s/%s", base, keep[3]);
	ck_assert_int_eq(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC,
	    0600)), 0);
	for (i = 4; i < sizeof(keep) / sizeof(keep[0]); i++)
		mk(base, keep[i]);

	ck_assert_int_eq(workspace_reap_dead(base), far > 0 ? 1 : 2);
	ck_assert(!there(base, "mcp-sandbox-aB3dE9"));
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		ck_assert_msg(i == 1 && far == 0 ? !there(base, keep[i]) :
		    there(base, keep[i]), "%s", keep[i]);
	(void)snprintf(path, sizeof(path), "%s/kept", outside);
	ck_assert_int_eq(stat(path, &st), 0);
	/* of another owner: kept (as root we can make one) */
	if (geteuid() == 0) {
		mk(base, "mcp-sandbox-aB3dE9");
		(void)snprintf(path, sizeof(path), "%s/mcp-sandbox-aB3dE9",
		    base);
		ck_assert_int_eq(chown(path, 12345, 12345), 0);
		ck_assert_int_eq(workspace_reap_dead(base), 0);
		ck_assert(there(base, "mcp-sandbox-aB3dE9"));
	}
	/* once their holders let go, they are dead ones' */
	ck_assert_int_eq(close(live), 0);
	if (far > 0) {
		ck_assert_int_eq(close(go), 0);
		ck_assert_int_eq(waitpid(far, NULL, 0), far);
	}
	ck_assert_int_eq(workspace_reap_dead(base), far > 0 ? 2 : 1);
	ck_assert(!there(base, keep[0]) && !there(base, keep[1]));
	ck_assert_int_eq(workspace_remove_tree(base), 0);
	ck_assert_int_eq(workspace_remove_tree(outside), 0);
}
END_TEST

/*
 * The same as an unprivileged server (uid 65534) in a shared, sticky
 * TMPDIR: it reaps its own uid's dead servers' parents and never root's,
 * though they are named exactly as its own would be.
 */
START_TEST(reap_as_an_unprivileged_server_keeps_others)
{
	char base[] = "/tmp/tools-ws-reap-unpriv-XXXXXX";
	const char *mine = "mcp-sandbox-aB3dE9", *roots = "mcp-sandbox-zZ9yY8";
	char path[PATH_MAX + 200];
	pid_t kid;
	int status;

	if (geteuid() != 0)
		return;		/* needs root to become 65534 and to chown */
	ck_assert_ptr_nonnull(mkdtemp(base));
	ck_assert_int_eq(chmod(base, 01777), 0);
	mk(base, mine);
	mk(base, roots);
	(void)snprintf(path, sizeof(path), "%s/%s", base, mine);
	ck_assert_int_eq(chown(path, 65534, 65534), 0);
	(void)snprintf(path, sizeof(path), "%s/%s/file", base, mine);
	ck_assert_int_eq(chown(path, 65534, 65534), 0);
	if ((kid = fork()) == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		_exit(workspace_reap_dead(base) == 1 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(kid, &status, 0), kid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert(!there(base, mine));
	ck_assert(there(base, roots));
	ck_assert_int_eq(workspace_remove_tree(base), 0);
}
END_TEST

/* The private parent of fresh workspaces is held by its server for its
 * life: no reaper can take it exclusively. */
START_TEST(the_parent_is_held_by_its_server)
{
	struct workspace *ws = fresh();
	const char *parent = workspace_parent(), *name;
	char base[PATH_MAX];
	int fd;

	ck_assert_ptr_nonnull(parent);
	name = strrchr(parent, '/') + 1;
	ck_assert_msg(strncmp(name, "mcp-sandbox-", 12) == 0 &&
	    strlen(name) == 12 + 6, "%s", name);
	ck_assert_int_eq(strncmp(ws->path, parent, strlen(parent)), 0);
	ck_assert_int_ge(fd = open(parent, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC), 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
	ck_assert_int_eq(errno, EWOULDBLOCK);
	ck_assert_int_eq(close(fd), 0);
	/* a reap of its base passes over it */
	(void)snprintf(base, sizeof(base), "%.*s", (int)(name - 1 - parent),
	    parent);
	(void)workspace_reap_dead(base);
	ck_assert_int_eq(access(ws->path, F_OK), 0);
	workspace_free(ws);
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
	tcase_add_test(tc, reap_removes_exactly_the_unheld_parents);
	tcase_add_test(tc, the_parent_is_held_by_its_server);
	tcase_add_test(tc, reap_as_an_unprivileged_server_keeps_others);
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
