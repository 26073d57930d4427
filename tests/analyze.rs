//! `tabula analyze`: the metrics of batches of games, checked against
//! exact values computed independently (`compat/solve.py random-tictactoe`:
//! the chances of each result of tic-tac-toe played at random), against
//! what is certain of a game (Breakthrough's first position has 13 moves
//! on 5x5), and for their consistency; `--compare` and `--plots`.

use serde_json::Value;
use std::process::Command;

fn analyze(args: &[&str]) -> (Value, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .arg("analyze")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        serde_json::from_str(&text).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn random_tictactoe_wins_and_draws_as_often_as_computed_exactly() {
    let exact = match Command::new("python3")
        .args(["compat/solve.py", "random-tictactoe"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
    {
        Ok(o) if o.status.success() => serde_json::from_slice::<Value>(&o.stdout).unwrap(),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => panic!("python3 is needed under CI=true"),
        _ => {
            eprintln!("python3 is not installed: the check against compat/solve.py is skipped");
            return;
        }
    };
    let (v, err, code) = analyze(&["tictactoe", "--games", "20000", "--seed", "7", "--json"]);
    assert_eq!(code, 0, "{err}");
    let m = &v["variants"][0]["metrics"];
    let n = 20000.0;
    for (estimate, want) in
        [(&m["seats"][0]["wins"], &exact["x"]), (&m["seats"][1]["wins"], &exact["o"]), (&m["draws"], &exact["draw"])]
    {
        let (p, q) = (f(&estimate["rate"]), f(want));
        // Within three standard errors, and inside the 95% interval.
        let se = (q * (1.0 - q) / n).sqrt();
        assert!((p - q).abs() < 3.0 * se, "{p} against exactly {q}");
        assert!(f(&estimate["low"]) <= q && q <= f(&estimate["high"]), "{estimate} against exactly {q}");
    }
}

#[test]
fn breakthrough_metrics_add_up_and_variants_compare() {
    let (v, err, code) = analyze(&["breakthrough", "-o", "rows=5", "-o", "cols=5", "--games", "100", "--json"]);
    assert_eq!(code, 0, "{err}");
    let m = &v["variants"][0]["metrics"];
    assert_eq!(m["games"], 100);
    let wins: u64 = m["seats"].as_array().unwrap().iter().map(|s| s["wins"]["count"].as_u64().unwrap()).sum();
    assert_eq!(wins + m["draws"]["count"].as_u64().unwrap(), m["completed"]["count"].as_u64().unwrap());
    let binned: u64 = m["histogram"].as_array().unwrap().iter().map(|b| b[2].as_u64().unwrap()).sum();
    assert_eq!(binned, m["completed"]["count"].as_u64().unwrap());
    assert!(f(&m["plies"]["min"]) <= f(&m["plies"]["mean"]) && f(&m["plies"]["mean"]) <= f(&m["plies"]["max"]));
    // Every game starts from the same position: 13 moves (5 pawns, 3
    // steps each but the sides' 2).
    assert_eq!(m["branching_by_ply"][0], serde_json::json!([0, 13.0, 100]));
    assert!(m["lead_changes"]["mean"].is_number(), "Breakthrough defines value/3");

    // Two variants: the longer board makes longer games, beyond noise.
    let dir = std::env::temp_dir().join(format!("tabula-analyze-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (v, err, code) = analyze(&[
        "breakthrough",
        "--compare",
        "rows=5,cols=5",
        "--compare",
        "rows=7,cols=5",
        "--games",
        "60",
        "--json",
        "--plots",
        d,
    ]);
    assert_eq!(code, 0, "{err}");
    let plies = v["differences"].as_array().unwrap().iter().find(|x| x["metric"] == "plies").unwrap();
    assert!(f(&plies["difference"]) > 0.0 && plies["beyond_noise"] == true, "{plies}");
    assert_eq!(v["variants"][1]["variant"], "rows=7,cols=5");
    for plot in ["lengths", "branching", "balance"] {
        let svg = std::fs::read_to_string(dir.join(format!("breakthrough-{plot}.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("rows=7,cols=5"), "{plot}");
    }
    std::fs::remove_dir_all(&dir).ok();

    // Mistakes are told.
    let (_, err, code) = analyze(&["breakthrough", "--compare", "rows=6"]);
    assert_eq!(code, 2);
    assert!(err.contains("--compare takes two variants"), "{err}");
    let (_, err, code) = analyze(&["breakthrough", "--seat", "white=human", "--games", "2"]);
    assert_eq!(code, 2);
    assert!(err.contains("computer players only"), "{err}");
}
