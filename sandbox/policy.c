/*
 * policy: the const tables of the sandbox. Which host paths appear inside,
 * which names are reserved, and the system call allow-list. Syscalls not
 * named here get ENOSYS (so new kernel calls fail like old kernels); the
 * named dangerous groups get EPERM. Argument-filtered calls (clone, ioctl,
 * socket, socketpair, personality, and the calls that take a file mode)
 * are tabled below and compiled in seccomp.c and seccomp_compact.c.
 * Nothing here is mutable.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "internal.h"

/*
 * Host paths shown read-only at the same place inside. A host symlink (the
 * usr-merged /bin, /lib, ...) is recreated as the same symlink.
 */
const struct sb_sys_path sb_sys_paths[] = {
	{ .path = "/usr", .required = true },
	{ .path = "/bin" },
	{ .path = "/sbin" },
	{ .path = "/lib" },
	{ .path = "/lib32" },
	{ .path = "/lib64" },
	{ .path = "/libx32" },
	{ .path = "/etc/ld.so.cache" },	/* multiarch library dirs */
	{ .path = "/etc/alternatives" },	/* cc, awk, ... point here */
	{ .path = "/etc/localtime" },
	{ .path = "/etc/nsswitch.conf" },
	{ .path = "/dev/null", .required = true, .device = true },
	{ .path = "/dev/zero", .required = true, .device = true },
	{ .path = "/dev/full", .required = true, .device = true },
	{ .path = "/dev/random", .required = true, .device = true },
	{ .path = "/dev/urandom", .required = true, .device = true },
};
const size_t sb_nsys_paths = sizeof(sb_sys_paths) / sizeof(sb_sys_paths[0]);

/* Sandbox paths a workspace or extra bind may not sit on or under. */
const char *const sb_reserved_paths[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", "/dev", "/proc", "/tmp", "/sys",
};
const size_t sb_nreserved_paths =
    sizeof(sb_reserved_paths) / sizeof(sb_reserved_paths[0]);

const char sb_etc_hosts[] = "127.0.0.1\tlocalhost\n::1\tlocalhost\n";

/* Only the sandbox's own pids: no /proc/sys, kcore, sysrq-trigger, keys. */
const char sb_proc_opts[] = "subset=pid";

const char sb_hostname[] = "sandbox";

/* argv[0] of the sandbox's pid 1, in place of the server's command line. */
const char sb_init_name[] = "sandbox-init";

/*
 * Stacked on the allow-list where the ipc namespace's limits cannot be set
 * (an unprivileged server: see exec.c): System V shared memory, message
 * queues and semaphores hold kernel memory that nothing else bounds, so
 * creating them is ENOSYS. Objects the program never made cannot exist in
 * its fresh ipc namespace; POSIX shm (/dev/shm is /tmp) and POSIX message
 * queues (RLIMIT_MSGQUEUE) stay.
 */
static const struct sock_filter sysv_deny_insns[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_shmget, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_msgget, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_semget, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
const struct sock_fprog sb_sysv_deny = {
	.len = sizeof(sysv_deny_insns) / sizeof(sysv_deny_insns[0]),
	.filter = (struct sock_filter *)sysv_deny_insns,
};

/*
 * Stacked where a run has no memory cgroup (cgroup.c): memfd pages are
 * shmem that no rlimit counts, so memfd_create is ENOSYS there, as libc's
 * callers expect of an old kernel.
 */
static const struct sock_filter memfd_deny_insns[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_memfd_create, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
const struct sock_fprog sb_memfd_deny = {
	.len = sizeof(memfd_deny_insns) / sizeof(memfd_deny_insns[0]),
	.filter = (struct sock_filter *)memfd_deny_insns,
};

const char *const sb_default_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"LANG=C.UTF-8",
	"HOME=/tmp",
	"TMPDIR=/tmp",
	NULL,
};

/*
 * Workspace names that run code on the host when its owner next uses them:
 * git's hooks, config (core.fsmonitor, core.hooksPath, aliases), and
 * Mercurial's hgrc hooks. Read-only inside by default.
 */
const char *const sb_default_protect[] = { ".git", ".hg", NULL };

/*
 * socket() and socketpair() families a program may create; the netns has
 * no route anyway. Any other family is ENOSYS before its create() runs (a
 * modular kernel would autoload its module).
 */
const int sb_socket_families[] = { AF_UNIX, AF_INET, AF_INET6 };
const size_t sb_nsocket_families =
    sizeof(sb_socket_families) / sizeof(sb_socket_families[0]);
/*
 * ...and the protocols (third argument): the default one, TCP, UDP, and
 * ICMP/ICMPv6 for ping sockets (which ping_group_range still refuses).
 * The protocol picks a subsystem of its own within AF_INET: SCTP (132),
 * UDP-Lite (136), L2TP (115), MPTCP (262), SMC (256) and any other are
 * ENOSYS, as an unlisted family is.
 */
const uint32_t sb_socket_protocols[] = { 0, IPPROTO_ICMP, IPPROTO_TCP,
    IPPROTO_UDP, IPPROTO_ICMPV6 };
const size_t sb_nsocket_protocols =
    sizeof(sb_socket_protocols) / sizeof(sb_socket_protocols[0]);

/*
 * Calls that take a file mode: EPERM when it carries S_ISUID or S_ISGID,
 * so that nothing set-id is made inside and left for the host to run (the
 * workspace is nosuid only inside). For open and openat only when the
 * flags create a file (O_CREAT or O_TMPFILE): without them the kernel
 * ignores the mode, and callers pass whatever is in the register. mkdir
 * is not listed: the kernel keeps only the permission and sticky bits of
 * its mode. openat2's mode sits in memory BPF cannot read: it is ENOSYS
 * below (libc's open never uses it).
 */
const struct sb_mode_rule sb_mode_rules[] = {
	{ .name = "chmod", .mode_arg = 1, .flags_arg = -1 },
	{ .name = "fchmod", .mode_arg = 1, .flags_arg = -1 },
	{ .name = "fchmodat", .mode_arg = 2, .flags_arg = -1 },
	{ .name = "fchmodat2", .mode_arg = 2, .flags_arg = -1 },
	{ .name = "creat", .mode_arg = 1, .flags_arg = -1 },
	{ .name = "mknod", .mode_arg = 1, .flags_arg = -1 },
	{ .name = "mknodat", .mode_arg = 2, .flags_arg = -1 },
	{ .name = "open", .mode_arg = 2, .flags_arg = 1 },
	{ .name = "openat", .mode_arg = 3, .flags_arg = 2 },
};
const size_t sb_nmode_rules = sizeof(sb_mode_rules) / sizeof(sb_mode_rules[0]);

/* personality() values Docker allows: query, Linux, and UNAME26 variants. */
const uint32_t sb_personalities[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffff };
const size_t sb_npersonalities =
    sizeof(sb_personalities) / sizeof(sb_personalities[0]);

/* ioctl requests denied: push input into a terminal, console control. */
const uint32_t sb_denied_ioctls[2] = { TIOCSTI, TIOCLINUX };

#define A(n)	{ .name = #n, .action = SB_SYS_ALLOW }
#define P(n)	{ .name = #n, .action = SB_SYS_EPERM }
#define N(n)	{ .name = #n, .action = SB_SYS_ENOSYS }

/* Names unknown to this libseccomp are skipped (they keep ENOSYS). */
const struct sb_syscall_rule sb_syscall_rules[] = {
	/* files and directories */
	A(read), A(write), A(readv), A(writev), A(pread64), A(pwrite64),
	A(preadv), A(pwritev), A(preadv2), A(pwritev2),
	A(close), A(close_range),
	A(lseek), A(stat), A(fstat), A(lstat), A(newfstatat), A(statx),
	A(statfs), A(fstatfs), A(access), A(faccessat), A(faccessat2),
	A(readlink), A(readlinkat), A(getdents), A(getdents64),
	A(mkdir), A(mkdirat), A(rmdir), A(unlink), A(unlinkat),
	A(rename), A(renameat), A(renameat2), A(link), A(linkat),
	A(symlink), A(symlinkat), A(chown), A(fchown), A(lchown),
	A(fchownat),
	A(truncate), A(ftruncate), A(fallocate), A(fadvise64), A(readahead),
	A(fsync), A(fdatasync), A(sync), A(syncfs), A(sync_file_range),
	A(utime), A(utimes), A(utimensat), A(futimesat),
	A(getxattr), A(lgetxattr), A(fgetxattr), A(listxattr),
	A(llistxattr), A(flistxattr), A(setxattr), A(lsetxattr),
	A(fsetxattr), A(removexattr), A(lremovexattr), A(fremovexattr),
	A(dup), A(dup2), A(dup3), A(fcntl), A(flock), A(umask),
	A(chdir), A(fchdir), A(getcwd), A(sendfile), A(splice), A(tee),
	A(vmsplice), A(copy_file_range), A(pipe), A(pipe2),
	A(name_to_handle_at),
	A(inotify_init), A(inotify_init1), A(inotify_add_watch),
	A(inotify_rm_watch),
	/* memory */
	A(brk), A(mmap), A(munmap), A(mremap), A(mprotect), A(madvise),
	A(msync), A(mincore), A(mlock), A(mlock2), A(munlock), A(mlockall),
	A(munlockall), A(remap_file_pages), A(membarrier),
	A(pkey_alloc), A(pkey_free), A(pkey_mprotect),
	/* processes; clone is argument-filtered (seccomp_compact.c) */
	A(fork), A(vfork), A(execve), A(execveat), A(exit), A(exit_group),
	A(wait4), A(waitid), A(kill), A(tkill), A(tgkill),
	A(getpid), A(getppid), A(gettid), A(getpgid), A(getpgrp),
	A(setpgid), A(getsid), A(setsid), A(getuid), A(geteuid), A(getgid),
	A(getegid), A(getresuid), A(getresgid), A(getgroups),
	A(setuid), A(setgid), A(setreuid), A(setregid), A(setresuid),
	A(setresgid), A(setfsuid), A(setfsgid), A(setgroups),
	A(capget), A(capset), A(prctl), A(arch_prctl), A(seccomp),
	A(set_tid_address), A(set_robust_list), A(get_robust_list),
	A(rseq), A(futex), A(futex_waitv), A(getrlimit), A(setrlimit),
	A(prlimit64), A(getrusage), A(getpriority), A(setpriority),
	A(ioprio_get), A(ioprio_set), A(sched_yield), A(sched_getaffinity),
	A(sched_setaffinity), A(sched_getparam), A(sched_setparam),
	A(sched_getscheduler), A(sched_setscheduler), A(sched_getattr),
	A(sched_setattr), A(sched_get_priority_max),
	A(sched_get_priority_min), A(sched_rr_get_interval), A(getcpu),
	A(pidfd_open), A(pidfd_send_signal), A(uname), A(sysinfo),
	A(times), A(getrandom),
	A(landlock_create_ruleset), A(landlock_add_rule),
	A(landlock_restrict_self),	/* can only narrow access further */
	/* signals */
	A(rt_sigaction), A(rt_sigprocmask), A(rt_sigreturn),
	A(rt_sigpending), A(rt_sigsuspend), A(rt_sigtimedwait),
	A(rt_sigqueueinfo), A(rt_tgsigqueueinfo), A(sigaltstack),
	A(signalfd), A(signalfd4), A(pause), A(alarm),
	/* time */
	A(clock_gettime), A(clock_getres), A(clock_nanosleep),
	A(gettimeofday), A(time), A(nanosleep), A(getitimer), A(setitimer),
	A(timer_create), A(timer_settime), A(timer_gettime),
	A(timer_getoverrun), A(timer_delete), A(timerfd_create),
	A(timerfd_settime), A(timerfd_gettime),
	/* events and polling */
	A(poll), A(ppoll), A(select), A(pselect6), A(epoll_create),
	A(epoll_create1), A(epoll_ctl), A(epoll_wait), A(epoll_pwait),
	A(epoll_pwait2), A(eventfd), A(eventfd2), A(restart_syscall),
	/* sockets (socket() itself is filtered by family: seccomp_compact.c) */
	A(connect), A(accept), A(accept4), A(bind),
	A(listen), A(shutdown), A(sendto), A(recvfrom), A(sendmsg),
	A(recvmsg), A(sendmmsg), A(recvmmsg), A(getsockname),
	A(getpeername), A(getsockopt), A(setsockopt),
	/* System V and POSIX IPC: private to the ipc namespace */
	A(shmget), A(shmat), A(shmdt), A(shmctl), A(semget), A(semop),
	A(semtimedop), A(semctl), A(msgget), A(msgsnd), A(msgrcv),
	A(msgctl), A(mq_open), A(mq_unlink), A(mq_timedsend),
	A(mq_timedreceive), A(mq_notify), A(mq_getsetattr),
	/* old AIO (io_uring is denied below) */
	A(io_setup), A(io_destroy), A(io_submit), A(io_cancel),
	A(io_getevents), A(io_pgetevents),

	/* Denied, EPERM: Docker's blocked groups and more. */
	/* mounts and namespaces, old and new mount API */
	P(mount), P(umount2), P(pivot_root), P(chroot), P(unshare), P(setns),
	P(fsopen), P(fsconfig), P(fsmount), P(fspick), P(move_mount),
	P(open_tree), P(mount_setattr),
	/* keyrings are not namespaced */
	P(add_key), P(keyctl), P(request_key),
	/* kernel exploit primitives */
	P(userfaultfd), P(io_uring_setup), P(io_uring_enter),
	P(io_uring_register), P(open_by_handle_at), P(fanotify_init),
	/* tracing, bpf, perf, cross-process memory */
	P(ptrace), P(process_vm_readv), P(process_vm_writev), P(pidfd_getfd),
	P(kcmp), P(bpf), P(perf_event_open), P(lookup_dcookie),
	P(process_madvise),
	/* modules, kexec, reboot */
	P(init_module), P(finit_module), P(delete_module), P(create_module),
	P(query_module), P(get_kernel_syms), P(kexec_load),
	P(kexec_file_load), P(reboot),
	/* time */
	P(settimeofday), P(clock_settime), P(clock_adjtime), P(adjtimex),
	/* system administration */
	P(swapon), P(swapoff), P(acct), P(quotactl), P(quotactl_fd),
	P(sethostname), P(setdomainname), P(syslog), P(vhangup), P(iopl),
	P(ioperm), P(nfsservctl), P(ustat), P(sysfs), P(_sysctl), P(uselib),
	/* NUMA */
	P(mbind), P(set_mempolicy), P(get_mempolicy), P(migrate_pages),
	P(move_pages), P(set_mempolicy_home_node),

	/* clone3 flags live in memory BPF cannot read: libc falls back to clone. */
	N(clone3),
	/* openat2's mode likewise (see sb_mode_rules): libc's open is openat */
	N(openat2),
	/*
	 * memfd pages are shmem that no rlimit counts (RLIMIT_AS only while
	 * mapped, RLIMIT_FSIZE per file, any number of files): a program
	 * could hold any amount of memory in them. The run's memory cgroup
	 * counts them: memfd_create is allowed here and refused by
	 * sb_memfd_deny, stacked, where a run has no memory cgroup (programs
	 * fall back to a file in /tmp, whose tmpfs is size-capped).
	 * memfd_secret: refused always (unmapped from the kernel, few need it).
	 */
	A(memfd_create), N(memfd_secret),
};
const size_t sb_nsyscall_rules =
    sizeof(sb_syscall_rules) / sizeof(sb_syscall_rules[0]);
