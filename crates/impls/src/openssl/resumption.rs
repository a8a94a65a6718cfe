//! What each side keeps so that a later connection can resume: the server's tickets or
//! cache, the client's newest session, offered by its next connection over TCP or QUIC.

use super::*;

/// The newest session a client received, which its next connection resumes.
pub(super) type SessionSlot = Arc<Mutex<Option<SslSession>>>;

/// Offers a client's kept session, if it has one, on a fresh connection of the context the
/// session came from.
pub(super) fn offer_kept_session(
    slot: Option<&SessionSlot>,
    ssl: &mut openssl::ssl::SslRef,
) -> Result<()> {
    let kept = slot.and_then(|slot| slot.lock().unwrap_or_else(|e| e.into_inner()).clone());
    if let Some(session) = kept {
        // SAFETY: the session comes from a connection of this same context.
        unsafe { ssl.set_session(&session)? };
    }
    Ok(())
}

/// Keeps a client connection's newest session (a TLS 1.3 ticket the client cache mode made
/// its session) in its slot for the next connection.
#[cfg_attr(any(feature = "boringssl", feature = "aws-lc"), allow(dead_code))]
pub(super) fn keep_session(slot: Option<&SessionSlot>, ssl: &openssl::ssl::SslRef) {
    if let (Some(slot), Some(session)) = (slot, ssl.session()) {
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(session.to_owned());
    }
}

/// Sets up what each side keeps so that a later connection can resume; returns the client's
/// session slot. A full-handshake scenario issues nothing: tickets and the cache cost time.
pub(super) fn resumption(
    b: &mut SslContextBuilder,
    side: Side,
    mode: Resumption,
) -> Result<Option<SessionSlot>> {
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    // BoringSSL has no ticket count; NO_TICKET stops its TLS 1.3 tickets too.
    b.set_options(SslOptions::NO_TICKET);
    #[cfg(not(feature = "boringssl"))]
    calls::set_num_tickets(b, 0)?;
    if mode == Resumption::Full {
        return Ok(None);
    }
    if mode == Resumption::Ticket {
        b.clear_options(SslOptions::NO_TICKET);
        // One ticket per connection: a client uses one per resumption. (BoringSSL sends
        // its fixed two.)
        #[cfg(not(feature = "boringssl"))]
        calls::set_num_tickets(b, 1)?;
    }
    match side {
        Side::Server => {
            if mode == Resumption::SessionId {
                b.set_session_cache_mode(SslSessionCacheMode::SERVER);
            }
            b.set_session_id_context(b"tlsmatrix")?;
            Ok(None)
        }
        Side::Client => {
            // With the client cache mode set, OpenSSL makes a ticket arriving after a TLS 1.3
            // handshake the connection's session, which the endpoint keeps when it ends.
            b.set_session_cache_mode(SslSessionCacheMode::CLIENT);
            let slot = SessionSlot::default();
            // BoringSSL (and AWS-LC, its fork) hands such sessions only to the new-session
            // callback.
            #[cfg(any(feature = "boringssl", feature = "aws-lc"))]
            {
                let keep = slot.clone();
                b.set_new_session_callback(move |_, session| {
                    *keep.lock().unwrap_or_else(|e| e.into_inner()) = Some(session);
                });
            }
            Ok(Some(slot))
        }
    }
}
