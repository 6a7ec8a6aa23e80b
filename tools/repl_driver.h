/*
 * The inside of a run_code session (repl.c): the driver each language's
 * interpreter runs, and the framing of one call's output between two
 * copies of a boundary drawn for that call (repl.c's opening comment).
 */
#ifndef REPL_DRIVER_H
#define REPL_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox.h"

/* Random bytes of a boundary (hex-encoded after its prefix). */
#define REPL_BOUNDARY_BYTES	16
#define REPL_BOUNDARY_PREFIX	"\x1emcp-sandbox-turn-"
#define REPL_BOUNDARY_LEN	(sizeof(REPL_BOUNDARY_PREFIX) - 1 + \
	2 * REPL_BOUNDARY_BYTES)
/* The status line a driver writes after its second boundary. */
#define REPL_STATUS_MAX		32
/* The pieces the framing scans at once (a sandbox read is 64 KiB). */
#define REPL_PIECE		65536

/* The drivers (argv of their interpreter: -c / -e), and node's start. */
extern const char repl_py_driver[];
extern const char repl_sh_driver[];
extern const char repl_node_driver[];
extern const char repl_node_exec[];

/* The framing of one call's output. */
enum repl_frame_phase { REPL_BEFORE, REPL_BODY, REPL_STATUS, REPL_DONE };
struct repl_frame {
	char b[REPL_BOUNDARY_LEN + 1];
	struct {
		enum repl_frame_phase phase;
		char hold[REPL_BOUNDARY_LEN];
		size_t hold_len;
	} s[2];
	char status[REPL_STATUS_MAX + 1];
	size_t status_len;
	/* the session's first call: what comes before its boundary is the
	 * interpreter's start (an error there), kept, not dropped */
	bool first;
	char *work;			/* REPL_PIECE + REPL_BOUNDARY_LEN */
};

/* A new boundary not in code; first: the session's first call. 0, -EIO
 * (no random bytes) or -ENOMEM. */
int repl_frame_init(struct repl_frame *f, const char *code, bool first);
void repl_frame_fini(struct repl_frame *f);
/* sb_turn's sink (sandbox.h): arg is the frame. */
bool repl_frame_sink(void *arg, int stream, const char *buf, size_t n,
    struct sb_output *o);

#endif
