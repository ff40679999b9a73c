//! [`DocumentHook`]: derived state kept beside a collection's documents (secondary indexes,
//! later), told about every change by the one write path.
//!
//! What it is: the three hooks the write path (`write_path.rs`) offers, and [`HookFactory`],
//! which gives each collection its hooks when it is created or opened:
//! - **check**, inside the write's decision: sees each change before its record is appended
//!   and may refuse it (a unique violation), so a refused write appends nothing. A change it
//!   accepts is pending for the hook until `applied` or `aborted` names it, so the checks of
//!   later items of the same request see it (two items claiming one unique value: the second
//!   is refused);
//! - **applied / aborted / truncated**, after the store's append: the change is now the
//!   collection's state, or (`aborted`) a change the hook accepted was not written after all
//!   (its append failed, or another hook refused it);
//! - **recovered**, the recovery hook: on open (and when a hook is added to a collection that
//!   has documents) every live document is handed over, so derived state is rebuilt or verified
//!   before the collection serves a request; **recovery_finished** follows the last one (one
//!   scan serves every hook added together).
//!
//! What it is not: an index. The secondary indexes (`crate::index`) are built on these hooks;
//! the [`HookFactory`] adds other derived state (tests use it).
//!
//! The relocation rule: a hook sees a document as (key, revision, stored bytes), never as a
//! place in a file. Compaction moves records between files but never changes a live document's
//! key, revision or bytes, so derived state keyed by key and revision stays true across every
//! compaction and needs no hook of its own.
//!
//! Locks (also in `docs/architecture.md`): every hook of a collection runs under that
//! collection's hook lock, which the write path holds for each run of a write call (up to
//! 1,024 items decided and appended together, from the first `check` to the last `applied`)
//! and `add_hook` holds while it replays the documents, so hooks never see two runs
//! interleaved; `check`
//! additionally runs under the store's writer lock (it is part of the decision); `applied`,
//! `aborted` and `truncated` run after the writer lock is released and before the write is
//! acknowledged; `recovered` runs with no store lock held.

use std::sync::Arc;

use quince_errors::Result;
use quince_model::rev::RevisionId;

use quince_ops::CollectionProperties;

/// One version of a document as hooks see it.
#[derive(Clone, Copy, Debug)]
pub struct Version<'a> {
    /// Its revision.
    pub rev: RevisionId,
    /// Its stored bytes: the JSON object text with `_key` and `_rev` first and without `_id`.
    pub document: &'a [u8],
}

/// One document's change: an insert (no `old`), a new version (both), or a removal (no `new`).
#[derive(Clone, Copy, Debug)]
pub struct Change<'a> {
    /// The document's key.
    pub key: &'a str,
    /// The version replaced or removed.
    pub old: Option<Version<'a>>,
    /// The version written.
    pub new: Option<Version<'a>>,
}

/// Derived state of one collection, maintained by the write path (see the module doc for when
/// each method runs and which locks are held).
pub trait DocumentHook: Send + Sync {
    /// A name for logs and errors.
    fn name(&self) -> &str;

    /// May refuse `change` before it is appended (its error becomes the item's error); an
    /// accepted change is pending until [`DocumentHook::applied`] or
    /// [`DocumentHook::aborted`] names it.
    fn check(&self, change: &Change<'_>) -> Result<()>;

    /// `change` was appended and is the collection's state now.
    fn applied(&self, change: &Change<'_>);

    /// `change` passed [`DocumentHook::check`] but was not written (its append failed, or a
    /// later hook refused it).
    fn aborted(&self, change: &Change<'_>);

    /// Every document was removed.
    fn truncated(&self);

    /// A live document, handed over on open or when the hook is added: rebuild or verify.
    fn recovered(&self, key: &str, version: Version<'_>) -> Result<()>;

    /// Every live document was handed over (after the last `recovered`, before the first
    /// `check`): a hook that collects during recovery builds its state now. An error refuses
    /// the hook (on create of an index: the index is not created; on open: the collection
    /// does not open).
    fn recovery_finished(&self) -> Result<()> {
        Ok(())
    }
}

/// Makes the hooks of a collection when it is created or opened (from its properties: the
/// index definitions will live there).
pub trait HookFactory: Send + Sync {
    /// The hooks of the collection `properties` of database `database`.
    fn hooks_for(
        &self,
        database: &str,
        properties: &CollectionProperties,
    ) -> Vec<Arc<dyn DocumentHook>>;
}

/// A change whose versions are owned, kept between a write's decision and its outcome.
pub(crate) struct OwnedChange {
    pub key: String,
    pub old: Option<(RevisionId, Vec<u8>)>,
    pub new: Option<(RevisionId, Vec<u8>)>,
}

impl OwnedChange {
    /// The borrowed view hooks take.
    pub fn view(&self) -> Change<'_> {
        Change {
            key: &self.key,
            old: self.old.as_ref().map(|(rev, document)| Version {
                rev: *rev,
                document,
            }),
            new: self.new.as_ref().map(|(rev, document)| Version {
                rev: *rev,
                document,
            }),
        }
    }
}
