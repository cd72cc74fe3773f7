//! The analyzer benches' generated cuzk daemon log: a deterministic model of a
//! Phase-8-like pipeline (6 synthesis workers, 2 GPU workers on one GPU), written in time
//! order as a daemon writes it. Plain `std`, shared by `benches/analyze.rs` and
//! `examples/cuzk_bench_log.rs` (which writes it to a file, so that the whole
//! `proofscope analyze` command can be timed on the same log as the benches).

/// Times (ms) of partition `i` in the model: (synth start, synth end, queued, pickup, gpu start, gpu end).
pub struct Model {
    gpu_free: [u64; 2],
    last_start: u64,
}

impl Default for Model {
    fn default() -> Self {
        Self::new()
    }
}

impl Model {
    pub fn new() -> Self {
        Model { gpu_free: [0, 0], last_start: 0 }
    }
    pub fn partition(&mut self, i: u64) -> (u64, u64, u64, u64, u64, u64, usize) {
        let (round, w) = (i / 6, i % 6);
        let s0 = round * 30_000 + w * 7;
        let s1 = s0 + 29_000 + (i * 7919) % 2_000;
        let q = s1 + 1;
        let worker = if self.gpu_free[0] <= self.gpu_free[1] { 0 } else { 1 };
        // One lock around ~3.7 s of kernels: starts at least 3.7 s apart.
        let start = (q + 8).max(self.gpu_free[worker]).max(self.last_start + 3_700);
        let end = start + 7_300 + (i * 104_729) % 300;
        self.gpu_free[worker] = end + 5;
        self.last_start = start;
        (s0, s1, q, start - 3, start, end, worker)
    }
}

/// A cuzk daemon log with `n` TIMELINE events (6 per partition, 10 partitions per job)
/// and an ordinary log line every 10 partitions, in time order as a daemon writes them
/// (written partition by partition instead, a GPU end seconds after the next partition's
/// synthesis start reads as a daemon restart: the reader split the 1M-event log into one
/// daemon run per partition, 166 666, from 2026-12-01 until 2026-12-02).
pub fn cuzk_log(n: usize) -> String {
    let parts = n / 6;
    let mut lines: Vec<(u64, String)> = Vec::with_capacity(parts * 6 + parts / 10);
    let mut m = Model::new();
    for i in 0..parts as u64 {
        let job = format!("{:08x}-31db-6e32-d8dc-b35f94c662cd", i / 10);
        let p = i % 10;
        let (s0, s1, q, pk, g0, g1, w) = m.partition(i);
        lines.push((s0, format!("TIMELINE,{s0},SYNTH_START,{job},partition={p}")));
        lines.push((s1, format!("TIMELINE,{s1},SYNTH_END,{job},partition={p},synth_ms={}", s1 - s0)));
        lines.push((q, format!("TIMELINE,{q},GPU_QUEUE,{job},partition={p}")));
        if i % 10 == 0 {
            lines.push((q, format!("2026-11-30T05:00:00.000Z  INFO cuzk_core::engine: partition synthesis complete, pushing to GPU queue job_id={job}")));
        }
        lines.push((pk, format!("TIMELINE,{pk},GPU_PICKUP,{job},worker={w},partition={p}")));
        lines.push((g0, format!("TIMELINE,{g0},GPU_START,{job},worker={w},partition={p}")));
        lines.push((g1, format!("TIMELINE,{g1},GPU_END,{job},worker={w},partition={p},gpu_ms={}", g1 - g0)));
    }
    // Stable: lines of one moment keep their order (a start before its end).
    lines.sort_by_key(|l| l.0);
    let mut s = String::with_capacity(parts * 6 * 90);
    for (_, l) in lines {
        s.push_str(&l);
        s.push('\n');
    }
    s
}
