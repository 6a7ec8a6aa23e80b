/*
 * UTF-8 boundaries for text we cut to a size: a message, a quoted name. A
 * cut inside a multi-byte character would put invalid UTF-8 on the wire
 * (json-c copies bytes as they are). Header-only, no allocation.
 */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>

/* Length of the longest prefix of s[0..len) of at most max bytes that does
 * not end inside a character. */
static inline size_t
utf8_prefix(const char *s, size_t len, size_t max)
{
	size_t n = len < max ? len : max;

	if (n == len)
		return n;
	/* back off continuation bytes, then the lead byte they belong to */
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* Cuts a NUL-terminated buffer back to its last whole character (after a
 * snprintf that may have truncated inside one). */
static inline void
utf8_trim(char *buf)
{
	size_t len = 0, start;
	unsigned char c;
	size_t need;

	while (buf[len] != '\0')
		len++;
	start = len;
	while (start > 0 && ((unsigned char)buf[start - 1] & 0xc0) == 0x80)
		start--;
	if (start == 0)
		return;
	c = (unsigned char)buf[start - 1];
	if (c < 0x80)
		return;		/* ends on ASCII: whole */
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	if (len - (start - 1) < need)
		buf[start - 1] = '\0';
}

#endif
