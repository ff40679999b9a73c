//! The query parameters of `POST /_api/import`, parsed once into [`ImportOptions`].
//!
//! What it is: the rules of <https://docs.arangodb.com/3.12/develop/http-api/import/> for each parameter: `type`
//! (`documents`, `array`/`list`, `auto`, empty or absent for the header-line format, anything
//! else 400/400), `collection` (400/1204 when missing), `onDuplicate` (unknown values mean
//! `error`, as in ArangoDB), the `_from`/`_to` prefixes (a `/` appended when missing), and the
//! booleans.
//!
//! What it is not: the collection lookup (404/1203 is the handler's, after these checks).

use quince_errors::{ArangoError, Result};

use crate::request::ApiRequest;

/// How the body is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// JSON Lines: one object per line (`type=documents`).
    Documents,
    /// One JSON array of objects (`type=array` or `type=list`).
    Array,
    /// `Array` when the first non-whitespace byte is `[`, else `Documents` (`type=auto`).
    Auto,
    /// A first line with a JSON array of attribute names, then one JSON array of values per
    /// line (`type` empty or absent).
    HeaderLine,
}

/// What to do when a document's `_key` exists already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnDuplicate {
    /// Count an error (the default).
    Error,
    /// Merge the document into the existing one.
    Update,
    /// Replace the existing document.
    Replace,
    /// Keep the existing document and count the new one as ignored.
    Ignore,
}

/// Every parameter of an import.
#[derive(Clone, Debug)]
pub(crate) struct ImportOptions {
    /// The target collection's name (or id).
    pub collection: String,
    /// The body's layout.
    pub format: Format,
    /// `onDuplicate`.
    pub on_duplicate: OnDuplicate,
    /// `complete`: all or nothing.
    pub complete: bool,
    /// `details`: report one string per failed document.
    pub details: bool,
    /// `overwrite`: truncate the collection first.
    pub overwrite: bool,
    /// `waitForSync`.
    pub wait_for_sync: bool,
    /// `ignoreMissing`: header-line rows may have fewer or more values than names.
    pub ignore_missing: bool,
    /// `fromPrefix`, ending in `/` (empty: none).
    pub from_prefix: String,
    /// `toPrefix`, ending in `/` (empty: none).
    pub to_prefix: String,
    /// `overwriteCollectionPrefix`: replace a collection part already present in `_from`/`_to`.
    pub overwrite_collection_prefix: bool,
    /// `line`: the number of the line before the first value line (header-line format), so
    /// that positions in details count from it.
    pub line_offset: u64,
    /// `skipDocumentValidation`, granted to administrators only.
    pub skip_document_validation: bool,
}

impl ImportOptions {
    /// Reads the parameters of an import request.
    pub fn parse(req: &ApiRequest) -> Result<ImportOptions> {
        let collection = match req.param("collection") {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => {
                return Err(ArangoError::with_message(
                    quince_errors::ARANGO_COLLECTION_PARAMETER_MISSING,
                    "'collection' is missing, expecting /_api/import?collection=<identifier>",
                ))
            }
        };
        let format = match req.param("type").unwrap_or("") {
            "documents" => Format::Documents,
            "array" | "list" => Format::Array,
            "auto" => Format::Auto,
            "" => Format::HeaderLine,
            _ => {
                return Err(ArangoError::with_message(
                    quince_errors::HTTP_BAD_PARAMETER,
                    "invalid value for 'type'",
                ))
            }
        };
        let on_duplicate = match req.param("onDuplicate") {
            Some("update") => OnDuplicate::Update,
            Some("replace") => OnDuplicate::Replace,
            Some("ignore") => OnDuplicate::Ignore,
            _ => OnDuplicate::Error,
        };
        Ok(ImportOptions {
            collection,
            format,
            on_duplicate,
            complete: req.bool_param("complete", false),
            details: req.bool_param("details", false),
            overwrite: req.bool_param("overwrite", false),
            wait_for_sync: req.bool_param("waitForSync", false),
            ignore_missing: req.bool_param("ignoreMissing", false),
            from_prefix: prefix(req.param("fromPrefix")),
            to_prefix: prefix(req.param("toPrefix")),
            overwrite_collection_prefix: req.bool_param("overwriteCollectionPrefix", false),
            line_offset: req
                .param("line")
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0),
            skip_document_validation: crate::document::params::skip_document_validation(req),
        })
    }
}

/// A collection prefix for `_from`/`_to`, with the `/` it needs.
fn prefix(value: Option<&str>) -> String {
    match value {
        None | Some("") => String::new(),
        Some(p) if p.ends_with('/') => p.to_owned(),
        Some(p) => format!("{p}/"),
    }
}

#[cfg(test)]
mod tests {
    use super::prefix;

    #[test]
    fn prefixes_end_with_a_slash() {
        assert_eq!(prefix(None), "");
        assert_eq!(prefix(Some("")), "");
        assert_eq!(prefix(Some("v")), "v/");
        assert_eq!(prefix(Some("v/")), "v/");
    }
}
