//go:build openssl

package ossl

/*
#include <stdlib.h>
#include "alert13.h"
*/
import "C"

import "unsafe"

// keylogSecret is tm_keylog_secret: the secret of a key-log line with the
// given label, or nil. Only the tests call it from Go; the shim calls the C
// function from its key-log callback.
func keylogSecret(line, label string) []byte {
	cLine, cLabel := C.CString(line), C.CString(label)
	defer C.free(unsafe.Pointer(cLine))
	defer C.free(unsafe.Pointer(cLabel))
	var out [C.TM_ALERT13_MAX_SECRET]C.uint8_t
	n := C.tm_keylog_secret(cLine, cLabel, &out[0], C.size_t(len(out)))
	if n == 0 {
		return nil
	}
	return C.GoBytes(unsafe.Pointer(&out[0]), C.int(n))
}

// sealAlert13 is tm_seal_alert13 with room for outcap bytes: the sealed
// record, or nil when the C side refused.
func sealAlert13(suite uint16, secret []byte, alert uint8, outcap int) []byte {
	cSecret := C.CBytes(secret)
	defer C.free(cSecret)
	out := C.malloc(C.size_t(max(outcap, 1)))
	defer C.free(out)
	n := C.tm_seal_alert13(C.uint16_t(suite), (*C.uint8_t)(cSecret), C.size_t(len(secret)),
		C.uint8_t(alert), (*C.uint8_t)(out), C.size_t(outcap))
	if n == 0 {
		return nil
	}
	return C.GoBytes(out, C.int(n))
}
