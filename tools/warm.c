/* warm: a started python's call (warm.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warm.h"

/* The most decimal digits a size_t has (2^64 - 1). */
#define SIZE_DIGITS	20

char *
warm_stdin(const char *code, const char *const *args, size_t nargs,
    const void *in, size_t in_len, size_t *ret_len)
{
	size_t clen = strlen(code), len, off, i;
	char *buf;

	/* header: up to SIZE_DIGITS digits and a separator per length */
	len = clen + in_len + (nargs + 1) * (SIZE_DIGITS + 1);
	for (i = 0; i < nargs; i++)
		len += strlen(args[i]);
	if ((buf = malloc(len + 1)) == NULL)
		return NULL;
	off = (size_t)sprintf(buf, "%zu", clen);
	for (i = 0; i < nargs; i++)
		off += (size_t)sprintf(buf + off, " %zu", strlen(args[i]));
	buf[off++] = '\n';
	memcpy(buf + off, code, clen);
	off += clen;
	for (i = 0; i < nargs; i++) {
		memcpy(buf + off, args[i], strlen(args[i]));
		off += strlen(args[i]);
	}
	if (in_len > 0)
		memcpy(buf + off, in, in_len);
	off += in_len;
	buf[off] = '\0';
	*ret_len = off;
	return buf;
}
