//! `partitions.parquet` and `jobs.parquet`: the per-partition and per-job tables of the
//! analysis ([`crate::analysis::tables`]) as Parquet, one column per field of
//! [`PartitionRow`] / [`JobRow`], same names and units (times in ms since the run epoch,
//! f64; nulls where the log does not say).

use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::parquet::{write_frame, ParquetError};
use crate::analysis::tables::{JobRow, PartitionRow};

fn col_f(name: &str, v: Vec<Option<f64>>) -> Column {
    Column::new(name.into(), v)
}

/// The per-partition table as a DataFrame.
pub fn partitions_frame(rows: &[PartitionRow]) -> PolarsResult<DataFrame> {
    macro_rules! f {
        ($name:ident) => {
            col_f(stringify!($name), rows.iter().map(|r| r.$name).collect())
        };
    }
    macro_rules! u {
        ($name:ident) => {
            Column::new(stringify!($name).into(), rows.iter().map(|r| r.$name).collect::<Vec<Option<u32>>>())
        };
    }
    DataFrame::new_infer_height(vec![
        Column::new("job".into(), rows.iter().map(|r| r.job.as_str()).collect::<Vec<_>>()),
        u!(partition),
        u!(device),
        u!(worker),
        u!(synth_worker),
        f!(synth_start_ms),
        f!(synth_end_ms),
        f!(synth_ms),
        f!(queued_ms),
        f!(picked_up_ms),
        f!(gpu_start_ms),
        f!(gpu_end_ms),
        f!(queue_wait_ms),
        f!(pickup_to_start_ms),
        f!(gpu_wall_ms),
        f!(kernel_ms),
        f!(prep_msm_ms),
        f!(cpu_msm_b_g2_ms),
        f!(finalize_ms),
        f!(lock_wait_ms),
        Column::new("open".into(), rows.iter().map(|r| r.open).collect::<Vec<bool>>()),
    ])
}

/// The per-job table as a DataFrame.
pub fn jobs_frame(rows: &[JobRow]) -> PolarsResult<DataFrame> {
    macro_rules! f {
        ($name:ident) => {
            col_f(stringify!($name), rows.iter().map(|r| r.$name).collect())
        };
    }
    DataFrame::new_infer_height(vec![
        Column::new("job".into(), rows.iter().map(|r| r.job.as_str()).collect::<Vec<_>>()),
        Column::new("proof_type".into(), rows.iter().map(|r| r.proof_type.as_str()).collect::<Vec<_>>()),
        Column::new("partitions".into(), rows.iter().map(|r| r.partitions).collect::<Vec<u32>>()),
        Column::new("gpu_partitions".into(), rows.iter().map(|r| r.gpu_partitions).collect::<Vec<u32>>()),
        Column::new("first_start_ms".into(), rows.iter().map(|r| r.first_start_ms).collect::<Vec<f64>>()),
        f!(first_synth_start_ms),
        f!(last_synth_end_ms),
        f!(first_gpu_start_ms),
        f!(last_gpu_end_ms),
        f!(completed_ms),
        f!(latency_s),
        Column::new("synth_total_ms".into(), rows.iter().map(|r| r.synth_total_ms).collect::<Vec<f64>>()),
        Column::new("gpu_wall_total_ms".into(), rows.iter().map(|r| r.gpu_wall_total_ms).collect::<Vec<f64>>()),
        f!(kernel_total_ms),
        Column::new("open_spans".into(), rows.iter().map(|r| r.open_spans).collect::<Vec<u32>>()),
        Column::new("complete".into(), rows.iter().map(|r| r.complete).collect::<Vec<bool>>()),
    ])
}

/// Write `partitions.parquet` and `jobs.parquet` into `dir`; returns the two paths.
pub fn write_tables(partitions: &[PartitionRow], jobs: &[JobRow], dir: &Path) -> Result<[PathBuf; 2], ParquetError> {
    let pp = dir.join("partitions.parquet");
    let jp = dir.join("jobs.parquet");
    let frame_err = |p: &Path| {
        let path = p.display().to_string();
        move |source| ParquetError::Polars { path, source }
    };
    write_frame(&mut partitions_frame(partitions).map_err(frame_err(&pp))?, &pp)?;
    write_frame(&mut jobs_frame(jobs).map_err(frame_err(&jp))?, &jp)?;
    Ok([pp, jp])
}
