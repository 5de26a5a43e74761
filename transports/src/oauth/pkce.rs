//! PKCE (RFC 7636) with `S256`, and the `state` nonce: fresh random values for each
//! authorization request, never reused, never logged.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// A code verifier and its `S256` challenge.
pub struct Pkce {
    /// 32 random bytes, base64url: 43 characters (RFC 7636 §4.1 asks for 43–128).
    pub verifier: String,
    /// `BASE64URL(SHA256(verifier))` (RFC 7636 §4.2).
    pub challenge: String,
}

impl Pkce {
    /// A fresh pair (not `Default`: every call is a new secret).
    pub fn fresh() -> Self {
        let verifier = URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>());
        let challenge = challenge_of(&verifier);
        Pkce { verifier, challenge }
    }
}

/// The `S256` challenge of a verifier.
pub fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A fresh `state`: 16 random bytes, base64url.
pub fn state() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 16]>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifiers_are_fresh_well_formed_and_their_challenge_is_s256() {
        let (a, b) = (Pkce::fresh(), Pkce::fresh());
        assert_ne!(a.verifier, b.verifier);
        assert_eq!(a.verifier.len(), 43);
        assert!(a.verifier.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        // Computed apart: printf %s VERIFIER | openssl dgst -sha256 -binary | base64 | tr +/ -_ | tr -d =
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mJ0kz5FauWOVHoaYGlGHBO8K5i2sHo"),
            "c7vg9dpkn8SbdXMYnhzgjUNH3yAe_eAt3ZjgTQ-XF8Q"
        );
        assert_ne!(state(), state());
    }
}
