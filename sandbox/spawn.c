/*
 * spawn: the clone of the sandbox's init and the child until its exec
 * (init.c). The child shares the server's memory until then (CLONE_VM |
 * CLONE_VFORK, as posix_spawn does) instead of getting a copy of its page
 * tables that the exec would throw away, on a stack of its own, while the
 * cloning thread waits. So it makes only raw system calls and touches
 * nothing a call provides: the fds it keeps are placed at their fixed
 * numbers, the rest closed, and the init program is exec'd with an empty
 * environment. From there on the sandbox holds no byte of the server's
 * memory; the plan reaches the init in a memfd (plan_wire.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/*
 * The child's stack until its exec: a few frames of raw system calls
 * (the fd shuffle's arrays are the most, ~100 bytes), with room for a
 * sanitizer's interceptors.
 */
#define SB_SPAWN_STACK		(16u * 1024)

/* The kernel's struct clone_args up to its cgroup field (VER2, 5.7). */
struct sb_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};
_Static_assert(sizeof(struct sb_clone_args) == 88, "CLONE_ARGS_SIZE_VER2");
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP	0x200000000ULL
#endif

/* The child shares our memory and its sanitizer shadow: not instrumented. */
#define SB_CHILD	__attribute__((no_sanitize_address))

/* Report a failed step and exit (the init's records, init.c). */
void
sb_child_fail(int fd, enum sb_stage stage, int err, int detail)
{
	struct sb_status st = {
		.kind = SB_STATUS_FAIL,
		.stage = stage,
		.err = err,
		.wstatus = detail,
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
static void SB_CHILD
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
			sb_child_fail(p->fd_from[0], SB_STAGE_FDS, errno, 0);
	}
	for (i = 0; i < p->nfds; i++) {
		if (tmp[i] < 0)
			continue;
		if (dup3(tmp[i], SB_FD_STATUS + i,
		    SB_FD_STATUS + i == SB_FD_EXE ? O_CLOEXEC : 0) < 0)
			sb_child_fail(tmp[0], SB_STAGE_FDS, errno, 0);
	}
	if (syscall(SYS_close_range, (unsigned)high, ~0U, 0U) < 0)
		sb_child_fail(SB_FD_STATUS, SB_STAGE_FDS, errno, 0);
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
static int SB_CHILD
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

static int __attribute__((noreturn)) SB_CHILD
child_exec(void *arg)
{
	static char *const argv[] = { (char *)sb_init_name, NULL };
	static char *const envp[] = { NULL };
	const struct sb_plan *p = arg;
	int rc;

	shuffle_fds(p);
	if ((rc = keep_caps(p->last_cap)) < 0)
		sb_child_fail(SB_FD_STATUS, SB_STAGE_CAPS, -rc, 0);
	(void)syscall(SYS_execveat, SB_FD_EXE, "", argv, envp, AT_EMPTY_PATH);
	sb_child_fail(SB_FD_STATUS, SB_STAGE_INIT, errno, 0);
}

#if defined(__x86_64__)
/*
 * clone3() whose child starts on a stack of its own: no C frame there to
 * return to, so it calls fn(arg) from here (and exits with its value, if
 * it ever returns). The parent gets the pid or -errno.
 */
long sb_clone3_call(struct sb_clone_args *a, size_t size,
    int (*fn)(void *), void *arg) __attribute__((visibility("hidden")));
__asm__(
	".text\n"
	".p2align 4\n"
	".globl sb_clone3_call\n"
	".hidden sb_clone3_call\n"
	".type sb_clone3_call, @function\n"
	"sb_clone3_call:\n"
	"	mov %rdx, %r8\n"		/* fn: syscall keeps r8, r9 */
	"	mov %rcx, %r9\n"		/* arg */
	"	mov $435, %eax\n"		/* SYS_clone3 */
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	xor %ebp, %ebp\n"		/* the child: no frame above */
	"	mov %r9, %rdi\n"
	"	call *%r8\n"
	"	mov %eax, %edi\n"
	"	mov $60, %eax\n"		/* SYS_exit */
	"	syscall\n"
	"	hlt\n"
	"1:	ret\n"
	".size sb_clone3_call, .-sb_clone3_call\n");
_Static_assert(SYS_clone3 == 435 && SYS_exit == 60, "x86_64 numbers");
#endif

/*
 * clone3, straight into the cgroup cgfd (v2), so that not one of the
 * init's instructions runs outside it; where clone3 or CLONE_INTO_CGROUP
 * are missing (before 5.7), clone(), and the caller moves the init.
 */
static pid_t
clone_child(const struct sb_plan *p, unsigned long flags, int cgfd,
    int *pidfd, bool *joined, char *stack)
{
	const unsigned long vm = CLONE_VM | CLONE_VFORK;
	struct sb_clone_args a;
	long pid;

	*joined = false;
	if (cgfd >= 0) {
		memset(&a, 0, sizeof(a));
		a.flags = (uint64_t)flags | CLONE_PIDFD | CLONE_INTO_CGROUP;
		a.pidfd = (uint64_t)(uintptr_t)pidfd;
		a.exit_signal = SIGCHLD;
		a.cgroup = (uint64_t)cgfd;
#if defined(__x86_64__)
		a.flags |= vm;
		a.stack = (uint64_t)(uintptr_t)stack;
		a.stack_size = SB_SPAWN_STACK;
		if ((pid = sb_clone3_call(&a, sizeof(a), child_exec,
		    (void *)(uintptr_t)p)) < 0) {
			errno = (int)-pid;
			pid = -1;
		}
#else
		/* the child returns here, in a copy of our memory */
		if ((pid = syscall(SYS_clone3, &a, sizeof(a))) == 0)
			child_exec((void *)(uintptr_t)p);
#endif
		if (pid >= 0 || (errno != ENOSYS && errno != E2BIG &&
		    errno != EINVAL)) {
			*joined = pid >= 0;
			return (pid_t)pid;
		}
	}
	return clone(child_exec, stack + SB_SPAWN_STACK,
	    (int)(flags | vm | CLONE_PIDFD | SIGCHLD),
	    (void *)(uintptr_t)p, pidfd);
}

pid_t
sb_spawn(const struct sb_plan *p, unsigned long flags, int cgfd,
    int *pidfd, bool *joined)
{
	char stack[SB_SPAWN_STACK] __attribute__((aligned(16)));
	sigset_t all, old;
	pid_t pid;
	int err;

	/* no handler of the server's may run on the child's stack */
	(void)sigfillset(&all);
	(void)pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone_child(p, flags, cgfd, pidfd, joined, stack);
	err = errno;
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return pid;
}
