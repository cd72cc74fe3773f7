//! The synthesis threads' scheduling priority (`synthesis_nice`). Syntheses, the GPU
//! workers' CPU steps (the MSMs' preparation, the uploads' host fill) and the finalisers share
//! the host's cores; with `pw` pools of the machine's cores each the OS shares them thread by
//! thread, so a GPU worker's few threads get a small slice beside `pw × cores` synthesis
//! threads and the device waits for them (run 127 at 2^22 × 10, pw 8 × 16 threads, gw 3:
//! preparation 102 ms a partition against 29 alone, the a/b/c upload's fill 107 ms, kernels
//! busy 75 % of the device's window). A nice value on the synthesis threads lets the others
//! run first while the syntheses keep every core that is left.

/// Raise the calling thread's nice value by `nice` (as the `nice` command does, so a daemon
/// started niced keeps its offset; at most 19; 0: leave it as it is). On Linux the nice value
/// is a per-thread attribute (setpriority(2), "BUGS"): `PRIO_PROCESS` with `who = 0` sets the
/// calling thread's alone. Raising one's own nice value needs no privilege; a failure is
/// logged, never fatal (the run is only less well scheduled). Elsewhere: nothing.
pub fn nice_this_thread(nice: u8) {
    if nice == 0 {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let to = (this_threads_nice() + libc::c_int::from(nice)).min(19);
        // SAFETY: a plain system call on the calling thread; no memory is passed.
        let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS as _, 0, to) };
        if rc != 0 {
            tracing::warn!("synthesis_nice = {nice}: setpriority failed ({}); this thread keeps its priority", std::io::Error::last_os_error());
        }
    }
}

/// The calling thread's nice value (Linux; elsewhere 0).
pub fn this_threads_nice() -> i32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a plain system call on the calling thread. A nice value of −1 is
        // indistinguishable from an error here; the engine never sets a negative one.
        unsafe { libc::getpriority(libc::PRIO_PROCESS as _, 0) }
    }
    #[cfg(not(target_os = "linux"))]
    0
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_lowers_its_own_priority_and_no_other_thread_s() {
        let before = this_threads_nice();
        let inside = std::thread::spawn(move || {
            nice_this_thread(3);
            this_threads_nice()
        })
        .join()
        .unwrap();
        assert_eq!(inside, (before + 3).min(19), "raised by 3 from the spawning thread's {before}");
        assert_eq!(this_threads_nice(), before, "the spawning thread keeps its own nice value");
        std::thread::spawn(|| {
            let b = this_threads_nice();
            nice_this_thread(0);
            assert_eq!(this_threads_nice(), b, "0 leaves the thread as it is");
        })
        .join()
        .unwrap();
    }
}
