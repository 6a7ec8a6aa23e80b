/*
 * tls: what the proxy needs of TLS to add a bound secret (issue 24), and
 * nothing else. GnuTLS, loaded with dlopen() only when the policy binds a
 * secret (a stdio server without one pays nothing at start, as HTTP mode
 * alone loads libmicrohttpd); no other layer sees TLS.
 *
 * One egress_tls per server: a CA made at start (an ECDSA P-256 key and a
 * self-signed certificate, in memory), a leaf key shared by the
 * certificates it issues on the fly for the hosts a secret is bound to
 * (kept, one per host, for the server's life), and the trust the proxy
 * checks the real hosts against: the system's store, or one file
 * (--egress-ca) for tests and internal mirrors.
 *
 * Connections are the proxy's non-blocking sockets; a handshake, a read
 * or a write that would block calls wait(arg, fd, POLLIN|POLLOUT), the
 * proxy's bounded wait (its idle bound, the call's end), and fails with
 * what it returns.
 */
#ifndef EGRESS_TLS_H
#define EGRESS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct egress_tls;
struct egress_tls_conn;

/* The proxy's bounded wait: 0 when fd is ready, a negative errno else. */
typedef int (*egress_tls_wait_fn)(void *arg, int fd, short events);

/*
 * Loads GnuTLS and makes the CA. ca_file: the trust for upstream hosts,
 * NULL for the system's store. NULL with err saying why (the library
 * missing names the package to install).
 */
struct egress_tls *egress_tls_new(const char *ca_file, char *err,
    size_t errlen);
/* The CA's certificate, PEM, NUL-terminated; the egress_tls's. */
const char *egress_tls_ca_pem(const struct egress_tls *t);
/* Wipes the keys, unloads nothing (other threads may hold the library). */
void egress_tls_free(struct egress_tls *t);

/*
 * The upstream side: a TLS client on fd to host (its SNI, and the name the
 * certificate must carry; an IP literal is checked against IP SANs),
 * offering http/1.1 only. NULL with err naming why, as the model reads it
 * ("the certificate of 'h' is not trusted: ...", "... does not name 'h'").
 */
struct egress_tls_conn *egress_tls_connect(struct egress_tls *t, int fd,
    const char *host, egress_tls_wait_fn wait, void *arg, char *err,
    size_t errlen);
/*
 * The program's side: a TLS server on fd presenting a certificate for
 * host issued by the CA (made on first use, then kept), http/1.1 only.
 * NULL with err.
 */
struct egress_tls_conn *egress_tls_accept(struct egress_tls *t, int fd,
    const char *host, egress_tls_wait_fn wait, void *arg, char *err,
    size_t errlen);

/*
 * Reads what is there (waiting when nothing is): > 0 bytes, 0 at the
 * peer's end (close_notify or EOF), or a negative errno (-ECONNRESET for
 * a TLS error, what wait returned).
 */
ssize_t egress_tls_recv(struct egress_tls_conn *k, void *buf, size_t len);
/* Reads without waiting: as recv, -EAGAIN when nothing is there. */
ssize_t egress_tls_recv_now(struct egress_tls_conn *k, void *buf, size_t len);
/* Bytes decrypted and not yet read: poll() would not show them. */
bool egress_tls_pending(const struct egress_tls_conn *k);
/* Writes all of buf. 0, or a negative errno. */
int egress_tls_send(struct egress_tls_conn *k, const void *buf, size_t len);
/* Sends close_notify (not waiting for the peer's) and frees. NULL: none. */
void egress_tls_close(struct egress_tls_conn *k);
/* The fd it runs on. */
int egress_tls_fd(const struct egress_tls_conn *k);

#endif /* EGRESS_TLS_H */
