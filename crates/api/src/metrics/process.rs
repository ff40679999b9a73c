//! [`ProcessFigures`]: what the operating system says about the server process and the machine.
//!
//! What it is: figures read from `/proc/self/stat`, `/proc/self/status` and `/proc/meminfo`
//! (page faults, CPU times, threads, resident and virtual size, physical memory) and the CPU
//! cores the process may use.
//!
//! What it is not: portable beyond Linux. Where a file is missing or unreadable its figures
//! are 0, so a scrape never fails because of them.
//!
//! Invariants: sizes are in bytes, times in seconds; CPU times assume the kernel's fixed
//! `USER_HZ` of 100 ticks per second that `/proc` reports in.

/// The ticks per second of `/proc`'s CPU times (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// The figures of the server process and its machine.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ProcessFigures {
    pub minor_page_faults: u64,
    pub major_page_faults: u64,
    /// Seconds in user mode.
    pub user_time: f64,
    /// Seconds in kernel mode.
    pub system_time: f64,
    pub threads: u64,
    pub resident_size: u64,
    pub virtual_size: u64,
    /// The machine's memory.
    pub physical_memory: u64,
    /// The CPU cores the process may use.
    pub cores: u64,
}

impl ProcessFigures {
    /// Reads the figures now.
    pub(crate) fn read() -> ProcessFigures {
        let mut figures = ProcessFigures {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
            ..ProcessFigures::default()
        };
        if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
            figures.read_stat(&stat);
        }
        if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
            figures.resident_size = kib_field(&status, "VmRSS:") * 1024;
            figures.virtual_size = kib_field(&status, "VmSize:") * 1024;
            figures.threads = kib_field(&status, "Threads:");
        }
        if let Ok(meminfo) = std::fs::read_to_string("/proc/meminfo") {
            figures.physical_memory = kib_field(&meminfo, "MemTotal:") * 1024;
        }
        figures
    }

    /// The resident size as a share of physical memory (0 to 1; 0 when that is unknown).
    pub(crate) fn resident_share(&self) -> f64 {
        match self.physical_memory {
            0 => 0.0,
            total => self.resident_size as f64 / total as f64,
        }
    }

    /// Fields 10 (minflt), 12 (majflt), 14 (utime) and 15 (stime) of `/proc/self/stat`,
    /// counted after the command name, which may itself hold spaces and parentheses.
    fn read_stat(&mut self, stat: &str) {
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return;
        };
        // `rest` starts at field 3 (the state).
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field =
            |n: usize| -> u64 { fields.get(n - 3).and_then(|f| f.parse().ok()).unwrap_or(0) };
        self.minor_page_faults = field(10);
        self.major_page_faults = field(12);
        self.user_time = field(14) as f64 / TICKS_PER_SECOND;
        self.system_time = field(15) as f64 / TICKS_PER_SECOND;
    }
}

/// The number after `name` on its line (`VmRSS:   1234 kB` gives 1234), or 0.
fn kib_field(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let mut f = ProcessFigures::default();
        f.read_stat("42 (a (b) c) S 1 42 42 0 -1 4194560 777 0 3 0 250 50 0 0 20 0 9 0 1");
        assert_eq!(f.minor_page_faults, 777);
        assert_eq!(f.major_page_faults, 3);
        assert_eq!(f.user_time, 2.5);
        assert_eq!(f.system_time, 0.5);
    }

    #[test]
    fn this_process_has_figures() {
        let f = ProcessFigures::read();
        assert!(f.resident_size > 0);
        assert!(f.virtual_size >= f.resident_size);
        assert!(f.threads >= 1);
        assert!(f.physical_memory > f.resident_size);
        assert!(f.resident_share() > 0.0 && f.resident_share() < 1.0);
        assert!(f.cores >= 1);
    }
}
