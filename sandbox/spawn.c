/*
 * spawn: the cloned child between clone() and the exec of the sandbox's
 * init (init.c). It is a copy of the server, possibly multi-threaded, so
 * it only makes async-signal-safe system calls and touches nothing a call
 * provides: the fds it keeps are placed at their fixed numbers, the rest
 * closed, and the init program is exec'd with an empty environment. From
 * there on the sandbox holds no byte of the server's memory; the plan
 * reaches the init in a memfd (plan_wire.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* Report a failed step and exit (the init's records, init.c). */
static void __attribute__((noreturn))
spawn_fail(int fd, enum sb_stage stage, int err)
{
	struct sb_status st = {
		.kind = SB_STATUS_FAIL,
		.stage = stage,
		.err = err,
	};

	(void)!write(fd, &st, sizeof(st));
	_exit(127);
}

/*
 * Move the fds the plan names to SB_FD_STATUS.., and close everything
 * else, including the server's stdio and any fd another thread opened
 * without CLOEXEC. They stay open across the init's exec; only the
 * init program's own fd is CLOEXEC (the init makes the rest CLOEXEC
 * before the program's exec, init.c).
 */
static void
shuffle_fds(const struct sb_plan *p)
{
	int tmp[SB_FD_FIRST_BIND - SB_FD_STATUS];
	int high = SB_FD_STATUS + p->nfds;
	int i;

	for (i = 0; i < p->nfds; i++) {
		tmp[i] = -1;
		if (p->fd_from[i] < 0)
			continue;
		tmp[i] = fcntl(p->fd_from[i], F_DUPFD_CLOEXEC, high);
		if (tmp[i] < 0)
			spawn_fail(p->fd_from[0], SB_STAGE_FDS, errno);
	}
	for (i = 0; i < p->nfds; i++) {
		if (tmp[i] < 0)
			continue;
		if (dup3(tmp[i], SB_FD_STATUS + i,
		    SB_FD_STATUS + i == SB_FD_EXE ? O_CLOEXEC : 0) < 0)
			spawn_fail(tmp[0], SB_STAGE_FDS, errno);
	}
	if (syscall(SYS_close_range, (unsigned)high, ~0U, 0U) < 0)
		spawn_fail(SB_FD_STATUS, SB_STAGE_FDS, errno);
	for (i = 0; i < p->nfds; i++)
		if (p->fd_from[i] < 0)
			(void)close(SB_FD_STATUS + i);
	(void)syscall(SYS_close_range, 0U, 2U, 0U);
}

/*
 * Our capabilities (every one, in the new user namespace) kept across
 * the exec: an exec by a uid that is not root there clears them all, but
 * for the ambient set, which needs each one inheritable first. The init
 * drops every set before the program starts (init.c, drop_caps).
 */
static int
keep_caps(int last_cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	int i;

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	data[0].inheritable = data[0].permitted;
	data[1].inheritable = data[1].permitted;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	for (i = 0; i <= last_cap; i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, i, 0, 0) < 0)
			return -errno;
	return 0;
}

void
sb_child_exec(const struct sb_plan *p)
{
	static char *const argv[] = { (char *)sb_init_name, NULL };
	static char *const envp[] = { NULL };
	int rc;

	shuffle_fds(p);
	if ((rc = keep_caps(p->last_cap)) < 0)
		spawn_fail(SB_FD_STATUS, SB_STAGE_CAPS, -rc);
	(void)syscall(SYS_execveat, SB_FD_EXE, "", argv, envp, AT_EMPTY_PATH);
	spawn_fail(SB_FD_STATUS, SB_STAGE_INIT, errno);
}
