/*
 * probe: runs inside the sandbox and tries risky things, one line per
 * attempt: "<case> <outcome>", where outcome is "ok", an errno name
 * ("EPERM") or "signal=<n>" for attempts run in a child that was killed.
 * sandbox_attacks.py compares the lines with the exact expected outcomes.
 * Modes: `probe syscalls [ABSTRACT-NAME]` (everything below), `probe fds` (open fds > 2),
 * `probe shm MB` (hold SysV shm segments), `probe inotify-hold FILE` and
 * `probe inotify-one` (the per-uid inotify pool),
 * `probe deny-userns -- CMD...` (host side: exec CMD under a filter that
 * refuses user namespaces, like a container's seccomp profile) and
 * `probe userns-limit -- CMD...` (host side, root: CMD in a user namespace
 * whose user.max_user_namespaces is 0).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/xattr.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <unistd.h>

#define PTRACE_ATTACH_NUM	16	/* PTRACE_ATTACH, without sys/ptrace.h */

static const char *
errname(int e)
{
	switch (e) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EROFS: return "EROFS";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case EBADF: return "EBADF";
	case ESRCH: return "ESRCH";
	case ENETUNREACH: return "ENETUNREACH";
	case ECONNREFUSED: return "ECONNREFUSED";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case ENOTTY: return "ENOTTY";
	case EFAULT: return "EFAULT";
	case ENOSPC: return "ENOSPC";
	case EEXIST: return "EEXIST";
	case ENOTDIR: return "ENOTDIR";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case ENOMEM: return "ENOMEM";
	case EMFILE: return "EMFILE";
	case EFBIG: return "EFBIG";
	case ENODATA: return "ENODATA";
	default: return "E?";
	}
}

static void
report(const char *name, long r)
{
	printf("%s %s\n", name, r < 0 ? errname(errno) : "ok");
	fflush(stdout);
}

/* Run a syscall that may kill us in a child; print its fate. */
static void
in_child(const char *name, long (*fn)(void))
{
	pid_t pid;
	int ws;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long r = fn();

		printf("%s %s\n", name, r < 0 ? errname(errno) : "ok");
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &ws, 0) < 0) {
		printf("%s fork-failed\n", name);
		return;
	}
	if (WIFSIGNALED(ws))
		printf("%s signal=%d\n", name, WTERMSIG(ws));
	fflush(stdout);
}

static long
x32_getpid(void)
{
	return syscall(0x40000000 | SYS_getpid);
}

static long
i386_getpid(void)
{
	long r;

	/* int 0x80 with eax = 20 (getpid in the i386 table) */
	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	return r;
}

static long
clone_newuser(void)
{
	long r = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD),
	    NULL, NULL, NULL, 0UL);

	if (r == 0)
		_exit(0);
	return r;
}

static long
clone_newnet(void)
{
	long r = syscall(SYS_clone, (unsigned long)(CLONE_NEWNET | SIGCHLD),
	    NULL, NULL, NULL, 0UL);

	if (r == 0)
		_exit(0);
	return r;
}

static void
net_probes(const char *abstract_name)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(443) };
	struct sockaddr_un u = { .sun_family = AF_UNIX };
	size_t n;
	int s;

	inet_pton(AF_INET, "1.1.1.1", &a.sin_addr);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	report("socket_inet", s);
	report("tcp_connect_internet", connect(s, (void *)&a, sizeof(a)));
	close(s);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	report("udp_send_internet", sendto(s, "x", 1, 0, (void *)&a,
	    sizeof(a)));
	close(s);
	a.sin_port = htons(53);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	report("udp_send_loopback", sendto(s, "x", 1, 0, (void *)&a,
	    sizeof(a)));
	close(s);
	report("socket_raw_icmp", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	report("socket_ping_dgram", socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	report("socket_packet", socket(AF_PACKET, SOCK_RAW, 0));
	report("socket_netlink", socket(AF_NETLINK, SOCK_RAW, 0));
	report("socket_vsock", socket(40 /* AF_VSOCK */, SOCK_STREAM, 0));
	report("socket_alg", socket(38 /* AF_ALG */, SOCK_SEQPACKET, 0));
	/* The host's abstract socket "@NAME" (made by the test). */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	n = strlen(abstract_name);
	if (n > sizeof(u.sun_path) - 1)
		n = sizeof(u.sun_path) - 1;
	memcpy(u.sun_path + 1, abstract_name, n);
	report("abstract_unix_host", connect(s, (void *)&u,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)));
	close(s);
}

static void
fs_probes(void)
{
	report("open_etc_shadow", open("/etc/shadow", O_RDONLY));
	report("open_root_home", open("/root", O_RDONLY));
	report("open_work", open("/work", O_RDONLY));
	report("create_in_usr", open("/usr/probe", O_WRONLY | O_CREAT, 0644));
	report("create_in_etc", open("/etc/probe", O_WRONLY | O_CREAT, 0644));
	report("create_in_root", open("/probe", O_WRONLY | O_CREAT, 0644));
	report("write_etc_passwd", open("/etc/passwd", O_WRONLY));
	report("write_proc_sys", open("/proc/sys/kernel/hostname", O_WRONLY));
	report("write_sysrq", open("/proc/sysrq-trigger", O_WRONLY));
	report("read_kcore", open("/proc/kcore", O_RDONLY));
	report("read_keys", open("/proc/keys", O_RDONLY));
	report("read_init_environ", open("/proc/1/environ", O_RDONLY));
	report("open_init_exe", open("/proc/1/exe", O_RDONLY));
	report("open_init_root", open("/proc/1/root/", O_RDONLY));
	report("open_init_mem", open("/proc/1/mem", O_RDWR));
	report("open_dev_tty", open("/dev/tty", O_RDWR));
	report("open_sys", open("/sys/kernel", O_RDONLY));
	report("mknod_char", mknod("/tmp/probe-null", S_IFCHR | 0666,
	    makedev(1, 3)));
}

static void
syscall_probes(void)
{
	unsigned long hi = (1UL << 32) | TIOCSTI;
	char c = 'x';

	report("keyctl", syscall(SYS_keyctl, 0, 0, 0, 0, 0));
	report("add_key", syscall(SYS_add_key, "user", "k", "v", 1, -1));
	report("request_key", syscall(SYS_request_key, "user", "k", NULL, 0));
	report("userfaultfd", syscall(SYS_userfaultfd, 0));
	report("io_uring_setup", syscall(SYS_io_uring_setup, 1, NULL));
	report("bpf", syscall(SYS_bpf, 0, NULL, 0));
	report("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1,
	    -1, 0));
	report("ptrace_attach_init", syscall(SYS_ptrace, PTRACE_ATTACH_NUM,
	    1, 0, 0));
	report("ptrace_traceme", syscall(SYS_ptrace, 0 /* TRACEME */, 0, 0,
	    0));
	report("process_vm_readv", syscall(SYS_process_vm_readv, 1, NULL, 0,
	    NULL, 0, 0));
	report("kcmp", syscall(SYS_kcmp, 1, 1, 0, 0, 0));
	report("pidfd_getfd", syscall(SYS_pidfd_getfd, 0, 0, 0));
	report("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
	report("init_module", syscall(SYS_init_module, NULL, 0, ""));
	report("finit_module", syscall(SYS_finit_module, -1, "", 0));
	report("reboot", syscall(SYS_reboot, 0, 0, 0, NULL));
	report("swapon", syscall(SYS_swapon, "/tmp/x", 0));
	report("settimeofday", syscall(SYS_settimeofday, NULL, NULL));
	report("clock_settime", syscall(SYS_clock_settime, 0, NULL));
	report("iopl", syscall(SYS_iopl, 3));
	report("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, NULL,
	    0));
	report("mount_tmpfs", mount("none", "/tmp", "tmpfs", 0, NULL));
	report("umount_proc", umount2("/proc", MNT_DETACH));
	report("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp"));
	report("chroot", chroot("/tmp"));
	report("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
	report("open_tree", syscall(SYS_open_tree, -1, "/", 0));
	report("move_mount", syscall(SYS_move_mount, -1, "", -1, "", 0));
	report("mount_setattr", syscall(SYS_mount_setattr, -1, "", 0, NULL,
	    0));
	report("unshare_user", unshare(CLONE_NEWUSER));
	report("unshare_mount", unshare(CLONE_NEWNS));
	report("unshare_net", unshare(CLONE_NEWNET));
	report("setns", setns(0, 0));
	in_child("clone_newuser", clone_newuser);
	in_child("clone_newnet", clone_newnet);
	report("clone3", syscall(SYS_clone3, NULL, 0));
	report("sethostname", sethostname("evil", 4));
	report("setuid_root", setuid(0));
	report("unknown_syscall_1000", syscall(1000));
	report("unknown_syscall_600", syscall(600));
	in_child("x32_getpid", x32_getpid);
	in_child("i386_int80_getpid", i386_getpid);
	report("tiocsti", ioctl(0, TIOCSTI, &c));
	report("tiocsti_high_bits", syscall(SYS_ioctl, 0, hi, &c));
	report("tioclinux", syscall(SYS_ioctl, 0, TIOCLINUX, &c));
	report("personality_addr_no_randomize", syscall(SYS_personality,
	    0x0040000));
	report("kill_init", kill(1, SIGKILL));
	report("seccomp_more_filters", prctl(PR_SET_SECCOMP, 2, NULL));
}

/* 1 if anything under /tmp carries a set-id bit. */
static int
setid_left(void)
{
	DIR *d = opendir("/tmp");
	struct dirent *e;
	struct stat st;
	int found = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (st.st_mode & (S_ISUID | S_ISGID)) != 0)
			found = 1;
	closedir(d);
	return found;
}

/*
 * Issue 10, classes 3, 4 and 7: nothing set-id can be made (every call that
 * takes a mode), no memfd, and every socket-creating call filtered by
 * family and protocol.
 */
static void
perimeter_probes(void)
{
	/* a version 2 file-capability blob granting CAP_SETUID */
	const uint32_t fcaps[5] = { 0x02000001, 1u << 7, 0, 0, 0 };
	struct open_how how = { .flags = O_CREAT | O_WRONLY, .mode = 04755 };
	struct stat st;
	int fd, sv[2];
	long r;

	fd = open("/tmp/p-plain", O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
	report("create_plain", fd);
	report("chmod_plain", chmod("/tmp/p-plain", 0700));
	report("chmod_setuid", chmod("/tmp/p-plain", 04755));
	report("chmod_setgid", chmod("/tmp/p-plain", 02755));
	report("fchmod_setuid", fchmod(fd, 04711));
	report("fchmodat_setgid", fchmodat(AT_FDCWD, "/tmp/p-plain", 02711, 0));
	report("fchmodat2_setuid", syscall(452, AT_FDCWD, "/tmp/p-plain",
	    04755, 0));
	report("fchmodat2_plain", syscall(452, AT_FDCWD, "/tmp/p-plain", 0755,
	    0));
	report("setxattr_file_caps", setxattr("/tmp/p-plain",
	    "security.capability", fcaps, sizeof(fcaps), 0));
	close(fd);
	report("open_creat_setuid", open("/tmp/p-s1", O_WRONLY | O_CREAT,
	    04755));
	report("openat_creat_setgid", openat(AT_FDCWD, "/tmp/p-s2",
	    O_WRONLY | O_CREAT | O_EXCL, 02755));
	report("open_tmpfile_setuid", open("/tmp", O_TMPFILE | O_WRONLY,
	    04755));
	report("creat_setuid", creat("/tmp/p-s3", 06755));
	report("mknod_reg_setuid", mknod("/tmp/p-s4", S_IFREG | 04755, 0));
	report("mknodat_reg_setgid", mknodat(AT_FDCWD, "/tmp/p-s5",
	    S_IFREG | 02755, 0));
	report("openat2_creat_setuid", syscall(SYS_openat2, AT_FDCWD,
	    "/tmp/p-s6", &how, sizeof(how)));
	/* the kernel ignores the mode without O_CREAT: so does the filter */
	fd = open("/tmp/p-plain", O_RDONLY | O_CLOEXEC, 04755);
	report("open_rdonly_setuid_mode", fd);
	if (fd >= 0)
		close(fd);
	/* mkdir keeps only rwx and sticky bits, set-id bits never land */
	r = mkdir("/tmp/p-dir", 06777);
	report("mkdir_setid_mode", r);
	if (r == 0 && stat("/tmp/p-dir", &st) == 0)
		printf("mkdir_mode %04o\n", (unsigned)(st.st_mode & 07777));
	printf("setid_files %d\n", setid_left());
	r = (int)syscall(SYS_memfd_create, "x", 0);
	report("memfd_create", r);
	if (r >= 0)		/* allowed where a memory cgroup counts it */
		(void)close(r);
	report("memfd_secret", syscall(447, 0));
	r = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	report("socketpair_unix", r);
	if (r == 0) {
		close(sv[0]);
		close(sv[1]);
	}
	report("socketpair_inet", socketpair(AF_INET, SOCK_STREAM, 0, sv));
	report("socketpair_netlink", socketpair(AF_NETLINK, SOCK_RAW, 0, sv));
	report("socketpair_alg", socketpair(38, SOCK_SEQPACKET, 0, sv));
	report("socketpair_vsock", socketpair(40, SOCK_STREAM, 0, sv));
	report("socketpair_packet", socketpair(AF_PACKET, SOCK_RAW, 0, sv));
	report("socketpair_unix_proto_tcp", socketpair(AF_UNIX, SOCK_STREAM,
	    IPPROTO_TCP, sv));
	report("socket_sctp", socket(AF_INET, SOCK_STREAM, 132));
	report("socket_mptcp", socket(AF_INET6, SOCK_STREAM, 262));
	report("socket_udplite", socket(AF_INET, SOCK_DGRAM, 136));
	report("socket_l2tp", socket(AF_INET, SOCK_DGRAM, 115));
	report("socket_smc", socket(AF_INET, SOCK_STREAM, 256));
	fflush(stdout);
}

/*
 * Hold as many SysV shm segments of mb MiB as the sandbox gives, each
 * touched page by page; print what was held and why it stopped.
 */
static int
shm_hold(long mb)
{
	size_t seg = (size_t)mb << 20;
	long held = 0;
	int id, e = 0;
	char *a;

	for (;;) {
		id = shmget(IPC_PRIVATE, seg, IPC_CREAT | 0600);
		if (id < 0) {
			e = errno;
			break;
		}
		a = shmat(id, NULL, 0);
		if (a == (void *)-1) {
			e = errno;
			break;
		}
		memset(a, 1, seg);
		(void)shmdt(a);
		held += mb;
		if (held >= 4096)
			break;	/* enough to show nothing stopped it */
	}
	printf("shm_held_mb %ld %s\n", held, errname(e));
	return 0;
}

/*
 * Make inotify instances until the kernel refuses; write "N ERRNO" to
 * path (then rename, so the host sees it whole) and wait to be killed.
 */
static int
inotify_hold(const char *path)
{
	char tmp[4096];
	FILE *f;
	int n = 0, e;

	while (inotify_init1(IN_CLOEXEC) >= 0)
		n++;
	e = errno;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL)
		return 1;
	fprintf(f, "%d %s\n", n, errname(e));
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		return 1;
	for (;;)
		pause();
}

static void
list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self;

	if (d == NULL) {
		printf("fds opendir-failed\n");
		return;
	}
	self = dirfd(d);
	printf("fds");
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == self)
			continue;
		printf(" %d", fd);
	}
	printf("\n");
	closedir(d);
}

/*
 * Host side: exec CMD under a filter refusing (EPERM) one syscall when its
 * first argument has flag bits (JSET) or, with match_arg1, when its second
 * argument equals val. deny-userns: clone with CLONE_NEWUSER, as a locked
 * down host would; deny-dupfd: fcntl(F_DUPFD_CLOEXEC), which only the
 * sandbox child uses, so that it dies before the parent releases it.
 */
static int
deny_exec(char **cmd, int nr, bool match_arg1, uint32_t val)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, match_arg1 ?
		    offsetof(struct seccomp_data, args[1]) :
		    offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | (match_arg1 ? BPF_JEQ : BPF_JSET) | BPF_K,
		    val, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("probe deny-userns");
		return 1;
	}
	execv(cmd[0], cmd);
	perror("probe deny-userns: execv");
	return 1;
}

static int
write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/*
 * Host side, as root: run CMD as root of a fresh user namespace (ids 0 and
 * 65534 mapped) whose user.max_user_namespaces is 0, i.e. a machine where
 * no sandbox can create its user namespace.
 */
static int
userns_limit(char **cmd)
{
	int to_parent[2], to_child[2], ws;
	char path[64], c;
	pid_t pid;

	if (pipe(to_parent) < 0 || pipe(to_child) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER) < 0 || write(to_parent[1], "r", 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(1);
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0 ||
		    write_str("/proc/sys/user/max_user_namespaces", "0\n") < 0) {
			perror("probe userns-limit");
			_exit(1);
		}
		execv(cmd[0], cmd);
		_exit(127);
	}
	if (pid < 0 || read(to_parent[0], &c, 1) != 1)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	if (write_str(path, "0 0 1\n65534 65534 1\n") < 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	if (write_str(path, "0 0 1\n65534 65534 1\n") < 0 ||
	    write(to_child[1], "g", 1) != 1 || waitpid(pid, &ws, 0) < 0)
		return 1;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

int
main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "userns-limit") == 0 &&
	    strcmp(argv[2], "--") == 0)
		return userns_limit(argv + 3);
	if (argc >= 2 && strcmp(argv[1], "fds") == 0) {
		list_fds();
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "deny-userns") == 0 &&
	    strcmp(argv[2], "--") == 0)
		return deny_exec(argv + 3, SYS_clone, false, CLONE_NEWUSER);
	if (argc >= 4 && strcmp(argv[1], "deny-dupfd") == 0 &&
	    strcmp(argv[2], "--") == 0)
		return deny_exec(argv + 3, SYS_fcntl, true, F_DUPFD_CLOEXEC);
	if (argc == 3 && strcmp(argv[1], "shm") == 0)
		return shm_hold(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "inotify-hold") == 0)
		return inotify_hold(argv[2]);
	if (argc == 2 && strcmp(argv[1], "inotify-one") == 0) {
		report("inotify_init1", inotify_init1(IN_CLOEXEC));
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "syscalls") == 0) {
		printf("uid %d euid %d\n", (int)getuid(), (int)geteuid());
		printf("pid %d ppid %d\n", (int)getpid(), (int)getppid());
		fs_probes();
		net_probes(argc >= 3 ? argv[2] : "mcp-sandbox-probe");
		syscall_probes();
		perimeter_probes();
		list_fds();
		return 0;
	}
	fprintf(stderr, "usage: probe syscalls | fds | deny-userns -- CMD\n");
	return 2;
}
