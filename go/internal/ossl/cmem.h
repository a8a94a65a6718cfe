/* Counting libssl's own allocations: calls and bytes since the process started, through the
 * library's allocator hooks (OpenSSL: CRYPTO_set_mem_functions; BoringSSL: the
 * OPENSSL_memory_* functions it calls when a program defines them). Go's heap figures do not
 * see these, and an OpenSSL handshake allocates most of its memory here. */
#ifndef TLSMATRIX_OSSL_CMEM_H
#define TLSMATRIX_OSSL_CMEM_H

#include <stdint.h>

/* Installs the counting hooks; 1 when they are in, 0 when the library had allocated before
 * (OpenSSL refuses new functions then) and nothing is counted. Call before anything else. */
int tm_cmem_install(void);

/* Allocation calls (malloc and realloc) and the bytes they asked for, so far; returns 0 (and
 * reads nothing) when the hooks are not in. */
int tm_cmem_read(uint64_t *calls, uint64_t *bytes);

#endif
