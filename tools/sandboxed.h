/*
 * The tools of the policy (issue 4): programs, code, files, skill scripts
 * and read-only SQL. registry.c lists these definitions in its const
 * table; nothing else names them.
 */
#ifndef SANDBOXED_H
#define SANDBOXED_H

#include "tool.h"

extern const struct tool_def tool_def_run_command;	/* run_command.c */
extern const struct tool_def tool_def_run_code;		/* run_code.c */
extern const struct tool_def tool_def_run_skill_script;	/* skills.c */
extern const struct tool_def tool_def_read_file;	/* files.c */
extern const struct tool_def tool_def_write_file;	/* files.c */
extern const struct tool_def tool_def_list_directory;	/* files.c */
extern const struct tool_def tool_def_search_files;	/* files.c */
extern const struct tool_def tool_def_query_sqlite;	/* sqlite.c */

#endif
