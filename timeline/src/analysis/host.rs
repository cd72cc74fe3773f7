//! What else ran on the host during a run: the prover samples its own busy cores
//! (`cpu_busy_cores`), the whole machine's (`host_busy_cores`) and the hypervisor's steal
//! (`host_steal_cores`). A run that is slower than the same settings were yesterday is
//! often a noisy host, not the configuration: this puts the evidence beside the verdict.
//! Runs without those counters (cuzk logs, older timelines, the simulator) get `None`.

use serde::{Deserialize, Serialize};

use crate::event::{counters, Run};
use crate::stats::mean;

/// Means over the run's samples (one per sampler period, uniform in time).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct HostLoad {
    /// Samples of `host_busy_cores`.
    pub samples: u64,
    /// Cores the prover process kept busy (`cpu_busy_cores`), when sampled.
    pub process_cores_mean: Option<f64>,
    /// Cores busy on the whole machine.
    pub host_busy_cores_mean: f64,
    /// Whole machine minus the prover: other processes (0 when the prover is alone).
    pub other_cores_mean: Option<f64>,
    /// Cores the hypervisor gave to other tenants while this machine wanted them.
    pub steal_cores_mean: Option<f64>,
    pub steal_cores_max: Option<f64>,
}

fn values<'a>(run: &'a Run, name: &'a str) -> impl Iterator<Item = f64> + 'a {
    run.counters.iter().filter(move |c| c.name == name && c.value.is_finite()).map(|c| c.value)
}


pub fn analyze(run: &Run) -> Option<HostLoad> {
    let host: Vec<f64> = values(run, counters::HOST_BUSY_CORES).collect();
    let host_mean = mean(&host)?;
    let process: Vec<f64> = values(run, counters::CPU_BUSY_CORES).collect();
    let steal: Vec<f64> = values(run, counters::HOST_STEAL_CORES).collect();
    let process_mean = mean(&process);
    Some(HostLoad {
        samples: host.len() as u64,
        process_cores_mean: process_mean,
        host_busy_cores_mean: host_mean,
        other_cores_mean: process_mean.map(|p| (host_mean - p).max(0.0)),
        steal_cores_mean: mean(&steal),
        steal_cores_max: steal.iter().copied().reduce(f64::max),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Counter;

    fn counter(name: &str, t_ns: u64, value: f64) -> Counter {
        Counter { name: name.into(), t_ns, value, device: None }
    }

    #[test]
    fn host_load_separates_the_prover_other_processes_and_steal() {
        let mut run = Run::default();
        assert_eq!(analyze(&run), None, "no host counters, no host section");
        for (t, (p, h, s)) in [(8.0, 10.0, 0.0), (8.0, 12.0, 2.0), (6.0, 11.0, 1.0), (f64::NAN, f64::NAN, f64::NAN)].into_iter().enumerate() {
            run.counters.push(counter(counters::CPU_BUSY_CORES, t as u64, p));
            run.counters.push(counter(counters::HOST_BUSY_CORES, t as u64, h));
            run.counters.push(counter(counters::HOST_STEAL_CORES, t as u64, s));
        }
        let h = analyze(&run).unwrap();
        assert_eq!(h.samples, 3);
        assert!((h.host_busy_cores_mean - 11.0).abs() < 1e-12);
        assert!((h.process_cores_mean.unwrap() - 22.0 / 3.0).abs() < 1e-12);
        assert!((h.other_cores_mean.unwrap() - 11.0 / 3.0).abs() < 1e-12);
        assert_eq!((h.steal_cores_mean, h.steal_cores_max), (Some(1.0), Some(2.0)));
    }
}
