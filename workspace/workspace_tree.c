/*
 * workspace_tree.c: removing a workspace's tree, whatever a sandbox left in
 * it (any depth, any mode), without following a link out of it. Its own
 * file so that workspace.c (which removes its own workspaces) and
 * workspace_reap.c (which removes those of dead servers) both use it and
 * neither uses the other.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workspace.h"

#define WORKSPACE_MAX_DEPTH	64	/* open fds held while removing */
#define WORKSPACE_MAX_PASSES	4096	/* flattening passes: depth/64 each */

static void
note(int *first, int e)
{
	if (*first == 0)
		*first = -e;
}

/*
 * Empties the directory dfd. Directories nested deeper than the limit are
 * renamed into topfd (as "deep.N") and emptied by a later pass.
 */
static void
rm_contents(int dfd, int topfd, int depth, unsigned *moved, int *first_err)
{
	struct dirent *de;
	DIR *d;
	int fd;

	if ((fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0)) < 0 ||
	    (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			(void)close(fd);
		note(first_err, errno);
		return;
	}
	rewinddir(d);	/* a dup shares the offset of an earlier pass */
	while ((de = readdir(d)) != NULL) {
		char tmp[32];	/* "deep." + a counter */
		int cfd;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0)
			continue;
		if (errno != EISDIR) {
			note(first_err, errno);
			continue;
		}
		if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) == 0)
			continue;
		if (errno != ENOTEMPTY && errno != EEXIST && errno != EACCES) {
			note(first_err, errno);
			continue;
		}
		if (depth + 1 >= WORKSPACE_MAX_DEPTH) {
			(void)snprintf(tmp, sizeof(tmp), "deep.%u", (*moved)++);
			if (renameat2(dfd, de->d_name, topfd, tmp,
			    RENAME_NOREPLACE) != 0)
				note(first_err, errno);
			continue;
		}
		cfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			note(first_err, errno);
			continue;
		}
		/* a tool may have left it without write permission */
		(void)fchmod(cfd, 0700);
		rm_contents(cfd, topfd, depth + 1, moved, first_err);
		(void)close(cfd);
		if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) != 0 &&
		    errno != ENOENT)
			note(first_err, errno);
	}
	(void)closedir(d);
}

int
workspace_tree_remove(const char *path)
{
	char *copy, *slash, *name;
	const char *parent;
	unsigned moved = 0, before;
	int pfd = -1, top = -1, first_err = 0, passes = 0;

	if ((copy = strdup(path)) == NULL)
		return -ENOMEM;
	if ((slash = strrchr(copy, '/')) == NULL) {
		parent = ".";
		name = copy;
	} else {
		*slash = '\0';
		parent = slash == copy ? "/" : copy;
		name = slash + 1;
	}
	if (name[0] == '\0' || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0) {
		first_err = -EINVAL;
		goto out;
	}
	if ((pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		first_err = -errno;
		goto out;
	}
	if (unlinkat(pfd, name, 0) == 0)
		goto out;		/* a file or a symlink: gone */
	if (errno != EISDIR) {
		first_err = -errno;
		goto out;
	}
	top = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (top < 0) {
		first_err = -errno;
		goto out;
	}
	(void)fchmod(top, 0700);
	do {
		before = moved;
		rm_contents(top, top, 0, &moved, &first_err);
	} while (moved != before && ++passes < WORKSPACE_MAX_PASSES);
	if (unlinkat(pfd, name, AT_REMOVEDIR) == 0)
		first_err = 0;	/* everything went: earlier hiccups healed */
	else
		note(&first_err, errno);
 out:
	if (top >= 0)
		(void)close(top);
	if (pfd >= 0)
		(void)close(pfd);
	free(copy);
	return first_err;
}
