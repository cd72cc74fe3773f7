//! ⚠ TEST-ONLY trusted setup. ⚠
//!
//! Makes Groth16 parameters for a circuit from toxic waste (τ, α, β, γ, δ) drawn from a
//! seeded RNG: anyone who knows the seed can forge proofs. It exists so benches, tests
//! and demos have parameters for circuits of any size; real deployments use parameters
//! from a multi-party ceremony. Files made here carry the TEST-ONLY flag.
//!
//! The construction is the bellman family's (bellperson's `generate_parameters`): the
//! QAP polynomials of every variable evaluated at τ through the Lagrange basis of the
//! domain, H query τ^i·Z(τ)/δ, IC/L queries (β·u + α·v + w)/γ or /δ, A and B queries
//! without their points at infinity. The same conventions let the prover use
//! parameters made by bellperson (tested).

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use crate::domain::Domain;
use crate::ntt;
use crate::params::{Parameters, ParamsInfo, VerifyingKey};

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("synthesis during setup failed: {0}")]
    Synthesis(#[from] SynthesisError),
    #[error(transparent)]
    Domain(#[from] crate::domain::DomainError),
    #[error("aux variable #{0} appears in no constraint: Groth16 needs every variable constrained")]
    Unconstrained(usize),
}

/// Columns of the R1CS matrices: per variable, its (coefficient, row) entries.
#[derive(Default)]
struct KeypairAssembly {
    num_inputs: usize,
    num_aux: usize,
    num_constraints: usize,
    at_inputs: Vec<Vec<(Scalar, usize)>>,
    bt_inputs: Vec<Vec<(Scalar, usize)>>,
    ct_inputs: Vec<Vec<(Scalar, usize)>>,
    at_aux: Vec<Vec<(Scalar, usize)>>,
    bt_aux: Vec<Vec<(Scalar, usize)>>,
    ct_aux: Vec<Vec<(Scalar, usize)>>,
}

impl ConstraintSystem<Scalar> for KeypairAssembly {
    type Root = Self;
    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        // Values are not needed to make parameters; the closure is not called.
        self.at_aux.push(Vec::new());
        self.bt_aux.push(Vec::new());
        self.ct_aux.push(Vec::new());
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }
    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.at_inputs.push(Vec::new());
        self.bt_inputs.push(Vec::new());
        self.ct_inputs.push(Vec::new());
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let row = self.num_constraints;
        let mut put = |lc: LinearCombination<Scalar>, which: usize| {
            for (var, coeff) in lc.iter() {
                let col = match (which, var.get_unchecked()) {
                    (0, Index::Input(i)) => &mut self.at_inputs[i],
                    (1, Index::Input(i)) => &mut self.bt_inputs[i],
                    (_, Index::Input(i)) => &mut self.ct_inputs[i],
                    (0, Index::Aux(i)) => &mut self.at_aux[i],
                    (1, Index::Aux(i)) => &mut self.bt_aux[i],
                    (_, Index::Aux(i)) => &mut self.ct_aux[i],
                };
                col.push((*coeff, row));
            }
        };
        put(a(LinearCombination::zero()), 0);
        put(b(LinearCombination::zero()), 1);
        put(c(LinearCombination::zero()), 2);
        self.num_constraints += 1;
    }
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
}

/// The toxic waste. Public only so tests can build parameters both ways.
#[derive(Clone, Copy, Debug)]
pub struct ToxicWaste {
    pub tau: Scalar,
    pub alpha: Scalar,
    pub beta: Scalar,
    pub gamma: Scalar,
    pub delta: Scalar,
}

impl ToxicWaste {
    /// ⚠ TEST-ONLY: derived from `seed`.
    pub fn from_seed(seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5e70_7e57_0000_0000);
        let mut nz = || loop {
            let x = Scalar::random(&mut rng);
            if !bool::from(x.is_zero()) {
                return x;
            }
        };
        ToxicWaste { tau: nz(), alpha: nz(), beta: nz(), gamma: nz(), delta: nz() }
    }
}

/// ⚠ TEST-ONLY setup for `circuit`, toxic waste from `seed`.
pub fn generate_test_params<C: Circuit<Scalar>>(circuit: C, circuit_id: &str, seed: u64) -> Result<Parameters, SetupError> {
    generate_with(circuit, circuit_id, ToxicWaste::from_seed(seed))
}

/// Fixed-base multiplication k·G for many k by a comb of w-bit windows: `table[i·2^w + d]`
/// = d·2^(w·i)·G (affine), so k·G = Σ_i table[i·2^w + digit_i(k)]: ⌈255/w⌉ mixed additions
/// and no doubling, where a wNAF table still costs ~255 doublings per scalar. With w = 16
/// (2^24 scalars) a G1 table holds 16 × 2^16 points (96 MiB), and setups of 2^24-constraint
/// circuits fit in minutes instead of the better part of an hour.
struct Comb<P: Curve> {
    w: usize,
    windows: usize,
    table: Vec<P::AffineRepr>,
}

impl<P> Comb<P>
where
    P: Curve + Send + Sync,
    P::AffineRepr: PrimeCurveAffine + Send + Sync + Copy,
{
    /// Window width for `count` scalars: the table (⌈255/w⌉·2^w additions) stays below
    /// about 1/16 of the per-scalar work (count·⌈255/w⌉).
    fn width_for(count: usize) -> usize {
        let log = usize::BITS as usize - count.max(1).leading_zeros() as usize;
        log.saturating_sub(4).clamp(4, 16)
    }

    fn new(base: P, count: usize) -> Self {
        let w = Self::width_for(count);
        let windows = 255usize.div_ceil(w);
        // Row bases 2^(w·i)·G, then each row's multiples 0..2^w by additions, in parallel.
        let mut bases = Vec::with_capacity(windows);
        let mut b = base;
        for _ in 0..windows {
            bases.push(b);
            for _ in 0..w {
                b = b.double();
            }
        }
        let proj: Vec<P> = bases
            .par_iter()
            .flat_map_iter(|rb| {
                let mut row = Vec::with_capacity(1 << w);
                let mut acc = P::identity();
                for _ in 0..(1usize << w) {
                    row.push(acc);
                    acc += rb;
                }
                row
            })
            .collect();
        let mut table = vec![P::AffineRepr::identity(); proj.len()];
        P::batch_normalize(&proj, &mut table);
        Comb { w, windows, table }
    }

    fn mul(&self, s: &Scalar) -> P {
        let l = crate::msm::to_limbs(s);
        let mut acc = P::identity();
        for i in 0..self.windows {
            let d = crate::msm::digit(&l, i * self.w, self.w);
            if d != 0 {
                acc += self.table[(i << self.w) + d];
            }
        }
        acc
    }

    /// k·G for every k, affine (one batch normalisation per chunk).
    fn muls(&self, scalars: &[Scalar]) -> Vec<P::AffineRepr> {
        let mut out = vec![P::AffineRepr::identity(); scalars.len()];
        out.par_chunks_mut(1024).zip(scalars.par_chunks(1024)).for_each(|(o, s)| {
            let proj: Vec<P> = s.iter().map(|k| self.mul(k)).collect();
            P::batch_normalize(&proj, o);
        });
        out
    }
}

/// Setup from explicit toxic waste.
pub fn generate_with<C: Circuit<Scalar>>(circuit: C, circuit_id: &str, w: ToxicWaste) -> Result<Parameters, SetupError> {
    let mut cs = KeypairAssembly::default();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    for i in 0..cs.num_inputs {
        cs.enforce(|| "input", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
    }
    let domain = Domain::new(cs.num_constraints)?;
    let n = domain.n;
    let gamma_inv = Option::<Scalar>::from(w.gamma.invert()).unwrap_or(Scalar::ONE);
    let delta_inv = Option::<Scalar>::from(w.delta.invert()).unwrap_or(Scalar::ONE);

    // Powers of τ, then (inverse NTT) the Lagrange basis evaluated at τ.
    let mut lagrange = ntt::powers(w.tau, n);
    let coeff = domain.z(&w.tau) * delta_inv;
    let h_scalars: Vec<Scalar> = lagrange[..n - 1].par_iter().map(|p| *p * coeff).collect();
    ntt::inverse(&mut lagrange, &domain);

    let eval = |col: &[(Scalar, usize)]| col.iter().fold(Scalar::ZERO, |acc, (c, row)| acc + *c * lagrange[*row]);
    let per_var = |at: &[Vec<(Scalar, usize)>], bt: &[Vec<(Scalar, usize)>], ct: &[Vec<(Scalar, usize)>], inv: Scalar| {
        at.par_iter()
            .zip(bt.par_iter())
            .zip(ct.par_iter())
            .map(|((a, b), c)| {
                let (ua, vb, wc) = (eval(a), eval(b), eval(c));
                (ua, vb, (w.beta * ua + w.alpha * vb + wc) * inv)
            })
            .collect::<Vec<_>>()
    };
    let inputs = per_var(&cs.at_inputs, &cs.bt_inputs, &cs.ct_inputs, gamma_inv);
    let aux = per_var(&cs.at_aux, &cs.bt_aux, &cs.ct_aux, delta_inv);
    if let Some(i) = aux.iter().position(|(_, _, e)| bool::from(e.is_zero())) {
        return Err(SetupError::Unconstrained(i));
    }

    let total_g1 = h_scalars.len() + 3 * (inputs.len() + aux.len());
    let t1 = Comb::<G1Projective>::new(G1Projective::generator(), total_g1);
    let t2 = Comb::<G2Projective>::new(G2Projective::generator(), inputs.len() + aux.len());

    let all = || inputs.iter().chain(aux.iter());
    let a_scalars: Vec<Scalar> = all().map(|v| v.0).filter(|s| !bool::from(s.is_zero())).collect();
    let b_scalars: Vec<Scalar> = all().map(|v| v.1).filter(|s| !bool::from(s.is_zero())).collect();
    let ic_scalars: Vec<Scalar> = inputs.iter().map(|v| v.2).collect();
    let l_scalars: Vec<Scalar> = aux.iter().map(|v| v.2).collect();

    let g1 = G1Projective::generator();
    let g2 = G2Projective::generator();
    let vk = VerifyingKey {
        alpha_g1: (g1 * w.alpha).to_affine(),
        beta_g1: (g1 * w.beta).to_affine(),
        beta_g2: (g2 * w.beta).to_affine(),
        gamma_g2: (g2 * w.gamma).to_affine(),
        delta_g1: (g1 * w.delta).to_affine(),
        delta_g2: (g2 * w.delta).to_affine(),
        ic: t1.muls(&ic_scalars),
    };
    Ok(Parameters {
        vk,
        h: t1.muls(&h_scalars),
        l: t1.muls(&l_scalars),
        a: t1.muls(&a_scalars),
        b_g1: t1.muls(&b_scalars),
        b_g2: t2.muls(&b_scalars),
        info: ParamsInfo {
            circuit_id: circuit_id.to_string(),
            num_inputs: cs.num_inputs as u64,
            num_aux: cs.num_aux as u64,
            num_constraints: cs.num_constraints as u64,
            domain_size: n as u64,
            test_only: true,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Affine, G2Affine};
    use rand::SeedableRng;

    fn scalars(n: usize) -> Vec<Scalar> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut v: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        v.extend([Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(1u64 << 40), -Scalar::from(2u64)]);
        v
    }

    #[test]
    fn comb_multiples_equal_scalar_multiplication_in_both_groups() {
        for count in [1usize, 200, 5000] {
            let s = scalars(count.min(300));
            let c1 = Comb::<G1Projective>::new(G1Projective::generator(), count);
            let want1: Vec<G1Affine> = s.iter().map(|k| (G1Projective::generator() * k).to_affine()).collect();
            assert_eq!(c1.muls(&s), want1, "G1, width {}", c1.w);
            let c2 = Comb::<G2Projective>::new(G2Projective::generator(), count);
            let want2: Vec<G2Affine> = s.iter().map(|k| (G2Projective::generator() * k).to_affine()).collect();
            assert_eq!(c2.muls(&s), want2, "G2, width {}", c2.w);
        }
        assert_eq!(Comb::<G1Projective>::width_for(1 << 24), 16);
        assert_eq!(Comb::<G1Projective>::width_for(1), 4);
    }
}
