//! [`Checksum`]: the order-independent checksum of a collection's documents.
//!
//! What it is: the XOR of one 64-bit FNV-1a hash per document, over its key and, as asked, its
//! revision and its data (the stored bytes after `_key` and `_rev`). XOR makes the result
//! independent of the order documents are visited in, which the engine does not fix.
//!
//! What it is not: a cryptographic digest, nor ArangoDB's exact numbers (clients only compare
//! checksums of one server over time, and parse them as integers).
//!
//! Invariants: the same documents give the same checksum on every run and after every restart
//! (FNV-1a has no random seed, unlike the standard library's hasher); no documents give 0.

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Accumulates the checksum of a set of documents.
#[derive(Debug, Default)]
pub struct Checksum {
    value: u64,
}

impl Checksum {
    /// Adds one document.
    pub fn add(&mut self, key: &[u8], rev: Option<u64>, data: Option<&[u8]>) {
        let mut hash = fnv1a(FNV_OFFSET, key);
        // Separators keep ("ab", data "c") apart from ("a", data "bc").
        hash = fnv1a(hash, &[0]);
        if let Some(rev) = rev {
            hash = fnv1a(hash, &rev.to_le_bytes());
        }
        hash = fnv1a(hash, &[0]);
        if let Some(data) = data {
            hash = fnv1a(hash, data);
        }
        self.value ^= hash;
    }

    /// The checksum so far.
    pub fn value(&self) -> u64 {
        self.value
    }
}

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checksum(docs: &[(&str, u64, &str)], revs: bool, data: bool) -> u64 {
        let mut sum = Checksum::default();
        for (key, rev, body) in docs {
            sum.add(
                key.as_bytes(),
                revs.then_some(*rev),
                data.then_some(body.as_bytes()),
            );
        }
        sum.value()
    }

    #[test]
    fn order_does_not_matter_and_flags_do() {
        let a = [("a", 1, "{}"), ("b", 2, "x")];
        let b = [("b", 2, "x"), ("a", 1, "{}")];
        assert_eq!(checksum(&a, true, true), checksum(&b, true, true));
        assert_eq!(checksum(&[], true, true), 0);
        let other_rev = [("a", 3, "{}"), ("b", 2, "x")];
        assert_eq!(
            checksum(&a, false, false),
            checksum(&other_rev, false, false)
        );
        assert_ne!(checksum(&a, true, false), checksum(&other_rev, true, false));
        let other_data = [("a", 1, "{}"), ("b", 2, "y")];
        assert_eq!(
            checksum(&a, true, false),
            checksum(&other_data, true, false)
        );
        assert_ne!(
            checksum(&a, false, true),
            checksum(&other_data, false, true)
        );
    }

    #[test]
    fn known_value_is_stable() {
        // Pinned so a change of the hash (which would change checksums across an upgrade)
        // is noticed.
        assert_eq!(
            checksum(&[("a", 1, "{}")], false, false),
            fnv1a(fnv1a(fnv1a(FNV_OFFSET, b"a"), &[0]), &[0])
        );
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
