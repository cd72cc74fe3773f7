//! The CPU backend: the prover's stages on all cores (rayon). Its device part is
//! everything after `prep_msm`; it reports that part to the engine's gate so lock modes
//! behave as they would on a GPU, which makes it the reference the CUDA backend must
//! match bit for bit.

use crate::backend::{Backend, Blinding, Gate, Pending, ProveError};
use crate::msm::CpuMsm;
use crate::params::Parameters;
use crate::prover;
use crate::synthesis::ProvingAssignment;

/// Proves on the host's cores. `device` is its ordinal in the timeline.
#[derive(Clone, Debug, Default)]
pub struct CpuBackend {
    pub device: u32,
    /// Bucket method of the tail MSMs (blst's by default; ours for comparison).
    pub msm: CpuMsm,
}

impl CpuBackend {
    pub fn new(device: u32) -> Self {
        CpuBackend { device, msm: CpuMsm::default() }
    }
    pub fn with_msm(device: u32, msm: CpuMsm) -> Self {
        CpuBackend { device, msm }
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> &str {
        "cpu"
    }
    fn device(&self) -> u32 {
        self.device
    }
    fn prove_start(&self, asg: ProvingAssignment, params: &Parameters, blinding: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        if let Some(q) = params.released_query() {
            return Err(ProveError::ParamsMismatch(format!("query {q} of the parameters was released from the host after its upload to the devices (memory.params_host = \"auto\"): the CPU cannot prove with it")));
        }
        // "Allocation" on the CPU is the preparation of the MSM inputs.
        let plan = {
            let _alloc = gate.alloc();
            let asg = &asg;
            crate::on_pool(gate.cpu_pool(), || prover::prep_msm(asg, params))?
        };
        let public_inputs = asg.public_inputs().to_vec();
        let ProvingAssignment { a, b, c, .. } = asg;
        let _compute = gate.compute();
        let h = prover::ntt_h(a.into_vec(), b.into_vec(), c.into_vec(), params)?;
        let h_acc = prover::msm_h_with(&h, params, self.msm);
        drop(h);
        // a, b, c are gone (b and c in the H computation, a's buffer, which became h, here).
        (gate.abc_release())();
        let l = prover::msm_split_g1_with("msm_l", &params.l, &plan.l, self.msm);
        let a = prover::msm_split_g1_with("msm_a", &params.a, &plan.a, self.msm);
        let b_g1 = prover::msm_split_g1_with("msm_b_g1", &params.b_g1, &plan.b, self.msm);
        Ok(Pending { a, b_g1, h: h_acc, l, b_split: plan.b, b_g2: None, blinding, public_inputs })
    }
    fn prove_finish(&self, pending: Pending, params: &Parameters) -> Result<crate::proof::Proof, ProveError> {
        prover::finish_with(pending, params, self.msm)
    }
}
