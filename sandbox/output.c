/*
 * output: a capped capture buffer for one stream of a sandboxed program.
 * The buffer is allocated once at its cap; bytes past the cap are counted
 * and dropped, never stored, so a flood costs the server nothing but CPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int
sb_output_init(struct sb_output *o, size_t cap)
{
	memset(o, 0, sizeof(*o));
	if ((o->data = malloc(cap + 1)) == NULL)
		return -ENOMEM;
	o->data[0] = '\0';
	o->cap = cap;
	return 0;
}

void
sb_output_append(struct sb_output *o, const char *buf, size_t n)
{
	size_t room = o->cap - o->len;
	size_t k = n < room ? n : room;

	memcpy(o->data + o->len, buf, k);
	o->len += k;
	o->total += n;
	if (o->total > o->len)
		o->truncated = true;
}

/*
 * Terminate the kept bytes. When the cap cut the stream, also drop a
 * UTF-8 sequence the cut left incomplete, so the kept text ends cleanly.
 */
void
sb_output_finish(struct sb_output *o)
{
	size_t i, need;
	unsigned char c;

	if (o->data == NULL)
		return;
	if (o->truncated && o->len > 0) {
		/* Find the start of the last sequence (at most 4 bytes back). */
		for (i = o->len; i > 0 && o->len - i < 4; i--) {
			c = (unsigned char)o->data[i - 1];
			if ((c & 0xc0) != 0x80)
				break;
		}
		if (i > 0) {
			c = (unsigned char)o->data[i - 1];
			need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			/* only a valid lead byte (C2..F4) starts a sequence */
			if (c >= 0xc2 && c <= 0xf4 && o->len - (i - 1) < need)
				o->len = i - 1;
		}
	}
	o->data[o->len] = '\0';
}

void
sb_output_fini(struct sb_output *o)
{
	free(o->data);
	memset(o, 0, sizeof(*o));
}
