//! The [`CollectionOps`](quince_ops::CollectionOps) methods a DB server's shard collection
//! passes straight to its local collection (`self.local`): reads, properties, indexes and
//! `apply_replicated`.
//!
//! What it is not: the methods that replicate. `truncate`, `write` and `insert_texts` differ
//! between the served shard (`shard_engine.rs`) and the shard inside a transaction
//! (`transaction.rs`), and each type writes them itself.
//!
//! Invariant: a type that uses [`forward_to_local!`] has a field `local: Arc<dyn CollectionOps>`
//! and writes `truncate`, `write` and `insert_texts`; every other method of the trait comes
//! from here.

/// Expands, inside an `impl CollectionOps for T` block, to the methods that pass straight to
/// `self.local`.
macro_rules! forward_to_local {
    () => {
        fn name(&self) -> String {
            self.local.name()
        }

        fn id(&self) -> u64 {
            self.local.id()
        }

        fn kind(&self) -> quince_ops::CollectionType {
            self.local.kind()
        }

        fn wait_for_sync(&self) -> bool {
            self.local.wait_for_sync()
        }

        fn is_system(&self) -> bool {
            self.local.is_system()
        }

        fn properties(&self) -> quince_ops::CollectionProperties {
            self.local.properties()
        }

        fn update_properties(
            &self,
            update: quince_ops::PropertiesUpdate,
        ) -> quince_errors::Result<quince_ops::CollectionProperties> {
            self.local.update_properties(update)
        }

        fn count(&self) -> u64 {
            self.local.count()
        }

        fn figures(&self) -> quince_ops::FiguresReport {
            self.local.figures()
        }

        fn revision(&self) -> String {
            self.local.revision()
        }

        fn checksum(
            &self,
            with_revisions: bool,
            with_data: bool,
        ) -> quince_errors::Result<(String, String)> {
            self.local.checksum(with_revisions, with_data)
        }

        fn compact(&self) -> quince_errors::Result<()> {
            self.local.compact()
        }

        fn apply_replicated(
            &self,
            ops: &[quince_ops::ReplicatedOp],
            wait_for_sync: bool,
        ) -> quince_errors::Result<()> {
            self.local.apply_replicated(ops, wait_for_sync)
        }

        fn read(&self, key: &str) -> quince_errors::Result<quince_ops::StoredDocument> {
            self.local.read(key)
        }

        fn read_rev(&self, key: &str) -> quince_errors::Result<String> {
            self.local.read_rev(key)
        }

        fn read_many(
            &self,
            request: &quince_ops::ReadRequest,
            visit: &mut dyn FnMut(quince_errors::Result<quince_ops::StoredDocument>) -> bool,
        ) -> quince_errors::Result<()> {
            self.local.read_many(request, visit)
        }

        fn scan(
            &self,
            visit: &mut dyn FnMut(quince_ops::StoredDocument) -> bool,
        ) -> quince_errors::Result<()> {
            self.local.scan(visit)
        }

        fn indexes(&self) -> Vec<quince_ops::IndexDescription> {
            self.local.indexes()
        }

        fn create_index(
            &self,
            definition: &serde_json::Value,
        ) -> quince_errors::Result<(quince_ops::IndexDescription, bool)> {
            self.local.create_index(definition)
        }

        fn drop_index(
            &self,
            id_or_name: &str,
        ) -> quince_errors::Result<quince_ops::IndexDescription> {
            self.local.drop_index(id_or_name)
        }

        fn index_lookup(
            &self,
            index_id: u64,
            lookup: &quince_ops::IndexLookup,
            visit: &mut dyn FnMut(quince_ops::IndexHit<'_>) -> bool,
        ) -> quince_errors::Result<()> {
            self.local.index_lookup(index_id, lookup, visit)
        }
    };
}

pub(super) use forward_to_local;
