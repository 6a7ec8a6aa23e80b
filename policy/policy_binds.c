/*
 * The binds of programs outside the system directories, and of the paths
 * a policy allows (see policy_binds.h). Nothing here runs a program: an ELF file
 * is read (PT_INTERP, DT_NEEDED, DT_RUNPATH/DT_RPATH) and its libraries
 * are looked up the way ld.so looks them up; a "#!" line names the
 * interpreter; a CPython finds its standard library by the landmark its
 * own start-up looks for (PREFIX/lib/pythonX.Y/os.py beside PREFIX/bin).
 * Running a candidate interpreter to ask it would run code we have not
 * decided to trust yet, unsandboxed, at every start.
 *
 * Reading a file here is reading a host file as the server, at start:
 * every file is opened O_NOFOLLOW|O_NONBLOCK on its canonical path and
 * must be a regular file; every length and offset read from it is checked
 * against the file's size before use.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "policy.h"
#include "policy_binds.h"
#include "policy_internal.h"

#define BINDS_MAX_SHEBANG	4	/* #! levels; the kernel's own bound */
#define BINDS_MAX_DEPTH		8	/* library nesting followed */
#define BINDS_MAX_NEEDED	64	/* DT_NEEDED entries per object */
#define BINDS_MAX_PATHS		16	/* RUNPATH/RPATH entries per object */
#define BINDS_SHEBANG_LINE	256	/* the kernel reads at most this */
#define BINDS_MAX_PHDRS		256	/* program headers per ELF file */
#define BINDS_MAX_DYN		4096	/* dynamic entries per ELF file */

/* Where every sandbox already sees the host's files (read-only). */
static const char *const system_dirs[] = {
	"/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/lib32/", "/etc/",
};

/* ld.so's default library directories here (after its cache, whose
 * directories are these on Debian): all inside system_dirs. */
static const char *const default_lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
	"/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
};

bool
binds_system_path(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (strncmp(path, system_dirs[i], strlen(system_dirs[i])) == 0)
			return true;
	return false;
}

void
prog_binds_free(struct prog_binds *b)
{
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++) {
		free(b->b[i].host);
		free(b->b[i].inside);
	}
	free(b);
}

/* Adds host (canonical) seen inside at inside, once. */
static int
add(struct prog_binds *b, const char *host, const char *inside, char *err,
    size_t errlen)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (strcmp(b->b[i].inside, inside) == 0)
			return 0;
	if (b->n == BINDS_MAX_PROG) {
		(void)snprintf(err, errlen, "it needs more than %d files "
		    "outside the system directories (the last: %s); install "
		    "it under /usr or /opt and name its directory in "
		    "allow_read", BINDS_MAX_PROG, host);
		return -1;
	}
	if ((b->b[b->n].host = strdup(host)) == NULL ||
	    (b->b[b->n].inside = strdup(inside)) == NULL) {
		free(b->b[b->n].host);
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	b->n++;
	return 0;
}

/* A regular file opened without following a final symlink; -1/errno. */
static int
open_regular(const char *path, off_t *ret_size)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		(void)close(fd);
		errno = EINVAL;
		return -1;
	}
	*ret_size = st.st_size;
	return fd;
}

static bool
read_at(int fd, off_t size, void *buf, size_t len, uint64_t off)
{
	if (off > (uint64_t)size || len > (uint64_t)size - off)
		return false;
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* The ELF facts we use; strings owned. */
struct elf_info {
	char *interp;				/* PT_INTERP, or NULL */
	char *needed[BINDS_MAX_NEEDED];
	size_t nneeded;
	char *paths;		/* DT_RUNPATH, else DT_RPATH ("a:b"), or NULL */
};

static void
elf_info_fini(struct elf_info *e)
{
	size_t i;

	free(e->interp);
	for (i = 0; i < e->nneeded; i++)
		free(e->needed[i]);
	free(e->paths);
	memset(e, 0, sizeof(*e));
}

/* A NUL-terminated string of at most PATH_MAX at file offset off. */
static char *
read_str(int fd, off_t size, uint64_t off)
{
	char buf[PATH_MAX];
	ssize_t n;
	char *nul;

	if (off >= (uint64_t)size)
		return NULL;
	n = pread(fd, buf, sizeof(buf), (off_t)off);
	if (n <= 0 || (nul = memchr(buf, '\0', (size_t)n)) == NULL)
		return NULL;
	return strdup(buf);
}

/*
 * Reads an ELF64 little-endian file (the only kind this build runs): 1 if
 * it is one (e filled), 0 if it is not ELF, -1 if it is ELF we cannot
 * read (err).
 */
static int
read_elf(const char *path, struct elf_info *e, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph, loads[BINDS_MAX_PHDRS];
	Elf64_Dyn dyn;
	uint64_t dyn_off = 0, dyn_size = 0, strtab = 0, strsz = 0;
	uint64_t needed[BINDS_MAX_NEEDED], runpath = 0, rpath = 0;
	bool has_runpath = false, has_rpath = false;
	size_t nloads = 0, nneeded = 0, i, j;
	off_t size;
	int fd, rc = -1;

	memset(e, 0, sizeof(*e));
	if ((fd = open_regular(path, &size)) < 0) {
		(void)snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!read_at(fd, size, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		rc = 0;
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum > BINDS_MAX_PHDRS) {
		(void)snprintf(err, errlen, "%s is not an x86-64 ELF64 "
		    "program this sandbox runs", path);
		goto out;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (!read_at(fd, size, &ph, sizeof(ph), eh.e_phoff +
		    i * sizeof(ph)))
			goto bad;
		if (ph.p_type == PT_INTERP && e->interp == NULL) {
			if (ph.p_filesz == 0 || ph.p_filesz > PATH_MAX ||
			    (e->interp = read_str(fd, size, ph.p_offset)) ==
			    NULL)
				goto bad;
		} else if (ph.p_type == PT_DYNAMIC) {
			dyn_off = ph.p_offset;
			dyn_size = ph.p_filesz;
		} else if (ph.p_type == PT_LOAD)
			loads[nloads++] = ph;
	}
	for (i = 0; dyn_size != 0 && i < dyn_size / sizeof(dyn) &&
	    i < BINDS_MAX_DYN; i++) {
		if (!read_at(fd, size, &dyn, sizeof(dyn), dyn_off +
		    i * sizeof(dyn)))
			goto bad;
		if (dyn.d_tag == DT_NULL)
			break;
		switch (dyn.d_tag) {
		case DT_STRTAB:
			strtab = dyn.d_un.d_ptr;
			break;
		case DT_STRSZ:
			strsz = dyn.d_un.d_val;
			break;
		case DT_NEEDED:
			if (nneeded == BINDS_MAX_NEEDED) {
				(void)snprintf(err, errlen, "%s needs more "
				    "than %d libraries", path,
				    BINDS_MAX_NEEDED);
				goto out;
			}
			needed[nneeded++] = dyn.d_un.d_val;
			break;
		case DT_RUNPATH:
			runpath = dyn.d_un.d_val;
			has_runpath = true;
			break;
		case DT_RPATH:
			rpath = dyn.d_un.d_val;
			has_rpath = true;
			break;
		}
	}
	if (nneeded > 0 || has_runpath || has_rpath) {
		uint64_t stroff = 0;

		/* the string table's address -> its offset in the file */
		for (j = 0; j < nloads; j++)
			if (strtab >= loads[j].p_vaddr && strtab -
			    loads[j].p_vaddr < loads[j].p_filesz) {
				stroff = strtab - loads[j].p_vaddr +
				    loads[j].p_offset;
				break;
			}
		if (j == nloads || strsz == 0)
			goto bad;
		for (i = 0; i < nneeded; i++) {
			if (needed[i] >= strsz || (e->needed[e->nneeded] =
			    read_str(fd, size, stroff + needed[i])) == NULL)
				goto bad;
			e->nneeded++;
		}
		/* ld.so ignores DT_RPATH when DT_RUNPATH is there */
		if (has_runpath || has_rpath) {
			uint64_t o = has_runpath ? runpath : rpath;
			if (o >= strsz || (e->paths = read_str(fd, size,
			    stroff + o)) == NULL)
				goto bad;
		}
	}
	rc = 1;
	goto out;
 bad:
	(void)snprintf(err, errlen, "%s: a malformed ELF file (its program "
	    "or dynamic headers point outside it)", path);
 out:
	if (rc != 1)
		elf_info_fini(e);
	(void)close(fd);
	return rc;
}

/* dir with $ORIGIN / ${ORIGIN} replaced by origin, into out. */
static int
expand_origin(const char *dir, const char *origin, char *out, size_t len)
{
	size_t o = 0;

	while (*dir != '\0') {
		size_t skip = 0;

		if (strncmp(dir, "$ORIGIN", 7) == 0)
			skip = 7;
		else if (strncmp(dir, "${ORIGIN}", 9) == 0)
			skip = 9;
		else if (*dir == '$')
			return -1;	/* $LIB, $PLATFORM: not followed */
		if (skip > 0) {
			if (o + strlen(origin) >= len)
				return -1;
			memcpy(out + o, origin, strlen(origin));
			o += strlen(origin);
			dir += skip;
			continue;
		}
		if (o + 1 >= len)
			return -1;
		out[o++] = *dir++;
	}
	out[o] = '\0';
	return 0;
}

static int add_object(struct prog_binds *b, const char *real,
    const char *inside, int depth, char *err, size_t errlen);

/*
 * Finds NEEDED name of the object whose canonical directory is origin and
 * whose search path is paths (may be NULL), and adds it when it lies
 * outside the system directories.
 */
static int
add_library(struct prog_binds *b, const char *name, const char *paths,
    const char *origin, const char *who, int depth, char *err,
    size_t errlen)
{
	char dir[PATH_MAX], cand[PATH_MAX], real[PATH_MAX], rdir[PATH_MAX];
	const char *p, *end;
	size_t i, n = 0;
	struct stat st;

	if (strchr(name, '/') != NULL) {
		if (name[0] != '/' || realpath(name, real) == NULL) {
			(void)snprintf(err, errlen, "%s needs %s, which ld.so "
			    "would look for relative to the current "
			    "directory", who, name);
			return -1;
		}
		return binds_system_path(real) ? 0 :
		    add_object(b, real, name, depth + 1, err, errlen);
	}
	for (p = paths; p != NULL && *p != '\0' && n < BINDS_MAX_PATHS;
	    p = *end ? end + 1 : end, n++) {
		end = strchrnul(p, ':');
		if ((size_t)(end - p) >= sizeof(dir))
			continue;
		memcpy(dir, p, (size_t)(end - p));
		dir[end - p] = '\0';
		if (dir[0] == '\0' || expand_origin(dir, origin, cand,
		    sizeof(cand)) != 0 || cand[0] != '/')
			continue;	/* ld.so skips what it cannot use */
		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", cand, name) >=
		    sizeof(dir) || stat(dir, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (realpath(dir, real) == NULL)
			continue;
		if (binds_system_path(real))
			return 0;
		/* seen inside in its canonical directory: ld.so's path
		 * ($ORIGIN/../lib) leads there when nothing on the way is
		 * a symlink on the host */
		if (realpath(cand, rdir) == NULL)
			continue;
		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", rdir, name) >=
		    sizeof(dir))
			continue;
		return add_object(b, real, dir, depth + 1, err, errlen);
	}
	for (i = 0; i < sizeof(default_lib_dirs) / sizeof(char *); i++) {
		(void)snprintf(cand, sizeof(cand), "%s/%s",
		    default_lib_dirs[i], name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	(void)snprintf(err, errlen, "%s needs the library %s, which is "
	    "neither in its RUNPATH nor in the system library directories; "
	    "inside the sandbox ld.so would not find it (LD_LIBRARY_PATH is "
	    "never passed)", who, name);
	return -1;
}

/* The ELF object at real (canonical), seen inside at inside. */
static int
add_object(struct prog_binds *b, const char *real, const char *inside,
    int depth, char *err, size_t errlen)
{
	struct elf_info e;
	char origin[PATH_MAX], *slash, ireal[PATH_MAX];
	size_t i;
	int rc;

	if (depth > BINDS_MAX_DEPTH) {
		(void)snprintf(err, errlen, "%s: libraries nested deeper "
		    "than %d", real, BINDS_MAX_DEPTH);
		return -1;
	}
	if (add(b, real, inside, err, errlen) != 0)
		return -1;
	if ((rc = read_elf(real, &e, err, errlen)) <= 0) {
		if (rc == 0)
			(void)snprintf(err, errlen, "%s is neither an ELF "
			    "program nor a script", real);
		return -1;
	}
	rc = 0;
	if (e.interp != NULL) {
		if (e.interp[0] != '/' || realpath(e.interp, ireal) == NULL) {
			(void)snprintf(err, errlen, "%s: its ELF interpreter "
			    "%s is missing", real, e.interp);
			rc = -1;
		} else if (!binds_system_path(ireal))
			rc = add_object(b, ireal, e.interp, depth + 1, err,
			    errlen);
	}
	(void)snprintf(origin, sizeof(origin), "%s", real);
	if ((slash = strrchr(origin, '/')) != NULL)
		*(slash == origin ? slash + 1 : slash) = '\0';
	for (i = 0; rc == 0 && i < e.nneeded; i++)
		rc = add_library(b, e.needed[i], e.paths, origin, real, depth,
		    err, errlen);
	elf_info_fini(&e);
	return rc;
}

/* "#!" interpreter of path into interp: 1, 0 when not a script, -1. */
static int
shebang(const char *path, char *interp, size_t len)
{
	char line[BINDS_SHEBANG_LINE + 1], *p, *end;
	off_t size;
	ssize_t n;
	int fd;

	if ((fd = open_regular(path, &size)) < 0)
		return -1;
	n = pread(fd, line, BINDS_SHEBANG_LINE, 0);
	(void)close(fd);
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return 0;
	line[n] = '\0';
	if ((end = strchr(line, '\n')) != NULL)
		*end = '\0';
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	end = p + strcspn(p, " \t");
	*end = '\0';
	if (p[0] != '/' || (size_t)(end - p) >= len)
		return -1;
	memcpy(interp, p, (size_t)(end - p) + 1);
	return 1;
}

/*
 * CPython's standard library, found as its start-up finds it: the
 * landmark PREFIX/lib/pythonX.Y/os.py with PREFIX the parent of the
 * directory holding the executable. X.Y from the file name or from the
 * libpythonX.Y it links.
 */
static int
add_python_stdlib(struct prog_binds *b, const char *real, char *err,
    size_t errlen)
{
	char prefix[PATH_MAX], ver[16], lib[PATH_MAX], land[PATH_MAX];
	const char *base = strrchr(real, '/') + 1, *v = NULL;
	char *slash;
	struct stat st;
	size_t i, n;

	if (strncmp(base, "python", 6) == 0 && base[6] >= '2' &&
	    base[6] <= '9' && base[7] == '.')
		v = base + 6;
	for (i = 0; v == NULL && i < b->n; i++) {
		const char *l = strrchr(b->b[i].inside, '/') + 1;
		if (strncmp(l, "libpython", 9) == 0)
			v = l + 9;
	}
	if (v == NULL) {
		(void)snprintf(err, errlen, "cannot tell the version of the "
		    "Python at %s (neither its name nor a libpython says it); "
		    "name the interpreter by its versioned file "
		    "(.../bin/python3.N)", real);
		return -1;
	}
	n = strspn(v, "0123456789.");
	while (n > 0 && v[n - 1] == '.')
		n--;
	if (n == 0 || n >= sizeof(ver)) {
		(void)snprintf(err, errlen, "cannot tell the version of the "
		    "Python at %s", real);
		return -1;
	}
	memcpy(ver, v, n);
	ver[n] = '\0';
	(void)snprintf(prefix, sizeof(prefix), "%s", real);
	for (i = 0; i < 2; i++)
		if ((slash = strrchr(prefix, '/')) != NULL && slash != prefix)
			*slash = '\0';
	if ((size_t)snprintf(land, sizeof(land), "%s/pyvenv.cfg", prefix) <
	    sizeof(land) && stat(land, &st) == 0) {
		(void)snprintf(err, errlen, "%s belongs to a virtual "
		    "environment (%s); a sandbox runs interpreters, not "
		    "environments: name the base interpreter (its 'home') and "
		    "add the environment's site-packages with allow_read",
		    real, land);
		return -1;
	}
	if ((size_t)snprintf(lib, sizeof(lib), "%s/lib/python%s", prefix,
	    ver) >= sizeof(lib) ||
	    (size_t)snprintf(land, sizeof(land), "%s/os.py", lib) >=
	    sizeof(land) || stat(land, &st) != 0 || !S_ISREG(st.st_mode) ||
	    realpath(lib, prefix) == NULL) {
		(void)snprintf(err, errlen, "the standard library of the "
		    "Python at %s is not where it looks for it (%s/os.py), so "
		    "inside the sandbox it would fail to start or import "
		    "(\"No module named '_struct'\"); put a Python whose "
		    "PREFIX/lib/python%s is in place first on PATH, or use "
		    "/usr/bin/python3", real, lib, ver);
		return -1;
	}
	if (binds_system_path(prefix))
		return 0;
	return add(b, prefix, lib, err, errlen);
}

int
binds_for_program(const char *real, bool python, struct prog_binds **ret,
    char *err, size_t errlen)
{
	struct prog_binds *b;
	char cur[PATH_MAX], interp[PATH_MAX], ireal[PATH_MAX];
	int level, rc = 0, sb;

	*ret = NULL;
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	(void)snprintf(cur, sizeof(cur), "%s", real);
	/* scripts: the file, then its interpreter, up to the kernel's depth */
	for (level = 0; level < BINDS_MAX_SHEBANG; level++) {
		if (binds_system_path(cur))
			goto done;
		if ((sb = shebang(cur, interp, sizeof(interp))) < 0) {
			(void)snprintf(err, errlen, "%s: cannot read it, or its "
			    "#! line names no absolute interpreter", cur);
			goto fail;
		}
		if (sb == 0)
			break;
		if (add(b, cur, cur, err, errlen) != 0)
			goto fail;
		if (realpath(interp, ireal) == NULL) {
			(void)snprintf(err, errlen, "%s: its interpreter %s is "
			    "missing", cur, interp);
			goto fail;
		}
		/* a python script's interpreter is the python */
		(void)snprintf(cur, sizeof(cur), "%s", ireal);
	}
	if (level == BINDS_MAX_SHEBANG) {
		(void)snprintf(err, errlen, "%s: more than %d levels of #! "
		    "interpreters", real, BINDS_MAX_SHEBANG);
		goto fail;
	}
	if (binds_system_path(cur))
		goto done;	/* a script run by a system interpreter */
	if ((rc = add_object(b, cur, cur, 0, err, errlen)) != 0)
		goto fail;
	/* a python, named so or running the script */
	if ((python || strncmp(strrchr(cur, '/') + 1, "python", 6) == 0) &&
	    add_python_stdlib(b, cur, err, errlen) != 0)
		goto fail;
 done:
	if (b->n == 0) {
		prog_binds_free(b);
		return 0;
	}
	*ret = b;
	return 0;
 fail:
	prog_binds_free(b);
	return -1;
}

/* Trees a sandbox makes itself or binds whole: an allowed path there
 * could not be bound (the sandbox refuses binds on or under them). */
static const char *const not_allowed[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", "/dev", "/proc", "/tmp", "/sys", "/workspace", "/skill",
};

/* a equals b or lies beneath it (component-wise). */
static bool
under(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strcmp(b, "/") == 0)
		return true;
	return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

/* Drops the binds of prog covered by an allowed path. */
static void
drop_covered(struct prog_binds *b, const char *allowed)
{
	size_t i = 0;

	while (b != NULL && i < b->n) {
		if (!under(b->b[i].inside, allowed)) {
			i++;
			continue;
		}
		free(b->b[i].host);
		free(b->b[i].inside);
		memmove(&b->b[i], &b->b[i + 1], (b->n - i - 1) *
		    sizeof(b->b[0]));
		b->n--;
	}
}

/* An allowed path beneath one of a program's binds cannot be mounted. */
static const char *
overlaps(const struct prog_binds *b, const char *allowed)
{
	size_t i;

	for (i = 0; b != NULL && i < b->n; i++)
		if (under(allowed, b->b[i].inside))
			return b->b[i].inside;
	return NULL;
}

int
binds_resolve_allow(struct policy *p, char *err, size_t errlen)
{
	char real[PATH_MAX], ws[PATH_MAX];
	struct stat st;
	const char *o;
	size_t i, j;
	int l;

	for (i = 0; i < p->nallow; i++) {
		struct policy_allow *a = &p->allow[i];
		const char *key = a->writable ? "allow_read_write" :
		    "allow_read";

		if (realpath(a->path, real) == NULL) {
			(void)snprintf(err, errlen, "%s: %s: %s", key, a->path,
			    strerror(errno));
			return -1;
		}
		for (j = 0; j < sizeof(not_allowed) / sizeof(char *); j++)
			if (under(real, not_allowed[j]) ||
			    under(not_allowed[j], real)) {
				(void)snprintf(err, errlen, "%s: %s is on or "
				    "above %s, which every sandbox makes or "
				    "binds itself; name a path outside it",
				    key, real, not_allowed[j]);
				return -1;
			}
		if (a->writable && (stat(real, &st) != 0 ||
		    !S_ISDIR(st.st_mode))) {
			(void)snprintf(err, errlen, "%s: %s is not a "
			    "directory (a writable bind is one)", key, real);
			return -1;
		}
		free(a->path);
		if ((a->path = strdup(real)) == NULL) {
			(void)snprintf(err, errlen, "out of memory");
			return -1;
		}
		for (j = 0; j < i; j++)
			if (under(a->path, p->allow[j].path) ||
			    under(p->allow[j].path, a->path)) {
				(void)snprintf(err, errlen, "%s: %s and %s "
				    "overlap; name one of them", key, a->path,
				    p->allow[j].path);
				return -1;
			}
		if (p->workspace != NULL && realpath(p->workspace, ws) !=
		    NULL && (under(ws, a->path) || under(a->path, ws))) {
			(void)snprintf(err, errlen, "%s: %s overlaps the "
			    "workspace %s, which every sandbox has already",
			    key, a->path, ws);
			return -1;
		}
		for (j = 0; j < p->ncommands; j++) {
			drop_covered(p->commands[j].binds, a->path);
			if ((o = overlaps(p->commands[j].binds, a->path)) !=
			    NULL)
				goto overlap;
		}
		for (l = 0; l < POLICY_LANG_COUNT; l++) {
			drop_covered(p->languages[l].binds, a->path);
			if ((o = overlaps(p->languages[l].binds, a->path)) !=
			    NULL)
				goto overlap;
		}
		continue;
 overlap:
		(void)snprintf(err, errlen, "%s: %s lies inside %s, which a "
		    "program's own bind covers already; name a path outside "
		    "it", key, a->path, o);
		return -1;
	}
	return 0;
}

static struct json_object *
list_json(const struct prog_binds *b)
{
	struct json_object *a = json_object_new_array(), *e;
	size_t i;

	for (i = 0; b != NULL && i < b->n; i++) {
		e = json_object_new_object();
		json_object_object_add(e, "host",
		    json_object_new_string(b->b[i].host));
		json_object_object_add(e, "inside",
		    json_object_new_string(b->b[i].inside));
		json_object_object_add(e, "mode", json_object_new_string("ro"));
		json_object_array_add(a, e);
	}
	return a;
}

struct json_object *
binds_to_json(const struct policy *p)
{
	struct json_object *o = json_object_new_object(), *c, *a, *e;
	size_t i;
	int l;

	c = json_object_new_object();
	for (i = 0; i < p->ncommands; i++)
		if (p->commands[i].binds != NULL)
			json_object_object_add(c, p->commands[i].name,
			    list_json(p->commands[i].binds));
	json_object_object_add(o, "commands", c);
	c = json_object_new_object();
	for (l = 0; l < POLICY_LANG_COUNT; l++)
		if (p->languages[l].available &&
		    p->languages[l].binds != NULL)
			json_object_object_add(c,
			    policy_lang_name((enum policy_lang)l),
			    list_json(p->languages[l].binds));
	json_object_object_add(o, "languages", c);
	a = json_object_new_array();
	for (i = 0; i < p->nallow; i++) {
		e = json_object_new_object();
		json_object_object_add(e, "host",
		    json_object_new_string(p->allow[i].path));
		json_object_object_add(e, "inside",
		    json_object_new_string(p->allow[i].path));
		json_object_object_add(e, "mode", json_object_new_string(
		    p->allow[i].writable ? "rw" : "ro"));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "every_sandbox", a);
	return o;
}

/*
 * The directory bound into every sandbox that holds path (the user's
 * workspace, an allow_read_write path and, unless writable_only, an
 * allow_read path), or NULL. path need not exist: its nearest existing
 * ancestor is resolved (a relative name's is the current directory, "/"
 * that of a name directly under it).
 */
static const char *
bound_dir_of(const struct policy *p, const char *path, bool writable_only,
    char *buf, size_t buflen)
{
	char real[PATH_MAX], probe[PATH_MAX], *slash;
	size_t i;

	(void)snprintf(probe, sizeof(probe), "%s", path);
	while (realpath(probe, real) == NULL) {
		if ((slash = strrchr(probe, '/')) == NULL) {
			if (strcmp(probe, ".") == 0)
				return NULL;
			(void)snprintf(probe, sizeof(probe), ".");
		} else if (slash == probe) {
			if (probe[1] == '\0')
				return NULL;
			probe[1] = '\0';
		} else
			*slash = '\0';
	}
	if (p->workspace != NULL && realpath(p->workspace, probe) != NULL &&
	    under(real, probe)) {
		(void)snprintf(buf, buflen, "%s", probe);
		return buf;
	}
	for (i = 0; i < p->nallow; i++)
		if ((p->allow[i].writable || !writable_only) &&
		    under(real, p->allow[i].path)) {
			(void)snprintf(buf, buflen, "%s", p->allow[i].path);
			return buf;
		}
	return NULL;
}

const char *
binds_sandbox_writable(const struct policy *p, const char *path,
    char *buf, size_t buflen)
{
	return bound_dir_of(p, path, true, buf, buflen);
}

const char *
binds_sandbox_reachable(const struct policy *p, const char *path,
    char *buf, size_t buflen)
{
	return bound_dir_of(p, path, false, buf, buflen);
}
