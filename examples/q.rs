use tabula::engine::Engine;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut e = Engine::new();
    if args.len() > 2 {
        let src = std::fs::read_to_string(&args[2]).unwrap();
        let r = e.load(&args[2], &src);
        for d in &r.diagnostics {
            eprintln!("{:?}", d.message);
        }
    }
    let q = e.query(&args[1]);
    match q {
        Err(err) => println!("query error {err}"),
        Ok(q) => {
            for a in q.take(20) {
                match a {
                    Ok(a) => {
                        print!("{}", a.output);
                        println!(
                            "{}",
                            a.bindings
                                .iter()
                                .map(|b| format!("{} = {}", b.name, b.text))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                    Err(e) => println!("ERR {e}"),
                }
            }
        }
    }
}
