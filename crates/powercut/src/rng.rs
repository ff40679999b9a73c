//! [`SplitMix64`]: the small deterministic generator every power cut draws from.
//!
//! What it is: Steele, Lea and Flood's SplitMix64, the same generator `SimFileIo` uses, so a
//! `cut <seed>` on the same state always produces the same reboot image.
//!
//! What it is not: a cryptographic or statistically strong generator; it only has to spread
//! the choices of a test evenly.
//!
//! Invariants: the sequence depends on the seed only; [`SplitMix64::below`] never returns a
//! value at or above its bound.

/// A seeded generator.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..bound` (`bound` must be positive).
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0, "below(0) has no value to return");
        self.next_u64() % bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = SplitMix64::new(42);
        let mut b = SplitMix64::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut c = SplitMix64::new(43);
        assert_ne!(SplitMix64::new(42).next_u64(), c.next_u64());
    }

    #[test]
    fn below_stays_below() {
        let mut rng = SplitMix64::new(7);
        for bound in 1..200 {
            assert!(rng.below(bound) < bound);
        }
    }
}
