/*
 * cgroup: one cgroup per run, so that memory (shared memory, memfd and
 * tmpfs pages included, no swap), processes and CPU are bounded for the
 * run as a whole, not per process as rlimits are. This file: the per-run
 * part (a run's cgroup, its limits, its accounting, its removal) and the
 * context's start and end. The setup of each version, finding or making
 * the server's own dir, is in cgroup_v1.c and cgroup_v2.c; what both
 * share, below all three, in cgroup_dir.c (cgroup.h between them).
 *
 * Where: under a directory of the server's own, "mcp-sandbox.<pid>.<n>.<r>"
 * (r random: unique across pid namespaces; the pid is for people, never
 * a proof), holding "run.<seq>" per run. The server holds a shared flock
 * on that directory for its life: the one proof that it lives, which
 * holds across pid namespaces and goes when it dies.
 *
 * A run joins its cgroup before its program can run: on v2 its init is
 * cloned into it (CLONE_INTO_CGROUP), on v1 the parent writes the init's
 * pid into each cgroup.procs before releasing it (exec.c). After the init
 * is reaped, its cgroup is empty and removed. At start, the cgroups of
 * servers that died (SIGKILL) are removed, and only those: a dir of our
 * prefix whose lock we can take exclusively (its server's went with it).
 *
 * Host paths, written for a sandbox: every directory is reached from an fd
 * of the server's own dir (openat, O_NOFOLLOW); a sandbox has no cgroupfs
 * and cannot move itself out (no mount, no capability, seccomp).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroup.h"

/* A run's directory: prefix, then a sequence number. */
#define SB_CG_RUN_PREFIX	"run."
/* Tasks of ours in a run's cgroup besides the program's: the init. */
#define SB_CG_INIT_TASKS	1
/*
 * The CPU bound of a run: one CPU's worth of time per period, whatever
 * its threads, so that a run cannot take every core from the server and
 * the other runs. The period is the kernel's default.
 */
#define SB_CG_CPU_PERIOD_US	100000
#define SB_CG_CPU_QUOTA_US	100000
static void
close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}
static int
write_u64_at(int dirfd, const char *name, uint64_t v)
{
	char s[24];

	(void)snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
	return sb_cg_write_at(dirfd, name, s);
}

/* The value of "key N" in a flat-keyed file (memory.events, ...). */
static uint64_t
keyed_value(int dirfd, const char *file, const char *key)
{
	char buf[SB_CG_READ_MAX], *line, *save = NULL;
	size_t klen = strlen(key);

	if (sb_cg_read_at(dirfd, file, buf, sizeof(buf)) <= 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return strtoull(line + klen + 1, NULL, 10);
	return 0;
}

static uint64_t
value_at(int dirfd, const char *file)
{
	char buf[32];

	if (sb_cg_read_at(dirfd, file, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

static bool
host_has_swap(void)
{
	char buf[512];

	/* the header line only: no swap device or file */
	return sb_cg_read_at(AT_FDCWD, "/proc/swaps", buf, sizeof(buf)) > 0 &&
	    strchr(buf, '\n') != NULL && strchr(buf, '\n')[1] != '\0';
}

static void
cg_release(struct sb_cgroups *cg)
{
	int c;

	if (cg->version == 2 && cg->have[SB_CG_MEMORY])
		sb_cg_v2_restore(cg);
	for (c = 0; c < SB_CG_NCTL; c++) {
		if (cg->dir[c] >= 0 && cg->base[c] >= 0 && cg->version == 1)
			(void)unlinkat(cg->base[c], cg->name, AT_REMOVEDIR);
		close_fd(&cg->dir[c]);
		close_fd(&cg->base[c]);
		cg->have[c] = false;
	}
}

int
sb_cgroup_init(struct sb_cgroups *cg, const struct sb_config *cfg,
    struct sb_result *res)
{
	/* the one count a process shares: its contexts' names differ */
	static atomic_uint contexts;

	struct statfs sf;
	uint64_t rnd;
	int c, rc = 0;

	memset(cg, 0, sizeof(*cg));
	for (c = 0; c < SB_CG_NCTL; c++)
		cg->dir[c] = cg->base[c] = -1;
	atomic_init(&cg->seq, 0);
	if (cfg->cgroup == SB_CGROUP_OFF) {
		sb_cg_why(cg, "leave sb_config.cgroup at SB_CGROUP_AUTO",
		    "turned off (sb_config.cgroup is SB_CGROUP_OFF)");
		return 0;
	}
	/* unique across pid namespaces sharing a base: random bits */
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (uint64_t)time(NULL) << 20;
	(void)snprintf(cg->name, sizeof(cg->name), SB_CG_PREFIX
	    "%ld.%u.%016llx", (long)getpid(), atomic_fetch_add(&contexts, 1),
	    (unsigned long long)rnd);
	if (statfs(SB_CG_MNT, &sf) < 0) {
		sb_cg_why(cg, "mount cgroup2 at " SB_CG_MNT " (a container: "
		    "give it its cgroup filesystem)", "no cgroup filesystem "
		    "at " SB_CG_MNT ": %s", strerror(errno));
		rc = -ENOENT;
	} else if (sf.f_type == CGROUP2_SUPER_MAGIC) {
		cg->version = 2;
		rc = sb_cg_v2_init(cg, cfg);
	} else {
		cg->version = 1;
		rc = sb_cg_v1_init(cg);
	}
	if (rc < 0) {
		cg_release(cg);
		cg->version = 0;
	} else {
		cg->no_swap = !host_has_swap();
	}
	cg->info.cgroup_version = cg->version;
	cg->info.memory = cg->have[SB_CG_MEMORY];
	cg->info.pids = cg->have[SB_CG_PIDS];
	cg->info.cpu = cg->have[SB_CG_CPU];
	cg->info.swap_off = cg->version != 0 && (cg->memsw || cg->no_swap);
	cg->info.tcp_mem = cg->version == 2 ? cg->have[SB_CG_MEMORY] :
	    cg->version == 1 && cg->tcp_mem;
	if (cg->version != 0 && !cg->have[SB_CG_CPU])
		sb_cg_why(cg, cg->version == 1 ? "mount the v1 cpu hierarchy" :
		    "delegate the cpu controller too", "no cpu controller in "
		    "reach: CPU time is bounded by RLIMIT_CPU per process");
	if (rc < 0 && cfg->cgroup == SB_CGROUP_REQUIRED) {
		sb_fail(res, SB_STAGE_CGROUP, -rc, cg->info.why);
		return rc;
	}
	return 0;
}

void
sb_cgroup_fini(struct sb_cgroups *cg)
{
	cg_release(cg);
}

void
sb_cg_run_init(struct sb_cg_run *r)
{
	int c;

	memset(r, 0, sizeof(*r));
	for (c = 0; c < SB_CG_NCTL; c++)
		r->dir[c] = -1;
	r->oom_efd = -1;
}

/*
 * v1 has no memory.oom.group: the kernel kills one process at the limit
 * and the rest run on. An eventfd on memory.oom_control tells exec.c,
 * which then ends the whole run as v2 does.
 */
static int
oom_event(struct sb_cg_run *r)
{
	char line[32];
	int ofd, rc;

	if ((r->oom_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return -errno;
	if ((ofd = openat(r->dir[SB_CG_MEMORY], "memory.oom_control",
	    O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	(void)snprintf(line, sizeof(line), "%d %d", r->oom_efd, ofd);
	rc = sb_cg_write_at(r->dir[SB_CG_MEMORY], "cgroup.event_control", line);
	(void)close(ofd);
	return rc;
}

/* The limits of one controller's run cgroup (v1), or all of them (v2). */
static int
set_limits(struct sb_cgroups *cg, int c, int fd, struct sb_cg_run *r,
    const char **what)
{
	char cpu[48];
	int rc;

	if (cg->version == 2) {
		*what = "memory.max";
		if ((rc = write_u64_at(fd, "memory.max", r->mem_bytes)) < 0)
			return rc;
		*what = "memory.swap.max";
		if (cg->memsw && (rc = sb_cg_write_at(fd, "memory.swap.max",
		    "0")) < 0)
			return rc;
		/* out of memory: the whole run goes, not one process */
		*what = "memory.oom.group";
		if ((rc = sb_cg_write_at(fd, "memory.oom.group", "1")) < 0)
			return rc;
		*what = "pids.max";
		if ((rc = write_u64_at(fd, "pids.max", r->pids_max)) < 0)
			return rc;
		*what = "cpu.max";
		(void)snprintf(cpu, sizeof(cpu), "%u %u", SB_CG_CPU_QUOTA_US,
		    SB_CG_CPU_PERIOD_US);
		if (cg->have[SB_CG_CPU] && (rc = sb_cg_write_at(fd, "cpu.max",
		    cpu)) < 0)
			return rc;
		return 0;
	}
	switch (c) {
	case SB_CG_MEMORY:
		*what = "memory.limit_in_bytes";
		if ((rc = write_u64_at(fd, "memory.limit_in_bytes",
		    r->mem_bytes)) < 0)
			return rc;
		/* memory + swap no more than memory: no swap */
		*what = "memory.memsw.limit_in_bytes";
		if (cg->memsw && (rc = write_u64_at(fd,
		    "memory.memsw.limit_in_bytes", r->mem_bytes)) < 0)
			return rc;
		if (!cg->memsw)
			(void)sb_cg_write_at(fd, "memory.swappiness", "0");
		/*
		 * TCP buffers (its side of the proxy's connections): v1
		 * charges them to the cgroup only once this limit is set,
		 * and then apart from the rest; the memory figure again.
		 */
		*what = "memory.kmem.tcp.limit_in_bytes";
		if (cg->tcp_mem && (rc = write_u64_at(fd,
		    "memory.kmem.tcp.limit_in_bytes", r->mem_bytes)) < 0)
			return rc;
		return 0;
	case SB_CG_PIDS:
		*what = "pids.max";
		return write_u64_at(fd, "pids.max", r->pids_max);
	case SB_CG_CPU:
		*what = "cpu.cfs_quota_us";
		if ((rc = write_u64_at(fd, "cpu.cfs_period_us",
		    SB_CG_CPU_PERIOD_US)) < 0)
			return rc;
		return write_u64_at(fd, "cpu.cfs_quota_us", SB_CG_CPU_QUOTA_US);
	default:
		return -EINVAL;
	}
}

int
sb_cg_run_make(struct sb_cgroups *cg, const struct sb_limits *l,
    struct sb_cg_run *r, struct sb_result *res)
{
	const char *what = "mkdir";
	char msg[160];
	int c, fd, rc;

	sb_cg_run_init(r);
	if (cg->version == 0)
		return 0;
	(void)snprintf(r->name, sizeof(r->name), SB_CG_RUN_PREFIX "%u",
	    atomic_fetch_add(&cg->seq, 1));
	r->mem_bytes = l->memory_bytes;
	r->pids_max = l->nproc + SB_CG_INIT_TASKS;
	r->made = true;
	for (c = 0; c < SB_CG_NCTL; c++) {
		if (cg->dir[c] < 0 || (cg->version == 1 && !cg->have[c]))
			continue;
		what = "mkdir";
		if (mkdirat(cg->dir[c], r->name, 0755) < 0 ||
		    (fd = sb_cg_open_dir_at(cg->dir[c], r->name)) < 0) {
			rc = -errno;
			goto fail;
		}
		r->dir[c] = fd;
		if ((rc = set_limits(cg, c, fd, r, &what)) < 0)
			goto fail;
	}
	what = "cgroup.event_control";
	c = SB_CG_MEMORY;	/* the message's; the loop left c past all */
	if (cg->version == 1 && (rc = oom_event(r)) < 0)
		goto fail;
	return 0;
 fail:
	(void)snprintf(msg, sizeof(msg), "%.40s %.63s/%.31s", what,
	    cg->version == 1 ?
	    sb_cg_ctl_names[c] : cg->name, r->name);
	sb_fail(res, SB_STAGE_CGROUP, -rc, msg);
	sb_cg_run_remove(cg, r);
	return rc;
}

int
sb_cg_run_attach(struct sb_cgroups *cg, struct sb_cg_run *r, pid_t pid,
    struct sb_result *res)
{
	char msg[128];
	int c, rc;

	for (c = 0; c < SB_CG_NCTL; c++) {
		if (r->dir[c] < 0)
			continue;
		if ((rc = write_u64_at(r->dir[c], "cgroup.procs",
		    (uint64_t)pid)) < 0) {
			(void)snprintf(msg, sizeof(msg), "joining %.63s/%.31s",
			    cg->version == 1 ? sb_cg_ctl_names[c] : cg->name,
			    r->name);
			sb_fail(res, SB_STAGE_CGROUP, -rc, msg);
			return rc;
		}
	}
	return 0;
}

/*
 * oom_fired: the v1 OOM eventfd woke the supervisor, which then killed the
 * run; the kernel may then find its victim already dying and count no
 * OOM kill, yet the run did reach its limit.
 */
void
sb_cg_run_finish(struct sb_cgroups *cg, struct sb_cg_run *r,
    bool oom_fired, struct sb_result *res)
{
	int mem = r->dir[SB_CG_MEMORY];
	int pids = cg->version == 2 ? mem : r->dir[SB_CG_PIDS];

	if (!r->made)
		return;
	res->cgroup = true;
	res->memory_limit_bytes = r->mem_bytes;
	res->pids_limit = r->pids_max - SB_CG_INIT_TASKS;
	if (cg->version == 2) {
		res->memory_peak_bytes = value_at(mem, "memory.peak");
		res->oom_kills = (uint32_t)keyed_value(mem, "memory.events",
		    "oom_kill");
		/* "oom": the limit was reached and an allocation would fail */
		res->oom = res->oom_kills > 0 ||
		    keyed_value(mem, "memory.events", "oom") > 0;
	} else {
		res->memory_peak_bytes = value_at(mem,
		    "memory.max_usage_in_bytes");
		res->oom_kills = (uint32_t)keyed_value(mem,
		    "memory.oom_control", "oom_kill");
		res->oom = res->oom_kills > 0 || oom_fired;
	}
	if (pids >= 0)
		res->forks_refused = keyed_value(pids, "pids.events", "max");
	sb_cg_run_remove(cg, r);
}

uint64_t
sb_cg_run_memory(const struct sb_cgroups *cg, const struct sb_cg_run *r)
{
	if (!r->made)
		return 0;
	return value_at(r->dir[SB_CG_MEMORY], cg->version == 2 ?
	    "memory.current" : "memory.usage_in_bytes");
}

void
sb_cg_run_remove(struct sb_cgroups *cg, struct sb_cg_run *r)
{
	int c;

	if (!r->made)
		return;
	for (c = 0; c < SB_CG_NCTL; c++) {
		if (r->dir[c] < 0)
			continue;
		if (unlinkat(cg->dir[c], r->name, AT_REMOVEDIR) < 0 &&
		    errno == EBUSY) {
			sb_cg_kill_all(cg->version, r->dir[c]);
			(void)sb_cg_remove_when_empty(cg->dir[c], r->name);
		}
		close_fd(&r->dir[c]);
	}
	close_fd(&r->oom_efd);
	r->made = false;
}
