//! The machine's memory, for the defaults that depend on it.
//!
//! What it is: [`physical_memory`] (from `/proc/meminfo`, Linux's `MemTotal`),
//! [`global_query_memory_default`], the default of `--query.global-memory-limit`, and
//! [`purge_freed_memory`] and [`purge_thread_arena`], which make jemalloc return the pages it
//! keeps for reuse to the operating system, from every arena or from the current thread's
//! (installed as `quince_memory::set_trim` and `set_trim_thread`: after a query that held
//! much, and during one that freed much, so the server's resident memory follows the query
//! memory limits).
//!
//! What it is not: the accounting (`quince-memory`), or a reading of cgroup limits: a server
//! in a container with a memory limit below the machine's should be given
//! `--query.global-memory-limit` explicitly.
//!
//! Invariants: an unreadable `/proc/meminfo` gives 0 (no default limit), never an error.
//!
//! `unsafe` here: calls of jemalloc's `mallctl` with NUL-terminated names, reading one
//! `unsigned` or taking nothing.
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
    const PURGE_ALL: &std::ffi::CStr = c"arena.4096.purge";
    // SAFETY: the name is a valid NUL-terminated string naming a control that takes and
    // gives nothing, as the null pointers and zero length say.
    let _ = unsafe {
        tikv_jemalloc_sys::mallctl(
            PURGE_ALL.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
}

/// Returns the freed pages of the current thread's jemalloc arena to the operating system
/// (`thread.arena`, then `arena.<i>.purge`): run during a query that freed much, so its
/// thread's arena does not keep several times the query's live memory.
pub fn purge_thread_arena() {
    let mut arena: u32 = 0;
    let mut len = std::mem::size_of::<u32>();
    // SAFETY: `thread.arena` reads an `unsigned`, written into `arena` with its size in `len`.
    let read = unsafe {
        tikv_jemalloc_sys::mallctl(
            c"thread.arena".as_ptr(),
            (&mut arena as *mut u32).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if read != 0 {
        return;
    }
    // "arena.<i>.purge", NUL-terminated, built on the stack (no allocation while charging).
    let mut name = [0u8; 32];
    let mut at = 0;
    for byte in b"arena." {
        name[at] = *byte;
        at += 1;
    }
    let mut digits = [0u8; 10];
    let mut count = 0;
    let mut n = arena;
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in (0..count).rev() {
        name[at] = digits[i];
        at += 1;
    }
    for byte in b".purge\0" {
        name[at] = *byte;
        at += 1;
    }
    // SAFETY: `name` is a NUL-terminated control name that takes and gives nothing.
    let _ = unsafe {
        tikv_jemalloc_sys::mallctl(
            name.as_ptr().cast(),
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
