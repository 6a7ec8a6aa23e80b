/*
 * The workspace: the one host directory the tools may touch. Either the
 * user's directory (never removed), or a fresh private one (mode 0700,
 * random name in the server's private parent under $TMPDIR or /tmp, a
 * size-capped tmpfs when workspace_setup() could) per stdio server or
 * HTTP session,
 * removed with everything in it when its owner ends. Removal works on
 * directory fds (openat/unlinkat, O_NOFOLLOW): a symlink planted in the
 * workspace is removed, never followed.
 */
#ifndef WORKSPACE_H
#define WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct workspace {
	char *path;		/* owned: absolute, canonical */
	bool owned;		/* created by us: removed by workspace_free */
	bool counted;		/* one of workspace_setup()'s bound */
};

/*
 * dir non-NULL: use that directory (must exist and be a directory; made
 * absolute and canonical). dir NULL: create a fresh private one. When
 * owner_uid is not (uid_t)-1 (the uid sandboxed programs of a root server
 * run as on the host) a fresh workspace is chowned to it, and a user's
 * directory must already be owned by it. Returns 0 and *ret, or -1 with
 * err.
 */
int workspace_open(const char *dir, uid_t owner_uid, struct workspace **ret,
    char *err, size_t errlen) __attribute__((warn_unused_result));

/*
 * Once at start, before any thread: makes the private parent of fresh
 * workspaces and, with cap_mb > 0 and the rights to, enters the server's
 * own mount namespace so that every fresh workspace is a tmpfs of cap_mb
 * MiB. Without the rights the workspaces are uncapped and
 * workspace_capped() says why. -1 (errno) only if the parent cannot be
 * made. Without workspace_setup the parent is made at the first fresh
 * workspace, uncapped.
 */
int workspace_setup(uint32_t cap_mb, uint32_t total_mb, unsigned reserve);

/*
 * The server-wide bound (issue 25, class 6): with capped workspaces and
 * total_mb > 0, at most total_mb / cap_mb fresh ones exist at once (at
 * least reserve + 1); past it workspace_open() refuses, saying so. Of
 * them, reserve are kept for what is not a session's (skill copies, at
 * most one per sandbox slot): workspace_budget() is the rest, what the
 * HTTP sessions and principals' stateless workspaces share (0: no bound).
 */
unsigned workspace_budget(void);

/* At exit, after every workspace is freed: removes the empty parent. */
void workspace_teardown(void);

/* Where the private parent is made: $TMPDIR when it is an absolute path
 * to a directory, else /tmp. */
const char *workspace_tmp_base(void);

/* The private parent of fresh workspaces, or NULL before it is made. */
const char *workspace_parent(void);

/* true when fresh workspaces are capped (*ret_mb); else *ret_why. */
bool workspace_capped(uint32_t *ret_mb, const char **ret_why);

/* --check: reports whether fresh workspaces can be capped here, and if
 * not, why and what to do (cmd_check_line_fn's shape). Forks a probe. */
typedef void (*workspace_check_fn)(void *arg, const char *layer, bool ok,
    bool required, const char *detail, const char *fix);
void workspace_check(uint32_t cap_mb, workspace_check_fn fn, void *arg);

/*
 * Makes the server's private parent in base (path gets its name) and
 * holds a shared flock on it: the fd, to keep for the server's life (the
 * proof workspace_reap_dead() goes by), or -errno.
 */
int workspace_parent_make(char *path, size_t len, const char *base);

/*
 * Removes from base the private parents (and every workspace in them) of
 * servers that are gone: directories named as workspace_parent_make()
 * names them, owned by our euid, whose flock we can take exclusively.
 * The first fresh workspace's parent, once made, calls it. Returns how
 * many it removed.
 */
int workspace_reap_dead(const char *base);

/*
 * Removes the tree at path (a file, a link, or a directory and everything
 * in it, whatever its modes and depth) without following a link out of it;
 * no unmount. 0, or -errno of the first failure.
 */
int workspace_tree_remove(const char *path);

/* Removes a fresh workspace recursively; keeps a user's. NULL is a no-op. */
void workspace_free(struct workspace *ws);

/*
 * Removes path and everything under it without following any symlink.
 * Returns 0, or -errno of the first failure (it still removes what it can).
 */
int workspace_remove_tree(const char *path);

#endif
