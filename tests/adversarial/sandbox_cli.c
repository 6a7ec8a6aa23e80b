/*
 * sandbox-cli: a stand-in for `mcp-sandbox` with only its two sandbox CLI
 * modes, so the adversarial suite and the benchmark can run before (and
 * independently of) the server's main.c. Same code paths: cmd_exec_main()
 * and cmd_check_main().
 */
#include <stdio.h>
#include <string.h>

#include "cmd_check.h"
#include "cmd_exec.h"

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "exec") == 0)
		return cmd_exec_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "--check") == 0)
		return cmd_check_main(argc - 1, argv + 1);
	fprintf(stderr, "usage: sandbox-cli exec [limits] -- PROGRAM ARGS | "
	    "sandbox-cli --check\n");
	return 2;
}
