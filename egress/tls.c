/*
 * tls: GnuTLS for the secrets' interception (tls.h), loaded on first use.
 * Every call goes through the table below, filled by dlsym(): the
 * library is never linked, so a server that binds no secret never maps
 * it. The declarations of the gnutls headers give each pointer its type.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "egress.h"
#include "tls.h"

/* The soname of Debian 12's libgnutls30 (the ABI compiled against). */
#define TLS_SONAME		"libgnutls.so.30"
/* Hosts whose certificate is kept: past it, one is issued per connection. */
#define TLS_MAX_HOSTS		256
/* How long issued certificates are valid: past a server's usual life. */
#define TLS_CA_DAYS		30
#define TLS_LEAF_DAYS		7
/* Back-dated by an hour: a sandbox clock a little behind still trusts it. */
#define TLS_BACKDATE_S		3600

#define TLS_FUNCS(X) \
	X(gnutls_init) X(gnutls_deinit) X(gnutls_set_default_priority) \
	X(gnutls_credentials_set) X(gnutls_server_name_set) \
	X(gnutls_session_set_verify_cert) X(gnutls_transport_set_int2) \
	X(gnutls_handshake) X(gnutls_record_recv) X(gnutls_record_send) \
	X(gnutls_record_check_pending) X(gnutls_record_get_direction) \
	X(gnutls_bye) X(gnutls_strerror) X(gnutls_error_is_fatal) \
	X(gnutls_alpn_set_protocols) X(gnutls_session_get_verify_cert_status) \
	X(gnutls_certificate_verification_status_print) \
	X(gnutls_certificate_allocate_credentials) \
	X(gnutls_certificate_free_credentials) \
	X(gnutls_certificate_set_x509_key) \
	X(gnutls_certificate_set_x509_system_trust) \
	X(gnutls_certificate_set_x509_trust_file) \
	X(gnutls_x509_privkey_init) X(gnutls_x509_privkey_deinit) \
	X(gnutls_x509_privkey_generate) X(gnutls_x509_crt_init) \
	X(gnutls_x509_crt_deinit) X(gnutls_x509_crt_set_version) \
	X(gnutls_x509_crt_set_serial) X(gnutls_x509_crt_set_activation_time) \
	X(gnutls_x509_crt_set_expiration_time) X(gnutls_x509_crt_set_dn_by_oid) \
	X(gnutls_x509_crt_set_key) X(gnutls_x509_crt_set_basic_constraints) \
	X(gnutls_x509_crt_set_key_usage) X(gnutls_x509_crt_set_subject_alt_name) \
	X(gnutls_x509_crt_set_key_purpose_oid) \
	X(gnutls_x509_crt_set_subject_key_id) \
	X(gnutls_x509_crt_get_key_id) \
	X(gnutls_x509_crt_set_authority_key_id) \
	X(gnutls_x509_crt_sign2) X(gnutls_x509_crt_export2)

static struct {
#define X(f) __typeof__(f) *f;
	TLS_FUNCS(X)
#undef X
	gnutls_free_function *free;	/* a variable of the library's */
} G;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_err[256];

static void
load(void)
{
	void *lib;
	const char *why;

	if ((lib = dlopen(TLS_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		why = dlerror();
		(void)snprintf(load_err, sizeof(load_err), "cannot load %s "
		    "(install libgnutls30): %s", TLS_SONAME, why != NULL ? why :
		    "unknown error");
		return;
	}
	/* POSIX dlsym returns void *; the casts are the usual idiom */
#define X(f) \
	if ((*(void **)&G.f = dlsym(lib, #f)) == NULL) { \
		(void)snprintf(load_err, sizeof(load_err), "%s has no %s", \
		    TLS_SONAME, #f); \
		return; \
	}
	TLS_FUNCS(X)
#undef X
	if ((*(void **)&G.free = dlsym(lib, "gnutls_free")) == NULL)
		(void)snprintf(load_err, sizeof(load_err), "%s has no "
		    "gnutls_free", TLS_SONAME);
	/* never dlclose: connection threads may still run in it */
}

struct host_cert {
	char host[EGRESS_MAX_HOST + 1];
	gnutls_certificate_credentials_t cred;
};

struct egress_tls {
	gnutls_x509_privkey_t ca_key, leaf_key;
	gnutls_x509_crt_t ca;
	char *ca_pem;
	gnutls_certificate_credentials_t trust;	/* for the real hosts */
	pthread_mutex_t lock;
	struct host_cert hosts[TLS_MAX_HOSTS];
	size_t nhosts;
};

struct egress_tls_conn {
	gnutls_session_t s;
	int fd;
	egress_tls_wait_fn wait;
	void *arg;
};

static const gnutls_datum_t alpn_http11 = {
	(unsigned char *)"http/1.1", 8
};

static int
fail(char *err, size_t errlen, const char *what, int rc)
{
	(void)snprintf(err, errlen, "%s: %s", what, G.gnutls_strerror(rc));
	return -1;
}

/* Sets a random positive 16-byte serial. */
static int
set_serial(gnutls_x509_crt_t crt)
{
	unsigned char serial[16];

	if (getentropy(serial, sizeof(serial)) != 0)
		return GNUTLS_E_RANDOM_FAILED;
	serial[0] &= 0x7f;
	serial[0] |= 0x01;	/* no leading zero byte to strip */
	return G.gnutls_x509_crt_set_serial(crt, serial, sizeof(serial));
}

static int
new_key(gnutls_x509_privkey_t *key)
{
	int rc;

	if ((rc = G.gnutls_x509_privkey_init(key)) < 0)
		return rc;
	return G.gnutls_x509_privkey_generate(*key, GNUTLS_PK_ECDSA,
	    GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
}

/* The common part of a certificate: version, serial, times, CN, key. */
static int
crt_base(gnutls_x509_crt_t crt, const char *cn, gnutls_x509_privkey_t key,
    unsigned days)
{
	time_t now = time(NULL);
	int rc;

	if ((rc = G.gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (rc = set_serial(crt)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_activation_time(crt,
	    now - TLS_BACKDATE_S)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_expiration_time(crt,
	    now + (time_t)days * 86400)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_dn_by_oid(crt,
	    GNUTLS_OID_X520_COMMON_NAME, 0, cn, (unsigned)strlen(cn))) < 0 ||
	    (rc = G.gnutls_x509_crt_set_key(crt, key)) < 0)
		return rc;
	return 0;
}

static int
make_ca(struct egress_tls *t, char *err, size_t errlen)
{
	unsigned char id[64];
	size_t idlen = sizeof(id);
	char cn[96];
	gnutls_datum_t pem = { NULL, 0 };
	int rc;

	(void)snprintf(cn, sizeof(cn), "mcp-sandbox egress CA (pid %ld)",
	    (long)getpid());
	if ((rc = new_key(&t->ca_key)) < 0 || (rc = new_key(&t->leaf_key)) < 0)
		return fail(err, errlen, "making the CA's keys", rc);
	if ((rc = G.gnutls_x509_crt_init(&t->ca)) < 0 ||
	    (rc = crt_base(t->ca, cn, t->ca_key, TLS_CA_DAYS)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_basic_constraints(t->ca, 1, 0)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_key_usage(t->ca,
	    GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN)) < 0 ||
	    (rc = G.gnutls_x509_crt_get_key_id(t->ca, 0, id, &idlen)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_subject_key_id(t->ca, id, idlen)) < 0 ||
	    (rc = G.gnutls_x509_crt_sign2(t->ca, t->ca, t->ca_key,
	    GNUTLS_DIG_SHA256, 0)) < 0 ||
	    (rc = G.gnutls_x509_crt_export2(t->ca, GNUTLS_X509_FMT_PEM,
	    &pem)) < 0)
		return fail(err, errlen, "making the CA's certificate", rc);
	if ((t->ca_pem = malloc(pem.size + 1)) != NULL) {
		memcpy(t->ca_pem, pem.data, pem.size);
		t->ca_pem[pem.size] = '\0';
	}
	(*G.free)(pem.data);
	if (t->ca_pem == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

struct egress_tls *
egress_tls_new(const char *ca_file, char *err, size_t errlen)
{
	struct egress_tls *t;
	int rc;

	(void)pthread_once(&load_once, load);
	if (load_err[0] != '\0') {
		(void)snprintf(err, errlen, "%s", load_err);
		return NULL;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return NULL;
	}
	(void)pthread_mutex_init(&t->lock, NULL);
	if (make_ca(t, err, errlen) != 0)
		goto bad;
	if ((rc = G.gnutls_certificate_allocate_credentials(&t->trust)) < 0) {
		(void)fail(err, errlen, "credentials", rc);
		goto bad;
	}
	rc = ca_file != NULL ? G.gnutls_certificate_set_x509_trust_file(
	    t->trust, ca_file, GNUTLS_X509_FMT_PEM) :
	    G.gnutls_certificate_set_x509_system_trust(t->trust);
	if (rc <= 0) {
		(void)snprintf(err, errlen, "%s: %s", ca_file != NULL ? ca_file :
		    "the system's trust store", rc < 0 ? G.gnutls_strerror(rc) :
		    "no certificate in it");
		goto bad;
	}
	return t;
 bad:
	egress_tls_free(t);
	return NULL;
}

const char *
egress_tls_ca_pem(const struct egress_tls *t)
{
	return t->ca_pem;
}

void
egress_tls_free(struct egress_tls *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nhosts; i++)
		G.gnutls_certificate_free_credentials(t->hosts[i].cred);
	if (t->trust != NULL)
		G.gnutls_certificate_free_credentials(t->trust);
	if (t->ca != NULL)
		G.gnutls_x509_crt_deinit(t->ca);
	if (t->ca_key != NULL)
		G.gnutls_x509_privkey_deinit(t->ca_key);
	if (t->leaf_key != NULL)
		G.gnutls_x509_privkey_deinit(t->leaf_key);
	free(t->ca_pem);
	(void)pthread_mutex_destroy(&t->lock);
	explicit_bzero(t, sizeof(*t));
	free(t);
}

/* Credentials presenting a certificate for host, issued by the CA. */
static int
issue(struct egress_tls *t, const char *host,
    gnutls_certificate_credentials_t *ret)
{
	gnutls_x509_crt_t crt = NULL;
	unsigned char addr[16], id[64];
	size_t idlen = sizeof(id);
	int rc, alen = 0;

	if (inet_pton(AF_INET, host, addr) == 1)
		alen = 4;
	else if (inet_pton(AF_INET6, host, addr) == 1)
		alen = 16;
	if ((rc = G.gnutls_x509_crt_init(&crt)) < 0 ||
	    (rc = crt_base(crt, host, t->leaf_key, TLS_LEAF_DAYS)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_subject_alt_name(crt, alen > 0 ?
	    GNUTLS_SAN_IPADDRESS : GNUTLS_SAN_DNSNAME, alen > 0 ?
	    (const void *)addr : (const void *)host, alen > 0 ?
	    (unsigned)alen : (unsigned)strlen(host), GNUTLS_FSAN_SET)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_key_usage(crt,
	    GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_key_purpose_oid(crt,
	    GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0 ||
	    (rc = G.gnutls_x509_crt_get_key_id(t->ca, 0, id, &idlen)) < 0 ||
	    (rc = G.gnutls_x509_crt_set_authority_key_id(crt, id, idlen)) < 0 ||
	    (rc = G.gnutls_x509_crt_sign2(crt, t->ca, t->ca_key,
	    GNUTLS_DIG_SHA256, 0)) < 0 ||
	    (rc = G.gnutls_certificate_allocate_credentials(ret)) < 0)
		goto out;
	if ((rc = G.gnutls_certificate_set_x509_key(*ret, &crt, 1,
	    t->leaf_key)) < 0) {
		G.gnutls_certificate_free_credentials(*ret);
		*ret = NULL;
	}
 out:
	if (crt != NULL)
		G.gnutls_x509_crt_deinit(crt);
	return rc < 0 ? rc : 0;
}

/* The kept credentials for host, issued on first use (under the lock). */
static int
host_cred(struct egress_tls *t, const char *host,
    gnutls_certificate_credentials_t *ret, bool *owned)
{
	size_t i;
	int rc;

	*owned = false;
	(void)pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nhosts; i++)
		if (strcmp(t->hosts[i].host, host) == 0) {
			*ret = t->hosts[i].cred;
			(void)pthread_mutex_unlock(&t->lock);
			return 0;
		}
	rc = issue(t, host, ret);
	if (rc == 0 && t->nhosts < TLS_MAX_HOSTS) {
		(void)snprintf(t->hosts[t->nhosts].host,
		    sizeof(t->hosts[0].host), "%s", host);
		t->hosts[t->nhosts++].cred = *ret;
	} else if (rc == 0)
		*owned = true;
	(void)pthread_mutex_unlock(&t->lock);
	return rc;
}

static int
handshake(struct egress_tls_conn *k)
{
	int rc, w;

	while ((rc = G.gnutls_handshake(k->s)) < 0) {
		if (rc != GNUTLS_E_AGAIN && rc != GNUTLS_E_INTERRUPTED &&
		    G.gnutls_error_is_fatal(rc))
			return rc;
		if (rc != GNUTLS_E_AGAIN && rc != GNUTLS_E_INTERRUPTED)
			continue;	/* a warning alert */
		w = k->wait(k->arg, k->fd,
		    G.gnutls_record_get_direction(k->s) == 1 ? POLLOUT : POLLIN);
		if (w < 0)
			return w == -ETIMEDOUT ? GNUTLS_E_TIMEDOUT :
			    GNUTLS_E_INTERRUPTED;
	}
	return 0;
}

static struct egress_tls_conn *
conn_new(unsigned flags, int fd, egress_tls_wait_fn wait, void *arg,
    gnutls_certificate_credentials_t cred)
{
	struct egress_tls_conn *k = calloc(1, sizeof(*k));

	if (k == NULL)
		return NULL;
	k->fd = fd;
	k->wait = wait;
	k->arg = arg;
	if (G.gnutls_init(&k->s, flags | GNUTLS_NONBLOCK) < 0) {
		free(k);
		return NULL;
	}
	if (G.gnutls_set_default_priority(k->s) < 0 ||
	    G.gnutls_credentials_set(k->s, GNUTLS_CRD_CERTIFICATE, cred) < 0 ||
	    G.gnutls_alpn_set_protocols(k->s, &alpn_http11, 1, 0) < 0) {
		G.gnutls_deinit(k->s);
		free(k);
		return NULL;
	}
	G.gnutls_transport_set_int2(k->s, fd, fd);
	return k;
}

static const char *
why_text(int rc)
{
	return rc == GNUTLS_E_TIMEDOUT ? "no answer within idle_timeout_ms" :
	    rc == GNUTLS_E_INTERRUPTED ? "the call ended" :
	    G.gnutls_strerror(rc);
}

struct egress_tls_conn *
egress_tls_connect(struct egress_tls *t, int fd, const char *host,
    egress_tls_wait_fn wait, void *arg, char *err, size_t errlen)
{
	struct egress_tls_conn *k;
	unsigned char a[16];
	gnutls_datum_t out = { NULL, 0 };
	int rc;
	bool lit = inet_pton(AF_INET, host, a) == 1 ||
	    inet_pton(AF_INET6, host, a) == 1;

	if ((k = conn_new(GNUTLS_CLIENT, fd, wait, arg, t->trust)) == NULL) {
		(void)snprintf(err, errlen, "no TLS session for '%s'", host);
		return NULL;
	}
	/* RFC 6066 3: a literal is no server name */
	if (!lit)
		(void)G.gnutls_server_name_set(k->s, GNUTLS_NAME_DNS, host,
		    strlen(host));
	G.gnutls_session_set_verify_cert(k->s, host, 0);
	if ((rc = handshake(k)) == 0)
		return k;
	if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR &&
	    G.gnutls_certificate_verification_status_print(
	    G.gnutls_session_get_verify_cert_status(k->s), GNUTLS_CRT_X509,
	    &out, 0) == 0) {
		(void)snprintf(err, errlen, "the certificate of '%s' was "
		    "refused: %s", host, (const char *)out.data);
		(*G.free)(out.data);
	} else
		(void)snprintf(err, errlen, "TLS handshake with '%s' failed: %s",
		    host, why_text(rc));
	egress_tls_close(k);
	return NULL;
}

struct egress_tls_conn *
egress_tls_accept(struct egress_tls *t, int fd, const char *host,
    egress_tls_wait_fn wait, void *arg, char *err, size_t errlen)
{
	gnutls_certificate_credentials_t cred;
	struct egress_tls_conn *k;
	bool owned;
	int rc;

	if ((rc = host_cred(t, host, &cred, &owned)) < 0) {
		(void)snprintf(err, errlen, "issuing a certificate for '%s' "
		    "failed: %s", host, G.gnutls_strerror(rc));
		return NULL;
	}
	k = conn_new(GNUTLS_SERVER, fd, wait, arg, cred);
	if (k == NULL) {
		(void)snprintf(err, errlen, "no TLS session for the program");
	} else if ((rc = handshake(k)) < 0) {
		(void)snprintf(err, errlen, "TLS handshake with the program "
		    "failed: %s (does it trust the sandbox's CA bundle, "
		    "SSL_CERT_FILE?)", why_text(rc));
		egress_tls_close(k);
		k = NULL;
	}
	/*
	 * A certificate past TLS_MAX_HOSTS is the connection's own: it is
	 * only read during the handshake, so it goes once that is done.
	 */
	if (owned)
		G.gnutls_certificate_free_credentials(cred);
	return k;
}

ssize_t
egress_tls_recv_now(struct egress_tls_conn *k, void *buf, size_t len)
{
	ssize_t n = G.gnutls_record_recv(k->s, buf, len);

	if (n >= 0)
		return n;
	if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
		return -EAGAIN;
	if (n == GNUTLS_E_PREMATURE_TERMINATION)
		return 0;
	return -ECONNRESET;
}

ssize_t
egress_tls_recv(struct egress_tls_conn *k, void *buf, size_t len)
{
	ssize_t n;
	int w;

	while ((n = egress_tls_recv_now(k, buf, len)) == -EAGAIN)
		if ((w = k->wait(k->arg, k->fd, POLLIN)) < 0)
			return w;
	return n;
}

bool
egress_tls_pending(const struct egress_tls_conn *k)
{
	return G.gnutls_record_check_pending(k->s) > 0;
}

int
egress_tls_send(struct egress_tls_conn *k, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;
	int w;

	while (len > 0) {
		/* after AGAIN GnuTLS wants the same data again: it is */
		n = G.gnutls_record_send(k->s, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n != GNUTLS_E_AGAIN && n != GNUTLS_E_INTERRUPTED)
			return -ECONNRESET;
		if ((w = k->wait(k->arg, k->fd, POLLOUT)) < 0)
			return w;
	}
	return 0;
}

void
egress_tls_close(struct egress_tls_conn *k)
{
	if (k == NULL)
		return;
	(void)G.gnutls_bye(k->s, GNUTLS_SHUT_WR);
	G.gnutls_deinit(k->s);
	free(k);
}

int
egress_tls_fd(const struct egress_tls_conn *k)
{
	return k->fd;
}
