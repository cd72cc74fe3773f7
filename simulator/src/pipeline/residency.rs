//! On-demand residency of each proof type's SRS and PCE (`[[mix]]`), as the cuzk daemon's
//! memory manager keeps them (shared/reference/cuzk-daemon.md, "The memory manager"):
//!
//! - nothing is resident at t = 0; a proof is admitted as before, and its partitions join
//!   the synthesis backlog only once both entries of its type (SRS, PCE) are resident;
//! - the first proof of a type that is missing an entry requests the type's missing entries
//!   together: they reserve their sizes from the one budget (`memory.total_budget`, else
//!   the machine's RAM) and load side by side (`srs_load_s`, `pce_load_s`: a fixed time each,
//!   no disk or CPU sharing); the type is resident when the later of them ends;
//! - when they do not fit, idle entries — of a type no admitted, unfinished proof uses,
//!   idle (since that type's last proof finished) for at least `memory.eviction_min_idle` —
//!   are evicted oldest idle first (ties: SRS before PCE, earlier types first), as many as
//!   needed and only if enough of them free the room; otherwise the request waits (a
//!   `ram_wait` span without a job) and is retried whenever memory is released or an idle
//!   entry becomes old enough to evict;
//! - waiting requests are retried in the order they were made, before any synthesis takes
//!   the memory just released; a request that still does not fit does not hold back the
//!   ones behind it, nor the syntheses of resident types.
//!
//! Recorded: each load as a `pce_build` span (no job: one-time work; args `what` = `srs` |
//! `pce`, `proof_type`, `bytes`, `source` = `disk`: the PCE's own kind, and for the SRS the
//! same kind, the host-side load the synthesis waits for — not `h2d`, which is device work),
//! each eviction as the `rss_bytes` drop and an entry of the meta's `extra.residency`, and
//! each synthesis span with the arg `kind` = its proof type (what the analyzer reads).

use std::collections::VecDeque;

use timeline::{Span, SpanKind};

use super::{ns, Ev, Sim, GIB};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Absent,
    Loading,
    Resident,
}

/// One SRS or PCE of one type.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub ty: u16,
    pub srs: bool,
    pub gib: f64,
    pub load_ns: u64,
    pub state: State,
    pub load_start: u64,
    /// When the type's last proof finished (meaningful while no proof uses it).
    pub idle_since: u64,
}

#[derive(Clone, Debug, Default)]
pub(super) struct TypeState {
    /// Admitted proofs of the type not yet finished (the entries' users).
    pub users: u32,
    /// Admitted proofs waiting for the type's entries (their partitions are not in the backlog).
    pub waiting: VecDeque<u32>,
    /// Since when its request has been waiting for room.
    pub wait_since: Option<u64>,
    pub loads: u64,
    pub evictions: u64,
    pub load_ns: u64,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Residency {
    /// 2t: type t's SRS, 2t + 1: its PCE.
    pub entries: Vec<Entry>,
    pub types: Vec<TypeState>,
    /// Each proof's type.
    pub proof_type: Vec<u16>,
    /// Types with entries to load, in request order.
    pub requests: VecDeque<u16>,
    /// The earliest pending retry (an idle entry becoming old enough to evict).
    pub retry_at: Option<u64>,
    pub min_idle_ns: u64,
    pub loads: u64,
    pub evictions: u64,
    pub load_ns: u64,
    pub load_waits: u64,
    pub load_wait_ns: u64,
    /// (t ns, type, srs) of every eviction, for the meta.
    pub evicted: Vec<(u64, u16, bool)>,
}

impl Residency {
    pub(super) fn new(cfg: &crate::Config) -> Option<Residency> {
        if cfg.mix.is_empty() {
            return None;
        }
        let mut entries = Vec::with_capacity(2 * cfg.mix.len());
        for (t, m) in cfg.mix.iter().enumerate() {
            for (srs, gib, load) in [(true, m.srs_gib, m.srs_load_s), (false, m.pce_gib, m.pce_load_s)] {
                entries.push(Entry { ty: t as u16, srs, gib, load_ns: ns(load), state: State::Absent, load_start: 0, idle_since: 0 });
            }
        }
        Some(Residency {
            entries,
            types: vec![TypeState::default(); cfg.mix.len()],
            proof_type: cfg.proof_types(),
            min_idle_ns: ns(cfg.eviction_min_idle_s()),
            ..Residency::default()
        })
    }

    pub(super) fn resident(&self, ty: u16) -> bool {
        self.entries[2 * ty as usize..2 * ty as usize + 2].iter().all(|e| e.state == State::Resident)
    }

    fn evictable(&self, i: usize, now: u64) -> bool {
        let e = &self.entries[i];
        e.state == State::Resident && self.types[e.ty as usize].users == 0 && now >= e.idle_since.saturating_add(self.min_idle_ns)
    }
}

fn what(srs: bool) -> &'static str {
    if srs {
        "srs"
    } else {
        "pce"
    }
}

impl Sim<'_> {
    /// A proof of a mix was admitted (its partitions sampled, not yet in the backlog): it
    /// uses its type's entries from now on; its partitions join the backlog now if the type
    /// is resident, else when its loads end.
    pub(super) fn mix_admitted(&mut self, proof: u32) {
        let Some(r) = self.res.as_mut() else { return };
        let ty = self.proofs[proof as usize].ty;
        r.types[ty as usize].users += 1;
        if r.resident(ty) {
            self.join_backlog(proof);
            return;
        }
        r.types[ty as usize].waiting.push_back(proof);
        let missing = r.entries[2 * ty as usize..2 * ty as usize + 2].iter().any(|e| e.state == State::Absent);
        if missing && !r.requests.contains(&ty) {
            r.requests.push_back(ty);
        }
    }

    /// The proof's partitions join the synthesis backlog (ready from now).
    pub(super) fn join_backlog(&mut self, proof: u32) {
        let now = self.now();
        let pr = &self.proofs[proof as usize];
        for pi in pr.first_part..pr.first_part + pr.partitions {
            self.parts[pi as usize].ready = now;
            self.backlog.push_back(pi);
        }
        self.backlog_len.set(now, self.backlog.len() as f64);
    }

    /// A proof of a mix finished: when it was its type's last user, the type's entries are
    /// idle from now (and may be evicted `eviction_min_idle` later).
    pub(super) fn mix_proof_done(&mut self, proof: u32) {
        let now = self.now();
        let ty = self.proofs[proof as usize].ty as usize;
        let Some(r) = self.res.as_mut() else { return };
        r.types[ty].users -= 1;
        if r.types[ty].users == 0 {
            for e in &mut r.entries[2 * ty..2 * ty + 2] {
                e.idle_since = now;
            }
        }
    }

    /// Try every waiting request, oldest first (called before syntheses take memory).
    pub(super) fn try_loads(&mut self) {
        let Some(r) = self.res.as_ref() else { return };
        if r.requests.is_empty() {
            return;
        }
        let mut i = 0;
        while i < self.res.as_ref().map_or(0, |r| r.requests.len()) {
            let ty = self.res.as_ref().unwrap().requests[i];
            if self.reserve_type(ty) {
                self.res.as_mut().unwrap().requests.remove(i);
            } else {
                i += 1;
            }
        }
        self.schedule_retry();
    }

    /// Reserve and start loading `ty`'s absent entries if they fit, evicting idle entries
    /// (oldest idle first) when that makes them fit; false: they wait.
    fn reserve_type(&mut self, ty: u16) -> bool {
        let now = self.now();
        let r = self.res.as_ref().unwrap();
        let mine = 2 * ty as usize..2 * ty as usize + 2;
        let need: f64 = r.entries[mine.clone()].iter().filter(|e| e.state == State::Absent).map(|e| e.gib).sum();
        if !self.make_room(need, Some(ty)) {
            let t = &mut self.res.as_mut().unwrap().types[ty as usize];
            t.wait_since.get_or_insert(now);
            return false;
        }
        let since = self.res.as_mut().unwrap().types[ty as usize].wait_since.take();
        if let Some(since) = since {
            let r = self.res.as_mut().unwrap();
            r.load_waits += 1;
            r.load_wait_ns = r.load_wait_ns.saturating_add(now - since);
            if self.record {
                let name = self.cfg.mix[ty as usize].name.clone();
                let missing: Vec<&str> = r.entries[mine.clone()].iter().filter(|e| e.state == State::Absent).map(|e| what(e.srs)).collect();
                let s = Span::new(SpanKind::RamWait, since, now)
                    .arg(timeline::event::arg::WHAT, missing.join("+"))
                    .arg("proof_type", name)
                    .arg(timeline::event::arg::BYTES, (need * GIB).round() as u64);
                self.spans.push(s);
            }
        }
        for i in mine {
            let e = &mut self.res.as_mut().unwrap().entries[i];
            if e.state != State::Absent {
                continue;
            }
            e.state = State::Loading;
            e.load_start = now;
            let (gib, load) = (e.gib, e.load_ns);
            self.ram_change(gib);
            self.agenda.after(load, Ev::Loaded(i as u32));
        }
        true
    }

    /// Make room for `need` GiB more within the budget (the machine's RAM without one): true
    /// when it fits already, or after evicting idle entries (not of type `keep`; oldest idle
    /// first, ties by SRS then PCE, types in `[[mix]]` order) — only as many as needed, and
    /// none when even all of them would not make it fit. Syntheses of a mix call it too: a
    /// partition's reservation under pressure evicts idle entries as a load's does.
    pub(super) fn make_room(&mut self, need: f64, keep: Option<u16>) -> bool {
        let now = self.now();
        let limit = self.cfg.ram_limit_gib();
        if self.ram_used + need <= limit + 1e-9 {
            return true;
        }
        let Some(r) = self.res.as_ref() else { return false };
        let mut idle: Vec<usize> = (0..r.entries.len()).filter(|&i| Some(r.entries[i].ty) != keep && r.evictable(i, now)).collect();
        idle.sort_by_key(|&i| (r.entries[i].idle_since, i));
        let mut freed = 0.0;
        let mut victims = Vec::new();
        for i in idle {
            if self.ram_used - freed + need <= limit + 1e-9 {
                break;
            }
            freed += r.entries[i].gib;
            victims.push(i);
        }
        if self.ram_used - freed + need > limit + 1e-9 {
            return false;
        }
        for i in victims {
            let r = self.res.as_mut().unwrap();
            let e = &mut r.entries[i];
            e.state = State::Absent;
            let (gib, ty, srs) = (e.gib, e.ty, e.srs);
            r.evictions += 1;
            r.types[ty as usize].evictions += 1;
            r.evicted.push((now, ty, srs));
            self.ram_change(-gib);
        }
        true
    }

    /// When loads or a synthesis still wait for room and an idle entry is not yet old
    /// enough to evict, look again when it is.
    pub(super) fn schedule_retry(&mut self) {
        let now = self.now();
        let Some(r) = self.res.as_ref() else { return };
        if r.requests.is_empty() && self.ram_wait_since.is_none() {
            return;
        }
        let next = r
            .entries
            .iter()
            .filter(|e| e.state == State::Resident && r.types[e.ty as usize].users == 0)
            .map(|e| e.idle_since.saturating_add(r.min_idle_ns))
            .filter(|&t| t > now)
            .min();
        if let Some(t) = next {
            if r.retry_at.is_none_or(|at| at <= now || t < at) {
                self.res.as_mut().unwrap().retry_at = Some(t);
                self.agenda.at(t, Ev::Retry);
            }
        }
    }

    pub(super) fn retry(&mut self) {
        let now = self.now();
        if let Some(r) = self.res.as_mut() {
            if r.retry_at.is_some_and(|t| t <= now) {
                r.retry_at = None;
            }
        }
        self.start_syntheses();
    }

    /// An entry finished loading; when its type is resident, its waiting proofs' partitions
    /// join the backlog.
    pub(super) fn loaded(&mut self, i: u32) {
        let now = self.now();
        let r = self.res.as_mut().unwrap();
        let e = &mut r.entries[i as usize];
        e.state = State::Resident;
        e.idle_since = now;
        let (ty, srs, gib, start) = (e.ty, e.srs, e.gib, e.load_start);
        r.loads += 1;
        r.load_ns = r.load_ns.saturating_add(now - start);
        let t = &mut r.types[ty as usize];
        t.loads += 1;
        t.load_ns = t.load_ns.saturating_add(now - start);
        if self.record {
            let s = Span::new(SpanKind::PceBuild, start, now)
                .arg(timeline::event::arg::WHAT, what(srs))
                .arg("proof_type", self.cfg.mix[ty as usize].name.clone())
                .arg(timeline::event::arg::BYTES, (gib * GIB).round() as u64)
                .arg("source", "disk");
            self.spans.push(s);
        }
        if r.resident(ty) {
            let waiting = std::mem::take(&mut r.types[ty as usize].waiting);
            for proof in waiting {
                self.join_backlog(proof);
            }
        }
        self.start_syntheses();
    }

    /// After the run: proofs left unfinished by a mix whose requests can no longer be
    /// served (nothing left to release or evict) end the run as `stalled`, naming them.
    pub(super) fn check_stalled(&mut self) {
        let Some(r) = self.res.as_ref() else { return };
        if self.failure.is_some() || self.proofs.iter().all(|p| p.done.is_some()) {
            return;
        }
        let limit = self.cfg.ram_limit_gib();
        let waiting: Vec<String> = r
            .types
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.waiting.is_empty())
            .map(|(ty, t)| {
                let need: f64 = r.entries[2 * ty..2 * ty + 2].iter().filter(|e| e.state == State::Absent).map(|e| e.gib).sum();
                format!("{} ({} proofs waiting for {need:.1} GiB of SRS/PCE)", self.cfg.mix[ty].name, t.waiting.len())
            })
            .collect();
        let held: Vec<String> = r
            .entries
            .iter()
            .filter(|e| e.state != State::Absent)
            .map(|e| format!("{} {} {:.1} GiB", self.cfg.mix[e.ty as usize].name, what(e.srs), e.gib))
            .collect();
        let detail = format!(
            "{} with {:.1} of {limit:.1} GiB in use ({}): nothing left to release or evict",
            if waiting.is_empty() { "proofs unfinished".to_string() } else { waiting.join(", ") },
            self.ram_used,
            if held.is_empty() { "no SRS/PCE resident".to_string() } else { held.join(", ") }
        );
        self.fail("stalled", detail);
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse_duration_s;
    use crate::{simulate, Config, Options, SimResult};

    /// One GPU, one worker of each kind, one proof at a time, one partition per proof:
    /// synthesis 1 s, then a GPU call of 0.5 s (kernels only, nothing else costs), so a
    /// proof takes 1.5 s once its type is resident. Budget 70 GiB, 10 GiB per partition.
    const TINY: &str = r#"
name = "tiny"
[machine]
cpu_cores = 8
mem_bandwidth_gbs = 100
ram_gib = 1000
gpus = 1
vram_gib = 80
pcie_gbs = 25
[pipeline]
proofs = 4
in_flight = 1
partitions = 1
pw = 1
gw = 1
lock = "whole"
[memory]
baseline_gib = 0
partition_gib = 10
total_budget = "70GiB"
[costs]
synth = 1000
prep_msm = 0
ntt_msm_h = 500
batch_add = 0
tail_msm = 0
b_g2_msm = 0
"#;

    /// A: SRS 40 GiB (10 s), PCE 20 GiB (4 s); B: SRS 45 GiB (8 s), PCE 15 GiB (6 s).
    /// Each type's 60 GiB + one 10 GiB partition fill the 70 GiB budget: both types'
    /// entries (120 GiB) never fit together.
    const AB: &str = r#"
[[mix]]
name = "type-a"
srs_gib = 40
pce_gib = 20
srs_load_s = 10
pce_load_s = 4
[[mix]]
name = "type-b"
srs_gib = 45
pce_gib = 15
srs_load_s = 8
pce_load_s = 6
"#;

    fn cfg(text: &str) -> Config {
        Config::from_toml_str(text, "test.toml").unwrap()
    }

    fn run(c: &Config) -> SimResult {
        simulate(c, Options::default()).result
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn mix_shares_interleave_by_smooth_weighted_round_robin() {
        let mut c = cfg(&format!("{TINY}{AB}"));
        c.pipeline.proofs = 6;
        assert_eq!(c.proof_types(), vec![0, 1, 0, 1, 0, 1]);
        c.mix[0].share = 2.0;
        assert_eq!(c.proof_types(), vec![0, 1, 0, 0, 1, 0]);
        c.mix.truncate(1);
        assert_eq!(c.proof_types(), vec![0; 6]);
    }

    #[test]
    fn mix_durations_parse_as_the_daemon_writes_them() {
        assert_eq!(parse_duration_s("5m"), Ok(300.0));
        assert_eq!(parse_duration_s("1h30m"), Ok(5400.0));
        assert_eq!(parse_duration_s("90s"), Ok(90.0));
        assert_eq!(parse_duration_s("500ms"), Ok(0.5));
        assert_eq!(parse_duration_s("42"), Ok(42.0));
        assert!(parse_duration_s("5 parsecs").is_err() && parse_duration_s("").is_err() && parse_duration_s("-3").is_err());
        let c = cfg(&format!("{TINY}{AB}").replace("[memory]\n", "[memory]\neviction_min_idle = \"2m\"\n"));
        assert_eq!(c.eviction_min_idle_s(), 120.0);
        // Written back as seconds, read back the same.
        assert_eq!(Config::from_toml_str(&c.to_toml(), "back.toml").unwrap(), c);
        assert_eq!(cfg(TINY).eviction_min_idle_s(), 300.0);
        // --set / --vary by its dotted path, as a number or a duration.
        let mut c = cfg(TINY);
        c.set("memory.eviction_min_idle", "0").unwrap();
        assert_eq!(c.eviction_min_idle_s(), 0.0);
        c.set("memory.eviction_min_idle", "10m").unwrap();
        assert_eq!(c.eviction_min_idle_s(), 600.0);
        assert!(c.set("memory.eviction_min_idle", "later").is_err());
    }

    /// (a) One type given as a one-entry mix: the same run as with its SRS and PCE resident
    /// from the start, shifted by the load (the longer of the two loads, 45 s): everything
    /// measured between events is equal, the makespan is 45 s longer, and the figures
    /// averaged over the whole run [0, makespan] are the same integrals over a longer run.
    #[test]
    fn mix_of_one_type_is_the_single_type_run_shifted_by_the_load() {
        let base = r#"
name = "one"
[machine]
cpu_cores = 32
mem_bandwidth_gbs = 200
ram_gib = 512
gpus = 1
vram_gib = 80
pcie_gbs = 25
[pipeline]
proofs = 3
in_flight = 2
partitions = 3
pw = 4
gw = 2
lock = "kernels"
split_finalize = true
[memory]
baseline_gib = 5
params_gib = 44
pce_gib = 26
partition_gib = 13.6
abc_gib = 12.5
early_release = true
total_budget = "150GiB"
[costs]
synth = 30000
prep_msm = 1500
ntt_msm_h = 2430
batch_add = 640
tail_msm = 125
b_g2_msm = 380
epilogue = 320
[cpu]
synth_cores = 4
prep_cores = 4
finalize_cores = 4
"#;
        let single = cfg(base);
        let mix_text = base.replace("params_gib = 44\npce_gib = 26\n", "")
            + "[[mix]]\nname = \"porep-c2\"\nsrs_gib = 44\npce_gib = 26\nsrs_load_s = 45\npce_load_s = 5\n";
        let mixed = cfg(&mix_text);
        let (a, b) = (run(&single), run(&mixed));
        assert!(a.feasible && b.feasible);
        assert!(a.ram_waits > 0, "the budget binds (70 GiB resident, 80 GiB for 5.9 partitions)");
        let m = b.mix.as_ref().unwrap();
        assert_eq!((m.loads, m.evictions, m.load_waits), (2, 0, 0));
        assert!(close(m.load_total_s, 50.0), "45 s SRS + 5 s PCE side by side");
        assert!(close(b.makespan_s, a.makespan_s + 45.0), "{} vs {} + 45", b.makespan_s, a.makespan_s);
        assert!(close(b.total_s_per_proof, a.total_s_per_proof + 45.0 / 3.0));
        for (x, y, what) in [
            (a.steady_state_s_per_proof, b.steady_state_s_per_proof, "steady"),
            (a.steady_partitions_s_per_proof, b.steady_partitions_s_per_proof, "steady from partitions"),
            (a.latency_mean_s, b.latency_mean_s, "latency (from the first synthesis)"),
            (a.latency_max_s, b.latency_max_s, "latency max"),
            (a.synth_mean_s, b.synth_mean_s, "synthesis"),
            (a.gpu_call_mean_s, b.gpu_call_mean_s, "GPU call"),
            (a.queue_wait_mean_s, b.queue_wait_mean_s, "queue wait"),
            (a.backlog_wait_mean_s, b.backlog_wait_mean_s, "permit wait"),
            (a.ram_wait_total_s, b.ram_wait_total_s, "RAM waits"),
            (a.peak_ram_gib, b.peak_ram_gib, "peak reserved"),
            (a.gpus[0].gpu_utilization, b.gpus[0].gpu_utilization, "GPU union over its active window"),
            (a.gpus[0].kernel_utilization, b.gpus[0].kernel_utilization, "kernels over the window"),
            (a.gpus[0].gpu_utilization_run * a.makespan_s, b.gpus[0].gpu_utilization_run * b.makespan_s, "GPU busy seconds"),
            (a.cpu_util * a.makespan_s, b.cpu_util * b.makespan_s, "core-seconds"),
            (a.pw_util * a.makespan_s, b.pw_util * b.makespan_s, "permit-seconds"),
            (a.gw_util * a.makespan_s, b.gw_util * b.makespan_s, "GPU-worker-seconds"),
        ] {
            assert!(close(x, y), "{what}: {x} vs {y}");
        }
        assert_eq!(a.ram_waits, b.ram_waits);
        assert_eq!(a.floors, b.floors, "one type at scale 1: the same floors");
        // The single-type result has no mix section (its JSON is unchanged).
        assert!(a.mix.is_none() && !serde_json::to_string(&a).unwrap().contains("\"mix\""));
    }

    /// (b) A, B, A, B one at a time, eviction allowed at once (`eviction_min_idle = 0`):
    /// every switch evicts both entries of the other type (the first eviction, 40 or 45 GiB,
    /// leaves 80 or 75 GiB needed of 70) and loads both of its own. Makespan by hand:
    /// load A 10 s (the longer of 10 and 4) + 1.5, load B 8 s (of 8 and 6) + 1.5, twice:
    /// 2 × 10 + 2 × 8 + 4 × 1.5 = 42 s. Loads 8 (2 per proof), evictions 6 (3 switches × 2:
    /// A twice, B once), loading time 2 × (10 + 4) + 2 × (8 + 6) = 56 s.
    #[test]
    fn mix_alternating_types_that_cannot_both_fit_evict_and_reload_at_every_switch() {
        let c = cfg(&format!("{TINY}{AB}").replace("[memory]\n", "[memory]\neviction_min_idle = 0\n"));
        let r = run(&c);
        assert!(r.feasible, "{:?}", r.failure);
        assert!(close(r.makespan_s, 42.0), "{}", r.makespan_s);
        let m = r.mix.as_ref().unwrap();
        assert_eq!((m.loads, m.evictions, m.load_waits), (8, 6, 0));
        assert!(close(m.load_total_s, 56.0), "{}", m.load_total_s);
        let (a, b) = (&m.types[0], &m.types[1]);
        assert_eq!((a.name.as_str(), a.proofs, a.proofs_completed, a.loads, a.evictions), ("type-a", 2, 2, 4, 4));
        assert_eq!((b.name.as_str(), b.proofs, b.proofs_completed, b.loads, b.evictions), ("type-b", 2, 2, 4, 2));
        // A's proofs end at 10 + 1.5 = 11.5 and 21 + 10 + 1.5 = 32.5; B's at 21 and 42.
        assert!(close(a.steady_state_s_per_proof, 32.5 - 11.5) && close(a.total_s_per_proof, 32.5 / 2.0));
        assert!(close(b.steady_state_s_per_proof, 42.0 - 21.0) && close(b.total_s_per_proof, 42.0 / 2.0));
        assert!(close(a.latency_mean_s, 1.5) && close(b.latency_mean_s, 1.5), "latency runs from the first synthesis");
        assert!(r.peak_ram_gib <= 70.0 + 1e-9, "{}", r.peak_ram_gib);
        // With room for both types (130 GiB), nothing is evicted and each loads once: 10 +
        // 1.5 + 8 + 1.5 + 1.5 + 1.5 = 24 s.
        let mut roomy = c.clone();
        roomy.memory.total_budget = Some("130GiB".parse().unwrap());
        let r = run(&roomy);
        let m = r.mix.as_ref().unwrap();
        assert_eq!((m.loads, m.evictions), (4, 0));
        assert!(close(r.makespan_s, 24.0), "{}", r.makespan_s);
    }

    /// (c) The same two types with `eviction_min_idle` (1000 s) longer than the whole run
    /// would otherwise last (21 s for A then B): A's entries are idle from A's proof's end
    /// (11.5 s) but may not be evicted before 11.5 + 1000 s, and nothing else can release
    /// memory, so B's load waits until then (one `ram_wait` of 1000 s), evicts both of A's
    /// entries and loads: B ends at 1011.5 + 8 + 1.5 = 1021 s.
    #[test]
    fn mix_second_type_waits_until_the_first_may_be_evicted() {
        let mut c = cfg(&format!("{TINY}{AB}").replace("[memory]\n", "[memory]\neviction_min_idle = \"1000s\"\n"));
        c.pipeline.proofs = 2;
        let out = simulate(&c, Options { record: true });
        let r = &out.result;
        assert!(r.feasible, "{:?}", r.failure);
        assert!(close(r.makespan_s, 1021.0), "{}", r.makespan_s);
        let m = r.mix.as_ref().unwrap();
        assert_eq!((m.loads, m.evictions, m.load_waits), (4, 2, 1));
        assert!(close(m.load_wait_total_s, 1000.0), "{}", m.load_wait_total_s);
        assert_eq!(r.ram_waits, 0, "no synthesis waited: the load did");
        // In the timeline: the wait is a ram_wait without a job, from 11.5 s to 1011.5 s.
        let run = out.run.unwrap();
        let waits: Vec<_> = run.spans.iter().filter(|s| s.kind == timeline::SpanKind::RamWait).collect();
        assert_eq!(waits.len(), 1);
        assert_eq!((waits[0].start_ns, waits[0].end_ns, waits[0].job.as_deref()), (11_500_000_000, Some(1_011_500_000_000), None));
        assert_eq!(waits[0].args.get("proof_type").and_then(|v| v.as_str()), Some("type-b"));
    }

    /// A synthesis under pressure evicts idle entries too: A (30 + 10 GiB) then B (30 + 10
    /// GiB) with 25 GiB partitions in 100 GiB: B's entries fit beside A's (80 GiB), B's
    /// partition does not (105): it evicts A's SRS (the oldest idle entry, 30 GiB), nothing
    /// waits. 10 + 1.5 + 8 + 1.5 = 21 s.
    #[test]
    fn mix_synthesis_reservation_evicts_idle_entries() {
        let text = format!("{TINY}{AB}")
            .replace("srs_gib = 40", "srs_gib = 30")
            .replace("pce_gib = 20", "pce_gib = 10")
            .replace("srs_gib = 45", "srs_gib = 30")
            .replace("pce_gib = 15", "pce_gib = 10")
            .replace("partition_gib = 10", "partition_gib = 25")
            .replace("\"70GiB\"", "\"100GiB\"")
            .replace("[memory]\n", "[memory]\neviction_min_idle = 0\n");
        let mut c = cfg(&text);
        c.pipeline.proofs = 2;
        let out = simulate(&c, Options { record: true });
        let r = &out.result;
        assert!(close(r.makespan_s, 21.0), "{}", r.makespan_s);
        let m = r.mix.as_ref().unwrap();
        assert_eq!((m.loads, m.evictions, m.load_waits, r.ram_waits), (4, 1, 0, 0));
        let ev = &out.run.unwrap().meta.extra["residency"]["evictions"];
        assert_eq!((ev[0]["proof_type"].as_str(), ev[0]["what"].as_str(), ev[0]["t_s"].as_f64()), (Some("type-a"), Some("srs"), Some(19.5)));
        // Peak: both types' entries while B loads (80); then A's PCE 10 + B's 40 + 25 = 75.
        assert!(close(r.peak_ram_gib, 80.0), "{}", r.peak_ram_gib);
    }

    /// (d) A type whose SRS and PCE alone exceed the budget: refused by name when the config
    /// is validated; simulated anyway, the run ends `stalled` naming it — never a hang.
    #[test]
    fn mix_type_that_can_never_fit_is_refused_by_name_and_never_hangs() {
        let text = format!("{TINY}{AB}").replace("srs_gib = 45", "srs_gib = 65");
        let e = Config::from_toml_str(&text, "big.toml").unwrap_err().to_string();
        assert!(e.contains("mix[1] (type-b)") && e.contains("no proof of this type could ever start"), "{e}");
        // Bypass validation: A runs, B can never load.
        let mut c = cfg(&format!("{TINY}{AB}"));
        c.mix[1].srs_gib = 65.0;
        let r = run(&c);
        assert!(!r.feasible);
        let f = r.failure.as_ref().unwrap();
        assert_eq!(f.kind, "stalled");
        assert!(f.detail.contains("type-b"), "{}", f.detail);
        assert_eq!(r.proofs_completed, 1, "A's first proof ran, B's never started (in_flight 1)");
    }

    #[test]
    fn mix_validation_names_the_field() {
        for (from, to, field) in [
            ("name = \"type-b\"", "name = \"type-a\"", "mix[1].name"),
            ("name = \"type-b\"", "name = \" \"", "mix[1].name"),
            ("srs_load_s = 8", "srs_load_s = -1", "mix[1].srs_load_s (type-b)"),
            ("pce_gib = 15", "pce_gib = 15\nshare = 0", "mix[1].share (type-b)"),
            ("pce_gib = 15", "pce_gib = 15\npartitions = 0", "mix[1].partitions (type-b)"),
            ("pce_gib = 15", "pce_gib = 15\nsynth_scale = -2", "mix[1].synth_scale (type-b)"),
            ("[memory]\n", "[memory]\nparams_gib = 44\n", "memory.params_gib"),
            ("[memory]\n", "[memory]\neviction_min_idle = 1e12\n", "memory.eviction_min_idle"),
        ] {
            let text = format!("{TINY}{AB}").replacen(from, to, 1);
            let e = Config::from_toml_str(&text, "bad.toml").unwrap_err().to_string();
            assert!(e.contains(field), "{to}: {e}");
        }
        let e = Config::from_toml_str(&format!("{TINY}{AB}").replace("[memory]\n", "[memory]\neviction_min_idle = \"soon\"\n"), "bad.toml").unwrap_err().to_string();
        assert!(e.contains("soon"), "{e}");
    }

    /// The example config (simulator/configs/mix-porep-wpost.toml) runs: 12 PoRep C2 and 4
    /// WindowPoSt proofs, each type loaded at least once.
    #[test]
    fn mix_example_config_runs() {
        let c = Config::from_toml_str(include_str!("../../configs/mix-porep-wpost.toml"), "mix-porep-wpost.toml").unwrap();
        let r = run(&c);
        assert!(r.feasible, "{:?}", r.failure);
        let m = r.mix.as_ref().unwrap();
        assert_eq!(m.types.iter().map(|t| (t.name.as_str(), t.proofs_completed)).collect::<Vec<_>>(), vec![("porep-c2", 12), ("window-post", 4)]);
        assert!(m.types.iter().all(|t| t.loads >= 2), "{m:?}");
        assert!(r.peak_reserved_gib.unwrap() <= 251.0 + 1e-9);
    }

    /// A simulated mixed run read by the analyzer: one headline per type (the synthesis spans
    /// carry `kind`), only known span kinds, one `pce_build` span per load.
    #[test]
    fn mix_timeline_is_analysed_per_proof_type() {
        let c = cfg(&format!("{TINY}{AB}").replace("[memory]\n", "[memory]\neviction_min_idle = 0\n"));
        let out = simulate(&c, Options { record: true });
        let run = out.run.unwrap();
        for s in &run.spans {
            assert!(timeline::SpanKind::known(s.kind.as_str()).is_some(), "unknown kind {}", s.kind);
        }
        let loads: Vec<_> = run.spans.iter().filter(|s| s.kind == timeline::SpanKind::PceBuild).collect();
        assert_eq!(loads.len(), 8);
        assert_eq!(loads.iter().filter(|s| s.args.get("what").and_then(|v| v.as_str()) == Some("srs")).count(), 4);
        assert!(loads.iter().all(|s| s.job.is_none()));
        assert_eq!(run.meta.extra["residency"]["evictions"].as_array().unwrap().len(), 6);
        let s = timeline::analysis::summarize(&run, &Default::default());
        let mut types: Vec<(String, u64, String)> = s.proof_types.iter().map(|t| (t.proof_type.clone(), t.proofs_completed, t.inferred_from.clone())).collect();
        types.sort();
        assert_eq!(types, vec![("type-a".into(), 2, "kind".into()), ("type-b".into(), 2, "kind".into())]);
    }
}
