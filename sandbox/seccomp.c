/*
 * seccomp: compile the policy into classic BPF once, before any fork. Two
 * filters, both loaded last in the child: the allow-list (ENOSYS default,
 * EPERM for the named groups, other architectures and x32 killed) and a
 * default-allow filter that denies TIOCSTI/TIOCLINUX on a 32-bit masked
 * compare (libseccomp lets an unconditional allow of ioctl swallow
 * conditional denies, so the deny lives in a filter of its own; the kernel
 * applies the most restrictive answer of all filters).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Every namespace flag of clone(); CLONE_NEWTIME shares a bit with CSIGNAL. */
#define SB_CLONE_NS_MASK (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | \
	CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

/* socket() families a program may create; the netns has no route anyway. */
static const int sb_socket_families[] = { AF_UNIX, AF_INET, AF_INET6 };

/* personality() values Docker allows: query, Linux, and UNAME26 variants. */
static const unsigned long sb_personalities[] = {
	0x0, 0x8, 0x20000, 0x20008, 0xffffffff,
};

/* Terminal ioctls that inject input or reach the console. */
static const unsigned long sb_denied_ioctls[] = { TIOCSTI, TIOCLINUX };

/* A filter this big is a bug: the allow-list compiles to ~600 insns. */
#define SB_MAX_FILTER_BYTES	(64 * 1024)

static int
export_bpf(scmp_filter_ctx c, struct sock_fprog *ret)
{
	struct stat st;
	void *buf = NULL;
	ssize_t n;
	int fd, rc;

	if ((fd = memfd_create("sb-seccomp", MFD_CLOEXEC)) < 0)
		return -errno;
	if ((rc = seccomp_export_bpf(c, fd)) < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (st.st_size <= 0 || st.st_size > SB_MAX_FILTER_BYTES ||
	    st.st_size % sizeof(struct sock_filter) != 0) {
		rc = -EINVAL;
		goto out;
	}
	if ((buf = malloc(st.st_size)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	n = pread(fd, buf, st.st_size, 0);
	if (n != st.st_size) {
		rc = n < 0 ? -errno : -EIO;
		goto out;
	}
	ret->len = st.st_size / sizeof(struct sock_filter);
	ret->filter = buf;
	buf = NULL;
	rc = 0;
 out:
	free(buf);
	close(fd);
	return rc;
}

static int
add_named_rules(scmp_filter_ctx c)
{
	size_t i;
	int nr, rc;
	uint32_t act;

	/* unknown names and ENOSYS entries keep the default, ENOSYS */
	for (i = 0; i < sb_nsyscall_rules; i++) {
		nr = seccomp_syscall_resolve_name(sb_syscall_rules[i].name);
		if (nr == __NR_SCMP_ERROR)
			continue;	/* unknown here: stays ENOSYS */
		switch (sb_syscall_rules[i].action) {
		case SB_SYS_ALLOW:
			act = SCMP_ACT_ALLOW;
			break;
		case SB_SYS_EPERM:
			act = SCMP_ACT_ERRNO(EPERM);
			break;
		case SB_SYS_ENOSYS:
		default:
			continue;	/* the default action already */
		}
		if ((rc = seccomp_rule_add(c, act, nr, 0)) < 0)
			return rc;
	}
	return 0;
}

static int
add_filtered_rules(scmp_filter_ctx c)
{
	size_t i;
	int rc, bit;

	/* clone without any namespace flag; each flag alone gives EPERM. */
	rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, SB_CLONE_NS_MASK, 0));
	if (rc < 0)
		return rc;
	for (bit = 0; bit < 32; bit++) {
		unsigned long f = 1UL << bit;

		if ((SB_CLONE_NS_MASK & f) == 0)
			continue;
		rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, f, f));
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < sizeof(sb_socket_families) / sizeof(int); i++) {
		rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
		    (unsigned long)sb_socket_families[i]));
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < sizeof(sb_personalities) / sizeof(long); i++) {
		rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(personality),
		    1, SCMP_A0(SCMP_CMP_EQ, sb_personalities[i]));
		if (rc < 0)
			return rc;
	}
	/* ioctl: allowed here, denied for terminal injection by the 2nd filter */
	return seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 0);
}

static int
set_common_attrs(scmp_filter_ctx c)
{
	int rc;

	/* Other ABIs (i386 int 0x80, x32) die: the rules speak native only. */
	if ((rc = seccomp_attr_set(c, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0)
		return rc;
	/* The child sets no_new_privs itself, in its own order. */
	return seccomp_attr_set(c, SCMP_FLTATR_CTL_NNP, 0);
}

/*
 * Build both filters into ret[0] (allow-list) and ret[1] (ioctl deny).
 * The instructions are malloc'd and owned by the caller.
 */
int
sb_seccomp_build(struct sock_fprog ret[2])
{
	scmp_filter_ctx allow = NULL, tty = NULL;
	struct sock_fprog p0 = { 0 }, p1 = { 0 };
	size_t i;
	int rc;

	if ((allow = seccomp_init(SCMP_ACT_ERRNO(ENOSYS))) == NULL ||
	    (tty = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = set_common_attrs(allow)) < 0 ||
	    (rc = set_common_attrs(tty)) < 0 ||
	    (rc = add_named_rules(allow)) < 0 ||
	    (rc = add_filtered_rules(allow)) < 0)
		goto out;
	for (i = 0; i < sizeof(sb_denied_ioctls) / sizeof(long); i++) {
		rc = seccomp_rule_add(tty, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ,
		    0xffffffffUL, sb_denied_ioctls[i]));
		if (rc < 0)
			goto out;
	}
	if ((rc = export_bpf(allow, &p0)) < 0 ||
	    (rc = export_bpf(tty, &p1)) < 0)
		goto out;
	ret[0] = p0;
	ret[1] = p1;
	p0.filter = p1.filter = NULL;
	rc = 0;
 out:
	free(p0.filter);
	free(p1.filter);
	if (allow != NULL)
		seccomp_release(allow);
	if (tty != NULL)
		seccomp_release(tty);
	return rc;
}
