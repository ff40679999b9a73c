//! [`Tree::cut`]: a simulated power cut, and [`CutReport`], what it did.
//!
//! What it is: the one operation that replaces the whole state by what a reboot would find.
//! Starting at the root, it follows *durable* directory entries only; every directory reached
//! gets its durable entries as both its live and its durable ones, and every file reached gets
//! its durable bytes plus a seeded prefix, in write order, of its unsynced writes, the first
//! one left out possibly torn ([`crate::file_image::FileImage::survive_cut`]). Everything not
//! reached is gone: files and directories whose entries were never made durable, and their
//! contents. Open handles are forgotten (the processes holding them are dead), and so are
//! pending renames.
//!
//! What it is not: a reboot of the kernel. The harness kills the processes using the mount
//! first; the mount itself stays, and its caches are harmless because the file system gives
//! the kernel no cache time (entry and attribute TTL 0, direct I/O).
//!
//! Invariants: the result depends only on the state and the seed (entries are walked in name
//! order); inode numbers of survivors are kept and none is reused; after a cut every entry is
//! durable and no file has unsynced operations, so a second cut with any seed changes nothing.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use serde_json::{json, Value};

use crate::file_image::{CutOutcome, Tear};
use crate::rng::SplitMix64;
use crate::tree::{Body, Dir, Ino, Kind, Node, Tree, ROOT};

/// How many paths a report lists per category (the counts are always complete).
pub const PATHS_LISTED_MAX: usize = 200;

/// One file that had unsynced operations at the cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileCut {
    /// Its path after the reboot.
    pub path: String,
    /// What happened to its unsynced operations.
    pub outcome: CutOutcome,
}

/// What a cut did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CutReport {
    /// The seed it drew from.
    pub seed: u64,
    /// Files the reboot finds.
    pub files_kept: u64,
    /// Directories the reboot finds (the root included).
    pub dirs_kept: u64,
    /// Live paths (files and directories) before the cut that the reboot does not find at
    /// the same path with the same inode.
    pub lost: u64,
    /// Paths the reboot finds that were not live before the cut (unlinks and renames undone).
    pub restored: u64,
    /// Unsynced operations (writes and length changes) before the cut, over all files found.
    pub ops_total: u64,
    /// Of those, how many survived whole.
    pub ops_kept: u64,
    /// Writes that landed torn (a prefix, or zeroes).
    pub torn_writes: u64,
    /// Unsynced bytes that did not land as written, over all files found.
    pub bytes_dropped: u64,
    /// The first [`PATHS_LISTED_MAX`] lost paths, sorted.
    pub lost_paths: Vec<String>,
    /// The first [`PATHS_LISTED_MAX`] restored paths, sorted.
    pub restored_paths: Vec<String>,
    /// The files that had unsynced operations, in walk order (at most [`PATHS_LISTED_MAX`]).
    pub files: Vec<FileCut>,
}

impl CutReport {
    /// The report as a JSON object (for the control channel and the test's log).
    pub fn to_json(&self) -> Value {
        let files: Vec<Value> = self.files.iter().map(file_json).collect();
        json!({
            "seed": self.seed,
            "files_kept": self.files_kept,
            "dirs_kept": self.dirs_kept,
            "lost": self.lost,
            "restored": self.restored,
            "ops_total": self.ops_total,
            "ops_kept": self.ops_kept,
            "torn_writes": self.torn_writes,
            "bytes_dropped": self.bytes_dropped,
            "lost_paths": self.lost_paths,
            "restored_paths": self.restored_paths,
            "files": files,
        })
    }
}

fn file_json(file: &FileCut) -> Value {
    let outcome = &file.outcome;
    let tear = match outcome.tear {
        Tear::None => Value::Null,
        Tear::Prefix { kept, of } => json!({"prefix": kept, "of": of}),
        Tear::Zeroes { zeroed, of } => json!({"zeroes": zeroed, "of": of}),
    };
    json!({
        "path": file.path,
        "ops_total": outcome.ops_total,
        "ops_kept": outcome.ops_kept,
        "tear": tear,
        "bytes_dropped": outcome.bytes_dropped,
        "live_len": outcome.live_len,
        "len_after": outcome.len_after,
    })
}

impl Tree {
    /// The power cut: replaces the state by what a reboot would find (see the module header).
    pub fn cut(&mut self, seed: u64) -> CutReport {
        let before = self.live_paths();
        let mut rng = SplitMix64::new(seed);
        let mut report = CutReport {
            seed,
            ..CutReport::default()
        };
        let mut nodes: HashMap<Ino, Node> = HashMap::new();
        let mut reached: HashSet<Ino> = HashSet::from([ROOT]);
        let mut queue: VecDeque<(Ino, Ino, String)> = VecDeque::from([(ROOT, ROOT, String::new())]);
        while let Some((ino, parent, path)) = queue.pop_front() {
            let node = &self.nodes[&ino];
            let body = match &node.body {
                Body::Dir(dir) => {
                    let mut entries = BTreeMap::new();
                    for (name, &child) in &dir.durable {
                        if !self.nodes.contains_key(&child) || !reached.insert(child) {
                            // Garbage collection keeps what durable entries name, and an inode
                            // has one durable name: this is a bug of the model, not a test
                            // outcome. Count it, and keep the first name.
                            self.stats.anomalies += 1;
                            continue;
                        }
                        entries.insert(name.clone(), child);
                        let child_path = format!("{path}/{}", name.to_string_lossy());
                        queue.push_back((child, ino, child_path));
                    }
                    report.dirs_kept += 1;
                    Body::Dir(Dir {
                        parent,
                        live: entries.clone(),
                        durable: entries,
                    })
                }
                Body::File(file) => {
                    let (image, outcome) = file.survive_cut(&mut rng);
                    report.files_kept += 1;
                    report.ops_total += outcome.ops_total as u64;
                    report.ops_kept += outcome.ops_kept as u64;
                    report.bytes_dropped += outcome.bytes_dropped;
                    if outcome.tear != Tear::None {
                        report.torn_writes += 1;
                    }
                    if outcome.ops_total > 0 && report.files.len() < PATHS_LISTED_MAX {
                        report.files.push(FileCut {
                            path: path.clone(),
                            outcome,
                        });
                    }
                    Body::File(image)
                }
            };
            let links = u32::from(node.kind() == Kind::File);
            nodes.insert(
                ino,
                Node {
                    meta: node.meta,
                    links,
                    body,
                },
            );
        }
        self.nodes = nodes;
        self.renames.clear();
        self.handles.clear();
        self.stats.cuts += 1;

        let after = self.live_paths();
        let lost: Vec<String> = differ(&before, &after);
        let restored: Vec<String> = differ(&after, &before);
        report.lost = lost.len() as u64;
        report.restored = restored.len() as u64;
        report.lost_paths = lost.into_iter().take(PATHS_LISTED_MAX).collect();
        report.restored_paths = restored.into_iter().take(PATHS_LISTED_MAX).collect();
        self.last_cut = Some(report.clone());
        self.check_invariants();
        report
    }

    /// Every path reachable from the root through live entries, with its inode, sorted.
    fn live_paths(&self) -> Vec<(String, Ino)> {
        let mut out = Vec::new();
        let mut stack = vec![(ROOT, String::new())];
        let mut seen = HashSet::from([ROOT]);
        while let Some((ino, path)) = stack.pop() {
            let Ok(dir) = self.dir(ino) else {
                continue;
            };
            for (name, &child) in &dir.live {
                if !seen.insert(child) {
                    continue;
                }
                let child_path = format!("{path}/{}", name.to_string_lossy());
                out.push((child_path.clone(), child));
                stack.push((child, child_path));
            }
        }
        out.sort();
        out
    }
}

/// The paths of `a` not in `b` at the same inode, sorted.
fn differ(a: &[(String, Ino)], b: &[(String, Ino)]) -> Vec<String> {
    let b: HashSet<&(String, Ino)> = b.iter().collect();
    a.iter()
        .filter(|entry| !b.contains(entry))
        .map(|(path, _)| path.clone())
        .collect()
}
