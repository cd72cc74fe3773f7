//! CSV copies of the tables (`--csv DIR` on `analyze`, `compare` and `sweep`), for people
//! who live in spreadsheets — like `nsys stats` reports. The same frames as the Parquet
//! tables, through polars' CSV writer: a header row, RFC 4180 quoting where a field needs
//! it (the `args` JSON), an empty field for null, `\n` line ends, floats in their shortest
//! round-trip form. Written whole or not at all ([`crate::atomic`]).

use std::path::Path;

use polars::prelude::*;

use super::parquet::ParquetError;

/// Write `df` to `path` as CSV.
pub fn write_csv(df: &mut DataFrame, path: &Path) -> Result<(), ParquetError> {
    let name = path.display().to_string();
    let mut f = crate::atomic::AtomicFile::create(path).map_err(|source| ParquetError::Create { path: name.clone(), source })?;
    CsvWriter::new(f.file()).include_header(true).finish(df).map_err(|source| ParquetError::Polars { path: name.clone(), source })?;
    f.commit().map_err(|source| ParquetError::Create { path: name, source })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{summarize, AnalyzeOptions};
    use crate::export::fixtures::{sample_run, synthetic};
    use crate::export::keys::RunKeys;
    use crate::export::tables::{run_table, RUN_TABLES};

    /// The CSV read back with the Parquet frame's schema.
    fn read_back(path: &Path, like: &DataFrame) -> DataFrame {
        CsvReadOptions::default()
            .with_has_header(true)
            .with_schema(Some(like.schema().clone()))
            .try_into_reader_with_file_path(Some(path.to_path_buf()))
            .unwrap()
            .finish()
            .unwrap()
    }

    #[test]
    fn every_table_round_trips_through_csv() {
        let dir = tempfile::tempdir().unwrap();
        for (label, mut run) in [("sample", sample_run()), ("synthetic", synthetic(3, 4, 2, true))] {
            // A field that needs quoting: commas, quotes and a newline in an argument.
            if let Some(s) = run.spans.first_mut() {
                s.args.insert("note".into(), "a, \"b\"\nc".into());
            }
            let s = summarize(&run, &AnalyzeOptions::default());
            let keys = RunKeys::new(&run, &s, label);
            for name in RUN_TABLES {
                let mut df = run_table(name, &run, &s, &keys).unwrap();
                let p = dir.path().join(format!("{label}-{name}.csv"));
                write_csv(&mut df, &p).unwrap();
                let text = std::fs::read_to_string(&p).unwrap();
                let header: Vec<&str> = df.get_column_names().into_iter().map(|c| c.as_str()).collect();
                assert_eq!(text.lines().next().unwrap(), header.join(","), "{label} {name}");
                let back = read_back(&p, &df);
                assert_eq!(back.height(), df.height(), "{label} {name}");
                assert!(back.equals_missing(&df), "{label} {name}: the CSV reads back as a different table\n{back}\n{df}");
            }
        }
    }

    #[test]
    fn an_unwritable_folder_is_named() {
        let mut df = DataFrame::empty();
        let e = write_csv(&mut df, Path::new("/nonexistent/dir/spans.csv")).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/dir/spans.csv"), "{e}");
    }
}
