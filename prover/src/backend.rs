//! The seam between the engine (threads, queues, locks) and the arithmetic of one
//! partition. A backend does the device part in [`Backend::prove_start`] (MSM
//! preparation, the NTTs of H, the G1 MSMs) and the rest in [`Backend::prove_finish`]
//! (the G2 MSM and proof assembly) so the engine can run the finish on a separate
//! finaliser. Lock modes are the engine's: the backend only says which part of its work
//! allocates device memory ([`Gate::alloc`]) and which part computes on the device
//! ([`Gate::compute`]); the engine decides what those calls lock. See
//! `.notes/prover-seams.md`.

use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use rand::RngCore;

use crate::msm::Split;
use crate::params::Parameters;
use crate::proof::Proof;
use crate::synthesis::{ProvingAssignment, SynthesisFailure};

/// The zero-knowledge randomness of one proof. Passed in (not drawn by the backend) so
/// two backends given the same blinding must return identical proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blinding {
    pub r: Scalar,
    pub s: Scalar,
}

impl Blinding {
    pub fn random(rng: &mut impl RngCore) -> Self {
        Blinding { r: Scalar::random(&mut *rng), s: Scalar::random(&mut *rng) }
    }
}

/// What the device part hands to the finisher.
#[derive(Clone, Debug)]
pub struct Pending {
    /// Σ a_i·A_i over the A query (inputs and aux).
    pub a: G1Projective,
    /// Σ b_i·B_i over the B query in G1.
    pub b_g1: G1Projective,
    /// Σ h_i·H_i.
    pub h: G1Projective,
    /// Σ w_i·L_i over the aux witness.
    pub l: G1Projective,
    /// The density split of the B scalars, reused by the G2 MSM.
    pub b_split: Split,
    /// Σ b_i·B_i over the B query in G2 when the device part computed it (the CUDA
    /// backend's `msm_b_g2`); `None`: the finisher runs the CPU G2 MSM (`b_g2_msm`).
    pub b_g2: Option<G2Projective>,
    pub blinding: Blinding,
    pub public_inputs: Vec<Scalar>,
}

/// Held while a gated region runs; dropping it releases whatever the engine took.
pub struct GateGuard<'a> {
    _held: Option<Box<dyn Held + 'a>>,
}

trait Held {}
impl<T> Held for T {}

impl<'a> GateGuard<'a> {
    /// A guard that holds nothing (no lock in this mode).
    pub fn none() -> Self {
        GateGuard { _held: None }
    }
    /// Keep `value` (a mutex guard, a span...) alive until the guard drops.
    pub fn holding<T: 'a>(value: T) -> Self {
        GateGuard { _held: Some(Box::new(value)) }
    }
}

/// The engine's locks as the backend sees them.
pub trait Gate: Sync {
    /// Around device memory allocation and uploads (`two_lock`'s allocation lock).
    fn alloc(&self) -> GateGuard<'_>;
    /// Around device compute (the `kernels` and `two_lock` compute lock).
    fn compute(&self) -> GateGuard<'_>;
    /// The partition's a, b, c have left the host's hands (the CPU backend: consumed by the
    /// H computation; CUDA: uploaded) and are being freed: returns what to call once their
    /// memory is given back — the engine's RAM budget release of their share — so that a
    /// backend freeing them on another thread calls it there. Call it at most once, and
    /// only when the vectors are really freed (not when a failure hands them back).
    fn abc_release(&self) -> Box<dyn FnOnce() + Send> {
        Box::new(|| ())
    }
    /// The thread pool the call's CPU work (the MSMs' preparation) runs on: the engine's
    /// `prep_threads` pool, or `None` for the current rayon pool.
    fn cpu_pool(&self) -> Option<&rayon::ThreadPool> {
        None
    }
}


/// No locking (single prover, or `whole` mode where the engine already holds the lock).
pub struct NoGate;

impl Gate for NoGate {
    fn alloc(&self) -> GateGuard<'_> {
        GateGuard::none()
    }
    fn compute(&self) -> GateGuard<'_> {
        GateGuard::none()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    #[error(transparent)]
    Synthesis(#[from] SynthesisFailure),
    #[error("parameters do not fit this circuit: {0}")]
    ParamsMismatch(String),
    /// The pre-compiled constraints could not be made or read (e.g. a corrupt cache file,
    /// named in the message).
    #[error("pre-compiled constraints: {0}")]
    Pce(String),
    #[error(transparent)]
    Domain(#[from] crate::domain::DomainError),
    /// A device fault: the engine retries the partition on another device.
    #[error("device error: {0}")]
    Device(#[from] DeviceError),
    /// The device ran out of memory (an allocation or upload failed with
    /// CUDA_ERROR_OUT_OF_MEMORY): the engine proves the partition on its CPU fallback.
    #[error("device out of memory: {0}")]
    DeviceOutOfMemory(DeviceError),
    #[error("proof did not verify")]
    Unverified,
}

/// What went wrong on a device, typed: a backend's own error kept whole (the CUDA backend's
/// `GpuError`, found again with [`DeviceError::downcast_ref`]), a thread that panicked, or
/// a verifier that could not check the proof.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// A backend's own error.
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// A thread panicked while it worked for the device: `what` says which (the synthesis,
    /// the backend call, an MSM lane, the CPU fallback, a finaliser).
    #[error("{what} panicked: {message}")]
    Panicked { what: &'static str, message: String },
    /// The verifier failed to run on the proof (an error, not a wrong proof: that is
    /// [`ProveError::Unverified`]).
    #[error("verifying the proof: {0}")]
    Verify(#[from] crate::verifier::VerifyError),
}

impl DeviceError {
    /// A backend's error as the source of a [`ProveError::Device`].
    pub fn backend(e: impl std::error::Error + Send + Sync + 'static) -> DeviceError {
        DeviceError::Backend(Box::new(e))
    }

    /// A panic's payload (`catch_unwind`, `JoinHandle::join`) as a device error.
    pub fn panicked(what: &'static str, payload: Box<dyn std::any::Any + Send>) -> DeviceError {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        DeviceError::Panicked { what, message }
    }

    /// The backend's own error, when it is an `E`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            DeviceError::Backend(e) => e.downcast_ref::<E>(),
            _ => None,
        }
    }
}

/// A failed [`Backend::prove_start_or_return`]: the error and, when the backend still
/// has it, the partition's assignment, so the engine can prove it elsewhere (another
/// device, the CPU fallback) without having kept a copy.
pub struct StartFailure {
    pub error: ProveError,
    pub assignment: Option<Box<ProvingAssignment>>,
}

impl From<ProveError> for StartFailure {
    fn from(error: ProveError) -> Self {
        StartFailure { error, assignment: None }
    }
}

/// Which queries of a parameter set a device holds in its own memory (so the host copy of
/// those is not needed by it: [`Backend::make_resident`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResidentQueries {
    pub h: bool,
    pub l: bool,
    pub a: bool,
    pub b_g1: bool,
    pub b_g2: bool,
}

impl ResidentQueries {
    pub const ALL: ResidentQueries = ResidentQueries { h: true, l: true, a: true, b_g1: true, b_g2: true };

    /// Held by both.
    pub fn and(self, o: ResidentQueries) -> ResidentQueries {
        ResidentQueries { h: self.h && o.h, l: self.l && o.l, a: self.a && o.a, b_g1: self.b_g1 && o.b_g1, b_g2: self.b_g2 && o.b_g2 }
    }

    pub fn any(&self) -> bool {
        self.h || self.l || self.a || self.b_g1 || self.b_g2
    }

    /// The queries held, by name.
    pub fn names(&self) -> Vec<&'static str> {
        [("h", self.h), ("l", self.l), ("a", self.a), ("b_g1", self.b_g1), ("b_g2", self.b_g2)].into_iter().filter_map(|(q, on)| on.then_some(q)).collect()
    }
}

/// One proving device. Implementations: [`crate::cpu::CpuBackend`] and, with the `cuda`
/// feature, the CUDA backend. Both must produce identical proofs for the same
/// assignment, parameters and blinding.
pub trait Backend: Send + Sync {
    /// `cpu`, `cuda`, ...
    fn name(&self) -> &str;
    /// Device ordinal used in the timeline (the CPU backend counts as a device).
    fn device(&self) -> u32;
    /// The device part of one partition: prep_msm, ntt, msm_h, msm_l, msm_a, msm_b_g1
    /// (each a tracing span; batch_add and tail_msm nested in the MSMs). Must call
    /// `gate.compute()` around the device compute and `gate.alloc()` around allocation.
    fn prove_start(
        &self,
        assignment: ProvingAssignment,
        params: &Parameters,
        blinding: Blinding,
        gate: &dyn Gate,
    ) -> Result<Pending, ProveError>;
    /// [`Backend::prove_start`] that hands the assignment back on failure when it can
    /// (the engine calls this one). The default hands nothing back.
    fn prove_start_or_return(
        &self,
        assignment: ProvingAssignment,
        params: &Parameters,
        blinding: Blinding,
        gate: &dyn Gate,
    ) -> Result<Pending, StartFailure> {
        self.prove_start(assignment, params, blinding, gate).map_err(StartFailure::from)
    }
    /// The G2 MSM (b_g2_msm, unless the device part did it) and assembly (finalize). CPU by default.
    fn prove_finish(&self, pending: Pending, params: &Parameters) -> Result<Proof, ProveError> {
        crate::prover::finish(pending, params)
    }
    /// Whether [`Backend::prove_finish`] verifies every proof it returns (the engine then
    /// skips its own `verify` of that backend's proofs).
    fn verifies_proofs(&self) -> bool {
        false
    }
    /// The knobs this backend applied, for the run's meta (`extra`, one entry per key):
    /// what a reader of the timeline needs to compare runs made with different settings.
    /// None by default.
    fn meta(&self) -> Vec<(&'static str, serde_json::Value)> {
        Vec::new()
    }
    /// Total memory of the device, bytes, where it has its own (a GPU); `None` for the CPU.
    fn device_memory_bytes(&self) -> Option<u64> {
        None
    }
    /// The device memory this backend was limited to (`memory.vram_budget`), bytes; `None`:
    /// no limit (or no memory of its own).
    fn vram_budget(&self) -> Option<u64> {
        None
    }
    /// Page-locked host memory this backend's uploads hold at most, bytes (the engine
    /// reserves it from the RAM budget); 0 where uploads stage nothing (the CPU).
    fn host_staging_bytes(&self) -> u64 {
        0
    }
    /// What page-locks the engine's pooled a/b/c for this backend's copies
    /// (`cuda.abc_upload = "pooled"`, [`crate::abc_pool`]); `None` where nothing would read
    /// them in place (the CPU, another upload mode).
    fn abc_pinner(&self) -> Option<crate::abc_pool::Pinner> {
        None
    }
    /// Free memory of the device now, bytes, as the device reports it; `None` where it has no
    /// memory of its own (the CPU). The engine's placement reads it
    /// ([`crate::engine::placement`]).
    fn device_free_bytes(&self) -> Option<u64> {
        None
    }
    /// The device memory one partition of `params` holds on this device, bytes (placement
    /// checks it against [`Backend::device_free_bytes`]); `None`: nothing to check (the CPU).
    fn partition_device_bytes(&self, _params: &Parameters) -> Option<u64> {
        None
    }
    /// How this device proves with `params`, in words, where it differs from the default (the
    /// queries it streams, calls that run tight); the engine logs each line when it starts.
    fn describe_plan(&self, _params: &Parameters) -> Vec<String> {
        Vec::new()
    }
    /// The least device memory that proves one partition of `params` on this device, bytes,
    /// and what it is made of (for the error that refuses a smaller `memory.vram_budget`);
    /// by default [`Backend::partition_device_bytes`], unexplained.
    fn minimum_device_bytes(&self, params: &Parameters) -> Option<(u64, String)> {
        self.partition_device_bytes(params).map(|b| (b, "one partition's device working set".to_string()))
    }
    /// Copy `params`' queries into the device's memory now (not at the first partition) and
    /// say which it holds for good: those need no host copy on this device, and its MSMs on
    /// them gather no bases in host memory (the engine then reserves a GPU call's memory
    /// without them: [`crate::engine::budget::PartitionEstimate::call_on_resident_queries`]).
    /// Nothing by default (the CPU proves from the host's points).
    fn make_resident(&self, _params: &Parameters) -> Result<ResidentQueries, ProveError> {
        Ok(ResidentQueries::default())
    }
}
