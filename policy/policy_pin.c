/*
 * The databases of a policy, pinned at finalize: the directory holding
 * each opened once (O_PATH), and the file's identity then. query_sqlite
 * (tools/sqlite_vfs.c) opens the file and its journals only beneath that
 * directory fd and only as that inode: a sandbox that can write the
 * directory cannot point the server at another file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "policy_internal.h"

int
policy_pin_database(struct policy_database *d, char *err, size_t errlen)
{
	char *dir, *slash;
	struct stat st;
	int dfd;

	if ((dir = strdup(d->path)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((slash = strrchr(dir, '/')) == NULL || slash[1] == '\0') {
		(void)snprintf(err, errlen, "database '%s': %s is not an "
		    "absolute file path", d->name, d->path);
		free(dir);
		return -1;
	}
	if ((d->base = strdup(slash + 1)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		free(dir);
		return -1;
	}
	if (slash == dir)
		slash[1] = '\0';	/* a file in / */
	else
		*slash = '\0';
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstatat(dfd, d->base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		(void)snprintf(err, errlen, "database '%s': %s: %s", d->name,
		    d->path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		(void)snprintf(err, errlen, "database '%s': %s is not a "
		    "regular file", d->name, d->path);
		goto fail;
	}
	free(dir);
	d->dirfd = dfd;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->pinned = true;
	return 0;
 fail:
	if (dfd >= 0)
		(void)close(dfd);
	free(dir);
	free(d->base);
	d->base = NULL;
	return -1;
}

void
policy_unpin_database(struct policy_database *d)
{
	if (d->pinned)
		(void)close(d->dirfd);
	free(d->base);
	d->base = NULL;
	d->pinned = false;
}

