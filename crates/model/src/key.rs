//! Document keys (`_key`) and document handles (`_id`, `<collection>/<key>`).
//!
//! What it is: the syntax of a key (1221 when illegal) and the split of a handle into its
//! collection name and key (1205 when malformed).
//!
//! What it is not: existence. Whether a key is present in a collection is the database layer's
//! business; ArangoDB answers 404/1202 for a key it cannot find even when the key is illegal.
//!
//! Invariants: a legal key is 1 to [`KEY_BYTES_MAX`] bytes of ASCII letters, digits and
//! `_ - . @ ( ) + , = ; $ ! * ' % :`. None of these needs escaping in JSON, so a key's JSON
//! string is the key between two quotes (the document encoding relies on this).

use quince_errors::{ArangoError, Result, ARANGO_DOCUMENT_HANDLE_BAD, ARANGO_DOCUMENT_KEY_BAD};

use crate::names::validate_collection_name;

/// The longest key, in bytes.
pub const KEY_BYTES_MAX: usize = 254;

/// True for a byte that may appear in a key.
fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'_' | b'-'
                | b'.'
                | b'@'
                | b'('
                | b')'
                | b'+'
                | b','
                | b'='
                | b';'
                | b'$'
                | b'!'
                | b'*'
                | b'\''
                | b'%'
                | b':'
        )
}

/// True when `key` is a legal `_key`.
pub fn is_valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= KEY_BYTES_MAX && key.bytes().all(is_key_byte)
}

/// Checks a `_key`: 400/1221 when illegal.
pub fn validate_key(key: &str) -> Result<()> {
    if is_valid_key(key) {
        Ok(())
    } else {
        Err(ArangoError::new(ARANGO_DOCUMENT_KEY_BAD))
    }
}

/// A document handle split into its parts, borrowed from the handle text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DocumentHandle<'a> {
    /// The collection's name.
    pub collection: &'a str,
    /// The document's key.
    pub key: &'a str,
}

/// Splits `<collection>/<key>` and checks both parts: 400/1205 when malformed.
pub fn parse_handle(handle: &str) -> Result<DocumentHandle<'_>> {
    let bad = || ArangoError::new(ARANGO_DOCUMENT_HANDLE_BAD);
    let (collection, key) = handle.split_once('/').ok_or_else(bad)?;
    // The handle may name a system collection (an edge may point into `_users`).
    validate_collection_name(collection, true).map_err(|_| bad())?;
    if !is_valid_key(key) {
        return Err(bad());
    }
    Ok(DocumentHandle { collection, key })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn legal_keys() {
        for key in [
            "a",
            "A1",
            "_under",
            "x-y.z@w",
            "(a)+b,c=d;e$f!g*h'i%j:k",
            "123",
        ] {
            assert!(validate_key(key).is_ok(), "{key}");
        }
        assert!(validate_key(&"k".repeat(254)).is_ok());
    }

    #[test]
    fn illegal_keys_answer_1221() {
        for key in [
            "", "a b", "a/b", "ä", "a\"b", "a\\b", "tab\t", "#hash", "a?b", "a&b",
        ] {
            let err = validate_key(key).unwrap_err();
            assert_eq!(err.num(), 1221, "{key:?}");
            assert_eq!(err.status, 400);
        }
        assert!(validate_key(&"k".repeat(255)).is_err());
    }

    #[test]
    fn handles() {
        let h = parse_handle("users/abc").unwrap();
        assert_eq!((h.collection, h.key), ("users", "abc"));
        assert_eq!(parse_handle("_users/x").unwrap().collection, "_users");
        for bad in [
            "",
            "users",
            "/abc",
            "users/",
            "users/a b",
            "1x/abc",
            "a/b/c",
        ] {
            assert_eq!(parse_handle(bad).unwrap_err().num(), 1205, "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn keys_from_the_alphabet_are_valid(key in "[A-Za-z0-9_.@()+,=;$!*'%:-]{1,254}") {
            prop_assert!(is_valid_key(&key));
            // The JSON string of a legal key is the key in quotes: nothing is escaped.
            prop_assert_eq!(serde_json::to_string(&key).unwrap(), format!("\"{key}\""));
        }

        #[test]
        fn handles_round_trip(coll in "[a-z][a-z0-9_]{0,20}", key in "[A-Za-z0-9_-]{1,30}") {
            let handle = format!("{coll}/{key}");
            let h = parse_handle(&handle).unwrap();
            prop_assert_eq!(h.collection, coll.as_str());
            prop_assert_eq!(h.key, key.as_str());
        }
    }
}
