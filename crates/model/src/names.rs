//! Names of databases and collections: ArangoDB 3.12's *extended* naming rules.
//!
//! What it is: validation of a proposed name, answering 1208 (collection) or 1229 (database).
//! Extended names allow most UTF-8 text: emoji, spaces inside the name, non-Latin scripts.
//!
//! What it is not: normalisation. ArangoDB wants names in Unicode NFC; without a normalisation
//! table we accept names as sent, so two spellings of one accented name are two names.
//!
//! Invariants: a name that passes is non-empty, within its byte bound, holds no `/`, `:` or
//! control character, has no leading or trailing space, and does not start with `.` or a digit.
//! A leading `_` marks a system collection; for databases only `_system` may start with `_`.

use quince_errors::{ArangoError, Result, ARANGO_DATABASE_NAME_INVALID, ARANGO_ILLEGAL_NAME};

/// The longest collection name, in bytes.
pub const COLLECTION_NAME_BYTES_MAX: usize = 256;

/// The longest database name, in bytes.
pub const DATABASE_NAME_BYTES_MAX: usize = 128;

/// The name of the database that always exists.
pub const SYSTEM_DATABASE: &str = "_system";

/// True for names of system collections (and of the system database).
pub fn is_system_name(name: &str) -> bool {
    name.starts_with('_')
}

/// Checks a collection name. A leading `_` (a system collection) is legal only when
/// `allow_system` is set, as it is for `isSystem: true` requests and for the collection part of
/// a document handle (an edge may point into a system collection).
pub fn validate_collection_name(name: &str, allow_system: bool) -> Result<()> {
    if extended_name_ok(name, COLLECTION_NAME_BYTES_MAX, allow_system) {
        Ok(())
    } else {
        Err(ArangoError::new(ARANGO_ILLEGAL_NAME))
    }
}

/// Checks a database name. `_system` is the only legal name starting with `_`.
pub fn validate_database_name(name: &str) -> Result<()> {
    if name == SYSTEM_DATABASE || extended_name_ok(name, DATABASE_NAME_BYTES_MAX, false) {
        Ok(())
    } else {
        Err(ArangoError::new(ARANGO_DATABASE_NAME_INVALID))
    }
}

/// The rules shared by collection and database names.
fn extended_name_ok(name: &str, bytes_max: usize, allow_underscore_first: bool) -> bool {
    let Some(first) = name.chars().next() else {
        return false;
    };
    if name.len() > bytes_max {
        return false;
    }
    if first == '.' || first.is_ascii_digit() || (first == '_' && !allow_underscore_first) {
        return false;
    }
    if name.starts_with(' ') || name.ends_with(' ') {
        return false;
    }
    // `/` separates the collection from the key in a document handle, and `:` is reserved
    // for cluster-internal names; control characters would break logs and file formats.
    !name.chars().any(|c| c == '/' || c == ':' || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn accepts_traditional_and_extended_collection_names() {
        for name in [
            "users",
            "a-b_c",
            "Ünïcödé",
            "with space",
            "😀 party",
            "مرحبا",
            "x.y",
        ] {
            assert!(validate_collection_name(name, false).is_ok(), "{name}");
        }
        assert!(validate_collection_name(&"a".repeat(256), false).is_ok());
    }

    #[test]
    fn rejects_illegal_collection_names() {
        for name in [
            "",
            "a/b",
            "a:b",
            ".hidden",
            "1abc",
            " lead",
            "trail ",
            "tab\tin",
            "nl\n",
            "_system_only",
        ] {
            let err = validate_collection_name(name, false).unwrap_err();
            assert_eq!(err.num(), 1208, "{name:?}");
            assert_eq!(err.status, 400);
        }
        assert!(validate_collection_name(&"a".repeat(257), false).is_err());
    }

    #[test]
    fn system_collections_need_the_flag() {
        assert!(validate_collection_name("_graphs", true).is_ok());
        assert!(validate_collection_name("_graphs", false).is_err());
        assert!(is_system_name("_graphs"));
        assert!(!is_system_name("graphs"));
    }

    #[test]
    fn database_names() {
        for name in ["_system", "db1", "my db", "Ärger", "a-b"] {
            assert!(validate_database_name(name).is_ok(), "{name}");
        }
        for name in [
            "",
            "_other",
            "1db",
            ".db",
            "a/b",
            "a:b",
            " x",
            &"d".repeat(129),
        ] {
            let err = validate_database_name(name).unwrap_err();
            assert_eq!(err.num(), 1229, "{name:?}");
        }
        assert!(validate_database_name(&"d".repeat(128)).is_ok());
    }

    proptest! {
        #[test]
        fn any_name_with_a_slash_is_rejected(a in "[a-z]{1,10}", b in "[a-z]{0,10}") {
            let name = format!("{a}/{b}");
            prop_assert!(validate_collection_name(&name, true).is_err());
            prop_assert!(validate_database_name(&name).is_err());
        }

        #[test]
        fn traditional_names_are_accepted(name in "[A-Za-z][A-Za-z0-9_-]{0,60}") {
            prop_assert!(validate_collection_name(&name, false).is_ok());
            prop_assert!(validate_database_name(&name).is_ok());
        }
    }
}
