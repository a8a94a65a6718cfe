//! Empty: this package only pins the Mbed TLS sources (see Cargo.toml).
