//! The /proc sampler: the process's resident set and CPU time, the machine's busy and
//! stolen CPU time, turned into the counters `rss_bytes`, `cpu_busy_cores`,
//! `host_busy_cores` and `host_steal_cores` at a fixed period.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use timeline::event::Counter;

use super::{Msg, Shared};

/// Sample every `period` until `stop` is set: RSS, then the cores busy since the previous
/// sample (the prover's, the whole machine's, the hypervisor's steal), stamped at this
/// sample's time.
pub(crate) fn sample_loop(stop: &AtomicBool, sh: &Shared, period: Duration) {
    // Cumulative CPU seconds: the prover's, the whole machine's busy time and the
    // hypervisor's steal; each last reading kept with its time.
    let names = [
        timeline::event::counters::CPU_BUSY_CORES,
        timeline::event::counters::HOST_BUSY_CORES,
        timeline::event::counters::HOST_STEAL_CORES,
    ];
    let mut last: [Option<(u64, f64)>; 3] = [None; 3];
    while !stop.load(Ordering::Relaxed) {
        let t_ns = sh.now_ns();
        if let Some(rss) = rss_bytes() {
            let _ = sh.tx.send(Msg::Counter(Counter { name: timeline::event::counters::RSS_BYTES.into(), t_ns, value: rss as f64, device: None }));
        }
        // Cores busy since the previous sample, stamped at this sample's time.
        let process = process_cpu_seconds();
        let host = HostCpu::read();
        let now = [process, host.map(|h| h.busy_s), host.map(|h| h.steal_s)];
        for ((name, now), last) in names.iter().zip(now).zip(last.iter_mut()) {
            let Some(secs) = now else { continue };
            if let Some((t0, s0)) = *last {
                if t_ns > t0 {
                    let cores = ((secs - s0) / ((t_ns - t0) as f64 * 1e-9)).max(0.0);
                    let _ = sh.tx.send(Msg::Counter(Counter { name: (*name).into(), t_ns, value: cores, device: None }));
                }
            }
            *last = Some((t_ns, secs));
        }
        super::sleep_unless_stopped(stop, period);
    }
}

/// User + system CPU time of the whole process (every thread), seconds.
pub fn process_cpu_seconds() -> Option<f64> {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(tv(ru.ru_utime) + tv(ru.ru_stime))
}

/// CPU time of the whole machine since boot, seconds, from /proc/stat's aggregate `cpu` line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostCpu {
    /// user + nice + system + irq + softirq (guest time is counted inside user).
    pub busy_s: f64,
    /// Time the hypervisor ran something else while this machine had work.
    pub steal_s: f64,
}

impl HostCpu {
    pub fn read() -> Option<HostCpu> {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        HostCpu::parse(&std::fs::read_to_string("/proc/stat").ok()?, if hz > 0 { hz as f64 } else { 100.0 })
    }

    /// The `cpu` line of /proc/stat: `cpu user nice system idle iowait irq softirq steal ...`
    /// in ticks of 1/hz s; None when it is missing or short.
    pub fn parse(stat: &str, hz: f64) -> Option<HostCpu> {
        let line = stat.lines().find(|l| l.split_whitespace().next() == Some("cpu"))?;
        let v: Vec<u64> = line.split_whitespace().skip(1).map_while(|x| x.parse().ok()).collect();
        if v.len() < 8 {
            return None;
        }
        let busy = v[0] + v[1] + v[2] + v[5] + v[6];
        Some(HostCpu { busy_s: busy as f64 / hz, steal_s: v[7] as f64 / hz })
    }
}

/// Resident set size of this process, from /proc/self/statm (pages × page size).
pub fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size())
}

fn page_size() -> u64 {
    static PAGE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PAGE.get_or_init(read_page_size)
}

fn read_page_size() -> u64 {
    // KernelPageSize of the first mapping; 4 KiB when it cannot be read.
    std::fs::read_to_string("/proc/self/smaps")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("KernelPageSize:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        })
        .map(|kb| kb * 1024)
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::HostCpu;

    #[test]
    fn host_cpu_reads_busy_and_steal_from_the_aggregate_line() {
        let stat = "cpu  100 20 30 5000 7 3 2 40 0 0\ncpu0 50 10 15 2500 3 1 1 20 0 0\nintr 1 2 3\n";
        let h = HostCpu::parse(stat, 100.0).unwrap();
        // user + nice + system + irq + softirq; idle and iowait are not busy.
        assert!((h.busy_s - 1.55).abs() < 1e-12, "{h:?}");
        assert!((h.steal_s - 0.40).abs() < 1e-12, "{h:?}");
        // Only the aggregate line counts, wherever it is.
        assert_eq!(HostCpu::parse("cpu0 1 1 1 1 1 1 1 1\ncpu 1 0 0 0 0 0 0 9\n", 1.0).unwrap().steal_s, 9.0);
        for bad in ["", "cpu 1 2 3", "intr 1 2 3 4 5 6 7 8 9", "cpu a b c d e f g h"] {
            assert_eq!(HostCpu::parse(bad, 100.0), None, "{bad:?}");
        }
        // The real file of this machine parses (Linux CI and devices).
        if std::path::Path::new("/proc/stat").exists() {
            assert!(HostCpu::read().is_some_and(|h| h.busy_s > 0.0));
        }
    }
}
