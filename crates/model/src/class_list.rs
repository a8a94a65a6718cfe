//! The class list itself, as tokens: what a handshake's code does, by its functions' names
//! (see `crate::class`, which builds the classes from it, and `crate::metric`, which builds
//! their metric rows). A module of its own so that both read it and neither reads the other
//! for it.

/// The class list, once, handed to a macro (`with_classes!(callback { args })` expands to
/// `callback! { classes: [...] args }`). Each entry: the variant; its name in sentences and
/// charts; its column heading; its key in metric names; its instruction metrics (client,
/// server; then the same of a QUIC handshake and of the same library's TCP handshake counted
/// beside it, `--measure quic-instructions`) and what they count, where callgrind sees it
/// (the kernel it does not); its time-share metrics, the direction that is better, the words
/// a table shows and what they measure; its share of the side's crypto floor's perf samples
/// (client, server), which the time above the floor is split against.
macro_rules! with_classes {
    ($callback:ident { $($args:tt)* }) => {
        $callback! {
            classes: [
                (Crypto, "crypto", "crypto", "crypto",
                    [ClientCryptoInstructions, ServerCryptoInstructions,
                        ClientQuicCryptoInstructions, ServerQuicCryptoInstructions,
                        ClientTcpCryptoInstructions, ServerTcpCryptoInstructions,
                        "in the library's cryptography (hashes, key exchange, signatures, KDFs, ciphers), classed by function name from callgrind's profile"],
                    [ClientCryptoTimeShare, ServerCryptoTimeShare, Higher, "in crypto",
                        "in the library's cryptography (hashes, key exchange, signatures, KDFs, ciphers)"],
                    [ClientCryptoFloorShare, ServerCryptoFloorShare]),
                (Provider, "provider layer", "provider", "provider",
                    [ClientProviderInstructions, ServerProviderInstructions,
                        ClientQuicProviderInstructions, ServerQuicProviderInstructions,
                        ClientTcpProviderInstructions, ServerTcpProviderInstructions,
                        "in the provider layer (method fetches and their cache, name maps, property queries, decoder and encoder lookups, parameters across the provider boundary, the library context), classed by function name from callgrind's profile"],
                    [ClientProviderTimeShare, ServerProviderTimeShare, Lower, "in the provider layer",
                        "in the provider layer (method fetches and their cache, name maps, property queries, decoder and encoder lookups, parameters across the provider boundary, the library context)"],
                    [ClientProviderFloorShare, ServerProviderFloorShare]),
                (Parsing, "X.509 & encoding", "X.509", "parsing",
                    [ClientParsingInstructions, ServerParsingInstructions,
                        ClientQuicParsingInstructions, ServerQuicParsingInstructions,
                        ClientTcpParsingInstructions, ServerTcpParsingInstructions,
                        "in X.509, ASN.1 and encoding, classed by function name from callgrind's profile"],
                    [ClientParsingTimeShare, ServerParsingTimeShare, Lower, "in X.509 & encoding",
                        "in X.509, ASN.1 and encoding"],
                    [ClientParsingFloorShare, ServerParsingFloorShare]),
                (Allocation, "allocation", "alloc", "alloc",
                    [ClientAllocInstructions, ServerAllocInstructions,
                        ClientQuicAllocInstructions, ServerQuicAllocInstructions,
                        ClientTcpAllocInstructions, ServerTcpAllocInstructions,
                        "in allocation and freeing, classed by function name from callgrind's profile"],
                    [ClientAllocTimeShare, ServerAllocTimeShare, Lower, "in allocation",
                        "in allocation and freeing"],
                    [ClientAllocFloorShare, ServerAllocFloorShare]),
                (Locks, "locks", "locks", "lock",
                    [ClientLockInstructions, ServerLockInstructions,
                        ClientQuicLockInstructions, ServerQuicLockInstructions,
                        ClientTcpLockInstructions, ServerTcpLockInstructions,
                        "in locks and once-guards, classed by function name from callgrind's profile"],
                    [ClientLockTimeShare, ServerLockTimeShare, Lower, "in locks",
                        "in locks and once-guards"],
                    [ClientLockFloorShare, ServerLockFloorShare]),
                (Copies, "copies", "copies", "copy",
                    [ClientCopyInstructions, ServerCopyInstructions,
                        ClientQuicCopyInstructions, ServerQuicCopyInstructions,
                        ClientTcpCopyInstructions, ServerTcpCopyInstructions,
                        "in memcpy, memmove, memset and cleansing, classed by function name from callgrind's profile"],
                    [ClientCopyTimeShare, ServerCopyTimeShare, Lower, "in copies",
                        "in memcpy, memmove, memset and cleansing"],
                    [ClientCopyFloorShare, ServerCopyFloorShare]),
                (Unnamed, "unnamed", "unnamed", "unnamed",
                    [ClientUnnamedInstructions, ServerUnnamedInstructions,
                        ClientQuicUnnamedInstructions, ServerQuicUnnamedInstructions,
                        ClientTcpUnnamedInstructions, ServerTcpUnnamedInstructions,
                        "in functions the dump has no name for (a stripped library's internal code), which the split cannot class"],
                    [ClientUnnamedTimeShare, ServerUnnamedTimeShare, Lower, "unnamed",
                        "in functions perf cannot name (a stripped library's internal code)"],
                    [ClientUnnamedFloorShare, ServerUnnamedFloorShare]),
                (Other, "state machine & rest", "state machine", "other",
                    [ClientOtherInstructions, ServerOtherInstructions,
                        ClientQuicOtherInstructions, ServerQuicOtherInstructions,
                        ClientTcpOtherInstructions, ServerTcpOtherInstructions,
                        "in everything else: the TLS state machine, records and the rest, classed by function name from callgrind's profile"],
                    [ClientOtherTimeShare, ServerOtherTimeShare, Lower, "in state machine & rest",
                        "in everything else: the TLS state machine, records and the rest"],
                    [ClientOtherFloorShare, ServerOtherFloorShare]),
                (Kernel, "kernel", "kernel", "kernel",
                    [],
                    [ClientKernelTimeShare, ServerKernelTimeShare, Lower, "in kernel",
                        "in the kernel, on the side's behalf"],
                    [ClientKernelFloorShare, ServerKernelFloorShare]),
            ]
            $($args)*
        }
    };
}

pub(crate) use with_classes;
