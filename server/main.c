/*
 * mcp-sandbox: argv -> configuration -> tools -> transport. No protocol
 * logic here. Only main() may exit the process.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "dispatch.h"
#include "log.h"
#include "registry.h"
#include "session.h"
#include "tool.h"
#include "transport_stdio.h"
#include "version.h"

#define EXIT_USAGE	2	/* bad flags or values, like most CLIs */

enum {
	OPT_AUDIT_LOG = 0x100,
	OPT_LOG_LEVEL,
	OPT_FIXTURES,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "audit-log", required_argument, NULL, OPT_AUDIT_LOG },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	/* test-only: the conformance suite's fixture tools; not in --help */
	{ "conformance-fixtures", no_argument, NULL, OPT_FIXTURES },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: mcp-sandbox [options]\n"
	    "\n"
	    "An MCP server on stdio (newline-delimited JSON-RPC) that offers a "
	    "fixed list of\n"
	    "tools and runs commands and code in a namespace sandbox.\n"
	    "\n"
	    "options:\n"
	    "  -h, --help             show this help and exit\n"
	    "  -V, --version          show the version and exit\n"
	    "      --audit-log FILE   append one JSON line per tool call to "
	    "FILE\n"
	    "      --log-level LEVEL  stderr log level: debug, info, warn, "
	    "error, quiet\n"
	    "                         (default info)\n");
}

/* One-line error and exit code 2, for every bad flag or value. */
static int
usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "mcp-sandbox: %s (try --help)\n", msg);
	return EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct server srv = { 0 };
	struct toolset *tools = NULL;
	struct session sess;
	const char *audit_path = NULL;
	enum log_level level;
	char err[512];
	int c, rc = 1;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mcp-sandbox %s\n", MCP_SANDBOX_VERSION);
			return 0;
		case OPT_AUDIT_LOG:
			audit_path = optarg;
			break;
		case OPT_LOG_LEVEL:
			if (log_parse_level(optarg, &level) != 0)
				return usage_error("bad --log-level \"%s\": "
				    "use debug, info, warn, error or quiet",
				    optarg);
			log_set_level(level);
			break;
		case OPT_FIXTURES:
			env.fixtures = true;
			break;
		case ':':
			return usage_error("option %s needs a value",
			    argv[optind - 1]);
		case '?':
		default:
			return usage_error("unknown option \"%s\"",
			    argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument \"%s\"", argv[optind]);

	/* before any thread exists, so every thread inherits the mask */
	if (transport_stdio_block_signals() != 0) {
		log_err("cannot block signals");
		return 1;
	}
	if (audit_path != NULL &&
	    (srv.audit = audit_open(audit_path, err, sizeof(err))) == NULL) {
		log_err("%s", err);
		return 1;
	}
	if (toolset_new(&env, &tools, err, sizeof(err)) != MCP_OK) {
		log_err("cannot load the tools: %s", err);
		goto out;
	}
	srv.tools = tools;
	srv.env = &env;
	session_init(&sess, NULL);
	log_info("serving %zu tools on stdio", toolset_count(tools));
	rc = transport_stdio_run(&srv, &sess);
	session_fini(&sess);
 out:
	toolset_free(tools);
	audit_close(srv.audit);
	return rc;
}
