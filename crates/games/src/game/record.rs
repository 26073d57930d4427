//! Game records: a text file a person can read and edit. The game, the
//! options, the seed and the seats as `key: value` lines, then one move per
//! line in notation (and, for a game with `position_text/2`, the position
//! after it as a `%` comment).
//!
//! ```text
//! # tabula game record
//! game: breakthrough
//! options: rows=8 cols=8
//! seed: 1
//! seats: white=human black=random
//! moves:
//! e2-e3
//! d7-d6
//! ```

use std::fmt::Write;
use std::path::Path;

/// A game record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    pub game: String,
    pub options: Vec<(String, String)>,
    pub seed: u64,
    pub seats: Vec<(String, String)>,
    /// The starting state as a term, when options and seed alone do not
    /// give it (a given position, or a deal of hidden hands).
    pub start: Option<String>,
    /// Moves in notation, with the line each was read from (0 if new).
    pub moves: Vec<(String, usize)>,
    /// The position after each move in the game's own notation (chess:
    /// FEN), written after the move as a `%` comment, when the rules give
    /// it (`position_text/2`); not read back (replaying the moves gives
    /// it again).
    pub positions: Vec<String>,
}

/// A record that cannot be read, with the line at fault.
#[derive(Debug, PartialEq)]
pub struct RecordError {
    pub line: usize,
    pub message: String,
}

fn pairs(text: &str, line: usize) -> Result<Vec<(String, String)>, RecordError> {
    parse_pairs(text).map_err(|message| RecordError { line, message })
}

/// Reads `name=value` pairs separated by spaces, as records and perft
/// tables write them: a value with spaces (a FEN) is in double quotes,
/// with `\"` and `\\` inside.
pub fn parse_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let Some(eq) = rest[..end].find('=') else {
            return Err(format!("expected name=value, found `{}`", &rest[..end]));
        };
        let key = &rest[..eq];
        let after = &rest[eq + 1..];
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut close = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '"' => {
                        close = Some(i + 1);
                        break;
                    }
                    '\\' => value.extend(chars.next().map(|(_, c)| c)),
                    c => value.push(c),
                }
            }
            let Some(close) = close else {
                return Err(format!("the value of `{key}` has no closing `\"`"));
            };
            (value, &quoted[close..])
        } else {
            let end = after.find(char::is_whitespace).unwrap_or(after.len());
            (after[..end].to_string(), &after[end..])
        };
        if key.is_empty() || value.is_empty() {
            return Err(format!("expected name=value, found `{}`", &rest[..rest.len() - next.len()]));
        }
        if !next.is_empty() && !next.starts_with(char::is_whitespace) {
            return Err(format!("expected a space after the value of `{key}`"));
        }
        out.push((key.to_string(), value));
        rest = next.trim_start();
    }
    Ok(out)
}

/// A `name=value` pair as `parse_pairs` reads it back (the value quoted
/// when it has spaces or quotes).
pub fn format_pair(key: &str, value: &str) -> String {
    if value.is_empty() || value.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
        let escaped: String =
            value.chars().flat_map(|c| if c == '"' || c == '\\' { vec!['\\', c] } else { vec![c] }).collect();
        format!("{key}=\"{escaped}\"")
    } else {
        format!("{key}={value}")
    }
}

impl Record {
    /// The record as text.
    pub fn to_text(&self) -> String {
        let mut s = String::from("# tabula game record\n");
        let _ = writeln!(s, "game: {}", self.game);
        let pairs =
            |v: &[(String, String)]| v.iter().map(|(k, v)| format!(" {}", format_pair(k, v))).collect::<String>();
        let _ = writeln!(s, "options:{}", pairs(&self.options));
        let _ = writeln!(s, "seed: {}", self.seed);
        let _ = writeln!(s, "seats:{}", pairs(&self.seats));
        if let Some(t) = &self.start {
            let _ = writeln!(s, "start: {t}");
        }
        s.push_str("moves:\n");
        for (i, (m, _)) in self.moves.iter().enumerate() {
            s.push_str(m);
            if let Some(p) = self.positions.get(i) {
                let _ = write!(s, "  % {p}");
            }
            s.push('\n');
        }
        s
    }

    /// Writes the record to `path`, replacing what was there at once: the
    /// text goes to a temporary file beside it, is flushed to the disk and
    /// then renamed over `path`, so a crash or a full disk mid-write leaves
    /// the old record whole, never a truncated one (and the next save
    /// removes the temporary file a killed process left).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "record".into());
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            std::io::Write::write_all(&mut f, self.to_text().as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
            return written;
        }
        // What a process killed mid-write left of this record.
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let stale = |n: &str| n.starts_with(&format!(".{name}.")) && n.ends_with(".tmp");
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if stale(&e.file_name().to_string_lossy()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
        Ok(())
    }

    /// Reads a record; every problem names its line.
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        let mut r = Record::default();
        let mut in_moves = false;
        let mut have_game = false;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            if in_moves {
                // A `%` comment after the move (the position, as written).
                let m = l.split_once(" %").map_or(l, |(m, _)| m.trim_end());
                if !m.starts_with('%') {
                    r.moves.push((m.to_string(), line));
                }
                continue;
            }
            let Some((key, value)) = l.split_once(':') else {
                return Err(RecordError { line, message: format!("expected `key: value`, found `{l}`") });
            };
            let value = value.trim();
            match key.trim() {
                "game" => {
                    r.game = value.to_string();
                    have_game = true;
                }
                "options" => r.options = pairs(value, line)?,
                "seed" => {
                    r.seed = value.parse().map_err(|_| RecordError {
                        line,
                        message: format!("the seed must be a number, not `{value}`"),
                    })?
                }
                "seats" => r.seats = pairs(value, line)?,
                "start" => r.start = Some(value.to_string()),
                "moves" => in_moves = true,
                other => return Err(RecordError { line, message: format!("unknown key `{other}`") }),
            }
        }
        if !have_game {
            return Err(RecordError { line: 1, message: "the record names no game (`game: NAME`)".into() });
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips() {
        let r = Record {
            game: "breakthrough".into(),
            options: vec![("rows".into(), "6".into())],
            seed: 7,
            seats: vec![("white".into(), "human".into()), ("black".into(), "random".into())],
            start: Some("s(white, [a-b, 'c d'])".into()),
            moves: vec![("a2-a3".into(), 0), ("b7-b6".into(), 0)],
            positions: vec!["after a2-a3".into(), "after b7-b6".into()],
        };
        let back = Record::parse(&r.to_text()).unwrap();
        assert_eq!(back.game, "breakthrough");
        assert_eq!(back.options, r.options);
        assert_eq!(back.seats, r.seats);
        assert_eq!(back.start, r.start);
        assert_eq!(back.moves.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["a2-a3", "b7-b6"]);
        assert_eq!(back.moves[1].1, 9);
        assert!(r.to_text().contains("a2-a3  % after a2-a3\n"));
    }

    #[test]
    fn values_with_spaces_are_quoted() {
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let pairs = vec![
            ("fen".to_string(), fen.to_string()),
            ("draws".to_string(), "off".to_string()),
            ("odd".to_string(), r#"a "b" \c"#.to_string()),
        ];
        let text = pairs.iter().map(|(k, v)| format_pair(k, v)).collect::<Vec<_>>().join(" ");
        assert_eq!(text.split(' ').next(), Some(r#"fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"#));
        assert_eq!(parse_pairs(&text).unwrap(), pairs);
        assert_eq!(parse_pairs("rows=6  cols=7 ").unwrap(), [("rows".into(), "6".into()), ("cols".into(), "7".into())]);
        assert!(parse_pairs(r#"fen="open"#).unwrap_err().contains("no closing"));
        assert!(parse_pairs(r#"a="b"c"#).is_err());
        assert!(parse_pairs("=3").is_err());
    }

    #[test]
    fn errors_name_the_line() {
        let e = Record::parse("game: x\nseed: many\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(Record::parse("options: rows\n").is_err());
    }
}
