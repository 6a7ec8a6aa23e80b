/* Audit log lines: facts of each call, never its data. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "json_build.h"
#include "log.h"
#include "session.h"
#include "sha256.h"
#include "timespec.h"
#include "tool.h"

struct audit {
	int fd;		/* O_APPEND | O_CLOEXEC */
};

struct audit *
audit_open(const char *path, char *err, size_t errlen)
{
	struct audit *a;
	int fd;

	struct stat st;

	/* never through a symlink, never a FIFO or device (a planted one
	 * would block the server or send its lines elsewhere) */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY |
	    O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0) {
		(void)snprintf(err, errlen, "cannot open audit log %s: %s",
		    path, errno == ELOOP ? "it is a symbolic link" :
		    errno == ENXIO ? "it is not a regular file" :
		    strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		(void)close(fd);
		(void)snprintf(err, errlen, "audit log %s is not a regular "
		    "file", path);
		return NULL;
	}
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		(void)close(fd);
		(void)snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->fd = fd;
	return a;
}

void
audit_close(struct audit *a)
{
	if (a == NULL)
		return;
	(void)close(a->fd);
	free(a);
}

const char *
audit_outcome(const struct json_object *result, const struct tool_audit *f)
{
	struct json_object *v;

	if (result == NULL)
		return "error";
	if (f->refused)
		return "refused";
	if (json_object_object_get_ex((struct json_object *)result, "isError",
	    &v) && json_object_get_boolean(v))
		return "tool_error";
	return "ok";
}

void
audit_log_call(const char *tool, const struct json_object *result,
    const struct tool_audit *f)
{
	char exit_text[32] = "";	/* ", exit 255" or ", signal 9" */

	if (f->exit_code >= 0)
		(void)snprintf(exit_text, sizeof(exit_text), ", exit %d",
		    f->exit_code);
	else if (f->term_signal > 0)
		(void)snprintf(exit_text, sizeof(exit_text), ", signal %d",
		    f->term_signal);
	log_info("call %s: %s%s%s%s%s%s, %llu.%03llu ms", tool,
	    audit_outcome(result, f), f->reason[0] != '\0' ? " (" : "",
	    f->reason, f->reason[0] != '\0' ? ")" : "", exit_text,
	    f->timed_out ? ", timed out" : f->truncated ? ", truncated" : "",
	    (unsigned long long)(f->duration_us / 1000),
	    (unsigned long long)(f->duration_us % 1000));
}

/* One JSON line, written in one write() (O_APPEND keeps lines whole). */
static void
write_line(struct audit *a, struct json_object *line)
{
	const char *text;
	size_t len;
	char *buf;

	text = json_object_to_json_string_length(line, JSON_C_TO_STRING_PLAIN,
	    &len);
	if ((buf = malloc(len + 1)) != NULL) {
		memcpy(buf, text, len);
		buf[len] = '\n';
		(void)!write(a->fd, buf, len + 1);
		free(buf);
	}
}

/*
 * One line per connection the call's program made through its proxy:
 * {"time", "session", "tool", "event": "egress", method, host, port,
 * allowed, rule, address, status, reason, bytes_up, bytes_down}. The
 * host and reason are the program's request's, already made valid UTF-8.
 */
static void
audit_network(struct audit *a, const struct session *sess, const char *tool,
    const char *when, struct json_object *net)
{
	struct json_object *conns, *line;	/* borrowed; owned */
	size_t i, n;

	if (net == NULL || !json_object_object_get_ex(net, "connections",
	    &conns))
		return;
	n = json_object_array_length(conns);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(conns, i);

		if ((line = json_object_new_object()) == NULL)
			return;
		json_object_object_add(line, "time",
		    json_object_new_string(when));
		json_object_object_add(line, "session",
		    json_object_new_string(sess->id));
		json_object_object_add(line, "tool",
		    json_object_new_string(tool));
		json_object_object_add(line, "event",
		    json_object_new_string("egress"));
		json_object_object_foreach(e, k, v)
			json_object_object_add(line, k, json_object_get(v));
		write_line(a, line);
		json_object_put(line);
	}
}

void
audit_task(struct audit *a, const struct session *sess, const char *tool,
    const char *task, const char *event, const char *status,
    uint64_t duration_us)
{
	struct json_object *line;
	char when[TS_ISO_LEN];

	if (a == NULL || (line = json_object_new_object()) == NULL)
		return;
	ts_now_iso(when);
	json_object_object_add(line, "time", json_object_new_string(when));
	json_object_object_add(line, "session", json_object_new_string(sess->id));
	json_object_object_add(line, "tool", json_object_new_string(tool));
	json_object_object_add(line, "event", json_object_new_string(event));
	json_object_object_add(line, "task", json_object_new_string(task));
	json_object_object_add(line, "status", json_object_new_string(status));
	if (strcmp(event, "task_end") == 0)
		json_object_object_add(line, "duration_us",
		    json_object_new_int64((int64_t)duration_us));
	write_line(a, line);
	json_object_put(line);
}

void
audit_call(struct audit *a, const struct session *sess, const char *tool,
    const struct json_object *args, const struct json_object *result,
    const struct tool_audit *f)
{
	struct json_object *line;
	uint8_t digest[SHA256_LEN];
	char hex[2 * SHA256_LEN + 8], when[TS_ISO_LEN];
	const char *text, *outcome;
	size_t len, i;

	text = json_object_to_json_string_length((struct json_object *)args,
	    JSON_C_TO_STRING_PLAIN, &len);
	sha256(text, len, digest);
	memcpy(hex, "sha256:", 7);
	for (i = 0; i < SHA256_LEN; i++)
		(void)snprintf(hex + 7 + 2 * i, 3, "%02x", digest[i]);
	ts_now_iso(when);

	outcome = audit_outcome(result, f);
	line = json_object_new_object();
	json_object_object_add(line, "time", json_object_new_string(when));
	json_object_object_add(line, "session", json_object_new_string(sess->id));
	json_object_object_add(line, "tool", json_object_new_string(tool));
	json_object_object_add(line, "args", json_object_new_string(hex));
	json_object_object_add(line, "outcome", json_object_new_string(outcome));
	if (f->reason[0] != '\0')
		json_object_object_add(line, "reason",
		    json_object_new_string(f->reason));
	json_object_object_add(line, "ran", json_object_new_boolean(f->ran));
	if (f->exit_code >= 0)
		json_object_object_add(line, "exit",
		    json_object_new_int(f->exit_code));
	if (f->term_signal > 0)
		json_object_object_add(line, "signal",
		    json_object_new_int(f->term_signal));
	json_object_object_add(line, "duration_us",
	    json_object_new_int64((int64_t)f->duration_us));
	json_object_object_add(line, "timed_out",
	    json_object_new_boolean(f->timed_out));
	json_object_object_add(line, "truncated",
	    json_object_new_boolean(f->truncated));
	write_line(a, line);
	json_object_put(line);
	audit_network(a, sess, tool, when, f->network);
}

void
audit_approval(struct audit *a, const struct session *sess, const char *tool,
    const struct json_object *asked, const char *answer)
{
	struct json_object *line;
	char when[TS_ISO_LEN];

	if (a == NULL)
		return;
	ts_now_iso(when);
	line = json_object_new_object();
	if ((line = jb_built(line, jb_add(line, "time",
	    json_object_new_string(when)) ||
	    jb_add(line, "session", json_object_new_string(sess->id)) ||
	    jb_add(line, "principal", json_object_new_string(sess->owner)) ||
	    jb_add(line, "tool", json_object_new_string(tool)) ||
	    jb_add(line, "event", json_object_new_string("approval")) ||
	    jb_add(line, "asked", json_object_get(
	    (struct json_object *)asked)) ||
	    jb_add(line, "answer", json_object_new_string(answer)))) == NULL)
		return;
	write_line(a, line);
	json_object_put(line);
}
