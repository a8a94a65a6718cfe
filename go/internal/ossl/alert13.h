/* The TLS 1.3 alert a client seals by itself when OpenSSL would send it in
 * the clear (see alert13.c). Pure functions of their inputs, so they are
 * tested apart from any handshake (alert13_test.go). BoringSSL seals its own
 * alerts; there these are not built. */
#ifndef TLSMATRIX_OSSL_ALERT13_H
#define TLSMATRIX_OSSL_ALERT13_H

#include <stddef.h>
#include <stdint.h>

/* Size of a sealed alert record: 5-byte header, 3-byte inner plaintext
 * (level, description, content type), 16-byte tag. */
#define TM_ALERT13_RECORD_LEN 24
/* The longest traffic secret (SHA-384). */
#define TM_ALERT13_MAX_SECRET 48

/* Parses a key-log line "<label> <client random hex> <secret hex>" whose
 * label is `label` (without the trailing space) into out. Returns the
 * secret's length, or 0 when the line has another label, is malformed, or
 * its secret does not fit in outcap. */
size_t tm_keylog_secret(const char *line, const char *label, uint8_t *out, size_t outcap);

/* Seals a fatal alert as the first record (sequence number 0) under the
 * traffic key and IV derived from secret for the TLS 1.3 suite (0x1301,
 * 0x1302 or 0x1303). Returns TM_ALERT13_RECORD_LEN, or 0 when the suite is
 * unknown, the secret's length is not the suite hash's, outcap is too small,
 * or libcrypto fails. */
size_t tm_seal_alert13(uint16_t suite, const uint8_t *secret, size_t secret_len, uint8_t alert,
                       uint8_t *out, size_t outcap);

#endif
