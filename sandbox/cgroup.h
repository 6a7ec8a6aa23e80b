/*
 * cgroup.h: between cgroup.c (the per-run part), the setup of each
 * version (cgroup_v1.c, cgroup_v2.c) and what all three share
 * (cgroup_dir.c: small-file access, the server dir's making and
 * reaping). Internal to those four files.
 */
#ifndef SB_CGROUP_H
#define SB_CGROUP_H

#include <stdbool.h>
#include <sys/types.h>

#include "internal.h"

/* Where the cgroup filesystems are mounted (every distribution agrees). */
#define SB_CG_MNT		"/sys/fs/cgroup"
/*
 * The server's directory: prefix, then "<pid>.<n>.<64 random bits>", n
 * counting the contexts this process made (a test or a benchmark holds
 * several at once). The name proves nothing; the dir's flock does.
 */
#define SB_CG_PREFIX		"mcp-sandbox."
/* v2: the leaf the server moves itself into. */
#define SB_CG_SERVER_LEAF	"server"
/* Bytes read of /proc/self/cgroup and of a cgroup's small files. */
#define SB_CG_READ_MAX		4096

extern const char *const sb_cg_ctl_names[SB_CG_NCTL];

/* cgroup_dir.c */
/* A small file at dirfd/name, NUL-terminated: bytes or -errno. */
ssize_t sb_cg_read_at(int dirfd, const char *name, char *buf, size_t len);
/* s in one write(): 0 or -errno. */
int sb_cg_write_at(int dirfd, const char *name, const char *s);
int sb_cg_open_dir_at(int dirfd, const char *name);
bool sb_cg_populated(int dirfd);
/* Every process in dirfd's cgroup (and below) killed. */
void sb_cg_kill_all(int version, int dirfd);
/* parent/name removed once empty, waiting a bounded time: 0 or -errno. */
int sb_cg_remove_when_empty(int parent, const char *name);
/* This process's cgroup in the hierarchy of ctl (v1) or v2 (NULL). */
int sb_cg_own_path(const char *ctl, char *mnt, size_t mntlen, char *path,
    size_t pathlen);
/* A cgroup dir by absolute path, on a filesystem of magic: fd or -errno. */
int sb_cg_open_fs(const char *path, long magic);
/* The server's dir under base, made and flocked shared: fd or -errno. */
int sb_cg_make_own_dir(int base, const char *name);
/* Dead servers' dirs under base removed (all but own): how many. */
unsigned sb_cg_clean_stale(int version, int base, const char *own);
/* Why there is no cgroup (or no cpu), and what to do: cg->info. */
void sb_cg_why(struct sb_cgroups *cg, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * cgroup_v1.c, cgroup_v2.c: the server's own dir (cg->name) found or
 * made, locked and given its controllers; cg->dir, base, have, memsw and
 * info.where set. 0, or -errno with sb_cg_why() said.
 */
int sb_cg_v1_init(struct sb_cgroups *cg);
int sb_cg_v2_init(struct sb_cgroups *cg, const struct sb_config *cfg);
/* v2, at the end: the base left as it was found (cgroup_v2.c). */
void sb_cg_v2_restore(struct sb_cgroups *cg);

#endif
