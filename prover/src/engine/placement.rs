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
//!    ([`device_working_set`], from the parameters' shape; the backend says,
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
//! forever ([`Choice::Nowhere`]): the first idle worker takes it and the engine proves it
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

use crate::params::ParamsShape;

/// Device memory one partition's call holds, bytes: its a, b, c (3·n·32 B, n the domain;
/// the NTTs run in place and H ends in one of them) and the split MSMs' tail data, at most
/// a 32-byte scalar and a 4-byte index per point of the A, B and L queries. The MSMs'
/// scratch is left out: it adapts to the free memory (streamed chunks, lanes only when
/// they fit), so a device that holds this much can prove the partition.
pub fn device_working_set(shape: &ParamsShape) -> u64 {
    let n = shape.info.domain_size;
    let tails = shape.a.saturating_add(shape.b_g1).saturating_add(shape.l);
    n.saturating_mul(96).saturating_add(tails.saturating_mul(36))
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
}

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
            state: Mutex::new(State { queue: VecDeque::new(), next: 0, taken: 0, senders, closed: senders == 0, aborted: false, devices }),
            changed: Condvar::new(),
            capacity: capacity as u64,
            free,
        }
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
                    Choice::Nowhere(why) => {
                        let Some((_, item)) = s.queue.pop_front() else { continue };
                        s.taken += 1;
                        s.devices[d].idle -= 1;
                        drop(s);
                        self.changed.notify_all();
                        return Taken::Nowhere(item, why);
                    }
                    Choice::Device(_) | Choice::Wait => {}
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

    #[test]
    fn the_working_set_is_abc_and_the_tails() {
        let mut shape = ParamsShape {
            info: crate::params::ParamsInfo { circuit_id: "t".into(), num_inputs: 2, num_aux: 900, num_constraints: 1000, domain_size: 1 << 10, test_only: true },
            ic: 2,
            h: 1023,
            l: 900,
            a: 1000,
            b_g1: 800,
            b_g2: 800,
        };
        assert_eq!(device_working_set(&shape), 1024 * 96 + (1000 + 800 + 900) * 36);
        shape.info.domain_size = 1 << 27;
        shape.a = 0;
        shape.b_g1 = 0;
        shape.l = 0;
        assert_eq!(device_working_set(&shape), 12 * GIB, "a/b/c of 2^27 constraints: 12 GiB");
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
}
