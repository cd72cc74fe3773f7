//! CUDA backend tests. On a machine with a GPU (and kernels built in) they run every kernel
//! against the CPU path; elsewhere the GPU part skips with a message, and the host-side
//! pieces (CPU references, conversions, pass plan, the host build of the field code) run.
#![cfg(feature = "cuda")]

use blstrs::{G1Affine, G1Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Group};
use prover::cuda_settings::CudaSettings;
use prover::gpu::diag::check::{self, ProofVariant};
use prover::gpu::diag::reference::{h_ref, msm_ref, ntt_ref, random_points, random_scalars, sum_ref};
use prover::gpu::{affine_words, scalar_words, xyzz_to_projective, Gpu, MsmBatch, ParamsMode, ShiftChoice};

#[test]
fn gpu_kernels_match_the_cpu_path_or_skip() {
    // The defaults with the environment's overrides, as `gpu check` runs.
    let (settings, _) = CudaSettings::default().with_env_overrides().expect("PROOFSCOPE_* overrides");
    let gpu = match Gpu::open(0, settings.sched) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("skipping GPU kernel checks: {e}");
            return;
        }
    };
    let mut outcomes = check::run_all(&gpu, &settings, check::CheckOptions { seed: 12345, quick: true });
    let d = ProofVariant::default();
    for v in [
        d,
        ProofVariant { shifts: ShiftChoice::C(13), ..d },
        ProofVariant { mode: ParamsMode::Stream, ..d },
        ProofVariant { mode: ParamsMode::Stream, stream_chunk: Some(300), ..d },
        ProofVariant { batch: MsmBatch::Off, ..d },
    ] {
        outcomes.push(check::check_full_proof(0, &settings, 10, 12345, &v));
    }
    let report = check::format_outcomes(&outcomes);
    assert!(outcomes.iter().all(|o| o.ok), "GPU checks failed:\n{report}");
}

#[test]
fn opening_a_gpu_never_panics() {
    // Without a driver or kernels this is an error naming the reason, not a panic.
    match Gpu::device_count() {
        Ok(n) => eprintln!("{n} CUDA device(s)"),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

#[test]
fn cpu_reference_ntt_round_trips_and_quotient_is_exact() {
    let v = random_scalars(200, 3);
    for coset in [false, true] {
        let f = ntt_ref(&v, 8, false, coset);
        let back = ntt_ref(&f, 8, true, coset);
        assert_eq!(&back[..200], &v[..]);
        assert!(back[200..].iter().all(|x| bool::from(x.is_zero())));
    }
    // a*b = c pointwise on H: the quotient has degree < n - 1.
    let a = random_scalars(50, 4);
    let b = random_scalars(50, 5);
    let c: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    let h = h_ref(&a, &b, &c, 6);
    assert_eq!(h[63], Scalar::ZERO);
    assert!(h.iter().any(|x| !bool::from(x.is_zero())));
}

#[test]
fn words_views_and_xyzz_conversion_agree_with_blstrs() {
    let s = random_scalars(3, 9);
    let w = scalar_words(&s);
    assert_eq!(w.len(), 24);
    // Montgomery limbs: 1 is R mod r, whose low word is 0xfffffffe.
    assert_eq!(scalar_words(&[Scalar::ONE])[0], 0xffff_fffe);
    let p = random_points(4, 10);
    let aw = affine_words(&p);
    // An affine point as XYZZ with ZZ = ZZZ = 1 (Montgomery one of Fp).
    let one_fp: [u32; 12] = [0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857, 0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3];
    for (i, pt) in p.iter().enumerate() {
        let mut x = aw[i * 24..i * 24 + 24].to_vec();
        x.extend_from_slice(&one_fp);
        x.extend_from_slice(&one_fp);
        assert_eq!(xyzz_to_projective(&x), Some(G1Projective::from(pt)));
    }
    assert_eq!(affine_words(&[G1Affine::identity()]).iter().filter(|&&x| x != 0).count(), 0);
    let mut zero = vec![0u32; 48];
    assert_eq!(xyzz_to_projective(&zero), Some(G1Projective::identity()));
    zero[24] = 5; // ZZ set, ZZZ zero: not a point
    assert_eq!(xyzz_to_projective(&zero), None);
}

#[test]
fn msm_reference_matches_naive_sum() {
    let p = random_points(40, 11);
    let s = random_scalars(40, 12);
    let naive = p.iter().zip(&s).fold(G1Projective::identity(), |acc, (a, k)| acc + G1Projective::from(a) * k);
    assert_eq!(msm_ref(&p, &s), naive);
    assert_eq!(sum_ref(&p), p.iter().fold(G1Projective::identity(), |acc, a| acc + a));
}

#[test]
fn host_build_of_the_field_code_passes_its_identities() {
    // The same field.cuh/fp2.cuh/curve.cuh the kernels use, compiled for the host with emulated PTX carry
    // chains. Skips where no C++ compiler is installed.
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda/test");
    let out = std::env::temp_dir().join(format!("proofscope-hft-{}", std::process::id()));
    let status = std::process::Command::new(&cxx)
        .args(["-O2", "-std=c++17", "-Wno-unknown-pragmas"])
        .arg(dir.join("host_field_test.cpp"))
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Err(e) => eprintln!("skipping: no C++ compiler ({cxx}: {e})"),
        Ok(s) => {
            assert!(s.success(), "host build of field.cuh failed");
            let run = std::process::Command::new(&out).output().expect("run host field test");
            let _ = std::fs::remove_file(&out);
            assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stdout));
        }
    }
}
