//! A store's image (`quince_storage::backup`), written while the store's upkeep is paused and
//! writers go on, opens as exactly the store at the instant it was taken: sealed datafiles
//! (hard-linked, with their hints) and journals (prefixes copied). Whatever the live store does
//! afterwards (more writes, seals, compaction deleting the files the image links, a truncate)
//! changes no byte of the image, and a store opened from the image takes writes and reopens.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{contents, options, put, remove};
use quince_storage::backup::{image_together, ImagedFile};
use quince_storage::io::OsFileIo;
use quince_storage::Store;

const JOURNAL: u64 = 64 * 1024;

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

fn open(dir: &std::path::Path) -> Store {
    Store::open(Arc::new(OsFileIo::new()), dir, options(JOURNAL)).unwrap()
}

#[test]
fn an_image_written_while_paused_survives_compaction_and_later_writes() {
    let root = tempfile::tempdir().unwrap();
    let live_dir = root.path().join("live");
    let store = Store::create(Arc::new(OsFileIo::new()), &live_dir, options(JOURNAL)).unwrap();
    let value = vec![9u8; 3000];
    let mut rev = 0;
    for round in 0..5 {
        for k in 0..60u32 {
            rev += 1;
            put(&store, format!("k{k}").as_bytes(), rev, &value, round == 4).unwrap();
        }
        store.maintain().unwrap();
    }
    for k in 50..60u32 {
        rev += 1;
        remove(&store, format!("k{k}").as_bytes(), rev, false).unwrap();
    }
    let expected = contents(&store);
    let copy_dir = root.path().join("copy");
    let written = {
        let pause = store.pause_upkeep(deadline()).unwrap();
        let images = image_together(std::slice::from_ref(&pause), deadline())
            .unwrap()
            .unwrap();
        let files = images[0].files();
        assert!(files
            .iter()
            .any(|f| matches!(f, ImagedFile::Datafile { hint: true, .. })));
        assert!(files
            .iter()
            .any(|f| matches!(f, ImagedFile::Journal { .. })));
        // Writers go on while the image is written (upkeep stays paused).
        for k in 0..20u32 {
            rev += 1;
            put(&store, format!("k{k}").as_bytes(), rev, b"during", false).unwrap();
        }
        images[0].write_to(&copy_dir).unwrap()
    };
    assert!(written.files > 3 && written.bytes > 0);
    let copy_bytes: Vec<(String, Vec<u8>)> = snapshot_files(&copy_dir);

    // Compaction now deletes the datafiles the copy links; more writes and a truncate.
    store.rotate().unwrap();
    store.compact().unwrap();
    for k in 0..60u32 {
        rev += 1;
        put(&store, format!("k{k}").as_bytes(), rev, b"after", false).unwrap();
    }
    rev += 1;
    store.truncate(rev, true).unwrap();
    store.compact().unwrap();
    store.close().unwrap();
    let gone = copy_bytes
        .iter()
        .filter(|(name, _)| name.starts_with("datafile-") && !live_dir.join(name).exists())
        .count();
    assert!(
        gone > 0,
        "compaction deleted none of the files the copy links"
    );
    assert_eq!(
        snapshot_files(&copy_dir),
        copy_bytes,
        "the live store changed the copy"
    );

    let copy = open(&copy_dir);
    assert_eq!(contents(&copy), expected);
    // The copy is a store of its own: it takes writes and reopens with them.
    rev += 1;
    put(&copy, b"new", rev, b"v", true).unwrap();
    copy.close().unwrap();
    drop(copy);
    let again = open(&copy_dir);
    let mut with_new = expected.clone();
    with_new.insert(b"new".to_vec(), (rev, b"v".to_vec()));
    assert_eq!(contents(&again), with_new);
}

/// Every file of `dir` with its bytes, sorted by name.
fn snapshot_files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}
