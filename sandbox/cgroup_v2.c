/*
 * cgroup_v2: the server's own dir on cgroup v2, in a delegated subtree:
 * the server's own cgroup (systemd Delegate=yes, or a cgroup namespace's
 * root) or a directory the policy names. The kernel lets a cgroup with
 * processes hand controllers to none of its children, so the server
 * first moves itself into a leaf, "<dir>/server", and moves back at the
 * end.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cgroup.h"

static const char fix_v2[] = "systemd: Delegate=yes in the server's unit; "
    "a container: a cgroup namespace of its own with /sys/fs/cgroup "
    "writable (Docker mounts it read-only unless --privileged, "
    "moby/moby#42040; Kubernetes: writable cgroups, KEP-5474, GKE "
    "writableCgroups); or a directory delegated to the server's uid, "
    "named by --cgroup-parent";


/* Whether the controller name is in a space-separated list. */
static bool
in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/*
 * v2: a process that made a context before sits in that context's leaf,
 * <base>/mcp-sandbox.<...>/server (or a child of such a process does):
 * its base is the one to use again, not the leaf (own is cut to it in
 * place).
 */
static void
own_leaf_parent(char *own)
{
	char *leaf, *dir;

	if ((leaf = strrchr(own, '/')) == NULL || leaf == own ||
	    strcmp(leaf + 1, SB_CG_SERVER_LEAF) != 0)
		return;
	*leaf = '\0';
	if ((dir = strrchr(own, '/')) != NULL && strncmp(dir + 1,
	    SB_CG_PREFIX, sizeof(SB_CG_PREFIX) - 1) == 0) {
		*(dir == own ? dir + 1 : dir) = '\0';
		return;
	}
	*leaf = '/';
}

/*
 * The base (path gets it): the named directory, or the server's own
 * cgroup, which must be delegated to it. Its fd, or -errno.
 */
static int
v2_base(struct sb_cgroups *cg, const struct sb_config *cfg, char *path,
    size_t len)
{
	char own[SB_PATH_MAX], mnt[8], xv[8];
	struct stat st;
	bool delegated;
	int base;

	if (sb_cg_own_path(NULL, mnt, sizeof(mnt), own, sizeof(own)) < 0) {
		sb_cg_why(cg, fix_v2, "cgroup v2, but /proc/self/cgroup names "
		    "no cgroup of this process");
		return -ENOENT;
	}
	own_leaf_parent(own);
	if (cfg->cgroup_parent != NULL) {
		if (!sb_path_is_normal(cfg->cgroup_parent) ||
		    !sb_path_under(cfg->cgroup_parent, SB_CG_MNT) ||
		    strlen(cfg->cgroup_parent) >= len) {
			sb_cg_why(cg, "name an absolute, normalised directory "
			    "under " SB_CG_MNT, "cgroup_parent %s is not a "
			    "directory under " SB_CG_MNT, cfg->cgroup_parent);
			return -EINVAL;
		}
		(void)snprintf(path, len, "%s", cfg->cgroup_parent);
	} else {
		(void)snprintf(path, len, "%s%s", SB_CG_MNT,
		    strcmp(own, "/") == 0 ? "" : own);
	}
	if ((base = sb_cg_open_fs(path, CGROUP2_SUPER_MAGIC)) < 0) {
		sb_cg_why(cg, fix_v2, "cgroup v2: cannot open %s: %s", path,
		    strerror(-base));
		return base;
	}
	/*
	 * Named, a namespace's (or the host's) root, marked by systemd
	 * (trusted.* is readable by root only), or, for an unprivileged
	 * server, chowned to it the way systemd delegates to a User=.
	 */
	delegated = cfg->cgroup_parent != NULL || strcmp(own, "/") == 0 ||
	    getxattr(path, "trusted.delegate", xv, sizeof(xv)) > 0 ||
	    getxattr(path, "user.delegate", xv, sizeof(xv)) > 0 ||
	    (geteuid() != 0 && fstatat(base, "cgroup.subtree_control", &st,
	    0) == 0 && st.st_uid == geteuid());
	if (!delegated) {
		sb_cg_why(cg, fix_v2, "cgroup v2: the server's cgroup %s is "
		    "not delegated to it (no Delegate=yes, not a cgroup "
		    "namespace of its own)", path);
		(void)close(base);
		return -EPERM;
	}
	return base;
}

/*
 * In the base at path: our dir, flocked, and its leaf; the server moved
 * into the leaf; memory and pids (and cpu, if ctls offers it) handed
 * down to the dir's children. 0 or -errno, and then nothing is left.
 */
static int
v2_enter(struct sb_cgroups *cg, int base, const char *path,
    const char *ctls)
{
	char on[512];
	int dir, leaf = -1, rc;

	if ((dir = sb_cg_make_own_dir(base, cg->name)) < 0 ||
	    mkdirat(dir, SB_CG_SERVER_LEAF, 0755) < 0 ||
	    (leaf = sb_cg_open_dir_at(dir, SB_CG_SERVER_LEAF)) < 0) {
		rc = dir < 0 ? dir : -errno;
		sb_cg_why(cg, fix_v2, "cgroup v2: cannot make a cgroup in %s "
		    "as uid %u: %s", path, (unsigned)geteuid(), strerror(-rc));
		goto fail;
	}
	/* what the base handed down before us, to leave it so (restore) */
	if (sb_cg_read_at(base, "cgroup.subtree_control", on, sizeof(on)) < 0)
		on[0] = '\0';
	cg->base_had_memory = in_list(on, "memory");
	cg->base_had_pids = in_list(on, "pids");
	cg->base_had_cpu = in_list(on, "cpu");
	/* "0": the writer's own process, every thread of it */
	if ((rc = sb_cg_write_at(leaf, "cgroup.procs", "0")) < 0) {
		sb_cg_why(cg, fix_v2, "cgroup v2: cannot move the server into "
		    "%s/%s/" SB_CG_SERVER_LEAF ": %s", path, cg->name,
		    strerror(-rc));
		goto fail;
	}
	if ((rc = sb_cg_write_at(base, "cgroup.subtree_control",
	    "+memory +pids")) < 0 || (rc = sb_cg_write_at(dir,
	    "cgroup.subtree_control", "+memory +pids")) < 0) {
		sb_cg_why(cg, "give the server a cgroup of its own (systemd "
		    "Delegate=yes does)", "cgroup v2: cannot enable memory and "
		    "pids for the children of %s: %s%s", path, strerror(-rc),
		    rc == -EBUSY ? " (other processes live in it: the kernel "
		    "hands controllers only to cgroups without processes)" :
		    "");
		/* back where we were, if we can */
		(void)sb_cg_write_at(base, "cgroup.procs", "0");
		goto fail;
	}
	cg->dir[SB_CG_MEMORY] = dir;
	cg->have[SB_CG_MEMORY] = cg->have[SB_CG_PIDS] = true;
	cg->have[SB_CG_CPU] = in_list(ctls, "cpu") &&
	    sb_cg_write_at(base, "cgroup.subtree_control", "+cpu") == 0 &&
	    sb_cg_write_at(dir, "cgroup.subtree_control", "+cpu") == 0;
	cg->memsw = faccessat(leaf, "memory.swap.max", W_OK, 0) == 0;
	(void)close(leaf);
	return 0;
 fail:
	if (leaf >= 0) {
		(void)close(leaf);
		(void)unlinkat(dir, SB_CG_SERVER_LEAF, AT_REMOVEDIR);
	}
	if (dir >= 0) {
		(void)unlinkat(base, cg->name, AT_REMOVEDIR);
		(void)close(dir);
	}
	return rc;
}

/*
 * v2: the base is delegated to us (or named), has the controllers, and
 * we move into <base>/<name>/server so that both can hand them down.
 */
int
sb_cg_v2_init(struct sb_cgroups *cg, const struct sb_config *cfg)
{
	char path[SB_PATH_MAX + 32], ctls[512];
	ssize_t n;
	int base, rc;

	if ((base = v2_base(cg, cfg, path, sizeof(path))) < 0)
		return base;
	cg->base[SB_CG_MEMORY] = base;
	if ((n = sb_cg_read_at(base, "cgroup.controllers", ctls,
	    sizeof(ctls))) < 0)
		(void)snprintf(ctls, sizeof(ctls), "unreadable, %s",
		    strerror((int)-n));
	if (n < 0 || !in_list(ctls, "memory") || !in_list(ctls, "pids")) {
		sb_cg_why(cg, fix_v2, "cgroup v2: %s does not offer the memory "
		    "and pids controllers (cgroup.controllers: %s)", path,
		    ctls);
		return -ENOENT;
	}
	cg->info.stale_removed = sb_cg_clean_stale(2, base, cg->name);
	if ((rc = v2_enter(cg, base, path, ctls)) < 0)
		return rc;
	(void)snprintf(cg->info.where, sizeof(cg->info.where), "%.190s/%.60s",
	    path, cg->name);
	return 0;
}

/*
 * v2, at the end: leave the base as we found it, so that whoever placed
 * us there can place a process there again (systemd starts ExecStart in
 * the unit's cgroup after ExecStartPre=mcp-sandbox --check, and the
 * kernel refuses a process in a cgroup that hands controllers down): the
 * controllers we turned on off again, ourselves back in the base, our
 * leaf and dir gone. A step the kernel refuses (another server shares a
 * named base) leaves the rest, which the next start removes as stale.
 */
void
sb_cg_v2_restore(struct sb_cgroups *cg)
{
	int base = cg->base[SB_CG_MEMORY], dir = cg->dir[SB_CG_MEMORY];
	char off[32] = "";

	if (base < 0 || dir < 0)
		return;
	(void)sb_cg_write_at(dir, "cgroup.subtree_control",
	    "-cpu -memory -pids");
	if (!cg->base_had_cpu)
		(void)strcat(off, "-cpu ");
	if (!cg->base_had_memory)
		(void)strcat(off, "-memory ");
	if (!cg->base_had_pids)
		(void)strcat(off, "-pids");
	if (off[0] != '\0' && sb_cg_write_at(base, "cgroup.subtree_control",
	    off) < 0)
		return;
	if (sb_cg_write_at(base, "cgroup.procs", "0") < 0)
		return;
	(void)unlinkat(dir, SB_CG_SERVER_LEAF, AT_REMOVEDIR);
	(void)unlinkat(base, cg->name, AT_REMOVEDIR);
}
