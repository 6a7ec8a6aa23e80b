/*
 * calculate: exact arithmetic on an expression string (see calculate.h).
 * The expression is untrusted bytes. It is parsed by a recursive descent
 * bounded by CALC_MAX_DEPTH, and every value is a GMP rational whose size is
 * checked against CALC_MAX_BITS after each operation (and before a power),
 * so GMP never needs more than kilobytes. Nothing here is ever executed.
 *
 * Grammar (whitespace: space, tab, CR, LF between tokens):
 *	expr	:= term (('+' | '-') term)*
 *	term	:= unary (('*' | '/' | '%') unary)*
 *	unary	:= ('+' | '-') unary | power
 *	power	:= primary (('^' | '**') unary)?	right-associative
 *	primary	:= number | '(' expr ')'
 *	number	:= digits ['.' [digits]] [exp] | '.' digits [exp]
 *	exp	:= ('e' | 'E') ['+' | '-'] digits
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>

#include "calculate.h"

/* log10(2): turns CALC_MAX_BITS into decimal digits for messages. */
#define CALC_LOG10_2		0.30103
/* Smallest decimal exponent written without "e" in a rounded decimal, as
 * JavaScript's Number#toString does: 0.000001 is plain, 1e-7 is not. */
#define CALC_PLAIN_MIN_EXP	(-6)

struct calc_parser {
	const char *s;		/* borrowed: the expression, len bytes */
	size_t len;
	size_t off;		/* next byte to read */
	int depth;		/* current nesting of unary() */
	uint64_t work;		/* bits of all results so far */
	struct calc_error *err;	/* borrowed: filled by the first error */
};

static int calc_expr(struct calc_parser *p, mpq_t out);
static int calc_unary(struct calc_parser *p, mpq_t out);

/* The 1-based character position of byte off: UTF-8 continuation bytes are
 * not counted, so positions match the characters a model sees. */
static size_t
calc_pos(const struct calc_parser *p, size_t off)
{
	size_t i, n = 1;

	for (i = 0; i < off && i < p->len; i++)
		if (((unsigned char)p->s[i] & 0xC0) != 0x80)
			n++;
	return n;
}

static void
calc_fail(struct calc_parser *p, enum calc_status st, size_t off,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Records the first error; fmt names the position itself. */
static void
calc_fail(struct calc_parser *p, enum calc_status st, size_t off,
    const char *fmt, ...)
{
	va_list ap;

	if (p->err->status != CALC_OK)
		return;
	p->err->status = st;
	p->err->pos = off == SIZE_MAX ? 0 : calc_pos(p, off);
	va_start(ap, fmt);
	(void)vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
}

static int
calc_is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int
calc_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
calc_is_letter(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* Skips whitespace; returns the next byte, or -1 at the end. */
static int
calc_peek(struct calc_parser *p)
{
	while (p->off < p->len && calc_is_space((unsigned char)p->s[p->off]))
		p->off++;
	return p->off < p->len ? (unsigned char)p->s[p->off] : -1;
}

/* A syntax error at the current byte; expected says what would fit. */
static void
calc_unexpected(struct calc_parser *p, const char *expected)
{
	size_t off = p->off;
	size_t pos = calc_pos(p, off);
	int c;

	if (off >= p->len) {
		calc_fail(p, CALC_ERR_SYNTAX, off, "unexpected end of "
		    "expression at position %zu (expected %s)", pos, expected);
		return;
	}
	c = (unsigned char)p->s[off];
	if (calc_is_letter(c))
		calc_fail(p, CALC_ERR_SYNTAX, off, "unexpected '%c' at "
		    "position %zu: variables, functions and constants are not "
		    "supported, only numbers with + - * / %% ^ and parentheses",
		    c, pos);
	else if (c >= 0x80)
		calc_fail(p, CALC_ERR_SYNTAX, off, "unexpected non-ASCII "
		    "character at position %zu (expected %s)", pos, expected);
	else if (c < 0x20 || c == 0x7F)
		calc_fail(p, CALC_ERR_SYNTAX, off, "unexpected control "
		    "character 0x%02X at position %zu (expected %s)", c, pos,
		    expected);
	else
		calc_fail(p, CALC_ERR_SYNTAX, off, "unexpected '%c' at "
		    "position %zu (expected %s)", c, pos, expected);
}

/* 0 if q fits CALC_MAX_BITS and the total stays within CALC_MAX_WORK_BITS;
 * else an error naming the operator at off. */
static int
calc_check_size(struct calc_parser *p, const mpq_t q, size_t off, int op)
{
	size_t nb = mpz_sizeinbase(mpq_numref(q), 2);
	size_t db = mpz_sizeinbase(mpq_denref(q), 2);

	if (nb > CALC_MAX_BITS || db > CALC_MAX_BITS) {
		calc_fail(p, CALC_ERR_LIMIT, off, "the result of '%c' at "
		    "position %zu exceeds the limit of %d bits (about %d "
		    "decimal digits) for a numerator or denominator", op,
		    calc_pos(p, off), CALC_MAX_BITS,
		    (int)(CALC_MAX_BITS * CALC_LOG10_2) + 1);
		return -1;
	}
	p->work += nb + db;
	if (p->work > CALC_MAX_WORK_BITS) {
		calc_fail(p, CALC_ERR_LIMIT, off, "the expression is too costly: "
		    "its intermediate results up to the '%c' at position %zu "
		    "add up to more than the limit of %d bits; split it into "
		    "smaller calculations", op, calc_pos(p, off),
		    CALC_MAX_WORK_BITS);
		return -1;
	}
	return 0;
}

/* Digits of a literal into out; p->off is at a digit or '.'. */
static int
calc_number(struct calc_parser *p, mpq_t out)
{
	char digits[CALC_MAX_LITERAL_DIGITS + 1];
	size_t start = p->off, off = p->off, nd = 0, nfrac = 0, eoff;
	long sci = 0, scale;
	bool point = false, neg = false, over = false, any = false;
	mpz_t pow10;
	int c;

	for (; off < p->len; off++) {
		c = (unsigned char)p->s[off];
		if (calc_is_digit(c)) {
			if (nd < CALC_MAX_LITERAL_DIGITS)
				digits[nd] = (char)c;
			nd++;
			if (point)
				nfrac++;
		} else if (c == '.' && !point) {
			point = true;
		} else {
			break;
		}
	}
	if (nd == 0) {
		calc_fail(p, CALC_ERR_SYNTAX, start, "malformed number at "
		    "position %zu: '.' must have a digit next to it",
		    calc_pos(p, start));
		return -1;
	}
	if (nd > CALC_MAX_LITERAL_DIGITS) {
		calc_fail(p, CALC_ERR_LIMIT, start, "the number at position %zu "
		    "has %zu digits (limit %d)", calc_pos(p, start), nd,
		    CALC_MAX_LITERAL_DIGITS);
		return -1;
	}
	digits[nd] = '\0';
	if (off < p->len && (p->s[off] == 'e' || p->s[off] == 'E')) {
		eoff = off++;
		if (off < p->len && (p->s[off] == '+' || p->s[off] == '-'))
			neg = p->s[off++] == '-';
		for (; off < p->len && calc_is_digit((unsigned char)p->s[off]);
		    off++) {
			any = true;
			if (!over)
				sci = sci * 10 + (p->s[off] - '0');
			if (sci > CALC_MAX_SCI_EXPONENT)
				over = true;
		}
		if (!any) {
			calc_fail(p, CALC_ERR_SYNTAX, start, "malformed number "
			    "at position %zu: expected digits after '%c'",
			    calc_pos(p, start), p->s[eoff]);
			return -1;
		}
		if (over) {
			calc_fail(p, CALC_ERR_LIMIT, start, "the exponent of "
			    "the number at position %zu is out of range (limit "
			    "%d in absolute value)", calc_pos(p, start),
			    CALC_MAX_SCI_EXPONENT);
			return -1;
		}
		if (neg)
			sci = -sci;
	}
	p->off = off;

	(void)mpz_set_str(mpq_numref(out), digits, 10);	/* digits only */
	mpz_set_ui(mpq_denref(out), 1);
	scale = sci - (long)nfrac;
	mpz_init(pow10);
	mpz_ui_pow_ui(pow10, 10, (unsigned long)(scale < 0 ? -scale : scale));
	if (scale > 0) {
		mpz_mul(mpq_numref(out), mpq_numref(out), pow10);
	} else if (scale < 0) {
		mpz_set(mpq_denref(out), pow10);
		mpq_canonicalize(out);
	}
	mpz_clear(pow10);
	return 0;	/* under 6700 bits: see CALC_MAX_SCI_EXPONENT */
}

/* number | '(' expr ')' */
static int
calc_primary(struct calc_parser *p, mpq_t out)
{
	size_t open;
	int c;

	c = calc_peek(p);
	if (c == '(') {
		open = p->off++;
		if (calc_expr(p, out) != 0)
			return -1;
		if (calc_peek(p) != ')') {
			char expected[96];

			(void)snprintf(expected, sizeof(expected), "an operator "
			    "or ')' to close the '(' at position %zu",
			    calc_pos(p, open));
			calc_unexpected(p, expected);
			return -1;
		}
		p->off++;
		return 0;
	}
	if (c == '.' || calc_is_digit(c))
		return calc_number(p, out);
	calc_unexpected(p, "a number, '(' or a sign");
	return -1;
}

/* base = base ^ ex, for the '^' at op_off. */
static int
calc_pow(struct calc_parser *p, mpq_t base, const mpq_t ex, size_t op_off)
{
	uint64_t bn, bd;
	unsigned long ue;
	long e;

	if (mpz_cmp_ui(mpq_denref(ex), 1) != 0) {
		calc_fail(p, CALC_ERR_DOMAIN, op_off, "the exponent of '^' at "
		    "position %zu is not an integer: only integer exponents are "
		    "supported (a fractional power is in general irrational)",
		    calc_pos(p, op_off));
		return -1;
	}
	if (mpz_cmpabs_ui(mpq_numref(ex), CALC_MAX_EXPONENT) > 0) {
		calc_fail(p, CALC_ERR_LIMIT, op_off, "the exponent of '^' at "
		    "position %zu is too large (limit %d in absolute value)",
		    calc_pos(p, op_off), CALC_MAX_EXPONENT);
		return -1;
	}
	e = mpz_get_si(mpq_numref(ex));
	ue = (unsigned long)(e < 0 ? -e : e);
	if (mpq_sgn(base) == 0) {
		if (e < 0) {
			calc_fail(p, CALC_ERR_DIV_ZERO, op_off, "division by "
			    "zero: 0 raised to a negative power at position %zu",
			    calc_pos(p, op_off));
			return -1;
		}
		mpq_set_ui(base, e == 0 ? 1 : 0, 1);	/* 0^0 = 1 */
		return 0;
	}
	if (e < 0)
		mpq_inv(base, base);
	/* A lower bound of the result's size: refuse before computing. */
	bn = mpz_sizeinbase(mpq_numref(base), 2);
	bd = mpz_sizeinbase(mpq_denref(base), 2);
	if ((bn - 1) * ue + 1 > CALC_MAX_BITS ||
	    (bd - 1) * ue + 1 > CALC_MAX_BITS) {
		calc_fail(p, CALC_ERR_LIMIT, op_off, "the result of '^' at "
		    "position %zu exceeds the limit of %d bits (about %d "
		    "decimal digits) for a numerator or denominator",
		    calc_pos(p, op_off), CALC_MAX_BITS,
		    (int)(CALC_MAX_BITS * CALC_LOG10_2) + 1);
		return -1;
	}
	/* Powers of coprime numbers stay coprime: still canonical. */
	mpz_pow_ui(mpq_numref(base), mpq_numref(base), ue);
	mpz_pow_ui(mpq_denref(base), mpq_denref(base), ue);
	return calc_check_size(p, base, op_off, '^');
}

/* primary [('^' | '**') unary] */
static int
calc_power(struct calc_parser *p, mpq_t out)
{
	size_t op_off;
	mpq_t ex;
	int c, rc = -1;

	mpq_init(ex);
	if (calc_primary(p, out) != 0)
		goto out;
	c = calc_peek(p);
	op_off = p->off;
	if (c == '^') {
		p->off += 1;
	} else if (c == '*' && p->off + 1 < p->len &&
	    p->s[p->off + 1] == '*') {
		p->off += 2;
	} else {
		rc = 0;
		goto out;
	}
	if (calc_unary(p, ex) != 0)
		goto out;
	rc = calc_pow(p, out, ex, op_off);
 out:
	mpq_clear(ex);
	return rc;
}

/* ('+' | '-') unary | power; every level of nesting passes here once. */
static int
calc_unary(struct calc_parser *p, mpq_t out)
{
	int c, rc;

	c = calc_peek(p);
	if (p->depth >= CALC_MAX_DEPTH) {
		calc_fail(p, CALC_ERR_LIMIT, p->off, "the expression is nested "
		    "too deeply at position %zu (limit %d levels of "
		    "parentheses, signs and exponents)", calc_pos(p, p->off),
		    CALC_MAX_DEPTH);
		return -1;
	}
	p->depth++;
	if (c == '+' || c == '-') {
		p->off++;
		rc = calc_unary(p, out);
		if (rc == 0 && c == '-')
			mpq_neg(out, out);
	} else {
		rc = calc_power(p, out);
	}
	p->depth--;
	return rc;
}

/* acc = acc op rhs for '*', '/', '%' at op_off. */
static int
calc_mul_op(struct calc_parser *p, int op, size_t op_off, mpq_t acc,
    const mpq_t rhs)
{
	mpq_t t;
	mpz_t f;

	if (op == '*') {
		mpq_mul(acc, acc, rhs);
		return calc_check_size(p, acc, op_off, op);
	}
	if (mpq_sgn(rhs) == 0) {
		calc_fail(p, CALC_ERR_DIV_ZERO, op_off, "%s by zero at position "
		    "%zu", op == '/' ? "division" : "modulo",
		    calc_pos(p, op_off));
		return -1;
	}
	if (op == '/') {
		mpq_div(acc, acc, rhs);
		return calc_check_size(p, acc, op_off, op);
	}
	/* Floored modulo: acc - rhs * floor(acc / rhs), sign of rhs. */
	mpq_init(t);
	mpz_init(f);
	mpq_div(t, acc, rhs);
	mpz_fdiv_q(f, mpq_numref(t), mpq_denref(t));
	mpq_set_z(t, f);
	mpq_mul(t, t, rhs);
	mpq_sub(acc, acc, t);
	mpz_clear(f);
	mpq_clear(t);
	return calc_check_size(p, acc, op_off, op);
}

/* unary (('*' | '/' | '%') unary)* */
static int
calc_term(struct calc_parser *p, mpq_t acc)
{
	size_t op_off;
	mpq_t rhs;
	int c, rc = -1;

	mpq_init(rhs);
	if (calc_unary(p, acc) != 0)
		goto out;
	for (;;) {
		c = calc_peek(p);
		if (c != '*' && c != '/' && c != '%')
			break;
		op_off = p->off++;
		if (calc_unary(p, rhs) != 0)
			goto out;
		if (calc_mul_op(p, c, op_off, acc, rhs) != 0)
			goto out;
	}
	rc = 0;
 out:
	mpq_clear(rhs);
	return rc;
}

/* term (('+' | '-') term)* */
static int
calc_expr(struct calc_parser *p, mpq_t acc)
{
	size_t op_off;
	mpq_t rhs;
	int c, rc = -1;

	mpq_init(rhs);
	if (calc_term(p, acc) != 0)
		goto out;
	for (;;) {
		c = calc_peek(p);
		if (c != '+' && c != '-')
			break;
		op_off = p->off++;
		if (calc_term(p, rhs) != 0)
			goto out;
		if (c == '+')
			mpq_add(acc, acc, rhs);
		else
			mpq_sub(acc, acc, rhs);
		if (calc_check_size(p, acc, op_off, c) != 0)
			goto out;
	}
	rc = 0;
 out:
	mpq_clear(rhs);
	return rc;
}

/* The whole expression into out, or an error in *err. */
static enum calc_status
calc_parse(const char *expr, size_t len, mpq_t out, struct calc_error *err)
{
	struct calc_parser p = { .s = expr, .len = len, .err = err };
	size_t chars;
	int c;

	chars = calc_pos(&p, len) - 1;
	if (chars > CALC_MAX_EXPR_LEN) {
		calc_fail(&p, CALC_ERR_LIMIT, SIZE_MAX, "the expression is too "
		    "long: %zu characters (limit %d)", chars,
		    CALC_MAX_EXPR_LEN);
		return err->status;
	}
	if (calc_peek(&p) == -1) {
		calc_fail(&p, CALC_ERR_SYNTAX, SIZE_MAX, "the expression is "
		    "empty");
		return err->status;
	}
	if (calc_expr(&p, out) != 0)
		return err->status;
	c = calc_peek(&p);
	if (c == ')')
		calc_fail(&p, CALC_ERR_SYNTAX, p.off, "unexpected ')' at "
		    "position %zu (no '(' is open)", calc_pos(&p, p.off));
	else if (c != -1)
		calc_unexpected(&p, "an operator or the end of the expression");
	return err->status;
}

/* z in base 10, malloc'd; NULL if out of memory. */
static char *
calc_z_str(const mpz_t z)
{
	char *buf;

	if ((buf = malloc(mpz_sizeinbase(z, 10) + 2)) == NULL)
		return NULL;
	return mpz_get_str(buf, 10, z);
}

/* "n" or "n/d", malloc'd; NULL if out of memory. */
static char *
calc_q_str(const mpq_t q)
{
	char *buf, *end;

	buf = malloc(mpz_sizeinbase(mpq_numref(q), 10) +
	    mpz_sizeinbase(mpq_denref(q), 10) + 3);
	if (buf == NULL)
		return NULL;
	(void)mpz_get_str(buf, 10, mpq_numref(q));
	if (mpz_cmp_ui(mpq_denref(q), 1) != 0) {
		end = buf + strlen(buf);
		*end++ = '/';
		(void)mpz_get_str(end, 10, mpq_denref(q));
	}
	return buf;
}

/*
 * The exact decimal expansion of q, if its denominator is 2^a * 5^b with at
 * most CALC_MAX_EXACT_DECIMALS decimals. Returns 1 and sets *ret (malloc'd),
 * 0 if the expansion does not qualify, -1 if out of memory.
 */
static int
calc_decimal_exact(const mpq_t q, char **ret)
{
	unsigned long a, b, m;
	size_t len;
	char *digits = NULL, *buf, *o;
	mpz_t d, t;
	int rc = -1;

	mpz_init_set(d, mpq_denref(q));
	mpz_init_set_ui(t, 5);
	a = mpz_scan1(d, 0);
	mpz_tdiv_q_2exp(d, d, a);
	b = mpz_remove(d, d, t);
	m = a > b ? a : b;
	if (mpz_cmp_ui(d, 1) != 0 || m > CALC_MAX_EXACT_DECIMALS) {
		rc = 0;
		goto out;
	}
	/* |q| * 10^m is the integer d; its last m digits are decimals. */
	mpz_abs(d, mpq_numref(q));
	mpz_mul_2exp(d, d, m - a);
	mpz_ui_pow_ui(t, 5, m - b);
	mpz_mul(d, d, t);
	if ((digits = calc_z_str(d)) == NULL)
		goto out;
	len = strlen(digits);
	if ((buf = malloc(len + m + 4)) == NULL)
		goto out;
	o = buf;
	if (mpq_sgn(q) < 0)
		*o++ = '-';
	if (len <= m) {
		*o++ = '0';
		*o++ = '.';
		memset(o, '0', m - len);
		o += m - len;
		memcpy(o, digits, len);
		o += len;
	} else {
		memcpy(o, digits, len - m);
		o += len - m;
		if (m > 0) {
			*o++ = '.';
			memcpy(o, digits + len - m, m);
			o += m;
		}
	}
	*o = '\0';
	*ret = buf;
	rc = 1;
 out:
	free(digits);
	mpz_clear(t);
	mpz_clear(d);
	return rc;
}

/*
 * q (not 0) rounded half away from zero to CALC_APPROX_DIGITS significant
 * digits, trailing zeros dropped; plain, or "<d.ddd>e<k>" when the decimal
 * exponent k is under CALC_PLAIN_MIN_EXP or needs more integer digits than
 * CALC_APPROX_DIGITS. malloc'd; NULL if out of memory.
 */
static char *
calc_decimal_approx(const mpq_t q)
{
	const long n = CALC_APPROX_DIGITS;
	char *digits = NULL, *buf = NULL, *o;
	size_t nd;
	long k, shift, i;
	mpz_t t, u, s, r, lo, hi;

	mpz_inits(t, u, s, r, lo, hi, NULL);
	mpz_ui_pow_ui(lo, 10, (unsigned long)(n - 1));
	mpz_ui_pow_ui(hi, 10, (unsigned long)n);
	/* k = floor(log10|q|): estimate, then fix until lo <= s < hi. */
	k = (long)mpz_sizeinbase(mpq_numref(q), 10) -
	    (long)mpz_sizeinbase(mpq_denref(q), 10);
	for (i = 0; i < 8; i++) {
		shift = n - 1 - k;
		mpz_abs(t, mpq_numref(q));
		mpz_set(u, mpq_denref(q));
		mpz_ui_pow_ui(s, 10, (unsigned long)(shift < 0 ? -shift : shift));
		if (shift >= 0)
			mpz_mul(t, t, s);
		else
			mpz_mul(u, u, s);
		mpz_fdiv_qr(s, r, t, u);
		if (mpz_cmp(s, hi) >= 0)
			k++;
		else if (mpz_cmp(s, lo) < 0)
			k--;
		else
			break;
	}
	mpz_mul_2exp(r, r, 1);
	if (mpz_cmp(r, u) >= 0) {
		mpz_add_ui(s, s, 1);
		if (mpz_cmp(s, hi) == 0) {
			mpz_set(s, lo);
			k++;
		}
	}
	if ((digits = calc_z_str(s)) == NULL)
		goto out;
	nd = strlen(digits);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	/* sign, "0." and -CALC_PLAIN_MIN_EXP zeros, or "e-" and a long */
	if ((buf = malloc(nd + (size_t)n + 48)) == NULL)
		goto out;
	o = buf;
	if (mpq_sgn(q) < 0)
		*o++ = '-';
	if (k >= 0 && k < n) {
		for (i = 0; i <= k; i++)
			*o++ = (size_t)i < nd ? digits[i] : '0';
		if (nd > (size_t)k + 1) {
			*o++ = '.';
			memcpy(o, digits + k + 1, nd - (size_t)k - 1);
			o += nd - (size_t)k - 1;
		}
		*o = '\0';
	} else if (k < 0 && k >= CALC_PLAIN_MIN_EXP) {
		*o++ = '0';
		*o++ = '.';
		for (i = 0; i < -k - 1; i++)
			*o++ = '0';
		memcpy(o, digits, nd);
		o[nd] = '\0';
	} else {
		*o++ = digits[0];
		if (nd > 1) {
			*o++ = '.';
			memcpy(o, digits + 1, nd - 1);
			o += nd - 1;
		}
		(void)snprintf(o, 24, "e%ld", k);
	}
 out:
	free(digits);
	mpz_clears(t, u, s, r, lo, hi, NULL);
	return buf;
}

enum calc_status
calc_evaluate(const char *expr, size_t len, struct calc_value *ret,
    struct calc_error *err)
{
	struct calc_value v = { 0 };
	enum calc_status st;
	mpq_t q;
	int r;

	err->status = CALC_OK;
	err->pos = 0;
	err->msg[0] = '\0';
	mpq_init(q);
	if ((st = calc_parse(expr, len, q, err)) != CALC_OK)
		goto out;
	st = CALC_ERR_NOMEM;
	v.integer = mpz_cmp_ui(mpq_denref(q), 1) == 0;
	if ((v.value = calc_q_str(q)) == NULL)
		goto nomem;
	if (v.integer) {
		v.decimal = strdup(v.value);
		v.decimal_exact = true;
	} else if ((r = calc_decimal_exact(q, &v.decimal)) < 0) {
		goto nomem;
	} else if (r > 0) {
		v.decimal_exact = true;
	} else {
		v.decimal = calc_decimal_approx(q);
	}
	if (v.decimal == NULL)
		goto nomem;
	*ret = v;
	v = (struct calc_value){ 0 };
	st = CALC_OK;
	goto out;
 nomem:
	err->status = st;
	(void)snprintf(err->msg, sizeof(err->msg), "out of memory");
 out:
	calc_value_fini(&v);
	mpq_clear(q);
	return st;
}

void
calc_value_fini(struct calc_value *v)
{
	free(v->value);
	free(v->decimal);
	v->value = NULL;
	v->decimal = NULL;
}

/* Adds val (owned, may be NULL) to obj; on failure val is freed. */
static int
calc_json_add(struct json_object *obj, const char *key,
    struct json_object *val)
{
	if (val == NULL)
		return -1;
	if (json_object_object_add(obj, key, val) != 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

/* structuredContent per calculate.output.json; new object, or NULL. */
static struct json_object *
calc_structured(const struct calc_value *v)
{
	struct json_object *sc;		/* owned */

	if ((sc = json_object_new_object()) == NULL)
		return NULL;
	if (calc_json_add(sc, "value", json_object_new_string(v->value)) ||
	    calc_json_add(sc, "kind", json_object_new_string(v->integer ?
	    "integer" : "fraction")) ||
	    calc_json_add(sc, "decimal", json_object_new_string(v->decimal)) ||
	    calc_json_add(sc, "decimalExact",
	    json_object_new_boolean(v->decimal_exact))) {
		json_object_put(sc);
		return NULL;
	}
	return sc;
}

/*
 * "<expression> = <value>", then " = <decimal>" or " ≈ <decimal>" when the
 * decimal differs. The expression parsed, so it is printable ASCII and
 * whitespace; it is trimmed and its tabs and newlines become spaces.
 */
static char *
calc_text(const char *expr, size_t len, const struct calc_value *v)
{
	size_t i, n, vlen = strlen(v->value), dlen = strlen(v->decimal);
	char *buf, *o;

	while (len > 0 && calc_is_space((unsigned char)expr[len - 1]))
		len--;
	while (len > 0 && calc_is_space((unsigned char)*expr)) {
		expr++;
		len--;
	}
	n = len + vlen + dlen + 16;
	if ((buf = malloc(n)) == NULL)
		return NULL;
	for (i = 0, o = buf; i < len; i++)
		*o++ = calc_is_space((unsigned char)expr[i]) ? ' ' : expr[i];
	memcpy(o, " = ", 3);
	o += 3;
	memcpy(o, v->value, vlen);
	o += vlen;
	if (!v->integer) {
		if (v->decimal_exact) {
			memcpy(o, " = ", 3);
			o += 3;
		} else {
			memcpy(o, " \u2248 ", 5);
			o += 5;
		}
		memcpy(o, v->decimal, dlen);
		o += dlen;
	}
	*o = '\0';
	return buf;
}

enum mcp_err
tool_calculate(const struct tool_call *call, const struct json_object *args,
    struct json_object **ret_result)
{
	struct json_object *jexpr;	/* borrowed from args */
	struct json_object *sc = NULL;	/* owned until tool_result_ok */
	struct json_object *res = NULL;	/* owned until returned */
	struct calc_value v = { 0 };
	struct calc_error err;
	const char *expr;		/* borrowed from jexpr */
	char *text = NULL;
	enum mcp_err st = MCP_ERR_NOMEM;

	if (call != NULL && call->audit != NULL)
		call->audit->ran = true;	/* the in-process engine runs */
	if (args == NULL ||
	    !json_object_object_get_ex(args, "expression", &jexpr) ||
	    !json_object_is_type(jexpr, json_type_string)) {
		res = tool_result_error("the argument 'expression' (a string) "
		    "is required");
		goto done;
	}
	expr = json_object_get_string(jexpr);
	switch (calc_evaluate(expr, (size_t)json_object_get_string_len(jexpr),
	    &v, &err)) {
	case CALC_OK:
		break;
	case CALC_ERR_NOMEM:
		goto out;
	default:
		res = tool_result_error("%s", err.msg);
		goto done;
	}
	if ((sc = calc_structured(&v)) == NULL)
		goto out;
	if ((text = calc_text(expr, (size_t)json_object_get_string_len(jexpr),
	    &v)) == NULL)
		goto out;
	res = tool_result_ok(sc, text);
	sc = NULL;			/* taken, even on failure */
 done:
	if (res == NULL)
		goto out;
	*ret_result = res;
	st = MCP_OK;
 out:
	json_object_put(sc);
	free(text);
	calc_value_fini(&v);
	return st;
}
