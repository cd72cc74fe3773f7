//! `CudaBackend`: the prover's device part on one GPU, behind the same [`Backend`] trait
//! as the CPU backend and bit-identical to it (same H coefficients, same MSM sums, so the
//! same proof for the same blinding).
//!
//! Per partition: `prep_msm` (CPU density split, under the allocation gate, with the
//! upload of the query points the first time a parameter set is seen: they then stay
//! resident), then under the compute gate the NTTs of H, `msm_h`, and the split MSMs
//! `msm_l`, `msm_a`, `msm_b_g1` (each with nested `batch_add` and `tail_msm`). Every span
//! carries `gpu_ns`, the CUDA-event time of its device work; `h2d`/`d2h` spans the copies.
//! The G2 MSM and assembly stay on the CPU (`prove_finish` default), overlapped by the
//! engine's finaliser.

use std::sync::{Arc, Mutex};

use blstrs::G1Projective;
use group::Group;
use tracing::{field::Empty, info_span};

use super::device::{Ctx, Gpu, GpuError};
use super::msm::DevicePoints;
use crate::backend::{Backend, Blinding, Gate, Pending, ProveError};
use crate::domain::Domain;
use crate::msm::Split;
use crate::params::Parameters;
use crate::prover;
use crate::synthesis::ProvingAssignment;

/// Query points of one parameter set, resident on the device.
struct ResidentParams {
    key: (String, usize, usize, usize, usize, usize),
    h: DevicePoints,
    l: DevicePoints,
    a: DevicePoints,
    b_g1: DevicePoints,
}

/// One GPU as a proving device.
pub struct CudaBackend {
    gpu: Gpu,
    device: u32,
    resident: Mutex<Option<Arc<ResidentParams>>>,
}

fn dev_err(e: GpuError) -> ProveError {
    ProveError::Device(e.to_string())
}

fn ns(ms: f64) -> u64 {
    (ms * 1e6).round().max(0.0) as u64
}

impl CudaBackend {
    pub fn new(gpu: Gpu, device: u32) -> Self {
        CudaBackend { gpu, device, resident: Mutex::new(None) }
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    fn params_key(params: &Parameters) -> (String, usize, usize, usize, usize, usize) {
        (params.info.circuit_id.clone(), params.h.as_ptr() as usize, params.h.len(), params.l.len(), params.a.len(), params.b_g1.len())
    }

    /// The device copy of `params`' G1 queries (uploaded on first use; span `h2d`).
    fn resident(&self, params: &Parameters) -> Result<Arc<ResidentParams>, GpuError> {
        let key = Self::params_key(params);
        let mut slot = self.resident.lock().map_err(|_| GpuError::Other("poisoned parameter cache".into()))?;
        if let Some(r) = slot.as_ref().filter(|r| r.key == key) {
            return Ok(r.clone());
        }
        *slot = None; // free the previous set first
        let span = info_span!("h2d", what = "params", bytes = ((params.h.len() + params.l.len() + params.a.len() + params.b_g1.len()) * 96) as u64, gpu_ns = Empty);
        let _e = span.enter();
        let t0 = self.gpu.timer()?;
        let r = Arc::new(ResidentParams {
            key,
            h: self.gpu.upload_points(&params.h)?,
            l: self.gpu.upload_points(&params.l)?,
            a: self.gpu.upload_points(&params.a)?,
            b_g1: self.gpu.upload_points(&params.b_g1)?,
        });
        let t1 = self.gpu.timer()?;
        span.record("gpu_ns", ns(t0.ms_to(&t1)?));
        *slot = Some(r.clone());
        Ok(r)
    }

    /// batch_add + tail_msm of one split MSM on the device, spans nested in `name`.
    fn split_msm(&self, name: &'static str, bases: &DevicePoints, split: &Split) -> Result<G1Projective, GpuError> {
        if let Some(bad) = split.ones.iter().chain(&split.tail_idx).find(|&&i| i as usize >= bases.len) {
            return Err(GpuError::Other(format!("{name}: point index {bad} out of {} query points", bases.len)));
        }
        let ones = {
            let s = info_span!("batch_add", query = name, points = split.ones.len() as u64, gpu_ns = Empty);
            let _e = s.enter();
            if split.ones.is_empty() {
                G1Projective::identity()
            } else {
                let idx = self.gpu.stream.clone_htod(&split.ones).ctx("upload ones")?;
                let (p, ms) = self.gpu.sum_indexed(bases, Some(&idx.as_view()), split.ones.len())?;
                s.record("gpu_ns", ns(ms));
                p
            }
        };
        let tail = {
            let s = info_span!("tail_msm", query = name, points = split.tail.len() as u64, gpu_ns = Empty);
            let _e = s.enter();
            if split.tail.is_empty() {
                G1Projective::identity()
            } else {
                let (idx, scalars) = {
                    let h = info_span!("h2d", what = name, bytes = (split.tail.len() * 36) as u64, gpu_ns = Empty);
                    let _e = h.enter();
                    let t0 = self.gpu.timer()?;
                    let idx = self.gpu.stream.clone_htod(&split.tail_idx).ctx("upload tail indices")?;
                    // Canonical little-endian u64 limbs = 8 little-endian u32 words.
                    let words: Vec<u32> = split.tail.iter().flat_map(|l| l.iter().flat_map(|x| [*x as u32, (x >> 32) as u32])).collect();
                    let scalars = self.gpu.stream.clone_htod(&words).ctx("upload tail scalars")?;
                    let t1 = self.gpu.timer()?;
                    h.record("gpu_ns", ns(t0.ms_to(&t1)?));
                    (idx, scalars)
                };
                let (p, t) = self.gpu.msm_device_ex(bases, &scalars, split.tail.len(), Some(&idx), false)?;
                s.record("gpu_ns", ns(t.total_ms));
                p
            }
        };
        Ok(ones + tail)
    }

    fn device_part(&self, asg: ProvingAssignment, params: &Parameters, blinding: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        let (plan, res) = {
            let _alloc = gate.alloc();
            let plan = prover::prep_msm(&asg, params)?;
            (plan, self.resident(params).map_err(dev_err)?)
        };
        let public_inputs = asg.public_inputs().to_vec();
        let ProvingAssignment { a, b, c, .. } = asg;
        let _compute = gate.compute();
        let d = Domain::new(a.len())?;
        if d.n as u64 != params.info.domain_size {
            return Err(ProveError::ParamsMismatch(format!("domain of {} points, the parameters have {}", d.n, params.info.domain_size)));
        }
        let (hbuf, h_len) = {
            let span = info_span!("ntt", n = d.n as u64, gpu_ns = Empty, h2d_ns = Empty);
            let _e = span.enter();
            let (buf, t) = self.gpu.h_quotient_device(&a, &b, &c, d.log_n).map_err(dev_err)?;
            span.record("gpu_ns", ns(t.ntt_ms));
            span.record("h2d_ns", ns(t.h2d_ms));
            (buf, d.n - 1)
        };
        drop((a, b, c));
        let h = {
            let n = h_len.min(res.h.len);
            let span = info_span!("msm_h", points = n as u64, gpu_ns = Empty);
            let _e = span.enter();
            let (p, t) = self.gpu.msm_device(&res.h, &hbuf, n).map_err(dev_err)?;
            span.record("gpu_ns", ns(t.total_ms));
            p
        };
        drop(hbuf);
        let run = |name: &'static str, bases: &DevicePoints, split: &Split| -> Result<G1Projective, ProveError> {
            let span = match name {
                "msm_l" => info_span!("msm_l", points = split.len as u64, zeros = split.zeros as u64, ones = split.ones.len() as u64, tail = split.tail.len() as u64),
                "msm_a" => info_span!("msm_a", points = split.len as u64, zeros = split.zeros as u64, ones = split.ones.len() as u64, tail = split.tail.len() as u64),
                _ => info_span!("msm_b_g1", points = split.len as u64, zeros = split.zeros as u64, ones = split.ones.len() as u64, tail = split.tail.len() as u64),
            };
            let _e = span.enter();
            self.split_msm(name, bases, split).map_err(dev_err)
        };
        let l = run("msm_l", &res.l, &plan.l)?;
        let a = run("msm_a", &res.a, &plan.a)?;
        let b_g1 = run("msm_b_g1", &res.b_g1, &plan.b)?;
        Ok(Pending { a, b_g1, h, l, b_split: plan.b, blinding, public_inputs })
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &str {
        "cuda"
    }
    fn device(&self) -> u32 {
        self.device
    }
    fn prove_start(&self, asg: ProvingAssignment, params: &Parameters, blinding: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        self.device_part(asg, params, blinding, gate)
    }
}

/// One backend per CUDA device (the engine's `--backend cuda`), or why there are none.
pub fn backends() -> Result<Vec<Arc<dyn Backend>>, String> {
    let n = Gpu::device_count().map_err(|e| e.to_string())?;
    if n == 0 {
        return Err("no CUDA device found".into());
    }
    (0..n)
        .map(|d| Gpu::open(d).map(|g| Arc::new(CudaBackend::new(g, d as u32)) as Arc<dyn Backend>).map_err(|e| e.to_string()))
        .collect()
}

