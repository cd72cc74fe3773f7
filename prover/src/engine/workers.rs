//! The engine's thread bodies: partition-synthesis workers, GPU workers (one set per
//! device) and finalisers. Each thread installs the engine's event dispatch, wraps its
//! work in a `ctx` span carrying job / partition / worker / device, and opens one span
//! per stage, so the timeline shows exactly what each thread did and waited for.

use timeline::event::kind;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use timeline::event::counters::QUEUE_DEPTH;
use tracing::info_span;

use super::locks::{acquire, EngineGate};
use super::budget::{BudgetError, Reservation};
use super::{FinishTask, GpuTask, LockMode, PartitionProof, PartitionRam, Retry, Shared, SynthTask, SynthesisMode};
use crate::backend::{Backend, Blinding, DeviceError, Pending, ProveError, StartFailure};
use crate::synthesis::ProvingAssignment;
use crate::proof::Proof;

fn with_dispatch<T>(sh: &Shared, f: impl FnOnce() -> T) -> T {
    match &sh.dispatch {
        Some(d) => tracing::dispatcher::with_default(d, f),
        None => f(),
    }
}

/// A partition's working set from the RAM budget, waiting (span `ram_wait`) until it fits.
fn reserve_partition(sh: &Shared) -> Result<Reservation, BudgetError> {
    let bytes = sh.plan.partition.synthesis();
    let what = "a partition's working set";
    match sh.ram.try_reserve(what, bytes) {
        Err(BudgetError::WouldBlock { free, .. }) => {
            let span = info_span!(kind::RAM_WAIT, bytes = bytes, free = free, reserved = sh.ram.reserved(), budget = sh.ram.total());
            let _e = span.enter();
            sh.ram.reserve(what, bytes)
        }
        r => r,
    }
}

pub(super) fn synth_worker(sh: Arc<Shared>, w: u32, rx: Receiver<SynthTask>, tx: Sender<GpuTask>, pool: Option<rayon::ThreadPool>) {
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
                sh.finish_partition(&job, partition, Err("skipped: another partition of this proof failed".into()));
                continue;
            }
            let ctx = info_span!("ctx", job = job.id.as_str(), partition = partition, worker = w);
            let entered = ctx.enter();
            // A synthesis starts only when its working set fits in the RAM budget.
            let ram = match reserve_partition(&sh) {
                Ok(r) => r,
                Err(BudgetError::Closed { .. }) => break,
                Err(e) => {
                    drop(entered);
                    sh.finish_partition(&job, partition, Err(e.to_string()));
                    continue;
                }
            };
            let held = ram.bytes();
            let synthesize = || match sh.cfg.synthesis {
                SynthesisMode::Circuit => circuit.synthesize(hint),
                SynthesisMode::Pce => super::pce_slot::synthesize(&sh, circuit, hint, pool.as_ref(), held),
            };
            let synthesized = catch_unwind(AssertUnwindSafe(synthesize))
                .unwrap_or_else(|p| Err(ProveError::Device(DeviceError::panicked("synthesis", p))));
            drop(entered);
            match synthesized {
                Err(e) => sh.finish_partition(&job, partition, Err(e.to_string())),
                Ok(assignment) => {
                    let queue_span = info_span!(parent: None, kind::GPU_QUEUE, job = job.id.as_str(), partition = partition);
                    sh.in_gpu_stage.fetch_add(1, Ordering::SeqCst);
                    let depth = sh.queue_depth.fetch_add(1, Ordering::SeqCst) + 1;
                    if sh.cfg.events {
                        sh.sink.counter(QUEUE_DEPTH, depth as f64, None);
                    }
                    // The permit: this worker stays blocked until the queue accepts.
                    let ram = PartitionRam::new(ram, sh.plan.partition.abc);
                    let task = GpuTask { job, partition, assignment, queue_span, attempts: 0, tried: Vec::new(), ram };
                    if tx.send(task).is_err() {
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

fn next_task(sh: &Shared, d: usize, rx: &Receiver<GpuTask>) -> Option<GpuTask> {
    loop {
        if sh.abort.load(Ordering::Relaxed) {
            return None;
        }
        if let Some(t) = sh.retry[d].lock().ok().and_then(|mut q| q.pop_front()) {
            return Some(t);
        }
        match rx.recv_timeout(Duration::from_millis(10)) {
            Ok(t) => {
                let depth = sh.queue_depth.fetch_sub(1, Ordering::SeqCst).saturating_sub(1);
                if sh.cfg.events {
                    sh.sink.counter(QUEUE_DEPTH, depth as f64, None);
                }
                return Some(t);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
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

pub(super) fn gpu_worker(sh: Arc<Shared>, d: usize, w: u32, rx: Receiver<GpuTask>, fin: Sender<FinishTask>) {
    with_dispatch(&sh.clone(), || {
        let backend = sh.backends[d].clone();
        let device = backend.device();
        while let Some(task) = next_task(&sh, d, &rx) {
            let GpuTask { job, partition, assignment, queue_span, attempts, mut tried, ram } = task;
            drop(queue_span);
            let ctx = info_span!("ctx", job = job.id.as_str(), partition = partition, worker = w, device = device);
            let _ctx = ctx.enter();
            let pickup = info_span!(kind::GPU_PICKUP);
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
            let outcome = {
                let gpu = info_span!(kind::GPU, lock = sh.cfg.lock.as_str(), attempt = attempts as u64 + 1);
                let _g = gpu.enter();
                let run = || -> Result<Outcome, StartFailure> {
                    match sh.cfg.lock {
                        // `whole`: the lock covers the whole call, the G2 MSM and assembly
                        // included when they run here (no split finalisation).
                        LockMode::Whole => {
                            let _lock = acquire(&sh.locks[d].compute, "whole");
                            let gate = EngineGate { mode: LockMode::Whole, locks: &sh.locks[d], ram: Some(&ram) };
                            let pending = backend.prove_start_or_return(assignment, params, blinding, &gate)?;
                            Ok(finish(backend.as_ref(), pending)?)
                        }
                        mode => {
                            let gate = EngineGate { mode, locks: &sh.locks[d], ram: Some(&ram) };
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
                    let gate = EngineGate { mode: LockMode::Whole, locks: &sh.locks[d], ram: Some(&ram) };
                    let run = || -> Result<Outcome, StartFailure> { Ok(finish(fb.as_ref(), fb.prove_start(asg, params, blinding, &gate)?)?) };
                    catch_unwind(AssertUnwindSafe(run))
                        .unwrap_or_else(|p| Err(ProveError::Device(DeviceError::panicked("CPU fallback", p)).into()))
                }
                (o, _) => o,
            };
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
