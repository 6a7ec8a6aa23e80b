/*
 * calculate: exact arithmetic on an expression string. Integers of any size,
 * exact decimals and fractions, + - * / % ^, parentheses, unary signs. The
 * parser is a recursive descent with a depth limit; numbers are GMP rationals.
 * It trusts nothing in the expression and never evaluates it as code.
 */
#ifndef CALCULATE_H
#define CALCULATE_H

#include <stdbool.h>
#include <stddef.h>

#include "tool.h"

/* Longer than any expression written by hand; bounds parse time and the echo
 * in the text result. Counted in characters (code points), like maxLength in
 * schemas/calculate.input.json, which must carry the same number. */
#define CALC_MAX_EXPR_LEN	4096
/* Parentheses, signs and exponents nested deeper than this are refused: far
 * past any real expression, and it bounds the parser's stack use. */
#define CALC_MAX_DEPTH		100
/* Digits of one number literal (integer and fraction parts): nobody types a
 * longer one, and it bounds the size of a literal's value. */
#define CALC_MAX_LITERAL_DIGITS	1000
/* |n| in a literal's "e<n>": with CALC_MAX_LITERAL_DIGITS it keeps any
 * literal under 6700 bits, well inside CALC_MAX_BITS. */
#define CALC_MAX_SCI_EXPONENT	1000
/* Numerator and denominator of every intermediate result: 19,729 decimal
 * digits, more than any answer a model can read, and GMP then needs only
 * kilobytes, so its abort-on-allocation-failure cannot be provoked. */
#define CALC_MAX_BITS		65536
/* Sum of the sizes of all intermediate results of one expression: 64
 * results of CALC_MAX_BITS. Bounds its CPU time to a fraction of a second,
 * which the other limits alone would not (4096 characters of big fractions
 * take over a second). */
#define CALC_MAX_WORK_BITS	(1 << 22)
/* |exponent| of '^': 2^65536 is already past CALC_MAX_BITS, only 0, 1 and -1
 * could go further, and mpz_pow_ui takes an unsigned long. */
#define CALC_MAX_EXPONENT	65536
/* Significant digits of "decimal" when the expansion does not terminate:
 * well past a double's 17, short enough to read. */
#define CALC_APPROX_DIGITS	30
/* A terminating expansion with more decimals than this (1/2^n has n) is
 * given rounded to CALC_APPROX_DIGITS instead, so "decimal" stays short. */
#define CALC_MAX_EXACT_DECIMALS	1000
/* One error message: a sentence naming the position and the rule. */
#define CALC_ERR_MSG_LEN	256

/* What went wrong in an expression. Every status but CALC_ERR_NOMEM is a
 * tool error: the model can correct the expression. */
enum calc_status {
	CALC_OK = 0,
	CALC_ERR_SYNTAX,	/* malformed expression */
	CALC_ERR_DIV_ZERO,	/* x/0, x%0, 0^-n */
	CALC_ERR_DOMAIN,	/* a non-integer exponent */
	CALC_ERR_LIMIT,		/* one of the CALC_MAX_* bounds */
	CALC_ERR_NOMEM,		/* malloc failed (not the model's fault) */
};

struct calc_error {
	enum calc_status status;
	size_t pos;		/* 1-based character position; 0: none */
	char msg[CALC_ERR_MSG_LEN];	/* NUL-terminated sentence */
};

/* The result of one expression, as strings (no GMP in this interface). */
struct calc_value {
	char *value;		/* owned: "-42", or "-3/10" in lowest terms */
	char *decimal;		/* owned: "0.3", "0.333...3", "1.5e-40" */
	bool integer;		/* value has no denominator */
	bool decimal_exact;	/* decimal is the exact value, not rounded */
};

/*
 * Evaluates expr (len bytes, need not be NUL-terminated, may hold NUL bytes).
 * On CALC_OK fills *ret (release with calc_value_fini); otherwise fills *err
 * and leaves *ret untouched.
 */
enum calc_status calc_evaluate(const char *expr, size_t len,
    struct calc_value *ret, struct calc_error *err)
    __attribute__((warn_unused_result));
/* Frees the strings of v; v may be zeroed or already finished. */
void calc_value_fini(struct calc_value *v);

/*
 * The tools/call handler. args: {"expression": string}. Expression errors
 * are isError results with the message of calc_evaluate; MCP_ERR_NOMEM if
 * memory ran out.
 */
enum mcp_err tool_calculate(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

/* Suggested tools/list text for registry.c. */
#define CALC_TOOL_TITLE		"Exact calculator"
#define CALC_TOOL_DESCRIPTION \
	"Evaluates an arithmetic expression exactly: integers of any size, " \
	"decimals and fractions are exact rationals (0.1+0.2 is 3/10, 1/3 " \
	"stays 1/3). Operators: + - * / % ^ (also **), parentheses, unary " \
	"+ and -. ^ is right-associative and binds tighter than unary minus " \
	"(-2^2 = -4); exponents must be integers (2^-2 = 1/4). a % b = " \
	"a - b*floor(a/b), so the result has the sign of b (-7 % 3 = 2), " \
	"also for fractions. No variables, functions or constants. Returns " \
	"the exact value (integer or fraction in lowest terms) and a " \
	"decimal form; division by zero and results over 65536 bits are " \
	"errors that name the position in the expression."

#endif
