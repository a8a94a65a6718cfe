//go:build openssl

#include "alert13.h"

#include <string.h>

#include <openssl/crypto.h>

#include "family.h"
#include <openssl/opensslv.h>

#ifndef TM_BORING_API

#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>

size_t tm_keylog_secret(const char *line, const char *label, uint8_t *out, size_t outcap) {
	size_t label_len = strlen(label);
	if (strncmp(line, label, label_len) != 0 || line[label_len] != ' ')
		return 0;
	const char *hex = strchr(line + label_len + 1, ' '); /* skip the client random */
	if (hex == NULL)
		return 0;
	hex++;
	size_t digits = strlen(hex);
	if (digits == 0 || digits % 2 != 0 || digits / 2 > outcap)
		return 0;
	size_t n = digits / 2;
	for (size_t i = 0; i < n; i++) {
		int hi = OPENSSL_hexchar2int((unsigned char)hex[2 * i]);
		int lo = OPENSSL_hexchar2int((unsigned char)hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			OPENSSL_cleanse(out, outcap);
			return 0;
		}
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return n;
}

/* HKDF-Expand-Label (RFC 8446, section 7.1) with an empty context. */
static int expand_label(const EVP_MD *md, const uint8_t *secret, size_t secret_len,
                        const char *label, uint8_t *out, size_t out_len) {
	uint8_t info[2 + 1 + 255 + 1];
	size_t label_len = strlen(label);
	info[0] = (uint8_t)(out_len >> 8);
	info[1] = (uint8_t)out_len;
	info[2] = (uint8_t)(6 + label_len);
	memcpy(info + 3, "tls13 ", 6);
	memcpy(info + 9, label, label_len);
	info[9 + label_len] = 0;
	EVP_PKEY_CTX *kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	int ok = kctx != NULL && EVP_PKEY_derive_init(kctx) > 0 &&
	         EVP_PKEY_CTX_set_hkdf_mode(kctx, EVP_PKEY_HKDEF_MODE_EXPAND_ONLY) > 0 &&
	         EVP_PKEY_CTX_set_hkdf_md(kctx, md) > 0 &&
	         EVP_PKEY_CTX_set1_hkdf_key(kctx, secret, (int)secret_len) > 0 &&
	         EVP_PKEY_CTX_add1_hkdf_info(kctx, info, (int)(10 + label_len)) > 0 &&
	         EVP_PKEY_derive(kctx, out, &out_len) > 0;
	EVP_PKEY_CTX_free(kctx);
	return ok;
}

size_t tm_seal_alert13(uint16_t suite, const uint8_t *secret, size_t secret_len, uint8_t alert,
                       uint8_t *out, size_t outcap) {
	const EVP_CIPHER *aead;
	const EVP_MD *md;
	size_t key_len;
	switch (suite) {
	case 0x1301: aead = EVP_aes_128_gcm(); md = EVP_sha256(); key_len = 16; break;
	case 0x1302: aead = EVP_aes_256_gcm(); md = EVP_sha384(); key_len = 32; break;
	case 0x1303: aead = EVP_chacha20_poly1305(); md = EVP_sha256(); key_len = 32; break;
	default: return 0;
	}
	if (secret_len != (size_t)EVP_MD_size(md) || outcap < TM_ALERT13_RECORD_LEN)
		return 0;
	uint8_t key[32], iv[12];
	size_t n = 0;
	if (!expand_label(md, secret, secret_len, "key", key, key_len) ||
	    !expand_label(md, secret, secret_len, "iv", iv, sizeof iv))
		goto done;
	/* Inner plaintext: level fatal, description, then the real content type;
	 * the header is the additional data, and sequence number 0 leaves the IV
	 * as the nonce. */
	uint8_t inner[3] = {SSL3_AL_FATAL, alert, SSL3_RT_ALERT};
	uint8_t rec[TM_ALERT13_RECORD_LEN] = {SSL3_RT_APPLICATION_DATA, 0x03, 0x03, 0x00, 3 + 16};
	EVP_CIPHER_CTX *cctx = EVP_CIPHER_CTX_new();
	int len, ok = cctx != NULL && EVP_EncryptInit_ex(cctx, aead, NULL, key, iv) > 0 &&
	              EVP_EncryptUpdate(cctx, NULL, &len, rec, 5) > 0 &&
	              EVP_EncryptUpdate(cctx, rec + 5, &len, inner, 3) > 0 && len == 3 &&
	              EVP_EncryptFinal_ex(cctx, rec + 8, &len) > 0 &&
	              EVP_CIPHER_CTX_ctrl(cctx, EVP_CTRL_AEAD_GET_TAG, 16, rec + 8) > 0;
	EVP_CIPHER_CTX_free(cctx);
	if (ok) {
		memcpy(out, rec, sizeof rec);
		n = sizeof rec;
	}
done:
	OPENSSL_cleanse(key, sizeof key);
	OPENSSL_cleanse(iv, sizeof iv);
	return n;
}

#else /* TM_BORING_API */

size_t tm_keylog_secret(const char *line, const char *label, uint8_t *out, size_t outcap) {
	(void)line, (void)label, (void)out, (void)outcap;
	return 0;
}

size_t tm_seal_alert13(uint16_t suite, const uint8_t *secret, size_t secret_len, uint8_t alert,
                       uint8_t *out, size_t outcap) {
	(void)suite, (void)secret, (void)secret_len, (void)alert, (void)out, (void)outcap;
	return 0;
}

#endif
