//! A simulated crash (on `SimFileIo`) keeps every write acknowledged with `waitForSync`, and
//! every catalog change (create, rename, drop, properties), and the catalog reopens cleanly,
//! whatever prefix of unsynced bytes survived.

use crate::common;

use std::collections::BTreeMap;

use common::{collection, open_sim, opts};
use quince_db::{PropertiesUpdate, WriteOptions};
use quince_storage::io::SimFileIo;
use serde_json::json;

#[test]
fn synced_writes_and_catalog_changes_survive_crashes() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..8u64 {
        let sim = SimFileIo::new();
        let synced = WriteOptions {
            wait_for_sync: true,
            ..opts()
        };
        let mut expected: BTreeMap<String, (String, i64)> = BTreeMap::new();
        let crashed = {
            let catalog = open_sim(dir.path(), &sim);
            let db = catalog.database("_system").unwrap();
            let c = collection(&catalog, "data");
            collection(&catalog, "doomed");
            db.drop_collection("doomed", false).unwrap();
            for i in 0..40i64 {
                let key = format!("k{}", i % 10);
                let out = c
                    .insert(
                        json!({"_key": key, "i": i}),
                        &WriteOptions {
                            overwrite_mode: quince_db::OverwriteMode::Replace,
                            ..synced.clone()
                        },
                    )
                    .unwrap();
                expected.insert(key, (out.rev, i));
            }
            let removed = c.remove("k3", None, &synced).unwrap();
            assert_eq!(removed.key, "k3");
            expected.remove("k3");
            // Unsynced writes may or may not survive; they must not break recovery.
            for i in 0..20 {
                c.insert(json!({"_key": format!("lazy{i}")}), &opts())
                    .unwrap();
            }
            db.rename_collection("data", "renamed").unwrap();
            c.update_properties(PropertiesUpdate {
                journal_size: Some(2 * 1024 * 1024),
                ..Default::default()
            })
            .unwrap();
            let crashed = sim.crash(seed, seed % 2 == 0);
            // The old catalog is dropped after the crash image was taken; what it writes
            // while closing never reaches the crashed file system.
            drop(catalog);
            crashed
        };

        let catalog = open_sim(dir.path(), &crashed);
        let db = catalog.database("_system").unwrap();
        let names: Vec<_> = db.collections().iter().map(|c| c.name()).collect();
        assert_eq!(names, ["renamed"], "seed {seed}");
        let c = db.collection("renamed").unwrap();
        assert_eq!(c.properties().journal_size, 2 * 1024 * 1024);
        for (key, (rev, i)) in &expected {
            let doc = c
                .read(key)
                .unwrap_or_else(|e| panic!("seed {seed}: {key} lost: {e}"));
            assert_eq!(&doc.rev, rev, "seed {seed} {key}");
            let value: serde_json::Value = serde_json::from_slice(&doc.json).unwrap();
            assert_eq!(value["i"], json!(i));
        }
        assert_eq!(c.read("k3").unwrap_err().num(), 1202, "seed {seed}");
        // Keys generated after the crash do not collide with stored ones, and new revisions
        // exceed the stored ones.
        let newest = expected
            .values()
            .map(|(rev, _)| rev.clone())
            .max_by_key(|r| quince_model::rev::RevisionId::decode(r).unwrap());
        let out = c.insert(json!({}), &opts()).unwrap();
        let fresh = quince_model::rev::RevisionId::decode(&out.rev).unwrap();
        assert!(fresh > quince_model::rev::RevisionId::decode(&newest.unwrap()).unwrap());
        catalog.shutdown().unwrap();
    }
}
