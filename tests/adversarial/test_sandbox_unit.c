/*
 * Unit tests of the sandbox's plan builder, policy and output capture
 * (Check, CK_FORK). They build plans and filters but never clone: the
 * runs themselves are tested by test_sandbox_lib.c and the attack suite.
 */
#include <check.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static const char *const true_argv[] = { "/bin/true", NULL };

static struct sb_ctx *
new_ctx(void)
{
	const struct sb_config cfg = { .init_path = MCP_TEST_INIT };
	struct sb_result res;
	struct sb_ctx *ctx = NULL;

	ck_assert_int_eq(sb_ctx_new(&cfg, &ctx, &res), 0);
	return ctx;
}

static void
base_request(struct sb_request *req)
{
	memset(req, 0, sizeof(*req));
	req->program = "/bin/true";
	req->argv = true_argv;
	sb_limits_default(&req->limits);
}

/* Build a plan; returns its rc. */
static int
build(struct sb_ctx *ctx, const struct sb_request *req, struct sb_plan *p,
    struct sb_result *res)
{
	memset(res, 0, sizeof(*res));
	return sb_plan_build(ctx, req, p, res);
}

static const struct sb_mop *
find_mop(const struct sb_plan *p, const char *path)
{
	size_t i;

	for (i = 0; i < p->nmops; i++)
		if (strcmp(p->mops[i].path, path) == 0)
			return &p->mops[i];
	return NULL;
}

START_TEST(path_normal_accepts_only_clean_absolute_paths)
{
	ck_assert_int_eq(sb_path_is_normal("/"), 1);
	ck_assert_int_eq(sb_path_is_normal("/workspace"), 1);
	ck_assert_int_eq(sb_path_is_normal("/a/b.c/..d"), 1);
	ck_assert_int_eq(sb_path_is_normal("relative"), 0);
	ck_assert_int_eq(sb_path_is_normal(""), 0);
	ck_assert_int_eq(sb_path_is_normal(NULL), 0);
	ck_assert_int_eq(sb_path_is_normal("/a/"), 0);
	ck_assert_int_eq(sb_path_is_normal("/a//b"), 0);
	ck_assert_int_eq(sb_path_is_normal("/a/./b"), 0);
	ck_assert_int_eq(sb_path_is_normal("/a/../etc"), 0);
	ck_assert_int_eq(sb_path_is_normal("/.."), 0);
}
END_TEST

START_TEST(path_under_matches_whole_components)
{
	ck_assert_int_eq(sb_path_under("/usr", "/usr"), 1);
	ck_assert_int_eq(sb_path_under("/usr/bin", "/usr"), 1);
	ck_assert_int_eq(sb_path_under("/usrx", "/usr"), 0);
	ck_assert_int_eq(sb_path_under("/us", "/usr"), 0);
	ck_assert_int_eq(sb_path_under("/anything", "/"), 1);
}
END_TEST

START_TEST(plan_has_readonly_system_binds_proc_tmp_and_dev)
{
	struct sb_ctx *ctx = new_ctx();
	struct sb_request req;
	struct sb_result res;
	struct sb_plan p;
	const struct sb_mop *m;

	base_request(&req);
	req.limits.tmp_bytes = 1 << 20;
	ck_assert_int_eq(build(ctx, &req, &p, &res), 0);
	m = find_mop(&p, "usr");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->kind, SB_MOP_BIND);
	ck_assert(!m->writable && !m->device && m->src_dir);
	ck_assert_int_ge(m->fd, SB_FD_FIRST_BIND);
	m = find_mop(&p, "proc");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->kind, SB_MOP_PROC);
	ck_assert_str_eq(m->arg, "subset=pid");
	m = find_mop(&p, "tmp");
	ck_assert_int_eq(m->kind, SB_MOP_TMPFS);
	ck_assert_str_eq(m->arg, "mode=1777,size=1048576,nr_inodes=320");
	m = find_mop(&p, "dev/null");
	ck_assert(m->kind == SB_MOP_BIND && m->device && !m->writable);
	m = find_mop(&p, "dev/fd");
	ck_assert_int_eq(m->kind, SB_MOP_SYMLINK);
	ck_assert_str_eq(m->arg, "/proc/self/fd");
	m = find_mop(&p, "etc/passwd");
	ck_assert_int_eq(m->kind, SB_MOP_FILE);
	ck_assert_str_eq(m->arg, "root:x:0:0:root:/root:/usr/sbin/nologin\n"
	    "sandbox:x:1000:1000:sandbox:/tmp:/bin/sh\n"
	    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	ck_assert_ptr_null(find_mop(&p, "etc/shadow"));
	ck_assert_ptr_null(find_mop(&p, "workspace"));
	ck_assert_str_eq(p.cwd, "/tmp");
	ck_assert_int_eq(p.uid, SB_INSIDE_UID);
	ck_assert(p.limit_nested_userns);
	sb_plan_fini(&p);
	sb_ctx_free(ctx);
}
END_TEST

START_TEST(plan_parents_come_before_children)
{
	struct sb_ctx *ctx = new_ctx();
	struct sb_request req;
	struct sb_result res;
	struct sb_bind b = { "/etc", "/opt/data/etc", false };
	struct sb_plan p;
	size_t i, iopt = 0, idata = 0, ibind = 0;

	base_request(&req);
	req.binds = &b;
	req.nbinds = 1;
	ck_assert_int_eq(build(ctx, &req, &p, &res), 0);
	for (i = 0; i < p.nmops; i++) {
		if (strcmp(p.mops[i].path, "opt") == 0)
			iopt = i + 1;
		if (strcmp(p.mops[i].path, "opt/data") == 0)
			idata = i + 1;
		if (strcmp(p.mops[i].path, "opt/data/etc") == 0)
			ibind = i + 1;
	}
	ck_assert(iopt > 0 && iopt < idata && idata < ibind);
	ck_assert_int_eq(p.mops[ibind - 1].kind, SB_MOP_BIND);
	ck_assert(!p.mops[ibind - 1].writable);
	sb_plan_fini(&p);
	sb_ctx_free(ctx);
}
END_TEST

START_TEST(plan_sets_every_rlimit)
{
	struct sb_ctx *ctx = new_ctx();
	struct sb_request req;
	struct sb_result res;
	struct sb_plan p;
	size_t i;
	int seen = 0;

	base_request(&req);
	req.limits.cpu_s = 3;
	req.limits.nproc = 7;
	ck_assert_int_eq(build(ctx, &req, &p, &res), 0);
	for (i = 0; i < p.nrlimits; i++) {
		const struct sb_rlimit *r = &p.rlimits[i];

		if (r->resource == RLIMIT_CPU) {
			ck_assert_uint_eq(r->soft, 3);
			ck_assert_uint_eq(r->hard, 4);
			seen |= 1;
		} else if (r->resource == RLIMIT_NPROC) {
			/* above pids.max where the cgroup refuses first */
			ck_assert_uint_eq(r->soft, 7 + (ctx->cg.have[SB_CG_PIDS] ?
			    SB_NPROC_OVER_CGROUP : 0));
			seen |= 2;
		} else if (r->resource == RLIMIT_CORE) {
			ck_assert_uint_eq(r->hard, 0);
			seen |= 4;
		} else if (r->resource == RLIMIT_AS ||
		    r->resource == RLIMIT_FSIZE ||
		    r->resource == RLIMIT_NOFILE) {
			seen |= 8;
		}
	}
	ck_assert_int_eq(seen, 15);
	/* every resource once: nothing inherited from the server (issue 10) */
	ck_assert_uint_eq(p.nrlimits, RLIM_NLIMITS);
	for (seen = 0, i = 0; i < p.nrlimits; i++) {
		ck_assert_int_lt(p.rlimits[i].resource, RLIM_NLIMITS);
		ck_assert_int_eq(seen & (1 << p.rlimits[i].resource), 0);
		seen |= 1 << p.rlimits[i].resource;
		if (p.rlimits[i].resource == RLIMIT_RTPRIO ||
		    p.rlimits[i].resource == RLIMIT_NICE)
			ck_assert_uint_eq(p.rlimits[i].hard, 0);
		if (p.rlimits[i].resource == RLIMIT_STACK)
			ck_assert_uint_eq(p.rlimits[i].hard, 8u << 20);
	}
	sb_plan_fini(&p);
	sb_ctx_free(ctx);
}
END_TEST

/* Each refused request: the message, and nothing left open. */
static void
assert_refused(struct sb_request *req, int want_err)
{
	struct sb_ctx *ctx = new_ctx();
	struct sb_result res;
	struct sb_plan p;

	ck_assert_int_eq(build(ctx, req, &p, &res), -want_err);
	ck_assert_int_eq(res.failed_stage, SB_STAGE_REQUEST);
	ck_assert_int_eq(res.err, want_err);
	ck_assert_ptr_nonnull(strstr(res.message, "sandbox request failed"));
	sb_ctx_free(ctx);
}

START_TEST(plan_refuses_unsafe_requests)
{
	struct sb_request req;
	struct sb_bind b[2] = { { "/etc", "/opt/a", false },
	    { "/etc", "/opt/a/b", false } };
	struct sb_bind many[SB_MAX_BINDS + 1];
	size_t i;

	base_request(&req);
	req.program = "bin/true";
	assert_refused(&req, EINVAL);
	base_request(&req);
	req.argv = NULL;
	assert_refused(&req, EINVAL);
	base_request(&req);
	req.workspace_host = "/tmp";
	req.workspace_path = "/usr/ws";		/* reserved */
	assert_refused(&req, EINVAL);
	base_request(&req);
	req.workspace_host = "/tmp";
	req.workspace_path = "/";		/* the root itself */
	assert_refused(&req, EINVAL);
	base_request(&req);
	req.workspace_host = "tmp";		/* relative host dir */
	assert_refused(&req, EINVAL);
	base_request(&req);
	req.binds = b;
	req.nbinds = 2;				/* nested binds */
	assert_refused(&req, EINVAL);
	base_request(&req);
	b[0].sandbox_path = "/proc/x";		/* reserved */
	req.binds = b;
	req.nbinds = 1;
	assert_refused(&req, EINVAL);
	base_request(&req);
	b[0].sandbox_path = "/workspace/x";	/* inside the workspace */
	req.workspace_host = "/tmp";
	req.binds = b;
	req.nbinds = 1;
	assert_refused(&req, EINVAL);
	base_request(&req);
	for (i = 0; i <= SB_MAX_BINDS; i++)
		many[i] = (struct sb_bind){ "/etc", "/opt/x", false };
	req.binds = many;
	req.nbinds = SB_MAX_BINDS + 1;
	assert_refused(&req, E2BIG);
	base_request(&req);
	req.stdin_len = 3;			/* without data */
	assert_refused(&req, EINVAL);
	base_request(&req);
	req.workspace_host = "/nonexistent-mcp-sbx";
	assert_refused(&req, ENOENT);
}
END_TEST

/*
 * nproc above SB_MAX_NPROC: pids.max (nproc and the init) would wrap to
 * 0 at UINT32_MAX, or the kernel refuse it; the request is refused, with
 * the limit named. SB_MAX_NPROC itself is a plan.
 */
START_TEST(plan_refuses_an_nproc_above_the_kernels_pids)
{
	struct sb_ctx *ctx = new_ctx();
	static const uint32_t bad[] = { SB_MAX_NPROC + 1, UINT32_MAX };
	struct sb_request req;
	struct sb_result res;
	struct sb_plan p;
	size_t i;

	ck_assert_uint_eq(SB_MAX_NPROC, 4194303);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		base_request(&req);
		req.limits.nproc = bad[i];
		ck_assert_int_eq(build(ctx, &req, &p, &res), -EINVAL);
		ck_assert_int_eq(res.failed_stage, SB_STAGE_REQUEST);
		ck_assert_int_eq(res.err, EINVAL);
		ck_assert_str_eq(res.message, "sandbox request failed: "
		    "limits.nproc is above SB_MAX_NPROC (4194303: the kernel's "
		    "most pids, less the init): Invalid argument (likely "
		    "cause: the request itself)");
	}
	base_request(&req);
	req.limits.nproc = SB_MAX_NPROC;
	ck_assert_int_eq(build(ctx, &req, &p, &res), 0);
	sb_plan_fini(&p);
	sb_ctx_free(ctx);
}
END_TEST

START_TEST(output_keeps_cap_and_counts_everything)
{
	struct sb_output o;

	ck_assert_int_eq(sb_output_init(&o, 5), 0);
	sb_output_append(&o, "abc", 3);
	ck_assert(!o.truncated);
	sb_output_append(&o, "defgh", 5);
	sb_output_append(&o, "ij", 2);
	sb_output_finish(&o);
	ck_assert_uint_eq(o.len, 5);
	ck_assert_uint_eq(o.total, 10);
	ck_assert(o.truncated);
	ck_assert_str_eq(o.data, "abcde");
	sb_output_fini(&o);
	ck_assert_ptr_null(o.data);
}
END_TEST

START_TEST(output_cut_does_not_split_utf8)
{
	struct sb_output o;

	ck_assert_int_eq(sb_output_init(&o, 5), 0);
	sb_output_append(&o, "abcd\xc3\xa9", 6);	/* "abcdé": é cut */
	sb_output_finish(&o);
	ck_assert_str_eq(o.data, "abcd");
	ck_assert_uint_eq(o.total, 6);
	sb_output_fini(&o);
	ck_assert_int_eq(sb_output_init(&o, 6), 0);
	sb_output_append(&o, "abcd\xc3\xa9", 6);	/* fits: kept whole */
	sb_output_finish(&o);
	ck_assert_str_eq(o.data, "abcd\xc3\xa9");
	ck_assert(!o.truncated);
	sb_output_fini(&o);
	ck_assert_int_eq(sb_output_init(&o, 3), 0);
	sb_output_append(&o, "\xff\xfe\xfd\xfc", 4);	/* not UTF-8: kept */
	sb_output_finish(&o);
	ck_assert_uint_eq(o.len, 3);
	sb_output_fini(&o);
}
END_TEST

START_TEST(output_zero_cap_counts_only)
{
	struct sb_output o;

	ck_assert_int_eq(sb_output_init(&o, 0), 0);
	sb_output_append(&o, "xyz", 3);
	sb_output_finish(&o);
	ck_assert_uint_eq(o.len, 0);
	ck_assert_uint_eq(o.total, 3);
	ck_assert(o.truncated);
	ck_assert_str_eq(o.data, "");
	sb_output_fini(&o);
}
END_TEST

/* A classic BPF interpreter, for the opcodes either program uses. */
static uint32_t
bpf_run(const struct sock_fprog *f, const struct seccomp_data *d)
{
	uint32_t a = 0, pc = 0, w;
	const struct sock_filter *i;

	while (pc < f->len) {
		i = &f->filter[pc++];
		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			ck_assert_uint_le(i->k + 4, sizeof(*d));
			memcpy(&w, (const char *)d + i->k, 4);
			a = w;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= i->k;
			break;
		case BPF_JMP | BPF_JA:
			pc += i->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & i->k) != 0 ? i->jt : i->jf;
			break;
		case BPF_RET | BPF_K:
			return i->k;
		default:
			ck_abort_msg("opcode 0x%x not interpreted", i->code);
		}
	}
	ck_abort_msg("fell off the end of the program");
	return 0;
}

/*
 * The compact program answers like libseccomp's for every syscall number
 * (and x32 / beyond), three architectures, and the argument values that
 * the argument filters look at, with and without high bits.
 */
START_TEST(compact_filter_answers_like_libseccomp)
{
	static const uint64_t vals[] = {
		0, 1, 2, 10, 16, 38, 40, 0x20000, 0x2000000, 0x4000000,
		0x8000000, 0x10000000, 0x20000000, 0x40000000, 0x7e020000,
		0x100000000ULL | 0x10000000, 0x100000000ULL | 1, 0x8, 0x20008,
		0x40000, 0xffffffff, 0x100000008ULL, 0x5412, 0x541c,
		0x100005412ULL, 0xdeadbeef0000541cULL, ~0ULL, 0x11, 0x01200011,
		/* modes and open flags (set-id bits, O_CREAT, O_TMPFILE) */
		04000, 02000, 06755, 0755, 01777, 0100, 0101, 020000000,
		020200000, 0x100004000ULL, 0xffffffff00000000ULL,
		/* socket protocols: TCP, UDP, ICMPv6, SCTP, L2TP, SMC, MPTCP */
		6, 17, 58, 132, 115, 256, 262,
	};
	/* calls whose answer depends on two arguments together */
	static const struct { const char *name; uint32_t a, b; } pairs[] = {
		{ "open", 1, 2 }, { "openat", 2, 3 },
		{ "socket", 0, 2 }, { "socketpair", 0, 2 },
	};
	uint32_t i, w;
	const uint32_t archs[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, 0 };
	struct sock_fprog ref, compact;
	struct seccomp_data d;
	uint32_t nr, a, v, arg;
	unsigned long checked = 0;

	ck_assert_int_eq(sb_seccomp_reference(&ref), 0);
	ck_assert_int_eq(sb_seccomp_build(&compact), 0);
	ck_assert_uint_lt(compact.len, ref.len);
	for (a = 0; a < 3; a++) {
		for (nr = 0; nr < 1100; nr++) {
			for (arg = 0; arg < 4; arg++) {
				/* args 2, 3 matter on the native arch only */
				if (arg >= 2 && a != 0)
					continue;
				for (v = 0; v < sizeof(vals) / sizeof(vals[0]);
				    v++) {
					memset(&d, 0, sizeof(d));
					d.arch = archs[a];
					d.nr = (int)(nr < 1050 ? nr :
					    0x40000000 + nr - 1050);
					d.args[arg] = vals[v];
					ck_assert_msg(bpf_run(&ref, &d) ==
					    bpf_run(&compact, &d), "arch %x nr "
					    "%d arg%u=%llx", d.arch, d.nr, arg,
					    (unsigned long long)vals[v]);
					checked++;
				}
			}
		}
	}
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		int pnr = seccomp_syscall_resolve_name(pairs[i].name);

		ck_assert_int_ge(pnr, 0);
		for (v = 0; v < sizeof(vals) / sizeof(vals[0]); v++)
			for (w = 0; w < sizeof(vals) / sizeof(vals[0]); w++) {
				memset(&d, 0, sizeof(d));
				d.arch = archs[0];
				d.nr = pnr;
				d.args[pairs[i].a] = vals[v];
				d.args[pairs[i].b] = vals[w];
				ck_assert_msg(bpf_run(&ref, &d) ==
				    bpf_run(&compact, &d), "%s arg%u=%llx "
				    "arg%u=%llx", pairs[i].name, pairs[i].a,
				    (unsigned long long)vals[v], pairs[i].b,
				    (unsigned long long)vals[w]);
				checked++;
			}
	}
	ck_assert_uint_gt(checked, 100000);
	free(ref.filter);
	free(compact.filter);
}
END_TEST

/* The loaded program's answer for syscall name with args a0..a3. */
static uint32_t
answer(const struct sock_fprog *f, const char *name, uint64_t a0,
    uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct seccomp_data d = { .arch = AUDIT_ARCH_X86_64 };

	d.nr = seccomp_syscall_resolve_name(name);
	ck_assert_int_ge(d.nr, 0);
	d.args[0] = a0;
	d.args[1] = a1;
	d.args[2] = a2;
	d.args[3] = a3;
	return bpf_run(f, &d);
}

START_TEST(filter_refuses_setid_modes_and_odd_sockets)
{
	const uint32_t ok = SECCOMP_RET_ALLOW;
	const uint32_t eperm = SECCOMP_RET_ERRNO | EPERM;
	const uint32_t enosys = SECCOMP_RET_ERRNO | ENOSYS;
	struct sock_fprog f = { .len = sb_bpf_len,
	    .filter = (struct sock_filter *)sb_bpf_insns };

	ck_assert_uint_eq(answer(&f, "chmod", 0, 0755, 0, 0), ok);
	ck_assert_uint_eq(answer(&f, "chmod", 0, 04755, 0, 0), eperm);
	ck_assert_uint_eq(answer(&f, "fchmod", 3, 02755, 0, 0), eperm);
	ck_assert_uint_eq(answer(&f, "fchmodat", 3, 0, 06000, 0), eperm);
	ck_assert_uint_eq(answer(&f, "fchmodat2", 3, 0, 04000, 0), eperm);
	ck_assert_uint_eq(answer(&f, "fchmodat2", 3, 0, 0644, 0), ok);
	ck_assert_uint_eq(answer(&f, "creat", 0, 04755, 0, 0), eperm);
	ck_assert_uint_eq(answer(&f, "mknod", 0, 0100000 | 02755, 0, 0),
	    eperm);
	ck_assert_uint_eq(answer(&f, "mknodat", 3, 0, 0010644, 0), ok);
	ck_assert_uint_eq(answer(&f, "open", 0, 0101, 04755, 0), eperm);
	ck_assert_uint_eq(answer(&f, "open", 0, 0101, 0755, 0), ok);
	/* no creating flag: the mode is ignored by the kernel, and here */
	ck_assert_uint_eq(answer(&f, "open", 0, 0, 04755, 0), ok);
	ck_assert_uint_eq(answer(&f, "openat", 3, 0, 020200002, 02700),
	    eperm);
	ck_assert_uint_eq(answer(&f, "openat", 3, 0, 02, 02700), ok);
	ck_assert_uint_eq(answer(&f, "mkdir", 0, 06777, 0, 0), ok);
	ck_assert_uint_eq(answer(&f, "openat2", 3, 0, 0, 24), enosys);
	/* allowed by the allow-list; sb_memfd_deny refuses it without a
	 * memory cgroup */
	ck_assert_uint_eq(answer(&f, "memfd_create", 0, 0, 0, 0), ok);
	ck_assert_uint_eq(answer(&sb_memfd_deny, "memfd_create", 0, 0, 0, 0),
	    enosys);
	ck_assert_uint_eq(answer(&sb_memfd_deny, "memfd_secret", 0, 0, 0, 0),
	    ok);
	ck_assert_uint_eq(answer(&sb_memfd_deny, "getpid", 0, 0, 0, 0), ok);
	ck_assert_uint_eq(answer(&f, "socket", 2, 1, 0, 0), ok);
	ck_assert_uint_eq(answer(&f, "socket", 2, 1, 132, 0), enosys);
	ck_assert_uint_eq(answer(&f, "socket", 10, 1, 262, 0), enosys);
	ck_assert_uint_eq(answer(&f, "socket", 16, 3, 0, 0), enosys);
	ck_assert_uint_eq(answer(&f, "socketpair", 1, 1, 0, 0), ok);
	ck_assert_uint_eq(answer(&f, "socketpair", 16, 3, 0, 0), enosys);
	ck_assert_uint_eq(answer(&f, "socketpair", 38, 5, 0, 0), enosys);
}
END_TEST

START_TEST(embedded_filter_equals_a_fresh_compile)
{
	struct sock_fprog f;

	ck_assert_int_eq(sb_seccomp_build(&f), 0);
	ck_assert_uint_eq(f.len, sb_bpf_len);
	ck_assert_int_eq(memcmp(f.filter, sb_bpf_insns,
	    f.len * sizeof(struct sock_filter)), 0);
	free(f.filter);
}
END_TEST

static int
action_of(const char *name)
{
	size_t i;
	int found = -1;

	for (i = 0; i < sb_nsyscall_rules; i++)
		if (strcmp(sb_syscall_rules[i].name, name) == 0) {
			ck_assert_msg(found < 0, "%s listed twice", name);
			found = (int)sb_syscall_rules[i].action;
		}
	return found;
}

START_TEST(policy_denies_the_named_groups)
{
	static const char *const denied[] = {
		"ptrace", "process_vm_readv", "bpf", "perf_event_open",
		"keyctl", "add_key", "request_key", "userfaultfd",
		"io_uring_setup", "io_uring_enter", "io_uring_register",
		"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
		"fsopen", "fsmount", "move_mount", "open_tree", "mount_setattr",
		"kexec_load", "init_module", "finit_module", "reboot", "swapon",
		"settimeofday", "open_by_handle_at", "sethostname",
	};
	size_t i;

	for (i = 0; i < sizeof(denied) / sizeof(denied[0]); i++)
		ck_assert_msg(action_of(denied[i]) == SB_SYS_EPERM, "%s",
		    denied[i]);
	ck_assert_int_eq(action_of("clone3"), SB_SYS_ENOSYS);
	ck_assert_int_eq(action_of("read"), SB_SYS_ALLOW);
	/* filtered by argument, never listed plainly */
	ck_assert_int_eq(action_of("clone"), -1);
	ck_assert_int_eq(action_of("ioctl"), -1);
	ck_assert_int_eq(action_of("socket"), -1);
}
END_TEST

START_TEST(policy_lists_each_syscall_once)
{
	size_t i;

	for (i = 0; i < sb_nsyscall_rules; i++)
		(void)action_of(sb_syscall_rules[i].name);
}
END_TEST

START_TEST(stage_names_are_unique)
{
	int i, j;

	for (i = 0; i < SB_STAGE_COUNT; i++) {
		ck_assert(sb_stage_name((enum sb_stage)i)[0] != '\0');
		for (j = 0; j < i; j++)
			ck_assert_str_ne(sb_stage_name((enum sb_stage)i),
			    sb_stage_name((enum sb_stage)j));
	}
	ck_assert_str_eq(sb_stage_name(SB_STAGE_COUNT), "unknown");
	ck_assert_str_eq(sb_stage_name(SB_STAGE_CLONE), "clone");
}
END_TEST

/* A memfd holding n bytes of buf. */
static int
memfd_of(const void *buf, size_t n)
{
	int fd = memfd_create("t", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
	return fd;
}

/*
 * The plan as the init gets it (plan_wire.c): its strings come back
 * (the mounts' paths, the cwd, the hostname); a plan of another layout (its header), one cut short and
 * one whose file content claims more bytes than it has are refused.
 */
START_TEST(packed_plan_comes_back_and_a_foreign_one_is_refused)
{
	static const struct sock_fprog none = { 0, NULL };
	const struct sb_filters f = { &none, &none, &none };
	struct sb_ctx *ctx = new_ctx();
	struct sb_request req;
	struct sb_result res;
	struct sb_plan p, *q;
	struct stat st;
	char *bytes;
	size_t i, n;
	int fd, bad;

	base_request(&req);
	ck_assert_int_eq(build(ctx, &req, &p, &res), 0);
	ck_assert_int_eq(sb_plan_pack(&p, &fd), 0);
	ck_assert_int_eq(sb_plan_unpack(fd, &f, &q), 0);
	ck_assert_str_eq(q->cwd, p.cwd);
	ck_assert_str_eq(q->hostname, p.hostname);
	ck_assert_uint_eq(q->nmops, p.nmops);
	for (i = 0; i < p.nmops; i++)
		ck_assert_str_eq(q->mops[i].path, p.mops[i].path);
	ck_assert_ptr_eq(q->filter, &none);
	ck_assert_int_eq(fstat(fd, &st), 0);
	n = (size_t)st.st_size;
	ck_assert_ptr_nonnull(bytes = malloc(n));
	ck_assert_int_eq(pread(fd, bytes, n, 0), (ssize_t)n);
	bytes[8]++;				/* the version */
	bad = memfd_of(bytes, n);
	ck_assert_int_eq(sb_plan_unpack(bad, &f, &q), -EPROTO);
	(void)close(bad);
	bytes[8]--;
	bad = memfd_of(bytes, n / 2);		/* cut short */
	ck_assert_int_eq(sb_plan_unpack(bad, &f, &q), -EINVAL);
	(void)close(bad);
	(void)close(fd);
	free(bytes);
	sb_plan_fini(&p);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

/* A copy of the init program at path, with mode and owner (-1: ours). */
static void
copy_init(const char *path, mode_t mode, uid_t owner)
{
	char cmd[512];

	(void)snprintf(cmd, sizeof(cmd), "cp %s %s", MCP_TEST_INIT, path);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
	if (owner != (uid_t)-1)
		ck_assert_int_eq(chown(path, owner, (gid_t)-1), 0);
}

/*
 * The init runs with every capability of a sandbox's namespaces (and,
 * for a root server, as root on the host's files until it takes the
 * sandbox's ids): a context refuses one that others may write, or that
 * is not there, and names it.
 */
START_TEST(ctx_refuses_an_init_others_may_write)
{
	char path[] = "/tmp/sb-init-XXXXXX";
	struct sb_config cfg = { .init_path = path };
	struct sb_result res;
	struct sb_ctx *ctx = NULL;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	(void)close(fd);
	copy_init(path, 0775, (uid_t)-1);
	ck_assert_int_eq(sb_ctx_new(&cfg, &ctx, &res), -EPERM);
	ck_assert_int_eq(res.failed_stage, SB_STAGE_INIT);
	ck_assert_ptr_nonnull(strstr(res.message, "may be written by others"));
	sb_result_fini(&res);
	ck_assert_int_eq(chmod(path, 0757), 0);
	ck_assert_int_eq(sb_ctx_new(&cfg, &ctx, &res), -EPERM);
	sb_result_fini(&res);
	if (geteuid() == 0) {
		/* another user's, whatever its mode */
		copy_init(path, 0755, 12345);
		ck_assert_int_eq(sb_ctx_new(&cfg, &ctx, &res), -EPERM);
		sb_result_fini(&res);
	}
	copy_init(path, 0755, geteuid());
	ck_assert_msg(sb_ctx_new(&cfg, &ctx, &res) == 0, "%s", res.message);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
	ck_assert_int_eq(unlink(path), 0);
	cfg.init_path = "/nonexistent/mcp-sandbox-init";
	ck_assert_int_eq(sb_ctx_new(&cfg, &ctx, &res), -ENOENT);
	ck_assert_int_eq(res.failed_stage, SB_STAGE_INIT);
	sb_result_fini(&res);
}
END_TEST

START_TEST(limits_have_documented_defaults)
{
	struct sb_limits l;

	sb_limits_default(&l);
	ck_assert_uint_eq(l.stdout_cap, 8000);
	ck_assert_uint_eq(l.stderr_cap, 8000);
	ck_assert_uint_eq(l.wall_ms, 10000);
	ck_assert_uint_gt(l.nproc, 0);
	ck_assert_uint_gt(l.tmp_bytes, 0);
}
END_TEST

static Suite *
sandbox_suite(void)
{
	Suite *s = suite_create("sandbox");
	TCase *t;

	t = tcase_create("paths");
	tcase_add_test(t, path_normal_accepts_only_clean_absolute_paths);
	tcase_add_test(t, path_under_matches_whole_components);
	suite_add_tcase(s, t);
	t = tcase_create("plan");
	tcase_add_test(t, plan_has_readonly_system_binds_proc_tmp_and_dev);
	tcase_add_test(t, plan_parents_come_before_children);
	tcase_add_test(t, plan_sets_every_rlimit);
	tcase_add_test(t, plan_refuses_unsafe_requests);
	tcase_add_test(t, plan_refuses_an_nproc_above_the_kernels_pids);
	tcase_add_test(t, limits_have_documented_defaults);
	tcase_add_test(t, ctx_refuses_an_init_others_may_write);
	tcase_add_test(t, packed_plan_comes_back_and_a_foreign_one_is_refused);
	suite_add_tcase(s, t);
	t = tcase_create("output");
	tcase_add_test(t, output_keeps_cap_and_counts_everything);
	tcase_add_test(t, output_cut_does_not_split_utf8);
	tcase_add_test(t, output_zero_cap_counts_only);
	suite_add_tcase(s, t);
	t = tcase_create("policy");
	/* interprets two programs for ~400k syscall/argument cases: ~6 s in
	 * a release build, over a minute under ASan on a loaded machine */
	tcase_set_timeout(t, 300);
	tcase_add_test(t, embedded_filter_equals_a_fresh_compile);
	tcase_add_test(t, compact_filter_answers_like_libseccomp);
	tcase_add_test(t, filter_refuses_setid_modes_and_odd_sockets);
	tcase_add_test(t, policy_denies_the_named_groups);
	tcase_add_test(t, policy_lists_each_syscall_once);
	tcase_add_test(t, stage_names_are_unique);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sandbox_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
