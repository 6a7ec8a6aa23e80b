/*
 * `mcp-sandbox --check`: print each isolation layer as available or not,
 * with the reason and the fix. A CLI mode that never serves MCP.
 */
#ifndef CMD_CHECK_H
#define CMD_CHECK_H

/* Returns 0 if the default policy can run, 1 if it cannot. */
int cmd_check_main(int argc, char **argv);

#endif /* CMD_CHECK_H */
