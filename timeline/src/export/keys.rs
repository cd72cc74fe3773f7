//! The key columns every table of a run starts with — `run_id`, `label`, `host`,
//! `proof_type` — so that the tables of many runs (several days, a fleet's hosts) stack
//! with a plain concat or SQL `UNION ALL` / `read_parquet('runs/*/spans.parquet')` and
//! are told apart, or grouped, by these columns (issue 17, the data contract).

use polars::prelude::*;
use rustc_hash::FxHashMap;

use crate::analysis::Summary;
use crate::event::Run;

/// The names of the key columns, in order (the first columns of every table).
pub const KEY_COLUMNS: [&str; 4] = ["run_id", "label", "host", "proof_type"];

/// What identifies one analysed run in its tables.
#[derive(Clone, Debug, PartialEq)]
pub struct RunKeys {
    /// A fingerprint of the label and the analysed events (16 hex digits): the same log
    /// analysed under the same label gets the same id; another log, or the same log under
    /// another label (a second host), another one.
    pub run_id: String,
    /// The run's label: a fleet host's label (`--labels`, else the log's file name), or
    /// the log's file name without its extensions for a single run.
    pub label: String,
    /// The host the log names (journald's `_HOSTNAME`, a prefix, the prover's hostname);
    /// null when it does not.
    pub host: Option<String>,
    /// Each job's proof type (the summary's `jobs[].proof_type`); looked up once per row
    /// of the spans table (Fx: SipHash was 1.5 % of an analyze).
    job_types: FxHashMap<String, String>,
    /// The run's only proof type, when it has exactly one (rows tied to no job carry it).
    run_type: Option<String>,
}

impl RunKeys {
    /// The keys of `run`, analysed into `summary`, under `label`.
    pub fn new(run: &Run, summary: &Summary, label: &str) -> RunKeys {
        let job_types: FxHashMap<String, String> = summary.jobs.iter().map(|j| (j.job.clone(), j.proof_type.clone())).collect();
        let run_type = match summary.proof_types.as_slice() {
            [one] => Some(one.proof_type.clone()),
            _ => None,
        };
        RunKeys { run_id: fingerprint(run, label), label: label.to_string(), host: run.meta.host.clone(), job_types, run_type }
    }

    /// The proof type of a row tied to `job`: the job's type; for a row of no job (a
    /// counter, a host span) or a job the analysis does not list, the run's type when the
    /// run has one type only, else null.
    pub fn proof_type(&self, job: Option<&str>) -> Option<&str> {
        job.and_then(|j| self.job_types.get(j)).or(self.run_type.as_ref()).map(|s| s.as_str())
    }

    /// The four key columns for `types.len()` rows whose proof types are `types`.
    pub fn columns(&self, types: Vec<Option<&str>>) -> Vec<Column> {
        let n = types.len();
        vec![
            Column::new(KEY_COLUMNS[0].into(), vec![self.run_id.as_str(); n]),
            Column::new(KEY_COLUMNS[1].into(), vec![self.label.as_str(); n]),
            Column::new(KEY_COLUMNS[2].into(), vec![self.host.as_deref(); n]),
            Column::new(KEY_COLUMNS[3].into(), types),
        ]
    }
}

/// FNV-1a over 64-bit words (stable across platforms and versions, unlike std's hasher).
struct Fnv(u64);

impl Fnv {
    fn word(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x0000_0100_0000_01b3);
    }
    fn bytes(&mut self, b: &[u8]) {
        for c in b.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.word(u64::from_le_bytes(w));
        }
        self.word(b.len() as u64);
    }
    fn opt(&mut self, x: Option<u64>) {
        match x {
            Some(v) => {
                self.word(1);
                self.word(v);
            }
            None => self.word(0),
        }
    }
}

/// The run id: the label, the host, the start time and every span and counter.
fn fingerprint(run: &Run, label: &str) -> String {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.bytes(label.as_bytes());
    h.bytes(run.meta.host.as_deref().unwrap_or("").as_bytes());
    h.bytes(run.meta.started_at.as_deref().unwrap_or("").as_bytes());
    for s in &run.spans {
        h.bytes(s.kind.as_str().as_bytes());
        h.word(s.start_ns);
        h.opt(s.end_ns);
        h.bytes(s.job.as_deref().unwrap_or("").as_bytes());
        h.opt(s.partition.map(u64::from));
        h.opt(s.worker.map(u64::from));
        h.opt(s.device.map(u64::from));
    }
    for c in &run.counters {
        h.bytes(c.name.as_bytes());
        h.word(c.t_ns);
        h.word(c.value.to_bits());
        h.opt(c.device.map(u64::from));
    }
    format!("{:016x}", h.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{summarize, AnalyzeOptions};
    use crate::export::fixtures::sample_run;

    #[test]
    fn the_id_follows_the_events_and_the_label() {
        let run = sample_run();
        let s = summarize(&run, &AnalyzeOptions::default());
        let k = RunKeys::new(&run, &s, "a");
        assert_eq!(k.run_id.len(), 16);
        assert_eq!(k, RunKeys::new(&run, &s, "a"), "the same run and label: the same id");
        assert_ne!(k.run_id, RunKeys::new(&run, &s, "b").run_id, "another label");
        let mut other = run.clone();
        other.spans[3].start_ns += 1;
        assert_ne!(k.run_id, RunKeys::new(&other, &s, "a").run_id, "another run");
        // The sample has one proof type: rows of no job carry it too.
        let t = s.proof_types[0].proof_type.as_str();
        assert_eq!((k.proof_type(None), k.proof_type(Some(&s.jobs[0].job)), k.proof_type(Some("nope"))), (Some(t), Some(t), Some(t)));
        let cols = k.columns(vec![Some("x"), None]);
        let names: Vec<&str> = cols.iter().map(|c| c.name().as_str()).collect();
        assert_eq!(names, KEY_COLUMNS);
        assert_eq!(cols[2].null_count(), 2, "the sample log names no host");
    }
}
