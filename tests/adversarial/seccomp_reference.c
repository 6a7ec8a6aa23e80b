/*
 * seccomp_reference: the sandbox's policy (sandbox/policy.c) compiled by
 * libseccomp, the oracle of test_sandbox_unit; nothing at run time uses it. ENOSYS for
 * unknown syscalls, EPERM for the named groups, other architectures and
 * x32 killed, argument filters for clone, socket, socketpair, personality
 * and the mode of the calls in sb_mode_rules, and a
 * hand-written prefix that denies TIOCSTI/TIOCLINUX on a 32-bit compare of
 * ioctl's request (libseccomp lets an unconditional allow of ioctl swallow
 * conditional denies). The program loaded in sandboxes is the compact one
 * of seccomp_compact.c; a unit test proves both give the same answer for
 * every syscall number, architecture and argument class.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"


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

/* socket and socketpair: a listed family with a listed protocol. */
static int
add_socket_rules(scmp_filter_ctx c, int nr)
{
	size_t i, j;
	int rc;

	for (i = 0; i < sb_nsocket_families; i++)
		for (j = 0; j < sb_nsocket_protocols; j++) {
			rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, nr, 2,
			    SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
			    (unsigned long)sb_socket_families[i]),
			    SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
			    (unsigned long)sb_socket_protocols[j]));
			if (rc < 0)
				return rc;
		}
	return 0;
}

/*
 * A mode argument without set-id bits is allowed, each bit alone is EPERM
 * (like clone's flags); for open/openat also allowed when the flags create
 * nothing, and EPERM only for a creating flag together with a set-id bit.
 */
static int
add_mode_rules(scmp_filter_ctx c, const struct sb_mode_rule *r)
{
	static const unsigned long setid[] = { S_ISUID, S_ISGID };
	static const unsigned long create[] = { O_CREAT, SB_O_TMPFILE_BIT };
	unsigned m = (unsigned)r->mode_arg, f = (unsigned)r->flags_arg;
	size_t i, j;
	int nr, rc;

	_Static_assert((S_ISUID | S_ISGID) == SB_SETID_BITS, "set-id bits");
	_Static_assert((O_CREAT | SB_O_TMPFILE_BIT) == SB_CREATE_FLAGS,
	    "creating flags");
	if ((nr = seccomp_syscall_resolve_name(r->name)) == __NR_SCMP_ERROR)
		return 0;	/* unknown here: stays ENOSYS */
	rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, nr, 1,
	    SCMP_CMP(m, SCMP_CMP_MASKED_EQ, SB_SETID_BITS, 0));
	if (rc < 0)
		return rc;
	if (r->flags_arg < 0) {
		for (i = 0; i < 2; i++)
			if ((rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), nr,
			    1, SCMP_CMP(m, SCMP_CMP_MASKED_EQ, setid[i],
			    setid[i]))) < 0)
				return rc;
		return 0;
	}
	rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, nr, 1,
	    SCMP_CMP(f, SCMP_CMP_MASKED_EQ, SB_CREATE_FLAGS, 0));
	if (rc < 0)
		return rc;
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++)
			if ((rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), nr,
			    2, SCMP_CMP(f, SCMP_CMP_MASKED_EQ, create[j],
			    create[j]), SCMP_CMP(m, SCMP_CMP_MASKED_EQ,
			    setid[i], setid[i]))) < 0)
				return rc;
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
	if ((rc = add_socket_rules(c, SCMP_SYS(socket))) < 0 ||
	    (rc = add_socket_rules(c, SCMP_SYS(socketpair))) < 0)
		return rc;
	for (i = 0; i < sb_nmode_rules; i++)
		if ((rc = add_mode_rules(c, &sb_mode_rules[i])) < 0)
			return rc;
	for (i = 0; i < sb_npersonalities; i++) {
		rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(personality),
		    1, SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
		    sb_personalities[i]));
		if (rc < 0)
			return rc;
	}
	/* ioctl: allowed here; terminal injection is denied by the prefix */
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
	/*
	 * A binary tree, not a chain: the kernel emulates the filter for every
	 * syscall number when it is attached (to cache constant allows), so
	 * the depth of the filter is paid ~450 times per sandbox.
	 */
	if ((rc = seccomp_attr_set(c, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0)
		return rc;
	/* The child sets no_new_privs itself, in its own order. */
	return seccomp_attr_set(c, SCMP_FLTATR_CTL_NNP, 0);
}

/* Offset of the low 32 bits of syscall argument n in struct seccomp_data. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SB_ARG_LO(n)	(offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define SB_ARG_LO(n)	(offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif
#define SB_PREFIX_LEN	8

_Static_assert(sizeof(sb_denied_ioctls) / sizeof(sb_denied_ioctls[0]) == 2,
    "the prefix checks exactly two requests");

/*
 * The prefix: native ioctl with request TIOCSTI (push input into a
 * terminal) or TIOCLINUX (console control), any high
 * bits) -> EPERM; everything else falls through to the allow-list at
 * SB_PREFIX_LEN, which also kills foreign architectures and x32.
 */
static void
tty_prefix(struct sock_filter *f, uint32_t arch)
{
	const struct sock_filter pre[SB_PREFIX_LEN] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, 6),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SB_ARG_LO(1)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, sb_denied_ioctls[0], 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, sb_denied_ioctls[1], 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};

	memcpy(f, pre, sizeof(pre));
}

/* The reference program into *ret; ret->filter is malloc'd, caller's. */
int
sb_seccomp_reference(struct sock_fprog *ret)
{
	scmp_filter_ctx allow = NULL;
	struct sock_fprog body = { 0 };
	struct sock_filter *all = NULL;
	int rc;

	if ((allow = seccomp_init(SCMP_ACT_ERRNO(ENOSYS))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = set_common_attrs(allow)) < 0 ||
	    (rc = add_named_rules(allow)) < 0 ||
	    (rc = add_filtered_rules(allow)) < 0 ||
	    (rc = export_bpf(allow, &body)) < 0)
		goto out;
	if ((all = calloc(SB_PREFIX_LEN + body.len, sizeof(*all))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	tty_prefix(all, seccomp_arch_native());
	memcpy(all + SB_PREFIX_LEN, body.filter, body.len * sizeof(*all));
	ret->len = SB_PREFIX_LEN + body.len;
	ret->filter = all;
	rc = 0;
 out:
	free(body.filter);
	if (allow != NULL)
		seccomp_release(allow);
	return rc;
}
