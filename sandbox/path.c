/*
 * path: the checks every host or sandbox path of ours goes through: a
 * normal absolute path (no ".", ".." or empty component), "below", and
 * the one way a host path given by the server is opened (no symlink
 * anywhere in it, so a path that was checked is the path that is used).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/*
 * 1 if p is absolute and normal: no empty, "." or ".." component, no
 * trailing slash (except "/" itself), shorter than SB_PATH_MAX.
 */
int
sb_path_is_normal(const char *p)
{
	const char *c;
	size_t n;

	if (p == NULL || p[0] != '/' || strlen(p) >= SB_PATH_MAX)
		return 0;
	if (p[1] == '\0')
		return 1;
	for (c = p + 1;;) {
		n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		if (c[n] == '\0')
			return 1;
		c += n + 1;
	}
}

/* 1 if normal path p is dir or lies below it. */
int
sb_path_under(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Open a host path given by the server, refusing symlinks anywhere in it:
 * an O_PATH fd (O_DIRECTORY with want_dir), or -errno. */
int
sb_open_host(const char *path, bool want_dir)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (want_dir ? O_DIRECTORY : 0),
		.resolve = RESOLVE_NO_SYMLINKS,
	};
	int fd;

	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}
