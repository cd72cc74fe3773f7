//! The engine's thread bodies: partition-synthesis workers, GPU workers (one set per
//! device) and finalisers. Each thread installs the engine's event dispatch, wraps its
//! work in a `ctx` span carrying job / partition / worker / device, and opens one span
//! per stage, so the timeline shows exactly what each thread did and waited for.

use timeline::event::kind;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use timeline::event::counters::QUEUE_DEPTH;
use tracing::field::Empty;
use tracing::info_span;

use super::locks::acquire;
use super::budget::{BudgetError, Reservation};
use super::placement::{Call, DeviceView, Taken};
use super::{FinishTask, GpuTask, LockMode, PartitionProof, PartitionRam, Retry, Shared, SynthTask, SynthesisMode};
use crate::backend::{Backend, Blinding, DeviceError, Pending, ProveError, StartFailure};
use crate::synthesis::{Evals, ProvingAssignment};
use crate::proof::Proof;

/// Why a partition of a proof that already failed ends without work.
const SKIPPED: &str = "skipped: another partition of this proof failed";

fn with_dispatch<T>(sh: &Shared, f: impl FnOnce() -> T) -> T {
    match &sh.dispatch {
        Some(d) => tracing::dispatcher::with_default(d, f),
        None => f(),
    }
}

/// A partition's working set from the RAM budget, waiting (span `ram_wait`) until it fits.
fn reserve_partition(sh: &Shared) -> Result<Reservation, BudgetError> {
    let bytes = sh.plan.partition.synthesis();
    match sh.ram.try_reserve(WORKING_SET, bytes) {
        Err(BudgetError::WouldBlock { free, .. }) => {
            let _e = ram_wait(sh, bytes, free).entered();
            sh.ram.reserve(WORKING_SET, bytes)
        }
        r => r,
    }
}

const WORKING_SET: &str = "a partition's working set";

fn ram_wait(sh: &Shared, bytes: u64, free: u64) -> tracing::Span {
    info_span!(kind::RAM_WAIT, bytes = bytes, free = free, reserved = sh.ram.reserved(), budget = sh.ram.total())
}

/// How often a synthesis waiting for the RAM budget looks for an idle pooled set.
const POOL_POLL: Duration = Duration::from_millis(5);

/// A partition's admission: its working set from the RAM budget and, with the a/b/c pool on
/// and the pre-compiled constraints ready, the vectors its products write a, b and c into —
/// an idle set, whose budget share comes with it (only the rest of the working set is
/// reserved, as a holder: it does not queue behind syntheses that wait for the very bytes its
/// set holds), or a set made with the partition's own a/b/c share while the pool has room;
/// `None` otherwise (fresh vectors, staged). A synthesis waiting for its whole working set
/// gives up the wait when a set comes back idle, and takes it.
fn admit(sh: &Shared) -> Result<(Reservation, Option<[Evals; 3]>), BudgetError> {
    let p = &sh.plan.partition;
    let Some(pool) = sh.abc_pool.as_ref().filter(|_| sh.pce.get().is_some()) else { return reserve_partition(sh).map(|r| (r, None)) };
    let mut wait: Option<tracing::Span> = None;
    loop {
        if let Some(set) = pool.take() {
            let r = match sh.ram.try_reserve(WORKING_SET, p.rest) {
                Err(BudgetError::WouldBlock { free, .. }) => {
                    let _e = wait.get_or_insert_with(|| ram_wait(sh, p.rest, free)).enter();
                    sh.ram.reserve_with(WORKING_SET, p.rest, false, p.abc)?
                }
                r => r?,
            };
            return Ok((r, Some(set)));
        }
        let mut r = match sh.ram.try_reserve(WORKING_SET, p.synthesis()) {
            Err(BudgetError::WouldBlock { free, .. }) => {
                let _e = wait.get_or_insert_with(|| ram_wait(sh, p.synthesis(), free)).enter();
                match sh.ram.reserve_unless(WORKING_SET, p.synthesis(), POOL_POLL, &|| pool.has_idle_set())? {
                    Some(r) => r,
                    // A set came back idle: take it (unless another synthesis was quicker).
                    None => continue,
                }
            }
            r => r?,
        };
        let set = pool.make(|| Box::new(r.split_off(p.abc)));
        return Ok((r, set));
    }
}

/// Tells the GPU queue that this synthesis worker stopped (however it stops).
struct Sending<'a>(&'a Shared);

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        self.0.placer.sender_gone();
    }
}

pub(super) fn synth_worker(sh: Arc<Shared>, w: u32, rx: Receiver<SynthTask>, pool: Option<Arc<rayon::ThreadPool>>) {
    let _sending = Sending(&sh);
    // The circuit path synthesises on this thread, the PCE path's witness starts here.
    super::priority::nice_this_thread(sh.cfg.synthesis_nice);
    with_dispatch(&sh.clone(), || {
        // Every partition's vectors sized from the parameter file up front.
        let info = &sh.params.info;
        let hint = crate::synthesis::SizeHint {
            constraints: info.num_constraints as usize,
            inputs: info.num_inputs as usize,
            aux: info.num_aux as usize,
        };
        for task in rx.iter() {
            if sh.abort.load(Ordering::Relaxed) {
                break;
            }
            let SynthTask { job, partition, circuit } = task;
            if job.failed() {
                sh.finish_partition(&job, partition, Err(SKIPPED.into()));
                continue;
            }
            let ctx = info_span!("ctx", job = job.id.as_str(), partition = partition, worker = w);
            let entered = ctx.enter();
            // A synthesis starts only when its working set fits in the RAM budget.
            let (ram, abc) = match admit(&sh) {
                Ok(r) => r,
                Err(BudgetError::Closed { .. }) => break,
                Err(e) => {
                    drop(entered);
                    sh.finish_partition(&job, partition, Err(e.to_string()));
                    continue;
                }
            };
            let held = ram.bytes();
            // The partition's a/b/c reservation rides on its pooled vectors, if any.
            let abc_share = if abc.is_some() { 0 } else { sh.plan.partition.abc };
            let synthesize = || match sh.cfg.synthesis {
                SynthesisMode::Circuit => circuit.synthesize(hint),
                SynthesisMode::Pce => super::pce_slot::synthesize(&sh, circuit, hint, pool.as_deref(), held, abc),
            };
            let synthesized = catch_unwind(AssertUnwindSafe(synthesize))
                .unwrap_or_else(|p| Err(ProveError::Device(DeviceError::panicked("synthesis", p))));
            drop(entered);
            match synthesized {
                Err(e) => sh.finish_partition(&job, partition, Err(e.to_string())),
                Ok(assignment) => {
                    let queue_span = info_span!(parent: None, kind::GPU_QUEUE, job = job.id.as_str(), partition = partition, device = Empty);
                    sh.in_gpu_stage.fetch_add(1, Ordering::SeqCst);
                    let depth = sh.queue_depth.fetch_add(1, Ordering::SeqCst) + 1;
                    if sh.cfg.events {
                        sh.sink.counter(QUEUE_DEPTH, depth as f64, None);
                    }
                    // The permit: this worker stays blocked until the queue accepts.
                    let ram = PartitionRam::new(ram, abc_share);
                    let task = GpuTask { job, partition, assignment, queue_span, attempts: 0, tried: Vec::new(), ram };
                    if sh.placer.send(task).is_err() {
                        sh.in_gpu_stage.fetch_sub(1, Ordering::SeqCst);
                        break;
                    }
                }
            }
        }
    })
}

/// Blinding for one partition: from the configured seed (reproducible) or fresh entropy.
fn blinding_for(seed: Option<u64>, job: &str, partition: u32) -> Blinding {
    match seed {
        Some(s) => {
            let mut h = blake3::Hasher::new();
            h.update(&s.to_le_bytes());
            h.update(job.as_bytes());
            h.update(&partition.to_le_bytes());
            Blinding::random(&mut ChaCha20Rng::from_seed(*h.finalize().as_bytes()))
        }
        None => Blinding::random(&mut rand::thread_rng()),
    }
}

enum Outcome {
    Started(Box<Pending>),
    Done(Box<Proof>),
}

/// What a GPU worker picked up: a partition placed on its device (with the decision's
/// figures; none for a retry aimed at the device), or one that no device can hold.
enum Picked<'a> {
    Placed { task: GpuTask, call: Call<'a, GpuTask>, view: Option<DeviceView> },
    Nowhere { task: GpuTask, why: String },
}

/// The next partition for a worker of device `d`: a retry aimed at the device first, else
/// what placement gives it from the shared queue ([`super::placement`]). `None` when the
/// engine aborts, or when the queue is closed and nothing is left in the GPU stage.
fn next_task(sh: &Shared, d: usize) -> Option<Picked<'_>> {
    let picked_up = || {
        let depth = sh.queue_depth.fetch_sub(1, Ordering::SeqCst).saturating_sub(1);
        if sh.cfg.events {
            sh.sink.counter(QUEUE_DEPTH, depth as f64, None);
        }
    };
    loop {
        if sh.abort.load(Ordering::Relaxed) {
            return None;
        }
        if let Some(task) = sh.retry[d].lock().ok().and_then(|mut q| q.pop_front()) {
            return Some(Picked::Placed { task, call: sh.placer.begin(d), view: None });
        }
        match sh.placer.take(d, Duration::from_millis(10)) {
            Taken::Placed(task, call, view) => {
                picked_up();
                return Some(Picked::Placed { task, call, view: Some(view) });
            }
            Taken::Nowhere(task, why) => {
                picked_up();
                return Some(Picked::Nowhere { task, why });
            }
            Taken::Timeout => {}
            Taken::Aborted => return None,
            Taken::Closed => {
                if sh.in_gpu_stage.load(Ordering::SeqCst) == 0 {
                    return None;
                }
                // Retries may still arrive in our inbox.
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// Where a partition goes after a failure on device `d`: another device not yet tried,
/// while attempts remain.
fn retry_target(sh: &Shared, attempts: u32, tried: &[u32]) -> Option<usize> {
    let target = (0..sh.backends.len()).find(|i| !tried.contains(&(*i as u32)))?;
    (attempts + 1 < sh.cfg.max_attempts).then_some(target)
}

/// Errors worth another device: device faults, out-of-memory without a fallback, and
/// proofs that did not verify.
fn retryable(e: &ProveError) -> bool {
    matches!(e, ProveError::Device(_) | ProveError::DeviceOutOfMemory(_) | ProveError::Unverified)
}

pub(super) fn gpu_worker(sh: Arc<Shared>, d: usize, w: u32, fin: Sender<FinishTask>) {
    with_dispatch(&sh.clone(), || {
        let backend = sh.backends[d].clone();
        let device = backend.device();
        while let Some(picked) = next_task(&sh, d) {
            let (task, call, view, nowhere) = match picked {
                Picked::Placed { task, call, view } => (task, Some(call), view, None),
                Picked::Nowhere { task, why } => (task, None, None, Some(why)),
            };
            let GpuTask { job, partition, assignment, queue_span, attempts, mut tried, ram } = task;
            queue_span.record("device", device);
            drop(queue_span);
            let ctx = info_span!("ctx", job = job.id.as_str(), partition = partition, worker = w, device = device);
            let _ctx = ctx.enter();
            // It ends here, without device time, when another partition of its proof failed
            // for good (run 55 ran nine more partitions of each failed proof through the GPU),
            // or when no device can hold it and there is no CPU fallback (naming the sizes).
            let refused = if job.failed() {
                Some(SKIPPED.to_string())
            } else if let (Some(why), None) = (&nowhere, &sh.fallback) {
                Some(why.clone())
            } else {
                None
            };
            if let Some(why) = refused {
                drop(call);
                sh.finish_partition(&job, partition, Err(why));
                sh.in_gpu_stage.fetch_sub(1, Ordering::SeqCst);
                continue;
            }
            let pickup = info_span!(kind::GPU_PICKUP, need_bytes = Empty, available_bytes = Empty, in_flight = Empty);
            if let Some(v) = view {
                if let Some(n) = v.need {
                    pickup.record("need_bytes", n);
                }
                if let Some(a) = v.available() {
                    pickup.record("available_bytes", a);
                }
                pickup.record("in_flight", v.in_flight as u64);
            }
            let blinding = blinding_for(sh.rng_seed, &job.id, partition);
            tried.push(d as u32);
            let retry_on = retry_target(&sh, attempts, &tried);
            // A copy for a retry after the device part succeeded (a proof that does not
            // verify); failures of the device part hand the assignment back when they can.
            // The copy is made only when its bytes fit in the RAM budget now.
            let mut backup = match retry_on {
                Some(_) => match sh.ram.try_reserve("a partition's retry copy", sh.plan.partition.synthesis()) {
                    Ok(r) => Some((assignment.clone(), r)),
                    Err(_) => None,
                },
                None => None,
            };
            let public_inputs = assignment.public_inputs().to_vec();
            drop(pickup);
            let params = &sh.params;
            let split = sh.cfg.split_finalize;
            let finish = |b: &dyn Backend, p: Pending| -> Result<Outcome, ProveError> {
                if split {
                    Ok(Outcome::Started(Box::new(p)))
                } else {
                    Ok(Outcome::Done(Box::new(b.prove_finish(p, params)?)))
                }
            };
            let outcome = if let Some(why) = &nowhere {
                // Placement found no device that can hold it: straight to the CPU fallback.
                let error = ProveError::DeviceOutOfMemory(DeviceError::backend(std::io::Error::other(why.clone())));
                Err(StartFailure { error, assignment: Some(Box::new(assignment)) })
            } else {
                // Within the calls whose host memory is reserved (a retry aimed at this device
                // was not counted by placement: it waits here for a call to end).
                // (One unit of a budget of at least one never fails to fit, and it is never
                // closed: an error here cannot happen, and would only skip the wait.)
                let _permit = sh.call_permits[d].reserve("a GPU call", 1).ok();
                let gpu = info_span!(kind::GPU, lock = sh.cfg.lock.as_str(), attempt = attempts as u64 + 1);
                let _g = gpu.enter();
                let run = || -> Result<Outcome, StartFailure> {
                    match sh.cfg.lock {
                        // `whole`: the lock covers the whole call, the G2 MSM and assembly
                        // included when they run here (no split finalisation).
                        LockMode::Whole => {
                            let _lock = acquire(&sh.locks[d].compute, "whole");
                            let gate = sh.gate(LockMode::Whole, d, &ram);
                            let pending = backend.prove_start_or_return(assignment, params, blinding, &gate)?;
                            Ok(finish(backend.as_ref(), pending)?)
                        }
                        mode => {
                            let gate = sh.gate(mode, d, &ram);
                            let pending = backend.prove_start_or_return(assignment, params, blinding, &gate)?;
                            Ok(finish(backend.as_ref(), pending)?)
                        }
                    }
                };
                catch_unwind(AssertUnwindSafe(run))
                    .unwrap_or_else(|p| Err(ProveError::Device(DeviceError::panicked("backend", p)).into()))
            };
            // Out of device memory: the partition runs on the CPU fallback instead.
            let mut used = backend.clone();
            // The copy's reservation when the fallback proves the copy (held until it ends).
            let mut _copy_ram = None;
            let outcome = match (outcome, sh.fallback.clone()) {
                (Err(StartFailure { error: ProveError::DeviceOutOfMemory(why), assignment }), Some(fb)) if assignment.is_some() || backup.is_some() => {
                    let asg = match (assignment, backup.take()) {
                        (Some(a), _) => *a,
                        (None, Some((a, r))) => {
                            _copy_ram = Some(r);
                            a
                        }
                        (None, None) => ProvingAssignment::default(),
                    };
                    sh.warn(&format!("{} partition {partition}: device {device} out of memory ({why}); proving it on the {} fallback", job.id, fb.name()));
                    let span = info_span!(kind::FALLBACK, fallback = fb.name(), reason = why.to_string().as_str());
                    let _f = span.enter();
                    used = fb.clone();
                    let gate = sh.gate(LockMode::Whole, d, &ram);
                    let run = || -> Result<Outcome, StartFailure> { Ok(finish(fb.as_ref(), fb.prove_start(asg, params, blinding, &gate)?)?) };
                    catch_unwind(AssertUnwindSafe(run))
                        .unwrap_or_else(|p| Err(ProveError::Device(DeviceError::panicked("CPU fallback", p)).into()))
                }
                (o, _) => o,
            };
            // The device part is over: the call no longer counts in the device's load.
            drop(call);
            match outcome {
                Ok(Outcome::Started(pending)) => {
                    let retry = match (retry_on, backup) {
                        (Some(target), Some((assignment, ram))) => Some(Retry { assignment, attempts, tried, target, ram }),
                        _ => None,
                    };
                    let t = FinishTask { job, partition, worker: w, device, backend: used, pending: *pending, retry, ram };
                    if let Err(e) = fin.send(t) {
                        let t = e.into_inner();
                        sh.finish_partition(&t.job, t.partition, Err("engine stopped before finalisation".into()));
                        sh.in_gpu_stage.fetch_sub(1, Ordering::SeqCst);
                    }
                    // The finaliser leaves the GPU stage (it may send the partition back).
                }
                Ok(Outcome::Done(proof)) => {
                    drop(ram);
                    let r = check(&sh, *proof, public_inputs, device, used.verifies_proofs());
                    sh.finish_partition(&job, partition, r);
                    sh.in_gpu_stage.fetch_sub(1, Ordering::SeqCst);
                }
                Err(StartFailure { error, assignment }) => match (retry_on, assignment.map(|a| (*a, ram)).or(backup.map(|(a, r)| (a, PartitionRam::new(r, sh.plan.partition.abc))))) {
                    (Some(target), Some((assignment, ram))) if retryable(&error) => {
                        sh.warn(&format!("{} partition {partition} failed on device {device}, retrying on device {target}: {error}", job.id));
                        sh.requeue(job, partition, assignment, attempts + 1, tried, target, ram);
                    }
                    _ => {
                        sh.finish_partition(&job, partition, Err(error.to_string()));
                        sh.in_gpu_stage.fetch_sub(1, Ordering::SeqCst);
                    }
                },
            }
        }
    })
}

/// Verification of a partition proof (span `verify`) when the config asks for it and
/// the backend has not already verified it.
fn check(sh: &Shared, proof: Proof, public_inputs: Vec<crate::Scalar>, device: u32, verified: bool) -> Result<PartitionProof, String> {
    if sh.cfg.verify && !verified {
        let span = info_span!(kind::VERIFY);
        let _e = span.enter();
        match crate::verifier::verify(&sh.params.vk, &proof, &public_inputs) {
            Ok(true) => {}
            Ok(false) => return Err(ProveError::Unverified.to_string()),
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(PartitionProof { proof, public_inputs, device })
}

pub(super) fn finalizer(sh: Arc<Shared>, f: u32, rx: Receiver<FinishTask>) {
    with_dispatch(&sh.clone(), || {
        for t in rx.iter() {
            if sh.abort.load(Ordering::Relaxed) {
                break;
            }
            let FinishTask { job, partition, worker, device, backend, pending, retry, ram } = t;
            let ctx = info_span!("ctx", job = job.id.as_str(), partition = partition, worker = worker, device = device, finalizer = f);
            let _e = ctx.enter();
            let public_inputs = pending.public_inputs.clone();
            let proof = catch_unwind(AssertUnwindSafe(|| backend.prove_finish(pending, &sh.params)))
                .unwrap_or_else(|p| Err(ProveError::Device(DeviceError::panicked("finaliser", p))));
            match (proof, retry) {
                (Err(error), Some(Retry { assignment, attempts, tried, target, ram: copy })) if retryable(&error) => {
                    sh.warn(&format!("{} partition {partition}: the proof of device {device} failed ({error}); retrying on device {target}", job.id));
                    drop(ram);
                    sh.requeue(job, partition, assignment, attempts + 1, tried, target, PartitionRam::new(copy, sh.plan.partition.abc));
                }
                (proof, _) => {
                    let r = proof.map_err(|e| e.to_string()).and_then(|p| check(&sh, p, public_inputs, device, backend.verifies_proofs()));
                    // The partition's memory is given back before its proof is reported.
                    drop(ram);
                    sh.finish_partition(&job, partition, r);
                    sh.in_gpu_stage.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    })
}
