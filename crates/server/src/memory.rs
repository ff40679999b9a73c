//! The machine's memory, for the defaults that depend on it.
//!
//! What it is: [`physical_memory`] (from `/proc/meminfo`, Linux's `MemTotal`),
//! [`global_query_memory_default`], the default of `--query.global-memory-limit`, and
//! [`purge_freed_memory`], which makes jemalloc return the pages it keeps for reuse to the
//! operating system (installed as `quince_memory::set_trim`: run after a query that held
//! much, so the server's resident memory follows the query memory limits).
//!
//! What it is not: the accounting (`quince-memory`), or a reading of cgroup limits: a server
//! in a container with a memory limit below the machine's should be given
//! `--query.global-memory-limit` explicitly.
//!
//! Invariants: an unreadable `/proc/meminfo` gives 0 (no default limit), never an error.
//!
//! `unsafe` here: one call of jemalloc's `mallctl` with a constant, NUL-terminated name and no
//! arguments.
#![allow(unsafe_code)]

/// The machine's memory in bytes (`MemTotal`), or 0 when it cannot be read.
pub fn physical_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text))
        .unwrap_or(0)
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line
        .trim_start_matches("MemTotal:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// The default of `--query.global-memory-limit`: 90 % of the machine's memory (as arangod
/// 3.12 has it for machines of 8 GiB and more), or no limit when the memory is unknown.
pub fn global_query_memory_default() -> u64 {
    physical_memory() / 10 * 9
}

/// Returns the freed pages jemalloc keeps, in every arena, to the operating system
/// (`arena.<MALLCTL_ARENAS_ALL>.purge`). It takes about as long as touching them again would.
pub fn purge_freed_memory() {
    // MALLCTL_ARENAS_ALL is 4096.
    const PURGE_ALL: &[u8] = b"arena.4096.purge\0";
    // SAFETY: the name is a valid NUL-terminated string naming a control that takes and
    // gives nothing, as the null pointers and zero length say.
    let _ = unsafe {
        tikv_jemalloc_sys::mallctl(
            PURGE_ALL.as_ptr().cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_total_in_kib() {
        let text = "MemTotal:       24591728 kB\nMemFree:        1000 kB\n";
        assert_eq!(mem_total(text), Some(24_591_728 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        assert!(physical_memory() > 0, "Linux machines have /proc/meminfo");
    }
}
