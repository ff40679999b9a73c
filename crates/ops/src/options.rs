//! Options of the document operations and what they return.

use serde_json::Value;

/// `overwriteMode` of an insert whose key exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverwriteMode {
    /// Fail with 1210 (the default).
    Conflict,
    /// Succeed without writing; report the existing document's meta.
    Ignore,
    /// Replace the existing document.
    Replace,
    /// Merge into the existing document (update rules).
    Update,
}

/// The options of one write, as parsed from the query string and headers by the api layer.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// The request asked for `waitForSync`; the effective value is this OR the collection's.
    pub wait_for_sync: bool,
    /// Return the new version in [`WriteOutcome::new`].
    pub return_new: bool,
    /// Return the old version in [`WriteOutcome::old`].
    pub return_old: bool,
    /// Insert only: what to do when the key exists.
    pub overwrite_mode: OverwriteMode,
    /// Update rules: false removes attributes whose patch value is null.
    pub keep_null: bool,
    /// Update rules: false replaces object values instead of merging them.
    pub merge_objects: bool,
    /// False makes a `_rev` in the body (or selector) a precondition.
    pub ignore_revs: bool,
    /// A precondition from `If-Match` (quotes already stripped); always checked when present.
    pub if_match: Option<String>,
    /// 3.12 external versioning attribute.
    pub version_attribute: Option<String>,
    /// `skipDocumentValidation`: the collection's schema is not consulted (computed values
    /// still are). The api grants it to administrators only.
    pub skip_document_validation: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            wait_for_sync: false,
            return_new: false,
            return_old: false,
            overwrite_mode: OverwriteMode::Conflict,
            keep_null: true,
            merge_objects: true,
            ignore_revs: true,
            if_match: None,
            version_attribute: None,
            skip_document_validation: false,
        }
    }
}

/// What a successful write reports.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteOutcome {
    /// `_id`: `<collection name>/<key>`.
    pub id: String,
    /// `_key`.
    pub key: String,
    /// `_rev` of the version now current (for a removal: of the removed version).
    pub rev: String,
    /// `_oldRev` when a version was replaced (always set by replace and update).
    pub old_rev: Option<String>,
    /// The new version, when asked for and one was written.
    pub new: Option<Value>,
    /// The old version, when asked for and one existed.
    pub old: Option<Value>,
    /// True when the write was fsynced before returning (effective `waitForSync`): the api
    /// answers 201 (200 for removals) instead of 202.
    pub synced: bool,
}
