/*
 * stage: the steps of building a sandbox, one table of what each is
 * called, its likely cause when it fails and the fix a user can apply
 * (the exact flag of docker, podman and Kubernetes where a container is
 * the usual cause; docker/README.md says why each is needed), and
 * sb_fail(), which records a failure against it. `mcp-sandbox --check`
 * prints the fix under the layer that failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* The seccomp profile that allows the sandbox's setup calls. */
#define FIX_SECCOMP	"docker/podman run --security-opt " \
	"seccomp=docker/seccomp.json (Kubernetes: a Localhost seccompProfile " \
	"with that file)"
/* /proc must be fully visible for the sandbox to mount its own. */
#define FIX_UNMASK	"the container's /proc is masked or read-only: docker " \
	"run --security-opt systempaths=unconfined, podman run " \
	"--security-opt unmask=ALL (Kubernetes: securityContext.procMount: " \
	"Unmasked, with hostUsers: false)"
#define FIX_APPARMOR	"docker run --security-opt apparmor=unconfined, podman " \
	"run --security-opt apparmor=unconfined (Kubernetes: appArmorProfile " \
	"type Unconfined), and " FIX_SECCOMP
/* A namespace refused outright: the host or the container forbids them. */
#define FIX_USERNS	"allow unprivileged user namespaces (sysctl " \
	"user.max_user_namespaces=15000; on Ubuntu 23.10+ also " \
	"kernel.apparmor_restrict_unprivileged_userns=0) and, in a " \
	"container, " FIX_SECCOMP
/* The id maps: only root, or the uid itself, may write them. */
#define FIX_IDS		"run the server as root or as the uid it maps (an LSM " \
	"may refuse uid_map writes: check the kernel log)"
/* The server itself ran out. */
#define FIX_LIMITS	"raise the server's open-file and process limits " \
	"(ulimit -n, ulimit -u; docker/podman run --ulimit) or its memory"

struct sb_stage_info {
	const char *name;
	const char *cause;	/* the likely cause when this step fails */
	const char *fix;	/* what a user can do; NULL: see the cause */
};

static const struct sb_stage_info sb_stages[SB_STAGE_COUNT] = {
	[SB_STAGE_NONE] = { "none", "", NULL },
	[SB_STAGE_REQUEST] = { "request", "the request itself", NULL },
	[SB_STAGE_RESOURCES] = { "resources",
	    "out of fds or memory in the server",
	    FIX_LIMITS },
	[SB_STAGE_NETNS] = { "netns",
	    "network namespaces refused (container seccomp profile?)",
	    FIX_USERNS },
	[SB_STAGE_CGROUP] = { "cgroup",
	    "the run's cgroup could not be made or joined (the server's "
	    "cgroup removed or not writable; see mcp-sandbox --check)", NULL },
	[SB_STAGE_CLONE] = { "clone",
	    "user namespaces disabled: user.max_user_namespaces=0, "
	    "kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu 24.04), "
	    "or a container seccomp profile blocking clone/unshare",
	    FIX_USERNS },
	[SB_STAGE_USERNS_MAP] = { "userns-map",
	    "uid_map/gid_map write refused (LSM, or not root and the "
	    "sandbox id is not ours)",
	    FIX_IDS },
	[SB_STAGE_CREDENTIALS] = { "credentials",
	    "setresuid/setresgid to the sandbox ids refused",
	    FIX_IDS },
	[SB_STAGE_NESTED_USERNS] = { "nested-userns",
	    "cannot write user.max_user_namespaces in the sandbox userns "
	    "(read-only /proc/sys in a container?)",
	    FIX_UNMASK },
	[SB_STAGE_MOUNTS] = { "mounts",
	    "mount refused in the new namespace (container seccomp or "
	    "AppArmor profile, or a bind source the sandbox uid cannot reach)",
	    FIX_APPARMOR },
	[SB_STAGE_PROC] = { "proc",
	    "fresh procfs refused: a container masks /proc (mount it "
	    "unmasked, e.g. docker --security-opt systempaths=unconfined)",
	    FIX_UNMASK },
	[SB_STAGE_DEV] = { "dev", "binding /dev nodes refused", NULL },
	[SB_STAGE_PIVOT] = { "pivot-root",
	    "pivot_root refused (staging dir on a shared or rootfs mount)",
	    FIX_APPARMOR },
	[SB_STAGE_HOSTNAME] = { "hostname", "sethostname refused in the uts ns",
	    FIX_APPARMOR },
	[SB_STAGE_INIT] = { "init", "the sandbox's pid 1 could not fork or "
	    "died unexpectedly (OOM killer?)",
	    FIX_LIMITS },
	[SB_STAGE_SESSION] = { "session", "setsid, stdio or cwd failed", NULL },
	[SB_STAGE_RLIMITS] = { "rlimits", "setrlimit refused", NULL },
	[SB_STAGE_CAPS] = { "caps", "dropping capabilities failed", NULL },
	[SB_STAGE_NO_NEW_PRIVS] = { "no-new-privs", "PR_SET_NO_NEW_PRIVS failed", NULL },
	[SB_STAGE_PDEATHSIG] = { "pdeathsig", "PR_SET_PDEATHSIG failed", NULL },
	[SB_STAGE_FDS] = { "fds", "close_range or dup failed (kernel < 5.11?)",
	    "Linux 5.11 or later (close_range)" },
	[SB_STAGE_LANDLOCK] = { "landlock",
	    "Landlock ruleset refused though the kernel offers it", NULL },
	[SB_STAGE_SECCOMP] = { "seccomp",
	    "seccomp filter refused (kernel without CONFIG_SECCOMP_FILTER?)",
	    "a kernel with CONFIG_SECCOMP_FILTER" },
	[SB_STAGE_EXEC] = { "exec",
	    "execve failed inside the sandbox (missing interpreter or "
	    "library, or not executable)", NULL },
	[SB_STAGE_WAIT] = { "wait", "poll/read/wait failed in the server", NULL },
	[SB_STAGE_UIDS] = { "uid-range",
	    "a uid range given to this server that it cannot take (out of "
	    "bounds, or held by another server)",
	    "give this server a range of its own (--uid-base N, or "
	    "limits.uid_base in the policy), or leave it unset to take a free "
	    "default block" },
	[SB_STAGE_IPC] = { "ipc-limits",
	    "making the sandbox's ipc namespace or writing its shm/msg/sem "
	    "limits refused (a container seccomp profile blocking unshare, "
	    "or a read-only /proc/sys)", NULL },
};

const char *
sb_stage_name(enum sb_stage stage)
{
	if ((unsigned)stage >= SB_STAGE_COUNT)
		return "unknown";
	return sb_stages[stage].name;
}

/* Record a failure: stage, errno and "sandbox <stage>: <what>: <err> (cause)". */
/* The nested wrappers we can name (sb_nested()). */
static const char nested_srt[] = "this server runs inside srt "
    "(@anthropic-ai/sandbox-runtime: VS Code's \"sandboxEnabled\", Claude "
    "Code's sandbox), which leaves it no user namespace of its own "
    "(user.max_user_namespaces is 0 there), so it cannot build its own "
    "sandbox and runs no tool without one";
static const char nested_srt_fix[] = "let the client not wrap this server, "
    "which sandboxes its tools itself (VS Code: remove \"sandboxEnabled\": "
    "true from its entry in mcp.json); or allow nesting for it alone "
    "(srt's settings: \"allowNestedUserNamespaces\": true), which lets a "
    "command inside srt undo srt's own write denies, while each tool still "
    "runs in mcp-sandbox's sandbox";
static const char nested_other[] = "this server runs inside another "
    "sandbox (a user namespace of its own whose user.max_user_namespaces "
    "is 0: bubblewrap --disable-userns, or a wrapper like it), so it "
    "cannot build its own sandbox and runs no tool without one";
static const char nested_other_fix[] = "start the wrapper without "
    "--disable-userns (bubblewrap allows nesting unless told not to), or "
    "do not wrap mcp-sandbox: it sandboxes its tools itself";

/*
 * Looks id up in a map file of this process (uid_map, gid_map): 1 and
 * the id it is in the parent namespace (*out) and the size of its range
 * (*count), 0 when unmapped, -1 when the file cannot be read.
 */
int
sb_map_lookup(const char *path, unsigned id, unsigned *out, unsigned *count)
{
	char buf[1024], *line, *save = NULL;
	unsigned in, o, c;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%u %u %u", &in, &o, &c) == 3 &&
		    id >= in && id - in < c) {
			*out = o + (id - in);
			*count = c;
			return 1;
		}
	return 0;
}

bool
sb_initial_userns(void)
{
	unsigned out, count;

	return sb_map_lookup("/proc/self/uid_map", 0, &out, &count) == 1 &&
	    out == 0 && count == SB_INITIAL_MAP_COUNT;
}

static bool
read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (f == NULL)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	(void)fclose(f);
	return ok;
}

bool
sb_nested(const char **what, const char **fix)
{
	const char *env = getenv("SANDBOX_RUNTIME");
	char max[32] = "";

	if (sb_initial_userns())
		return false;
	if (!read_small("/proc/sys/user/max_user_namespaces", max,
	    sizeof(max)) || strtoul(max, NULL, 10) != 0)
		return false;
	if (env != NULL && strcmp(env, "1") == 0) {
		*what = nested_srt;
		*fix = nested_srt_fix;
	} else {
		*what = nested_other;
		*fix = nested_other_fix;
	}
	return true;
}

/* The stages a wrapper around us makes fail (sb_nested()). */
static bool
nested_stage(enum sb_stage stage)
{
	return stage == SB_STAGE_CLONE || stage == SB_STAGE_NETNS ||
	    stage == SB_STAGE_CREDENTIALS || stage == SB_STAGE_USERNS_MAP;
}

void
sb_fail(struct sb_result *res, enum sb_stage stage, int err, const char *what)
{
	const char *cause = (unsigned)stage < SB_STAGE_COUNT ?
	    sb_stages[stage].cause : "", *nfix;

	/* a namespace refused: first, whether a wrapper refuses it */
	if (nested_stage(stage) && (err == EPERM || err == ENOSPC ||
	    err == EINVAL))
		(void)sb_nested(&cause, &nfix);

	/* whatever the stage: not the layer's fault (issue 25) */
	if (err == EMFILE)
		cause = "the server is out of file descriptors (its "
		    "RLIMIT_NOFILE; see mcp-sandbox --check, descriptors)";
	else if (err == ENFILE)
		cause = "the host is out of file descriptors (fs.file-max)";

	res->failed_stage = stage;
	res->err = err;
	(void)snprintf(res->message, sizeof(res->message),
	    "sandbox %s failed: %s%s%s (likely cause: %s)", sb_stage_name(stage),
	    what != NULL ? what : "", what != NULL ? ": " : "", strerror(err),
	    cause);
}

/* The fix for a failed stage, as a user can apply it. */
const char *
sb_stage_fix(enum sb_stage stage)
{
	const char *what, *fix;

	if (nested_stage(stage) && sb_nested(&what, &fix))
		return fix;
	if ((unsigned)stage >= SB_STAGE_COUNT || sb_stages[stage].fix == NULL)
		return "see the cause in the message";
	return sb_stages[stage].fix;
}
