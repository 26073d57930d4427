//! Shards on the command line: what `--shard I/N` prints, and `tabula
//! merge FILES...`, which combines the shard files of a run into the report
//! of the whole run.

use super::CliError;
use crate::work::{self, ShardFile, Timing};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The shard files (`--shard I/N` output), one per shard, in any order.
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<PathBuf>,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Prints what a run did: its shard file as JSON (`--shard`), or its
/// report.
pub fn print(done: &ShardFile, as_shard: bool, json: bool) -> Result<(), CliError> {
    let timing = Timing::whole(done.seconds, done.interrupted);
    if as_shard {
        println!("{}", serde_json::to_string(done)?);
    } else if json {
        println!("{}", work::report_json(&done.job, &done.result, timing));
    } else {
        print!("{}", work::report_text(&done.job, &done.result, timing));
    }
    Ok(())
}

pub fn merge(a: MergeArgs) -> Result<i32, CliError> {
    let mut shards = Vec::new();
    for f in &a.files {
        let text = super::read_source(f)?;
        let name = f.display().to_string();
        shards.push((name.clone(), work::read_shard(&name, &text)?));
    }
    let m = work::merge(&shards)?;
    let timing = Timing { seconds: m.seconds, shards: m.shards, added: true, interrupted: false };
    if a.json {
        println!("{}", work::report_json(&m.job, &m.result, timing));
    } else {
        print!("{}", work::report_text(&m.job, &m.result, timing));
    }
    Ok(0)
}
