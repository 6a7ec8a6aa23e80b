/*
 * Names the policy takes, and its error writer: leaf helpers every
 * policy file calls (policy.c, policy_secret.c, policy_resolve.c), kept
 * apart so that none of them calls another through these.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "policy_internal.h"

/*
 * Never passed to a sandbox: dynamic loader and libc knobs, and variables
 * that make an interpreter or tool load or run code of the caller's choice.
 */
static const char *const env_forbidden_prefix[] = {
	"LD_", "PYTHON", "NODE_", "PERL", "RUBY", "GIT_", "MALLOC_", "BASH_",
	"GCONV_", "GLIBC_", "LOCPATH", "NLSPATH", "HOSTALIASES", "RES_",
	"LOCALDOMAIN", "RESOLV_",
};
static const char *const env_forbidden_name[] = {
	"ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "CDPATH", "TZDIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "JAVA_TOOL_OPTIONS", "PROMPT_COMMAND",
};

bool
policy_env_name_forbidden(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(env_forbidden_prefix) / sizeof(char *); i++)
		if (strncmp(name, env_forbidden_prefix[i],
		    strlen(env_forbidden_prefix[i])) == 0)
			return true;
	for (i = 0; i < sizeof(env_forbidden_name) / sizeof(char *); i++)
		if (strcmp(name, env_forbidden_name[i]) == 0)
			return true;
	return false;
}

/* [A-Za-z0-9._+-]{1,64}, not starting with '.' or '-'. */
bool
policy_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > POLICY_MAX_NAME || s[0] == '.' || s[0] == '-')
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '+' || c == '-'))
			return false;
	}
	return true;
}

/* [A-Za-z_][A-Za-z0-9_]{0,63} */
bool
policy_env_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > POLICY_MAX_NAME || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

void
policy_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
