/*
 * `mcp-sandbox --check`: print each isolation layer as available or not,
 * with the reason and the fix. A CLI mode that never serves MCP.
 */
#ifndef CMD_CHECK_H
#define CMD_CHECK_H

#include <stdbool.h>

struct sb_config;

/* Returns 0 if the default policy can run, 1 if it cannot. */
int cmd_check_main(int argc, char **argv);

/*
 * One line per layer: its name, whether it works, and when it does not
 * the reason and the fix.
 */
typedef void (*cmd_check_line_fn)(void *arg, const char *layer, bool ok,
    bool required, const char *detail, const char *fix);
/*
 * The sandbox's layers (check_report.c), through fn/arg. cfg: the sandbox
 * settings of a policy (cgroup required, ...), or NULL. Returns 0 if the
 * default policy can run. Forks: for a single-threaded process.
 */
int check_report(const struct sb_config *cfg, cmd_check_line_fn fn,
    void *arg);

/*
 * cmd_check_main with the lines of layers outside the sandbox library (the
 * server's workspace cap): extra reports through fn/arg after check_report.
 */
typedef void (*cmd_check_extra_fn)(cmd_check_line_fn fn, void *arg);
int cmd_check_run(const struct sb_config *cfg, cmd_check_extra_fn extra);

#endif /* CMD_CHECK_H */
