//! `pgprompt-lints LIMIT DIR...`: every Rust file under each DIR, whole, checked by
//! [`pgprompt_lints::check`]; each finding printed, exit 1 when there is one.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((limit, dirs)) = args
        .split_first()
        .and_then(|(l, d)| Some((l.parse::<usize>().ok()?, d)))
    else {
        eprintln!("usage: pgprompt-lints LIMIT DIR...");
        return ExitCode::from(2);
    };
    let mut paths = Vec::new();
    for d in dirs {
        if let Err(e) = files(Path::new(d), &mut paths) {
            eprintln!("{d}: {e}");
            return ExitCode::from(2);
        }
    }
    let mut bad = 0;
    for p in &paths {
        let source = match std::fs::read_to_string(p) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{}: {e}", p.display());
                return ExitCode::from(2);
            }
        };
        match pgprompt_lints::check(p, &source, limit) {
            Ok(found) => {
                for f in &found {
                    println!("{f}");
                }
                bad += found.len();
            }
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    }
    if bad > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
