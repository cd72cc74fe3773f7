//! End-to-end Groth16 tests on tiny circuits: prove and verify, the negative cases
//! (tampered proof, wrong public input, unsatisfied witness, corrupt or mismatched
//! parameter files) and the cross-check with bellperson in both directions.

use bellperson::groth16 as bp;
use blstrs::{Bls12, G1Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use prover::backend::{Backend, Blinding, NoGate, ProveError};
use prover::circuit::{measure, BenchCircuit, Family, Mix16, PorepLike};
use prover::cpu::CpuBackend;
use prover::params::{ParamsError, ParamsInfo, VerifyingKey};
use prover::{prover as pv, setup, verifier, Parameters, Proof, SynthesisFailure};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn params_for(c: &PorepLike, seed: u64) -> Parameters {
    setup::generate_test_params(c.clone(), &c.id(), seed).expect("setup")
}

#[test]
fn small_circuits_prove_and_verify() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for n in [1u64 << 8, 1 << 10] {
        let c = PorepLike::new(n, 5);
        let params = params_for(&c, 11);
        assert_eq!(params.info.num_constraints, n, "constraint count is exact");
        assert_eq!(params.info.domain_size, n);
        let (proof, inputs) = pv::prove(c, &params, &CpuBackend::new(0), &mut rng).expect("prove");
        assert_eq!(inputs.len(), 1);
        assert_eq!(verifier::verify(&params.vk, &proof, &inputs), Ok(true), "n={n}");
        // Round trip through the 192-byte encoding.
        assert_eq!(Proof::from_bytes(&proof.to_bytes()).unwrap(), proof);
    }
}

#[test]
fn tampered_proof_and_wrong_input_are_rejected() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let c = PorepLike::new(1 << 8, 9);
    let params = params_for(&c, 12);
    let (proof, inputs) = pv::prove(c, &params, &CpuBackend::new(0), &mut rng).unwrap();
    let mut bad = proof;
    bad.c = (G1Projective::from(bad.c) + G1Projective::generator()).to_affine();
    assert_eq!(verifier::verify(&params.vk, &bad, &inputs), Ok(false));
    let mut bad = proof;
    bad.a = (G1Projective::from(bad.a).double()).to_affine();
    assert_eq!(verifier::verify(&params.vk, &bad, &inputs), Ok(false));
    let wrong = vec![inputs[0] + Scalar::ONE];
    assert_eq!(verifier::verify(&params.vk, &proof, &wrong), Ok(false));
    assert!(verifier::verify(&params.vk, &proof, &[]).is_err(), "input count mismatch is an error");
    // Garbage bytes are an error, not a panic.
    assert!(Proof::from_bytes(&[0u8; 191]).is_err());
    assert!(Proof::from_bytes(&[0xffu8; 192]).is_err());
}

#[test]
fn same_blinding_gives_identical_proofs_and_fresh_blinding_differs() {
    let c = PorepLike::new(1 << 8, 4);
    let params = params_for(&c, 13);
    let b = Blinding::random(&mut ChaCha20Rng::seed_from_u64(3));
    let cpu = CpuBackend::new(0);
    let run = |bl: Blinding| {
        let asg = pv::synthesize(c.clone()).unwrap();
        let p = cpu.prove_start(asg, &params, bl, &NoGate).unwrap();
        cpu.prove_finish(p, &params).unwrap()
    };
    assert_eq!(run(b), run(b));
    assert_ne!(run(b), run(Blinding::random(&mut ChaCha20Rng::seed_from_u64(4))));
}

#[test]
fn unsatisfied_witness_is_caught_at_synthesis_with_its_index() {
    let mut c = PorepLike::new(1 << 8, 1);
    c.corrupt_row = Some(10);
    let params = params_for(&PorepLike::new(1 << 8, 1), 14);
    let err = pv::prove(c, &params, &CpuBackend::new(0), &mut ChaCha20Rng::seed_from_u64(5)).unwrap_err();
    match err {
        // SHA section is empty at this size; the arithmetic section starts at row 0, and
        // the corrupted variable's defining row is the first to fail.
        ProveError::Synthesis(SynthesisFailure::Unsatisfied { index, .. }) => assert_eq!(index, 10),
        other => panic!("expected an unsatisfied constraint, got {other}"),
    }
}

#[test]
fn mix16_has_exact_size_the_witness_mix_and_proves() {
    for n in [1u64 << 8, 1 << 12, 1000] {
        let c = Mix16::new(n, 3);
        let asg = prover::synthesis::synthesize(c.clone()).expect("satisfied");
        assert_eq!(asg.num_constraints() as u64, n, "constraint count is exact");
        // 1/16 of the aux witness full-width (the running value), the rest bits.
        let aux = &asg.aux_assignment;
        let bits = aux.iter().filter(|&&v| v == Scalar::ZERO || v == Scalar::ONE).count();
        let wide = aux.len() - bits;
        let groups = (n as usize - 4) / 16;
        assert_eq!(wide, groups + 1, "n={n}: one full-width value per group plus the seed");
        let ones = aux.iter().filter(|&&v| v == Scalar::ONE).count();
        assert!(ones * 3 > bits && ones * 3 < 2 * bits, "n={n}: random bits, {ones} ones of {bits}");
        let shape = measure(c).unwrap();
        assert_eq!(shape.constraints, n);
        assert_eq!(shape.aux as usize, aux.len());
    }
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let c = Family::Mix16.circuit(1 << 10, 5);
    assert!(matches!(c, BenchCircuit::Mix16(_)));
    let params = setup::generate_test_params(c.clone(), &c.id(), 17).expect("setup");
    assert_eq!(params.info.num_constraints, 1 << 10);
    let (proof, inputs) = pv::prove(c, &params, &CpuBackend::new(0), &mut rng).expect("prove");
    assert_eq!(verifier::verify(&params.vk, &proof, &inputs), Ok(true));
    // Another witness seed is another statement: the first proof does not verify for it.
    let (_, other) = pv::prove(Family::Mix16.circuit(1 << 10, 6), &params, &CpuBackend::new(0), &mut rng).expect("prove");
    assert_ne!(other, inputs);
    assert_eq!(verifier::verify(&params.vk, &proof, &other), Ok(false));
    // Too small a size is refused with the flag's name, not a panic.
    assert!(Family::Mix16.circuit(8, 0).check().unwrap_err().contains("--constraints"));
}

#[test]
fn sizing_the_assignment_up_front_changes_nothing_but_allocation() {
    use prover::synthesis::{synthesize, synthesize_with_capacity, SizeHint};
    for f in Family::ALL {
        let c = f.circuit(1 << 10, 3);
        let plain = synthesize(c.clone()).unwrap();
        let exact = SizeHint { constraints: plain.num_constraints(), inputs: plain.input_assignment.len(), aux: plain.aux_assignment.len() };
        // Exact, too small and too large hints give the same assignment.
        for hint in [exact, SizeHint { constraints: 3, inputs: 0, aux: 5 }, SizeHint { constraints: 1 << 12, inputs: 9, aux: 1 << 12 }] {
            let sized = synthesize_with_capacity(c.clone(), hint).unwrap();
            assert_eq!((&sized.a, &sized.b, &sized.c), (&plain.a, &plain.b, &plain.c), "{} {hint:?}", f.name());
            assert_eq!((&sized.input_assignment, &sized.aux_assignment), (&plain.input_assignment, &plain.aux_assignment));
            assert_eq!((&sized.a_aux_density, &sized.b_aux_density, &sized.b_input_density), (&plain.a_aux_density, &plain.b_aux_density, &plain.b_input_density));
        }
        let sized = synthesize_with_capacity(c, exact).unwrap();
        assert!(sized.a.capacity() >= exact.constraints && sized.aux_assignment.capacity() >= exact.aux);
    }
}

#[test]
fn families_round_trip_through_circuit_ids() {
    for f in Family::ALL {
        let c = f.circuit(1 << 9, 0);
        assert_eq!(Family::from_id(&c.id()), Some((f, 1 << 9)), "{}", c.id());
        assert_eq!(Family::parse(f.name()), Ok(f));
    }
    assert_eq!(Family::from_id("porep-like/v1/n=65536"), Some((Family::PorepLike, 65536)));
    assert_eq!(Family::from_id("mix16/v2/n=4"), None);
    assert_eq!(Family::from_id("sha/v1/n=4"), None);
    assert!(Family::parse("porep").unwrap_err().contains("porep-like or mix16"));
}

#[test]
fn sha_sections_synthesise_satisfied_and_shape_is_porep_like() {
    let c = PorepLike::new(1 << 16, 2);
    let layout = c.layout().unwrap();
    assert!(layout.sha_blocks >= 1);
    let asg = prover::synthesis::synthesize(c.clone()).expect("satisfied");
    assert_eq!(asg.num_constraints() as u64, 1 << 16);
    let shape = measure(c).unwrap();
    assert_eq!(shape.constraints, 1 << 16);
    assert_eq!(shape.aux as usize, asg.aux_assignment.len());
    let b = shape.per_row(shape.nnz_b);
    assert!((0.8..=1.4).contains(&b), "B nnz/row {b}");
    assert!(shape.b_aux_density > 0.1 && shape.b_aux_density < 0.6, "b-aux density {}", shape.b_aux_density);
}

#[test]
fn parameter_file_round_trips_and_rejects_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let c = PorepLike::new(1 << 8, 0);
    let params = params_for(&c, 15);
    let path = dir.path().join("p.bin");
    params.write_file(&path).unwrap();
    let (back, report) = Parameters::read_file(&path).unwrap();
    assert_eq!(back, params);
    assert!(back.info.test_only);
    assert_eq!(report.bytes, std::fs::metadata(&path).unwrap().len());

    let bytes = std::fs::read(&path).unwrap();
    let load = |b: &[u8]| Parameters::from_bytes(b, "t.bin").unwrap_err();
    let mut flipped = bytes.clone();
    let mid = bytes.len() / 2;
    flipped[mid] ^= 1;
    assert!(matches!(load(&flipped), ParamsError::Hash { .. }), "{}", load(&flipped));
    assert!(matches!(load(&bytes[..bytes.len() - 7]), ParamsError::Truncated { .. }));
    assert!(matches!(load(&bytes[..100]), ParamsError::Truncated { .. }));
    assert!(matches!(load(b"not a params file"), ParamsError::BadMagic { .. }));
    let mut v = bytes.clone();
    v[8] = 9;
    assert!(matches!(load(&v), ParamsError::Version { found: 9, .. }));
    let msg = load(&flipped).to_string();
    assert!(msg.contains("t.bin"), "errors name the file: {msg}");
    let missing = Parameters::read_file(&dir.path().join("nope.bin")).unwrap_err();
    assert!(missing.to_string().contains("nope.bin"));
}

/// Issue 19: the compressed point encoding (48-byte G1, 96-byte G2) reads back the same
/// parameters from a file whose queries take half the bytes; a compressed point that is not
/// an x coordinate of the curve is an error naming its section and index (after the hash,
/// which is re-made here to reach the decoder); an empty file is an error, not a mapping
/// failure.
#[test]
fn compressed_parameter_files_round_trip_at_half_the_size() {
    use prover::params::PointEncoding;
    let dir = tempfile::tempdir().unwrap();
    let c = PorepLike::new(1 << 9, 0);
    let params = params_for(&c, 16);
    let (plain, packed) = (dir.path().join("u.bin"), dir.path().join("c.bin"));
    let u = params.write_file_as(&plain, PointEncoding::Uncompressed).unwrap();
    let k = params.write_file_as(&packed, PointEncoding::Compressed).unwrap();
    assert_eq!(u, std::fs::metadata(&plain).unwrap().len());
    assert_eq!(k, std::fs::metadata(&packed).unwrap().len());
    // The header, vk and ic stay as they are; every query point takes half.
    let fixed = 512 + 3 * 96 + 3 * 192 + params.vk.ic.len() as u64 * 96;
    let g1 = (params.h.len() + params.l.len() + params.a.len() + params.b_g1.len()) as u64;
    assert_eq!(u - fixed, g1 * 96 + params.b_g2.len() as u64 * 192);
    assert_eq!(k - fixed, g1 * 48 + params.b_g2.len() as u64 * 96);
    let (back, report) = Parameters::read_file(&packed).unwrap();
    assert_eq!(back, params);
    assert_eq!(report.encoding, PointEncoding::Compressed);
    assert_eq!(Parameters::read_file(&plain).unwrap().1.encoding, PointEncoding::Uncompressed);
    assert_eq!(Parameters::read_shape(&packed).unwrap(), params.shape());
    // A compressed x with no point on the curve (x = 0 with the compression bit) under a valid
    // hash: the decoder names it.
    let mut bytes = std::fs::read(&packed).unwrap();
    let h_at = u64::from_le_bytes(bytes[120 + 24 * 2..120 + 24 * 2 + 8].try_into().unwrap()) as usize;
    // The first small x whose x³ + 4 is not a square mod p (so no point has it).
    let bad = (1u8..=50)
        .map(|x| {
            let mut b = [0u8; 48];
            b[0] = 0x80;
            b[47] = x;
            b
        })
        .find(|b| bool::from(blstrs::G1Affine::from_compressed_unchecked(b).is_none()))
        .expect("a small non-residue x");
    bytes[h_at + 48..h_at + 96].copy_from_slice(&bad);
    let mut hasher = blake3::Hasher::new();
    hasher.update(&bytes[..288]);
    hasher.update(&[0u8; 32]);
    hasher.update(&bytes[320..]);
    let hash = *hasher.finalize().as_bytes();
    bytes[288..320].copy_from_slice(&hash);
    let err = Parameters::from_bytes(&bytes, "c.bin").unwrap_err();
    assert!(matches!(err, ParamsError::Point { section: "h", index: 1, .. }), "{err}");
    // The compressed flag on a file whose sections are uncompressed: a section error.
    let mut flagged = std::fs::read(&plain).unwrap();
    flagged[16] |= 2;
    let err = Parameters::from_bytes(&flagged, "u.bin").unwrap_err();
    assert!(matches!(err, ParamsError::Section { .. }), "{err}");
    // An empty file.
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(Parameters::read_file(&empty).unwrap_err(), ParamsError::BadMagic { .. }));
}

/// Issue 18: the header is under the hash. Clearing the TEST-ONLY flag (or changing a
/// size, the circuit id, a reserved byte) is a hash mismatch, not a silently different
/// parameter set; a version-1 file (header outside the hash) is refused with advice.
#[test]
fn the_header_is_under_the_hash() {
    let dir = tempfile::tempdir().unwrap();
    let params = params_for(&PorepLike::new(1 << 8, 0), 15);
    let path = dir.path().join("p.bin");
    params.write_file(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let load = |b: &[u8]| Parameters::from_bytes(b, "t.bin").unwrap_err();
    let mut no_test_only = bytes.clone();
    no_test_only[16] &= !1;
    assert!(matches!(load(&no_test_only), ParamsError::Hash { .. }), "{}", load(&no_test_only));
    let mut id = bytes.clone();
    id[60] ^= 0x20;
    assert!(matches!(load(&id), ParamsError::Hash { .. }), "{}", load(&id));
    for (at, what) in [(400, "reserved"), (17, "flags")] {
        let mut r = bytes.clone();
        r[at] = 1;
        assert!(load(&r).to_string().contains(what), "{}", load(&r));
    }
    let mut v1 = bytes.clone();
    v1[8] = 1;
    let e = load(&v1).to_string();
    assert!(e.contains("version 1") && e.contains("proofscope setup"), "{e}");
}

/// A parameter file that cannot be written whole (a full disk, a missing folder) leaves the
/// previous file as it was and no temporary file.
#[test]
fn a_failed_write_keeps_the_old_parameter_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.bin");
    std::fs::write(&path, b"the old file").unwrap();
    let params = params_for(&PorepLike::new(1 << 8, 0), 15);
    // /dev/full as the folder's only writable target is not portable; a read-only folder is.
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join("p.bin"), b"old").unwrap();
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o555);
    std::fs::set_permissions(&ro, perm).unwrap();
    let r = params.write_file(&ro.join("p.bin"));
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&ro, perm).unwrap();
    // (root may write anyway: then the write succeeded whole.)
    match r {
        Err(e) => {
            assert!(e.to_string().contains("p.bin"), "{e}");
            assert_eq!(std::fs::read(ro.join("p.bin")).unwrap(), b"old");
        }
        Ok(_) => assert!(Parameters::read_file(&ro.join("p.bin")).is_ok()),
    }
    assert_eq!(std::fs::read_dir(&ro).unwrap().count(), 1, "no temporary file left");
    params.write_file(&path).unwrap();
    assert_eq!(Parameters::read_file(&path).unwrap().0, params);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn parameters_of_another_circuit_are_refused() {
    let params = params_for(&PorepLike::new(1 << 8, 0), 16);
    let err = pv::prove(PorepLike::new(1 << 9, 0), &params, &CpuBackend::new(0), &mut ChaCha20Rng::seed_from_u64(6)).unwrap_err();
    assert!(matches!(err, ProveError::ParamsMismatch(_)), "{err}");
}

fn from_bellperson(p: &bp::Parameters<Bls12>, c: &PorepLike) -> Parameters {
    let shape = measure(c.clone()).unwrap();
    Parameters {
        vk: VerifyingKey {
            alpha_g1: p.vk.alpha_g1,
            beta_g1: p.vk.beta_g1,
            beta_g2: p.vk.beta_g2,
            gamma_g2: p.vk.gamma_g2,
            delta_g1: p.vk.delta_g1,
            delta_g2: p.vk.delta_g2,
            ic: p.vk.ic.clone(),
        },
        h: (*p.h).clone().into(),
        l: (*p.l).clone().into(),
        a: (*p.a).clone().into(),
        b_g1: (*p.b_g1).clone().into(),
        b_g2: (*p.b_g2).clone().into(),
        info: ParamsInfo {
            circuit_id: c.id(),
            num_inputs: shape.inputs,
            num_aux: shape.aux,
            num_constraints: shape.constraints,
            domain_size: shape.domain_size,
            test_only: true,
        },
    }
}

#[test]
fn cross_check_with_bellperson() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let c = PorepLike::new(1 << 9, 21);
    let bp_params = bp::generate_random_parameters::<Bls12, _, _>(c.clone(), &mut rng).expect("bellperson setup");
    let pvk = bp::prepare_verifying_key(&bp_params.vk);
    let ours = from_bellperson(&bp_params, &c);

    // Our proof, bellperson's parameters and verifier.
    let (proof, inputs) = pv::prove(c.clone(), &ours, &CpuBackend::new(0), &mut rng).expect("prove");
    let as_bp = bp::Proof::<Bls12> { a: proof.a, b: proof.b, c: proof.c };
    assert!(bp::verify_proof(&pvk, &as_bp, &inputs).unwrap(), "bellperson accepts our proof");
    // The byte encodings agree too.
    let mut bytes = Vec::new();
    as_bp.write(&mut bytes).unwrap();
    assert_eq!(bytes, proof.to_bytes().to_vec());
    let tampered = bp::Proof::<Bls12> { a: proof.a, b: proof.b, c: (G1Projective::from(proof.c) + G1Projective::generator()).to_affine() };
    assert!(!bp::verify_proof(&pvk, &tampered, &inputs).unwrap(), "bellperson rejects a tampered proof");

    // bellperson's proof, our verifier.
    let theirs = bp::create_random_proof(c, &bp_params, &mut rng).expect("bellperson proof");
    let theirs = Proof { a: theirs.a, b: theirs.b, c: theirs.c };
    assert_eq!(verifier::verify(&ours.vk, &theirs, &inputs), Ok(true));
}
