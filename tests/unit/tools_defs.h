/*
 * The entries registry.c holds for the policy tools, repeated for the unit
 * tests (which call handlers directly, without the toolset).
 */
#ifndef TOOLS_DEFS_H
#define TOOLS_DEFS_H

#include "sandboxed.h"

static const struct tool_def tool_def_run_command __attribute__((unused)) = {
	.name = "run_command",
	.title = RUN_COMMAND_TITLE,
	.description = RUN_COMMAND_DESCRIPTION,
	.input_schema = "run_command.input.json",
	.output_schema = "run_command.output.json",
	.annotations = { .read_only = false,
	    .destructive = true, .idempotent = false, .open_world = false },
	.handler = tool_run_command,
	.tailor = tool_run_command_tailor,
};

static const struct tool_def tool_def_run_code __attribute__((unused)) = {
	.name = "run_code",
	.title = RUN_CODE_TITLE,
	.description = RUN_CODE_DESCRIPTION,
	.input_schema = "run_code.input.json",
	.output_schema = "run_code.output.json",
	.annotations = { .read_only = false,
	    .destructive = true, .idempotent = false, .open_world = false },
	.handler = tool_run_code,
	.tailor = tool_run_code_tailor,
};

static const struct tool_def tool_def_read_file __attribute__((unused)) = {
	.name = "read_file",
	.title = READ_FILE_TITLE,
	.description = READ_FILE_DESCRIPTION,
	.input_schema = "read_file.input.json",
	.output_schema = "read_file.output.json",
	.annotations = { .read_only = true,
	    .destructive = false, .idempotent = true, .open_world = false },
	.handler = tool_read_file,
};

static const struct tool_def tool_def_write_file __attribute__((unused)) = {
	.name = "write_file",
	.title = WRITE_FILE_TITLE,
	.description = WRITE_FILE_DESCRIPTION,
	.input_schema = "write_file.input.json",
	.output_schema = "write_file.output.json",
	.annotations = { .read_only = false,
	    .destructive = true, .idempotent = false, .open_world = false },
	.handler = tool_write_file,
};

static const struct tool_def tool_def_list_directory __attribute__((unused)) = {
	.name = "list_directory",
	.title = LIST_DIRECTORY_TITLE,
	.description = LIST_DIRECTORY_DESCRIPTION,
	.input_schema = "list_directory.input.json",
	.output_schema = "list_directory.output.json",
	.annotations = { .read_only = true,
	    .destructive = false, .idempotent = true, .open_world = false },
	.handler = tool_list_directory,
};

static const struct tool_def tool_def_search_files __attribute__((unused)) = {
	.name = "search_files",
	.title = SEARCH_FILES_TITLE,
	.description = SEARCH_FILES_DESCRIPTION,
	.input_schema = "search_files.input.json",
	.output_schema = "search_files.output.json",
	.annotations = { .read_only = true,
	    .destructive = false, .idempotent = true, .open_world = false },
	.handler = tool_search_files,
};

static const struct tool_def tool_def_run_skill_script __attribute__((unused)) = {
	.name = "run_skill_script",
	.title = RUN_SKILL_SCRIPT_TITLE,
	.description = RUN_SKILL_SCRIPT_DESCRIPTION,
	.input_schema = "run_skill_script.input.json",
	.output_schema = "run_skill_script.output.json",
	.annotations = { .read_only = false,
	    .destructive = false, .idempotent = false, .open_world = false },
	.handler = tool_run_skill_script,
	.tailor = tool_run_skill_script_tailor,
};

static const struct tool_def tool_def_query_sqlite __attribute__((unused)) = {
	.name = "query_sqlite",
	.title = QUERY_SQLITE_TITLE,
	.description = QUERY_SQLITE_DESCRIPTION,
	.input_schema = "query_sqlite.input.json",
	.output_schema = "query_sqlite.output.json",
	.annotations = { .read_only = true,
	    .destructive = false, .idempotent = true, .open_world = false },
	.handler = tool_query_sqlite,
	.tailor = tool_query_sqlite_tailor,
};

#endif
