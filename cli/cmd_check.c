/*
 * `mcp-sandbox --check`: one line per isolation layer on stdout (a CLI
 * mode: no MCP is served), then a verdict. Exit status 1 if the default
 * policy cannot run here.
 */
#include <stdbool.h>
#include <stdio.h>

#include "cmd_check.h"
#include "sandbox.h"

struct check_tally {
	int missing_required;
};

static void
print_layer(void *arg, const char *layer, bool ok, bool required,
    const char *detail, const char *fix)
{
	struct check_tally *t = arg;

	printf("%-8s %s: %s\n", ok ? "ok" : required ? "MISSING" : "absent",
	    layer, detail);
	if (!ok && fix != NULL && fix[0] != '\0')
		printf("         fix: %s\n", fix);
	if (!ok && required)
		t->missing_required++;
}

int
cmd_check_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_check_run(NULL, NULL);
}

int
cmd_check_run(const struct sb_config *cfg, cmd_check_extra_fn extra)
{
	struct check_tally t = { 0 };
	int rc;

	rc = check_report(cfg, print_layer, &t);
	if (extra != NULL)
		extra(print_layer, &t);
	if (rc != 0 || t.missing_required > 0) {
		printf("verdict: the default policy CANNOT run here; sandboxed "
		    "tools will refuse to run (fail closed)\n");
		return 1;
	}
	printf("verdict: the default policy can run here\n");
	return 0;
}
