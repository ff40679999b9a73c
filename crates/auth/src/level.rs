//! [`Level`]: an access level (`none`, `ro`, `rw`), as ArangoDB names them.
//!
//! Invariants: levels are ordered `None < ReadOnly < ReadWrite`, so "at least read" is a
//! comparison; only the three names parse.

/// An access level on a database or a collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// No access: the object cannot even be seen.
    None,
    /// Read only.
    ReadOnly,
    /// Read and write.
    ReadWrite,
}

impl Level {
    /// The level of a grant's text (`rw`, `ro`, `none`), if it is one.
    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "rw" => Some(Level::ReadWrite),
            "ro" => Some(Level::ReadOnly),
            "none" => Some(Level::None),
            _ => None,
        }
    }

    /// ArangoDB's name of the level.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::ReadWrite => "rw",
            Level::ReadOnly => "ro",
            Level::None => "none",
        }
    }

    /// True for `ro` and `rw`.
    pub fn can_read(self) -> bool {
        self >= Level::ReadOnly
    }

    /// True for `rw`.
    pub fn can_write(self) -> bool {
        self == Level::ReadWrite
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order_is_by_power() {
        for level in [Level::None, Level::ReadOnly, Level::ReadWrite] {
            assert_eq!(Level::parse(level.as_str()), Some(level));
        }
        assert_eq!(Level::parse("RW"), None);
        assert_eq!(Level::parse("undefined"), None);
        assert!(Level::None < Level::ReadOnly && Level::ReadOnly < Level::ReadWrite);
        assert!(!Level::None.can_read() && Level::ReadOnly.can_read());
        assert!(!Level::ReadOnly.can_write() && Level::ReadWrite.can_write());
    }
}
