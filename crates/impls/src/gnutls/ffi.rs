use std::ffi::{c_char, c_int, c_uint, c_void};

pub type session = *mut c_void;
pub type credentials = *mut c_void;

#[repr(C)]
pub struct datum {
    pub data: *mut u8,
    pub size: c_uint,
}

pub type push_fn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> isize;
pub type pull_fn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> isize;
pub type db_store_fn = unsafe extern "C" fn(*mut c_void, datum, datum) -> c_int;
pub type db_retr_fn = unsafe extern "C" fn(*mut c_void, datum) -> datum;
pub type db_remove_fn = unsafe extern "C" fn(*mut c_void, datum) -> c_int;

pub const SERVER: c_uint = 1;
pub const CLIENT: c_uint = 1 << 1;
pub const NONBLOCK: c_uint = 1 << 3;
pub const NO_TICKETS: c_uint = 1 << 10;
pub const KEY_SHARE_TOP: c_uint = 1 << 11;
pub const NO_AUTO_SEND_TICKET: c_uint = 1 << 21;

pub const E_AGAIN: c_int = -28;
pub const E_FATAL_ALERT_RECEIVED: c_int = -12;
pub const E_INTERRUPTED: c_int = -52;
pub const CRD_CERTIFICATE: c_int = 1;
pub const X509_FMT_PEM: c_int = 1;
pub const CERT_REQUEST: c_int = 1;
pub const CERT_REQUIRE: c_int = 2;
pub const NAME_DNS: c_int = 1;
pub const SHUT_WR: c_int = 1;
pub const ALPN_MANDATORY: c_uint = 1;
pub const ALPN_SERVER_PRECEDENCE: c_uint = 1 << 1;

pub const TLS1_2: c_int = 4;
pub const TLS1_3: c_int = 5;
pub const CIPHER_AES_128_GCM: c_int = 10;
pub const CIPHER_AES_256_GCM: c_int = 11;
pub const CIPHER_CHACHA20_POLY1305: c_int = 23;
pub const KX_ECDHE_RSA: c_int = 12;
pub const GROUP_SECP256R1: c_int = 2;
pub const GROUP_SECP384R1: c_int = 3;
pub const GROUP_X25519: c_int = 6;
pub const SIGN_ECDSA_SHA256: c_int = 14;
pub const SIGN_ECDSA_SHA384: c_int = 15;
pub const SIGN_EDDSA_ED25519: c_int = 35;
pub const SIGN_ECDSA_SECP256R1_SHA256: c_int = 37;
pub const SIGN_ECDSA_SECP384R1_SHA384: c_int = 38;
pub const SIGN_RSA_PSS_RSAE_SHA256: c_int = 40;

extern "C" {
    /// csrc/gnutls_floor.c's table of floor calls, and the last error it met.
    pub fn tm_gnutls_floor() -> *const crate::floor_glue::Fns;
    pub fn tm_gnutls_floor_error() -> c_int;
}

#[link(name = "gnutls")]
extern "C" {
    pub static gnutls_malloc: unsafe extern "C" fn(usize) -> *mut c_void;
    pub static gnutls_free: unsafe extern "C" fn(*mut c_void);

    pub fn gnutls_check_version(req: *const c_char) -> *const c_char;
    pub fn gnutls_strerror(err: c_int) -> *const c_char;

    pub fn gnutls_certificate_allocate_credentials(res: *mut credentials) -> c_int;
    pub fn gnutls_certificate_free_credentials(sc: credentials);
    pub fn gnutls_certificate_set_x509_key_mem2(
        res: credentials,
        cert: *const datum,
        key: *const datum,
        format: c_int,
        pass: *const c_char,
        flags: c_uint,
    ) -> c_int;
    pub fn gnutls_certificate_set_x509_trust_mem(
        res: credentials,
        ca: *const datum,
        format: c_int,
    ) -> c_int;

    pub fn gnutls_init(session: *mut session, flags: c_uint) -> c_int;
    pub fn gnutls_deinit(session: session);
    pub fn gnutls_priority_set_direct(
        session: session,
        priorities: *const c_char,
        err_pos: *mut *const c_char,
    ) -> c_int;
    pub fn gnutls_credentials_set(session: session, kind: c_int, cred: *mut c_void) -> c_int;
    pub fn gnutls_server_name_set(
        session: session,
        kind: c_int,
        name: *const c_void,
        len: usize,
    ) -> c_int;
    pub fn gnutls_server_name_get(
        session: session,
        data: *mut c_void,
        len: *mut usize,
        kind: *mut c_uint,
        indx: c_uint,
    ) -> c_int;
    pub fn gnutls_session_set_verify_cert(session: session, hostname: *const c_char, flags: c_uint);
    pub fn gnutls_certificate_server_set_request(session: session, req: c_int);
    pub fn gnutls_alpn_set_protocols(
        session: session,
        protocols: *const datum,
        count: c_uint,
        flags: c_uint,
    ) -> c_int;
    pub fn gnutls_alpn_get_selected_protocol(session: session, protocol: *mut datum) -> c_int;

    pub fn gnutls_transport_set_ptr(session: session, ptr: *mut c_void);
    pub fn gnutls_transport_set_push_function(session: session, f: push_fn);
    pub fn gnutls_transport_set_pull_function(session: session, f: pull_fn);

    pub fn gnutls_session_ticket_key_generate(key: *mut datum) -> c_int;
    pub fn gnutls_session_ticket_enable_server(session: session, key: *const datum) -> c_int;
    pub fn gnutls_session_ticket_send(session: session, nr: c_uint, flags: c_uint) -> c_int;
    pub fn gnutls_session_get_data2(session: session, data: *mut datum) -> c_int;
    pub fn gnutls_session_set_data(session: session, data: *const c_void, size: usize) -> c_int;
    pub fn gnutls_session_is_resumed(session: session) -> c_int;
    pub fn gnutls_db_set_ptr(session: session, ptr: *mut c_void);
    pub fn gnutls_db_set_store_function(session: session, f: db_store_fn);
    pub fn gnutls_db_set_retrieve_function(session: session, f: db_retr_fn);
    pub fn gnutls_db_set_remove_function(session: session, f: db_remove_fn);
    pub fn gnutls_memset(data: *mut c_void, c: c_int, size: usize);

    pub fn gnutls_handshake(session: session) -> c_int;
    pub fn gnutls_alert_send_appropriate(session: session, err: c_int) -> c_int;
    pub fn gnutls_alert_get(session: session) -> c_int;
    pub fn gnutls_alert_get_name(alert: c_int) -> *const c_char;
    pub fn gnutls_record_send(session: session, data: *const c_void, len: usize) -> isize;
    pub fn gnutls_record_recv(session: session, data: *mut c_void, len: usize) -> isize;
    pub fn gnutls_session_key_update(session: session, flags: c_uint) -> c_int;
    pub fn gnutls_bye(session: session, how: c_int) -> c_int;

    pub fn gnutls_protocol_get_version(session: session) -> c_int;
    pub fn gnutls_cipher_get(session: session) -> c_int;
    pub fn gnutls_kx_get(session: session) -> c_int;
    pub fn gnutls_group_get(session: session) -> c_int;
    pub fn gnutls_sign_algorithm_get(session: session) -> c_int;
    pub fn gnutls_certificate_get_peers(session: session, size: *mut c_uint) -> *const datum;

    pub fn gnutls_aead_cipher_init(
        handle: *mut *mut c_void,
        cipher: c_int,
        key: *const datum,
    ) -> c_int;
    pub fn gnutls_aead_cipher_encrypt(
        handle: *mut c_void,
        nonce: *const c_void,
        nonce_len: usize,
        auth: *const c_void,
        auth_len: usize,
        tag_size: usize,
        ptext: *const c_void,
        ptext_len: usize,
        ctext: *mut c_void,
        ctext_len: *mut usize,
    ) -> c_int;
    pub fn gnutls_aead_cipher_decrypt(
        handle: *mut c_void,
        nonce: *const c_void,
        nonce_len: usize,
        auth: *const c_void,
        auth_len: usize,
        tag_size: usize,
        ctext: *const c_void,
        ctext_len: usize,
        ptext: *mut c_void,
        ptext_len: *mut usize,
    ) -> c_int;
    pub fn gnutls_aead_cipher_deinit(handle: *mut c_void);
}
