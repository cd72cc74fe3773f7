//! What a simulation returns: [`SimResult`], a serde struct (it is `simulate --json`),
//! and its human-readable rendering. Every figure is computed by the pipeline model while
//! it runs (no span list needed), so sweeps can skip recording the timeline.

use serde::{Deserialize, Serialize};

use crate::floors::Floors;

/// Why a configuration cannot run, and when it found out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    /// `ram_oom` or `vram_oom`.
    pub kind: String,
    /// Simulated time of the failure, seconds.
    pub t_s: f64,
    pub detail: String,
}

/// Busy fraction of one GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GpuUtil {
    pub device: u32,
    /// Union of the GPU calls (cuzk's GPU_START..GPU_END), over the device's active window
    /// (first call start to last call end): what "TIMELINE GPU util" reports. (Earlier files:
    /// `union_util`, `union_util_run`, `kernel_util` for this field and the next two.)
    #[serde(alias = "union_util")]
    pub gpu_utilization: f64,
    /// Same union over the whole run (0 to the last proof's completion).
    #[serde(alias = "union_util_run")]
    pub gpu_utilization_run: f64,
    /// True kernel time over the active window (kernels of one device are serialised).
    #[serde(alias = "kernel_util")]
    pub kernel_utilization: f64,
    /// Fraction of the active window a lock of the device was held (compute lock for two_lock).
    pub lock_hold: f64,
    /// Busy fraction of the device's PCIe link over the active window.
    pub pcie_util: f64,
    pub peak_vram_gib: f64,
    pub active_window_s: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SimResult {
    pub name: String,
    pub feasible: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    pub proofs: u32,
    pub proofs_completed: u32,
    /// Time of the last proof's completion, seconds.
    pub makespan_s: f64,
    /// makespan / proofs.
    pub total_s_per_proof: f64,
    /// (last completion − first completion) / (proofs − 1): the rate once the pipeline is full.
    /// (`steady_s_per_proof` in files written before the summary's vocabulary.)
    #[serde(alias = "steady_s_per_proof")]
    pub steady_state_s_per_proof: f64,
    /// (last − first partition completion) / (partitions − 1) × partitions per proof: the
    /// analyzer's steady s/proof from partition completions (what `campaign score` compares).
    #[serde(default)]
    pub steady_partitions_s_per_proof: f64,
    /// The prediction interval from replications with other seeds ([`crate::interval`]);
    /// absent for a single simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<crate::interval::Interval>,
    /// Per-proof latency: first synthesis start to completion (as the analyzer measures it).
    pub latency_mean_s: f64,
    pub latency_max_s: f64,
    pub gpus: Vec<GpuUtil>,
    /// Mean busy fraction of the CPU cores' capacity (`machine.cpu_capacity`) over the run.
    pub cpu_util: f64,
    /// Mean fraction of the host memory bandwidth drawn over the run.
    pub bandwidth_util: f64,
    /// Mean fraction of partition workers holding a permit.
    pub pw_util: f64,
    /// Mean fraction of GPU workers inside a call.
    pub gw_util: f64,
    pub peak_ram_gib: f64,
    /// The host budget (`memory.total_budget`, auto resolved), GiB; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_budget_gib: Option<f64>,
    /// With a budget: the most reserved at once (resident items + partition reservations), GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_reserved_gib: Option<f64>,
    /// Syntheses that waited for their reservation to fit, and their total wait (`ram_wait`).
    #[serde(default)]
    pub ram_waits: u64,
    #[serde(default)]
    pub ram_wait_total_s: f64,
    pub peak_vram_gib: f64,
    /// The parameters streamed over PCIe for every partition (not resident on the device).
    #[serde(default)]
    pub params_streamed: bool,
    /// Calls that waited for VRAM (`vram_policy = "wait"`), and their total wait.
    #[serde(default)]
    pub vram_waits: u64,
    #[serde(default)]
    pub vram_wait_total_s: f64,
    /// Why the device side degraded (parameters streamed, workers serialised), as logged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vram_notes: Vec<String>,
    /// Mean synthesis duration (with contention), seconds.
    pub synth_mean_s: f64,
    /// Mean GPU call duration (GPU_START..GPU_END), seconds.
    pub gpu_call_mean_s: f64,
    /// Mean wait in the GPU queue, seconds.
    pub queue_wait_mean_s: f64,
    /// Time-average number of partitions in the GPU queue.
    pub queue_len_mean: f64,
    /// Mean wait of a partition for a partition-worker permit (admission to synthesis start).
    pub backlog_wait_mean_s: f64,
    /// Time-average number of admitted partitions waiting for a permit.
    pub backlog_len_mean: f64,
    /// GPU-lock acquisitions that had to wait, and their total wait.
    pub lock_waits: u64,
    pub lock_wait_total_s: f64,
    /// Time-average number of GPU workers waiting for a lock (all devices and locks).
    pub lock_queue_len_mean: f64,
    pub floors: Floors,
    /// Events the DES core processed.
    pub events: u64,
    /// With `[[mix]]`: SRS/PCE loads and evictions, and the figures per proof type; absent
    /// for one proof type resident from the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<MixResult>,
}

/// What the on-demand residency of a mix did (`[[mix]]`, `simulator::pipeline::residency`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MixResult {
    /// SRS and PCE loads (each entry loaded counts one: a type loaded once is 2).
    pub loads: u64,
    /// Entries evicted to make room for another type's.
    pub evictions: u64,
    /// Time spent loading, summed over the loads (side-by-side loads each count), s.
    pub load_total_s: f64,
    /// Load requests that waited for room (nothing evictable yet).
    pub load_waits: u64,
    /// Their total wait (`ram_wait` spans without a job), s.
    pub load_wait_total_s: f64,
    /// Per proof type, in `[[mix]]` order.
    pub types: Vec<TypeResult>,
}

/// The figures of one proof type of a mix.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TypeResult {
    /// The type's name (`[[mix]]` `name`).
    pub name: String,
    /// Its proofs in the run, and those completed.
    pub proofs: u32,
    pub proofs_completed: u32,
    /// The type's last completion (from t = 0) ÷ its completed proofs, s.
    pub total_s_per_proof: f64,
    /// (last − first completion of the type) ÷ (its completed proofs − 1); with one proof,
    /// its total.
    pub steady_state_s_per_proof: f64,
    /// First synthesis start to completion, mean over the type's proofs, s.
    pub latency_mean_s: f64,
    /// Its SRS/PCE loads (each entry counts one).
    pub loads: u64,
    /// Its entries evicted.
    pub evictions: u64,
    /// Its loading time, summed over its loads, s.
    pub load_total_s: f64,
}

impl SimResult {
    /// GPU union utilisation of the busiest device.
    pub fn busiest_gpu_utilization(&self) -> f64 {
        self.gpus.iter().map(|g| g.gpu_utilization).fold(0.0, f64::max)
    }

    /// A terminal-friendly report.
    pub fn render_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "scenario        {}", if self.name.is_empty() { "(unnamed)" } else { &self.name });
        match &self.failure {
            Some(f) => {
                let _ = writeln!(s, "feasible        NO: {} at t = {:.1} s ({})", f.kind, f.t_s, f.detail);
            }
            None => {
                let _ = writeln!(s, "feasible        yes");
            }
        }
        let _ = writeln!(s, "proofs          {} of {} completed in {:.1} s", self.proofs_completed, self.proofs, self.makespan_s);
        if self.proofs_completed > 0 {
            let _ = writeln!(s, "s/proof         {:.2} steady state, {:.2} total", self.steady_state_s_per_proof, self.total_s_per_proof);
            let _ = writeln!(s, "latency         {:.1} s mean, {:.1} s max", self.latency_mean_s, self.latency_max_s);
            if let Some(iv) = &self.interval {
                let (t, st) = (&iv.total_s_per_proof, &iv.steady_state_s_per_proof);
                let _ = writeln!(
                    s,
                    "80% interval    total {:.2}–{:.2}, steady {:.2}–{:.2} s/proof ({} replications, p50 {:.2} / {:.2}, run spread {:.1}%, model error {:.1}%)",
                    t.lo,
                    t.hi,
                    st.lo,
                    st.hi,
                    iv.replications,
                    t.p50,
                    st.p50,
                    100.0 * iv.run_spread,
                    100.0 * iv.model_error
                );
            }
        } else {
            let _ = writeln!(s, "s/proof         n/a (no proof completed)");
        }
        for g in &self.gpus {
            let _ = writeln!(
                s,
                "gpu {}           union {:.1}% (whole run {:.1}%), kernels {:.1}%, lock held {:.1}%, pcie {:.1}%, peak VRAM {:.1} GiB",
                g.device,
                100.0 * g.gpu_utilization,
                100.0 * g.gpu_utilization_run,
                100.0 * g.kernel_utilization,
                100.0 * g.lock_hold,
                100.0 * g.pcie_util,
                g.peak_vram_gib
            );
        }
        if self.vram_waits > 0 {
            let _ = writeln!(s, "vram waits      {} calls waited {:.1} s in all for device memory", self.vram_waits, self.vram_wait_total_s);
        }
        for n in &self.vram_notes {
            let _ = writeln!(s, "device memory   {n}");
        }
        let _ = writeln!(s, "cpu             {:.1}% of the cores' capacity, {:.1}% of memory bandwidth", 100.0 * self.cpu_util, 100.0 * self.bandwidth_util);
        let _ = writeln!(s, "workers         pw busy {:.1}%, gw busy {:.1}%", 100.0 * self.pw_util, 100.0 * self.gw_util);
        match (self.ram_budget_gib, self.peak_reserved_gib) {
            (Some(b), Some(r)) => {
                let _ = writeln!(s, "peak RAM        {:.1} GiB reserved of a {:.1} GiB budget; {} syntheses waited {:.1} s in all for RAM", r, b, self.ram_waits, self.ram_wait_total_s);
            }
            _ => {
                let _ = writeln!(s, "peak RAM        {:.1} GiB", self.peak_ram_gib);
                if self.ram_waits > 0 {
                    let _ = writeln!(s, "ram waits       {} syntheses waited {:.1} s in all for RAM", self.ram_waits, self.ram_wait_total_s);
                }
            }
        }
        let _ = writeln!(
            s,
            "phases          synthesis {:.2} s, GPU call {:.2} s, queue wait {:.2} s (mean queue {:.2})",
            self.synth_mean_s, self.gpu_call_mean_s, self.queue_wait_mean_s, self.queue_len_mean
        );
        let _ = writeln!(
            s,
            "queues          permit wait {:.2} s (mean backlog {:.2}), lock waits {} totalling {:.1} s (mean waiting {:.2})",
            self.backlog_wait_mean_s, self.backlog_len_mean, self.lock_waits, self.lock_wait_total_s, self.lock_queue_len_mean
        );
        if let Some(m) = &self.mix {
            let _ = writeln!(
                s,
                "residency       {} SRS/PCE loads ({:.1} s loading), {} evictions, {} loads waited {:.1} s in all for room",
                m.loads, m.load_total_s, m.evictions, m.load_waits, m.load_wait_total_s
            );
            for t in &m.types {
                let _ = writeln!(
                    s,
                    "  {:<13} {} of {} proofs, {:.2} s/proof steady, {:.2} total, latency {:.1} s; {} loads, {} evictions",
                    t.name, t.proofs_completed, t.proofs, t.steady_state_s_per_proof, t.total_s_per_proof, t.latency_mean_s, t.loads, t.evictions
                );
            }
        }
        let f = &self.floors;
        let _ = writeln!(s, "floors          theoretical {:.2} s/proof (binding: {}), practical {:.2} s/proof (binding: {})", f.theoretical_s_per_proof, f.theoretical_binding, f.practical_s_per_proof, f.practical_binding);
        let _ = writeln!(s, "verdict         {}", f.verdict);
        let _ = writeln!(s, "demand/proof    {}", f.resources.iter().map(|r| format!("{} {:.2} s", r.name, r.s_per_proof)).collect::<Vec<_>>().join(", "));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_results_written_with_the_old_field_names() {
        let r = SimResult { steady_state_s_per_proof: 1.5, gpus: vec![GpuUtil { gpu_utilization: 0.5, gpu_utilization_run: 0.4, kernel_utilization: 0.3, ..Default::default() }], ..Default::default() };
        let text = serde_json::to_string(&r)
            .unwrap()
            .replace("\"steady_state_s_per_proof\"", "\"steady_s_per_proof\"")
            .replace("\"gpu_utilization\"", "\"union_util\"")
            .replace("\"gpu_utilization_run\"", "\"union_util_run\"")
            .replace("\"kernel_utilization\"", "\"kernel_util\"");
        assert!(text.contains("\"union_util_run\"") && !text.contains("steady_state"), "{text}");
        assert_eq!(serde_json::from_str::<SimResult>(&text).unwrap(), r);
    }
}
