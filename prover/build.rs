//! Compiles the CUDA kernels in `cuda/*.cu` when the `cuda` feature is on and nvcc is found.
//!
//! Each `.cu` file becomes an sm_90 cubin (Hopper machine code, loaded as is on an H100/H200)
//! and a compute_90 PTX (JIT-compiled by the driver on other GPUs); both are embedded into
//! the binary through `$OUT_DIR/cuda_kernels.rs`. nvcc is looked up in `$NVCC`, then on
//! `PATH`, then in the PyPI install of `scripts/install-nvcc.sh` (`~/.cache/nvcc13`).
//! Without nvcc the crate still builds: the cfg `cuda_kernels` stays unset and the CUDA
//! backend reports at run time that the binary was built without kernels.
//!
//! nvcc runs only for the sources whose inputs changed: a hash of the nvcc version, the flags,
//! the source and every header it includes (`#include "..."`, followed through the headers)
//! is kept per source in `$OUT_DIR/<stem>.stamp`. So a fresh clone (new mtimes, which rerun
//! this script) reuses the kernels already in its target directory (CI does: compiling them
//! all takes ~12 minutes on two cores), and an edit of `ntt.cu` recompiles `ntt.cu` alone
//! (seconds) instead of the MSM files too.
//!
//! Compiled kernels are also kept in a cache shared by every profile and feature set of the
//! target directory (`<target>/proofscope-kernels/<stem>-<hash>.*`, or `$PROOFSCOPE_KERNEL_CACHE`):
//! cargo gives the build script of `cargo run` and of `cargo test` (or of a release build)
//! different `OUT_DIR`s, and without the cache the README's second command compiled the kernels
//! a second time (20 minutes on two cores). A cached pair is copied in when its hash matches.
//!
//! With or without nvcc it writes `$OUT_DIR/kernel_names.rs`: the kernels each source defines
//! (`extern "C" __global__ void NAME(`, macro-generated entry points expanded), one module per
//! source with a typed constant per kernel, which the launchers use instead of string literals;
//! after a compilation the names are checked against the PTX's entry points.

use std::collections::hash_map::DefaultHasher;
use std::env;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cuda_kernels)");
    println!("cargo:rerun-if-changed=cuda");
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=PROOFSCOPE_NO_NVCC");
    println!("cargo:rerun-if-env-changed=PROOFSCOPE_KERNEL_CACHE");
    if env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let rs = out.join("cuda_kernels.rs");
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("cuda");
    let mut sources: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("read prover/cuda")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    sources.sort();
    for src in &sources {
        println!("cargo:rerun-if-changed={}", src.display());
    }
    // The kernel names, with or without nvcc: the launchers name kernels by these constants.
    let names: Vec<(String, Vec<String>)> = sources
        .iter()
        .map(|src| {
            let text = fs::read_to_string(src).unwrap_or_else(|e| panic!("read {}: {e}", src.display()));
            (stem(src).to_string(), kernel_names(&text))
        })
        .collect();
    fs::write(out.join("kernel_names.rs"), names_code(&names)).expect("write kernel_names.rs");
    let Some(nvcc) = find_nvcc() else {
        println!("cargo:warning=prover: nvcc not found (set NVCC or run scripts/install-nvcc.sh); building the CUDA backend without kernels");
        fs::write(&rs, "pub const MODULES: &[Module] = &[];\npub const NVCC_VERSION: &str = \"\";\n").expect("write cuda_kernels.rs");
        return;
    };
    let version = Command::new(&nvcc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or("").to_string())
        .unwrap_or_default();

    let flags = ["-O3", "-std=c++17", "-lineinfo"];
    let cache = shared_cache(&out);
    // Sources whose outputs exist and whose stamp matches the hash of their inputs are kept;
    // those whose outputs the shared cache holds for that hash are copied in.
    let stale: Vec<(PathBuf, String)> = sources
        .iter()
        .filter_map(|src| {
            let stem = src.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let key = inputs_hash(src, &version, &flags);
            let built = out.join(format!("{stem}.sm_90.cubin")).is_file() && out.join(format!("{stem}.compute_90.ptx")).is_file();
            let stamp = out.join(format!("{stem}.stamp"));
            if built && fs::read_to_string(&stamp).is_ok_and(|k| k == key) {
                if let Some(c) = &cache {
                    cache_store(c, &out, stem, &cache_key(&key));
                }
                return None;
            }
            // A fetch interrupted half-way must not leave the old stamp vouching for a mix.
            let _ = fs::remove_file(&stamp);
            if let Some(c) = &cache {
                if cache_fetch(c, &out, stem, &cache_key(&key)) {
                    fs::write(&stamp, &key).expect("write kernel stamp");
                    return None;
                }
            }
            // (The stamp is gone: an interrupted compilation cannot leave one vouching for its
            // outputs.)
            Some((src.clone(), key))
        })
        .collect();
    // Launch every compilation at once (cubin and PTX of each stale file), then wait for all.
    let mut jobs = Vec::new();
    for (src, _) in &stale {
        let stem = src.file_stem().and_then(|s| s.to_str()).expect("utf-8 kernel file name").to_string();
        let cubin = out.join(format!("{stem}.sm_90.cubin"));
        let ptx = out.join(format!("{stem}.compute_90.ptx"));
        for (flag, arch, dst) in [("-cubin", "-arch=sm_90", &cubin), ("-ptx", "-arch=compute_90", &ptx)] {
            let child = Command::new(&nvcc)
                .args([flag, arch])
                .args(flags)
                .arg("-I")
                .arg(&dir)
                .arg(src)
                .arg("-o")
                .arg(dst)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", nvcc.display()));
            jobs.push((child, src.clone(), flag));
        }
    }
    for (mut child, src, flag) in jobs {
        let status = child.wait().expect("wait for nvcc");
        if !status.success() {
            panic!("nvcc {flag} failed on {} ({status})", src.display());
        }
    }
    for (src, key) in &stale {
        let stem = src.file_stem().and_then(|s| s.to_str()).expect("utf-8 kernel file name");
        fs::write(out.join(format!("{stem}.stamp")), key).expect("write kernel stamp");
        if let Some(c) = &cache {
            cache_store(c, &out, stem, &cache_key(key));
        }
    }
    // The names scanned from the sources must be exactly the PTX's entry points: the
    // device loads these and no others.
    for (stem, scanned) in &names {
        let ptx = fs::read_to_string(out.join(format!("{stem}.compute_90.ptx"))).expect("read the PTX just built");
        let mut entries: Vec<String> = ptx
            .lines()
            .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
            .map(|rest| rest.split(['(', ' ']).next().unwrap_or("").to_string())
            .collect();
        let mut scanned = scanned.clone();
        entries.sort();
        scanned.sort();
        if entries != scanned {
            panic!("prover/cuda/{stem}.cu: kernels found in the source {scanned:?} differ from the PTX's entry points {entries:?} (build.rs: kernel_names)");
        }
    }
    let mut code = String::from("pub const MODULES: &[Module] = &[\n");
    for src in &sources {
        let stem = stem(src);
        code.push_str(&format!(
            "    Module {{ name: {stem:?}, cubin: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{stem}.sm_90.cubin\")), ptx: include_str!(concat!(env!(\"OUT_DIR\"), \"/{stem}.compute_90.ptx\")), kernels: super::{stem}::ALL }},\n"
        ));
    }
    code.push_str("];\n");
    code.push_str(&format!("pub const NVCC_VERSION: &str = {version:?};\n"));
    fs::write(&rs, code).expect("write cuda_kernels.rs");
    println!("cargo:rustc-cfg=cuda_kernels");
}

/// The kernel cache shared by the profiles of this target directory: `$PROOFSCOPE_KERNEL_CACHE`,
/// else `<target>/proofscope-kernels` when `OUT_DIR` has cargo's `<target>/<profile>/build/<pkg>/out`
/// shape, else none (each `OUT_DIR` then compiles its own).
fn shared_cache(out: &Path) -> Option<PathBuf> {
    if let Some(dir) = env::var_os("PROOFSCOPE_KERNEL_CACHE").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if dir.is_relative() {
            // (A build script runs in the package's folder: a relative cache would land there.)
            println!("cargo:warning=prover: PROOFSCOPE_KERNEL_CACHE={} is relative; give an absolute path (no kernel cache used)", dir.display());
            return None;
        }
        return Some(dir);
    }
    let build = out.parent()?.parent()?;
    if build.file_name()? != "build" {
        return None;
    }
    Some(build.parent()?.parent()?.join("proofscope-kernels"))
}

const OUTPUTS: [&str; 2] = ["sm_90.cubin", "compute_90.ptx"];

/// The nvcc command lines per output, beside the flags the stamp's hash covers: a change of
/// either (or of this version) gives the cache a new name, so an edit of this script never
/// brings old kernels back from it.
const CACHE_VERSION: &str = "1: -cubin -arch=sm_90 | -ptx -arch=compute_90";

/// The cache's name for the kernels whose inputs hash to `key`.
fn cache_key(key: &str) -> String {
    let mut h = DefaultHasher::new();
    key.hash(&mut h);
    CACHE_VERSION.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Copies `<stem>`'s cached outputs for `key` into `out`; true when both were there.
fn cache_fetch(cache: &Path, out: &Path, stem: &str, key: &str) -> bool {
    let cached = |ext: &str| cache.join(format!("{stem}-{key}.{ext}"));
    if !OUTPUTS.iter().all(|ext| cached(ext).is_file()) {
        return false;
    }
    OUTPUTS.iter().all(|ext| fs::copy(cached(ext), out.join(format!("{stem}.{ext}"))).is_ok())
}

/// Puts `<stem>`'s outputs for `key` into the cache, each written whole (temporary file and
/// rename) so that a concurrent or interrupted build never finds half a file. A cache that
/// cannot be written is skipped with a warning: it only saves time.
fn cache_store(cache: &Path, out: &Path, stem: &str, key: &str) {
    for ext in OUTPUTS {
        let dst = cache.join(format!("{stem}-{key}.{ext}"));
        if dst.is_file() {
            continue;
        }
        let tmp = cache.join(format!(".{stem}-{key}.{ext}.{}", std::process::id()));
        let done = fs::create_dir_all(cache)
            .and_then(|_| fs::copy(out.join(format!("{stem}.{ext}")), &tmp))
            .and_then(|_| fs::rename(&tmp, &dst));
        if let Err(e) = done {
            let _ = fs::remove_file(&tmp);
            println!("cargo:warning=prover: kernel cache {} not written ({e}); kernels still built", cache.display());
            return;
        }
    }
}

fn find_nvcc() -> Option<PathBuf> {
    if env::var_os("PROOFSCOPE_NO_NVCC").is_some() {
        return None;
    }
    if let Some(p) = env::var_os("NVCC") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Some(p);
        }
        println!("cargo:warning=prover: NVCC={} is not a file; looking elsewhere", p.display());
    }
    if let Some(path) = env::var_os("PATH") {
        for d in env::split_paths(&path) {
            let c = d.join("nvcc");
            if c.is_file() {
                return Some(c);
            }
        }
    }
    let home = env::var_os("HOME").map(PathBuf::from)?;
    let pypi = home.join(".cache/nvcc13/nvidia/cu13/bin/nvcc");
    is_file(&pypi).then_some(pypi)
}

/// Hash of everything nvcc's output for `src` depends on here: its version, the flags, and
/// the name and bytes of `src` and of every local header it includes, transitively.
fn inputs_hash(src: &Path, version: &str, flags: &[&str]) -> String {
    let mut h = DefaultHasher::new();
    version.hash(&mut h);
    flags.hash(&mut h);
    let dir = src.parent().expect("a source lives in prover/cuda");
    let mut todo = vec![src.to_path_buf()];
    let mut seen: Vec<PathBuf> = Vec::new();
    while let Some(f) = todo.pop() {
        if seen.contains(&f) {
            continue;
        }
        let bytes = fs::read(&f).unwrap_or_else(|e| panic!("read {}: {e}", f.display()));
        for line in String::from_utf8_lossy(&bytes).lines() {
            let Some(rest) = line.trim_start().strip_prefix("#include") else { continue };
            if let Some(name) = rest.trim().strip_prefix('"').and_then(|r| r.split('"').next()) {
                let inc = dir.join(name);
                if inc.is_file() {
                    todo.push(inc);
                }
            }
        }
        seen.push(f);
    }
    seen.sort();
    for f in seen {
        f.file_name().hash(&mut h);
        fs::read(&f).unwrap_or_else(|e| panic!("read {}: {e}", f.display())).hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

fn is_file(p: &Path) -> bool {
    p.is_file()
}

fn stem(src: &Path) -> &str {
    src.file_stem().and_then(|s| s.to_str()).expect("utf-8 kernel file name")
}

/// The kernels a `.cu` source defines: every `extern "C" __global__ void [__launch_bounds__(..)]
/// NAME(`, and those of a `#define MACRO(P, ...)` whose body declares `NAME##P(` expanded for
/// each invocation `MACRO(arg, ...)` (ntt.cu's `NTT_ENTRIES(_eo, FrEo)`). Comments are
/// skipped and macro continuation lines joined; the names are in source order.
fn kernel_names(text: &str) -> Vec<String> {
    let code = strip_comments(text).replace("\\\n", " ");
    let mut macros: Vec<(String, Vec<String>, Vec<String>)> = Vec::new(); // name, params, kernel templates
    let mut names = Vec::new();
    for line in code.lines() {
        let t = line.trim();
        if let Some(def) = t.strip_prefix("#define") {
            let def = def.trim_start();
            let Some(open) = def.find('(').filter(|&i| def[..i].chars().all(is_ident)) else { continue };
            let Some(close) = def[open..].find(')').map(|i| open + i) else { continue };
            let params = def[open + 1..close].split(',').map(|p| p.trim().to_string()).collect();
            let kernels = declared(&def[close + 1..]);
            if !kernels.is_empty() {
                macros.push((def[..open].to_string(), params, kernels));
            }
            continue;
        }
        if t.starts_with('#') {
            continue;
        }
        names.extend(declared(t).into_iter().filter(|n| !n.contains("##")));
        for (name, params, kernels) in &macros {
            let Some(args) = t.strip_prefix(name.as_str()).and_then(|r| r.trim_start().strip_prefix('(')).and_then(|r| r.split_once(')')).map(|(a, _)| a) else { continue };
            let args: Vec<&str> = args.split(',').map(str::trim).collect();
            for k in kernels {
                let mut n = k.clone();
                for (p, a) in params.iter().zip(&args) {
                    n = n.replace(&format!("##{p}"), a);
                }
                names.push(n);
            }
        }
    }
    names
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The names after each `__global__ void` of `code` (with any `__launch_bounds__(...)` in
/// between skipped), `##` pastes kept.
fn declared(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("__global__") {
        rest = rest[i + "__global__".len()..].trim_start();
        let Some(r) = rest.strip_prefix("void") else { continue };
        let mut r = r.trim_start();
        if let Some(lb) = r.strip_prefix("__launch_bounds__") {
            let Some(close) = lb.find(')') else { continue };
            r = lb[close + 1..].trim_start();
        }
        let name: String = r.chars().take_while(|&c| is_ident(c) || c == '#').collect();
        if !name.is_empty() && r[name.len()..].trim_start().starts_with('(') {
            out.push(name);
        }
        rest = r;
    }
    out
}

/// `text` without `//` and `/* */` comments (string literals of kernel sources hold none).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// `kernel_names.rs`: a module per source with a [`KernelName`] constant per kernel (the name
/// in upper case) and `ALL`, the module's kernels in source order.
fn names_code(names: &[(String, Vec<String>)]) -> String {
    let mut code = String::from("// Generated by prover/build.rs from prover/cuda/*.cu.\n");
    for (stem, kernels) in names {
        code.push_str(&format!("/// The kernels of `prover/cuda/{stem}.cu`.\npub mod {stem} {{\n    use super::KernelName;\n"));
        for k in kernels {
            code.push_str(&format!("    pub const {}: KernelName = KernelName({k:?});\n", k.to_uppercase()));
        }
        let all: Vec<String> = kernels.iter().map(|k| k.to_uppercase()).collect();
        code.push_str(&format!("    /// Every kernel of the source, in source order.\n    pub const ALL: &[KernelName] = &[{}];\n}}\n", all.join(", ")));
    }
    code
}
