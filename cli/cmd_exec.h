/*
 * `mcp-sandbox exec [limits] -- PROGRAM ARGS`: run one command in the
 * sandbox from a shell, for debugging and benchmarks. A CLI mode: it never
 * serves MCP, so it writes the program's output to its own stdout/stderr.
 */
#ifndef CMD_EXEC_H
#define CMD_EXEC_H

/*
 * argv[0] is "exec". Returns the process exit code: the program's exit
 * code, 128+signal if it was killed, 124 on timeout, 125 if the sandbox
 * could not be built (nothing ran), 2 for bad flags.
 */
int cmd_exec_main(int argc, char **argv);

#endif /* CMD_EXEC_H */
