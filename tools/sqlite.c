/*
 * query_sqlite: one read-only SQL statement with bound parameters on a
 * database the policy names, in-process (like calculate: validation and a
 * read-only engine are its protection). The connection is opened
 * SQLITE_OPEN_READONLY in defensive mode with extensions off and no attach
 * slots; an authorizer allows reads only (no writes, ATTACH, transactions,
 * PRAGMA changes or file-touching functions); a progress handler and a
 * busy handler (for a locked file) enforce the deadline and cancellation;
 * rows and bytes are capped with a flag, a row's size counted before any of
 * its values is converted.
 * The SQL text and parameters are never logged.
 */
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sqlite3.h>

#include "policy.h"
#include "render.h"
#include "sandbox.h"
#include "sandboxed.h"
#include "sqlite_vfs.h"
#include "timespec.h"
#include "workspace.h"

#define SQL_PROGRESS_OPS	1000	/* VM steps between deadline checks */
#define SQL_MAX_PARAMS		64	/* schema maxItems of params */
#define SQL_MAX_LENGTH		(16 << 20)	/* one string or blob value */
#define SQL_MAX_SQL_LENGTH	100000	/* the statement (schema: 65536) */
#define SQL_MAX_EXPR_DEPTH	100	/* nested expressions */
#define SQL_MAX_COLUMNS		500	/* result columns */
#define SQL_VALUE_OVERHEAD	8	/* bytes counted per value, plus data */
#define SQL_BUSY_SLEEP_NS	10000000L	/* 10 ms between lock retries */
/*
 * SQLite's own heap, for every query of the process together. SQLite builds
 * a row's values (a zeroblob(16e6) is 16 MB of real memory) before our byte
 * cap can look at them; past this it fails the query with SQLITE_NOMEM
 * instead of growing the server. Process-wide, set once.
 */
#define SQL_HEAP_LIMIT		(64LL << 20)

/* Pragmas that only read the schema, with a table or index argument. */
static const char *const read_pragmas[] = {
	"table_info", "table_xinfo", "table_list", "index_list", "index_info",
	"index_xinfo", "foreign_key_list",
};

/* Functions that touch files or load code (most exist only in the CLI or
 * when an extension is loaded; refused by name all the same). */
static const char *const denied_functions[] = {
	"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer",
	"zipfile", "sqlar_compress", "sqlar_uncompress", "lsmode",
};

struct sql_run {
	struct timespec deadline;
	struct sb_cancel *cancel;	/* borrowed; may be NULL */
	bool timed_out;
	bool cancelled;
	const char *denied;		/* what the authorizer refused */
};

static int
authorize(void *arg, int action, const char *a1, const char *a2,
    const char *db, const char *trigger)
{
	struct sql_run *run = arg;
	size_t i;

	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		for (i = 0; i < sizeof(denied_functions) / sizeof(char *); i++)
			if (a2 != NULL &&
			    strcasecmp(a2, denied_functions[i]) == 0) {
				run->denied = "functions that touch files";
				return SQLITE_DENY;
			}
		return SQLITE_OK;
	case SQLITE_PRAGMA:
		for (i = 0; i < sizeof(read_pragmas) / sizeof(char *); i++)
			if (a1 != NULL && strcasecmp(a1, read_pragmas[i]) == 0)
				return SQLITE_OK;
		run->denied = "PRAGMAs that change settings";
		return SQLITE_DENY;
	case SQLITE_UPDATE:
		/*
		 * SQLite itself asks this while it declares the schema of an
		 * eponymous virtual table (pragma_table_info(...)). A real
		 * UPDATE of the schema table still cannot happen: the
		 * connection is read-only and defensive, and the statement
		 * is checked with sqlite3_stmt_readonly().
		 */
		if (a1 != NULL && (strcmp(a1, "sqlite_master") == 0 ||
		    strcmp(a1, "sqlite_schema") == 0))
			return SQLITE_OK;
		run->denied = "writes and schema changes";
		return SQLITE_DENY;
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		run->denied = "ATTACH and DETACH";
		return SQLITE_DENY;
	case SQLITE_TRANSACTION:
	case SQLITE_SAVEPOINT:
		run->denied = "transactions";
		return SQLITE_DENY;
	default:
		run->denied = "writes and schema changes";
		return SQLITE_DENY;
	}
}

static int
progress(void *arg)
{
	struct sql_run *run = arg;
	struct timespec now;

	if (run->cancel != NULL && sb_cancel_fired(run->cancel)) {
		run->cancelled = true;
		return 1;
	}
	(void)clock_gettime(CLOCK_MONOTONIC, &now);
	if (!ts_before(&now, &run->deadline)) {
		run->timed_out = true;
		return 1;	/* SQLITE_INTERRUPT */
	}
	return 0;
}

/*
 * Busy handler: a locked database is retried every SQL_BUSY_SLEEP_NS until
 * the deadline or cancellation (sqlite3_busy_timeout would wait blind).
 */
static int
busy(void *arg, int count)
{
	struct timespec nap = { 0, SQL_BUSY_SLEEP_NS };

	(void)count;
	if (progress(arg) != 0)
		return 0;	/* give up: SQLITE_BUSY, flags say why */
	(void)nanosleep(&nap, NULL);
	return 1;
}

/* true if s holds only whitespace and SQL comments. */
static bool
only_comments(const char *s)
{
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' ||
		    *s == '\f' || *s == ';')
			s++;
		if (s[0] == '-' && s[1] == '-') {
			s = strchrnul(s, '\n');
			continue;
		}
		if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");
			if (e == NULL)
				return true;	/* open comment: to the end */
			s = e + 2;
			continue;
		}
		return *s == '\0';
	}
}

static int
bind_params(sqlite3_stmt *stmt, const struct json_object *params)
{
	size_t i, n = params != NULL ? json_object_array_length(params) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(params, i);
		int k = (int)i + 1, rc;

		switch (json_object_get_type(v)) {
		case json_type_null:
			rc = sqlite3_bind_null(stmt, k);
			break;
		case json_type_boolean:
			rc = sqlite3_bind_int(stmt, k,
			    json_object_get_boolean(v));
			break;
		case json_type_int:
			rc = sqlite3_bind_int64(stmt, k,
			    json_object_get_int64(v));
			break;
		case json_type_double:
			rc = sqlite3_bind_double(stmt, k,
			    json_object_get_double(v));
			break;
		default:
			rc = sqlite3_bind_text(stmt, k,
			    json_object_get_string(v),
			    json_object_get_string_len(v), SQLITE_TRANSIENT);
			break;
		}
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/*
 * Bytes counted for column i of the current row, read before the value is
 * fetched or converted (sqlite3_column_bytes() does not convert a value of
 * its own type), so that one huge value is never built.
 */
static size_t
column_size(sqlite3_stmt *stmt, int i)
{
	size_t n;

	switch (sqlite3_column_type(stmt, i)) {
	case SQLITE_TEXT:
		n = (size_t)sqlite3_column_bytes(stmt, i);
		return SQL_VALUE_OVERHEAD + n;
	case SQLITE_BLOB:
		n = (size_t)sqlite3_column_bytes(stmt, i);
		return SQL_VALUE_OVERHEAD + (n + 2) / 3 * 4;
	default:
		return SQL_VALUE_OVERHEAD;
	}
}

/* One column value as JSON (owned; NULL is JSON null). */
static struct json_object *
column_json(sqlite3_stmt *stmt, int i, bool *fail)
{
	const void *blob;
	char *b64;
	struct json_object *o, *v;
	double d;
	int n;

	switch (sqlite3_column_type(stmt, i)) {
	case SQLITE_INTEGER:
		v = json_object_new_int64(sqlite3_column_int64(stmt, i));
		break;
	case SQLITE_FLOAT:
		d = sqlite3_column_double(stmt, i);
		/* JSON has no NaN or infinity */
		return isfinite(d) ? json_object_new_double(d) : NULL;
	case SQLITE_TEXT:
		n = sqlite3_column_bytes(stmt, i);
		v = render_string((const char *)sqlite3_column_text(stmt, i),
		    (size_t)n, NULL);
		break;
	case SQLITE_BLOB:
		blob = sqlite3_column_blob(stmt, i);
		n = sqlite3_column_bytes(stmt, i);
		b64 = render_base64(blob != NULL ? blob : "", (size_t)n);
		if (b64 == NULL) {
			*fail = true;
			return NULL;
		}
		o = json_object_new_object();
		v = json_object_new_string(b64);
		free(b64);
		if (o == NULL || v == NULL ||
		    json_object_object_add(o, "base64", v) != 0) {
			json_object_put(o);
			json_object_put(v);
			*fail = true;
			return NULL;
		}
		return o;
	default:
		return NULL;
	}
	if (v == NULL)
		*fail = true;
	return v;
}

static struct json_object * __attribute__((format(printf, 3, 4)))
sql_error(const struct tool_call *call, const char *reason, const char *fmt,
    ...)
{
	char msg[1024];	/* a sentence and an SQLite message */
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	render_refused(call->audit, reason);
	return tool_result_error("%s", msg);
}

/*
 * The process-wide settings of this module, made once before SQLite's
 * first use: the heap limit (see SQL_HEAP_LIMIT), and where SQLite makes
 * its temporary files (a sort, DISTINCT or view too big for its cache).
 * By itself SQLite picks SQLITE_TMPDIR, TMPDIR or else /var/tmp, any of
 * which may be a directory sandboxes reach (an allow_read_write /var/tmp):
 * there sandboxed code of the server's uid could open such a file before
 * SQLite unlinks it and change it under the query. The server's private
 * parent lies outside every sandbox (checked at start).
 */
static pthread_once_t heap_limit_once = PTHREAD_ONCE_INIT;

static void
set_heap_limit(void)
{
	const char *parent = workspace_parent();

	(void)sqlite3_hard_heap_limit64(SQL_HEAP_LIMIT);
	if (parent != NULL)
		sqlite3_temp_directory = sqlite3_mprintf("%s", parent);
}

/*
 * One query, from its arguments to its result, in the stages
 * tool_query_sqlite() runs in order. Each stage returns 0 to go on, or -1
 * with *r the result that answers (a refusal), NULL when out of memory.
 */
struct sql_query {
	const struct tool_call *call;
	const struct policy *pol;
	const struct policy_database *pdb;
	const char *sql;			/* borrowed from args */
	const struct json_object *params;	/* borrowed from args, or NULL */
	size_t max_rows;
	struct sql_run run;
	struct timespec t0;			/* monotonic, before the open */
	sqlite3 *db;
	sqlite3_stmt *stmt;
	bool entered;				/* sqlvfs_enter() succeeded */
	struct json_object *cols, *rows;	/* owned */
	size_t nrows;
	bool truncated;
};

/* 1. The arguments (valid against the schema) and the database named. */
static int
sql_args(struct sql_query *q, const struct json_object *args,
    struct json_object **r)
{
	struct json_object *v, *params = NULL;
	const char *name;

	(void)json_object_object_get_ex(args, "database", &v);
	name = json_object_get_string(v);
	(void)json_object_object_get_ex(args, "sql", &v);
	q->sql = json_object_get_string(v);
	(void)json_object_object_get_ex(args, "params", &params);
	q->params = params;
	q->max_rows = q->pol->limits.sql_rows;
	if (json_object_object_get_ex(args, "max_rows", &v) &&
	    (size_t)json_object_get_int64(v) < q->max_rows)
		q->max_rows = (size_t)json_object_get_int64(v);
	if ((q->pdb = policy_find_database(q->pol, name)) != NULL)
		return 0;
	*r = sql_error(q->call, "unknown database", "There is no database "
	    "called '%s' in the policy; %s", name, q->pol->ndatabases > 0 ?
	    "the tool's description lists the databases offered." :
	    "none is configured.");
	return -1;
}

/*
 * "file:PATH?immutable=1" with the bytes URIs give a meaning to (and
 * every byte outside printable ASCII) %-escaped: SQLite decodes the name
 * back to PATH before the VFS sees it (sqlite_vfs.c matches it).
 */
static char *
immutable_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path), i, w = 0;
	char *u = malloc(5 + 3 * n + 12 + 1);

	if (u == NULL)
		return NULL;
	memcpy(u, "file:", 5);
	w = 5;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];

		if (c == '%' || c == '?' || c == '#' || c <= ' ' || c >= 0x7f) {
			u[w++] = '%';
			u[w++] = hex[c >> 4];
			u[w++] = hex[c & 15];
		} else {
			u[w++] = (char)c;
		}
	}
	memcpy(u + w, "?immutable=1", 13);
	return u;
}

/* 2. The read-only connection, its limits, and the deadline from now. */
static int
sql_open(struct sql_query *q, struct json_object **r)
{
	char vmsg[256];	/* sqlvfs_enter's sentence */
	char *uri;
	sqlite3 *db;
	int rc;

	q->run.cancel = q->call->cancel;
	(void)clock_gettime(CLOCK_MONOTONIC, &q->t0);
	q->run.deadline = q->t0;
	ts_add_ms(&q->run.deadline, q->pol->limits.sql_timeout_ms);
	(void)pthread_once(&heap_limit_once, set_heap_limit);
	/* the file pinned at start, beneath its directory fd (sqlite_vfs.c) */
	if (sqlvfs_enter(q->pdb, vmsg, sizeof(vmsg)) != 0) {
		*r = sql_error(q->call, "database replaced", "%s", vmsg);
		return -1;
	}
	q->entered = true;
	if (sqlvfs_wal_immutable(q->pdb)) {
		/* file:PATH?immutable=1: no lock, no -wal, no -shm made */
		if ((uri = immutable_uri(q->pdb->path)) == NULL) {
			*r = sql_error(q->call, "out of memory", "%s",
			    "Out of memory.");
			return -1;
		}
		rc = sqlite3_open_v2(uri, &q->db, SQLITE_OPEN_READONLY |
		    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE |
		    SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_URI, SQLVFS_NAME);
		free(uri);
	} else {
		rc = sqlite3_open_v2(q->pdb->path, &q->db, SQLITE_OPEN_READONLY |
		    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE |
		    SQLITE_OPEN_NOFOLLOW, SQLVFS_NAME);
	}
	db = q->db;
	if (rc != SQLITE_OK) {
		*r = sql_error(q->call, "database open failed", "The database "
		    "could not be opened: %s.", db ? sqlite3_errmsg(db) :
		    sqlite3_errstr(rc));
		return -1;
	}
	(void)sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	(void)sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0,
	    NULL);
	(void)sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	(void)sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	(void)sqlite3_limit(db, SQLITE_LIMIT_LENGTH, SQL_MAX_LENGTH);
	(void)sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, SQL_MAX_SQL_LENGTH);
	(void)sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, SQL_MAX_EXPR_DEPTH);
	(void)sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, SQL_MAX_PARAMS);
	(void)sqlite3_limit(db, SQLITE_LIMIT_COLUMN, SQL_MAX_COLUMNS);
	(void)sqlite3_busy_handler(db, busy, &q->run);
	sqlite3_set_authorizer(db, authorize, &q->run);
	sqlite3_progress_handler(db, SQL_PROGRESS_OPS, progress, &q->run);
	return 0;
}

/* 3. One statement, read-only, with exactly its parameters bound. */
static int
sql_prepare(struct sql_query *q, struct json_object **r)
{
	const struct tool_call *call = q->call;
	const char *tail = NULL;
	size_t given = q->params ? json_object_array_length(q->params) : 0;
	char msg[128];	/* two counts */
	int rc, nparam;

	rc = sqlite3_prepare_v3(q->db, q->sql, -1, 0, &q->stmt, &tail);
	if (rc != SQLITE_OK) {
		if (rc == SQLITE_AUTH || q->run.denied != NULL)
			*r = sql_error(call, "not read-only", "Refused: "
			    "query_sqlite only reads (SELECT, WITH, and PRAGMA "
			    "table_info and the like); not allowed: %s.",
			    q->run.denied ? q->run.denied : "writes");
		else if (q->run.timed_out || q->run.cancelled)
			*r = sql_error(call, "deadline", "The query was stopped "
			    "while being prepared: %s.", q->run.cancelled ?
			    "cancelled" : "deadline reached");
		else
			*r = sql_error(call, "sql error", "SQL error: %s.",
			    sqlite3_errmsg(q->db));
		return -1;
	}
	if (q->stmt == NULL) {
		*r = sql_error(call, "empty sql", "%s", "The SQL holds no "
		    "statement (only whitespace or comments).");
		return -1;
	}
	if (tail != NULL && !only_comments(tail)) {
		*r = sql_error(call, "several statements", "%s", "Give exactly "
		    "one SQL statement per call (text follows the first ';').");
		return -1;
	}
	if (!sqlite3_stmt_readonly(q->stmt)) {
		*r = sql_error(call, "not read-only", "%s", "Refused: the "
		    "statement would write; query_sqlite only reads.");
		return -1;
	}
	nparam = sqlite3_bind_parameter_count(q->stmt);
	if ((size_t)nparam != given) {
		(void)snprintf(msg, sizeof(msg), "%d, but %zu were given",
		    nparam, given);
		*r = sql_error(call, "parameter count", "The statement has "
		    "%s; pass one params item per ? or :name placeholder.",
		    msg);
		return -1;
	}
	if (bind_params(q->stmt, q->params) != SQLITE_OK) {
		*r = sql_error(call, "bind failed", "A parameter could not be "
		    "bound: %s.", sqlite3_errmsg(q->db));
		return -1;
	}
	return 0;
}

/* Why a step ended with rc (neither a row nor done): the refusal. */
static struct json_object *
sql_step_error(struct sql_query *q, int rc)
{
	const struct tool_call *call = q->call;
	char ms[16];	/* a uint32 */

	if (q->run.timed_out) {
		(void)snprintf(ms, sizeof(ms), "%u",
		    q->pol->limits.sql_timeout_ms);
		call->audit->timed_out = true;
		return sql_error(call, "deadline", "The query was stopped "
		    "after %s ms (the policy's deadline); add a LIMIT or a "
		    "narrower WHERE.", ms);
	}
	if (q->run.cancelled)
		return sql_error(call, "cancelled", "%s",
		    "The query was cancelled.");
	if (rc == SQLITE_AUTH || q->run.denied != NULL)
		return sql_error(call, "not read-only", "Refused: query_sqlite "
		    "only reads; not allowed: %s.", q->run.denied ?
		    q->run.denied : "writes");
	if (rc == SQLITE_NOMEM)
		return sql_error(call, "memory limit", "The query needed more "
		    "than the %lld MiB SQLite may use; select fewer or smaller "
		    "values (a row's values are built whole).",
		    (long long)(SQL_HEAP_LIMIT >> 20));
	return sql_error(call, "sql error", "SQL error: %s.",
	    sqlite3_errmsg(q->db));
}

/*
 * 4. The column names and the rows, up to max_rows and the policy's byte
 * cap: a row's size is counted before any of its values is built.
 */
static int
sql_fetch(struct sql_query *q, struct json_object **r)
{
	struct json_object *v, *row;
	size_t bytes = 0, rowbytes;
	const char *cn;
	bool fail = false;
	int rc, i, ncol = sqlite3_column_count(q->stmt);

	*r = NULL;
	if ((q->cols = json_object_new_array()) == NULL ||
	    (q->rows = json_object_new_array()) == NULL)
		return -1;
	for (i = 0; i < ncol; i++) {
		cn = sqlite3_column_name(q->stmt, i);
		if ((v = render_string(cn ? cn : "", cn ? strlen(cn) : 0,
		    NULL)) == NULL || json_object_array_add(q->cols, v) != 0)
			return -1;
	}
	while ((rc = sqlite3_step(q->stmt)) == SQLITE_ROW) {
		if (q->nrows == q->max_rows) {
			q->truncated = true;
			break;
		}
		for (i = 0, rowbytes = 0; i < ncol; i++)
			rowbytes += column_size(q->stmt, i);
		if (rowbytes > q->pol->limits.sql_bytes - bytes) {
			q->truncated = true;
			break;
		}
		bytes += rowbytes;
		if ((row = json_object_new_array_ext(ncol)) == NULL ||
		    json_object_array_add(q->rows, row) != 0) {
			json_object_put(row);
			return -1;
		}
		for (i = 0; i < ncol; i++) {
			v = column_json(q->stmt, i, &fail);
			if (fail || json_object_array_add(row, v) != 0)
				return -1;
		}
		q->nrows++;
	}
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	*r = sql_step_error(q, rc);
	q->call->audit->ran = true;
	return -1;
}

/* 5. The audit facts and the result (NULL: out of memory). */
static struct json_object *
sql_result(struct sql_query *q)
{
	struct tool_audit *audit = q->call->audit;
	struct json_object *st;

	audit->ran = true;
	audit->truncated = q->truncated;
	audit->duration_us = ts_us_since(&q->t0);
	/* json-c leaves val to the caller when an add fails: q's to release */
	if ((st = json_object_new_object()) == NULL ||
	    json_object_object_add(st, "columns", q->cols) != 0)
		goto fail;
	q->cols = NULL;
	if (json_object_object_add(st, "rows", q->rows) != 0)
		goto fail;
	q->rows = NULL;
	if (tool_json_add(st, "row_count",
	    json_object_new_int64((int64_t)q->nrows)) != 0 ||
	    tool_json_add(st, "truncated",
	    json_object_new_boolean(q->truncated)) != 0)
		goto fail;
	return render_ok_json(st);
 fail:
	json_object_put(st);
	return NULL;
}

enum mcp_err
tool_query_sqlite(const struct tool_call *call,
    const struct json_object *args,
    struct json_object **ret_result)
{
	struct sql_query q;
	struct json_object *r = NULL;

	memset(&q, 0, sizeof(q));
	q.call = call;
	q.pol = call->env->policy;
	if (sql_args(&q, args, &r) == 0 && sql_open(&q, &r) == 0 &&
	    sql_prepare(&q, &r) == 0 && sql_fetch(&q, &r) == 0)
		r = sql_result(&q);
	json_object_put(q.cols);
	json_object_put(q.rows);
	sqlite3_finalize(q.stmt);
	sqlite3_close_v2(q.db);
	if (q.entered)
		sqlvfs_leave();
	if (r == NULL)
		return MCP_ERR_NOMEM;
	*ret_result = r;
	return MCP_OK;
}

/*
 * tools/list: the database names become the enum of "database", and the
 * description lists them, so a model sees what it may query.
 */
enum mcp_err
tool_query_sqlite_tailor(const struct tool_env *env,
    struct json_object *tool)
{
	const struct policy *p = env->policy;
	struct json_object *schema, *props, *db, *cur;	/* borrowed */
	struct json_object *en;				/* owned until added */
	char *desc = NULL;
	size_t i, len = 0;
	FILE *f;

	if (p->ndatabases == 0)
		return MCP_OK;
	if (!json_object_object_get_ex(tool, "description", &cur) ||
	    !json_object_object_get_ex(tool, "inputSchema", &schema) ||
	    !json_object_object_get_ex(schema, "properties", &props) ||
	    !json_object_object_get_ex(props, "database", &db))
		return MCP_ERR_INTERNAL;
	if ((en = json_object_new_array()) == NULL)
		return MCP_ERR_NOMEM;
	for (i = 0; i < p->ndatabases; i++)
		json_object_array_add(en,
		    json_object_new_string(p->databases[i].name));
	json_object_object_del(db, "pattern");
	json_object_object_add(db, "enum", en);
	if ((f = open_memstream(&desc, &len)) == NULL)
		return MCP_ERR_NOMEM;
	(void)fprintf(f, "%s Databases:", json_object_get_string(cur));
	for (i = 0; i < p->ndatabases; i++)
		(void)fprintf(f, "%s %s", i ? "," : "", p->databases[i].name);
	(void)fputc('.', f);
	if (fclose(f) != 0) {
		free(desc);
		return MCP_ERR_NOMEM;
	}
	json_object_object_add(tool, "description",
	    json_object_new_string(desc));
	free(desc);
	return MCP_OK;
}

