//! proofscope's prover: Groth16 over BLS12-381 for any bellpepper circuit.
//!
//! The pipeline, one module per step (as arkworks keeps generator, prover and verifier
//! apart): [`circuit`] (the PoRep-like benchmark family and its shape) →
//! [`synthesis`] (witness and A/B/C evaluations with density tracking; or [`pce`], the
//! pre-compiled constraints: witness only, then sparse products) →
//! [`backend`] (`prove_start`: prep, NTTs of H, the G1 MSMs; `prove_finish`: the G2 MSM
//! and assembly) built from [`ntt`] and [`msm`] → [`verifier`]. [`setup`] makes
//! TEST-ONLY parameters, [`params`] stores them in a documented binary file, and
//! [`engine`] runs many partitions through workers and locks while [`events`] turns
//! every stage into timeline events.

/// The namespace methods of a bellpepper `ConstraintSystem` that keeps no names (every system
/// of this crate: names cost time and nothing reads them), for its `impl` blocks.
macro_rules! flat_namespaces {
    () => {
        fn push_namespace<NR, N>(&mut self, _: N)
        where
            NR: Into<String>,
            N: FnOnce() -> NR,
        {
        }
        fn pop_namespace(&mut self) {}
        fn get_root(&mut self) -> &mut Self::Root {
            self
        }
    };
}
pub(crate) use flat_namespaces;

/// `enforce` of a constraint system that builds no rows (the values-only and scratch systems).
macro_rules! enforce_nothing {
    () => {
        fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
        where
            A: FnOnce() -> AR,
            AR: Into<String>,
            LA: FnOnce(bellpepper_core::LinearCombination<blstrs::Scalar>) -> bellpepper_core::LinearCombination<blstrs::Scalar>,
            LB: FnOnce(bellpepper_core::LinearCombination<blstrs::Scalar>) -> bellpepper_core::LinearCombination<blstrs::Scalar>,
            LC: FnOnce(bellpepper_core::LinearCombination<blstrs::Scalar>) -> bellpepper_core::LinearCombination<blstrs::Scalar>,
        {
        }
    };
}
pub(crate) use enforce_nothing;

/// Run `f` on `pool`, or on the current rayon pool: the syntheses' pools, the GPU workers'
/// (`Gate::cpu_pool`). The caller's tracing dispatcher (the engine's is per thread) and
/// current span go with it: a span opened inside `f` on the pool's thread reaches the timeline
/// as the child of the caller's (without them, runs 73–74's `prep_msm` spans on the prep pool
/// were lost).
pub fn on_pool<R: Send>(pool: Option<&rayon::ThreadPool>, f: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(p) => {
            let dispatch = tracing::dispatcher::get_default(|d| d.clone());
            let parent = tracing::Span::current();
            p.install(move || tracing::dispatcher::with_default(&dispatch, || parent.in_scope(f)))
        }
        None => f(),
    }
}

pub mod abc_pool;
pub mod backend;
pub mod circuit;
pub mod cpu;
pub mod cpu_time;
pub mod cuda_settings;
pub mod domain;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod engine;
pub mod events;
pub mod msm;
pub mod msm_affine;
pub mod ntt;
pub mod params;
pub mod prep;
pub mod pce;
pub mod proof;
pub mod prover;
pub mod setup;
pub mod synthesis;
pub mod verifier;

pub use backend::{Backend, Blinding, Gate, NoGate, Pending};
pub use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
pub use params::{Parameters, VerifyingKey};
pub use proof::Proof;
pub use synthesis::{ProvingAssignment, SynthesisFailure};
