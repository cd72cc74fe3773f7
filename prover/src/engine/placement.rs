//! Placement of synthesised partitions on devices (issue 22). It exists because with
//! several devices — and devices of different memory sizes — "whichever GPU worker asks
//! first" is not a policy: a small card would take partitions it cannot hold, and a busy
//! device would take work an idle one could start at once.
//!
//! One shared queue ([`Placer`]) sits between the synthesis workers and the GPU workers of
//! every device (its capacity is `queue_capacity`: a synthesis worker keeps its partition,
//! the permit, until the queue accepts it; 0 = hand-off). The partition at its head goes to
//! an idle GPU worker of the device [`choose`] picks:
//!
//! 1. only devices that can hold it: the partition's device working set
//!    ([`DeviceNeed`], from the parameters' shape, full or tight as [`plan_device`] decided; the backend says,
//!    [`crate::backend::Backend::partition_device_bytes`]) must fit in the device's
//!    available memory, which is the free memory the backend reports now
//!    ([`crate::backend::Backend::device_free_bytes`]) but at most the free memory it
//!    reported when it last had no call in flight, less the working sets of the calls placed
//!    on it since (a call placed but not yet allocated is counted; one allocated is not
//!    counted twice);
//! 2. among those, the device with the fewest calls in flight (placed and not ended:
//!    running, or waiting for the device's lock) — its queue depth;
//! 3. then the lowest device index.
//!
//! A device without memory of its own (the CPU backend) can always hold a partition. A
//! partition that no device could hold even with nothing in flight is not left waiting
//! forever ([`Choice::Nowhere`], after [`NOWHERE_GRACE`] when a device held such a call
//! before — its last call's memory may not read as free yet): the first idle worker takes it and the engine proves it
//! on the CPU fallback (`cpu_fallback`, span `fallback`) or fails it with an error naming
//! the sizes. Retries aimed at one device bypass the choice but count as its calls.
//!
//! Every decision is visible in the timeline: the `gpu_queue` span records the device the
//! partition went to, the `gpu_pickup` span the working set (`need_bytes`), the memory
//! available at the decision (`available_bytes`) and the calls then in flight on the device
//! (`in_flight`, this one included).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::cuda_settings::NttMemory;
use crate::params::ParamsShape;

/// Device memory of one partition's call, bytes, by part (from the parameters' shape, before
/// any synthesis): its a, b, c (3·n·32 B, n the domain; the NTTs run in place and H ends in
/// one of them), the NTT's scratch (n·32 B, the out-of-place passes swap with it), the twiddle
/// tables (two of n/2 scalars, n·32 B, built once per device and domain and kept), and the
/// split MSMs' tail data, at most a 32-byte scalar and a 4-byte index per point of the A, B
/// and L queries. The MSMs' scratch is left out: it adapts to the free memory (streamed
/// chunks, lanes only when they fit). With the lean NTT (`[cuda] ntt_memory`, [`DeviceNeed::lean`])
/// there is no scratch and the twiddles are two small tables a direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceNeed {
    pub abc: u64,
    pub ntt_scratch: u64,
    pub twiddles: u64,
    pub tails: u64,
    /// The NTT runs lean.
    pub lean: bool,
}

/// Device bytes of the NTT's twiddles for a domain of `n` points: two tables of n/2 scalars
/// (forward and inverse), or lean two pairs of small tables (⌈n/2/4096⌉ + 4096 scalars each)
/// whose entries' products are the twiddles.
pub fn twiddle_bytes(lean: bool, n: u64) -> u64 {
    if lean {
        2 * ((n / 2).div_ceil(4096).max(1) + 4096) * 32
    } else {
        n.saturating_mul(32)
    }
}

impl DeviceNeed {
    pub fn of(shape: &ParamsShape) -> DeviceNeed {
        let tails = shape.a.saturating_add(shape.b_g1).saturating_add(shape.l);
        DeviceNeed { tails: tails.saturating_mul(36), ..Self::of_domain(shape.info.domain_size) }
    }

    /// The need of a domain of `n` points before its queries' sizes are known (no tails): a
    /// lower bound of [`DeviceNeed::of`], what a VRAM budget is checked against before the
    /// parameters exist (`prove --setup-on-device`).
    pub fn of_domain(n: u64) -> DeviceNeed {
        DeviceNeed { abc: n.saturating_mul(96), ntt_scratch: n.saturating_mul(32), twiddles: twiddle_bytes(false, n), tails: 0, lean: false }
    }

    /// The same call with the lean NTT: in place (no scratch), its twiddles from small tables.
    pub fn lean(self) -> DeviceNeed {
        DeviceNeed { ntt_scratch: 0, twiddles: twiddle_bytes(true, self.abc / 96), lean: true, ..self }
    }

    /// The least need `memory` allows: lean unless the setting is `tables` (what a VRAM budget
    /// is checked against before the device decides, see [`choose_ntt`]).
    pub fn least(self, memory: NttMemory) -> DeviceNeed {
        if memory == NttMemory::Tables {
            self
        } else {
            self.lean()
        }
    }

    /// What one call holds with its MSM uploads staged beside a/b/c (the default: the uploads
    /// of one call overlap another's kernels, the split MSMs run on lanes).
    pub fn full(&self) -> u64 {
        self.abc.saturating_add(self.ntt_scratch).saturating_add(self.tails)
    }

    /// What one call holds when memory is tight: the MSM uploads wait until the NTTs have
    /// freed a/b/c and the scratch, and each split MSM's uploads are freed before the next's
    /// (no lanes). The larger of the two phases.
    pub fn tight(&self) -> u64 {
        self.abc.saturating_add(self.ntt_scratch).max(self.tails)
    }

    /// The least device memory that proves one partition: a tight call and the twiddles.
    pub fn minimum(&self) -> u64 {
        self.tight().saturating_add(self.twiddles)
    }

    /// What a device must have for one partition: [`DeviceNeed::minimum`] and
    /// [`DEVICE_SPARE_BYTES`] for the MSMs' scratch and the CUDA runtime (what a VRAM budget
    /// is checked against, and the room [`plan_device`] keeps).
    pub fn required(&self) -> u64 {
        self.minimum().saturating_add(DEVICE_SPARE_BYTES)
    }

    /// "a/b/c 12.00 GiB + the NTT's scratch 4.00 GiB + the twiddle tables 4.00 GiB + 1.00 GiB
    /// to spare …": the parts of [`DeviceNeed::required`], for errors.
    pub fn describe_minimum(&self) -> String {
        use super::budget::human;
        let first = if self.tails > self.abc.saturating_add(self.ntt_scratch) {
            format!("the MSM tails {}", human(self.tails))
        } else if self.lean {
            format!("a/b/c {} (the lean NTT: no scratch)", human(self.abc))
        } else {
            format!("a/b/c {} + the NTT's scratch {}", human(self.abc), human(self.ntt_scratch))
        };
        let tables = if self.lean { "the lean NTT's twiddle tables" } else { "the twiddle tables" };
        format!("{first} + {tables} {} + {} to spare for the MSMs' scratch and the CUDA runtime", human(self.twiddles), human(DEVICE_SPARE_BYTES))
    }
}

/// The NTT a device runs for a call of `tables` (the need with twiddle tables and scratch) when
/// it has `free` bytes (its VRAM budget's) before any query is uploaded: `lean` and `tables`
/// as set; `auto` lean only when the tables' [`DeviceNeed::required`] does not fit, since the
/// lean NTT costs a product more per twiddle and a pass more for the scale.
pub fn choose_ntt(memory: NttMemory, free: u64, tables: DeviceNeed) -> DeviceNeed {
    match memory {
        NttMemory::Lean => tables.lean(),
        NttMemory::Tables => tables,
        NttMemory::Auto if free < tables.required() => tables.lean(),
        NttMemory::Auto => tables,
    }
}

/// Device memory a plan keeps free beyond the calls' working sets (MSM scratch, scale tables,
/// the CUDA runtime's own allocations).
pub const DEVICE_SPARE_BYTES: u64 = 1 << 30;

/// How one device proves with one parameter set, decided from its free memory before any
/// query is uploaded ([`plan_device`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePlan {
    /// Per query (in the order given), whether its points stay resident on the device; the
    /// others are streamed from the host for every partition.
    pub resident: Vec<bool>,
    /// Calls run tight ([`DeviceNeed::tight`]) because a full call does not fit beside the
    /// resident queries.
    pub tight: bool,
    /// What placement counts per call: [`DeviceNeed::full`] or [`DeviceNeed::tight`].
    pub call_bytes: u64,
    /// What stays free after the resident queries (the room kept for calls).
    pub room: u64,
}

/// Which queries a device keeps: as room allows (`Auto`, the `[cuda] params = "auto"`
/// default), all of them (`All`, `params = "resident"`: uploaded whatever the room), none
/// (`None`, `params = "stream"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residency {
    Auto,
    All,
    None,
}

/// The device plan for `free` bytes of device memory and queries of `query_bytes` each (in
/// upload order): with [`Residency::Auto`] a query stays resident while what is left after it
/// still holds [`DeviceNeed::required`] (a query that does not fit is streamed; later,
/// smaller ones may still fit); then calls run full if a full call, the twiddles and the spare
/// fit in what is left, else tight. Resident queries come first because streaming a query
/// costs its points' upload in every partition, running tight only the overlap of uploads
/// with kernels.
pub fn plan_device(free: u64, query_bytes: &[u64], need: &DeviceNeed, residency: Residency) -> DevicePlan {
    let keep = need.required();
    let mut left = free;
    let resident = query_bytes
        .iter()
        .map(|&b| {
            let fits = match residency {
                Residency::Auto => left.checked_sub(b).is_some_and(|after| after >= keep),
                Residency::All => true,
                Residency::None => false,
            };
            if fits {
                left = left.saturating_sub(b);
            }
            fits
        })
        .collect();
    let tight = left < need.full().saturating_add(need.twiddles).saturating_add(DEVICE_SPARE_BYTES);
    DevicePlan { resident, tight, call_bytes: if tight { need.tight() } else { need.full() }, room: left }
}

/// What placement knows of one device at a decision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceView {
    /// GPU workers of the device waiting for work now.
    pub idle_workers: u32,
    /// Calls placed on the device and not ended.
    pub in_flight: u32,
    /// The working sets of those calls, bytes.
    pub held: u64,
    /// Free device memory the backend reports now; `None`: no memory of its own.
    pub free_now: Option<u64>,
    /// Free device memory when it last had no call in flight.
    pub free_idle: Option<u64>,
    /// One partition's working set on this device; `None`: nothing to check.
    pub need: Option<u64>,
}

impl DeviceView {
    /// Memory one more call may use: the free memory now, at most the free memory with
    /// nothing in flight less what the calls in flight hold. `None`: unlimited.
    pub fn available(&self) -> Option<u64> {
        let idle = self.free_idle.map(|f| f.saturating_sub(self.held));
        match (self.free_now, idle) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether one more call fits now.
    pub fn holds(&self) -> bool {
        match (self.need, self.available()) {
            (Some(n), Some(a)) => n <= a,
            _ => true,
        }
    }

    /// Whether a call could fit with nothing in flight.
    pub fn could_ever_hold(&self) -> bool {
        match (self.need, self.free_idle.or(self.free_now)) {
            (Some(n), Some(f)) => n <= f,
            _ => true,
        }
    }
}

/// Where the queue's head goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// To an idle worker of this device.
    Device(usize),
    /// Nowhere yet: no device with an idle worker can hold it now.
    Wait,
    /// No device could hold it even with nothing in flight (the reason names the sizes).
    Nowhere(String),
}

/// The placement rule (see the module docs): among devices with an idle worker that can
/// hold the partition, the fewest calls in flight, then the lowest index.
pub fn choose(devices: &[DeviceView]) -> Choice {
    if !devices.is_empty() && devices.iter().all(|d| !d.could_ever_hold()) {
        let sizes: Vec<String> = devices
            .iter()
            .enumerate()
            .map(|(i, d)| format!("device {i} {} free", d.free_idle.or(d.free_now).map_or("?".into(), super::budget::human)))
            .collect();
        let need = devices.iter().filter_map(|d| d.need).max().unwrap_or(0);
        return Choice::Nowhere(format!("no device can hold the partition's working set of {} ({})", super::budget::human(need), sizes.join(", ")));
    }
    devices
        .iter()
        .enumerate()
        .filter(|(_, d)| d.idle_workers > 0 && d.holds())
        .min_by_key(|(i, d)| (d.in_flight, *i))
        .map_or(Choice::Wait, |(i, _)| Choice::Device(i))
}

/// The load of one device, kept by the [`Placer`].
#[derive(Clone, Copy, Debug, Default)]
struct Load {
    idle: u32,
    in_flight: u32,
    held: u64,
    free_idle: Option<u64>,
    need: Option<u64>,
    /// A call was placed on this device before: its memory could hold one.
    placed_once: bool,
}

/// How long the head partition may look unplaceable on devices that held such a call before
/// before it is sent [`Taken::Nowhere`]: memory freed by the last call can take a moment to
/// read as free again, and a partition sent to the CPU fallback or failed for it is lost work.
pub const NOWHERE_GRACE: Duration = Duration::from_secs(60);

struct State<T> {
    /// Waiting partitions with their sequence numbers, oldest first.
    queue: VecDeque<(u64, T)>,
    next: u64,
    /// Partitions taken so far (in order: the head is always the one taken).
    taken: u64,
    /// Senders still running (the synthesis workers); none left closes the queue.
    senders: u32,
    closed: bool,
    aborted: bool,
    devices: Vec<Load>,
    /// Since when the head partition has looked unplaceable (see [`NOWHERE_GRACE`]).
    nowhere_since: Option<Instant>,
}

/// The free memory of device `d` now, as its backend reports it.
pub type FreeProbe = Box<dyn Fn(usize) -> Option<u64> + Send + Sync>;

/// The shared queue and the devices' loads (see the module docs). Generic over what it
/// carries so that its tests need no proofs.
pub struct Placer<T> {
    state: Mutex<State<T>>,
    changed: Condvar,
    capacity: u64,
    free: FreeProbe,
    /// [`NOWHERE_GRACE`], shorter in tests.
    grace: Duration,
}

/// What a GPU worker got from [`Placer::take`].
pub enum Taken<'a, T> {
    /// A partition for this worker's device, with the decision's figures.
    Placed(T, Call<'a, T>, DeviceView),
    /// A partition no device can hold: the worker deals with it (fallback or failure).
    Nowhere(T, String),
    /// Nothing for this device within the poll time.
    Timeout,
    /// The queue is empty and closed (the synthesis workers are done).
    Closed,
    /// The engine aborted.
    Aborted,
}

/// A call placed on a device: counted in its load until dropped.
pub struct Call<'a, T> {
    placer: &'a Placer<T>,
    device: usize,
    need: u64,
}

impl<T> Drop for Call<'_, T> {
    fn drop(&mut self) {
        let mut s = self.placer.lock();
        if let Some(l) = s.devices.get_mut(self.device) {
            l.in_flight = l.in_flight.saturating_sub(1);
            l.held = l.held.saturating_sub(self.need);
        }
        drop(s);
        self.placer.changed.notify_all();
    }
}

impl<T> Placer<T> {
    /// A queue of `capacity` partitions (0 = hand-off) fed by `senders` senders (each calls
    /// [`Placer::sender_gone`] when it stops; the last one closes the queue, as the last
    /// sender of a channel does), for devices whose working sets are `needs` (one per
    /// device), their free memory read through `free`.
    pub fn new(capacity: u32, senders: u32, needs: Vec<Option<u64>>, free: FreeProbe) -> Placer<T> {
        let devices = needs.iter().enumerate().map(|(i, &need)| Load { need, free_idle: free(i), ..Load::default() }).collect();
        Placer {
            state: Mutex::new(State { queue: VecDeque::new(), next: 0, taken: 0, senders, closed: senders == 0, aborted: false, devices, nowhere_since: None }),
            changed: Condvar::new(),
            capacity: capacity as u64,
            free,
            grace: NOWHERE_GRACE,
        }
    }

    /// The same placer with another grace than [`NOWHERE_GRACE`].
    pub fn with_grace(mut self, grace: Duration) -> Placer<T> {
        self.grace = grace;
        self
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queue `item`, waiting until the queue accepts it (it is among the first `capacity`
    /// waiting, or taken). `Err(item)` when the engine aborted first.
    pub fn send(&self, item: T) -> Result<(), T> {
        let mut s = self.lock();
        if s.aborted {
            return Err(item);
        }
        let seq = s.next;
        s.next += 1;
        s.queue.push_back((seq, item));
        self.changed.notify_all();
        loop {
            if seq < s.taken + self.capacity || !s.queue.iter().any(|(q, _)| *q == seq) {
                return Ok(());
            }
            if s.aborted {
                let at = s.queue.iter().position(|(q, _)| *q == seq);
                return match at.and_then(|i| s.queue.remove(i)) {
                    Some((_, item)) => Err(item),
                    None => Ok(()),
                };
            }
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The devices as placement sees them now (reads every device's free memory; a device
    /// with nothing in flight updates its free memory when idle).
    fn views(&self, s: &mut State<T>) -> Vec<DeviceView> {
        s.devices
            .iter_mut()
            .enumerate()
            .map(|(i, l)| {
                let free_now = if l.need.is_some() { (self.free)(i) } else { None };
                if l.in_flight == 0 && free_now.is_some() {
                    l.free_idle = free_now;
                }
                DeviceView { idle_workers: l.idle, in_flight: l.in_flight, held: l.held, free_now, free_idle: l.free_idle, need: l.need }
            })
            .collect()
    }

    fn place(&self, s: &mut State<T>, d: usize) -> Call<'_, T> {
        let l = &mut s.devices[d];
        let need = l.need.unwrap_or(0);
        l.in_flight += 1;
        l.held = l.held.saturating_add(need);
        l.placed_once = true;
        s.nowhere_since = None;
        Call { placer: self, device: d, need }
    }

    /// A partition for a worker of device `d`, waiting at most `poll` (see [`Taken`]).
    pub fn take(&self, d: usize, poll: Duration) -> Taken<'_, T> {
        let deadline = Instant::now() + poll;
        let mut s = self.lock();
        if d >= s.devices.len() {
            return Taken::Closed;
        }
        s.devices[d].idle += 1;
        let out = loop {
            if s.aborted {
                break Taken::Aborted;
            }
            if !s.queue.is_empty() {
                let views = self.views(&mut s);
                match choose(&views) {
                    Choice::Device(c) if c == d => {
                        let Some((_, item)) = s.queue.pop_front() else { continue };
                        s.taken += 1;
                        s.devices[d].idle -= 1;
                        let call = self.place(&mut s, d);
                        let mut view = views[d];
                        view.in_flight += 1;
                        drop(s);
                        self.changed.notify_all();
                        return Taken::Placed(item, call, view);
                    }
                    // One grace per shortage, not per partition: once spent, later heads go
                    // nowhere at once until something is placed (or the shortage ends).
                    Choice::Nowhere(_) if s.devices.iter().any(|l| l.placed_once) && s.nowhere_since.get_or_insert_with(Instant::now).elapsed() < self.grace => {}
                    Choice::Nowhere(why) => {
                        let Some((_, item)) = s.queue.pop_front() else { continue };
                        s.taken += 1;
                        s.devices[d].idle -= 1;
                        drop(s);
                        self.changed.notify_all();
                        return Taken::Nowhere(item, why);
                    }
                    // Not a shortage now: a later one gets its own grace.
                    Choice::Device(_) | Choice::Wait => s.nowhere_since = None,
                }
            } else if s.closed {
                break Taken::Closed;
            }
            let now = Instant::now();
            if now >= deadline {
                break Taken::Timeout;
            }
            s = self.changed.wait_timeout(s, deadline - now).map(|(g, _)| g).unwrap_or_else(|p| p.into_inner().0);
        };
        s.devices[d].idle -= 1;
        out
    }

    /// Count a call on device `d` that bypassed the choice (a retry aimed at it).
    pub fn begin(&self, d: usize) -> Call<'_, T> {
        let mut s = self.lock();
        let d = d.min(s.devices.len().saturating_sub(1));
        if s.devices.is_empty() {
            return Call { placer: self, device: usize::MAX, need: 0 };
        }
        self.place(&mut s, d)
    }

    /// One sender stopped; after the last, workers see [`Taken::Closed`] once the queue is
    /// empty.
    pub fn sender_gone(&self) {
        let mut s = self.lock();
        s.senders = s.senders.saturating_sub(1);
        if s.senders == 0 {
            s.closed = true;
        }
        drop(s);
        self.changed.notify_all();
    }

    /// Stop: senders get their partition back, workers see [`Taken::Aborted`].
    pub fn abort(&self) {
        self.lock().aborted = true;
        self.changed.notify_all();
    }

    /// Partitions waiting in the queue.
    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls in flight per device.
    pub fn in_flight(&self) -> Vec<u32> {
        self.lock().devices.iter().map(|l| l.in_flight).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    const GIB: u64 = 1 << 30;

    fn view(idle: u32, in_flight: u32, held: u64, free: Option<u64>, need: Option<u64>) -> DeviceView {
        DeviceView { idle_workers: idle, in_flight, held, free_now: free, free_idle: free, need }
    }

    fn shape(log_n: u32, a: u64, b: u64, l: u64) -> ParamsShape {
        ParamsShape {
            info: crate::params::ParamsInfo { circuit_id: "t".into(), num_inputs: 2, num_aux: l, num_constraints: 1000, domain_size: 1 << log_n, test_only: true },
            ic: 2,
            h: (1 << log_n) - 1,
            l,
            a,
            b_g1: b,
            b_g2: b,
        }
    }

    #[test]
    fn the_working_set_is_abc_the_scratch_and_the_tails_or_the_larger_phase_when_tight() {
        let need = DeviceNeed::of(&shape(10, 1000, 800, 900));
        let tails = (1000 + 800 + 900) * 36;
        assert_eq!((need.abc, need.ntt_scratch, need.twiddles, need.tails), (1024 * 96, 1024 * 32, 1024 * 32, tails));
        assert_eq!(need.full(), 1024 * 128 + tails);
        assert_eq!(need.tight(), (1024 * 128).max(tails));
        assert_eq!(need.minimum(), need.tight() + 1024 * 32);
        // 2^27 with no tails: a/b/c 12 GiB + scratch 4 GiB, and 4 GiB of twiddles.
        let big = DeviceNeed::of(&shape(27, 0, 0, 0));
        assert_eq!((big.full(), big.tight(), big.minimum(), big.required()), (16 * GIB, 16 * GIB, 20 * GIB, 21 * GIB));
        let parts = big.describe_minimum();
        assert!(parts.contains("a/b/c 12.00 GiB") && parts.contains("scratch 4.00 GiB") && parts.contains("twiddle tables 4.00 GiB") && parts.contains("1.00 GiB to spare"), "{parts}");
        // Tails larger than a/b/c and the scratch: the tight call is bound by them.
        let tailed = DeviceNeed::of(&shape(10, 10_000, 0, 0));
        assert_eq!(tailed.tight(), 360_000);
        assert!(tailed.describe_minimum().starts_with("the MSM tails"), "{}", tailed.describe_minimum());
    }

    #[test]
    fn the_lean_ntt_drops_the_scratch_and_the_tables_and_auto_takes_it_only_where_the_tables_do_not_fit() {
        // 2^27, porep-like tails (9.86 GiB): with the tables a partition requires 21 GiB, lean
        // 12 GiB of a/b/c, two pairs of small tables (2 x (16384 + 4096) x 32 B) and the spare.
        let tables = DeviceNeed::of(&shape(27, 1 << 27, 1 << 25, (1 << 27) - (1 << 25)));
        let lean = tables.lean();
        assert_eq!((lean.ntt_scratch, lean.twiddles, lean.abc, lean.tails, lean.lean), (0, 2 * (16384 + 4096) * 32, tables.abc, tables.tails, true));
        assert_eq!(tables.required(), 21 * GIB);
        assert_eq!(lean.required(), 12 * GIB + 2 * (16384 + 4096) * 32 + GIB);
        assert!(lean.describe_minimum().contains("lean NTT: no scratch") && lean.describe_minimum().contains("lean NTT's twiddle tables 1.2 MiB"), "{}", lean.describe_minimum());
        // auto: lean on a 16 GiB card, the tables on a 24 GiB one (and on the budget's edge).
        assert!(choose_ntt(NttMemory::Auto, 16 * GIB, tables).lean);
        assert!(!choose_ntt(NttMemory::Auto, 24 * GIB, tables).lean);
        assert!(!choose_ntt(NttMemory::Auto, tables.required(), tables).lean);
        assert!(choose_ntt(NttMemory::Auto, tables.required() - 1, tables).lean);
        // Forced either way, whatever the memory.
        assert!(choose_ntt(NttMemory::Lean, 100 * GIB, tables).lean);
        assert!(!choose_ntt(NttMemory::Tables, 16 * GIB, tables).lean);
        // What a budget is checked against before the device decides.
        assert_eq!(tables.least(NttMemory::Auto), lean);
        assert_eq!(tables.least(NttMemory::Tables), tables);
        // The lean twiddles of a tiny domain: one entry of hi, 4096 of lo, each direction.
        assert_eq!(twiddle_bytes(true, 2), 2 * (1 + 4096) * 32);
        assert_eq!(twiddle_bytes(false, 1 << 27), 4 * GIB);
    }

    #[test]
    fn the_device_plan_keeps_room_for_a_call_and_runs_tight_only_when_a_full_one_does_not_fit() {
        // 2^27 with 10.6 GB (9.86 GiB) of tails bound, porep-like: full 25.9 GiB, tight 16,
        // minimum 20, required 21.
        let need = DeviceNeed::of(&shape(27, 134_000_000, 40_000_000, 120_000_000));
        let spare = DEVICE_SPARE_BYTES;
        let queries = [12 * GIB, 12 * GIB, 10 * GIB, 4 * GIB, 8 * GIB];
        // The whole H200: every query resident, calls full.
        let h200 = plan_device(139 * GIB, &queries, &need, Residency::Auto);
        assert_eq!(h200.resident, vec![true; 5]);
        assert!(!h200.tight && h200.call_bytes == need.full(), "{h200:?}");
        assert_eq!(h200.room, 139 * GIB - 46 * GIB);
        // A 24 GiB budget: no query fits beside a tight call; calls tight.
        let small = plan_device(24 * GIB, &queries, &need, Residency::Auto);
        assert_eq!(small.resident, vec![false; 5]);
        assert!(small.tight && small.call_bytes == need.tight(), "{small:?}");
        // In between: queries resident while one tight call still fits after them (a later,
        // smaller query may fit where a larger did not), then tight because a full call does not.
        let mid = plan_device(need.minimum() + spare + 12 * GIB + 4 * GIB, &queries, &need, Residency::Auto);
        assert_eq!(mid.resident, vec![true, false, false, true, false]);
        assert!(mid.tight, "{mid:?}");
        assert!(mid.room >= need.minimum() + spare);
        // Enough for a full call beside everything: not tight.
        let roomy = plan_device(46 * GIB + need.full() + need.twiddles + spare, &queries, &need, Residency::Auto);
        assert_eq!((roomy.resident, roomy.tight), (vec![true; 5], false));
        // Below the minimum: nothing resident, tight (the engine refuses such a budget first).
        let tiny = plan_device(GIB, &queries, &need, Residency::Auto);
        assert!(tiny.resident.iter().all(|r| !r) && tiny.tight);
        // params = "stream": nothing resident, so a 40 GiB card holds a full call.
        let streamed = plan_device(40 * GIB, &queries, &need, Residency::None);
        assert_eq!((streamed.resident, streamed.tight, streamed.room), (vec![false; 5], false, 40 * GIB));
        // params = "resident": everything uploaded whatever the room, so what is left is small
        // and calls run tight.
        let forced = plan_device(64 * GIB, &queries, &need, Residency::All);
        assert_eq!((forced.resident, forced.tight, forced.room), (vec![true; 5], true, 18 * GIB));
    }

    #[test]
    fn a_device_too_small_is_never_chosen() {
        // Device 0 (idle, nothing in flight) has 8 GiB free, a partition needs 10.
        let small = view(1, 0, 0, Some(8 * GIB), Some(10 * GIB));
        let big = view(1, 3, 30 * GIB, Some(80 * GIB), Some(10 * GIB));
        assert_eq!(choose(&[small, big]), Choice::Device(1));
        // Device 1 busy (no idle worker): wait rather than use device 0.
        assert_eq!(choose(&[small, DeviceView { idle_workers: 0, ..big }]), Choice::Wait);
        // Nothing could hold it anywhere: say so, with the sizes.
        match choose(&[small, view(1, 0, 0, Some(9 * GIB), Some(10 * GIB))]) {
            Choice::Nowhere(why) => assert!(why.contains("10.00 GiB") && why.contains("device 1 9.00 GiB free"), "{why}"),
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn the_fewest_calls_then_the_lowest_index() {
        let d = |in_flight| view(1, in_flight, 0, None, None);
        assert_eq!(choose(&[d(1), d(0)]), Choice::Device(1));
        assert_eq!(choose(&[d(1), d(1)]), Choice::Device(0));
        assert_eq!(choose(&[d(2), d(1), d(1)]), Choice::Device(1));
        // No memory of its own (the CPU backend): always holds.
        assert!(d(5).holds() && d(5).could_ever_hold());
    }

    #[test]
    fn calls_in_flight_count_once() {
        // 80 GiB free when idle; 2 calls of 30 GiB placed, one of which allocated 30 GiB so
        // far (free now 50): 80 − 60 = 20 available, not 50 − 60.
        let v = DeviceView { idle_workers: 1, in_flight: 2, held: 60 * GIB, free_now: Some(50 * GIB), free_idle: Some(80 * GIB), need: Some(20 * GIB) };
        assert_eq!(v.available(), Some(20 * GIB));
        assert!(v.holds());
        assert!(!DeviceView { need: Some(21 * GIB), ..v }.holds());
        // Another process took memory: the report now binds.
        let v = DeviceView { free_now: Some(10 * GIB), ..v };
        assert_eq!(v.available(), Some(10 * GIB));
    }

    #[test]
    fn the_queue_accepts_capacity_partitions_then_blocks_the_sender() {
        let p: Arc<Placer<u32>> = Arc::new(Placer::new(1, 2, vec![None], Box::new(|_| None)));
        p.send(0).unwrap();
        let (p2, sent) = (p.clone(), Arc::new(AtomicU64::new(0)));
        let s2 = sent.clone();
        let h = std::thread::spawn(move || {
            p2.send(1).unwrap();
            s2.store(1, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(sent.load(Ordering::SeqCst), 0, "the second send waits while the queue is full");
        let got = match p.take(0, Duration::from_millis(100)) {
            Taken::Placed(x, _, v) => (x, v.in_flight),
            _ => panic!("a partition"),
        };
        assert_eq!(got, (0, 1));
        h.join().unwrap();
        assert_eq!(sent.load(Ordering::SeqCst), 1);
        assert_eq!(p.len(), 1);
        p.sender_gone();
        assert!(matches!(p.take(0, Duration::from_millis(5)), Taken::Placed(1, _, _)));
        assert!(matches!(p.take(0, Duration::from_millis(5)), Taken::Timeout), "one sender left: not closed");
        p.sender_gone();
        assert!(matches!(p.take(0, Duration::from_millis(5)), Taken::Closed));
        // Abort hands a waiting sender its partition back.
        let p: Placer<u32> = Placer::new(0, 1, vec![None], Box::new(|_| None));
        p.abort();
        assert_eq!(p.send(7), Err(7));
    }

    #[test]
    fn a_worker_of_a_device_that_cannot_hold_it_leaves_it_to_the_other_device() {
        // Device 0: 4 GiB free; device 1: 64 GiB; a partition needs 10 GiB.
        let free = [4 * GIB, 64 * GIB];
        let p: Placer<u32> = Placer::new(4, 1, vec![Some(10 * GIB); 2], Box::new(move |d| Some(free[d])));
        p.send(1).unwrap();
        assert!(matches!(p.take(0, Duration::from_millis(20)), Taken::Timeout));
        match p.take(1, Duration::from_millis(20)) {
            Taken::Placed(1, call, v) => {
                assert_eq!((v.need, v.available(), v.in_flight), (Some(10 * GIB), Some(64 * GIB), 1));
                assert_eq!(p.in_flight(), vec![0, 1]);
                drop(call);
                assert_eq!(p.in_flight(), vec![0, 0]);
            }
            _ => panic!("device 1 takes it"),
        };
    }

    #[test]
    fn a_device_whose_memory_is_taken_by_calls_in_flight_waits_for_them() {
        // 25 GiB free, 10 GiB per call: two calls fit, the third waits for one to end.
        let free = Arc::new(AtomicU64::new(25 * GIB));
        let f = free.clone();
        let p: Placer<u32> = Placer::new(8, 1, vec![Some(10 * GIB)], Box::new(move |_| Some(f.load(Ordering::SeqCst))));
        for i in 0..3 {
            p.send(i).unwrap();
        }
        let Taken::Placed(0, c0, _) = p.take(0, Duration::ZERO) else { panic!() };
        free.store(15 * GIB, Ordering::SeqCst); // the first call allocated
        let Taken::Placed(1, c1, v) = p.take(0, Duration::ZERO) else { panic!() };
        assert_eq!(v.available(), Some(15 * GIB));
        assert!(matches!(p.take(0, Duration::from_millis(10)), Taken::Timeout));
        drop(c0);
        free.store(15 * GIB, Ordering::SeqCst);
        assert!(matches!(p.take(0, Duration::ZERO), Taken::Placed(2, _, _)));
        drop(c1);
    }

    #[test]
    fn a_device_that_held_a_call_before_is_given_time_before_its_partition_goes_nowhere() {
        // 20 GiB free, 16 GiB per call; after the first call the device reads 4 GiB free with
        // nothing in flight (its memory not yet read as free again: run 58).
        let free = Arc::new(AtomicU64::new(20 * GIB));
        let f = free.clone();
        let p: Placer<u32> = Placer::new(8, 1, vec![Some(16 * GIB)], Box::new(move |_| Some(f.load(Ordering::SeqCst))));
        p.send(0).unwrap();
        p.send(1).unwrap();
        let Taken::Placed(0, c0, _) = p.take(0, Duration::ZERO) else { panic!() };
        drop(c0);
        free.store(4 * GIB, Ordering::SeqCst);
        // Within the grace: the worker waits (polls) instead of being handed it for nowhere.
        assert!(matches!(p.take(0, Duration::from_millis(20)), Taken::Timeout));
        assert_eq!(p.len(), 1);
        // The memory comes back: placed on the device.
        free.store(20 * GIB, Ordering::SeqCst);
        assert!(matches!(p.take(0, Duration::ZERO), Taken::Placed(1, _, _)));
        // A device that never held a call: nowhere at once (no grace to wait for).
        let q: Placer<u32> = Placer::new(8, 1, vec![Some(16 * GIB)], Box::new(|_| Some(4 * GIB)));
        q.send(5).unwrap();
        assert!(matches!(q.take(0, Duration::from_millis(20)), Taken::Nowhere(5, _)));
    }

    #[test]
    fn the_grace_ends_once_per_shortage() {
        let free = Arc::new(AtomicU64::new(20 * GIB));
        let f = free.clone();
        let p: Placer<u32> = Placer::new(8, 1, vec![Some(16 * GIB)], Box::new(move |_| Some(f.load(Ordering::SeqCst)))).with_grace(Duration::from_millis(30));
        for i in 0..3 {
            p.send(i).unwrap();
        }
        let Taken::Placed(0, c0, _) = p.take(0, Duration::ZERO) else { panic!() };
        drop(c0);
        free.store(4 * GIB, Ordering::SeqCst);
        let t0 = Instant::now();
        let first = loop {
            match p.take(0, Duration::from_millis(5)) {
                Taken::Timeout if t0.elapsed() < Duration::from_secs(5) => continue,
                other => break other,
            }
        };
        assert!(matches!(first, Taken::Nowhere(1, _)), "the head goes nowhere once its grace is spent");
        assert!(t0.elapsed() >= Duration::from_millis(30), "not before the grace: {:?}", t0.elapsed());
        // The shortage goes on: the next head does not get a grace of its own.
        assert!(matches!(p.take(0, Duration::ZERO), Taken::Nowhere(2, _)));
    }
}
