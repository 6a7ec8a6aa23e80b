/*
 * seccomp_compact: the policy as the program the kernel loads. Syscall
 * numbers (resolved by libseccomp for this architecture) are grouped into
 * runs of equal action, found by a balanced binary search, so every path
 * is ~10 instructions. That matters: when a filter is attached the kernel
 * emulates it for every syscall number of both ABIs to cache constant
 * allows, and JIT-compiles it; libseccomp's program (seccomp.c) costs about
 * 0.25 ms per sandbox here, this one a fraction. Built at build time by
 * sb-seccomp-gen; a unit test proves it answers exactly as libseccomp's.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

_Static_assert(SB_CLONE_NS_MASK == (CLONE_NEWNS | CLONE_NEWCGROUP |
    CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
    CLONE_NEWNET), "every namespace flag of clone()");

/* Syscall numbers the table may name; x86_64 ends below 500. */
#define SB_NR_LIMIT		1024
/* Instructions of the whole program, with room to spare (~220 used). */
#define SB_MAX_INSNS		1024
/* x32 syscalls are native-arch numbers with this bit set. */
#define SB_X32_BIT		0x40000000U

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SB_ARG_LO(n)	(offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define SB_ARG_LO(n)	(offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

/* What a run of syscall numbers leads to. */
enum sb_blk {
	BLK_ALLOW,
	BLK_EPERM,
	BLK_ENOSYS,
	BLK_CLONE,		/* allow unless a namespace flag is set */
	BLK_SOCKET,		/* allow listed families, else ENOSYS */
	BLK_PERSONALITY,	/* allow listed values, else ENOSYS */
	BLK_IOCTL,		/* allow unless TIOCSTI/TIOCLINUX */
	BLK_MODE1,		/* EPERM if arg 1 (a mode) has a set-id bit */
	BLK_MODE2,		/* ...arg 2 */
	BLK_OPEN,		/* ...arg 2, if arg 1 (flags) creates */
	BLK_OPENAT,		/* ...arg 3, if arg 2 (flags) creates */
	BLK_COUNT
};

struct sb_run_of_nr {
	uint32_t first;		/* first syscall number of the run */
	enum sb_blk blk;
};

struct prog {
	struct sock_filter insn[SB_MAX_INSNS];
	size_t n;
	int overflow;
};

static void
emit(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (p->n >= SB_MAX_INSNS) {
		p->overflow = 1;
		return;
	}
	p->insn[p->n++] = (struct sock_filter){ code, jt, jf, k };
}

/* Action of every syscall number, from the policy table. */
static int
classify(enum sb_blk blk[SB_NR_LIMIT], uint32_t *ret_limit)
{
	static const struct { const char *name; enum sb_blk blk; } special[] = {
		{ "clone", BLK_CLONE },
		{ "socket", BLK_SOCKET },
		{ "socketpair", BLK_SOCKET },
		{ "personality", BLK_PERSONALITY },
		{ "ioctl", BLK_IOCTL },
	};
	uint32_t limit = 0;
	size_t i;
	int nr;

	for (i = 0; i < SB_NR_LIMIT; i++)
		blk[i] = BLK_ENOSYS;
	for (i = 0; i < sb_nsyscall_rules; i++) {
		nr = seccomp_syscall_resolve_name(sb_syscall_rules[i].name);
		if (nr == __NR_SCMP_ERROR)
			continue;	/* unknown here: stays ENOSYS */
		if (nr < 0 || nr >= SB_NR_LIMIT)
			return -ERANGE;
		blk[nr] = sb_syscall_rules[i].action == SB_SYS_ALLOW ?
		    BLK_ALLOW : sb_syscall_rules[i].action == SB_SYS_EPERM ?
		    BLK_EPERM : BLK_ENOSYS;
		if ((uint32_t)nr + 1 > limit)
			limit = (uint32_t)nr + 1;
	}
	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		nr = seccomp_syscall_resolve_name(special[i].name);
		if (nr < 0 || nr >= SB_NR_LIMIT)
			return -ERANGE;
		blk[nr] = special[i].blk;
		if ((uint32_t)nr + 1 > limit)
			limit = (uint32_t)nr + 1;
	}
	for (i = 0; i < sb_nmode_rules; i++) {
		const struct sb_mode_rule *r = &sb_mode_rules[i];

		nr = seccomp_syscall_resolve_name(r->name);
		if (nr == __NR_SCMP_ERROR)
			continue;	/* unknown here: stays ENOSYS */
		if (nr < 0 || nr >= SB_NR_LIMIT)
			return -ERANGE;
		if (r->flags_arg < 0 && (r->mode_arg == 1 || r->mode_arg == 2))
			blk[nr] = r->mode_arg == 1 ? BLK_MODE1 : BLK_MODE2;
		else if (r->flags_arg == 1 && r->mode_arg == 2)
			blk[nr] = BLK_OPEN;
		else if (r->flags_arg == 2 && r->mode_arg == 3)
			blk[nr] = BLK_OPENAT;
		else
			return -EINVAL;	/* a shape without its block */
		if ((uint32_t)nr + 1 > limit)
			limit = (uint32_t)nr + 1;
	}
	*ret_limit = limit;
	return 0;
}

/* Runs of equal action over [0, limit), then ENOSYS up to the x32 bit. */
static size_t
make_runs(const enum sb_blk blk[SB_NR_LIMIT], uint32_t limit,
    struct sb_run_of_nr *runs)
{
	size_t n = 0;
	uint32_t nr;

	for (nr = 0; nr < limit; nr++)
		if (n == 0 || runs[n - 1].blk != blk[nr])
			runs[n++] = (struct sb_run_of_nr){ nr, blk[nr] };
	if (runs[n - 1].blk != BLK_ENOSYS)
		runs[n++] = (struct sb_run_of_nr){ limit, BLK_ENOSYS };
	return n;
}

/*
 * Binary search over runs[lo, hi): an inner node is one JGE on the first
 * number of the upper half, a leaf a JA to its action block (patched
 * later, its index noted in leaf_of[]). A subtree of n leaves is 2n-1
 * instructions, so the root's left subtree (< 128 leaves) fits jt.
 */
static void
emit_tree(struct prog *p, const struct sb_run_of_nr *runs, size_t lo,
    size_t hi, size_t *leaf_pc)
{
	size_t mid;

	if (hi - lo == 1) {
		leaf_pc[lo] = p->n;
		emit(p, BPF_JMP | BPF_JA, 0, 0, 0);
		return;
	}
	mid = lo + (hi - lo) / 2;
	if (2 * (mid - lo) - 1 > 255) {
		p->overflow = 1;
		return;
	}
	emit(p, BPF_JMP | BPF_JGE | BPF_K, (uint8_t)(2 * (mid - lo) - 1), 0,
	    runs[mid].first);
	emit_tree(p, runs, lo, mid, leaf_pc);
	emit_tree(p, runs, mid, hi, leaf_pc);
}

/* "allow if the 32-bit argument is one of vals, else ret_else" */
static void
emit_allow_list(struct prog *p, int arg, const uint32_t *vals, size_t n,
    uint32_t ret_else)
{
	size_t i;

	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, SB_ARG_LO(arg));
	for (i = 0; i < n; i++)
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint8_t)(n - 1 - i),
		    i == n - 1 ? 1 : 0, vals[i]);
	emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);
	emit(p, BPF_RET | BPF_K, 0, 0, ret_else);
}

/* "EPERM if the mode argument has a set-id bit, else allow" */
static void
emit_mode(struct prog *p, int mode_arg)
{
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, SB_ARG_LO(mode_arg));
	emit(p, BPF_JMP | BPF_JSET | BPF_K, 0, 1, SB_SETID_BITS);
	emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | EPERM);
	emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);
}

/* the same, only when the flags argument creates a file */
static void
emit_open(struct prog *p, int flags_arg, int mode_arg)
{
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, SB_ARG_LO(flags_arg));
	emit(p, BPF_JMP | BPF_JSET | BPF_K, 0, 3, SB_CREATE_FLAGS);
	emit_mode(p, mode_arg);
}

/*
 * socket, socketpair: the family (arg 0) one of the list, then the
 * protocol (arg 2) one of its list; anything else ENOSYS.
 */
static void
emit_socket(struct prog *p)
{
	size_t i, n = sb_nsocket_families < 8 ? sb_nsocket_families : 8;

	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, SB_ARG_LO(0));
	for (i = 0; i < n; i++)
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint8_t)(n - i), 0,
		    (uint32_t)sb_socket_families[i]);
	emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS);
	emit_allow_list(p, 2, sb_socket_protocols, sb_nsocket_protocols,
	    SECCOMP_RET_ERRNO | ENOSYS);
}

static void
emit_block(struct prog *p, enum sb_blk b)
{

	switch (b) {
	case BLK_ALLOW:
		emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);
		break;
	case BLK_EPERM:
		emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | EPERM);
		break;
	case BLK_ENOSYS:
	case BLK_COUNT:
		emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS);
		break;
	case BLK_CLONE:
		/* the kernel reads only the low 32 bits of clone's flags */
		emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, SB_ARG_LO(0));
		emit(p, BPF_JMP | BPF_JSET | BPF_K, 0, 1, SB_CLONE_NS_MASK);
		emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | EPERM);
		emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);
		break;
	case BLK_SOCKET:
		emit_socket(p);
		break;
	case BLK_MODE1:
		emit_mode(p, 1);
		break;
	case BLK_MODE2:
		emit_mode(p, 2);
		break;
	case BLK_OPEN:
		emit_open(p, 1, 2);
		break;
	case BLK_OPENAT:
		emit_open(p, 2, 3);
		break;
	case BLK_PERSONALITY:
		emit_allow_list(p, 0, sb_personalities, sb_npersonalities,
		    SECCOMP_RET_ERRNO | ENOSYS);
		break;
	case BLK_IOCTL:
		emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, SB_ARG_LO(1));
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, sb_denied_ioctls[0]);
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, sb_denied_ioctls[1]);
		emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | EPERM);
		emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);
		break;
	}
}

/* The compact program into *ret; ret->filter is malloc'd, the caller's. */
int
sb_seccomp_build(struct sock_fprog *ret)
{
	enum sb_blk blk[SB_NR_LIMIT];
	struct sb_run_of_nr runs[SB_NR_LIMIT + 1];
	size_t leaf_pc[SB_NR_LIMIT + 1], blk_pc[BLK_COUNT], nruns, i;
	struct prog *p;
	uint32_t limit;
	int rc;

	if ((rc = classify(blk, &limit)) < 0)
		return rc;
	nruns = make_runs(blk, limit, runs);
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	/* Only the native ABI: anything else dies, as libseccomp's BADARCH. */
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0,
	    offsetof(struct seccomp_data, arch));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, seccomp_arch_native());
	emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_KILL_PROCESS);
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0,
	    offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	emit(p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, SB_X32_BIT);
	emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_KILL_PROCESS);
#endif
	emit_tree(p, runs, 0, nruns, leaf_pc);
	for (i = 0; i < BLK_COUNT; i++) {
		blk_pc[i] = p->n;
		emit_block(p, (enum sb_blk)i);
	}
	if (p->overflow) {
		free(p);
		return -E2BIG;
	}
	for (i = 0; i < nruns; i++)
		p->insn[leaf_pc[i]].k = (uint32_t)(blk_pc[runs[i].blk] -
		    (leaf_pc[i] + 1));
	ret->len = (unsigned short)p->n;
	ret->filter = malloc(p->n * sizeof(struct sock_filter));
	if (ret->filter == NULL) {
		free(p);
		return -ENOMEM;
	}
	memcpy(ret->filter, p->insn, p->n * sizeof(struct sock_filter));
	free(p);
	return 0;
}
