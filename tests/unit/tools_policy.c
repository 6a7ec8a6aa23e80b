/*
 * Unit tests of the policy: the embedded default, config files (every
 * error names the file, the line and the key), flags, finalize (commands
 * resolved or dropped, languages, databases), --print-config output that
 * loads back, and the environment names that are never passed on.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "policy.h"

static char CFG[64];	/* /tmp/tools-policy-XXXXXX */

static const char *
write_cfg(const char *text)
{
	int fd;

	(void)snprintf(CFG, sizeof(CFG), "/tmp/tools-policy-XXXXXX");
	fd = mkstemp(CFG);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return CFG;
}

static void
expect_config_error(const char *text, const char *want_suffix)
{
	char err[512], want[600];
	struct policy *p = policy_new_default(err, sizeof(err));

	ck_assert_ptr_nonnull(p);
	write_cfg(text);
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), -1);
	(void)snprintf(want, sizeof(want), "%s%s", CFG, want_suffix);
	ck_assert_str_eq(err, want);
	unlink(CFG);
	policy_free(p);
}

START_TEST(default_policy_loads_and_finalizes)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_null(p->workspace);
	ck_assert_uint_eq(p->limits.timeout_ms, 10000);
	ck_assert_uint_eq(p->limits.max_sandboxes, 0);
	ck_assert(!policy_network_enabled(p));
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), 0);
	ck_assert_uint_ge(p->limits.max_sandboxes, 1);
	ck_assert_ptr_nonnull(policy_find_command(p, "cat"));
	ck_assert_str_eq(policy_find_command(p, "cat")->path, "/usr/bin/cat");
	ck_assert(p->languages[POLICY_LANG_SH].available);
	ck_assert_ptr_nonnull(p->sh_path);
	/* a command the default lists but this machine may lack is dropped,
	 * never kept unresolved */
	for (size_t i = 0; i < p->ncommands; i++)
		ck_assert_ptr_nonnull(p->commands[i].path);
	policy_free(p);
}
END_TEST

START_TEST(config_syntax_error_names_file_and_line)
{
	expect_config_error("{\n  \"limits\": {\n    \"memory_mb\": 12,,\n",
	    ":3: invalid JSON: quoted object property name expected");
	expect_config_error("{\n\"network\": false\n} x",
	    ":3: invalid JSON: text after the object");
	expect_config_error("[1]", ":1: the config must be a JSON object");
}
END_TEST

/* What RFC 8259 refuses, json-c's default mode (and some of it its strict
 * mode) accepts: each is refused with its line. */
START_TEST(config_is_json_and_nothing_more)
{
	expect_config_error("{\n\"commands\": [\"cat\",\n]\n}",
	    ":3: invalid JSON: a comma before ']' is not JSON (trailing "
	    "comma)");
	expect_config_error("{\n\"network\": false,\n}",
	    ":3: invalid JSON: a comma before '}' is not JSON (trailing "
	    "comma)");
	expect_config_error("{\n// the default\n\"network\": false}",
	    ":2: invalid JSON: comments are not JSON");
	expect_config_error("{\"network\": false /* off */}",
	    ":1: invalid JSON: comments are not JSON");
	expect_config_error("{\n'network': false}",
	    ":2: invalid JSON: strings are written in double quotes in JSON");
	expect_config_error("{\"limits\": {\n\"timeout_ms\": NaN}}",
	    ":2: invalid JSON: only true, false and null are bare words in "
	    "JSON (NaN and Infinity are not numbers there)");
	expect_config_error("{\"limits\": {\"timeout_ms\": -Infinity}}",
	    ":1: invalid JSON: NaN and Infinity are not JSON numbers");
	expect_config_error("{\"limits\": {\"timeout_ms\": 1.}}",
	    ":1: invalid JSON: a number needs a digit after its '.'");
	expect_config_error("{\"workspace\": \"a\tb\"}",
	    ":1: invalid JSON: a control character (a tab, a line break) "
	    "inside a string must be written as an escape such as \\t or "
	    "\\n");
}
END_TEST

/* Quotes, slashes and words inside strings are data, not syntax. */
START_TEST(config_strings_hold_anything_escaped)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));

	write_cfg("{\"env\": {\"A\": \"NaN // x /* 'y' \\\\ \\\" z\\t\"},\n"
	    "\"limits\": {\"timeout_ms\": 1.5e3}}");
	/* 1.5e3 is JSON; the policy then wants an integer, on line 2 */
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), -1);
	unlink(CFG);
	ck_assert_msg(strstr(err, ":2: limits.timeout_ms: must be an integer")
	    != NULL, "%s", err);
	policy_free(p);
	p = policy_new_default(err, sizeof(err));
	write_cfg("{\"env\": {\"A\": \"NaN // x /* 'y' \\\\ \\\" z\\t\"}}");
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), 0);
	unlink(CFG);
	ck_assert_str_eq(p->env[p->nenv - 1].value,
	    "NaN // x /* 'y' \\ \" z\t");
	policy_free(p);
}
END_TEST

/* A command or workspace that cannot be used names where it was asked for. */
START_TEST(unusable_commands_name_their_origin)
{
	char err[512], want[600];
	struct policy *p = policy_new_default(err, sizeof(err));

	write_cfg("{\n\"commands\": {\n\"cat\": null,\n"
	    "\"foo\": \"/nonexistent/foo\"}}");
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), -1);
	(void)snprintf(want, sizeof(want), "%s:4: command 'foo': "
	    "/nonexistent/foo: not an executable file", CFG);
	ck_assert_str_eq(err, want);
	unlink(CFG);
	policy_free(p);

	p = policy_new_default(err, sizeof(err));
	write_cfg("{\"commands\": [\"cat\",\n\"no-such-program-xyz\"]}");
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), -1);
	(void)snprintf(want, sizeof(want), "%s:2: command "
	    "'no-such-program-xyz': not found on PATH", CFG);
	ck_assert_str_eq(err, want);
	unlink(CFG);
	policy_free(p);

	p = policy_new_default(err, sizeof(err));
	write_cfg("{\n\n\"workspace\": \"/srv/x\"}");
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), 0);
	(void)snprintf(want, sizeof(want), "%s:3", CFG);
	ck_assert_str_eq(p->workspace_origin, want);
	ck_assert_int_eq(policy_set_flag(p, "workspace", "/srv/y", err,
	    sizeof(err)), 0);
	ck_assert_str_eq(p->workspace_origin, "--workspace");
	unlink(CFG);
	policy_free(p);
}
END_TEST

/* A program under /tmp (or /dev, /proc) says why it cannot be used. */
START_TEST(commands_under_tmp_say_why)
{
	char err[512], path[64], want[600];
	struct policy *p = policy_new_default(err, sizeof(err));
	int fd;

	(void)snprintf(path, sizeof(path), "/tmp/tools-policy-prog-XXXXXX");
	ck_assert_int_ge(fd = mkstemp(path), 0);
	ck_assert_int_eq(fchmod(fd, 0755), 0);
	close(fd);
	ck_assert_int_eq(policy_set_flag(p, "allow-command", path, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), -1);
	(void)snprintf(want, sizeof(want), "--allow-command: command '%s': "
	    "cannot run in a sandbox: %s lies in /tmp, /dev, /proc or /sys, "
	    "which every sandbox makes afresh, so it cannot be bound at its "
	    "own path; install it elsewhere", strrchr(path, '/') + 1, path);
	ck_assert_str_eq(err, want);
	unlink(path);
	policy_free(p);
}
END_TEST

/* --deny-command of a name the list does not have is a mistake to say. */
START_TEST(deny_of_an_unknown_command_is_an_error)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));

	ck_assert_int_eq(policy_set_flag(p, "deny-command", "cat", err,
	    sizeof(err)), 0);
	ck_assert_int_eq(policy_set_flag(p, "deny-command", "cat", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "--deny-command: 'cat' is not on run_command's "
	    "list, so there is nothing to remove (--print-config shows the "
	    "list)");
	policy_free(p);
}
END_TEST

/* The default's programs this machine lacks are dropped and named. */
START_TEST(dropped_default_commands_are_named)
{
	char err[512];
	const char *old = getenv("PATH");
	char *saved = old != NULL ? strdup(old) : NULL;
	struct policy *p = policy_new_default(err, sizeof(err));
	size_t n = p->ncommands;

	ck_assert_int_eq(setenv("PATH", "/nonexistent", 1), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), 0);
	if (saved != NULL) {
		ck_assert_int_eq(setenv("PATH", saved, 1), 0);
		free(saved);
	}
	/* nothing is on PATH: every default command named by name is
	 * dropped, and named; one given by absolute path stays */
	ck_assert_uint_eq(p->ncommands + p->ndropped, n);
	ck_assert_uint_ge(p->ndropped, 40);
	ck_assert_str_eq(p->dropped[0], "cat");
	for (size_t i = 0; i < p->ncommands; i++)
		ck_assert_msg(p->commands[i].origin != NULL && strstr(
		    p->commands[i].origin, "<default policy>:") != NULL, "%s",
		    p->commands[i].name);
	policy_free(p);
}
END_TEST

START_TEST(config_value_errors_name_line_and_key)
{
	expect_config_error("{\n  \"limits\": {\n    \"memory_mb\": 4\n  }\n}\n",
	    ":3: limits.memory_mb: must be an integer in 16..65536");
	expect_config_error("{\n\n  \"colour\": 1\n}\n",
	    ":3: colour: unknown key");
	expect_config_error("{\"limits\": {\"speed\": 1}}",
	    ":1: limits.speed: unknown limit");
	expect_config_error("{\"network\": true}", ":1: network: true says "
	    "nothing about where to: give an object with allowed_domains");
	expect_config_error("{\n\"network\": {\"allowed_domains\": "
	    "[\"*.com\"]}}", ":2: network.allowed_domains: '*.com': a "
	    "wildcard needs a domain with a dot under it ('*.example.com', "
	    "not '*.com')");
	expect_config_error("{\"network\": {\"max_bytes\": 1}}",
	    ":1: network.max_bytes: must be an integer in 4096..1099511627776");
	expect_config_error("{\"network\": {\"tunnels\": [\"22:telnet\"]}}",
	    ":1: network.tunnels: '22:telnet': unknown protocol (tls, "
	    "ssh or any)");
	expect_config_error("{\"network\": {\"proxy\": 1}}",
	    ":1: network.proxy: unknown key (allowed_domains, denied_domains, "
	    "resolve, tunnels, max_connections, max_bytes, idle_timeout_ms, "
	    "ask_domains, ask_network)");
	expect_config_error("{\n\"env\": {\"LD_PRELOAD\": \"x.so\"}}",
	    ":2: env.LD_PRELOAD: 'LD_PRELOAD' may not be set for sandboxed "
	    "tools");
	expect_config_error("{\"languages\": [\"cobol\"]}",
	    ":1: languages: unknown language 'cobol' (known: python3, node, "
	    "sh, c)");
	expect_config_error("{\"commands\": [\"rm -rf\"]}",
	    ":1: commands: 'rm -rf' is not a valid command name");
	expect_config_error("{\"commands\": {\"x\": \"relative/x\"}}",
	    ":1: commands.x: the path must be absolute");
	expect_config_error("{\"require_cgroup\": 1}",
	    ":1: require_cgroup: must be true or false");
	expect_config_error("{\"cgroup_parent\": \"/sys/fs/cgroup/../x\"}",
	    ":1: cgroup_parent: must be a directory under /sys/fs/cgroup, "
	    "without '.', '..' or empty components");
	expect_config_error("{\"cgroup_parent\": \"/etc\"}",
	    ":1: cgroup_parent: must be a directory under /sys/fs/cgroup, "
	    "without '.', '..' or empty components");
}
END_TEST

START_TEST(cgroup_settings_from_config_and_flags)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));

	ck_assert(!p->require_cgroup);
	ck_assert_ptr_null(p->cgroup_parent);
	write_cfg("{\"require_cgroup\": true, \"cgroup_parent\": "
	    "\"/sys/fs/cgroup/mcp.slice\"}");
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), 0);
	unlink(CFG);
	ck_assert(p->require_cgroup);
	ck_assert_str_eq(p->cgroup_parent, "/sys/fs/cgroup/mcp.slice");
	ck_assert_int_eq(policy_set_flag(p, "cgroup-parent",
	    "/sys/fs/cgroup/a/b", err, sizeof(err)), 0);
	ck_assert_str_eq(p->cgroup_parent, "/sys/fs/cgroup/a/b");
	ck_assert_int_eq(policy_set_flag(p, "cgroup-parent", "/sys/fs/cgroup/",
	    err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--cgroup-parent: expected a directory under "
	    "/sys/fs/cgroup, got '/sys/fs/cgroup/'");
	policy_free(p);
}
END_TEST

START_TEST(config_overlays_the_default)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));

	write_cfg("{\"_note\": \"comments are ignored\", \"commands\": "
	    "[\"cat\", \"/usr/bin/wc\"], \"limits\": {\"timeout_ms\": 2000}, "
	    "\"databases\": {\"db\": \"/etc/hostname\"}}");
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), 0);
	unlink(CFG);
	ck_assert_uint_eq(p->limits.timeout_ms, 2000);
	ck_assert_uint_eq(p->limits.memory_mb, 4096);	/* kept */
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p->ncommands, 2);
	ck_assert_str_eq(policy_find_command(p, "wc")->path, "/usr/bin/wc");
	ck_assert_ptr_null(policy_find_command(p, "grep"));
	ck_assert_str_eq(policy_find_database(p, "db")->path, "/etc/hostname");
	policy_free(p);
}
END_TEST

START_TEST(configured_commands_that_are_missing_stop_the_start)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));

	ck_assert_int_eq(policy_set_flag(p, "allow-command",
	    "no-such-program-xyz", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--allow-command: command "
	    "'no-such-program-xyz': not found on PATH");
	policy_free(p);
}
END_TEST

START_TEST(flags_override_and_are_checked)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));

	ck_assert_int_eq(policy_set_flag(p, "timeout-ms", "500", err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(p->limits.timeout_ms, 500);
	ck_assert_int_eq(policy_set_flag(p, "memory-mb", "lots", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "--memory-mb: expected an integer in 16..65536, "
	    "got 'lots'");
	ck_assert_int_eq(policy_set_flag(p, "languages", "sh,python3", err,
	    sizeof(err)), 0);
	ck_assert(p->languages[POLICY_LANG_SH].enabled);
	ck_assert(!p->languages[POLICY_LANG_NODE].enabled);
	ck_assert_int_eq(policy_set_flag(p, "database", "noequals", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "--database: expected NAME=VALUE, got "
	    "'noequals'");
	ck_assert_int_eq(policy_set_flag(p, "env", "NODE_OPTIONS=--x", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "--env: 'NODE_OPTIONS' may not be set for "
	    "sandboxed tools");
	ck_assert_int_eq(policy_set_flag(p, "deny-command", "cat", err,
	    sizeof(err)), 0);
	ck_assert_int_eq(policy_set_flag(p, "bogus", "1", err, sizeof(err)),
	    -1);
	ck_assert_str_eq(err, "--bogus: unknown policy flag");
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), 0);
	ck_assert_ptr_null(policy_find_command(p, "cat"));
	ck_assert_int_eq(policy_set_flag(p, "timeout-ms", "600", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "--timeout-ms: the policy is final");
	policy_free(p);
}
END_TEST

START_TEST(every_flag_in_the_table_is_understood)
{
	char err[512];
	size_t i;

	for (i = 0; policy_flags[i].name != NULL; i++) {
		struct policy *p = policy_new_default(err, sizeof(err));
		const char *v = "100";

		if (strcmp(policy_flags[i].name, "database") == 0 ||
		    strcmp(policy_flags[i].name, "env") == 0)
			v = "X=y";
		else if (strcmp(policy_flags[i].name, "languages") == 0)
			v = "sh";
		else if (strstr(policy_flags[i].name, "command") != NULL)
			v = "cat";
		else if (strcmp(policy_flags[i].name, "output-cap") == 0 ||
		    strcmp(policy_flags[i].name, "read-cap") == 0 ||
		    strcmp(policy_flags[i].name, "sql-bytes") == 0)
			v = "4096";
		else if (strcmp(policy_flags[i].name, "warm-python") == 0 ||
		    strcmp(policy_flags[i].name, "pool-size") == 0)
			v = "3";
		else if (strncmp(policy_flags[i].name, "session-", 8) == 0 ||
		    strcmp(policy_flags[i].name, "ask-wait-ms") == 0 ||
		    strcmp(policy_flags[i].name, "grant-ttl-ms") == 0)
			v = "2000";
		else if (strstr(policy_flags[i].name, "sessions") != NULL)
			v = "3";
		else if (strcmp(policy_flags[i].name, "cgroup-parent") == 0)
			v = "/sys/fs/cgroup/mcp";
		else if (strstr(policy_flags[i].name, "-domain") != NULL)
			v = "*.pypi.org:8443";
		else if (strcmp(policy_flags[i].name, "resolve") == 0)
			v = "pypi.org:443:127.0.0.1";
		else if (strcmp(policy_flags[i].name, "egress-tunnel") == 0)
			v = "22:ssh";
		else if (strcmp(policy_flags[i].name, "secret") == 0)
			v = "TOK=*.pypi.org:8443,pypi.org:env:TOK";
		else if (strcmp(policy_flags[i].name, "egress-ca") == 0)
			v = "/etc/ssl/certs/ca-certificates.crt";
		else if (strcmp(policy_flags[i].name, "egress-max-bytes") == 0)
			v = "4096";
		ck_assert_msg(policy_set_flag(p, policy_flags[i].name, v, err,
		    sizeof(err)) == 0, "--%s: %s", policy_flags[i].name, err);
		ck_assert_ptr_nonnull(policy_flags[i].help);
		policy_free(p);
	}
}
END_TEST

START_TEST(timeout_above_the_maximum_is_refused_at_finalize)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));

	ck_assert_int_eq(policy_set_flag(p, "max-timeout-ms", "1000", err,
	    sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "limits: timeout_ms (10000) is over "
	    "max_timeout_ms (1000)");
	policy_free(p);
}
END_TEST

START_TEST(missing_database_stops_the_start)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));

	ck_assert_int_eq(policy_set_flag(p, "database", "x=/nonexistent.db",
	    err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "database 'x': /nonexistent.db: No such file or "
	    "directory");
	policy_free(p);
}
END_TEST

START_TEST(allow_paths_are_checked)
{
	char err[512];
	struct policy *p;

	expect_config_error("{\"allow_read\": \"/srv\"}",
	    ":1: allow_read: must be an array of absolute paths");
	expect_config_error("{\"allow_read_write\": [\"srv\"]}",
	    ":1: allow_read_write: item 0 is not an absolute path");
	expect_config_error("{\"allow_read\": [\"/a\",\"/b\",\"/c\",\"/d\","
	    "\"/e\",\"/f\",\"/g\",\"/h\",\"/i\"]}", ":1: allow_read: more "
	    "than 8 paths in allow_read and allow_read_write together");
	p = policy_new_default(err, sizeof(err));
	write_cfg("{\"allow_read\": [\"/var/tmp\", \"/var\"]}");
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "allow_read: /var and /var/tmp overlap; name one "
	    "of them");
	unlink(CFG);
	policy_free(p);
	p = policy_new_default(err, sizeof(err));
	write_cfg("{\"allow_read_write\": [\"/etc/hostname\"]}");
	ck_assert_int_eq(policy_load_file(p, CFG, err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "allow_read_write: /etc/hostname is on or above "
	    "/etc, which every sandbox makes or binds itself; name a path "
	    "outside it");
	unlink(CFG);
	policy_free(p);
}
END_TEST

/* A file at /var/tmp (outside the sandbox's own /tmp) with bytes. */
static void
write_prog(char *path, size_t len, const void *bytes, size_t n)
{
	int fd;

	(void)snprintf(path, len, "/var/tmp/tools-policy-prog-XXXXXX");
	ck_assert_int_ge((fd = mkstemp(path)), 0);
	ck_assert_int_eq(write(fd, bytes, n), (ssize_t)n);
	ck_assert_int_eq(fchmod(fd, 0755), 0);
	(void)close(fd);
}

/* want: the error after its origin, which is the flag here */
static void
expect_command_error(const char *path, const char *want)
{
	char err[1024], full[1100];
	struct policy *p = policy_new_default(err, sizeof(err));

	ck_assert_int_eq(policy_set_flag(p, "allow-command", path, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), -1);
	(void)snprintf(full, sizeof(full), "--allow-command: %s", want);
	ck_assert_str_eq(err, full);
	policy_free(p);
}

START_TEST(programs_that_cannot_be_described_are_refused)
{
	unsigned char elf[64 + 56];	/* an ELF64 header and one phdr */
	char path[64], want[1024], head[512];
	FILE *f;
	size_t n;

	/* program headers said to lie past the end of the file */
	memset(elf, 0, sizeof(elf));
	memcpy(elf, "\177ELF\2\1\1", 7);
	elf[18] = 62;			/* EM_X86_64 */
	elf[32] = 200;			/* e_phoff past the end */
	elf[54] = 56;			/* e_phentsize */
	elf[56] = 1;			/* e_phnum */
	write_prog(path, sizeof(path), elf, sizeof(elf));
	(void)snprintf(want, sizeof(want), "command '%s': cannot run in a "
	    "sandbox: %s: a malformed ELF file (its program or dynamic "
	    "headers point outside it)", strrchr(path, '/') + 1, path);
	expect_command_error(path, want);
	unlink(path);
	/* a real program cut short */
	ck_assert_ptr_nonnull((f = fopen("/usr/bin/cat", "rb")));
	n = fread(head, 1, sizeof(head), f);
	(void)fclose(f);
	write_prog(path, sizeof(path), head, n);
	(void)snprintf(want, sizeof(want), "command '%s': cannot run in a "
	    "sandbox: %s: a malformed ELF file (its program or dynamic "
	    "headers point outside it)", strrchr(path, '/') + 1, path);
	expect_command_error(path, want);
	unlink(path);
	/* a 32-bit ELF */
	elf[4] = 1;
	write_prog(path, sizeof(path), elf, sizeof(elf));
	(void)snprintf(want, sizeof(want), "command '%s': cannot run in a "
	    "sandbox: %s is not an x86-64 ELF64 program this sandbox runs",
	    strrchr(path, '/') + 1, path);
	expect_command_error(path, want);
	unlink(path);
	/* a script whose interpreter is missing */
	write_prog(path, sizeof(path), "#!/nonexistent/python\n", 22);
	(void)snprintf(want, sizeof(want), "command '%s': cannot run in a "
	    "sandbox: %s: its interpreter /nonexistent/python is missing",
	    strrchr(path, '/') + 1, path);
	expect_command_error(path, want);
	unlink(path);
	/* neither ELF nor script */
	write_prog(path, sizeof(path), "just text\n", 10);
	(void)snprintf(want, sizeof(want), "command '%s': cannot run in a "
	    "sandbox: %s is neither an ELF program nor a script",
	    strrchr(path, '/') + 1, path);
	expect_command_error(path, want);
	unlink(path);
}
END_TEST

START_TEST(print_config_output_loads_back)
{
	char err[512], *text = NULL;
	size_t len = 0;
	struct policy *p = policy_new_default(err, sizeof(err)), *q;
	FILE *f;

	ck_assert_int_eq(policy_set_flag(p, "timeout-ms", "1234", err,
	    sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), 0);
	f = open_memstream(&text, &len);
	policy_print(p, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "\"timeout_ms\":1234"));
	ck_assert_ptr_nonnull(strstr(text, "\"network\":false"));
	write_cfg(text);
	q = policy_new_default(err, sizeof(err));
	ck_assert_msg(policy_load_file(q, CFG, err, sizeof(err)) == 0, "%s",
	    err);
	unlink(CFG);
	ck_assert_uint_eq(q->limits.timeout_ms, 1234);
	ck_assert_uint_eq(q->ncommands, p->ncommands);
	ck_assert_int_eq(policy_finalize(q, err, sizeof(err)), 0);
	policy_free(q);
	policy_free(p);
	free(text);
}
END_TEST

START_TEST(loader_and_interpreter_variables_are_forbidden)
{
	ck_assert(policy_env_name_forbidden("LD_PRELOAD"));
	ck_assert(policy_env_name_forbidden("LD_LIBRARY_PATH"));
	ck_assert(policy_env_name_forbidden("PYTHONSTARTUP"));
	ck_assert(policy_env_name_forbidden("NODE_OPTIONS"));
	ck_assert(policy_env_name_forbidden("BASH_ENV"));
	ck_assert(policy_env_name_forbidden("ENV"));
	ck_assert(policy_env_name_forbidden("GLIBC_TUNABLES"));
	ck_assert(policy_env_name_forbidden("GIT_SSH_COMMAND"));
	ck_assert(!policy_env_name_forbidden("LANG"));
	ck_assert(!policy_env_name_forbidden("MY_VAR"));
	ck_assert(!policy_env_name_ok("1X"));
	ck_assert(!policy_env_name_ok("A=B"));
	ck_assert(policy_env_name_ok("_a1"));
}
END_TEST

START_TEST(unavailable_languages_are_dropped)
{
	char err[512];
	struct policy *p = policy_new_default(err, sizeof(err));
	char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	/* no toolchain on PATH: every language but those found elsewhere */
	setenv("PATH", "/nonexistent", 1);
	ck_assert_int_eq(policy_set_flag(p, "languages", "node,c", err,
	    sizeof(err)), 0);
	ck_assert_int_eq(policy_finalize(p, err, sizeof(err)), 0);
	ck_assert(!p->languages[POLICY_LANG_NODE].available);
	ck_assert(!p->languages[POLICY_LANG_C].available);
	/* python3 alone is also looked for in /usr/bin (behind shims) */
	for (size_t i = 0; i < p->ncommands; i++)
		ck_assert_str_eq(p->commands[i].name, "python3");
	if (old != NULL)
		setenv("PATH", old, 1);
	free(old);
	policy_free(p);
}
END_TEST

static Suite *
policy_suite(void)
{
	Suite *s = suite_create("tools_policy");
	TCase *tc = tcase_create("policy");

	tcase_add_test(tc, default_policy_loads_and_finalizes);
	tcase_add_test(tc, config_syntax_error_names_file_and_line);
	tcase_add_test(tc, config_value_errors_name_line_and_key);
	tcase_add_test(tc, cgroup_settings_from_config_and_flags);
	tcase_add_test(tc, config_overlays_the_default);
	tcase_add_test(tc, configured_commands_that_are_missing_stop_the_start);
	tcase_add_test(tc, config_is_json_and_nothing_more);
	tcase_add_test(tc, config_strings_hold_anything_escaped);
	tcase_add_test(tc, unusable_commands_name_their_origin);
	tcase_add_test(tc, commands_under_tmp_say_why);
	tcase_add_test(tc, deny_of_an_unknown_command_is_an_error);
	tcase_add_test(tc, dropped_default_commands_are_named);
	tcase_add_test(tc, flags_override_and_are_checked);
	tcase_add_test(tc, every_flag_in_the_table_is_understood);
	tcase_add_test(tc, timeout_above_the_maximum_is_refused_at_finalize);
	tcase_add_test(tc, missing_database_stops_the_start);
	tcase_add_test(tc, print_config_output_loads_back);
	tcase_add_test(tc, loader_and_interpreter_variables_are_forbidden);
	tcase_add_test(tc, unavailable_languages_are_dropped);
	tcase_add_test(tc, allow_paths_are_checked);
	tcase_add_test(tc, programs_that_cannot_be_described_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(policy_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
