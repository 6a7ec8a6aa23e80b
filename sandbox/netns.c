/*
 * netns: a pool of empty network namespaces, each lent to one sandbox at a
 * time and taken back only after that sandbox's init was reaped (so every
 * process, socket and abstract name of the previous run is gone). Joining
 * one costs a setns(); creating a fresh one costs ~0.6 ms and more on
 * teardown. Needs CAP_SYS_ADMIN (a root server); otherwise runs create a
 * fresh netns each. Loopback stays down: network none. The pool grows on
 * demand up to its size, so a server that never runs a sandbox (or starts
 * and stops at once) makes none.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Create one empty netns with this thread and come back home. */
static int
netns_create(int home_fd)
{
	int fd, rc = 0;

	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	if ((fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (setns(home_fd, CLONE_NEWNET) < 0) {
		/* This thread is stranded in the new netns: say so loudly. */
		rc = -errno;
		if (fd >= 0)
			(void)close(fd);
		return rc;
	}
	return rc < 0 ? rc : fd;
}

int
sb_netns_pool_init(struct sb_netns_pool *p, unsigned n)
{
	int fd;

	memset(p, 0, sizeof(*p));
	p->home_fd = -1;
	if (n > SB_MAX_NETNS_POOL)
		n = SB_MAX_NETNS_POOL;
	p->cap = n;
	if (pthread_mutex_init(&p->lock, NULL) != 0)
		return -ENOMEM;
	p->home_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (p->home_fd < 0) {
		fd = -errno;
		sb_netns_pool_fini(p);
		return fd;
	}
	return 0;
}

/*
 * A free slot, marked busy; a new netns when none is free and the pool is
 * not full yet; -1 when all are lent out (or creating one failed: the run
 * then makes a fresh one, as without a pool).
 */
int
sb_netns_pool_take(struct sb_netns_pool *p)
{
	unsigned i;
	int slot = -1, fd;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n; i++) {
		if (!p->busy[i]) {
			p->busy[i] = true;
			slot = (int)i;
			break;
		}
	}
	if (slot < 0 && p->n < p->cap &&
	    (fd = netns_create(p->home_fd)) >= 0) {
		p->fds[p->n] = fd;
		p->busy[p->n] = true;
		slot = (int)p->n++;
	}
	pthread_mutex_unlock(&p->lock);
	return slot;
}

void
sb_netns_pool_give(struct sb_netns_pool *p, int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&p->lock);
	p->busy[slot] = false;
	pthread_mutex_unlock(&p->lock);
}

void
sb_netns_pool_fini(struct sb_netns_pool *p)
{
	unsigned i;

	for (i = 0; i < p->n; i++)
		(void)close(p->fds[i]);
	p->n = 0;
	if (p->home_fd >= 0)
		(void)close(p->home_fd);
	p->home_fd = -1;
	pthread_mutex_destroy(&p->lock);
}
