/*
 * proxy_port: the sandbox's end of its network proxy, made by its init
 * (pid 1, our code) before the program exists: loopback raised in the
 * sandbox's own empty netns, one TCP socket listening on
 * 127.0.0.1:SB_PROXY_PORT, and that socket sent to the server over the
 * sync socket (SCM_RIGHTS). The init then closes its copy: nothing of ours
 * runs inside to relay anything; the server accepts on the socket from
 * outside, and the program can only connect to it. Between fork and
 * execve: system calls only, no allocation.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"

/* Connections the program may have waiting for the server's accept. */
#define SB_PROXY_BACKLOG	64

int
sb_lo_up(void)
{
	struct ifreq ifr;
	int fd, rc = 0;

	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		rc = -errno;
	else if ((ifr.ifr_flags & IFF_UP) == 0) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			rc = -errno;
	}
	(void)close(fd);
	return rc;
}

int
sb_proxy_listen(bool raise_lo)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(SB_PROXY_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd, one = 1, rc;

	if (raise_lo && (rc = sb_lo_up()) < 0)
		return rc;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	/* a pooled netns may hold the last run's connections in TIME_WAIT */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, SB_PROXY_BACKLOG) < 0) {
		rc = -errno;
		(void)close(fd);
		return rc;
	}
	return fd;
}

int
sb_send_fd(int sock, int fd)
{
	char byte = 'l';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	memset(u.buf, 0, sizeof(u.buf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -(n < 0 ? errno : EIO);
}

/* The fd the init sent, CLOEXEC; -errno, or -EPROTO for anything else. */
int
sb_recv_fd(int sock)
{
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;
	int fd = -1;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm != NULL && cm->cmsg_level == SOL_SOCKET &&
	    cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (n != 1 || byte != 'l' || (msg.msg_flags & MSG_CTRUNC) != 0) {
		if (fd >= 0)
			(void)close(fd);
		return -EPROTO;
	}
	return fd >= 0 ? fd : -EPROTO;
}
