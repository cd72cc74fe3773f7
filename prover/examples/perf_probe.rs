//! Quick timing probe (temporary): our prover vs bellperson at one size.
use std::sync::Arc;
use std::time::Instant;

use bellperson::groth16 as bp;
use prover::circuit::PorepLike;
use prover::cpu::CpuBackend;
use prover::{setup, Bls12, Parameters};
use rand::SeedableRng;

fn to_bp(p: &Parameters) -> bp::Parameters<Bls12> {
    bp::Parameters {
        vk: bp::VerifyingKey { alpha_g1: p.vk.alpha_g1, beta_g1: p.vk.beta_g1, beta_g2: p.vk.beta_g2, gamma_g2: p.vk.gamma_g2, delta_g1: p.vk.delta_g1, delta_g2: p.vk.delta_g2, ic: p.vk.ic.clone() },
        h: Arc::new(p.h.clone()), l: Arc::new(p.l.clone()), a: Arc::new(p.a.clone()), b_g1: Arc::new(p.b_g1.clone()), b_g2: Arc::new(p.b_g2.clone()),
    }
}

fn msm_probe() {
    use ff::Field;
    use group::{Curve, Group};
    use prover::{msm, msm_affine, G1Affine, G1Projective, Scalar};
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
    for log in [12u32, 14, 16] {
        let n = 1usize << log;
        let p = G1Projective::random(&mut rng);
        let mut acc = p;
        let proj: Vec<G1Projective> = (0..n).map(|_| { acc += p; acc }).collect();
        let mut bases = vec![G1Affine::default(); n];
        G1Projective::batch_normalize(&proj, &mut bases);
        let limbs: Vec<msm::Limbs> = (0..n).map(|_| msm::to_limbs(&Scalar::random(&mut rng))).collect();
        let scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let t = Instant::now();
        let a = msm::pippenger::<G1Projective>(&bases, None, &limbs);
        let t1 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let b = msm_affine::pippenger_g1(&bases, None, &limbs);
        let t2 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let _ = G1Projective::multi_exp(&proj, &scalars);
        let t3 = t.elapsed().as_secs_f64();
        assert_eq!(a, b);
        eprintln!("msm 2^{log}: projective {t1:.3}s batch-affine {t2:.3}s blst {t3:.3}s");
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("msm") {
        msm_probe();
        return;
    }
    let log: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(14);
    let c = PorepLike::new(1 << log, 3);
    let t = Instant::now();
    let params = setup::generate_test_params(c.clone(), &c.id(), 1).unwrap();
    eprintln!("setup 2^{log}: {:.2}s", t.elapsed().as_secs_f64());
    let bpp = to_bp(&params);
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let cpu = CpuBackend::new(0);
    for _ in 0..2 {
        let t = Instant::now();
        prover::prover::prove(c.clone(), &params, &cpu, &mut rng).unwrap();
        let ours = t.elapsed().as_secs_f64();
        let t = Instant::now();
        bp::create_random_proof(c.clone(), &bpp, &mut rng).unwrap();
        let theirs = t.elapsed().as_secs_f64();
        eprintln!("ours {ours:.3}s bellperson {theirs:.3}s ratio {:.2}", ours / theirs);
    }
    // Stage breakdown
    let asg = prover::prover::synthesize(c.clone()).unwrap();
    let t = Instant::now();
    let plan = prover::prover::prep_msm(&asg, &params).unwrap();
    eprintln!("prep {:.3}s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let h = prover::prover::ntt_h(asg.a.clone(), asg.b.clone(), asg.c.clone(), &params).unwrap();
    eprintln!("ntt {:.3}s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    prover::prover::msm_h(&h, &params);
    eprintln!("msm_h {:.3}s ({} pts)", t.elapsed().as_secs_f64(), h.len());
    let t = Instant::now();
    prover::prover::msm_split_g1("msm_l", &params.l, &plan.l);
    eprintln!("msm_l {:.3}s (ones {}, tail {}, zeros {})", t.elapsed().as_secs_f64(), plan.l.ones.len(), plan.l.tail.len(), plan.l.zeros);
    let t = Instant::now();
    prover::prover::msm_split_g1("msm_a", &params.a, &plan.a);
    eprintln!("msm_a {:.3}s (tail {})", t.elapsed().as_secs_f64(), plan.a.tail.len());
    let t = Instant::now();
    prover::prover::b_g2_msm(&params.b_g2, &plan.b);
    eprintln!("b_g2 {:.3}s (tail {})", t.elapsed().as_secs_f64(), plan.b.tail.len());
}
