package callgrind

// request is implemented in request_amd64.s.
//
//go:noescape
func request(args *[6]uint64, def uint64) uint64

const supported = true
