/*
 * What a sandbox binds from the host beyond its fixed system directories:
 * for a program outside them, exactly the files it needs to start (the
 * file, its ELF interpreter and libraries resolved as ld.so would, a
 * script's interpreter, a Python's standard library), never a guessed
 * parent directory; and the paths a policy names (allow_read,
 * allow_read_write). Computed once at start, without running anything.
 */
#ifndef POLICY_BINDS_H
#define POLICY_BINDS_H

#include <stdbool.h>
#include <stddef.h>

struct policy;

/* Files and directories bound for one program: the file, its interpreter
 * (#! or PT_INTERP), libraries outside the system directories, a
 * Python's lib/pythonX.Y. More means a program we do not describe. */
#define BINDS_MAX_PROG		8
/* true for paths under the directories every sandbox binds read-only */
bool binds_system_path(const char *path);

struct prog_bind {
	char *host;		/* owned: canonical host path */
	char *inside;		/* owned: where the program looks for it */
};

struct prog_binds {
	size_t n;
	struct prog_bind b[BINDS_MAX_PROG];
};

/*
 * The binds of the program at real (absolute, canonical, outside the
 * system directories). python: the program is a CPython interpreter,
 * whose standard library is bound too (or it is refused). Returns 0 and
 * *ret (owned), or -1 with a sentence in err saying why the program
 * cannot run in a sandbox and what to do.
 */
int binds_for_program(const char *real, bool python, struct prog_binds **ret,
    char *err, size_t errlen) __attribute__((warn_unused_result));

void prog_binds_free(struct prog_binds *b);

/*
 * At finalize, after programs are resolved: canonicalizes the policy's
 * allow_read / allow_read_write paths and checks them (they must exist,
 * be outside the trees a sandbox makes itself, and not overlap one
 * another); a program bind under one of them is dropped (covered).
 * 0, or -1 with err.
 */
int binds_resolve_allow(struct policy *p, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/*
 * The workspace or allow_read_write directory (canonical, into buf) that
 * holds path, or NULL: a file the server reads or writes with its own
 * rights must not lie where sandboxed code can replace it.
 */
const char *binds_sandbox_writable(const struct policy *p, const char *path,
    char *buf, size_t buflen);

/*
 * The same with allow_read directories too: the directory the server
 * keeps its own private parent in must lie where no sandbox can even
 * look (an unprivileged server's sandboxes have its uid, so its 0700
 * parent does not keep them out).
 */
const char *binds_sandbox_reachable(const struct policy *p, const char *path,
    char *buf, size_t buflen);

#endif
