//! Access tokens (`/_api/token`, ArangoDB 3.12): long random secrets a user can present as a
//! Basic password instead of the account's password.
//!
//! What it is: making a token (`v1.` and 64 hex digits from the OS's random source), its
//! digest (SHA-256, hex) and its public fingerprint.
//!
//! What it is not: the list of a user's tokens (an [`crate::Account`] field) or the lookup
//! (`crate::Users`).
//!
//! Invariants: the token text is shown once, when made; only its digest is stored. A fast
//! digest is enough because a token carries 256 random bits: there is nothing to guess
//! offline, unlike a human-chosen password.

use rand::RngCore;
use sha2::{Digest, Sha256};

/// The prefix of every access token.
pub const TOKEN_PREFIX: &str = "v1.";

/// A new random token.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{TOKEN_PREFIX}{}", hex(&bytes))
}

/// True when `text` has the shape of an access token (so a password never costs a lookup).
pub fn looks_like_token(text: &str) -> bool {
    text.strip_prefix(TOKEN_PREFIX)
        .is_some_and(|rest| rest.len() == 64 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The stored digest of a token.
pub fn token_digest(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// The public fingerprint of a token, from its digest (it reveals nothing of the token).
pub fn token_fingerprint(digest: &str) -> String {
    format!("{TOKEN_PREFIX}{}", &digest[..16])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_well_formed_and_digested() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert!(looks_like_token(&a), "{a}");
        assert!(!looks_like_token("v1.short"));
        assert!(!looks_like_token("password"));
        let digest = token_digest(&a);
        assert_eq!(digest.len(), 64);
        assert_ne!(digest, token_digest(&b));
        assert!(!digest.contains(&a[3..]));
        let fingerprint = token_fingerprint(&digest);
        assert!(fingerprint.starts_with("v1.") && fingerprint.len() == 19);
    }
}
