//! The data directory and every file and directory the server creates in it are its owner's
//! only (0700 / 0600): they hold documents and users' password hashes. A data directory the
//! server creates is made durable in its parent.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{collection, open_os};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn everything_the_server_creates_is_its_owners_only() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("new").join("data");
    let catalog = open_os(&data);
    collection(&catalog, "c");
    catalog.shutdown().unwrap();
    let mut stack = vec![data.clone()];
    let mut seen = 0;
    while let Some(path) = stack.pop() {
        let meta = std::fs::metadata(&path).unwrap();
        if meta.is_dir() {
            assert_eq!(mode(&path), 0o700, "{}", path.display());
            for entry in std::fs::read_dir(&path).unwrap() {
                stack.push(entry.unwrap().path());
            }
        } else {
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        }
        seen += 1;
    }
    assert!(seen > 8, "walked {seen} entries");
    assert_eq!(mode(&tmp.path().join("new")), 0o700);
}
