//! The options of a document request, read from its query string and revision headers.
//!
//! What it is: [`write_options`] (the [`WriteOptions`] the db layer takes, from the parameters of
//! <https://docs.arangodb.com/3.12/develop/http-api/documents/>), [`silent`], and the `If-Match` / `If-None-Match`
//! values with their ETag quotes stripped.
//!
//! What it is not: validation of the values against documents; the db layer decides what a
//! precondition or an overwrite mode means for a stored document.
//!
//! Invariants: unknown parameters and unknown `overwriteMode` values are ignored, as ArangoDB
//! ignores them; booleans are parsed with ArangoDB's rules ([`ApiRequest::bool_param`]).

pub(crate) use quince_ops::WriteKind;
use quince_ops::{OverwriteMode, WriteOptions};

use crate::request::ApiRequest;

/// The write options of a request. `single` says whether the request names one document in its
/// path: only then does an `If-Match` header act as a revision precondition.
pub(crate) fn write_options(req: &ApiRequest, kind: WriteKind, single: bool) -> WriteOptions {
    let defaults = WriteOptions::default();
    let mut options = WriteOptions {
        wait_for_sync: req.bool_param("waitForSync", false),
        return_new: req.bool_param("returnNew", false),
        return_old: req.bool_param("returnOld", false),
        overwrite_mode: OverwriteMode::Conflict,
        keep_null: req.bool_param("keepNull", defaults.keep_null),
        merge_objects: req.bool_param("mergeObjects", defaults.merge_objects),
        ignore_revs: req.bool_param("ignoreRevs", defaults.ignore_revs),
        if_match: None,
        version_attribute: req
            .param("versionAttribute")
            .filter(|name| !name.is_empty())
            .map(str::to_owned),
        skip_document_validation: skip_document_validation(req),
    };
    if kind == WriteKind::Insert {
        options.overwrite_mode = overwrite_mode(req);
    }
    if single && kind != WriteKind::Insert {
        // An If-Match header turns the revision check on and names the expected revision.
        if let Some(rev) = if_match(req) {
            options.ignore_revs = false;
            options.if_match = Some(rev);
        }
    }
    options
}

/// `skipDocumentValidation`: asked for and granted. Only an administrator may write past a
/// collection's schema; anybody else's request is validated as if the parameter were absent.
pub(crate) fn skip_document_validation(req: &ApiRequest) -> bool {
    req.bool_param("skipDocumentValidation", false) && req.user.is_admin()
}

/// `overwriteMode`, or the legacy `overwrite=true` (replace) when no known mode is given.
fn overwrite_mode(req: &ApiRequest) -> OverwriteMode {
    let named = req.param("overwriteMode").and_then(|mode| {
        let mode = mode.trim();
        [
            ("ignore", OverwriteMode::Ignore),
            ("replace", OverwriteMode::Replace),
            ("update", OverwriteMode::Update),
            ("conflict", OverwriteMode::Conflict),
        ]
        .into_iter()
        .find(|(name, _)| mode.eq_ignore_ascii_case(name))
        .map(|(_, m)| m)
    });
    match named {
        Some(mode) => mode,
        None if req.bool_param("overwrite", false) => OverwriteMode::Replace,
        None => OverwriteMode::Conflict,
    }
}

/// `silent`: a successful write answers without its document's meta.
pub(crate) fn silent(req: &ApiRequest) -> bool {
    req.bool_param("silent", false)
}

/// The revision named by `If-Match`, quotes stripped; None when absent or empty.
pub(crate) fn if_match(req: &ApiRequest) -> Option<String> {
    revision_header(req, "if-match")
}

/// The revision named by `If-None-Match`, quotes stripped; None when absent or empty.
pub(crate) fn if_none_match(req: &ApiRequest) -> Option<String> {
    revision_header(req, "if-none-match")
}

fn revision_header(req: &ApiRequest, name: &str) -> Option<String> {
    let value = strip_quotes(req.header(name)?);
    (!value.is_empty()).then(|| value.to_owned())
}

/// Revisions arrive quoted ETag-style (`"_gjD…"`, from curl and browsers) or bare (from the
/// drivers); both mean the same revision.
pub(crate) fn strip_quotes(value: &str) -> &str {
    let value = value.trim();
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::strip_quotes;

    #[test]
    fn quotes_are_stripped_only_in_pairs() {
        assert_eq!(strip_quotes("\"_abc---\""), "_abc---");
        assert_eq!(strip_quotes(" _abc--- "), "_abc---");
        assert_eq!(strip_quotes("\"_abc"), "\"_abc");
        assert_eq!(strip_quotes("\"\""), "");
    }
}
