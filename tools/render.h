/*
 * Rendering for the policy tools: bytes from programs and files become
 * valid JSON strings (UTF-8 checked, bad sequences replaced), binary
 * becomes base64, and a sandbox result becomes content[] +
 * structuredContent with isError for failures a model can act on.
 */
#ifndef RENDER_H
#define RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

struct sb_result;
struct tool_audit;

/* true when data[0..len) is well-formed UTF-8 (no overlongs, no
 * surrogates, nothing above U+10FFFF). NUL bytes count as valid. */
bool render_utf8_valid(const char *data, size_t len);

/*
 * The longest prefix of data[0..len) that does not end inside a UTF-8
 * sequence: for cutting text at a byte cap without splitting a character.
 */
size_t render_utf8_cut(const char *data, size_t len);

/* A new JSON string of data with every ill-formed sequence replaced by
 * U+FFFD (owned; NULL on allocation failure). *replaced counts them. */
struct json_object *render_string(const char *data, size_t len,
    size_t *replaced);

/*
 * Captured bytes as the text a model reads, every one of them (the text
 * block of a run; structuredContent carries the JSON string): well-formed
 * UTF-8 as itself; NUL, the other C0 controls but tab, newline and
 * carriage return, DEL, and each byte of an ill-formed sequence as \xHH
 * (lower-case hex); a backslash doubled where what follows it starts with
 * a backslash or reads as xHH (two hex digits), so that reading "\\\\" as
 * one backslash, "\\xHH" as byte HH and anything else as itself gives back
 * exactly the bytes. Owned NUL-terminated string, or NULL (ENOMEM);
 * *escaped counts the escapes.
 */
char *render_text_bytes(const char *data, size_t len, size_t *escaped);

/*
 * A file name as one line of the server's text shows it (the files report,
 * a resource_link's name): render_text_bytes' scheme, which also escapes
 * tab, newline, carriage return, the C1 controls (U+0080..U+009F) and
 * U+2028, U+2029, each byte as \xHH; so a name can neither start a line of
 * its own nor steer a terminal, and decodes back to its bytes exactly.
 * Owned NUL-terminated string, or NULL (ENOMEM).
 */
char *render_name_text(const char *name, size_t len);

/*
 * true when render_name_text shows name with no \xHH: well-formed UTF-8
 * without a character it escapes. Then a JSON string of the name (path
 * in structuredContent) is the name itself and no more is needed; else
 * results add its bytes (path_bytes).
 */
bool render_name_plain(const char *name, size_t len);

/* Base64 (RFC 4648, padded) of data: owned, NUL-terminated, or NULL. */
char *render_base64(const void *data, size_t len);

/* Decodes padded or unpadded base64 (whitespace not allowed). Owned
 * buffer (NUL after its *ret_len bytes) and *ret_len, or NULL if invalid
 * (or on ENOMEM: *ret_len = 0 and errno ENOMEM). */
void *render_base64_decode(const char *text, size_t len, size_t *ret_len);

/* true when data looks binary: a NUL byte or ill-formed UTF-8. */
bool render_is_binary(const char *data, size_t len);

/*
 * The CallToolResult of a program that ran (sb_run returned 0). what names
 * it in messages ("the command", "the code", "the script"). Fills the audit
 * facts. structured gets: exit_code, signal, timed_out, stdout, stderr,
 * stdout_bytes, stderr_bytes, stdout_truncated, stderr_truncated,
 * duration_ms. isError unless it exited 0. Owned result or NULL.
 */
struct json_object *render_run_result(const struct sb_result *res,
    const char *what, uint32_t timeout_ms, struct tool_audit *audit);

/*
 * A call's proxy records as {connections: [{method,
 * host, port, allowed, rule, address, status, reason, bytes_up,
 * bytes_down}], connection_count, refused, bytes_up, bytes_down,
 * connection_cap_hit, byte_cap_hit, not_recorded} (owned, or NULL), and
 * text with a "--- network ---" part listing them appended (owned).
 */
struct egress_call;
struct json_object *render_network(const struct egress_call *ec);
char *render_network_text(const char *text, struct json_object *net);

/* Fills the audit facts of a program that ran. */
void render_audit_run(const struct sb_result *res, struct tool_audit *audit);

/* The same structured object alone (owned, or NULL). */
struct json_object *render_run_structured(const struct sb_result *res);

/* The text block of a run: status line, then stdout and stderr. Owned. */
char *render_run_text(const struct sb_result *res, const char *what,
    uint32_t timeout_ms);

/* isError result for a sandbox that could not be built: "not run". */
struct json_object *render_sandbox_failure(const struct sb_result *res,
    const char *what, struct tool_audit *audit);

/* Success with structured (ownership taken) and its JSON serialization as
 * the text block. Owned result, or NULL. */
struct json_object *render_ok_json(struct json_object *structured);

/*
 * The first of keys (NULL-terminated) whose value in args holds a U+0000:
 * a string, or a string item or member value of an array or object. NULL
 * if none. C strings end there, so such a value would be cut silently.
 */
const char *render_nul_key(const struct json_object *args,
    const char *const *keys);

/* isError result refusing the argument key for its U+0000 (owned, or
 * NULL); records the refusal in the audit facts. */
struct json_object *render_nul_refusal(struct tool_audit *audit,
    const char *key);

/* Records a refusal in the audit facts (reason is short, no arguments). */
void render_refused(struct tool_audit *audit, const char *reason);

#endif
