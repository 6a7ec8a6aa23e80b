/*
 * Unit tests of workspaces: a fresh one is private and removed with all
 * it holds; removal never follows a symlink out, copes with directories
 * left without permissions and with trees deeper than its fd budget; a
 * user's workspace is kept.
 */
#include <errno.h>
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

/* Our name parts: boot id prefix, pid namespace inode, start time. */
static void
ids(char boot[9], unsigned long long *pidns, unsigned long long *start)
{
	char buf[1100], *p;
	struct stat st;
	FILE *f;
	int i;

	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%8s", boot), 1);
	(void)fclose(f);
	ck_assert_int_eq(stat("/proc/self/ns/pid", &st), 0);
	*pidns = (unsigned long long)st.st_ino;
	f = fopen("/proc/self/stat", "re");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	(void)fclose(f);
	p = strrchr(buf, ')');
	for (i = 2; i < 22; i++)
		p = strchr(p + 1, ' ');
	ck_assert_int_eq(sscanf(p + 1, "%llu", start), 1);
}

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
 * workspace_reap_dead removes only what our naming and ownership prove is
 * a dead server's workspace, as an attacker sharing TMPDIR would have it
 * try otherwise: a symlink named like a dead one, a file, a directory of
 * another owner, another pid namespace, a live server, the old naming.
 */
START_TEST(reap_removes_only_provably_dead_servers_workspaces)
{
	char base[] = "/tmp/tools-ws-reap-XXXXXX", boot[9], other[9];
	char n[16][160], outside[PATH_MAX], link_at[PATH_MAX + 200];
	unsigned long long pidns, start;
	struct stat st;
	pid_t dead;
	int i, live;

	ck_assert_ptr_nonnull(mkdtemp(base));
	ids(boot, &pidns, &start);
	if ((dead = fork()) == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(dead, NULL, 0), dead);
	(void)snprintf(other, sizeof(other), "%08x",
	    (unsigned)strtoul(boot, NULL, 16) ^ 1u);
	/* removed: a dead pid; a reused pid (our pid, another start time);
	 * another boot */
	(void)snprintf(n[0], sizeof(n[0]), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE9",
	    boot, pidns, (int)dead, start);
	(void)snprintf(n[1], sizeof(n[1]), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE9",
	    boot, pidns, (int)getpid(), start + 1);
	(void)snprintf(n[2], sizeof(n[2]), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE9",
	    other, pidns, (int)getpid(), start);
	/* kept: ourselves; another pid namespace; the old naming; a near
	 * miss of the pattern; a symlink and a file named like dead ones */
	(void)snprintf(n[3], sizeof(n[3]), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE9",
	    boot, pidns, (int)getpid(), start);
	(void)snprintf(n[4], sizeof(n[4]), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE9",
	    boot, pidns + 1, (int)dead, start);
	(void)snprintf(n[5], sizeof(n[5]), "mcp-sandbox-aB3dE9");
	(void)snprintf(n[6], sizeof(n[6]), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE9x",
	    boot, pidns, (int)dead, start);
	(void)snprintf(n[7], sizeof(n[7]), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE8",
	    boot, pidns, (int)dead, start);
	(void)snprintf(n[8], sizeof(n[8]), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE7",
	    boot, pidns, (int)dead, start);
	/* kept: named as of another boot, but its server holds its lock (a
	 * live one on another machine sharing TMPDIR) */
	(void)snprintf(n[9], sizeof(n[9]), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE6",
	    other, pidns, (int)dead, start);
	for (i = 0; i <= 6; i++)
		mk(base, n[i]);
	mk(base, n[9]);
	(void)snprintf(link_at, sizeof(link_at), "%s/%s", base, n[9]);
	ck_assert_int_ge(live = open(link_at, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC), 0);
	ck_assert_int_eq(flock(live, LOCK_SH), 0);
	(void)snprintf(outside, sizeof(outside), "%s.outside", base);
	ck_assert_int_eq(mkdir(outside, 0700), 0);
	(void)snprintf(link_at, sizeof(link_at), "%s/%s", base, n[7]);
	ck_assert_int_eq(symlink(outside, link_at), 0);
	(void)snprintf(link_at, sizeof(link_at), "%s/%s", base, n[8]);
	ck_assert_int_eq(close(open(link_at, O_CREAT | O_WRONLY | O_CLOEXEC,
	    0600)), 0);
	/* a symlink inside a dead one is removed, never followed */
	(void)snprintf(link_at, sizeof(link_at), "%s/%s/out", base, n[0]);
	ck_assert_int_eq(symlink(outside, link_at), 0);

	ck_assert_int_eq(workspace_reap_dead(base), 3);
	for (i = 0; i <= 2; i++)
		ck_assert_msg(!there(base, n[i]), "%s was kept", n[i]);
	for (i = 3; i <= 9; i++)
		ck_assert_msg(there(base, n[i]), "%s was removed", n[i]);
	ck_assert_int_eq(stat(outside, &st), 0);
	/* of another owner: kept (as root we can make one) */
	if (geteuid() == 0) {
		mk(base, n[0]);
		(void)snprintf(link_at, sizeof(link_at), "%s/%s", base, n[0]);
		ck_assert_int_eq(chown(link_at, 12345, 12345), 0);
		ck_assert_int_eq(workspace_reap_dead(base), 0);
		ck_assert(there(base, n[0]));
	}
	/* once its server lets go, it is a dead one's */
	ck_assert_int_eq(close(live), 0);
	ck_assert_int_eq(workspace_reap_dead(base), 1);
	ck_assert(!there(base, n[9]));
	ck_assert_int_eq(workspace_remove_tree(base), 0);
	ck_assert_int_eq(rmdir(outside), 0);
}
END_TEST

/*
 * The same as an unprivileged server (uid 65534) in a shared, sticky
 * TMPDIR: it reaps its own uid's dead servers' parents and never root's,
 * though they are named exactly as its own would be.
 */
START_TEST(reap_as_an_unprivileged_server_keeps_others)
{
	char base[] = "/tmp/tools-ws-reap-unpriv-XXXXXX", boot[9];
	char mine[160], roots[160], path[PATH_MAX + 200];
	unsigned long long pidns, start;
	pid_t dead, kid;
	int status;

	if (geteuid() != 0)
		return;		/* needs root to become 65534 and to chown */
	ck_assert_ptr_nonnull(mkdtemp(base));
	ck_assert_int_eq(chmod(base, 01777), 0);
	ids(boot, &pidns, &start);
	if ((dead = fork()) == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(dead, NULL, 0), dead);
	(void)snprintf(mine, sizeof(mine), "mcp-sandbox-%s-%llu-%d-%llu-aB3dE9",
	    boot, pidns, (int)dead, start);
	(void)snprintf(roots, sizeof(roots), "mcp-sandbox-%s-%llu-%d-%llu-zZ9yY8",
	    boot, pidns, (int)dead, start);
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

/* The private parent of fresh workspaces is named after its server, so
 * that a later one can judge. */
START_TEST(the_parent_names_its_server)
{
	struct workspace *ws = fresh();
	char boot[9], want[160];
	unsigned long long pidns, start;
	const char *parent = workspace_parent(), *name;
	int fd;

	ck_assert_ptr_nonnull(parent);
	name = strrchr(parent, '/') + 1;
	ids(boot, &pidns, &start);
	(void)snprintf(want, sizeof(want), "mcp-sandbox-%s-%llu-%d-%llu-",
	    boot, pidns, (int)getpid(), start);
	ck_assert_msg(strncmp(name, want, strlen(want)) == 0, "%s", name);
	ck_assert_uint_eq(strlen(name), strlen(want) + 6);
	ck_assert_int_eq(strncmp(ws->path, parent, strlen(parent)), 0);
	/* and holds its lock: no reaper can take it exclusively */
	ck_assert_int_ge(fd = open(parent, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC), 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
	ck_assert_int_eq(errno, EWOULDBLOCK);
	ck_assert_int_eq(close(fd), 0);
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
	tcase_add_test(tc, reap_removes_only_provably_dead_servers_workspaces);
	tcase_add_test(tc, the_parent_names_its_server);
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
