//go:build openssl

#include "cmem.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "family.h"

static uint64_t calls, bytes;
static int counting;

static void count(size_t n) {
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&bytes, (uint64_t)n, __ATOMIC_RELAXED);
}

int tm_cmem_read(uint64_t *c, uint64_t *b) {
	if (!counting)
		return 0;
	*c = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	*b = __atomic_load_n(&bytes, __ATOMIC_RELAXED);
	return 1;
}

#ifdef TM_BORING_API
/* BoringSSL's (and AWS-LC's) own allocator keeps each block's size in a prefix and cleanses the block when it
 * frees it; these do the same, so the library runs as it would without them, counted. */
#define PREFIX 16

void *OPENSSL_memory_alloc(size_t n) {
	if (n > SIZE_MAX - PREFIX)
		return NULL;
	count(n);
	uint8_t *p = malloc(n + PREFIX);
	if (p == NULL)
		return NULL;
	*(size_t *)p = n;
	return p + PREFIX;
}

size_t OPENSSL_memory_get_size(void *ptr) { return *(size_t *)((uint8_t *)ptr - PREFIX); }

void OPENSSL_memory_free(void *ptr) {
	uint8_t *p = (uint8_t *)ptr - PREFIX;
	OPENSSL_cleanse(p, *(size_t *)p + PREFIX);
	free(p);
}

int tm_cmem_install(void) { return counting = 1; }
#else
/* OpenSSL's default functions are plain malloc, realloc and free (CRYPTO_clear_free cleanses
 * before it calls free), so these change nothing but the count. */
static void *counted_malloc(size_t n, const char *file, int line) {
	(void)file, (void)line;
	count(n);
	return malloc(n);
}

static void *counted_realloc(void *p, size_t n, const char *file, int line) {
	(void)file, (void)line;
	if (p != NULL && n == 0) {
		free(p);
		return NULL;
	}
	count(n);
	return realloc(p, n);
}

static void counted_free(void *p, const char *file, int line) {
	(void)file, (void)line;
	free(p);
}

int tm_cmem_install(void) {
	return counting = CRYPTO_set_mem_functions(counted_malloc, counted_realloc, counted_free);
}
#endif
