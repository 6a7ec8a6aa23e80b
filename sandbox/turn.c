/*
 * turn: a started run as a conversation (sandbox.h, sb_converse and
 * sb_turn): its stdin kept open, one input at a time, each supervised
 * until the caller's sink says that input's output is complete; the
 * interrupt at the deadline (exec.c, sb_supervise).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "run.h"

int
sb_converse(struct sb_started *s, const struct sb_request *req,
    struct sb_result *res)
{
	memset(res, 0, sizeof(*res));
	s->r.keep_in = true;
	return sb_take_call(s, req, res);
}

int
sb_turn(struct sb_started *s, const struct sb_turn *t,
    struct sb_cancel *cancel, struct sb_result *res)
{
	const struct sb_request preq = { .progress = t->progress,
	    .progress_arg = t->progress_arg, .progress_ms = t->progress_ms };
	struct run *r = &s->r;
	uint64_t t0 = sb_mono_us();
	char *owned;
	int rc;

	memset(res, 0, sizeof(*res));
	if (s->over || !r->keep_in)
		return sb_request_fail(res, ESRCH, "the sandbox's program "
		    "has ended");
	if ((rc = sb_output_init(&res->out, s->p->limits.stdout_cap)) < 0 ||
	    (rc = sb_output_init(&res->err_out, s->p->limits.stderr_cap)) < 0 ||
	    (rc = sb_queue_input(r, t->in, t->in_len, &owned)) < 0) {
		sb_fail(res, SB_STAGE_RESOURCES, -rc, "the turn's buffers");
		s->over = true;
		return rc;
	}
	r->sink = t->sink;
	r->sink_arg = t->sink_arg;
	r->turn_done = r->interrupted = false;
	r->grace_ms = t->grace_ms != 0 ? t->grace_ms : 1;
	s->p->limits.wall_ms = t->wall_ms;
	if (r->in_w >= 0)
		sb_feed(r);
	if ((rc = sb_supervise(r, &preq, s->p, cancel, res, t0)) < 0) {
		sb_fail(res, SB_STAGE_WAIT, -rc, "supervising the run");
		s->over = true;
	} else if (!r->turn_done) {
		s->over = true;
		rc = sb_end_run(s, res);
		rc = rc < 0 ? rc : 1;
	}
	/*
	 * A turn done: what the session made in the workspace's protected
	 * names goes aside now, as at a run's end, not at the session's
	 * only (its processes may make them again: so does a long run).
	 */
	if (rc == 0)
		sb_protect_finish(s->p, res);
	/* the program has read it all: it answered after its input */
	r->in_data = NULL;
	r->in_len = r->in_off = 0;
	r->sink = NULL;
	r->sink_arg = NULL;
	free(owned);
	sb_output_finish(&res->out);
	sb_output_finish(&res->err_out);
	res->duration_us = sb_mono_us() - t0;
	return rc;
}

uint64_t
sb_started_memory(struct sb_started *s)
{
	return sb_cg_run_memory(&s->ctx->cg, &s->cg);
}
