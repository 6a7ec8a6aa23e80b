/*
 * Numbers, JSON equality and message text for the validator. Numbers are
 * compared exactly across json-c's int64/uint64/double forms; multipleOf works
 * on the shortest decimal that reads back as the same double, so 0.0075 is a
 * multiple of 0.0001. Reads json-c objects only; never writes to them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validator_impl.h"

/* Significant digits that always round-trip an IEEE double. */
#define DBL_ROUNDTRIP_DIGITS 17

bool
snum_from_json(const struct json_object *j, struct snum *ret)
{
	int64_t i;
	double d;

	switch (json_object_get_type(j)) {
	case json_type_int:
		/* json-c 0.16 keeps positives up to UINT64_MAX as uint64; get_int64
		 * saturates them to INT64_MAX, so read the unsigned form there. */
		i = json_object_get_int64(j);
		ret->is_int = true;
		ret->d = 0;
		if (i == INT64_MAX)
			ret->i = (__int128)json_object_get_uint64(j);
		else
			ret->i = i;
		return true;
	case json_type_double:
		d = json_object_get_double(j);
		if (!isfinite(d))
			return false;
		ret->is_int = false;
		ret->i = 0;
		ret->d = d;
		return true;
	default:
		return false;
	}
}

/* i <=> d exactly; d finite. */
static int
cmp_int_dbl(__int128 i, double d)
{
	double f;
	__int128 fi;

	if (d >= 0x1p127)
		return -1;
	if (d < -0x1p127)
		return 1;
	f = floor(d);
	fi = (__int128)f;
	if (i < fi)
		return -1;
	if (i > fi)
		return 1;
	return d > f ? -1 : 0;
}

int
snum_cmp(const struct snum *a, const struct snum *b)
{
	if (a->is_int && b->is_int)
		return a->i < b->i ? -1 : a->i > b->i;
	if (!a->is_int && !b->is_int)
		return a->d < b->d ? -1 : a->d > b->d;
	if (a->is_int)
		return cmp_int_dbl(a->i, b->d);
	return -cmp_int_dbl(b->i, a->d);
}

bool
snum_is_integral(const struct snum *a)
{
	return a->is_int || a->d == floor(a->d);
}

/* Shortest precision p at which "%.*e"/"%.*g" reads back as d. */
static int
shortest_digits(double d)
{
	char buf[64];
	int p;

	for (p = 1; p < DBL_ROUNDTRIP_DIGITS; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, d);
		if (strtod(buf, NULL) == d)
			return p;
	}
	return DBL_ROUNDTRIP_DIGITS;
}

void
snum_to_dec(const struct snum *a, struct sdec *ret)
{
	char buf[64], *p;
	unsigned __int128 mag;
	uint64_t m = 0;
	int digits, e, frac = 0;
	bool dot = false;

	if (a->is_int) {
		mag = a->i < 0 ? (unsigned __int128)(-a->i) : (unsigned __int128)a->i;
		ret->m = (uint64_t)mag;	/* json-c ints fit: |INT64_MIN|, UINT64_MAX */
		ret->e = 0;
		goto strip;
	}
	digits = shortest_digits(a->d);
	snprintf(buf, sizeof(buf), "%.*e", digits - 1, fabs(a->d));
	for (p = buf; *p != '\0' && *p != 'e'; p++) {
		if (*p == '.') {
			dot = true;
			continue;
		}
		m = m * 10 + (uint64_t)(*p - '0');
		if (dot)
			frac++;
	}
	e = *p == 'e' ? atoi(p + 1) : 0;
	ret->m = m;
	ret->e = e - frac;
 strip:
	if (ret->m == 0) {
		ret->e = 0;
		return;
	}
	while (ret->m % 10 == 0) {
		ret->m /= 10;
		ret->e++;
	}
}

/* Is a an integer multiple of b (b->m > 0)? Exact, no floating point. */
bool
sdec_is_multiple(const struct sdec *a, const struct sdec *b)
{
	unsigned __int128 r, t;
	int k;

	if (a->m == 0)
		return true;
	if (a->e >= b->e) {
		/* b.m divides a.m * 10^k? Reduce mod b.m digit by digit. */
		r = a->m % b->m;
		for (k = a->e - b->e; k > 0 && r != 0; k--)
			r = (r * 10) % b->m;
		return r == 0;
	}
	/* b.m * 10^k divides a.m? Only if it is not larger than a.m. */
	t = b->m;
	for (k = b->e - a->e; k > 0; k--) {
		t *= 10;
		if (t > a->m)
			return false;
	}
	return a->m % t == 0;
}

static void
format_int128(__int128 v, char *buf, size_t size)
{
	char tmp[48];
	unsigned __int128 u;
	size_t n = 0, i;
	bool neg = v < 0;

	u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
	do {
		tmp[n++] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u != 0);
	if (neg)
		tmp[n++] = '-';
	for (i = 0; i < n && i + 1 < size; i++)
		buf[i] = tmp[n - 1 - i];
	if (size > 0)
		buf[i < size ? i : size - 1] = '\0';
}

void
snum_format(const struct snum *a, char *buf, size_t size)
{
	if (a->is_int) {
		format_int128(a->i, buf, size);
		return;
	}
	snprintf(buf, size, "%.*g", shortest_digits(a->d), a->d);
}

int
sjson_equal(const struct json_object *a, const struct json_object *b,
    unsigned depth, unsigned long *work)
{
	enum json_type ta = json_object_get_type(a), tb = json_object_get_type(b);
	struct snum na, nb;
	size_t i, n;
	int r;

	if (++*work > SCHEMA_MAX_WORK || depth > SCHEMA_MAX_INSTANCE_DEPTH)
		return -1;
	if ((ta == json_type_int || ta == json_type_double) &&
	    (tb == json_type_int || tb == json_type_double)) {
		if (!snum_from_json(a, &na) || !snum_from_json(b, &nb))
			return 0;
		return snum_cmp(&na, &nb) == 0;
	}
	if (ta != tb)
		return 0;
	switch (ta) {
	case json_type_null:
		return 1;
	case json_type_boolean:
		return !json_object_get_boolean(a) == !json_object_get_boolean(b);
	case json_type_string:
		n = (size_t)json_object_get_string_len(a);
		return n == (size_t)json_object_get_string_len(b) &&
		    memcmp(json_object_get_string((struct json_object *)a),
		    json_object_get_string((struct json_object *)b), n) == 0;
	case json_type_array:
		n = json_object_array_length(a);
		if (n != json_object_array_length(b))
			return 0;
		for (i = 0; i < n; i++) {
			r = sjson_equal(json_object_array_get_idx(a, i),
			    json_object_array_get_idx(b, i), depth + 1, work);
			if (r != 1)
				return r;
		}
		return 1;
	case json_type_object:
		if (json_object_object_length(a) != json_object_object_length(b))
			return 0;
		json_object_object_foreach((struct json_object *)a, k, va) {
			struct json_object *vb;

			if (!json_object_object_get_ex(b, k, &vb))
				return 0;
			r = sjson_equal(va, vb, depth + 1, work);
			if (r != 1)
				return r;
		}
		return 1;
	default:
		return 0;
	}
}

void
squote(const char *s, size_t len, char *buf, size_t size)
{
	size_t i, o = 0;
	unsigned char ch;

	if (size < 8) {
		if (size > 0)
			buf[0] = '\0';
		return;
	}
	buf[o++] = '"';
	for (i = 0; i < len; i++) {
		if (o + 6 >= size) {	/* room for the escape, '..."' and NUL */
			/* never end inside a character: back off to its start */
			if (i < len && ((unsigned char)s[i] & 0xc0) == 0x80) {
				while (o > 1 && ((unsigned char)buf[o - 1] &
				    0xc0) == 0x80)
					o--;
				if (o > 1 && (unsigned char)buf[o - 1] >= 0xc0)
					o--;
			}
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)ch;
		} else if (ch < 0x20 || ch == 0x7f) {
			buf[o++] = '?';
		} else {
			buf[o++] = (char)ch;
		}
	}
	buf[o++] = '"';
	buf[o] = '\0';
}

void
sjson_render(const struct json_object *j, char *buf, size_t size)
{
	struct snum n;

	switch (json_object_get_type(j)) {
	case json_type_null:
		snprintf(buf, size, "null");
		break;
	case json_type_boolean:
		snprintf(buf, size, "%s", json_object_get_boolean(j) ? "true" : "false");
		break;
	case json_type_int:
	case json_type_double:
		if (snum_from_json(j, &n))
			snum_format(&n, buf, size);
		else
			snprintf(buf, size, "(non-finite number)");
		break;
	case json_type_string:
		squote(json_object_get_string((struct json_object *)j),
		    (size_t)json_object_get_string_len(j), buf, size);
		break;
	case json_type_array:
		snprintf(buf, size, "[...]");
		break;
	case json_type_object:
		snprintf(buf, size, "{...}");
		break;
	}
}

size_t
sutf8_len(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}
