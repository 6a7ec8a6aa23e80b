/*
 * The tools the policy governs: programs, code, files, skill scripts
 * and read-only SQL. Handlers, tailor callbacks and the tools/list texts;
 * registry.c names the tools and holds their entries (name, schemas,
 * annotations), as for calculate.
 */
#ifndef SANDBOXED_H
#define SANDBOXED_H

#include "tool.h"

/* read_file */
#define READ_FILE_TITLE	"Read a workspace file"
#define READ_FILE_DESCRIPTION \
	"Read a file of the workspace. path is relative to " \
	"the workspace root; absolute paths, '..' above the root and " \
	"symbolic links pointing out are refused, as are FIFOs and " \
	"devices. Text (UTF-8) comes back as text; a whole PNG, JPEG, " \
	"GIF or WebP image (up to 256 KiB) comes back as an image; other " \
	"binary files come back base64-encoded as a resource (encoding " \
	"\"auto\"), or " \
	"refused with encoding \"text\". At most max_bytes bytes from " \
	"offset are returned (bounded by the policy); truncated says " \
	"whether more follows."
enum mcp_err tool_read_file(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

/* write_file */
#define WRITE_FILE_TITLE	"Write a workspace file"
#define WRITE_FILE_DESCRIPTION \
	"Write a file of the workspace (the same files " \
	"run_command and run_code see under /workspace). path is " \
	"relative to the workspace root; absolute paths, '..' and " \
	"symbolic links are refused. mode \"overwrite\" (default) " \
	"replaces the content, \"append\" adds to it, \"create\" fails " \
	"if the file exists. content is UTF-8 text, or base64 with " \
	"encoding \"base64\". create_dirs makes missing parent " \
	"directories. The policy bounds the file size."
enum mcp_err tool_write_file(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

/* list_directory */
#define LIST_DIRECTORY_TITLE	"List a workspace directory"
#define LIST_DIRECTORY_DESCRIPTION \
	"List a directory of the workspace (path relative to " \
	"the workspace root, default \".\"), sorted by name, with each " \
	"entry's type (file, directory, symlink, fifo, socket, device) " \
	"and size. depth > 1 descends into subdirectories (symlinks are " \
	"listed, never followed). At most max_entries entries; truncated " \
	"says whether more exist."
enum mcp_err tool_list_directory(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

/* search_files */
#define SEARCH_FILES_TITLE	"Search workspace files"
#define SEARCH_FILES_DESCRIPTION \
	"Find files of the workspace by name (a glob on the " \
	"file name, such as \"*.c\") and/or by content (literal text, " \
	"case_sensitive by default), under path (default \".\"). Each " \
	"content match gives the path, the line number and the line. " \
	"Binary files are skipped; symlinks are not followed. Bounded by " \
	"max_results, max_depth and the policy's read limit; truncated " \
	"says whether the search stopped early."
enum mcp_err tool_search_files(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

/* query_sqlite */
#define QUERY_SQLITE_TITLE	"Query a SQLite database (read-only)"
#define QUERY_SQLITE_DESCRIPTION \
	"Run one read-only SQL statement (SELECT, WITH, or " \
	"PRAGMA table_info/index_list and the like) on a SQLite database " \
	"offered by the policy. Pass values as params bound to ? or :name " \
	"placeholders, never pasted into the SQL. Writes, ATTACH, " \
	"transactions, PRAGMA changes and file functions are refused. " \
	"Rows come back as arrays in column order (blobs as " \
	"{\"base64\": ...}); rows and bytes are capped and truncated " \
	"says whether more rows exist."
enum mcp_err tool_query_sqlite(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err tool_query_sqlite_tailor(const struct tool_env *env,
    struct json_object *tool_json);

/* run_command */
#define RUN_COMMAND_TITLE	"Run a command in the sandbox"
#define RUN_COMMAND_DESCRIPTION \
	"Run one allowed program (see the enum of command) " \
	"with arguments as an array, in an isolated sandbox: no network, " \
	"read-only system, the workspace writable at /workspace (the " \
	"working directory), a private /tmp, limits on time, memory, " \
	"processes and output. There is no shell: pipes, redirections, " \
	"globs and $VARS in args are passed literally (use run_code with " \
	"language sh for a shell script). Returns exit_code, stdout and " \
	"stderr (capped; *_truncated says so) and the workspace files the " \
	"command created or changed (images among them as images); a " \
	"non-zero exit, a signal or the deadline is an error result."
enum mcp_err tool_run_command(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err tool_run_command_tailor(const struct tool_env *env,
    struct json_object *tool_json);

/* run_code */
#define RUN_CODE_TITLE	"Run code in the sandbox"
#define RUN_CODE_DESCRIPTION \
	"Run a snippet of code in an isolated sandbox: " \
	"python3 (isolated mode), node, sh, or c (compiled with cc " \
	"inside the same sandbox, then run) - whichever of them the " \
	"language enum offers. No network, read-only system, the " \
	"workspace writable at /workspace (the working directory), a " \
	"private /tmp, limits on time, memory, processes and output. " \
	"args become the program's arguments (sys.argv[1:], " \
	"process.argv after \"--\", $1..., argv[1...]); stdin is its " \
	"standard input. Returns exit_code, stdout, stderr and the " \
	"workspace files the code created or changed: a PNG, JPEG, GIF or " \
	"WebP it writes (a matplotlib plot saved with savefig) comes back " \
	"as an image. A non-zero exit, a signal or the deadline is an " \
	"error result. With session, the interpreter (python3, node, sh) " \
	"stays for later calls of the same session name: load data or " \
	"import once, then use it in the next calls; end_session ends it."
enum mcp_err tool_run_code(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err tool_run_code_tailor(const struct tool_env *env,
    struct json_object *tool_json);

/* end_session, list_sessions (repl.h) */
#define END_SESSION_TITLE	"End a run_code session"
#define END_SESSION_DESCRIPTION \
	"End a run_code session of this client by name: its interpreter, " \
	"its state and its sandbox are gone (files it wrote to the " \
	"workspace stay). A call already running on it finishes first."
#define LIST_SESSIONS_TITLE	"List run_code sessions"
#define LIST_SESSIONS_DESCRIPTION \
	"List this client's open run_code sessions (name, language, age, " \
	"calls) and those that ended, with why."

/* run_skill_script */
#define RUN_SKILL_SCRIPT_TITLE	"Run an Agent Skill script"
#define RUN_SKILL_SCRIPT_DESCRIPTION \
	"Run a script of an Agent Skill (a folder with " \
	"SKILL.md and scripts/) in an isolated sandbox. Name the skill " \
	"and one of its listed scripts (e.g. \"extract.py\"); args are " \
	"passed as an argument array, never through a shell. The script " \
	"runs on a throwaway copy of its skill folder (at /skill, the " \
	"working directory), with an empty environment, no network, and " \
	"the policy's limits and deadline. A JSON object printed on " \
	"stdout becomes the structured result; exit status 2 with a " \
	"message on stderr means the script rejected its input."
enum mcp_err tool_run_skill_script(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err tool_run_skill_script_tailor(const struct tool_env *env,
    struct json_object *tool_json);

#endif
