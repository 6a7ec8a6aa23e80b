/*
 * What a file is, from its first bytes (media.h), and its uri. No file
 * access here: the callers read the bytes under their own confinement.
 */
#include <stdlib.h>
#include <string.h>

#include "media.h"
#include "render.h"

const char *
media_image_type(const unsigned char *b, size_t n)
{
	if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "image/png";
	if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
		return "image/jpeg";
	if (n >= 6 && (memcmp(b, "GIF87a", 6) == 0 ||
	    memcmp(b, "GIF89a", 6) == 0))
		return "image/gif";
	if (n >= 12 && memcmp(b, "RIFF", 4) == 0 &&
	    memcmp(b + 8, "WEBP", 4) == 0)
		return "image/webp";
	return NULL;
}

const char *
media_sniff_type(const unsigned char *b, size_t n)
{
	const char *t = media_image_type(b, n);

	if (t != NULL)
		return t;
	/* a sniffed prefix may end inside a character: judge whole ones */
	if (!render_is_binary((const char *)b, render_utf8_cut(
	    (const char *)b, n)))
		return "text/plain";
	return "application/octet-stream";
}

char *
media_uri(const char *prefix, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path), pl = strlen(prefix), i, w;
	char *u;

	if ((u = malloc(pl + 3 * n + 1)) == NULL)
		return NULL;
	memcpy(u, prefix, pl);
	w = pl;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~' || c == '/')
			u[w++] = (char)c;
		else {
			u[w++] = '%';
			u[w++] = hex[c >> 4];
			u[w++] = hex[c & 15];
		}
	}
	u[w] = '\0';
	return u;
}
