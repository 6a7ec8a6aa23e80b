/*
 * Unit tests of the calculate tool: exact values and decimal forms, operator
 * precedence, every error class with its exact message and position, the
 * named bounds, the tools/call handler, agreement with the schema files, and
 * a deterministic fuzz run over random byte strings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <json-c/json.h>

#include "calculate.h"
#include "validator.h"

/* The fuzz runs: enough strings to hit every branch of the parser many
 * times, few enough to finish in about a second under ASan. */
#define FUZZ_ROUNDS	20000
/* Longest fuzz string: room for nesting, numbers and several operators. */
#define FUZZ_MAX_LEN	48

static enum calc_status
eval(const char *expr, struct calc_value *v, struct calc_error *e)
{
	return calc_evaluate(expr, strlen(expr), v, e);
}

/* expr evaluates to value, with decimal form decimal (exact or not). */
static void
check_value(const char *expr, const char *value, const char *decimal,
    bool exact)
{
	struct calc_value v = { 0 };
	struct calc_error e;
	enum calc_status st;

	st = eval(expr, &v, &e);
	ck_assert_msg(st == CALC_OK, "%s: status %d: %s", expr, st, e.msg);
	ck_assert_str_eq(v.value, value);
	ck_assert_str_eq(v.decimal, decimal);
	ck_assert_msg(v.decimal_exact == exact, "%s: decimal_exact", expr);
	ck_assert_msg(v.integer == (strchr(value, '/') == NULL),
	    "%s: integer", expr);
	calc_value_fini(&v);
}

static void
check_int(const char *expr, const char *value)
{
	check_value(expr, value, value, true);
}

/* expr fails with st at pos and exactly msg. */
static void
check_error_len(const char *expr, size_t len, enum calc_status st, size_t pos,
    const char *msg)
{
	struct calc_value v = { 0 };
	struct calc_error e;

	ck_assert_int_eq(calc_evaluate(expr, len, &v, &e), st);
	ck_assert_int_eq(e.status, st);
	ck_assert_str_eq(e.msg, msg);
	ck_assert_uint_eq(e.pos, pos);
	ck_assert_ptr_null(v.value);
	ck_assert_ptr_null(v.decimal);
}

static void
check_error(const char *expr, enum calc_status st, size_t pos, const char *msg)
{
	check_error_len(expr, strlen(expr), st, pos, msg);
}

/* A malloc'd string of n copies of s. */
static char *
repeat(const char *s, size_t n)
{
	size_t l = strlen(s), i;
	char *buf = malloc(l * n + 1);

	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < n; i++)
		memcpy(buf + i * l, s, l);
	buf[l * n] = '\0';
	return buf;
}

START_TEST(integers_of_any_size_are_exact)
{
	char expr[512], *o = expr;
	int i;

	check_int("1+2", "3");
	check_int("2^200", "1606938044258990275541962092341162602522202993782"
	    "792835301376");
	check_int("2^64 - 1", "18446744073709551615");
	check_int("-2^64", "-18446744073709551616");
	check_int("12345678901234567890 * 98765432109876543210",
	    "1219326311370217952237463801111263526900");
	check_int("007", "7");
	check_int("-0", "0");
	check_int("(2^127 - 1) % 1000007", "21457");
	/* 100! written out as a product */
	o += sprintf(o, "1");
	for (i = 2; i <= 100; i++)
		o += sprintf(o, "*%d", i);
	check_int(expr, "933262154439441526816992388562667004907159682643816"
	    "214685929638952175999932299156089414639761565182862536979208272"
	    "23758251185210916864000000000000000000000000");
}
END_TEST

START_TEST(decimals_are_exact_rationals)
{
	check_value("0.1+0.2", "3/10", "0.3", true);
	check_int("0.1*3 - 0.3", "0");
	check_value("2.50", "5/2", "2.5", true);
	check_value(".5 + 5.", "11/2", "5.5", true);
	check_int("1.5e3", "1500");
	check_int("1E+2", "100");
	check_value("1.5e-3", "3/2000", "0.0015", true);
	check_value("-1/8", "-1/8", "-0.125", true);
	check_value("123.456", "15432/125", "123.456", true);
	check_value("1e-20", "1/100000000000000000000",
	    "0.00000000000000000001", true);
}
END_TEST

START_TEST(fractions_stay_exact)
{
	check_value("1/3", "1/3", "0.333333333333333333333333333333", false);
	check_int("1/3*3", "1");
	check_int("1/3 + 2/3", "1");
	check_value("2/3", "2/3", "0.666666666666666666666666666667", false);
	check_value("-2/3", "-2/3", "-0.666666666666666666666666666667", false);
	check_value("-1/6", "-1/6", "-0.166666666666666666666666666667", false);
	check_value("1/7", "1/7", "0.142857142857142857142857142857", false);
	check_value("6/-4", "-3/2", "-1.5", true);
	check_value("(1/3 + 2^-3) * 6", "11/4", "2.75", true);
}
END_TEST

START_TEST(rounded_decimals_use_an_exponent_only_when_far_from_one)
{
	check_value("10^40/3", "10000000000000000000000000000000000000000/3",
	    "3.33333333333333333333333333333e39", false);
	check_value("2/3*10^29", "200000000000000000000000000000/3",
	    "66666666666666666666666666666.7", false);
	check_value("1/300000", "1/300000",
	    "0.00000333333333333333333333333333333", false);
	check_value("1/3000000", "1/3000000",
	    "3.33333333333333333333333333333e-7", false);
	check_value("1/3*10^-10", "1/30000000000",
	    "3.33333333333333333333333333333e-11", false);
	/* rounding up to a power of ten moves the exponent */
	check_value("1 - 10^-40/3",
	    "29999999999999999999999999999999999999999/"
	    "30000000000000000000000000000000000000000", "1", false);
}
END_TEST

START_TEST(long_terminating_decimals_are_rounded_past_the_limit)
{
	struct calc_value v = { 0 };
	struct calc_error e;

	/* 2^-1000 has exactly 1000 decimals: exact */
	ck_assert_int_eq(eval("2^-1000", &v, &e), CALC_OK);
	ck_assert(v.decimal_exact);
	ck_assert_uint_eq(strlen(v.decimal), 2 + CALC_MAX_EXACT_DECIMALS);
	ck_assert(strncmp(v.decimal, "0.000", 5) == 0);
	ck_assert(strcmp(v.decimal + strlen(v.decimal) - 5, "90625") == 0);
	calc_value_fini(&v);
	/* 2^-1001 has 1001: rounded */
	ck_assert_int_eq(eval("2^-1001", &v, &e), CALC_OK);
	ck_assert(!v.decimal_exact);
	ck_assert_str_eq(v.decimal, "4.66631809251609439495044772362e-302");
	calc_value_fini(&v);
}
END_TEST

START_TEST(precedence_and_associativity)
{
	check_int("-2^2", "-4");
	check_int("2^3^2", "512");
	check_int("(2^3)^2", "64");
	check_int("2 ** 3 ** 2", "512");
	check_int("2+3*4", "14");
	check_int("(2+3)*4", "20");
	check_int("10-4-3", "3");
	check_int("100/10/5", "2");
	check_int("2*3%4", "2");
	check_int("7 % 3 ^ 2", "7");
	check_value("2^-2", "1/4", "0.25", true);
	check_value("-2^-2", "-1/4", "-0.25", true);
	check_value("2^-2^2", "1/16", "0.0625", true);
	check_int("+-+1", "-1");
	check_int("--2", "2");
	check_int("2*-3", "-6");
	check_int("2 - -3", "5");
	check_int("(-2)^3", "-8");
	check_int("(-2)^2", "4");
	check_int("(-1/2)^-3", "-8");
	check_int("0^0", "1");
	check_int("0^5", "0");
	check_int(" \t( 1\n+\r2 ) ", "3");
}
END_TEST

START_TEST(modulo_is_floored_and_exact)
{
	check_int("7 % 3", "1");
	check_int("-7 % 3", "2");
	check_int("7 % -3", "-2");
	check_int("-7 % -3", "-1");
	check_int("6 % 3", "0");
	check_value("5.5 % 2", "3/2", "1.5", true);
	check_value("-5.5 % 2", "1/2", "0.5", true);
	check_value("(1/3) % (1/4)", "1/12", "0.0833333333333333333333333333333",
	    false);
}
END_TEST

START_TEST(syntax_errors_name_the_position)
{
	check_error("(1+2", CALC_ERR_SYNTAX, 5, "unexpected end of expression "
	    "at position 5 (expected an operator or ')' to close the '(' at "
	    "position 1)");
	check_error("(2 3)", CALC_ERR_SYNTAX, 4, "unexpected '3' at position 4 "
	    "(expected an operator or ')' to close the '(' at position 1)");
	check_error("1+2)", CALC_ERR_SYNTAX, 4, "unexpected ')' at position 4 "
	    "(no '(' is open)");
	check_error("(1+2))*3", CALC_ERR_SYNTAX, 6, "unexpected ')' at "
	    "position 6 (no '(' is open)");
	check_error("2 3", CALC_ERR_SYNTAX, 3, "unexpected '3' at position 3 "
	    "(expected an operator or the end of the expression)");
	check_error("2(3)", CALC_ERR_SYNTAX, 2, "unexpected '(' at position 2 "
	    "(expected an operator or the end of the expression)");
	check_error("()", CALC_ERR_SYNTAX, 2, "unexpected ')' at position 2 "
	    "(expected a number, '(' or a sign)");
	check_error("1+", CALC_ERR_SYNTAX, 3, "unexpected end of expression "
	    "at position 3 (expected a number, '(' or a sign)");
	check_error("1 * / 2", CALC_ERR_SYNTAX, 5, "unexpected '/' at "
	    "position 5 (expected a number, '(' or a sign)");
	check_error("2 * * 3", CALC_ERR_SYNTAX, 5, "unexpected '*' at "
	    "position 5 (expected a number, '(' or a sign)");
	check_error("sqrt(2)", CALC_ERR_SYNTAX, 1, "unexpected 's' at "
	    "position 1: variables, functions and constants are not supported, "
	    "only numbers with + - * / % ^ and parentheses");
	check_error("2x", CALC_ERR_SYNTAX, 2, "unexpected 'x' at position 2: "
	    "variables, functions and constants are not supported, only "
	    "numbers with + - * / % ^ and parentheses");
	check_error("3 @ 4", CALC_ERR_SYNTAX, 3, "unexpected '@' at position 3 "
	    "(expected an operator or the end of the expression)");
	check_error("1,000", CALC_ERR_SYNTAX, 2, "unexpected ',' at position 2 "
	    "(expected an operator or the end of the expression)");
	check_error("", CALC_ERR_SYNTAX, 0, "the expression is empty");
	check_error(" \t\n ", CALC_ERR_SYNTAX, 0, "the expression is empty");
}
END_TEST

START_TEST(malformed_numbers_are_syntax_errors)
{
	check_error("1e", CALC_ERR_SYNTAX, 1, "malformed number at position "
	    "1: expected digits after 'e'");
	check_error("2 + 1E-", CALC_ERR_SYNTAX, 5, "malformed number at "
	    "position 5: expected digits after 'E'");
	check_error(".", CALC_ERR_SYNTAX, 1, "malformed number at position 1: "
	    "'.' must have a digit next to it");
	check_error("1 + .e5", CALC_ERR_SYNTAX, 5, "malformed number at "
	    "position 5: '.' must have a digit next to it");
	check_error("1.2.3", CALC_ERR_SYNTAX, 4, "unexpected '.' at position 4 "
	    "(expected an operator or the end of the expression)");
	check_error("1e5e3", CALC_ERR_SYNTAX, 4, "unexpected 'e' at position "
	    "4: variables, functions and constants are not supported, only "
	    "numbers with + - * / % ^ and parentheses");
}
END_TEST

START_TEST(positions_count_characters_not_bytes)
{
	/* "é" is 2 bytes, "€" 3: positions are characters, from 1 */
	check_error("(1+2)\xc3\xa9", CALC_ERR_SYNTAX, 6, "unexpected non-ASCII "
	    "character at position 6 (expected an operator or the end of the "
	    "expression)");
	check_error("\xe2\x82\xac\xc3\xa9", CALC_ERR_SYNTAX, 1, "unexpected "
	    "non-ASCII character at position 1 (expected a number, '(' or a "
	    "sign)");
	check_error("1 \xe2\x82\xac 1 / 0", CALC_ERR_SYNTAX, 3, "unexpected "
	    "non-ASCII character at position 3 (expected an operator or the end "
	    "of the expression)");
	/* a NUL byte inside the string is just a bad character */
	check_error_len("1\0+2", 4, CALC_ERR_SYNTAX, 2, "unexpected control "
	    "character 0x00 at position 2 (expected an operator or the end of "
	    "the expression)");
	check_error("1+\x7f", CALC_ERR_SYNTAX, 3, "unexpected control "
	    "character 0x7F at position 3 (expected a number, '(' or a sign)");
}
END_TEST

START_TEST(division_by_zero_is_an_error)
{
	check_error("1/0", CALC_ERR_DIV_ZERO, 2, "division by zero at "
	    "position 2");
	check_error("1 + 1/(2-2)", CALC_ERR_DIV_ZERO, 6, "division by zero at "
	    "position 6");
	check_error("0/0", CALC_ERR_DIV_ZERO, 2, "division by zero at "
	    "position 2");
	check_error("5 % (1-1)", CALC_ERR_DIV_ZERO, 3, "modulo by zero at "
	    "position 3");
	check_error("0^-1", CALC_ERR_DIV_ZERO, 2, "division by zero: 0 raised "
	    "to a negative power at position 2");
	check_error("(1-1)**-3", CALC_ERR_DIV_ZERO, 6, "division by zero: 0 "
	    "raised to a negative power at position 6");
}
END_TEST

START_TEST(exponents_must_be_integers)
{
	check_error("2^(1/2)", CALC_ERR_DOMAIN, 2, "the exponent of '^' at "
	    "position 2 is not an integer: only integer exponents are "
	    "supported (a fractional power is in general irrational)");
	check_error("4 ^ 0.5", CALC_ERR_DOMAIN, 3, "the exponent of '^' at "
	    "position 3 is not an integer: only integer exponents are "
	    "supported (a fractional power is in general irrational)");
	check_int("4^(6/3)", "16");
	check_int("2^1.0", "2");
}
END_TEST

START_TEST(huge_powers_are_refused_before_computing)
{
	struct timespec t0, t1;
	double secs;

	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &t0), 0);
	check_error("9^9^9", CALC_ERR_LIMIT, 2, "the exponent of '^' at "
	    "position 2 is too large (limit 65536 in absolute value)");
	check_error("2^65536", CALC_ERR_LIMIT, 2, "the result of '^' at "
	    "position 2 exceeds the limit of 65536 bits (about 19729 decimal "
	    "digits) for a numerator or denominator");
	check_error("(1/2)^65536", CALC_ERR_LIMIT, 6, "the result of '^' at "
	    "position 6 exceeds the limit of 65536 bits (about 19729 decimal "
	    "digits) for a numerator or denominator");
	check_error("10^65536", CALC_ERR_LIMIT, 3, "the result of '^' at "
	    "position 3 exceeds the limit of 65536 bits (about 19729 decimal "
	    "digits) for a numerator or denominator");
	check_error("1^65537", CALC_ERR_LIMIT, 2, "the exponent of '^' at "
	    "position 2 is too large (limit 65536 in absolute value)");
	check_error("2^-99999999999999999999999", CALC_ERR_LIMIT, 2, "the "
	    "exponent of '^' at position 2 is too large (limit 65536 in "
	    "absolute value)");
	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &t1), 0);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(secs < 0.5, "refusals took %.3f s", secs);
	/* the lower bound passes but the exact size does not */
	check_error("3^65535", CALC_ERR_LIMIT, 2, "the result of '^' at "
	    "position 2 exceeds the limit of 65536 bits (about 19729 decimal "
	    "digits) for a numerator or denominator");
	check_int("(-1)^65535", "-1");
	check_int("1^-65536", "1");
}
END_TEST

START_TEST(results_up_to_the_bit_limit_are_computed)
{
	struct calc_value v = { 0 };
	struct calc_error e;

	ck_assert_int_eq(eval("2^65535", &v, &e), CALC_OK);
	ck_assert_uint_eq(strlen(v.value), 19729);
	ck_assert(strncmp(v.value, "10017", 5) == 0);
	ck_assert_str_eq(v.decimal, v.value);
	calc_value_fini(&v);
	ck_assert_int_eq(eval("1/2^65535", &v, &e), CALC_OK);
	ck_assert_uint_eq(strlen(v.value), 2 + 19729);
	ck_assert_str_eq(v.decimal, "9.98238144410385893131811495843e-19729");
	ck_assert(!v.decimal_exact);
	calc_value_fini(&v);
	check_error("2^65535 * 2", CALC_ERR_LIMIT, 9, "the result of '*' at "
	    "position 9 exceeds the limit of 65536 bits (about 19729 decimal "
	    "digits) for a numerator or denominator");
	check_error("2^65535 + 2^65535", CALC_ERR_LIMIT, 9, "the result of '+' "
	    "at position 9 exceeds the limit of 65536 bits (about 19729 decimal "
	    "digits) for a numerator or denominator");
	check_error("1 / 2^65535 / 2", CALC_ERR_LIMIT, 13, "the result of '/' "
	    "at position 13 exceeds the limit of 65536 bits (about 19729 "
	    "decimal digits) for a numerator or denominator");
}
END_TEST

START_TEST(total_work_is_bounded)
{
	char *expr, *plus;

	/* each group costs two results of 65535+1 bits and two of 1+1: the
	 * second power of the 32nd group crosses 2^22 */
	expr = repeat("(2^65534-2^65534)+", 40);
	plus = expr + strlen(expr) - 1;
	*plus = '\0';
	check_error(expr, CALC_ERR_LIMIT, 569, "the expression is too costly: "
	    "its intermediate results up to the '^' at position 569 add up to "
	    "more than the limit of 4194304 bits; split it into smaller "
	    "calculations");
	free(expr);
	check_int("2^65534 - 2^65534 + 2^10", "1024");
}
END_TEST

START_TEST(nesting_depth_is_bounded)
{
	char *open, *close, *expr;
	size_t n = CALC_MAX_DEPTH - 1;	/* the top level is one level */

	open = repeat("(", n);
	close = repeat(")", n);
	expr = malloc(2 * n + 2);
	ck_assert_ptr_nonnull(expr);
	sprintf(expr, "%s7%s", open, close);
	check_int(expr, "7");
	free(expr);
	free(open);
	free(close);
	open = repeat("(", n + 1);
	check_error(open, CALC_ERR_LIMIT, 101, "the expression is nested too "
	    "deeply at position 101 (limit 100 levels of parentheses, signs "
	    "and exponents)");
	free(open);

	expr = repeat("-", n + 1);
	check_error(expr, CALC_ERR_LIMIT, 101, "the expression is nested too "
	    "deeply at position 101 (limit 100 levels of parentheses, signs "
	    "and exponents)");
	expr[n] = '1';
	check_int(expr, "-1");
	free(expr);

	expr = repeat("1^", 100);
	expr[199] = '\0';
	check_int(expr, "1");
	free(expr);
	expr = repeat("1^", 101);
	expr[201] = '\0';
	check_error(expr, CALC_ERR_LIMIT, 201, "the expression is nested too "
	    "deeply at position 201 (limit 100 levels of parentheses, signs "
	    "and exponents)");
	free(expr);
}
END_TEST

START_TEST(literals_are_bounded)
{
	char *digits, *expr;

	digits = repeat("9", CALC_MAX_LITERAL_DIGITS);
	check_value(digits, digits, digits, true);
	expr = malloc(CALC_MAX_LITERAL_DIGITS + 8);
	ck_assert_ptr_nonnull(expr);
	sprintf(expr, "1 + 0.%s", digits);	/* fraction digits count too */
	check_error(expr, CALC_ERR_LIMIT, 5, "the number at position 5 has "
	    "1001 digits (limit 1000)");
	free(expr);
	free(digits);
	check_error("1e1001", CALC_ERR_LIMIT, 1, "the exponent of the number "
	    "at position 1 is out of range (limit 1000 in absolute value)");
	check_error("1 - 1e-1001", CALC_ERR_LIMIT, 5, "the exponent of the "
	    "number at position 5 is out of range (limit 1000 in absolute "
	    "value)");
	check_error("1e999999999999999999999999999", CALC_ERR_LIMIT, 1, "the "
	    "exponent of the number at position 1 is out of range (limit 1000 "
	    "in absolute value)");
	check_value("1e-1000 * 10^1000", "1", "1", true);
}
END_TEST

START_TEST(expression_length_is_bounded)
{
	char *expr;

	/* 2048 "1+" minus the last '+': 4095 characters, then 4097 */
	expr = repeat("1+", CALC_MAX_EXPR_LEN / 2);
	expr[CALC_MAX_EXPR_LEN - 1] = '\0';
	check_int(expr, "2048");
	expr[CALC_MAX_EXPR_LEN - 1] = ' ';
	check_int(expr, "2048");	/* 4096, whitespace counts */
	free(expr);
	expr = repeat("1+", CALC_MAX_EXPR_LEN / 2 + 1);
	expr[CALC_MAX_EXPR_LEN + 1] = '\0';
	check_error(expr, CALC_ERR_LIMIT, 0, "the expression is too long: 4097 "
	    "characters (limit 4096)");
	free(expr);
	/* 4096 two-byte characters are 4096 characters, not 8192 */
	expr = repeat("\xc3\xa9", CALC_MAX_EXPR_LEN);
	check_error(expr, CALC_ERR_SYNTAX, 1, "unexpected non-ASCII character "
	    "at position 1 (expected a number, '(' or a sign)");
	free(expr);
}
END_TEST

/* obj[k1], or obj[k1][k2] if k2 is not NULL; NULL if absent. Borrowed. */
static struct json_object *
jget(struct json_object *obj, const char *k1, const char *k2)
{
	struct json_object *a = NULL, *b = NULL;

	if (!json_object_object_get_ex(obj, k1, &a))
		return NULL;
	if (k2 == NULL)
		return a;
	if (!json_object_object_get_ex(a, k2, &b))
		return NULL;
	return b;
}

/* Calls the handler with {"expression": expr}; returns the result. */
static struct json_object *
call_tool(const char *expr, size_t len)
{
	struct json_object *args, *res = NULL;

	args = json_object_new_object();
	ck_assert_ptr_nonnull(args);
	ck_assert_int_eq(json_object_object_add(args, "expression",
	    json_object_new_string_len(expr, (int)len)), 0);
	ck_assert_int_eq(tool_calculate(NULL, args, &res), MCP_OK);
	ck_assert_ptr_nonnull(res);
	json_object_put(args);
	return res;
}

static const char *
result_text(struct json_object *res)
{
	struct json_object *content = jget(res, "content", NULL), *block;

	ck_assert_ptr_nonnull(content);
	ck_assert_int_eq(json_object_array_length(content), 1);
	block = json_object_array_get_idx(content, 0);
	ck_assert_str_eq(json_object_get_string(jget(block, "type", NULL)),
	    "text");
	return json_object_get_string(jget(block, "text", NULL));
}

START_TEST(handler_returns_structured_content_and_text)
{
	struct json_object *res, *sc;

	res = call_tool("0.1+0.2", 7);
	ck_assert_ptr_null(jget(res, "isError", NULL));
	ck_assert_str_eq(result_text(res), "0.1+0.2 = 3/10 = 0.3");
	sc = jget(res, "structuredContent", NULL);
	ck_assert_str_eq(json_object_to_json_string_ext(sc,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	    "{\"value\":\"3/10\",\"kind\":\"fraction\",\"decimal\":\"0.3\","
	    "\"decimalExact\":true}");
	json_object_put(res);

	res = call_tool("1/3", 3);
	ck_assert_str_eq(result_text(res),
	    "1/3 = 1/3 \u2248 0.333333333333333333333333333333");
	ck_assert(!json_object_get_boolean(jget(res, "structuredContent",
	    "decimalExact")));
	json_object_put(res);

	res = call_tool("  2 ^\n10\t", 9);
	ck_assert_str_eq(result_text(res), "2 ^ 10 = 1024");
	sc = jget(res, "structuredContent", NULL);
	ck_assert_str_eq(json_object_to_json_string_ext(sc,
	    JSON_C_TO_STRING_PLAIN), "{\"value\":\"1024\",\"kind\":"
	    "\"integer\",\"decimal\":\"1024\",\"decimalExact\":true}");
	json_object_put(res);
}
END_TEST

START_TEST(handler_reports_expression_errors_as_tool_errors)
{
	struct json_object *res;

	res = call_tool("1/0", 3);
	ck_assert(json_object_get_boolean(jget(res, "isError", NULL)));
	ck_assert_ptr_null(jget(res, "structuredContent", NULL));
	ck_assert_str_eq(result_text(res), "division by zero at position 2");
	json_object_put(res);

	res = call_tool("1\0001", 3);
	ck_assert(json_object_get_boolean(jget(res, "isError", NULL)));
	ck_assert_str_eq(result_text(res), "unexpected control character 0x00 "
	    "at position 2 (expected an operator or the end of the "
	    "expression)");
	json_object_put(res);
}
END_TEST

START_TEST(handler_survives_arguments_the_schema_would_reject)
{
	struct json_object *args, *res = NULL;

	ck_assert_int_eq(tool_calculate(NULL, NULL, &res), MCP_OK);
	ck_assert_str_eq(result_text(res), "the argument 'expression' (a "
	    "string) is required");
	ck_assert(json_object_get_boolean(jget(res, "isError", NULL)));
	json_object_put(res);

	args = json_tokener_parse("{\"expression\": 42}");
	ck_assert_ptr_nonnull(args);
	res = NULL;
	ck_assert_int_eq(tool_calculate(NULL, args, &res), MCP_OK);
	ck_assert_str_eq(result_text(res), "the argument 'expression' (a "
	    "string) is required");
	json_object_put(res);
	json_object_put(args);

	args = json_tokener_parse("[\"1+1\"]");
	ck_assert_ptr_nonnull(args);
	res = NULL;
	ck_assert_int_eq(tool_calculate(NULL, args, &res), MCP_OK);
	ck_assert(json_object_get_boolean(jget(res, "isError", NULL)));
	json_object_put(res);
	json_object_put(args);
}
END_TEST

static struct json_object *
load_schema(const char *name)
{
	char path[1024];
	struct json_object *s;

	(void)snprintf(path, sizeof(path), "%s/%s", CALC_SCHEMA_DIR, name);
	s = json_object_from_file(path);
	ck_assert_msg(s != NULL, "cannot read %s", path);
	return s;
}

/* A compiled schema from the source tree's schemas/ (the embedded copy is
 * the same file). */
static struct schema *
compile_schema(const char *name)
{
	struct json_object *doc = load_schema(name);
	struct schema *s = NULL;
	char err[256];

	ck_assert_msg(schema_compile(doc, &s, err, sizeof(err)) == MCP_OK,
	    "%s: %s", name, err);
	json_object_put(doc);	/* the schema holds its own reference */
	return s;
}

/* args (JSON text) against the input schema: "" if valid, else the keyword
 * that failed. */
static const char *
input_verdict(const struct schema *in, const char *args,
    struct schema_error *err)
{
	struct json_object *doc = json_tokener_parse(args);
	enum mcp_err st;

	ck_assert_ptr_nonnull(doc);
	memset(err, 0, sizeof(*err));
	st = schema_validate(in, doc, err);
	json_object_put(doc);
	if (st == MCP_OK)
		return "";
	ck_assert_int_eq(st, MCP_ERR_INVALID_PARAMS);
	return err->keyword;
}

START_TEST(input_schema_matches_the_code)
{
	struct json_object *doc = load_schema("calculate.input.json");
	struct schema *in = compile_schema("calculate.input.json");
	struct schema_error err;
	char *args, *body;

	ck_assert_int_eq(json_object_get_int(jget(jget(doc, "properties",
	    "expression"), "maxLength", NULL)), CALC_MAX_EXPR_LEN);
	json_object_put(doc);

	ck_assert_str_eq(input_verdict(in, "{\"expression\": \"1+1\"}", &err),
	    "");
	ck_assert_str_eq(input_verdict(in, "{\"expression\": \"\"}", &err),
	    "minLength");
	ck_assert_str_eq(input_verdict(in, "{}", &err), "required");
	ck_assert_str_eq(input_verdict(in, "{\"expression\": 12}", &err),
	    "type");
	ck_assert_str_eq(input_verdict(in, "[\"1+1\"]", &err), "type");
	ck_assert_str_eq(input_verdict(in,
	    "{\"expression\": \"1\", \"precision\": 5}", &err),
	    "additionalProperties");

	/* the schema counts characters, like calc_evaluate */
	args = malloc(2 * CALC_MAX_EXPR_LEN + 64);
	ck_assert_ptr_nonnull(args);
	body = repeat("\xc3\xa9", CALC_MAX_EXPR_LEN);
	sprintf(args, "{\"expression\": \"%s\"}", body);
	ck_assert_str_eq(input_verdict(in, args, &err), "");
	free(body);
	body = repeat("1", CALC_MAX_EXPR_LEN + 1);
	sprintf(args, "{\"expression\": \"%s\"}", body);
	ck_assert_str_eq(input_verdict(in, args, &err), "maxLength");
	free(body);
	free(args);
	schema_free(in);
}
END_TEST

/* The handler's result for expr conforms to the output schema. */
static void
check_output_conforms(const struct schema *out, const char *expr,
    size_t len)
{
	struct json_object *res = call_tool(expr, len), *sc;
	struct schema_error err;
	const char *value, *kind;

	ck_assert_ptr_null(jget(res, "isError", NULL));
	sc = jget(res, "structuredContent", NULL);
	ck_assert_ptr_nonnull(sc);
	ck_assert_msg(schema_validate(out, sc, &err) == MCP_OK,
	    "%s: %s", expr, err.message);
	value = json_object_get_string(jget(sc, "value", NULL));
	kind = json_object_get_string(jget(sc, "kind", NULL));
	ck_assert((strcmp(kind, "integer") == 0) ==
	    (strchr(value, '/') == NULL));
	json_object_put(res);
}

START_TEST(structured_content_conforms_to_the_output_schema)
{
	static const char *const exprs[] = {
		"0", "-0", "1/3", "-2/3", "2^-1000", "2^-1001", "10^40/3",
		"1/3000000", "2^65535", "-1/2^65535", "1e-1000", "5.5%2",
		"123456789/1000", "-7 % 3", "1 - 10^-40/3",
	};
	struct schema *out = compile_schema("calculate.output.json");
	struct json_object *bad;
	struct schema_error err;
	size_t i;

	for (i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++)
		check_output_conforms(out, exprs[i], strlen(exprs[i]));
	/* and the schema is strict enough to notice a wrong shape */
	bad = json_tokener_parse("{\"value\": \"1/3\", \"kind\": "
	    "\"fraction\", \"decimal\": \"0.(3)\", \"decimalExact\": "
	    "false}");
	ck_assert_int_eq(schema_validate(out, bad, &err),
	    MCP_ERR_INVALID_PARAMS);
	ck_assert_str_eq(err.keyword, "pattern");
	json_object_put(bad);
	schema_free(out);
}
END_TEST

/* xorshift64: a fixed seed makes every fuzz run the same. */
static uint64_t
fuzz_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Runs FUZZ_ROUNDS random strings; alphabet NULL means any byte. Every
 * outcome is a known status; every value conforms to the output schema. */
static void
fuzz(uint64_t seed, const char *alphabet)
{
	struct schema *out = compile_schema("calculate.output.json");
	size_t alen = alphabet ? strlen(alphabet) : 256, len, i, chars;
	struct calc_value v;
	struct calc_error e;
	char buf[FUZZ_MAX_LEN];
	enum calc_status st;
	int round, ok = 0;

	for (round = 0; round < FUZZ_ROUNDS; round++) {
		len = fuzz_next(&seed) % (FUZZ_MAX_LEN + 1);
		for (i = 0; i < len; i++) {
			uint64_t r = fuzz_next(&seed) % alen;

			buf[i] = alphabet ? alphabet[r] : (char)r;
		}
		memset(&v, 0, sizeof(v));
		st = calc_evaluate(buf, len, &v, &e);
		ck_assert_int_eq(e.status, st);
		if (st == CALC_OK) {
			ok++;
			calc_value_fini(&v);
			check_output_conforms(out, buf, len);
			continue;
		}
		ck_assert(st == CALC_ERR_SYNTAX || st == CALC_ERR_DIV_ZERO ||
		    st == CALC_ERR_DOMAIN || st == CALC_ERR_LIMIT);
		ck_assert(e.msg[0] != '\0');
		for (i = chars = 0; i < len; i++)
			if (((unsigned char)buf[i] & 0xC0) != 0x80)
				chars++;
		ck_assert_uint_le(e.pos, chars + 1);
		ck_assert_ptr_null(v.value);
	}
	/* the grammar alphabets must reach the evaluator, not only errors */
	if (alphabet != NULL)
		ck_assert_int_gt(ok, FUZZ_ROUNDS / 200);
	schema_free(out);
}

START_TEST(random_bytes_never_crash)
{
	fuzz(0x9E3779B97F4A7C15ULL, NULL);
}
END_TEST

START_TEST(random_grammar_strings_never_crash)
{
	fuzz(0xD1B54A32D192ED03ULL, "0123456789.()+-*/%^^ e");
	fuzz(0x2545F4914F6CDD1DULL, "0129((()))+-*/%^^^. 9e");
}
END_TEST

static Suite *
calculate_suite(void)
{
	Suite *s = suite_create("calculate");
	TCase *tc;

	tc = tcase_create("values");
	tcase_add_test(tc, integers_of_any_size_are_exact);
	tcase_add_test(tc, decimals_are_exact_rationals);
	tcase_add_test(tc, fractions_stay_exact);
	tcase_add_test(tc,
	    rounded_decimals_use_an_exponent_only_when_far_from_one);
	tcase_add_test(tc, long_terminating_decimals_are_rounded_past_the_limit);
	tcase_add_test(tc, precedence_and_associativity);
	tcase_add_test(tc, modulo_is_floored_and_exact);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, syntax_errors_name_the_position);
	tcase_add_test(tc, malformed_numbers_are_syntax_errors);
	tcase_add_test(tc, positions_count_characters_not_bytes);
	tcase_add_test(tc, division_by_zero_is_an_error);
	tcase_add_test(tc, exponents_must_be_integers);
	suite_add_tcase(s, tc);

	tc = tcase_create("bounds");
	tcase_add_test(tc, huge_powers_are_refused_before_computing);
	tcase_add_test(tc, results_up_to_the_bit_limit_are_computed);
	tcase_add_test(tc, total_work_is_bounded);
	tcase_add_test(tc, nesting_depth_is_bounded);
	tcase_add_test(tc, literals_are_bounded);
	tcase_add_test(tc, expression_length_is_bounded);
	suite_add_tcase(s, tc);

	tc = tcase_create("handler");
	tcase_add_test(tc, handler_returns_structured_content_and_text);
	tcase_add_test(tc, handler_reports_expression_errors_as_tool_errors);
	tcase_add_test(tc, handler_survives_arguments_the_schema_would_reject);
	tcase_add_test(tc, input_schema_matches_the_code);
	tcase_add_test(tc, structured_content_conforms_to_the_output_schema);
	suite_add_tcase(s, tc);

	tc = tcase_create("fuzz");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, random_bytes_never_crash);
	tcase_add_test(tc, random_grammar_strings_never_crash);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(calculate_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
