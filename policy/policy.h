/*
 * The policy of the sandboxed tools: which programs, languages, skills,
 * databases and network domains a model may use, in which workspace, under
 * which limits. Built once at start (embedded default, then --config file,
 * then flags, then policy_finalize()), immutable afterwards and shared by
 * every thread.
 * Trusts only its own embedded default; a config file and flags are user
 * input and are checked with messages that name the file, line and key.
 */
#ifndef POLICY_H
#define POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Bounds on what a policy may hold (config files are user input). */
#define POLICY_MAX_COMMANDS	256	/* an allow-list, not a PATH copy */
#define POLICY_MAX_DATABASES	64	/* a handful of named datasets */
#define POLICY_MAX_SKILLS	64	/* each is listed in a description */
#define POLICY_MAX_SCRIPTS	32	/* scripts listed per skill */
#define POLICY_MAX_ENV		64	/* environment entries given to tools */
#define POLICY_MAX_NAME		64	/* command, database, skill, env name */
#define POLICY_MAX_ENV_VALUE	1024	/* one environment value */
#define POLICY_MAX_CONFIG	(256 * 1024)	/* a page of JSON */
#define POLICY_MAX_SUMMARY	400	/* a skill summary in a description */
/* run_code pythons started ahead: each is an idle interpreter in its own
 * sandbox (~10 MiB), and a few cover a client's calls one at a time */
#define POLICY_MAX_WARM_PYTHON	8
/*
 * Sandboxes built ahead (pool.c), beyond the pythons: each waits with a
 * few fds and its init's pages (see --check); more than the calls that
 * can arrive between two refills only holds memory.
 */
#define POLICY_MAX_POOL		16
/*
 * run_code sessions open at once: each holds a sandbox, a uid and a netns
 * slot of the context for its life (sandbox.h: SB_MAX_UID_SLOTS).
 */
#define POLICY_MAX_SESSIONS	64
/* protected_paths: the sandbox mounts at most SB_MAX_PROTECT of them */
#define POLICY_MAX_PROTECT	8
/* Where a cgroup_parent must lie: the cgroup v2 mount. */
#define POLICY_CGROUP_MNT	"/sys/fs/cgroup"

/*
 * Host paths a policy binds into every sandbox (allow_read,
 * allow_read_write). With a program's own binds (BINDS_MAX_PROG, 8) this
 * fills the sandbox's 16.
 */
#define POLICY_MAX_ALLOW	8

/* Start-up notes kept (programs passed over); more are counted only. */
#define POLICY_MAX_NOTES	16

struct prog_binds;

/* A program a model may run with run_command. */
struct policy_command {
	char *name;		/* owned: what the model passes, e.g. "grep" */
	char *path;		/* owned: absolute, from finalize; or NULL */
	struct prog_binds *binds;	/* owned: files outside the system
				 * dirs it needs (bound read-only; policy_binds.h),
				 * or NULL */
	bool optional;		/* from the default: dropped if missing */
	char *origin;		/* owned: where it was asked for, for errors:
				 * "FILE:LINE" or "--allow-command" */
};

/* A host path bound at the same path in every sandbox. */
struct policy_allow {
	char *path;		/* owned: canonical after finalize */
	bool writable;		/* allow_read_write */
};

/*
 * A run_code language. The set of known languages is a const table in
 * policy.c; the policy holds which are enabled and their resolved toolchain.
 */
enum policy_lang {
	POLICY_LANG_PYTHON3 = 0,
	POLICY_LANG_NODE,
	POLICY_LANG_SH,
	POLICY_LANG_C,
	POLICY_LANG_COUNT,
};

struct policy_language {
	bool enabled;		/* asked for by the policy */
	bool available;		/* enabled and its toolchain was found */
	char *path;		/* owned: interpreter or compiler, absolute */
	struct prog_binds *binds;	/* owned: as a command's, or NULL */
};

/* A script of a skill: a file under <skill>/scripts/ with an allowed
 * extension, found at finalize. */
struct policy_script {
	char *name;		/* owned: file name under scripts/, no '/' */
	enum policy_lang lang;	/* interpreter its extension maps to */
};

struct policy_skill {
	char *name;		/* owned: from front matter (or folder name) */
	char *summary;		/* owned: front matter description, one line */
	char *dir;		/* owned: absolute path of the skill folder */
	/*
	 * The folder as found at start (O_PATH, owned when pinned): copies
	 * are made from it, never from dir again, so a folder renamed or
	 * replaced (by a symlink, say) after start is not followed.
	 */
	int dirfd;
	bool pinned;
	struct policy_script scripts[POLICY_MAX_SCRIPTS];
	size_t nscripts;
};

struct policy_database {
	char *name;		/* owned: what the model passes */
	char *path;		/* owned: absolute host path, read-only */
	/*
	 * Pinned at policy_finalize (policy_pin_database): the directory
	 * holding path, opened once (O_PATH), and the file's identity then.
	 * query_sqlite opens the file and its journals only beneath dirfd,
	 * never following a symlink, and refuses another inode (see
	 * tools/sqlite_vfs.c): a sandbox that can write that directory
	 * cannot point the server at another file.
	 */
	bool pinned;		/* dirfd, base, dev and ino are set */
	int dirfd;		/* owned when pinned */
	char *base;		/* owned: last component of path */
	dev_t dev;
	ino_t ino;
};

struct policy_env {
	char *name;		/* owned */
	char *value;		/* owned */
};

/* Numeric limits; units in the names. Zero max_sandboxes means "cores". */
struct policy_limits {
	uint32_t timeout_ms;		/* default deadline of one call */
	uint32_t max_timeout_ms;	/* the most a call may ask for */
	uint32_t task_timeout_ms;	/* the most a task may ask for */
	uint32_t task_ttl_ms;		/* a task's result kept after it ends */
	uint32_t task_threshold_ms;	/* modern: a longer deadline is a task */
	uint32_t memory_mb;		/* memory of one sandbox, in total where
					 * its cgroup holds; also each
					 * process's address space */
	uint32_t processes;		/* tasks of one sandbox, in total where
					 * its cgroup holds */
	uint32_t file_size_mb;		/* largest file a tool may write */
	uint32_t output_bytes;		/* stdout and stderr, each */
	uint32_t max_sandboxes;		/* sandboxes running at once */
	uint32_t queue;			/* calls waiting for a sandbox */
	uint32_t queue_wait_ms;		/* longest a queued call waits */
	uint32_t read_bytes;		/* read_file / search per file */
	uint32_t sql_rows;		/* rows a query returns at most */
	uint32_t sql_bytes;		/* result bytes of a query, at most */
	uint32_t sql_timeout_ms;	/* deadline of one query */
	uint32_t tmp_mb;		/* size of the sandbox's /tmp */
	uint32_t workspace_mb;		/* fresh workspace's cap; 0: none */
	uint32_t workspaces_mb;		/* all fresh ones together; 0: none */
	uint32_t warm_python;		/* run_code pythons started ahead */
	uint32_t pool_size;		/* other sandboxes built ahead */
	uint32_t session_idle_ms;	/* run_code session idle end */
	uint32_t session_max_age_ms;	/* run_code session age end */
	uint32_t max_sessions;		/* run_code sessions at once */
	uint32_t sessions_per_client;	/* of them, one client's */
	uint32_t uid_base;		/* root: first per-run kernel uid, a
					 * range the host leaves us; 0: a
					 * free block of the default */
	uint32_t ask_timeout_ms;	/* longest deadline with approval; 0:
					 * none past max_timeout_ms */
	uint32_t ask_wait_ms;		/* a call waits this for an answer */
	uint32_t grant_ttl_ms;		/* 2026-07-28 "for this session" */
};

struct policy {
	char *workspace;	/* owned: user directory, or NULL = fresh */
	char *workspace_origin;	/* owned: "FILE:LINE" or "--workspace", for
				 * errors about it; NULL with no workspace */
	struct policy_command commands[POLICY_MAX_COMMANDS];
	size_t ncommands;
	/* owned: names of the default's commands this machine lacks, dropped
	 * by finalize (main logs them) */
	char *dropped[POLICY_MAX_COMMANDS];
	size_t ndropped;
	struct policy_language languages[POLICY_LANG_COUNT];
	char *skills_dir;	/* owned: absolute after finalize, or NULL */
	struct policy_skill skills[POLICY_MAX_SKILLS];
	size_t nskills;		/* filled by finalize */
	struct policy_database databases[POLICY_MAX_DATABASES];
	size_t ndatabases;
	struct policy_env env[POLICY_MAX_ENV];	/* base environment */
	size_t nenv;
	struct policy_limits limits;
	/* owned: network.* (policy_network.h); no allowed_domains: off */
	struct egress_rules *egress;
	/*
	 * owned: the approvals ceiling, network.ask_domains (only its allow
	 * list is used): what a call may ask the user for, never more;
	 * empty: nothing is ever asked. ask_network: where egress allows
	 * nothing, a call may still ask for network (to those names only).
	 */
	struct egress_rules *ask;
	bool ask_network;
	/*
	 * owned: secrets bound to hosts (policy_secret.c), or NULL; their
	 * values are read at finalize. egress_ca: --egress-ca, the trust for
	 * the real hosts. ca_bundle: what sandboxes trust (the system's CAs
	 * and the proxy's), in ca_dir, removed at the end.
	 */
	struct egress_secrets *secrets;
	char *egress_ca;
	char *ca_dir;
	char *ca_bundle;
	bool require_cgroup;	/* no cgroup per sandbox: sandboxes refuse */
	char *cgroup_parent;	/* owned: cgroup v2 dir delegated to us, or
				 * NULL: the server's own cgroup */
	char *audit_log;	/* owned: JSON-lines audit path, or NULL */
	/* owned, NULL-terminated: workspace names kept read-only (.git) */
	char *protect[POLICY_MAX_PROTECT + 1];
	size_t nprotect;
	char *sh_path;		/* owned: /bin/sh resolved, for fixed drivers */
	struct policy_allow allow[POLICY_MAX_ALLOW];	/* extra binds */
	size_t nallow;
	/* finalize's warnings for the log: a program passed over, and why */
	char *notes[POLICY_MAX_NOTES];
	size_t nnotes;
	long cores;		/* online CPUs seen at finalize */
	bool finalized;
};

/* One command-line override; main.c makes getopt_long options of these. */
struct policy_flag {
	const char *name;	/* long option, without "--" */
	int has_arg;		/* getopt_long: no_/required_argument */
	const char *metavar;	/* for --help, or NULL */
	const char *help;	/* one line for --help */
};

/* Terminated by an entry whose name is NULL. */
extern const struct policy_flag policy_flags[];

/* The embedded default (policy/default-policy.json). NULL with err set on
 * failure (allocation only; the default is checked by a unit test). */
struct policy *policy_new_default(char *err, size_t errlen);

/*
 * Overlays a JSON config file: keys present replace the default's values
 * (commands, languages, databases and env are replaced as a whole; limits
 * key by key). Unknown keys are errors. Returns 0, or -1 with err like
 * "config.json:12: limits.memory_mb: must be an integer in 16..65536".
 */
int policy_load_file(struct policy *p, const char *path, char *err,
    size_t errlen) __attribute__((warn_unused_result));

/* Applies one flag of policy_flags[] (value NULL for flags without an
 * argument). Returns 0, or -1 with err naming the flag. */
int policy_set_flag(struct policy *p, const char *flag, const char *value,
    char *err, size_t errlen) __attribute__((warn_unused_result));

/*
 * Resolves, before the environment is emptied: commands to absolute paths
 * (optional ones that are missing are dropped, others are errors), language
 * toolchains (missing ones become unavailable), the skills directory (scans
 * each skill's SKILL.md front matter and scripts/), database paths (must
 * exist), and max_sandboxes 0 to the number of cores. Returns 0 or -1.
 */
int policy_finalize(struct policy *p, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* The effective policy as JSON, for --print-config. */
void policy_print(const struct policy *p, FILE *out);

void policy_free(struct policy *p);

/* Look-ups for handlers (after finalize); NULL when absent. */
const struct policy_command *policy_find_command(const struct policy *p,
    const char *name);
const struct policy_database *policy_find_database(const struct policy *p,
    const char *name);
const struct policy_skill *policy_find_skill(const struct policy *p,
    const char *name);
/* "python3", "node", "sh", "c"; and back (-1 when unknown). */
const char *policy_lang_name(enum policy_lang lang);
int policy_lang_from_name(const char *name);

/* true when sandboxes get the egress proxy: network.allowed_domains is
 * not empty (policy_network.c). */
bool policy_network_enabled(const struct policy *p);
/* The network rules in force, one line, for --check. */
void policy_network_summary(const struct policy *p, char *buf, size_t len);
/* true when a call may ask the user for anything (approvals). */
bool policy_asks(const struct policy *p);
/* The approvals ceiling, one line, for --check. */
void policy_ask_summary(const struct policy *p, char *buf, size_t len);

/*
 * true when an environment variable name is never passed to a sandbox,
 * whatever the policy or the request says: LD_*, and variables that make
 * interpreters load code (PYTHON*, NODE_OPTIONS, BASH_ENV, ...).
 */
bool policy_env_name_forbidden(const char *name);
/* --check's line on secrets: names, hosts, sources; never a value. */
void policy_secret_summary(const struct policy *p, char *buf, size_t len);
/* true if a workspace-relative path lies under a protected name (the
 * protected_paths key, policy_protect.c) */
bool policy_path_protected(const struct policy *p, const char *rel);

/* [A-Za-z_][A-Za-z0-9_]{0,63} */
bool policy_env_name_ok(const char *name);
/* Command, database and skill names: [A-Za-z0-9._+-]{1,64}, no leading
 * '.' or '-'. */
bool policy_name_ok(const char *name);

#endif
