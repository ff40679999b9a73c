//! Unit tests of the model: live versus durable files and entries, renames, and cuts.
//! They need neither root nor `/dev/fuse`.

use std::ffi::OsStr;

use super::*;
use crate::rng::SplitMix64;

fn name(text: &str) -> &OsStr {
    OsStr::new(text)
}

fn meta() -> Meta {
    Meta::new(0o644, 0, 0)
}

fn file(tree: &mut Tree, parent: Ino, file_name: &str, bytes: &[u8]) -> Ino {
    let ino = tree.create_file(parent, name(file_name), meta()).unwrap();
    tree.write(ino, 0, bytes).unwrap();
    ino
}

fn dir(tree: &mut Tree, parent: Ino, dir_name: &str) -> Ino {
    tree.mkdir(parent, name(dir_name), Meta::new(0o755, 0, 0))
        .unwrap()
}

/// The live bytes at a path of slash-separated names, if it exists.
fn contents(tree: &Tree, path: &str) -> Option<Vec<u8>> {
    let mut ino = ROOT;
    for part in path.split('/').filter(|part| !part.is_empty()) {
        ino = tree.lookup(ino, name(part)).ok()?;
    }
    tree.read(ino, 0, usize::MAX).ok()
}

fn exists(tree: &Tree, path: &str) -> bool {
    let mut ino = ROOT;
    for part in path.split('/').filter(|part| !part.is_empty()) {
        match tree.lookup(ino, name(part)) {
            Ok(child) => ino = child,
            Err(_) => return false,
        }
    }
    true
}

#[test]
fn a_file_needs_its_data_and_its_entry_synced() {
    let mut tree = Tree::new();
    let ino = file(&mut tree, ROOT, "data", b"bytes");
    tree.fsync(ino, true).unwrap();
    let report = tree.cut(1);
    assert!(!exists(&tree, "data"), "the entry was never made durable");
    assert_eq!(report.lost_paths, vec!["/data".to_owned()]);

    let ino = file(&mut tree, ROOT, "data", b"bytes");
    tree.fsync(ino, true).unwrap();
    tree.fsync_dir(ROOT).unwrap();
    tree.cut(2);
    assert_eq!(contents(&tree, "data").unwrap(), b"bytes");
}

#[test]
fn unsynced_bytes_survive_as_a_prefix_of_writes() {
    for seed in 0..100 {
        let mut tree = Tree::new();
        let ino = file(&mut tree, ROOT, "j", b"head");
        tree.fsync(ino, false).unwrap();
        tree.fsync_dir(ROOT).unwrap();
        tree.write(ino, 4, b"-one").unwrap();
        tree.write(ino, 8, b"-two").unwrap();
        tree.cut(seed);
        let bytes = contents(&tree, "j").unwrap();
        assert!(bytes.starts_with(b"head"), "seed {seed}: {bytes:?}");
        let tail = &bytes[4..];
        let whole = b"-one-two";
        let ok = whole.starts_with(tail)
            || (tail.len() <= 8
                && tail[..4.min(tail.len())] == whole[..4.min(tail.len())]
                && tail[4.min(tail.len())..].iter().all(|&b| b == 0))
            || tail.iter().all(|&b| b == 0);
        assert!(
            ok,
            "seed {seed}: tail {tail:?} is not a prefix, torn or zeroed"
        );
    }
}

#[test]
fn unlink_is_undone_unless_the_directory_is_synced() {
    let mut tree = Tree::new();
    let ino = file(&mut tree, ROOT, "old", b"x");
    tree.fsync(ino, true).unwrap();
    tree.fsync_dir(ROOT).unwrap();
    tree.unlink(ROOT, name("old")).unwrap();
    let report = tree.cut(1);
    assert_eq!(contents(&tree, "old").unwrap(), b"x");
    assert_eq!(report.restored_paths, vec!["/old".to_owned()]);

    tree.unlink(ROOT, name("old")).unwrap();
    tree.fsync_dir(ROOT).unwrap();
    tree.cut(2);
    assert!(!exists(&tree, "old"));
    assert_eq!(tree.nodes.len(), 1, "only the root is left");
}

#[test]
fn a_new_directory_vanishes_with_its_contents_unless_its_parent_is_synced() {
    let mut tree = Tree::new();
    let db = dir(&mut tree, ROOT, "db");
    let ino = file(&mut tree, db, "params", b"{}");
    tree.fsync(ino, true).unwrap();
    tree.fsync_dir(db).unwrap();
    let report = tree.cut(1);
    assert!(!exists(&tree, "db"));
    assert_eq!(report.lost, 2);

    let db = dir(&mut tree, ROOT, "db");
    tree.fsync_dir(ROOT).unwrap();
    let ino = file(&mut tree, db, "params", b"{}");
    tree.fsync(ino, true).unwrap();
    let report = tree.cut(2);
    assert!(exists(&tree, "db"), "the directory's entry was synced");
    assert!(
        !exists(&tree, "db/params"),
        "the file's entry in it was not"
    );
    assert_eq!(report.lost_paths, vec!["/db/params".to_owned()]);
}

/// The catalog's `write_atomic`: temp file, fsync, rename over, fsync the directory.
#[test]
fn atomic_replace_survives_whole_and_only_when_the_directory_is_synced() {
    for seed in 0..30 {
        let mut tree = Tree::new();
        let old = file(&mut tree, ROOT, "p.json", b"old");
        tree.fsync(old, true).unwrap();
        tree.fsync_dir(ROOT).unwrap();

        let temp = file(&mut tree, ROOT, "p.json.tmp", b"new!");
        tree.fsync(temp, true).unwrap();
        tree.rename(ROOT, name("p.json.tmp"), ROOT, name("p.json"), false)
            .unwrap();
        let mut crashed = tree.clone();
        crashed.cut(seed);
        assert_eq!(
            contents(&crashed, "p.json").unwrap(),
            b"old",
            "rename not synced"
        );
        assert!(!exists(&crashed, "p.json.tmp"));

        tree.fsync_dir(ROOT).unwrap();
        tree.cut(seed);
        assert_eq!(contents(&tree, "p.json").unwrap(), b"new!");
    }
}

/// Forgetting the data fsync before the rename is caught: the new name may hold nothing.
#[test]
fn a_rename_without_a_data_sync_can_publish_an_empty_file() {
    let mut empty = 0;
    for seed in 0..50 {
        let mut tree = Tree::new();
        file(&mut tree, ROOT, "tmp", b"payload");
        tree.rename(ROOT, name("tmp"), ROOT, name("final"), false)
            .unwrap();
        tree.fsync_dir(ROOT).unwrap();
        tree.cut(seed);
        let bytes = contents(&tree, "final").unwrap();
        assert!(bytes.len() <= 7);
        if bytes.is_empty() {
            empty += 1;
        }
    }
    assert!(empty > 0, "some seed loses the unsynced bytes");
}

#[test]
fn a_cross_directory_rename_commits_with_either_directory_atomically() {
    for sync_source in [true, false] {
        let mut tree = Tree::new();
        let a = dir(&mut tree, ROOT, "a");
        let b = dir(&mut tree, ROOT, "b");
        tree.fsync_dir(ROOT).unwrap();
        let ino = file(&mut tree, a, "f", b"data");
        tree.fsync(ino, true).unwrap();
        tree.fsync_dir(a).unwrap();
        tree.rename(a, name("f"), b, name("g"), false).unwrap();
        tree.fsync_dir(if sync_source { a } else { b }).unwrap();
        tree.cut(7);
        assert!(!exists(&tree, "a/f"), "sync_source {sync_source}");
        assert_eq!(
            contents(&tree, "b/g").unwrap(),
            b"data",
            "sync_source {sync_source}"
        );
    }
}

#[test]
fn an_unsynced_cross_directory_rename_is_undone() {
    let mut tree = Tree::new();
    let a = dir(&mut tree, ROOT, "a");
    let b = dir(&mut tree, ROOT, "b");
    tree.fsync_dir(ROOT).unwrap();
    let ino = file(&mut tree, a, "f", b"data");
    tree.fsync(ino, true).unwrap();
    tree.fsync_dir(a).unwrap();
    tree.rename(a, name("f"), b, name("g"), false).unwrap();
    let report = tree.cut(7);
    assert_eq!(contents(&tree, "a/f").unwrap(), b"data");
    assert!(!exists(&tree, "b/g"));
    assert_eq!(report.lost_paths, vec!["/b/g".to_owned()]);
    assert_eq!(report.restored_paths, vec!["/a/f".to_owned()]);
}

/// Renames commit in one global order: an fsync commits every earlier pending rename too.
#[test]
fn pending_renames_commit_as_a_prefix() {
    let mut tree = Tree::new();
    let dirs: Vec<Ino> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| dir(&mut tree, ROOT, n))
        .collect();
    tree.fsync_dir(ROOT).unwrap();
    let one = file(&mut tree, dirs[0], "one", b"1");
    let two = file(&mut tree, dirs[2], "two", b"2");
    tree.fsync(one, true).unwrap();
    tree.fsync(two, true).unwrap();
    tree.fsync_dir(dirs[0]).unwrap();
    tree.fsync_dir(dirs[2]).unwrap();
    tree.rename(dirs[0], name("one"), dirs[1], name("one"), false)
        .unwrap();
    tree.rename(dirs[2], name("two"), dirs[3], name("two"), false)
        .unwrap();
    tree.fsync_dir(dirs[3]).unwrap();
    tree.cut(0);
    assert!(
        exists(&tree, "b/one"),
        "the earlier rename is committed with the later"
    );
    assert!(exists(&tree, "d/two"));
    assert!(!exists(&tree, "a/one") && !exists(&tree, "c/two"));
}

/// A collection dropped by renaming its directory: the whole subtree moves with the rename.
#[test]
fn a_directory_rename_moves_its_durable_subtree() {
    let mut tree = Tree::new();
    let db = dir(&mut tree, ROOT, "db");
    tree.fsync_dir(ROOT).unwrap();
    let coll = dir(&mut tree, db, "collection-5");
    tree.fsync_dir(db).unwrap();
    let journal = file(&mut tree, coll, "journal-1.db", b"records");
    tree.fsync(journal, true).unwrap();
    tree.fsync_dir(coll).unwrap();

    tree.rename(db, name("collection-5"), db, name("dropped-5"), false)
        .unwrap();
    let mut unsynced = tree.clone();
    unsynced.cut(1);
    assert_eq!(
        contents(&unsynced, "db/collection-5/journal-1.db").unwrap(),
        b"records"
    );
    assert!(!exists(&unsynced, "db/dropped-5"));

    tree.fsync_dir(db).unwrap();
    tree.cut(1);
    assert_eq!(
        contents(&tree, "db/dropped-5/journal-1.db").unwrap(),
        b"records"
    );
    assert!(!exists(&tree, "db/collection-5"));
}

#[test]
fn a_replaced_target_comes_back_when_the_rename_is_lost() {
    let mut tree = Tree::new();
    let a = dir(&mut tree, ROOT, "a");
    let b = dir(&mut tree, ROOT, "b");
    tree.fsync_dir(ROOT).unwrap();
    for (parent, text) in [(a, "src"), (b, "dst")] {
        let ino = file(&mut tree, parent, "f", text.as_bytes());
        tree.fsync(ino, true).unwrap();
        tree.fsync_dir(parent).unwrap();
    }
    tree.rename(a, name("f"), b, name("f"), false).unwrap();
    assert_eq!(contents(&tree, "b/f").unwrap(), b"src");
    tree.cut(3);
    assert_eq!(contents(&tree, "a/f").unwrap(), b"src");
    assert_eq!(contents(&tree, "b/f").unwrap(), b"dst");
}

#[test]
fn rename_follows_posix_rules() {
    let mut tree = Tree::new();
    let a = dir(&mut tree, ROOT, "a");
    let sub = dir(&mut tree, a, "sub");
    let full = dir(&mut tree, ROOT, "full");
    file(&mut tree, full, "x", b"");
    file(&mut tree, ROOT, "f", b"");
    let rename = |tree: &mut Tree, from: (Ino, &str), to: (Ino, &str), no_replace: bool| {
        tree.rename(from.0, name(from.1), to.0, name(to.1), no_replace)
    };
    assert_eq!(
        rename(&mut tree, (ROOT, "a"), (sub, "a2"), false),
        Err(FsError::Invalid)
    );
    assert_eq!(
        rename(&mut tree, (ROOT, "a"), (a, "a2"), false),
        Err(FsError::Invalid)
    );
    assert_eq!(
        rename(&mut tree, (ROOT, "a"), (ROOT, "full"), false),
        Err(FsError::NotEmpty)
    );
    assert_eq!(
        rename(&mut tree, (ROOT, "a"), (ROOT, "f"), false),
        Err(FsError::NotDir)
    );
    assert_eq!(
        rename(&mut tree, (ROOT, "f"), (ROOT, "a"), false),
        Err(FsError::IsDir)
    );
    assert_eq!(
        rename(&mut tree, (full, "x"), (ROOT, "f"), true),
        Err(FsError::Exists)
    );
    assert_eq!(
        rename(&mut tree, (ROOT, "nope"), (ROOT, "g"), false),
        Err(FsError::NotFound)
    );
    assert_eq!(rename(&mut tree, (ROOT, "f"), (ROOT, "f"), false), Ok(()));
    assert_eq!(rename(&mut tree, (full, "x"), (ROOT, "f"), false), Ok(()));
    assert_eq!(
        rename(&mut tree, (ROOT, "full"), (sub, "moved"), false),
        Ok(())
    );
    assert_eq!(tree.parent_of(full), Ok(sub));
    assert_eq!(tree.rmdir(ROOT, name("a")), Err(FsError::NotEmpty));
    assert_eq!(tree.unlink(ROOT, name("a")), Err(FsError::IsDir));
    assert_eq!(tree.rmdir(ROOT, name("f")), Err(FsError::NotDir));
    assert_eq!(
        tree.create_file(ROOT, name("f"), meta()),
        Err(FsError::Exists)
    );
    assert_eq!(
        tree.create_file(ROOT, name(".."), meta()),
        Err(FsError::Invalid)
    );
    let long = "x".repeat(NAME_BYTES_MAX + 1);
    assert_eq!(
        tree.mkdir(ROOT, name(&long), meta()),
        Err(FsError::NameTooLong)
    );
}

#[test]
fn open_handles_keep_unlinked_files_until_released() {
    let mut tree = Tree::new();
    let ino = file(&mut tree, ROOT, "f", b"still here");
    let fh = tree.open(ino).unwrap();
    tree.unlink(ROOT, name("f")).unwrap();
    assert_eq!(tree.read(ino, 0, 100).unwrap(), b"still here");
    assert_eq!(tree.attr(ino).unwrap().nlink, 0);
    tree.release(fh);
    assert_eq!(tree.attr(ino), Err(FsError::NotFound));
    assert_eq!(tree.nodes.len(), 1);
}

#[test]
fn handles_from_before_a_cut_are_unknown() {
    let mut tree = Tree::new();
    let ino = file(&mut tree, ROOT, "f", b"");
    tree.fsync_dir(ROOT).unwrap();
    let fh = tree.open(ino).unwrap();
    tree.cut(0);
    assert_eq!(tree.handle_ino(fh), Err(FsError::BadHandle));
    tree.release(fh);
    let again = tree.open(ino).unwrap();
    assert!(again > fh, "handle numbers are not reused");
}

#[test]
fn a_listing_survives_removals_while_it_is_read() {
    let mut tree = Tree::new();
    let d = dir(&mut tree, ROOT, "d");
    for i in 0..10 {
        file(&mut tree, d, &format!("f{i}"), b"");
    }
    let fh = tree.open(d).unwrap();
    let first = tree.read_dir(fh, 0).unwrap();
    assert_eq!(first.len(), 12, ". and .. and ten files");
    assert_eq!(first[1].ino, ROOT);
    for entry in &first[2..7] {
        tree.unlink(d, &entry.name).unwrap();
    }
    let rest = tree.read_dir(fh, 7).unwrap();
    assert_eq!(rest, first[7..].to_vec());
}

#[test]
fn a_second_cut_changes_nothing() {
    let mut tree = Tree::new();
    let d = dir(&mut tree, ROOT, "d");
    tree.fsync_dir(ROOT).unwrap();
    let f = file(&mut tree, d, "f", b"abc");
    tree.fsync_dir(d).unwrap();
    tree.write(f, 3, b"def").unwrap();
    tree.cut(11);
    let image = contents(&tree, "d/f");
    for seed in 0..10 {
        let report = tree.cut(seed);
        assert_eq!((report.lost, report.restored, report.ops_total), (0, 0, 0));
        assert_eq!(contents(&tree, "d/f"), image);
    }
}

/// Random operations, then a cut: never an invariant violation or an anomaly, the same seed
/// gives the same result on a copy, and everything after the cut is durable.
#[test]
fn random_operations_keep_the_invariants() {
    for seed in 0..200u64 {
        let mut rng = SplitMix64::new(seed);
        let mut tree = Tree::new();
        let mut dirs = vec![ROOT];
        for step in 0..60 {
            let parent = dirs[rng.below(dirs.len() as u64) as usize];
            let other = dirs[rng.below(dirs.len() as u64) as usize];
            let n = format!("n{}", rng.below(4));
            let m = format!("n{}", rng.below(4));
            let _ = match rng.below(9) {
                0 => tree.create_file(parent, name(&n), meta()).map(drop),
                1 => tree
                    .mkdir(parent, name(&n), meta())
                    .map(|ino| dirs.push(ino)),
                2 => tree.unlink(parent, name(&n)),
                3 => tree.rmdir(parent, name(&n)),
                4 => tree.rename(parent, name(&n), other, name(&m), false),
                5 => tree.fsync_dir(parent),
                6 => tree
                    .lookup(parent, name(&n))
                    .and_then(|ino| tree.write(ino, rng.below(8), format!("s{step}").as_bytes())),
                7 => tree
                    .lookup(parent, name(&n))
                    .and_then(|ino| tree.fsync(ino, true)),
                _ => tree
                    .lookup(parent, name(&n))
                    .and_then(|ino| tree.set_len(ino, rng.below(6))),
            };
            dirs.retain(|ino| tree.nodes.contains_key(ino));
        }
        let mut copy = tree.clone();
        let report = tree.cut(seed);
        assert_eq!(tree.stats().anomalies, 0, "seed {seed}");
        assert_eq!(
            copy.cut(seed),
            report,
            "seed {seed}: a cut is deterministic"
        );
        for node in tree.nodes.values() {
            match &node.body {
                Body::Dir(dir) => assert_eq!(dir.live, dir.durable),
                Body::File(file) => assert!(file.pending().is_empty()),
            }
        }
    }
}
