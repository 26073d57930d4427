//! The GGP corpus game by game: the time to load (read, check, compute the
//! static relations, translate, load the program), random playouts per
//! second, and the path each game takes, against the figures recorded in
//! `benches/gdl-corpus.tsv`, so a regression shows as a ratio.
//!
//! `cargo bench --bench gdl_corpus [-- NAME...]` (the corpus is
//! `../shared/gdl-corpus/` or `$TABULA_GDL_CORPUS`); `BENCH_SECONDS=S`
//! plays each game's playouts for at least S seconds (default 1);
//! `BENCH_SAVE=1` writes the figures of this run as the new record.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tabula::game::{Draw, PlayoutEnd};

/// A playout that takes longer than this is not waited for.
const PLAYOUT_LIMIT: Duration = Duration::from_secs(30);

struct Figures {
    load: f64,
    /// `None` when one playout did not end within [`PLAYOUT_LIMIT`].
    playouts: Option<f64>,
    path: String,
}

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("TABULA_GDL_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/gdl-corpus"),
    };
    dir.is_dir().then_some(dir)
}

fn measure(path: &Path, seconds: f64) -> Result<Figures, String> {
    let started = Instant::now();
    let (mut game, warnings) = tabula::loader::load(path).map_err(|e| e.to_string())?;
    let load = started.elapsed().as_secs_f64();
    // A game runs grounded (a network of propositions, the translation for
    // the rest) where it grounds, else as its translation; what varies
    // besides is what is computed during play and whether rounds are
    // simultaneous.
    let mut path = match game.spec().note() {
        None => String::from("grounded"),
        Some(why) => format!("translation ({})", why.replace(['\t', '\n'], " ")),
    };
    if warnings.contains("computed during play") {
        path.push_str(", static relations during play");
    }
    if game.has("hidden_move", 1) {
        path.push_str(", simultaneous");
    }
    let options = game.options_term(&[]).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut n = 0u64;
    while n < 3 || started.elapsed().as_secs_f64() < seconds {
        let start = game.initial_state(&options, n).map_err(|e| e.to_string())?;
        game.seed(n);
        match game.random_playout(&start, u64::MAX, Some(PLAYOUT_LIMIT), Draw::Uniform) {
            Ok(Some((_, PlayoutEnd::Over(_)))) => n += 1,
            // The game breaks a rule of GDL in this playout (3pffa: a role
            // without a legal action): it ends there.
            Err(e) if e.to_string().contains("which GDL forbids") => {
                if !path.contains("breaks GDL") {
                    path.push_str(", breaks GDL in some games");
                }
                n += 1;
            }
            Err(e) => return Err(e.to_string()),
            Ok(_) => return Ok(Figures { load, playouts: None, path }),
        }
    }
    Ok(Figures { load, playouts: Some(n as f64 / started.elapsed().as_secs_f64()), path })
}

fn read_record(file: &Path) -> HashMap<String, Figures> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("game\t"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let figures = Figures {
                load: f.get(1)?.parse().ok()?,
                playouts: f.get(2)?.parse().ok(),
                path: f.get(3).unwrap_or(&"").to_string(),
            };
            Some((f.first()?.to_string(), figures))
        })
        .collect()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(dir) = corpus() else {
        println!("skipped: no GGP corpus at ../shared/gdl-corpus (set TABULA_GDL_CORPUS to its folder)");
        return;
    };
    let seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let record_file = root.join("benches/gdl-corpus.tsv");
    let mut record = read_record(&record_file);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .map(|e| e.expect("a corpus file").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kif"))
        .collect();
    files.sort();
    println!("{:<30} {:>8} {:>8} {:>11} {:>8}  path", "game", "load s", "(was)", "playouts/s", "(ratio)");
    let mut slower = Vec::new();
    for file in files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        if !only.is_empty() && !only.iter().any(|w| name.contains(w.as_str())) {
            continue;
        }
        let f = match measure(&file, seconds) {
            Ok(f) => f,
            Err(e) => {
                println!("{name:<30} error: {}", e.lines().next().unwrap_or(""));
                continue;
            }
        };
        let was = record.get(&name);
        let rate = f.playouts.map_or("-".to_string(), |p| format!("{p:.1}"));
        let ratio = match (f.playouts, was.and_then(|w| w.playouts)) {
            (Some(now), Some(then)) => {
                if now < 0.75 * then {
                    slower.push(format!("{name}: {now:.1} playouts/s, was {then:.1}"));
                }
                format!("{:.2}", now / then)
            }
            _ => String::new(),
        };
        if let Some(then) = was.map(|w| w.load)
            && f.load > 1.5 * then + 0.2
        {
            slower.push(format!("{name}: loads in {:.2} s, was {then:.2}", f.load));
        }
        let was_load = was.map_or(String::new(), |w| format!("{:.2}", w.load));
        println!("{name:<30} {:>8.2} {was_load:>8} {rate:>11} {ratio:>8}  {}", f.load, f.path);
        record.insert(name, f);
    }
    if slower.is_empty() {
        println!("nothing slower than recorded (playouts/s below 0.75x, or load above 1.5x + 0.2 s)");
    } else {
        println!("slower than recorded:\n  {}", slower.join("\n  "));
    }
    if std::env::var("BENCH_SAVE").is_ok_and(|v| v == "1") {
        let mut text = String::from(
            "# cargo bench --bench gdl_corpus, BENCH_SAVE=1: seconds to load, random playouts per second\n\
             # (empty: one did not end in 30 s), the path the game takes\n\
             game\tload\tplayouts\tpath\n",
        );
        // The games not run this time keep their figures.
        let mut rows: Vec<(&String, &Figures)> = record.iter().collect();
        rows.sort_by_key(|r| r.0);
        for (name, f) in rows {
            let rate = f.playouts.map_or(String::new(), |p| format!("{p:.2}"));
            text.push_str(&format!("{name}\t{:.3}\t{rate}\t{}\n", f.load, f.path));
        }
        std::fs::write(&record_file, text).expect("write benches/gdl-corpus.tsv");
        println!("recorded in {}", record_file.display());
    }
}
