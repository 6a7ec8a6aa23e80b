/*
 * What a file is, told from its first bytes and never from its name, and
 * the uri a workspace file has as a resource. Shared by read_file
 * (files.c), the report of what a run made (workspace_files.c) and the
 * workspace as resources (workspace_resources.c); depends on render.c
 * only.
 */
#ifndef MEDIA_H
#define MEDIA_H

#include <stddef.h>

/*
 * Image bytes (before base64) of one image returned as image content. A
 * chart from matplotlib at its defaults is 20-60 KiB; a base64 text of
 * 100k characters is where clients were reported to choke (issue 16).
 */
#define MEDIA_IMAGE_MAX_BYTES	(256 * 1024)
/* Bytes of a file read to tell its type (image magic, text or binary). */
#define MEDIA_SNIFF_BYTES	512

/* "image/png", "image/jpeg", "image/gif", "image/webp" from the first
 * bytes of a file, or NULL. The name plays no part. */
const char *media_image_type(const unsigned char *buf, size_t len);

/*
 * The MIME type we report for a file whose first bytes are buf: an image
 * type above, else "text/plain" (UTF-8 without NUL) or
 * "application/octet-stream".
 */
const char *media_sniff_type(const unsigned char *buf, size_t len);

/* prefix + path, percent-encoding all but unreserved and '/'. Owned, or
 * NULL out of memory. */
char *media_uri(const char *prefix, const char *path);

#endif
