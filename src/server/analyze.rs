//! `GET /analyze/GAME`: the analysis of a game as a page of the web board,
//! `tabula analyze`'s report with its plots. A form sets the game's
//! options, a second variant to compare with, who plays each seat
//! (`random` or `greedy`: a page has no time for deep searches), the
//! number of games and the ply limit; the query string carries them, so
//! an analysis is a link (without a query, the page is the form alone).
//! The games are played on the connection's thread, one at a time, each
//! variant's within [`TIME`]: the games started by then are reported. The
//! server runs as many analyses at once as the machine has cores.

use crate::ai::Controller;
use crate::game::{Allowed, Game, OptionSpec, metrics};
use crate::work::{self, Hooks, Job, Shard, Task, Unit, Variant};
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Games a page plays at most, and by default.
pub const MAX_GAMES: u64 = 2000;
const DEFAULT_GAMES: u64 = 200;
/// The ply limit at most.
const MAX_PLIES: u32 = 2000;
/// No game starts after this long.
pub const TIME: Duration = Duration::from_secs(20);
/// The players a page offers.
const PLAYERS: [&str; 2] = ["random", "greedy"];

/// Analyses running now, in the whole server.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// One analysis running: a place among as many as the machine has cores,
/// given back when dropped.
pub struct Running(());

impl Running {
    /// A place, if one is free.
    pub fn start() -> Option<Running> {
        let most = std::thread::available_parallelism().map_or(1, |n| n.get());
        let taken = RUNNING.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < most).then_some(n + 1));
        taken.ok().map(|_| Running(()))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the page was asked for.
struct Asked {
    /// Options of variant A, and of B (those given; the others default).
    a: Vec<(String, String)>,
    b: Vec<(String, String)>,
    seats: Vec<(String, String)>,
    games: u64,
    max_plies: u32,
    seed: u64,
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn number<T>(name: &str, text: &str, low: T, high: T) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    match text.trim().parse::<T>() {
        Ok(n) if n >= low && n <= high => Ok(n),
        _ => Err(format!("{name} must be a whole number from {low} to {high}, not `{text}`")),
    }
}

/// Reads the query string against the game's options and seats.
fn asked(query: &str, game: &Game, seats: &[String]) -> Result<Asked, String> {
    let mut a =
        Asked { a: Vec::new(), b: Vec::new(), seats: Vec::new(), games: DEFAULT_GAMES, max_plies: 400, seed: 1 };
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        let (k, v) = (k.into_owned(), v.into_owned());
        let option = |name: &str| -> Result<String, String> {
            if game.options.iter().any(|o| o.name == name) {
                Ok(name.to_string())
            } else {
                Err(format!("{} has no option `{name}`", game.name))
            }
        };
        if let Some(name) = k.strip_prefix("a.") {
            a.a.push((option(name)?, v));
        } else if let Some(name) = k.strip_prefix("b.") {
            a.b.push((option(name)?, v));
        } else if let Some(seat) = k.strip_prefix("seat.") {
            if !seats.iter().any(|s| s == seat) {
                return Err(format!("{} has no seat `{seat}`; its seats are {}", game.name, seats.join(", ")));
            }
            if !PLAYERS.contains(&v.as_str()) {
                return Err(format!("a seat is played by {} on this page, not `{v}`", PLAYERS.join(" or ")));
            }
            a.seats.push((seat.to_string(), v));
        } else {
            match k.as_str() {
                "games" => a.games = number("games", &v, 1, MAX_GAMES)?,
                "max_plies" => a.max_plies = number("max_plies", &v, 1, MAX_PLIES)?,
                "seed" => a.seed = number("seed", &v, 0, u64::MAX)?,
                _ => return Err(format!("the page takes no `{k}`")),
            }
        }
    }
    Ok(a)
}

/// The options of a variant, with the defaults for those not given.
fn with_defaults(game: &Game, given: &[(String, String)]) -> Vec<(String, String)> {
    (game.options.iter())
        .map(|o| {
            let v = given.iter().rev().find(|(k, _)| *k == o.name).map_or(o.default.clone(), |(_, v)| v.clone());
            (o.name.clone(), v)
        })
        .collect()
}

/// The page for game `name` (found in `dir`) with the query `query`: its
/// status and HTML. `stop` is the server's stop flag.
pub fn page(dir: &std::path::Path, name: &str, query: &str, stop: &AtomicBool) -> (u16, String) {
    let path = match crate::game::find_game(name, dir) {
        Ok(p) => p,
        Err(e) => return (404, document(name, &format!("<p class=\"error\">{}</p>", escape(&e.to_string())))),
    };
    let mut game = match crate::loader::load(&path) {
        Ok((g, _)) => g,
        Err(e) => return (500, document(name, &format!("<p class=\"error\">{}</p>", escape(&e.to_string())))),
    };
    let seats = game.options_term(&[]).and_then(|o| game.players(&o)).unwrap_or_default();
    let title = game.title.clone();
    let asked = match asked(query, &game, &seats) {
        Ok(a) => a,
        Err(e) => {
            let body = format!("{}<p class=\"error\">{}</p>", form(&game, &seats, None), escape(&e));
            return (400, document(&title, &body));
        }
    };
    if query.is_empty() {
        let body = format!(
            "{}<p>Set the options (and those of a variant to compare with), then press Analyze: \
             the page plays the games and reports what they were like.</p>",
            form(&game, &seats, None)
        );
        return (200, document(&title, &body));
    }
    let body = match analyse(&mut game, &seats, &asked, stop) {
        Ok(report) => format!("{}{report}", form(&game, &seats, Some(&asked))),
        Err(e) => {
            let body = format!("{}<p class=\"error\">{}</p>", form(&game, &seats, Some(&asked)), escape(&e));
            return (400, document(&title, &body));
        }
    };
    (200, document(&title, &body))
}

/// Plays the variants and writes the report: the text, the comparison,
/// the plots.
fn analyse(game: &mut Game, seats: &[String], asked: &Asked, stop: &AtomicBool) -> Result<String, String> {
    let a = with_defaults(game, &asked.a);
    let b = with_defaults(game, &asked.b);
    let variants = if asked.b.is_empty() || a == b { vec![a.clone()] } else { vec![a.clone(), b.clone()] };
    let controllers: Vec<String> = (seats.iter())
        .map(|s| asked.seats.iter().rev().find(|(k, _)| k == s).map_or("random".into(), |(_, c)| c.clone()))
        .collect();
    for c in &controllers {
        Controller::parse(c, None)?.serves(game)?;
    }
    let mut done = Vec::new();
    let mut notes = String::new();
    for (i, options) in variants.iter().enumerate() {
        // A variant is named by its options that are not the defaults or
        // not the other variant's.
        let other = &variants[variants.len() - 1 - i];
        let changed: Vec<String> = (options.iter().zip(other))
            .zip(&game.options)
            .filter(|(((_, v), (_, w)), o)| *v != o.default || v != w)
            .map(|(((k, v), _), _)| format!("{k}={v}"))
            .collect();
        let label = match (variants.len(), changed.is_empty()) {
            (1, true) => game.name.clone(),
            (1, false) => changed.join(","),
            (_, true) => format!("{}: defaults", ["A", "B"][i]),
            (_, false) => format!("{}: {}", ["A", "B"][i], changed.join(",")),
        };
        let task = Task::Analyze {
            controllers: controllers.clone(),
            think: None,
            games: asked.games,
            max_plies: asked.max_plies,
            decisive: None,
        };
        let job = Job::new(game, options, asked.seed, task).map_err(|e| e.0)?;
        let hooks = Hooks { stop, time: Some(TIME), ..Hooks::default() };
        let unit = Unit { spec: game.spec(), job: &job, shard: Shard::WHOLE, threads: 1, hooks: &hooks };
        let file = work::run(&unit).map_err(|e| e.0)?;
        let work::Part::Analyze { games } = &file.result else { return Err("an analysis gave another result".into()) };
        if (games.len() as u64) < asked.games {
            let _ = write!(
                notes,
                "<p class=\"note\">{}: {} of {} games were played in the {} s a page may take; \
                 <code>tabula analyze</code> plays as many as you ask.</p>",
                escape(&label),
                games.len(),
                asked.games,
                TIME.as_secs()
            );
        }
        if games.is_empty() {
            return Err(format!("no game of {label} finished within {} s", TIME.as_secs()));
        }
        let metrics = work::metrics_of(&job.task, &job.players, games).map_err(|e| e.0)?;
        done.push(Variant { label, metrics });
    }
    let mut out = String::from("<section id=\"report\">");
    out.push_str(&notes);
    for v in &done {
        let _ = write!(out, "<pre>{}</pre>", escape(&work::metrics_text(&v.label, &v.metrics)));
    }
    if done.len() == 2 {
        let diffs = metrics::compare(&done[0].metrics, &done[1].metrics);
        let _ = write!(out, "<pre>{}</pre>", escape(&work::compared(&done[0].label, &done[1].label, &diffs)));
    }
    // The plots' labels are the variants' options as the game checked
    // them; anything but plain text is left out of the drawing.
    let plain = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || " :=,._-".contains(c));
    for v in &mut done {
        if !plain(&v.label) {
            v.label = v.label.chars().take(1).collect();
        }
    }
    for (plot, svg) in work::plots(&game.name, &done)? {
        let _ = write!(out, "<figure class=\"plot\" id=\"plot-{plot}\">{svg}</figure>");
    }
    out.push_str(DEFINITIONS);
    out.push_str("</section>");
    Ok(out)
}

/// What the metrics mean, under the report.
const DEFINITIONS: &str = "<details><summary>What the figures mean</summary><dl>\
<dt>wins, draws</dt><dd>each seat's share of the games, with its 95% interval (Wilson's); the first seat's \
advantage is its rate less the seats' mean</dd>\
<dt>completed</dt><dd>the games that ended within the ply limit</dd>\
<dt>plies</dt><dd>how long the games that ended lasted</dd>\
<dt>branching</dt><dd>legal moves a position: each game's mean, then their mean; the most any position had</dd>\
<dt>lead changes, drama</dt><dd>from the game's <code>value/3</code>: how often the seat ahead changed, and in \
a game won, the share of its positions where the winner was behind</dd>\
<dt>coverage, pieces</dt><dd>from the board <code>view/3</code> draws: the share of its sites a piece stood on \
during a game, and the pieces on it at the start and at the end</dd>\
<dt>beyond noise</dt><dd>comparing two variants: a two-sided test at 5% (two proportions, or two means with \
the games as samples)</dd>\
</dl><p>Decisive moves (under a searching player's estimates), deeper players and larger batches are \
<code>tabula analyze</code>'s, on one machine or a Ray cluster.</p></details>";

/// An input for option `o`, named `prefix.NAME`, holding `value`.
fn option_input(o: &OptionSpec, prefix: &str, value: &str) -> String {
    let name = format!("{prefix}.{}", o.name);
    match &o.allowed {
        Allowed::OneOf(vs) => {
            let mut s = format!("<select name=\"{}\">", escape(&name));
            for v in vs {
                let chosen = if v == value { " selected" } else { "" };
                let _ = write!(s, "<option value=\"{0}\"{chosen}>{0}</option>", escape(v));
            }
            s + "</select>"
        }
        Allowed::Between(l, h) => {
            format!(
                "<input name=\"{}\" type=\"number\" min=\"{l}\" max=\"{h}\" value=\"{}\">",
                escape(&name),
                escape(value)
            )
        }
        Allowed::Any | Allowed::Text => format!("<input name=\"{}\" value=\"{}\">", escape(&name), escape(value)),
    }
}

/// The form, filled with what was asked (or the defaults).
fn form(game: &Game, seats: &[String], asked: Option<&Asked>) -> String {
    let given = |list: fn(&Asked) -> &Vec<(String, String)>| asked.map(|a| list(a).clone()).unwrap_or_default();
    let (a, b) = (with_defaults(game, &given(|a| &a.a)), with_defaults(game, &given(|a| &a.b)));
    let mut s = format!("<form id=\"analyze-form\" method=\"get\" action=\"/analyze/{}\">", escape(&game.name));
    if !game.options.is_empty() {
        for (legend, prefix, values) in
            [("Options", "a", &a), ("Compared with (leave as it is for one variant)", "b", &b)]
        {
            let _ = write!(s, "<fieldset><legend>{legend}</legend>");
            for (o, (_, v)) in game.options.iter().zip(values.iter()) {
                let _ = write!(
                    s,
                    "<label title=\"{}\">{} {}</label> ",
                    escape(&o.help),
                    escape(&o.name),
                    option_input(o, prefix, v)
                );
            }
            s.push_str("</fieldset>");
        }
    }
    s.push_str("<fieldset><legend>Seats</legend>");
    for seat in seats {
        let now = asked.and_then(|a| a.seats.iter().rev().find(|(k, _)| k == seat)).map_or("random", |(_, c)| c);
        let _ = write!(s, "<label>{} <select name=\"seat.{}\">", escape(seat), escape(seat));
        for p in PLAYERS {
            let chosen = if p == now { " selected" } else { "" };
            let _ = write!(s, "<option{chosen}>{p}</option>");
        }
        s.push_str("</select></label> ");
    }
    let (games, plies, seed) = asked.map_or((DEFAULT_GAMES, 400, 1), |a| (a.games, a.max_plies, a.seed));
    let _ = write!(
        s,
        "</fieldset><fieldset><legend>Games</legend>\
         <label>games <input name=\"games\" type=\"number\" min=\"1\" max=\"{MAX_GAMES}\" value=\"{games}\"></label> \
         <label>cut off after <input name=\"max_plies\" type=\"number\" min=\"1\" max=\"{MAX_PLIES}\" value=\"{plies}\"> plies</label> \
         <label>seed <input name=\"seed\" type=\"number\" min=\"0\" value=\"{seed}\"></label></fieldset>\
         <button type=\"submit\">Analyze</button></form>"
    );
    s
}

/// The whole page around `body`.
fn document(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{0}: analysis</title><link rel=\"stylesheet\" href=\"/board.css\"></head>\
         <body class=\"analysis\"><header><h1>{0}: what the game is like</h1>\
         <p><a href=\"/\">Play a game</a></p></header><main>{body}</main></body></html>\n",
        escape(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_many_analyses_run_at_once_as_there_are_cores() {
        let most = std::thread::available_parallelism().map_or(1, |n| n.get());
        let held: Vec<Running> = (0..most).map(|_| Running::start().unwrap()).collect();
        assert!(Running::start().is_none());
        drop(held);
        assert!(Running::start().is_some());
    }

    #[test]
    fn what_a_page_echoes_is_escaped() {
        assert_eq!(
            escape("<script>\"x\" & 'y'</script>"),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
        );
    }
}
