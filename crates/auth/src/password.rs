//! Password hashes: Argon2id with a random salt per hash, in the PHC string format.
//!
//! What it is: [`hash_password`] and [`verify_password`]. A hash costs tens of milliseconds
//! and about 19 MiB of memory on purpose (the crate's default parameters, which follow
//! OWASP's recommendation), so callers run it off the async workers and cache successful
//! verifications (see [`crate::verified`]).
//!
//! What it is not: storage or comparison of anything but passwords. Access tokens are long
//! random strings and are stored as plain SHA-256 digests.
//!
//! Invariants: a password is never stored or logged, only its hash; the comparison inside
//! the argon2 crate is constant-time; a hash that does not parse verifies nothing.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

/// The longest password accepted, in bytes: hashing cost grows with length, and no human or
/// tool needs more.
pub const PASSWORD_BYTES_MAX: usize = 4096;

/// The PHC string of a fresh Argon2id hash of `password` with a random salt.
pub fn hash_password(password: &str) -> String {
    assert!(
        password.len() <= PASSWORD_BYTES_MAX,
        "callers bound passwords before hashing"
    );
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .expect("Argon2id with default parameters hashes any bounded password")
        .to_string()
}

/// True when `password` matches the PHC string `hash`.
pub fn verify_password(password: &str, hash: &str) -> bool {
    if password.len() > PASSWORD_BYTES_MAX {
        return false;
    }
    let Ok(parsed) = PasswordHash::new(hash) else {
        return false;
    };
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_salted_argon2id_and_verify_only_the_password() {
        let a = hash_password("secret");
        let b = hash_password("secret");
        assert!(a.starts_with("$argon2id$"), "{a}");
        assert_ne!(a, b, "each hash has its own salt");
        assert!(!a.contains("secret"));
        assert!(verify_password("secret", &a));
        assert!(verify_password("secret", &b));
        assert!(!verify_password("Secret", &a));
        assert!(!verify_password("", &a));
        assert!(!verify_password("secret", "not a hash"));
        let empty = hash_password("");
        assert!(verify_password("", &empty));
        assert!(!verify_password(" ", &empty));
        assert!(!verify_password(&"x".repeat(PASSWORD_BYTES_MAX + 1), &a));
    }
}
