/*
 * The fix for a failed stage, as a user can apply it: the exact flag of
 * docker, podman and Kubernetes where a container is the usual cause
 * (docker/README.md says why each is needed). `mcp-sandbox --check` prints
 * it under the layer that failed.
 */
#include "sandbox.h"

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

const char *
sb_stage_fix(enum sb_stage stage)
{
	switch (stage) {
	case SB_STAGE_CLONE:
	case SB_STAGE_NETNS:
		return "allow unprivileged user namespaces (sysctl "
		    "user.max_user_namespaces=15000; on Ubuntu 23.10+ also "
		    "kernel.apparmor_restrict_unprivileged_userns=0) and, in "
		    "a container, " FIX_SECCOMP;
	case SB_STAGE_NESTED_USERNS:
	case SB_STAGE_PROC:
		return FIX_UNMASK;
	case SB_STAGE_MOUNTS:
	case SB_STAGE_PIVOT:
	case SB_STAGE_HOSTNAME:
		return FIX_APPARMOR;
	case SB_STAGE_USERNS_MAP:
	case SB_STAGE_CREDENTIALS:
		return "run the server as root or as the uid it maps (an LSM "
		    "may refuse uid_map writes: check the kernel log)";
	case SB_STAGE_FDS:
		return "Linux 5.11 or later (close_range)";
	case SB_STAGE_SECCOMP:
		return "a kernel with CONFIG_SECCOMP_FILTER";
	case SB_STAGE_RESOURCES:
	case SB_STAGE_INIT:
		return "raise the server's open-file and process limits "
		    "(ulimit -n, ulimit -u; docker/podman run --ulimit) or "
		    "its memory";
	default:
		return "see the cause in the message";
	}
}
