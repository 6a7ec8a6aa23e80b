/*
 * What a call made: the regular files of a directory (the workspace, or a
 * skill's throwaway copy) before and after a sandboxed run, compared, and
 * the difference added to the run's result: structuredContent.files, one
 * text line per file, image content for the images within the caps, and a
 * resource_link beyond them (workspace files only: a skill's copy is gone
 * once the call ends, so there is nothing to link to).
 *
 * The walk never follows a symlink (fstatat AT_SYMLINK_NOFOLLOW, openat
 * O_NOFOLLOW), and a file's bytes are read through openat2 beneath the
 * directory with RESOLVE_NO_SYMLINKS, checked to be the inode the walk saw:
 * a program that swaps a file for a link to /etc/shadow between the walk
 * and the read gets an omission, not the host's file.
 */
#ifndef WORKSPACE_FILES_H
#define WORKSPACE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <json-c/json.h>

#include "mcp_err.h"
#include "media.h"

/*
 * Entries (files and directories) one walk visits at most. A walk costs a
 * stat per entry before and after every run; past this bound the rest of
 * the tree is judged by its change time alone (see wsf_scan.complete).
 */
#define WSF_MAX_SCAN		10000
/* Directory levels one walk descends (an fd is held per level). */
#define WSF_MAX_DEPTH		32
/* Files listed in structuredContent.files; the rest are only counted. */
#define WSF_MAX_LISTED		64
/* Image bytes of one image returned as image content (media.h). */
#define WSF_IMAGE_MAX_BYTES	MEDIA_IMAGE_MAX_BYTES
/* Image bytes of all the image content of one result together. */
#define WSF_RESULT_MAX_BYTES	(768 * 1024)
/* Images returned as image content in one result. */
#define WSF_MAX_IMAGES		8

struct wsf_entry {
	char *path;		/* owned, relative to the directory */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct timespec ctime;
};

struct wsf_scan {
	struct wsf_entry *e;	/* sorted by path */
	size_t n;
	size_t cap;
	bool complete;		/* the walk saw the whole tree */
	struct timespec start;	/* CLOCK_REALTIME_COARSE when it began */
};

/*
 * Walks dir (a host path) into s (zeroed before). 0, or -errno if dir
 * itself cannot be opened (then s is empty, incomplete). Entries past the
 * bounds are left out and s->complete is false.
 */
int wsf_scan_take(const char *dir, struct wsf_scan *s);
void wsf_scan_free(struct wsf_scan *s);

/*
 * media_sniff_type of the file e of a walk, read beneath root (an fd of the
 * walked directory) and checked to be that inode; application/octet-stream
 * when it cannot be read.
 */
const char *wsf_sniff_entry(int root, const struct wsf_entry *e);

/*
 * Adds to the CallToolResult r what changed in dir since before: files
 * created or changed, in path order. structuredContent gets "files"
 * ([{path, path_bytes?, size, type, uri?}], at most WSF_MAX_LISTED;
 * path_bytes, base64 of the name, where render_name_plain says path is
 * not the name's exact form) and "files_omitted"
 * (when always, or when any file changed) unless it has such keys
 * already (a skill's own JSON may); content gets one
 * text block listing them (names as render_name_text shows them: the
 * program chose them), image blocks for the images within the caps,
 * and, when uri_prefix is given, a resource_link for each image beyond
 * them. uri_prefix ("file:///workspace/") makes the uris; NULL: none.
 * MCP_ERR_NOMEM on allocation failure (r is then unchanged or partly
 * extended, but valid).
 */
enum mcp_err wsf_report(const char *dir, const struct wsf_scan *before,
    const char *uri_prefix, bool always, struct json_object *r);

#endif
