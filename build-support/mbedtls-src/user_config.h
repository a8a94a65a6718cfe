/* What tlsmatrix's Mbed TLS build adds to the default configuration (mbedtls_config.h as
 * released), read after it (MBEDTLS_USER_CONFIG_FILE): only thread safety. A server running
 * connections on several threads needs it, and so do tlsmatrix's `allcores` scenarios, one
 * thread per core in one process; without it PSA's key slots and random generator, global to
 * the process, are shared unlocked (handshakes failed with -0x0001 and -0x7100). The cost is
 * an uncontended mutex around those global structures. */
#define MBEDTLS_THREADING_C
#define MBEDTLS_THREADING_PTHREAD
