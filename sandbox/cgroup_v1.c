/*
 * cgroup_v1: the server's own dir on cgroup v1, in the memory, pids and
 * (if there) cpu hierarchies, nested under the cgroup the server runs in
 * in each, never elsewhere. Root only: v1 has no delegation to a uid.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

static const char fix_v1_root[] = "run the server as root (its tools still "
    "run as uid 65534); or on a cgroup v2 host, under systemd with "
    "Delegate=yes";

/* v1: the server's dir under its own cgroup in each hierarchy. */
int
sb_cg_v1_init(struct sb_cgroups *cg)
{
	char mnt[128], own[SB_PATH_MAX], path[SB_PATH_MAX + 160];
	int c, fd, w = 0;

	for (c = 0; c < SB_CG_NCTL; c++) {
		if (sb_cg_own_path(sb_cg_ctl_names[c], mnt, sizeof(mnt), own,
		    sizeof(own)) < 0) {
			if (c == SB_CG_CPU)
				continue;
			sb_cg_why(cg, "boot with cgroup v2 "
			    "(systemd.unified_cgroup_hierarchy=1), or a kernel "
			    "with the v1 controller (CONFIG_MEMCG_V1)",
			    "cgroup v1, but no %s hierarchy holds this process",
			    sb_cg_ctl_names[c]);
			return -ENOENT;
		}
		(void)snprintf(path, sizeof(path), "%s/%s%s", SB_CG_MNT, mnt,
		    strcmp(own, "/") == 0 ? "" : own);
		if ((fd = sb_cg_open_fs(path, CGROUP_SUPER_MAGIC)) < 0) {
			if (c == SB_CG_CPU)
				continue;
			sb_cg_why(cg, "mount the cgroup v1 hierarchies at "
			    SB_CG_MNT, "cgroup v1: cannot open %s: %s", path,
			    strerror(-fd));
			return fd;
		}
		cg->base[c] = fd;
		cg->info.stale_removed += sb_cg_clean_stale(1, fd, cg->name);
		if ((cg->dir[c] = sb_cg_make_own_dir(fd, cg->name)) < 0) {
			int e = -cg->dir[c];

			cg->dir[c] = -1;

			if (c == SB_CG_CPU)
				continue;
			sb_cg_why(cg, e == EACCES || e == EPERM || e == EROFS ?
			    fix_v1_root : "see the error", "cgroup v1: cannot "
			    "make a cgroup in %s as uid %u: %s", path,
			    (unsigned)geteuid(), strerror(e));
			return -e;
		}
		cg->have[c] = true;
		if ((size_t)w < sizeof(cg->info.where))
			w += snprintf(cg->info.where + w,
			    sizeof(cg->info.where) - (size_t)w, "%s%s:%s/%s",
			    w > 0 ? ", " : "", mnt, strcmp(own, "/") == 0 ? "" :
			    own, cg->name);
		if ((size_t)w >= sizeof(cg->info.where))
			w = (int)sizeof(cg->info.where) - 1;
	}
	if (cg->have[SB_CG_CPU] && faccessat(cg->dir[SB_CG_CPU],
	    "cpu.cfs_quota_us", W_OK, 0) < 0)
		cg->have[SB_CG_CPU] = false;
	cg->memsw = faccessat(cg->dir[SB_CG_MEMORY],
	    "memory.memsw.limit_in_bytes", W_OK, 0) == 0;
	cg->tcp_mem = faccessat(cg->dir[SB_CG_MEMORY],
	    "memory.kmem.tcp.limit_in_bytes", W_OK, 0) == 0;
	return 0;
}
