//! Revisions (`_rev`): [`RevisionId`], its text form, and the hybrid logical clock [`Hlc`].
//!
//! What it is: a revision is a `u64` whose high 44 bits are milliseconds since the Unix epoch
//! and whose low 20 bits are a logical counter that advances when the wall clock does not.
//! Its text form is big-endian base-64 digits over ArangoDB's alphabet with leading zero
//! digits dropped (11 characters today, e.g. `_gjDBOTu---`).
//!
//! What it is not: a wall clock. Revisions only need to be unique and increasing per server;
//! clients treat them as opaque strings.
//!
//! Invariants: [`Hlc::next`] never returns a value it returned before nor one at or below a
//! value passed to [`Hlc::observe`], even when the wall clock steps backwards; `decode(encode(r))
//! == r` for every non-zero revision.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The digits of the text form, in value order.
const ALPHABET: &[u8; 64] = b"-_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// The longest text form: 11 digits of 6 bits cover 64 bits.
pub const REV_TEXT_BYTES_MAX: usize = 11;

/// Bits of the logical counter below the milliseconds.
const COUNTER_BITS: u32 = 20;

/// One revision of one document (or of a collection: its highest document revision).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RevisionId(pub u64);

impl RevisionId {
    /// The text form (`_rev`). Zero, which no write ever gets, encodes as the empty string.
    pub fn encode(self) -> String {
        let mut digits = [0u8; REV_TEXT_BYTES_MAX];
        let mut value = self.0;
        let mut start = REV_TEXT_BYTES_MAX;
        while value != 0 {
            start -= 1;
            digits[start] = ALPHABET[(value & 63) as usize];
            value >>= 6;
        }
        // Every byte comes from the ASCII alphabet.
        String::from_utf8(digits[start..].to_vec()).expect("alphabet is ASCII")
    }

    /// Parses a text form; `None` when it is empty, too long, holds a foreign character or
    /// does not fit in 64 bits. Callers treat `None` as a revision no document has.
    pub fn decode(text: &str) -> Option<RevisionId> {
        if text.is_empty() || text.len() > REV_TEXT_BYTES_MAX {
            return None;
        }
        let mut value: u64 = 0;
        for b in text.bytes() {
            let digit = digit_value(b)?;
            if value >> 58 != 0 {
                return None;
            }
            value = (value << 6) | u64::from(digit);
        }
        Some(RevisionId(value))
    }

    /// The wall-clock milliseconds this revision was taken at.
    pub fn timestamp_ms(self) -> u64 {
        self.0 >> COUNTER_BITS
    }
}

/// The value of one digit of the text form.
fn digit_value(b: u8) -> Option<u8> {
    match b {
        b'-' => Some(0),
        b'_' => Some(1),
        b'A'..=b'Z' => Some(b - b'A' + 2),
        b'a'..=b'z' => Some(b - b'a' + 28),
        b'0'..=b'9' => Some(b - b'0' + 54),
        _ => None,
    }
}

/// The server's hybrid logical clock: one per server, shared by every collection.
#[derive(Debug, Default)]
pub struct Hlc {
    /// The last value handed out or observed.
    last: AtomicU64,
}

impl Hlc {
    /// A clock that has seen nothing yet.
    pub fn new() -> Hlc {
        Hlc::default()
    }

    /// A fresh revision, greater than every earlier one of this clock.
    pub fn next(&self) -> RevisionId {
        let physical = physical_now_ms() << COUNTER_BITS;
        let mut last = self.last.load(Ordering::Acquire);
        loop {
            // When the wall clock has not moved past the last value (same millisecond, or it
            // stepped backwards), the logical counter carries on from the last value.
            let next = physical.max(last + 1);
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return RevisionId(next),
                Err(current) => last = current,
            }
        }
    }

    /// Makes later revisions exceed `rev` (a stored revision found at startup).
    pub fn observe(&self, rev: RevisionId) {
        self.last.fetch_max(rev.0, Ordering::AcqRel);
    }

    /// The last value handed out or observed.
    pub fn last(&self) -> RevisionId {
        RevisionId(self.last.load(Ordering::Acquire))
    }
}

fn physical_now_ms() -> u64 {
    // A clock before 1970 is a broken host; revisions then rely on the logical counter alone.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;
    use std::sync::Arc;

    #[test]
    fn todays_revisions_have_eleven_digits() {
        let rev = Hlc::new().next();
        let text = rev.encode();
        assert_eq!(text.len(), 11, "{text}");
        assert_eq!(RevisionId::decode(&text), Some(rev));
        assert!(rev.timestamp_ms() > 1_600_000_000_000);
    }

    #[test]
    fn known_encodings() {
        assert_eq!(RevisionId(1).encode(), "_");
        assert_eq!(RevisionId(64).encode(), "_-");
        assert_eq!(RevisionId(63).encode(), "9");
        assert_eq!(RevisionId(u64::MAX).encode(), "N9999999999");
        assert_eq!(
            RevisionId::decode("N9999999999"),
            Some(RevisionId(u64::MAX))
        );
    }

    #[test]
    fn rejects_bad_text() {
        let good = Hlc::new().next().encode();
        for bad in [
            String::new(),
            format!("{good}0"),
            "abc?".into(),
            "Z99999999999".into(),
        ] {
            assert_eq!(RevisionId::decode(&bad), None, "{bad}");
        }
        // 11 digits whose first digit needs more than 4 bits overflow 64 bits.
        assert_eq!(RevisionId::decode("O----------"), None);
    }

    #[test]
    fn the_clock_never_repeats_across_threads() {
        let hlc = Arc::new(Hlc::new());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let hlc = Arc::clone(&hlc);
                std::thread::spawn(move || (0..10_000).map(|_| hlc.next()).collect::<Vec<_>>())
            })
            .collect();
        let mut seen = HashSet::new();
        for t in threads {
            let revs = t.join().unwrap();
            assert!(revs.windows(2).all(|w| w[0] < w[1]));
            for r in revs {
                assert!(seen.insert(r));
            }
        }
    }

    #[test]
    fn observed_revisions_from_the_future_are_exceeded() {
        let hlc = Hlc::new();
        let future = RevisionId((physical_now_ms() + 3_600_000) << COUNTER_BITS);
        hlc.observe(future);
        assert!(hlc.next() > future);
        // Observing an older value never moves the clock back.
        hlc.observe(RevisionId(5));
        assert!(hlc.next() > future);
    }

    proptest! {
        #[test]
        fn encode_decode_round_trip(v in 1u64..) {
            let text = RevisionId(v).encode();
            prop_assert!(text.len() <= REV_TEXT_BYTES_MAX);
            prop_assert_eq!(RevisionId::decode(&text), Some(RevisionId(v)));
        }

    }
}
