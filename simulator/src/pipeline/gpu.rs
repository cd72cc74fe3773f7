//! The GPU workers of the pipeline: the prove call as a small program of steps whose
//! shape depends on the lock mode, split finalisation, pre-staging and the engine's call
//! order (`upload_after_prep`) ([`program`]), and
//! the interpreter that runs it ([`Sim::run_worker`]) against the device's locks, copy
//! engine, kernels, device-global syncs and VRAM, plus split finalisation off the worker.

use timeline::{Span, SpanKind};

use super::{job_name, ns, Ev, Sim};
use crate::config::{Config, LockMode, UploadOrder};
use crate::resources::Owner;

/// Steps of a GPU worker's prove call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Pickup,
    /// Start of GPU_START..GPU_END.
    BeginCall,
    Prep,
    /// Prep on the CPU and the upload into the worker's staging buffer, concurrently.
    PrepUpload,
    /// Upload into the worker's staging buffer, alone (whole lock + prestage).
    UploadOnly,
    Acquire(u8),
    Release(u8),
    Alloc,
    VramAlloc,
    Upload,
    Kernels,
    VramFree,
    Sync,
    BG2,
    Epilogue,
    EndCall,
}

pub(super) fn program(cfg: &Config) -> Vec<Step> {
    use Step::*;
    let p = &cfg.pipeline;
    let order = p.upload_order();
    let staged = order == UploadOrder::Prestaged;
    let mut v = vec![Pickup, BeginCall];
    let fin = |v: &mut Vec<Step>| {
        if !p.split_finalize {
            v.push(BG2);
            v.push(Epilogue);
        }
    };
    let upload_in_lock = |v: &mut Vec<Step>| {
        if !staged {
            v.push(VramAlloc);
            v.push(Upload);
        }
    };
    let free = |v: &mut Vec<Step>| {
        if !staged {
            v.push(VramFree);
        }
    };
    // This engine's order (`upload_after_prep`): the call's VRAM (placement waits for a
    // device with room before the call starts), prep, the upload, then the compute lock
    // (two_lock: the allocation lock around prep and upload).
    let after_prep = order == UploadOrder::AfterPrep;
    match p.lock {
        LockMode::Whole if after_prep => {
            v.extend([VramAlloc, Acquire(0), Prep, Upload, Kernels, VramFree]);
            fin(&mut v);
            v.push(Release(0));
        }
        LockMode::Kernels if after_prep => {
            v.extend([VramAlloc, Prep, Upload, Acquire(0), Kernels, VramFree, Release(0)]);
            fin(&mut v);
        }
        LockMode::TwoLock if after_prep => {
            let gsync = p.device_global_sync.unwrap_or(true);
            v.extend([VramAlloc, Acquire(0), Alloc, Prep]);
            if gsync {
                v.push(Sync);
            }
            v.extend([Upload, Release(0), Acquire(1), Kernels]);
            if gsync {
                v.push(Sync);
            }
            v.extend([VramFree, Release(1)]);
            fin(&mut v);
        }
        LockMode::Whole => {
            if staged {
                v.push(UploadOnly);
            }
            v.push(Acquire(0));
            upload_in_lock(&mut v);
            v.push(Prep);
            v.push(Kernels);
            free(&mut v);
            fin(&mut v);
            v.push(Release(0));
        }
        LockMode::Kernels => {
            v.push(if staged { PrepUpload } else { Prep });
            v.push(Acquire(0));
            upload_in_lock(&mut v);
            v.push(Kernels);
            free(&mut v);
            v.push(Release(0));
            fin(&mut v);
        }
        LockMode::TwoLock => {
            // The VRAM lock covers allocation and upload (into the worker's pre-staged
            // buffer when `prestage`, else into a per-call allocation); the device-global
            // syncs of the allocation path (cudaDeviceSynchronize, cudaMemPoolTrimTo) come
            // before the upload and wait for every stream, i.e. for the running kernels;
            // the compute path's sync after the kernels waits for in-flight uploads.
            let gsync = p.device_global_sync.unwrap_or(true);
            v.push(Prep);
            v.push(Acquire(0));
            v.push(Alloc);
            if !staged {
                v.push(VramAlloc);
            }
            if gsync {
                v.push(Sync);
            }
            // An upload that queues behind the other worker's kernels (pageable memory, no
            // pre-staged buffer: `uploads_wait_for_kernels`) runs under the compute lock.
            let behind = order == UploadOrder::BehindKernels;
            if !behind {
                v.push(Upload);
            }
            v.push(Release(0));
            v.push(Acquire(1));
            if behind {
                v.push(Upload);
            }
            v.push(Kernels);
            if gsync {
                v.push(Sync);
            }
            free(&mut v);
            v.push(Release(1));
            fin(&mut v);
        }
    }
    v.push(EndCall);
    v
}

impl Sim<'_> {
    // ---- GPU workers ----------------------------------------------------------------

    pub(super) fn worker_cpu_done(&mut self, w: u32) {
        let now = self.agenda.now();
        let wk = &self.workers[w as usize];
        let step = self.prog[wk.pc];
        let (start, pi, dev, idx) = (wk.step_start, wk.part, wk.device, wk.index);
        match step {
            Step::Prep | Step::PrepUpload => {
                self.span(SpanKind::PrepMsm, start, now, pi, Some(idx), Some(dev));
                self.abc_ready(w);
            }
            Step::BG2 => self.span(SpanKind::CpuMsmBG2, start, now, pi, Some(idx), Some(dev)),
            Step::Epilogue => self.span(SpanKind::Finalize, start, now, pi, Some(idx), Some(dev)),
            _ => {}
        }
        self.step_part_done(w);
    }

    /// One of the step's parallel parts finished; advance when all are.
    pub(super) fn step_part_done(&mut self, w: u32) {
        let wk = &mut self.workers[w as usize];
        wk.pending = wk.pending.saturating_sub(1);
        if wk.pending == 0 {
            wk.pc += 1;
            self.run_worker(w);
        }
    }

    pub(super) fn start_cpu(&mut self, w: u32, work: u64, cores: f64, bw: f64) {
        let now = self.now();
        self.pool.start(now, work, cores, bw, false, Owner::Worker(w));
    }

    /// What an upload does once before its copy, ns: it takes one of its device's upload
    /// staging sets, allocating one (`startup.staging_alloc_s`) when every set is in use,
    /// and in its device's first call, with `startup.params_upload = first_call`, it
    /// uploads the parameters (an `h2d` span `what = params`); another call's upload in the
    /// meantime waits for them. Not for a pre-staged upload (`PrepUpload`: its buffer is
    /// allocated at the start, and the engine modelled there uploads its parameters first).
    pub(super) fn upload_setup(&mut self, w: u32) -> u64 {
        let st = &self.cfg.startup;
        let now = self.now();
        let (dev, idx, pi) = {
            let wk = &self.workers[w as usize];
            (wk.device, wk.index, wk.part)
        };
        self.workers[w as usize].staging = true;
        let d = &mut self.devices[dev as usize];
        d.staging_in_use += 1;
        let mut alloc = 0;
        if d.staging_in_use > d.staging_sets {
            d.staging_sets += 1;
            alloc = ns(st.staging_alloc_s);
        }
        let params = std::mem::take(&mut d.params_pending);
        // A call that comes while the first one is uploading the parameters waits for them.
        let wait = if params { 0 } else { d.params_ready_at.saturating_sub(now) };
        self.workers[w as usize].staging_alloc = alloc;
        let mut extra = alloc + wait;
        if params {
            let up = ns(st.params_upload_s);
            if up > 0 {
                self.span_with(SpanKind::H2d, now, now + up, pi, Some(idx), Some(dev), Some(("what", "params".into())));
            }
            extra += up;
            self.devices[dev as usize].params_ready_at = now + up;
        }
        extra
    }

    pub(super) fn request_copy(&mut self, w: u32) {
        let dev = self.workers[w as usize].device as usize;
        let d = &mut self.devices[dev];
        if d.copies_running == 0 {
            self.start_copy(w);
        } else {
            d.copy_queue.push_back(w);
        }
    }

    pub(super) fn start_copy(&mut self, w: u32) {
        let now = self.now();
        let dev = self.workers[w as usize].device as usize;
        let d = &mut self.devices[dev];
        d.copies_running += 1;
        d.copy_since = now;
        // The a/b/c go first; when they are only a part of the upload, they are on the
        // device before it ends (at the nominal rate: a copy stretched by the host's
        // bandwidth ends later still).
        if self.workers[w as usize].abc_wait > 0 && self.abc_upload_ns < self.upload_ns {
            self.agenda.after(self.abc_upload_ns, Ev::AbcUploaded(w));
        }
        if self.cfg.cpu.uploads_use_host_bandwidth {
            // The DMA engine reads host memory at the link's rate: the upload draws that
            // bandwidth from the shared pool and stretches when it is oversubscribed.
            let bw = self.cfg.machine.pcie_gbs;
            self.pool.start(now, self.upload_ns, 0.0, bw, false, Owner::Copy(w));
        } else {
            self.agenda.after(self.upload_ns, Ev::CopyDone(w));
        }
    }

    pub(super) fn copy_done(&mut self, w: u32) {
        let now = self.now();
        let (dev, idx, pi) = {
            let wk = &self.workers[w as usize];
            (wk.device, wk.index, wk.part)
        };
        let since = self.devices[dev as usize].copy_since;
        // With a staging set allocated, the span starts with its allocation, as the engine's
        // does (`staging_ns`), so that `calibrate` reads it back (and leaves it out of the
        // upload's cost: what the span has after it is the copy alone).
        let alloc = std::mem::take(&mut self.workers[w as usize].staging_alloc);
        // The device's part of it (`costs.upload_device_gib`), at its end, as the engine's
        // spans say it (`gpu_ns`): the analyzer counts only that part as device work.
        let staging = (alloc > 0).then(|| ("staging_ns", alloc.into()));
        let device = self.upload_device_ns.map(|d| (timeline::event::arg::GPU_NS, d.min(now - since).into()));
        self.span_with(SpanKind::H2d, since.saturating_sub(alloc), now, pi, Some(idx), Some(dev), staging.into_iter().chain(device));
        let staged = std::mem::take(&mut self.workers[w as usize].staging);
        let d = &mut self.devices[dev as usize];
        if staged {
            d.staging_in_use -= 1;
        }
        d.copies_running -= 1;
        d.pcie_busy = d.pcie_busy.saturating_add(now - d.copy_since);
        if let Some(next) = d.copy_queue.pop_front() {
            self.start_copy(next);
        }
        self.wake_syncs(dev);
        if self.abc_upload_ns >= self.upload_ns {
            self.abc_ready(w);
        }
        self.step_part_done(w);
    }

    /// The first phase of the two-phase release (`early_release`): a partition's a/b/c
    /// (`abc_gib`) leave its reservation once its GPU call has done both its prep and the
    /// a/b/c part of its upload ([`crate::floors::abc_upload_s`]: `abc_gib` at the link's
    /// rate from the copy's start, at most the whole upload; with no upload modelled, the
    /// prep alone) — each of them calls this once, and the last one releases and lets a
    /// waiting synthesis start. That is where the engine gives them back: the CUDA backend
    /// (`device_part_on` in prover/src/gpu/backend.rs) runs `prep_msm`, uploads a/b/c (`h2d`
    /// what=abc), frees the host copy off the worker thread and then releases the budget
    /// share (`Gate::abc_release`). Measured from the `ram_reserved_bytes` drops: 3.92 s
    /// after the call's start in run 69 (mean; prep ends at 3.11 s, the a/b/c upload at
    /// 3.84) and 2.45 s in run 70 (2.40 after the upload). Releasing at the call's start,
    /// as the model did before, admitted the next synthesis seconds early and left the
    /// calibrated models of runs 69 and 70 optimistic (steady s/proof −15 % and −4 % against
    /// the measured partition rate; reports in docs/reference/simulator.md). Not modelled:
    /// the free before the release (50–80 ms in those runs), and the CPU backend (fallback),
    /// which releases only after the H MSM.
    pub(super) fn abc_ready(&mut self, w: u32) {
        let wk = &mut self.workers[w as usize];
        if wk.abc_wait == 0 {
            return;
        }
        wk.abc_wait -= 1;
        if wk.abc_wait > 0 {
            return;
        }
        let Some(pi) = wk.part else { return };
        let abc = self.cfg.abc_gib();
        self.parts[pi as usize].footprint_gib -= abc;
        self.ram_change(-abc);
        self.start_syntheses();
    }

    pub(super) fn wake_syncs(&mut self, dev: u32) {
        let d = &mut self.devices[dev as usize];
        if d.kernels_running == 0 && d.copies_running == 0 && !d.sync_waiters.is_empty() {
            let waiters = std::mem::take(&mut d.sync_waiters);
            let now = self.agenda.now();
            for w in waiters {
                self.agenda.at(now, Ev::Resume(w));
            }
        }
    }

    pub(super) fn kernels_done(&mut self, w: u32) {
        let dev = self.workers[w as usize].device;
        let d = &mut self.devices[dev as usize];
        d.kernels_running -= 1;
        self.wake_syncs(dev);
        self.workers[w as usize].pc += 1;
        self.run_worker(w);
    }

    pub(super) fn release_lock(&mut self, w: u32, l: usize) {
        let now = self.now();
        let (dev, idx, pi, acquired) = {
            let wk = &self.workers[w as usize];
            (wk.device, wk.index, wk.part, wk.lock_acquired[l])
        };
        let counted = l == if self.cfg.pipeline.lock == LockMode::TwoLock { 1 } else { 0 };
        let lock = lock_name(self.cfg.pipeline.lock, l);
        self.span_with(SpanKind::LockHold, acquired, now, pi, Some(idx), Some(dev), Some(("lock", lock.into())));
        let d = &mut self.devices[dev as usize];
        if counted {
            d.lock_busy = d.lock_busy.saturating_add(now - acquired);
        }
        d.locks[l] = None;
        if let Some(next) = d.lock_waiters[l].pop_front() {
            d.locks[l] = Some(next);
            self.agenda.at(now, Ev::Resume(next));
            self.lock_wait_sum = self.lock_wait_sum.saturating_add(now - self.workers[next as usize].lock_acquired[l]);
            self.lock_queued -= 1;
            self.lock_queue.set(now, self.lock_queued as f64);
        }
    }

    /// Run a worker's program until it blocks (CPU work, copy, kernels, a lock, a sync).
    pub(super) fn run_worker(&mut self, w: u32) {
        loop {
            if self.failure.is_some() {
                return;
            }
            let now = self.now();
            let pc = self.workers[w as usize].pc;
            let Some(pi) = self.workers[w as usize].part else { return };
            let step = self.prog[pc];
            let (dev, idx) = (self.workers[w as usize].device, self.workers[w as usize].index);
            self.workers[w as usize].step_start = now;
            let part = self.parts[pi as usize];
            let cfg = self.cfg;
            let d = &cfg.cpu;
            match step {
                Step::Pickup => {
                    // Resumed with pc still 0 after the pickup delay has passed?
                    if part.pickup > 0 && self.workers[w as usize].pending == 0 {
                        self.workers[w as usize].pending = 1;
                        self.agenda.after(part.pickup, Ev::Resume(w));
                        return;
                    }
                    self.workers[w as usize].pending = 0;
                    self.span(SpanKind::GpuPickup, now - part.pickup, now, Some(pi), Some(idx), Some(dev));
                }
                Step::BeginCall => {
                    self.workers[w as usize].call_start = now;
                    let dv = &mut self.devices[dev as usize];
                    if dv.active_calls == 0 {
                        dv.union_since = now;
                    }
                    dv.active_calls += 1;
                    dv.first_call.get_or_insert(now);
                    if self.cfg.memory.early_release {
                        // Given back once the prep and the a/b/c part of the upload (when
                        // one is modelled) are done: `abc_ready`.
                        self.workers[w as usize].abc_wait = 1 + u8::from(self.upload_ns > 0);
                    }
                }
                Step::Prep => {
                    if part.prep > 0 {
                        self.workers[w as usize].pending = 1;
                        self.start_cpu(w, part.prep, d.prep_cores, d.prep_bw_gbs);
                        return;
                    }
                    self.abc_ready(w);
                }
                Step::PrepUpload => {
                    let mut n = 0;
                    if self.upload_ns > 0 {
                        n += 1;
                    }
                    if part.prep > 0 {
                        n += 1;
                    } else {
                        self.abc_ready(w);
                    }
                    if n > 0 {
                        self.workers[w as usize].pending = n;
                        if part.prep > 0 {
                            self.start_cpu(w, part.prep, d.prep_cores, d.prep_bw_gbs);
                        }
                        if self.upload_ns > 0 {
                            self.request_copy(w);
                        }
                        return;
                    }
                }
                Step::UploadOnly | Step::Upload => {
                    if self.upload_ns > 0 {
                        if !self.workers[w as usize].upload_prepared {
                            self.workers[w as usize].upload_prepared = true;
                            let extra = self.upload_setup(w);
                            if extra > 0 {
                                self.workers[w as usize].pending = 1;
                                self.agenda.after(extra, Ev::Resume(w));
                                return;
                            }
                        }
                        self.workers[w as usize].upload_prepared = false;
                        self.workers[w as usize].pending = 1;
                        self.request_copy(w);
                        return;
                    }
                }
                Step::Acquire(l) => {
                    let l = l as usize;
                    let dv = &mut self.devices[dev as usize];
                    match dv.locks[l] {
                        None => {
                            dv.locks[l] = Some(w);
                        }
                        Some(holder) if holder == w => {
                            // Granted by the releasing worker while we waited.
                            let since = self.workers[w as usize].lock_acquired[l];
                            if self.record {
                                let s = Span::new(SpanKind::LockWait, since, now)
                                    .worker(idx)
                                    .device(dev)
                                    .arg("lock", lock_name(self.cfg.pipeline.lock, l))
                                    .job(job_name(part.proof))
                                    .partition(part.index);
                                self.spans.push(s);
                            }
                        }
                        Some(_) => {
                            dv.lock_waiters[l].push_back(w);
                            // Remember when the wait began (overwritten on grant).
                            self.workers[w as usize].lock_acquired[l] = now;
                            self.lock_queued += 1;
                            self.lock_waits += 1;
                            self.lock_queue.set(now, self.lock_queued as f64);
                            return;
                        }
                    }
                    self.workers[w as usize].lock_acquired[l] = now;
                }
                Step::Release(l) => self.release_lock(w, l as usize),
                Step::Alloc => {
                    if part.alloc > 0 && self.workers[w as usize].pending == 0 {
                        self.workers[w as usize].pending = 1;
                        self.agenda.after(part.alloc, Ev::Resume(w));
                        return;
                    }
                    self.workers[w as usize].pending = 0;
                }
                Step::VramAlloc => {
                    let need = self.cfg.memory.call_vram_gib;
                    let cap = self.cfg.vram_cap_gib();
                    let fixed = self.cfg.vram_static_gib();
                    let wait = self.cfg.memory.vram_policy == crate::config::VramPolicy::Wait;
                    let dv = &mut self.devices[dev as usize];
                    if dv.vram_used + need > cap + 1e-9 {
                        let used = dv.vram_used;
                        // Waiting helps only if another call holds VRAM that it will free.
                        if wait && used > fixed + 1e-9 && fixed + need <= cap + 1e-9 {
                            dv.vram_waiters.push_back(w);
                            self.workers[w as usize].vram_wait_since.get_or_insert(now);
                            return;
                        }
                        self.fail("vram_oom", format!("GPU {dev} worker {idx}: a call needs {need} GiB with {used:.1} of {cap} GiB in use"));
                        return;
                    }
                    dv.vram_used += need;
                    dv.vram_peak = dv.vram_peak.max(dv.vram_used);
                    if let Some(since) = self.workers[w as usize].vram_wait_since.take() {
                        self.vram_waits += 1;
                        self.vram_wait_sum = self.vram_wait_sum.saturating_add(now - since);
                        if self.record {
                            let s = Span::new(SpanKind::LockWait, since, now)
                                .worker(idx)
                                .device(dev)
                                .arg("lock", "vram_budget")
                                .job(job_name(part.proof))
                                .partition(part.index);
                            self.spans.push(s);
                        }
                    }
                }
                Step::VramFree => {
                    let dv = &mut self.devices[dev as usize];
                    dv.vram_used -= self.cfg.memory.call_vram_gib;
                    // Calls waiting for VRAM try again, in the order they came.
                    for waiter in std::mem::take(&mut dv.vram_waiters) {
                        self.agenda.at(now, Ev::Resume(waiter));
                    }
                }
                Step::Kernels => {
                    let kernels = part.k_ntt_h + part.k_batch + part.k_tail + part.k_rest + part.k_g2;
                    // Streamed parameters: their transfer adds to the kernel region, or
                    // overlaps it (double-buffered chunks).
                    let stream = self.params_stream_ns;
                    let total = if self.cfg.memory.params_stream_overlap { kernels.max(stream) } else { kernels + stream };
                    let dv = &mut self.devices[dev as usize];
                    dv.kernels_running += 1;
                    dv.kernel_busy = dv.kernel_busy.saturating_add(kernels);
                    dv.pcie_busy = dv.pcie_busy.saturating_add(stream);
                    if self.record && stream > 0 {
                        let s = Span::new(SpanKind::H2d, now, now + stream).worker(idx).device(dev).arg("what", "params").job(job_name(part.proof)).partition(part.index);
                        self.spans.push(s);
                    }
                    if self.record {
                        let mut t = if self.cfg.memory.params_stream_overlap { now } else { now + stream };
                        for (kind, dur) in [
                            (SpanKind::NttMsmH, part.k_ntt_h),
                            (SpanKind::BatchAdd, part.k_batch),
                            (SpanKind::TailMsm, part.k_tail),
                            (SpanKind::MsmRest, part.k_rest),
                            (SpanKind::MsmBG2, part.k_g2),
                        ] {
                            if dur == 0 {
                                continue;
                            }
                            self.spans.push(Span::new(kind, t, t + dur).worker(idx).device(dev).job(job_name(part.proof)).partition(part.index));
                            t = t.saturating_add(dur);
                        }
                    }
                    self.agenda.after(total, Ev::KernelsDone(w));
                    return;
                }
                Step::Sync => {
                    let dv = &mut self.devices[dev as usize];
                    if dv.kernels_running > 0 || dv.copies_running > 0 {
                        dv.sync_waiters.push(w);
                        return;
                    }
                }
                Step::BG2 => {
                    if part.b_g2 > 0 {
                        self.workers[w as usize].pending = 1;
                        self.start_cpu(w, part.b_g2, d.finalize_cores, d.finalize_bw_gbs);
                        return;
                    }
                }
                Step::Epilogue => {
                    if part.epilogue > 0 {
                        self.workers[w as usize].pending = 1;
                        self.start_cpu(w, part.epilogue, d.finalize_cores, d.finalize_bw_gbs);
                        return;
                    }
                }
                Step::EndCall => {
                    self.end_call(w, pi);
                    return;
                }
            }
            self.workers[w as usize].pc += 1;
        }
    }

    pub(super) fn end_call(&mut self, w: u32, pi: u32) {
        let now = self.now();
        let (dev, idx, start) = {
            let wk = &self.workers[w as usize];
            (wk.device, wk.index, wk.call_start)
        };
        self.call_sum = self.call_sum.saturating_add(now - start);
        self.call_n += 1;
        if self.record {
            let pt = &self.parts[pi as usize];
            let s = Span::new(SpanKind::Gpu, start, now)
                .job(job_name(pt.proof))
                .partition(pt.index)
                .worker(idx)
                .device(dev)
                .arg("gpu_ms", ((now - start) as f64 / 1e6).round() as u64);
            self.spans.push(s);
        }
        let dv = &mut self.devices[dev as usize];
        dv.active_calls -= 1;
        dv.placed = dv.placed.saturating_sub(1);
        if dv.active_calls == 0 {
            dv.union_busy = dv.union_busy.saturating_add(now - dv.union_since);
        }
        dv.last_call_end = now;
        let wk = &mut self.workers[w as usize];
        wk.part = None;
        wk.pc = 0;
        // (Released at the latest with the rest, when the partition is finished.)
        wk.abc_wait = 0;
        self.idle.push_back(w);
        let busy = (self.workers.len() - self.idle.len()) as f64;
        self.gw_busy.set(now, busy);
        if self.cfg.pipeline.split_finalize {
            self.finalize_enqueue(pi);
        } else {
            self.partition_done(pi);
        }
        self.dispatch();
    }

    /// Split finalisation: a finished call waits for a free finaliser (FIFO) when their
    /// number is limited, then runs [`Self::finalizer_step`].
    fn finalize_enqueue(&mut self, pi: u32) {
        match self.cfg.pipeline.finalizers {
            Some(n) if self.fin_busy >= n => self.fin_queue.push_back(pi),
            _ => {
                self.fin_busy = self.fin_busy.saturating_add(1);
                self.finalizer_step(pi, 0);
            }
        }
    }

    /// Split finalisation: b_g2_msm (stage 0), then the epilogue (stage 1), off the worker
    /// on the shared CPU pool; stage 2 means finished, and the finaliser takes the next
    /// partition waiting for one.
    pub(super) fn finalizer_step(&mut self, pi: u32, stage: u8) {
        let cfg = self.cfg;
        let part = self.parts[pi as usize];
        let work = match stage {
            0 => part.b_g2,
            1 => part.epilogue,
            _ => {
                self.partition_done(pi);
                self.fin_busy = self.fin_busy.saturating_sub(1);
                if let Some(next) = self.fin_queue.pop_front() {
                    self.fin_busy = self.fin_busy.saturating_add(1);
                    self.finalizer_step(next, 0);
                }
                return;
            }
        };
        if work == 0 {
            self.finalizer_step(pi, stage + 1);
            return;
        }
        let now = self.now();
        self.parts[pi as usize].fin_start = now;
        let d = &cfg.cpu;
        self.pool.start(now, work, d.finalize_cores, d.finalize_bw_gbs, false, Owner::Finalizer(pi, stage));
    }

    pub(super) fn finalizer_done(&mut self, pi: u32, stage: u8) {
        let now = self.now();
        let start = self.parts[pi as usize].fin_start;
        let kind = if stage == 0 { SpanKind::CpuMsmBG2 } else { SpanKind::Finalize };
        self.span(kind, start, now, Some(pi), None, None);
        self.finalizer_step(pi, stage + 1);
    }

}

pub(super) fn lock_name(mode: LockMode, l: usize) -> &'static str {
    match (mode, l) {
        (LockMode::TwoLock, 0) => "vram",
        (LockMode::TwoLock, _) => "compute",
        _ => "gpu",
    }
}

#[cfg(test)]
mod tests {
    use super::Step::*;
    use super::*;

    fn cfg(lock: LockMode, flags: (bool, bool, bool)) -> Config {
        let mut c = Config::from_toml_str(include_str!("../../configs/phase8.toml"), "phase8.toml").unwrap();
        let p = &mut c.pipeline;
        (p.lock, p.split_finalize, p.device_global_sync) = (lock, true, Some(false));
        (p.prestage, p.upload_after_prep, p.uploads_wait_for_kernels) = flags;
        c
    }

    #[test]
    fn the_upload_order_is_one_value_of_the_three_flags_and_places_the_upload() {
        let order = |f| cfg(LockMode::Kernels, f).pipeline.upload_order();
        assert_eq!(order((true, false, false)), UploadOrder::Prestaged);
        assert_eq!(order((true, false, true)), UploadOrder::Prestaged, "a pre-staged buffer wins over waiting");
        assert_eq!(order((false, true, false)), UploadOrder::AfterPrep);
        assert_eq!(order((false, false, true)), UploadOrder::BehindKernels);
        assert_eq!(order((false, false, false)), UploadOrder::InLock);
        // Where each order puts the upload under `kernels` (split finalisation, no syncs).
        let prog = |l, f| program(&cfg(l, f))[2..].to_vec();
        assert_eq!(prog(LockMode::Kernels, (false, true, false)), [VramAlloc, Prep, Upload, Acquire(0), Kernels, VramFree, Release(0), EndCall]);
        assert_eq!(prog(LockMode::Kernels, (false, false, false)), [Prep, Acquire(0), VramAlloc, Upload, Kernels, VramFree, Release(0), EndCall]);
        assert_eq!(prog(LockMode::Kernels, (true, false, false)), [PrepUpload, Acquire(0), Kernels, Release(0), EndCall]);
        // Under `two_lock`: behind the kernels = under the compute lock, else under the VRAM lock.
        assert_eq!(prog(LockMode::TwoLock, (false, false, true)), [Prep, Acquire(0), Alloc, VramAlloc, Release(0), Acquire(1), Upload, Kernels, VramFree, Release(1), EndCall]);
        assert_eq!(prog(LockMode::TwoLock, (false, false, false)), [Prep, Acquire(0), Alloc, VramAlloc, Upload, Release(0), Acquire(1), Kernels, VramFree, Release(1), EndCall]);
    }
}
