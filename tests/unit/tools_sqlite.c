/*
 * Unit tests of query_sqlite on a database built here: rows with bound
 * parameters, blobs, caps with the truncation flag, and every refusal of
 * the read-only policy (writes, ATTACH, PRAGMA changes, load_extension,
 * several statements), a deadline on a runaway query, and the file on
 * disk unchanged afterwards.
 */
#include <sqlite3.h>
#include <sys/stat.h>

#include "sandbox.h"
#include "schema_files.h"
#include "tools_harness.h"

static struct th T;
static char DB[64];	/* /tmp/tools-sqlite-XXXXXX */

static void
make_db(void)
{
	sqlite3 *db;
	char *err = NULL;
	int fd;

	(void)snprintf(DB, sizeof(DB), "/tmp/tools-sqlite-XXXXXX");
	fd = mkstemp(DB);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(sqlite3_open(DB, &db), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db,
	    "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, "
	    "price REAL, data BLOB);"
	    "INSERT INTO items VALUES(1, 'apple', 0.5, x'00ff');"
	    "INSERT INTO items VALUES(2, 'pear', 0.75, NULL);"
	    "INSERT INTO items VALUES(3, 'plum', 1.25, NULL);"
	    "INSERT INTO items VALUES(4, 'fig', 2.0, NULL);", NULL, NULL,
	    &err) == SQLITE_OK, "%s", err);
	sqlite3_close(db);
}

static void
setup_with(const char *const *extra)
{
	char dbflag[128];
	const char *flags[8] = { "database", dbflag, NULL };
	size_t i = 2;

	make_db();
	(void)snprintf(dbflag, sizeof(dbflag), "shop=%s", DB);
	for (; extra != NULL && extra[0] != NULL && i < 6; extra += 2) {
		flags[i++] = extra[0];
		flags[i++] = extra[1];
	}
	flags[i] = NULL;
	th_init_flags(&T, flags);
}

static void
setup(void)
{
	setup_with(NULL);
}

static void
teardown(void)
{
	th_fini(&T);
	unlink(DB);
}

static void
expect_error(const char *args, const char *text)
{
	struct json_object *r = th_call(&T, "query_sqlite", args);

	ck_assert_msg(th_is_error(r), "%s: not an error: %s", args,
	    th_text(r));
	ck_assert_str_eq(th_text(r), text);
	json_object_put(r);
}

START_TEST(query_returns_rows_with_bound_parameters)
{
	struct json_object *r = th_call(&T, "query_sqlite",
	    "{\"database\":\"shop\",\"sql\":\"SELECT id, name, price FROM "
	    "items WHERE price < ? AND name <> :skip ORDER BY id\","
	    "\"params\":[1.5, \"pear\"]}");

	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	ck_assert_str_eq(th_text(r), "{\"columns\":[\"id\",\"name\",\"price\"],"
	    "\"rows\":[[1,\"apple\",0.5],[3,\"plum\",1.25]],\"row_count\":2,"
	    "\"truncated\":false}");
	ck_assert(T.audit.ran && !T.audit.refused);
	json_object_put(r);
}
END_TEST

START_TEST(parameters_are_data_never_sql)
{
	struct json_object *r = th_call(&T, "query_sqlite",
	    "{\"database\":\"shop\",\"sql\":\"SELECT count(*) FROM items "
	    "WHERE name = ?\",\"params\":[\"x' OR '1'='1\"]}");

	ck_assert_str_eq(th_text(r), "{\"columns\":[\"count(*)\"],"
	    "\"rows\":[[0]],\"row_count\":1,\"truncated\":false}");
	json_object_put(r);
}
END_TEST

START_TEST(blobs_come_back_as_base64_objects)
{
	struct json_object *r = th_call(&T, "query_sqlite",
	    "{\"database\":\"shop\",\"sql\":\"SELECT data FROM items WHERE "
	    "id = 1\"}");

	ck_assert_str_eq(th_text(r), "{\"columns\":[\"data\"],"
	    "\"rows\":[[{\"base64\":\"AP8=\"}]],\"row_count\":1,"
	    "\"truncated\":false}");
	json_object_put(r);
}
END_TEST

START_TEST(rows_are_capped_with_a_flag)
{
	struct json_object *r = th_call(&T, "query_sqlite",
	    "{\"database\":\"shop\",\"sql\":\"SELECT id FROM items ORDER BY "
	    "id\",\"max_rows\":2}");

	ck_assert_str_eq(th_text(r), "{\"columns\":[\"id\"],"
	    "\"rows\":[[1],[2]],\"row_count\":2,\"truncated\":true}");
	ck_assert(T.audit.truncated);
	json_object_put(r);
}
END_TEST

START_TEST(a_row_larger_than_the_byte_cap_is_never_built)
{
	static const char *const flags[] = { "sql-bytes", "4096", NULL };
	struct json_object *r;

	teardown();
	setup_with(flags);
	/* 2 x 16 MB fits SQLite's heap limit: the row is never built */
	r = th_call(&T, "query_sqlite", "{\"database\":\"shop\",\"sql\":"
	    "\"SELECT zeroblob(16000000), zeroblob(16000000)\"}");
	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	ck_assert_str_eq(json_object_to_json_string(th_sc(r, "rows")), "[ ]");
	ck_assert_int_eq(json_object_get_int(th_sc(r, "row_count")), 0);
	ck_assert(json_object_get_boolean(th_sc(r, "truncated")));
	ck_assert(T.audit.truncated);
	json_object_put(r);
	/* 8 x 16 MB: SQLite itself would hold 128 MB; its heap limit stops
	 * it (before: a 341 MB reply and 1.35 GB of server memory) */
	r = th_call(&T, "query_sqlite", "{\"database\":\"shop\",\"sql\":"
	    "\"SELECT zeroblob(16000000), zeroblob(16000000), "
	    "zeroblob(16000000), zeroblob(16000000), zeroblob(16000000), "
	    "zeroblob(16000000), zeroblob(16000000), zeroblob(16000000)\"}");
	ck_assert(th_is_error(r));
	ck_assert_str_eq(th_text(r), "The query needed more than the 64 MiB "
	    "SQLite may use; select fewer or smaller values (a row's values "
	    "are built whole).");
	json_object_put(r);
	/* rows that fit are kept; the one that would pass the cap is not */
	r = th_call(&T, "query_sqlite", "{\"database\":\"shop\",\"sql\":"
	    "\"SELECT id, CASE id WHEN 3 THEN zeroblob(8000) ELSE 'x' END "
	    "FROM items ORDER BY id\"}");
	ck_assert_int_eq(json_object_get_int(th_sc(r, "row_count")), 2);
	ck_assert(json_object_get_boolean(th_sc(r, "truncated")));
	json_object_put(r);
}
END_TEST

START_TEST(a_locked_database_waits_no_longer_than_cancellation)
{
	struct sb_cancel c;
	sqlite3 *holder;

	ck_assert_int_eq(sb_cancel_init(&c), 0);
	ck_assert_int_eq(sqlite3_open(DB, &holder), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL,
	    NULL), SQLITE_OK);
	sb_cancel_fire(&c);
	T.call.cancel = &c;
	/* before: the 5 s busy timeout ran out, then "database is locked" */
	expect_error("{\"database\":\"shop\",\"sql\":\"SELECT id FROM "
	    "items\"}", "The query was stopped while being prepared: "
	    "cancelled.");
	T.call.cancel = NULL;
	sqlite3_close(holder);
	sb_cancel_fini(&c);
}
END_TEST

START_TEST(a_locked_database_waits_no_longer_than_the_deadline)
{
	static const char *const flags[] = { "sql-timeout-ms", "200", NULL };
	sqlite3 *holder;

	teardown();
	setup_with(flags);
	ck_assert_int_eq(sqlite3_open(DB, &holder), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL,
	    NULL), SQLITE_OK);
	expect_error("{\"database\":\"shop\",\"sql\":\"SELECT id FROM "
	    "items\"}", "The query was stopped while being prepared: "
	    "deadline reached.");
	sqlite3_close(holder);
}
END_TEST

START_TEST(writes_and_schema_changes_are_refused)
{
	static const char *const sqls[] = {
		"INSERT INTO items(name) VALUES('x')",
		"UPDATE items SET price = 0",
		"DELETE FROM items",
		"DROP TABLE items",
		"CREATE TABLE t(x)",
		"CREATE TEMP TABLE t(x)",
	};
	struct stat before, after;
	size_t i;

	ck_assert_int_eq(stat(DB, &before), 0);
	for (i = 0; i < sizeof(sqls) / sizeof(sqls[0]); i++) {
		char args[256];
		struct json_object *r;

		(void)snprintf(args, sizeof(args), "{\"database\":\"shop\","
		    "\"sql\":\"%s\"}", sqls[i]);
		r = th_call(&T, "query_sqlite", args);
		ck_assert_msg(th_is_error(r), "%s ran", sqls[i]);
		ck_assert_msg(strncmp(th_text(r), "Refused: ", 9) == 0, "%s: %s",
		    sqls[i], th_text(r));
		ck_assert(T.audit.refused);
		json_object_put(r);
	}
	ck_assert_int_eq(stat(DB, &after), 0);
	ck_assert_int_eq(before.st_mtime, after.st_mtime);
	ck_assert_int_eq(before.st_size, after.st_size);
}
END_TEST

START_TEST(attach_pragma_writes_and_file_functions_are_refused)
{
	expect_error("{\"database\":\"shop\",\"sql\":\"ATTACH '/tmp/x.db' AS x\"}",
	    "Refused: query_sqlite only reads (SELECT, WITH, and PRAGMA "
	    "table_info and the like); not allowed: ATTACH and DETACH.");
	expect_error("{\"database\":\"shop\",\"sql\":\"PRAGMA "
	    "journal_mode=WAL\"}", "Refused: query_sqlite only reads (SELECT, "
	    "WITH, and PRAGMA table_info and the like); not allowed: PRAGMAs "
	    "that change settings.");
	expect_error("{\"database\":\"shop\",\"sql\":\"PRAGMA "
	    "writable_schema=1\"}", "Refused: query_sqlite only reads (SELECT, "
	    "WITH, and PRAGMA table_info and the like); not allowed: PRAGMAs "
	    "that change settings.");
	expect_error("{\"database\":\"shop\",\"sql\":\"SELECT "
	    "load_extension('/tmp/evil.so')\"}", "Refused: query_sqlite only "
	    "reads (SELECT, WITH, and PRAGMA table_info and the like); not "
	    "allowed: functions that touch files.");
	expect_error("{\"database\":\"shop\",\"sql\":\"BEGIN\"}",
	    "Refused: query_sqlite only reads (SELECT, WITH, and PRAGMA "
	    "table_info and the like); not allowed: transactions.");
}
END_TEST

START_TEST(read_only_pragmas_are_allowed)
{
	struct json_object *r = th_call(&T, "query_sqlite",
	    "{\"database\":\"shop\",\"sql\":\"SELECT name FROM "
	    "pragma_table_info('items')\"}");

	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	ck_assert_str_eq(th_text(r), "{\"columns\":[\"name\"],\"rows\":"
	    "[[\"id\"],[\"name\"],[\"price\"],[\"data\"]],\"row_count\":4,"
	    "\"truncated\":false}");
	json_object_put(r);
}
END_TEST

START_TEST(one_statement_per_call)
{
	struct json_object *r;

	expect_error("{\"database\":\"shop\",\"sql\":\"SELECT 1; DELETE FROM "
	    "items\"}", "Give exactly one SQL statement per call (text "
	    "follows the first ';').");
	r = th_call(&T, "query_sqlite", "{\"database\":\"shop\","
	    "\"sql\":\"SELECT 1; -- done\\n\"}");
	ck_assert(!th_is_error(r));
	json_object_put(r);
	expect_error("{\"database\":\"shop\",\"sql\":\"-- nothing\"}",
	    "The SQL holds no statement (only whitespace or comments).");
}
END_TEST

START_TEST(parameter_count_must_match)
{
	expect_error("{\"database\":\"shop\",\"sql\":\"SELECT ?, ?\","
	    "\"params\":[1]}", "The statement has 2, but 1 were given; pass "
	    "one params item per ? or :name placeholder.");
}
END_TEST

START_TEST(unknown_database_and_sql_errors_are_explained)
{
	struct json_object *r;

	ck_assert(!th_valid(&T, "query_sqlite",
	    "{\"database\":\"../x\",\"sql\":\"SELECT 1\"}"));
	r = th_call_past_schema(&T, "query_sqlite",
	    "{\"database\":\"other\",\"sql\":\"SELECT 1\"}");
	ck_assert(th_is_error(r));
	ck_assert_str_eq(th_text(r), "There is no database called 'other' in "
	    "the policy; the tool's description lists the databases offered.");
	json_object_put(r);
	expect_error("{\"database\":\"shop\",\"sql\":\"SELEC 1\"}",
	    "SQL error: near \"SELEC\": syntax error.");
	expect_error("{\"database\":\"shop\",\"sql\":\"SELECT nope FROM "
	    "items\"}", "SQL error: no such column: nope.");
}
END_TEST

START_TEST(runaway_query_is_stopped_at_the_deadline)
{
	static const char *const flags[] = { "sql-timeout-ms", "200", NULL };

	teardown();
	setup_with(flags);
	expect_error("{\"database\":\"shop\",\"sql\":\"WITH RECURSIVE c(x) AS "
	    "(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM "
	    "c\"}", "The query was stopped after 200 ms (the policy's "
	    "deadline); add a LIMIT or a narrower WHERE.");
	ck_assert(T.audit.timed_out);
}
END_TEST

START_TEST(tailor_lists_databases_in_enum_and_description)
{
	const struct tool_def *d = th_entry(&T, "query_sqlite")->def;
	const struct schema_file *f = schema_file_find(d->input_schema);
	struct json_object *tool = json_object_new_object(), *db, *en;

	json_object_object_add(tool, "description",
	    json_object_new_string(d->description));
	json_object_object_add(tool, "inputSchema",
	    json_tokener_parse(f->text));
	ck_assert_int_eq(d->tailor(&T.env, tool), MCP_OK);
	ck_assert(json_object_object_get_ex(tool, "inputSchema", &db));
	ck_assert(json_object_object_get_ex(db, "properties", &db));
	ck_assert(json_object_object_get_ex(db, "database", &db));
	ck_assert(json_object_object_get_ex(db, "enum", &en));
	ck_assert_str_eq(json_object_to_json_string(en), "[ \"shop\" ]");
	ck_assert(json_object_object_get_ex(tool, "description", &db));
	ck_assert_ptr_nonnull(strstr(json_object_get_string(db),
	    "Databases: shop."));
	json_object_put(tool);
}
END_TEST

static Suite *
sqlite_suite(void)
{
	Suite *s = suite_create("tools_sqlite");
	TCase *tc = tcase_create("sqlite");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, query_returns_rows_with_bound_parameters);
	tcase_add_test(tc, parameters_are_data_never_sql);
	tcase_add_test(tc, blobs_come_back_as_base64_objects);
	tcase_add_test(tc, rows_are_capped_with_a_flag);
	tcase_add_test(tc, a_row_larger_than_the_byte_cap_is_never_built);
	tcase_add_test(tc, a_locked_database_waits_no_longer_than_cancellation);
	tcase_add_test(tc, a_locked_database_waits_no_longer_than_the_deadline);
	tcase_add_test(tc, writes_and_schema_changes_are_refused);
	tcase_add_test(tc, attach_pragma_writes_and_file_functions_are_refused);
	tcase_add_test(tc, read_only_pragmas_are_allowed);
	tcase_add_test(tc, one_statement_per_call);
	tcase_add_test(tc, parameter_count_must_match);
	tcase_add_test(tc, unknown_database_and_sql_errors_are_explained);
	tcase_add_test(tc, runaway_query_is_stopped_at_the_deadline);
	tcase_add_test(tc, tailor_lists_databases_in_enum_and_description);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sqlite_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
