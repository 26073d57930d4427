//! `format/1,2,3`: the directives of SWI-Prolog's `format/2`, including
//! column stops and fill (`~t`, `~N|`, `~N+`).

use super::atoms::atom;
use super::machine::{Exc, Machine};
use super::term::Cell;
use super::write::WriteOpts;

fn format_error(m: &mut Machine, msg: &str) -> Exc {
    let a = Cell::Atom(m.atoms.intern(msg));
    let f = m.store.new_struct(atom::FORMAT, &[a]);
    m.error(f)
}

/// C's `%.{p}e`: mantissa, `e`, sign and at least two exponent digits.
pub fn c_exp(f: f64, p: usize) -> String {
    let s = format!("{:.*e}", p, f);
    let (mant, exp) = s.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// C's `%.{p}g`.
pub fn c_general(f: f64, p: usize) -> String {
    if !f.is_finite() {
        return format!("{f}");
    }
    let p = p.max(1);
    let e = format!("{:.*e}", p - 1, f);
    let x: i32 = e.split_once('e').expect("exponent").1.parse().expect("digits");
    let s =
        if x < -4 || x >= p as i32 { c_exp(f, p - 1) } else { format!("{:.*}", (p as i32 - 1 - x).max(0) as usize, f) };
    // Strip trailing zeros of the fraction.
    if let Some((m, ex)) = s.split_once('e') {
        let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
        format!("{m}e{ex}")
    } else if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn group_thousands(digits: &str) -> String {
    let mut out = String::new();
    let n = digits.len();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn radix(mut v: i64, r: u32, upper: bool) -> String {
    if v == 0 {
        return "0".into();
    }
    let neg = v < 0;
    let mut digits = Vec::new();
    while v != 0 {
        let d = (v % r as i64).unsigned_abs() as u32;
        let c = std::char::from_digit(d, r).expect("digit");
        digits.push(if upper { c.to_ascii_uppercase() } else { c });
        v /= r as i64;
    }
    if neg {
        digits.push('-');
    }
    digits.iter().rev().collect()
}

struct Columns {
    out: String,
    /// Byte offset where the current line starts.
    line_start: usize,
    /// Column of the previous column stop.
    last_stop: usize,
    /// Fill points in the current segment: byte offset and fill char.
    fills: Vec<(usize, char)>,
}

impl Columns {
    fn column(&self) -> usize {
        self.out[self.line_start..].chars().count()
    }

    fn push(&mut self, s: &str) {
        self.out.push_str(s);
        if let Some(i) = s.rfind('\n') {
            self.line_start = self.out.len() - (s.len() - i - 1);
            self.last_stop = 0;
            self.fills.clear();
        }
    }

    fn stop(&mut self, target: usize) {
        let col = self.column();
        if col < target {
            let pad = target - col;
            if self.fills.is_empty() {
                self.out.push_str(&" ".repeat(pad));
            } else {
                let k = self.fills.len();
                let mut inserted = 0;
                for (i, &(pos, ch)) in self.fills.iter().enumerate() {
                    let share = pad / k + if i == k - 1 { pad % k } else { 0 };
                    let s: String = std::iter::repeat_n(ch, share).collect();
                    self.out.insert_str(pos + inserted, &s);
                    inserted += s.len();
                }
            }
        }
        self.last_stop = target.max(col);
        self.fills.clear();
    }
}

/// Formats `fmt` with `args`.
pub fn format(m: &mut Machine, fmt: &str, args: &[Cell]) -> Result<String, Exc> {
    let mut cols = Columns { out: String::new(), line_start: 0, last_stop: 0, fills: Vec::new() };
    let mut args = args.iter().copied();
    let mut chars = fmt.chars().peekable();
    let mut next_arg = |m: &mut Machine| -> Result<Cell, Exc> {
        match args.next() {
            Some(a) => Ok(a),
            None => Err(format_error(m, "not enough arguments")),
        }
    };
    while let Some(c) = chars.next() {
        if c != '~' {
            let mut s = String::new();
            s.push(c);
            cols.push(&s);
            continue;
        }
        // Numeric argument.
        let mut num: Option<i64> = None;
        match chars.peek() {
            Some('*') => {
                chars.next();
                let a = next_arg(m)?;
                num = Some(m.int_of(a)?);
            }
            Some('`') => {
                chars.next();
                let ch = chars.next().ok_or_else(|| format_error(m, "truncated format"))?;
                num = Some(ch as i64);
            }
            Some(d) if d.is_ascii_digit() => {
                let mut v: i64 = 0;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                    v = v.saturating_mul(10).saturating_add(d as i64);
                    chars.next();
                }
                num = Some(v);
            }
            _ => {}
        }
        let Some(d) = chars.next() else {
            return Err(format_error(m, "truncated format"));
        };
        match d {
            '~' => cols.push("~"),
            'w' | 'p' | 'q' => {
                let a = next_arg(m)?;
                let opts = if d == 'w' { WriteOpts::write() } else { WriteOpts::writeq() };
                let s = m.format_term(a, &opts);
                cols.push(&s);
            }
            'a' => {
                let a = next_arg(m)?;
                let s = m.atomic_text(a)?;
                cols.push(&s);
            }
            'd' | 'D' => {
                let a = next_arg(m)?;
                let v = match m.eval(a)? {
                    super::arith::Num::Int(i) => i,
                    super::arith::Num::Flt(_) => {
                        return Err(format_error(m, "~d expects an integer argument"));
                    }
                };
                let neg = v < 0;
                let mut digits = v.unsigned_abs().to_string();
                let k = num.unwrap_or(0).max(0) as usize;
                let mut frac = String::new();
                if k > 0 {
                    if digits.len() <= k {
                        digits = "0".repeat(k + 1 - digits.len()) + &digits;
                    }
                    frac = digits.split_off(digits.len() - k);
                }
                if d == 'D' {
                    digits = group_thousands(&digits);
                }
                let mut s = String::new();
                if neg {
                    s.push('-');
                }
                s.push_str(&digits);
                if k > 0 {
                    s.push('.');
                    s.push_str(&frac);
                }
                cols.push(&s);
            }
            'f' | 'e' | 'g' => {
                let a = next_arg(m)?;
                let v = m.eval(a)?;
                let f = match v {
                    super::arith::Num::Int(i) => i as f64,
                    super::arith::Num::Flt(f) => f,
                };
                let p = num.unwrap_or(6).max(0) as usize;
                let s = match d {
                    'f' => format!("{:.*}", p, f),
                    'e' => c_exp(f, p),
                    _ => c_general(f, p),
                };
                cols.push(&s);
            }
            'n' => {
                let k = num.unwrap_or(1).max(0) as usize;
                cols.push(&"\n".repeat(k));
            }
            'c' => {
                let a = next_arg(m)?;
                let code = m.int_of(a)?;
                let ch = u32::try_from(code)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| m.repr_error(atom::CHARACTER_CODE))?;
                let k = num.unwrap_or(1).max(0) as usize;
                let s: String = std::iter::repeat_n(ch, k).collect();
                cols.push(&s);
            }
            'r' | 'R' => {
                let a = next_arg(m)?;
                let v = m.int_of(a)?;
                let r = num.ok_or_else(|| format_error(m, "~r requires a radix argument"))?;
                if !(2..=36).contains(&r) {
                    return Err(format_error(m, "radix must be between 2 and 36"));
                }
                cols.push(&radix(v, r as u32, d == 'R'));
            }
            's' => {
                let a = next_arg(m)?;
                let s = m.text_of(a)?;
                cols.push(&s);
            }
            'i' => {
                next_arg(m)?;
            }
            't' => {
                let pos = cols.out.len();
                // `~`ct` and `~Nt` give the fill character (code N).
                let fill = num.and_then(|c| u32::try_from(c).ok()).and_then(char::from_u32).unwrap_or(' ');
                cols.fills.push((pos, fill));
            }
            '|' => {
                let target = match num {
                    Some(n) => n.max(0) as usize,
                    None => cols.column(),
                };
                cols.stop(target);
            }
            '+' => {
                let target = cols.last_stop + num.unwrap_or(8).max(0) as usize;
                cols.stop(target);
            }
            other => return Err(format_error(m, &format!("unknown directive ~{other}"))),
        }
    }
    if args.next().is_some() {
        return Err(format_error(m, "too many arguments"));
    }
    // A pending fill without a column stop does nothing.
    Ok(cols.out)
}
