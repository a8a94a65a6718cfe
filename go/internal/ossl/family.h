/* Which libssl API the shim is compiled against. AWS-LC is a fork of
 * BoringSSL and keeps its libssl API (DER buffers, custom verify, group and
 * signature code points, client alerts sealed by the library), so both take
 * the same paths, marked TM_BORING_API. */
#ifndef TLSMATRIX_OSSL_FAMILY_H
#define TLSMATRIX_OSSL_FAMILY_H

#include <openssl/crypto.h>

#if defined(OPENSSL_IS_BORINGSSL) || defined(OPENSSL_IS_AWSLC)
#define TM_BORING_API 1
#endif

#endif
