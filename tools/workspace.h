/*
 * The workspace: the one host directory the tools may touch. Either the
 * user's directory (never removed), or a fresh private one (mode 0700,
 * random name under $TMPDIR or /tmp) per stdio server or HTTP session,
 * removed with everything in it when its owner ends. Removal works on
 * directory fds (openat/unlinkat, O_NOFOLLOW): a symlink planted in the
 * workspace is removed, never followed.
 */
#ifndef WORKSPACE_H
#define WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct workspace {
	char *path;		/* owned: absolute, canonical */
	bool owned;		/* created by us: removed by workspace_free */
};

/*
 * dir non-NULL: use that directory (must exist and be a directory; made
 * absolute and canonical). dir NULL: create a fresh private one. When
 * owner_uid is not (uid_t)-1 a fresh workspace is chowned to it (the uid
 * sandboxed programs run as on the host). Returns 0 and *ret, or -1 with
 * err.
 */
int workspace_open(const char *dir, uid_t owner_uid, struct workspace **ret,
    char *err, size_t errlen) __attribute__((warn_unused_result));

/* Removes a fresh workspace recursively; keeps a user's. NULL is a no-op. */
void workspace_free(struct workspace *ws);

/*
 * Removes path and everything under it without following any symlink.
 * Returns 0, or -errno of the first failure (it still removes what it can).
 */
int workspace_remove_tree(const char *path);

#endif
