//! Variants of an impl, named by suffixes after `+`: the C compiler its C code was built with
//! when not the default (`rustls-ring+clang`), and the allocator every allocation of its
//! process goes to when not glibc's (`openssl-3.6+jemalloc`), in that order
//! (`rustls-ring+clang+mimalloc`); or, alone, a companion: the system library rebuilt from
//! its distribution's source with its symbols, which only explains the system's figures
//! (`openssl-3.0+symbols`). Records and reports keep variants apart by name.

use crate::allocator::Allocator;

/// The C compilers a driver may be built with; the first is the default, never named.
pub const COMPILERS: [&str; 2] = ["gcc", "clang"];

/// The suffix of a companion build with symbols.
pub const SYMBOLS: &str = "symbols";

/// The folder a companion's libraries are loaded from, which the runner sets (with
/// `LD_LIBRARY_PATH`) on a driver it starts for a `+symbols` impl.
pub const COMPANION_ENV: &str = "TLSMATRIX_COMPANION_LIB";

/// What a name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant<'a> {
    pub base: &'a str,
    /// `None`: the default compiler.
    pub compiler: Option<&'a str>,
    pub allocator: Allocator,
    /// A companion build with symbols (`+symbols`, alone).
    pub symbols: bool,
}

impl<'a> Variant<'a> {
    /// Reads a name; a suffix that is neither a known compiler nor a known allocator, a
    /// default spelt out, or suffixes out of order are errors that say what is allowed.
    pub fn parse(name: &'a str) -> Result<Variant<'a>, String> {
        let mut parts = name.split('+');
        let base = parts.next().unwrap_or_default();
        if base.is_empty() {
            return Err(format!("'{name}' has no impl before '+'"));
        }
        let mut v = Variant {
            base,
            compiler: None,
            allocator: Allocator::Glibc,
            symbols: false,
        };
        for part in parts {
            if part == SYMBOLS {
                if v.symbols || v.compiler.is_some() || v.allocator != Allocator::Glibc {
                    return Err(format!(
                        "'{name}': +{SYMBOLS} (a companion build with symbols) comes alone, once"
                    ));
                }
                v.symbols = true;
                continue;
            }
            if v.symbols {
                return Err(format!(
                    "'{name}': +{SYMBOLS} (a companion build with symbols) comes alone, once"
                ));
            }
            if part == COMPILERS[0] || part == Allocator::Glibc.name() {
                return Err(format!(
                    "'{name}': {part} is the default; leave '+{part}' out"
                ));
            }
            if let Some(c) = COMPILERS.iter().find(|&&c| c == part) {
                if v.compiler.is_some() || v.allocator != Allocator::Glibc {
                    return Err(format!(
                        "'{name}': the compiler comes once, before the allocator"
                    ));
                }
                v.compiler = Some(c);
            } else if let Some(a) = Allocator::parse(part) {
                if v.allocator != Allocator::Glibc {
                    return Err(format!("'{name}' names two allocators"));
                }
                v.allocator = a;
            } else {
                return Err(format!(
                    "'{name}': after '+' comes a compiler ({}) or an allocator ({}), or {SYMBOLS} alone",
                    COMPILERS[1..].join(", "),
                    Allocator::ALL[1..]
                        .iter()
                        .map(|a| a.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        Ok(v)
    }

    /// The name back, suffixes in order.
    pub fn name(&self) -> String {
        let mut n = self.base.to_string();
        if let Some(c) = self.compiler {
            n.push('+');
            n.push_str(c);
        }
        if self.allocator != Allocator::Glibc {
            n.push('+');
            n.push_str(self.allocator.name());
        }
        if self.symbols {
            n.push('+');
            n.push_str(SYMBOLS);
        }
        n
    }

    /// This name with another allocator (a name a driver listed, on each allocator it offers).
    pub fn on(name: &str, allocator: Allocator) -> Result<String, String> {
        let mut v = Variant::parse(name)?;
        v.allocator = allocator;
        Ok(v.name())
    }
}

/// The impl a name stands for, with every variant suffix dropped (the name itself when it
/// does not parse: the caller's lookup then says it is unknown).
pub fn base(name: &str) -> &str {
    Variant::parse(name).map_or(name, |v| v.base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_name_says_its_compiler_and_allocator_and_reads_back() {
        for name in [
            "rustls-ring",
            "rustls-ring+clang",
            "openssl-3.6+jemalloc",
            "rustls-ring+clang+mimalloc",
            "openssl-3.0+symbols",
        ] {
            assert_eq!(Variant::parse(name).unwrap().name(), name);
        }
        assert!(Variant::parse("openssl-3.0+symbols").unwrap().symbols);
        let v = Variant::parse("openssl-3.6+clang+jemalloc").unwrap();
        assert_eq!(
            (v.base, v.compiler, v.allocator),
            ("openssl-3.6", Some("clang"), Allocator::Jemalloc)
        );
        assert_eq!(
            Variant::on("rustls-ring+clang", Allocator::Mimalloc).unwrap(),
            "rustls-ring+clang+mimalloc"
        );
        assert_eq!(base("s2n-tls+mimalloc"), "s2n-tls");
        for bad in [
            "s2n-tls+glibc",
            "s2n-tls+gcc",
            "s2n-tls+tcmalloc",
            "+jemalloc",
            "x+jemalloc+clang",
            "x+jemalloc+mimalloc",
            "x+symbols+jemalloc",
            "x+clang+symbols",
            "x+symbols+symbols",
        ] {
            assert!(Variant::parse(bad).is_err(), "{bad}");
        }
        assert!(Variant::parse("x+tcmalloc")
            .unwrap_err()
            .contains("jemalloc"));
    }
}
