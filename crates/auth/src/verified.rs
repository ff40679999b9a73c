//! [`VerifiedCache`]: remembers which (user, password) pairs recently verified, so that HTTP
//! Basic, which sends the password with every request, costs microseconds instead of an
//! Argon2 hash per request.
//!
//! What it is: a bounded map from a keyed digest of (user, password) to the user's credential
//! generation at the time the password verified. The digest is HMAC-SHA256 under a random
//! key made at start-up and kept only in memory, so the map never holds a password, and a
//! memory dump of it does not allow an offline guess without the key.
//!
//! What it is not: a negative cache. Wrong passwords are hashed every time; that cost is the
//! point of a slow hash.
//!
//! Invariants: an entry counts only while the user's generation is unchanged, and every change
//! to an account (password, permissions, activity, deletion) draws a new random generation,
//! so a stale entry can never authenticate; the map holds at most [`VERIFIED_ENTRIES_MAX`]
//! entries (it is emptied when full).

use std::collections::HashMap;

use hmac::{Hmac, Mac};
use parking_lot::RwLock;
use rand::RngCore;
use sha2::Sha256;

/// The most (user, password) pairs remembered at once.
pub const VERIFIED_ENTRIES_MAX: usize = 16 * 1024;

/// The keyed digest of one (user, password) pair.
pub type Fingerprint = [u8; 32];

/// Recently verified credentials.
pub struct VerifiedCache {
    /// The HMAC key, random per process.
    key: [u8; 32],
    /// Digest → the user's generation when the password verified.
    entries: RwLock<HashMap<Fingerprint, u64>>,
}

impl Default for VerifiedCache {
    fn default() -> Self {
        let mut key = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut key);
        VerifiedCache {
            key,
            entries: RwLock::new(HashMap::new()),
        }
    }
}

impl VerifiedCache {
    /// The keyed digest of `user` and `password` (the user's name is length-prefixed, so no
    /// two pairs share an input).
    pub fn fingerprint(&self, user: &str, password: &str) -> Fingerprint {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(&(user.len() as u64).to_le_bytes());
        mac.update(user.as_bytes());
        mac.update(password.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// True when this pair verified while the user had `generation`.
    pub fn is_verified(&self, fingerprint: &Fingerprint, generation: u64) -> bool {
        self.entries.read().get(fingerprint) == Some(&generation)
    }

    /// Records that this pair verified while the user had `generation`.
    pub fn remember(&self, fingerprint: Fingerprint, generation: u64) {
        let mut entries = self.entries.write();
        if entries.len() >= VERIFIED_ENTRIES_MAX && !entries.contains_key(&fingerprint) {
            entries.clear();
        }
        entries.insert(fingerprint, generation);
    }

    /// How many pairs are remembered (for tests and metrics).
    pub fn len(&self) -> usize {
        self.entries.read().len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_count_only_for_the_same_pair_and_generation() {
        let cache = VerifiedCache::default();
        let a = cache.fingerprint("alice", "pw");
        assert_ne!(a, cache.fingerprint("alice", "pw2"));
        assert_ne!(a, cache.fingerprint("alicep", "w"));
        assert_ne!(a, VerifiedCache::default().fingerprint("alice", "pw"));
        assert!(!cache.is_verified(&a, 7));
        cache.remember(a, 7);
        assert!(cache.is_verified(&a, 7));
        assert!(
            !cache.is_verified(&a, 8),
            "a new generation voids the entry"
        );
        assert!(!cache.is_verified(&cache.fingerprint("bob", "pw"), 7));
    }

    #[test]
    fn the_cache_stays_bounded() {
        let cache = VerifiedCache::default();
        for i in 0..VERIFIED_ENTRIES_MAX + 10 {
            cache.remember(cache.fingerprint("u", &i.to_string()), 1);
        }
        assert!(cache.len() <= VERIFIED_ENTRIES_MAX);
        assert!(cache.is_verified(
            &cache.fingerprint("u", &(VERIFIED_ENTRIES_MAX + 9).to_string()),
            1
        ));
    }
}
