//! Arithmetic: evaluation of expressions with an explicit stack, 64-bit
//! integers (overflow is an error, never a wrap) and floats.

use super::atoms::{Atom, atom};
use super::machine::{Exc, Machine};
use super::term::Cell;
use rand::Rng;

/// A number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Int(i64),
    Flt(f64),
}

impl Num {
    pub fn to_cell(self) -> Cell {
        match self {
            Num::Int(i) => Cell::Int(i),
            Num::Flt(f) => Cell::Flt(f),
        }
    }
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Flt(f) => f,
        }
    }
}

enum Task {
    Eval(Cell),
    Apply(Atom, u32),
}

/// Compares two numbers: `Less`, `Equal`, `Greater`.
pub fn compare(a: Num, b: Num) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        _ => a.as_f64().partial_cmp(&b.as_f64()).unwrap_or(Ordering::Equal),
    }
}

impl Machine {
    /// Evaluates an arithmetic expression.
    pub fn eval(&mut self, e: Cell) -> Result<Num, Exc> {
        // Small expressions are evaluated recursively, without allocating;
        // deep ones with explicit stacks.
        if let Some(r) = self.eval_small(e, 0) {
            return r;
        }
        let mut tasks = vec![Task::Eval(e)];
        let mut vals: Vec<Num> = Vec::new();
        while let Some(t) = tasks.pop() {
            match t {
                Task::Eval(c) => match self.store.deref(c) {
                    Cell::Int(i) => vals.push(Num::Int(i)),
                    Cell::Flt(f) => vals.push(Num::Flt(f)),
                    Cell::Ref(_) => return Err(self.inst_error()),
                    Cell::Atom(a) => vals.push(self.constant(a)?),
                    Cell::Str(p) => {
                        let Cell::Fun(f, n) = self.store.heap[p] else { unreachable!() };
                        if n > 2 {
                            return Err(self.not_evaluable(f, n));
                        }
                        tasks.push(Task::Apply(f, n));
                        for i in (0..n as usize).rev() {
                            tasks.push(Task::Eval(self.store.heap[p + 1 + i]));
                        }
                    }
                    Cell::Lst(p) => {
                        // "[X]" evaluates X.
                        let tail = self.store.deref(self.store.heap[p + 1]);
                        if tail != Cell::Atom(atom::NIL) {
                            return Err(self.type_error(atom::EVALUABLE, Cell::Lst(p)));
                        }
                        match self.store.deref(self.store.heap[p]) {
                            Cell::Atom(a) if self.atoms.name(a).chars().count() == 1 => {
                                let c = self.atoms.name(a).chars().next().expect("one char");
                                vals.push(Num::Int(c as i64));
                            }
                            _ => tasks.push(Task::Eval(self.store.heap[p])),
                        }
                    }
                    Cell::Text(t) => {
                        let s = self.store.text(t);
                        let mut cs = s.chars();
                        match (cs.next(), cs.next()) {
                            (Some(c), None) => vals.push(Num::Int(c as i64)),
                            _ => return Err(self.type_error(atom::EVALUABLE, Cell::Text(t))),
                        }
                    }
                    Cell::Fun(..) => unreachable!("Fun is not a value"),
                },
                Task::Apply(f, n) => {
                    let v = if n == 1 {
                        let x = vals.pop().expect("operand");
                        self.unary(f, x)?
                    } else {
                        let y = vals.pop().expect("operand");
                        let x = vals.pop().expect("operand");
                        self.binary(f, x, y)?
                    };
                    vals.push(v);
                }
            }
        }
        Ok(vals.pop().expect("a value"))
    }

    /// Evaluates an expression at most 32 levels deep by recursion; `None`
    /// when it is deeper (or not a plain expression).
    fn eval_small(&mut self, e: Cell, depth: u32) -> Option<Result<Num, Exc>> {
        if depth > 32 {
            return None;
        }
        match self.store.deref(e) {
            Cell::Int(i) => Some(Ok(Num::Int(i))),
            Cell::Flt(f) => Some(Ok(Num::Flt(f))),
            Cell::Str(p) => match self.store.heap[p] {
                Cell::Fun(f, 2) => {
                    let x = match self.eval_small(self.store.heap[p + 1], depth + 1)? {
                        Ok(x) => x,
                        Err(err) => return Some(Err(err)),
                    };
                    let y = match self.eval_small(self.store.heap[p + 2], depth + 1)? {
                        Ok(y) => y,
                        Err(err) => return Some(Err(err)),
                    };
                    if let (Num::Int(a), Num::Int(b)) = (x, y) {
                        let quick = match f {
                            atom::PLUS => a.checked_add(b),
                            atom::MINUS => a.checked_sub(b),
                            atom::STAR => a.checked_mul(b),
                            _ => None,
                        };
                        if let Some(v) = quick {
                            return Some(Ok(Num::Int(v)));
                        }
                    }
                    Some(self.binary(f, x, y))
                }
                Cell::Fun(f, 1) => {
                    let x = match self.eval_small(self.store.heap[p + 1], depth + 1)? {
                        Ok(x) => x,
                        Err(err) => return Some(Err(err)),
                    };
                    Some(self.unary(f, x))
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn not_evaluable(&mut self, f: Atom, n: u32) -> Exc {
        let pi = self.store.new_struct(atom::SLASH, &[Cell::Atom(f), Cell::Int(n as i64)]);
        self.type_error(atom::EVALUABLE, pi)
    }

    fn constant(&mut self, a: Atom) -> Result<Num, Exc> {
        Ok(match a {
            atom::PI => Num::Flt(std::f64::consts::PI),
            atom::E => Num::Flt(std::f64::consts::E),
            atom::INF | atom::INFINITE => Num::Flt(f64::INFINITY),
            atom::NAN => Num::Flt(f64::NAN),
            atom::EPSILON => Num::Flt(f64::EPSILON),
            atom::MAX_TAGGED_INTEGER => Num::Int((1 << 60) - 1),
            atom::MAX_INTEGER => Num::Int(i64::MAX),
            atom::MIN_INTEGER => Num::Int(i64::MIN),
            atom::RANDOM => Num::Flt(self.rng.r#gen::<f64>()),
            atom::RANDOM_FLOAT => Num::Flt(self.rng.r#gen::<f64>()),
            atom::CPUTIME => Num::Flt(crate::engine::builtins::cpu_seconds()),
            atom::REALTIME => Num::Int(
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64),
            ),
            atom::NIL => return Err(self.type_error(atom::EVALUABLE, Cell::Atom(a))),
            _ => return Err(self.not_evaluable(a, 0)),
        })
    }

    fn overflow(&mut self) -> Exc {
        self.eval_error(atom::INT_OVERFLOW)
    }

    fn need_int(&mut self, x: Num) -> Result<i64, Exc> {
        match x {
            Num::Int(i) => Ok(i),
            Num::Flt(f) => Err(self.type_error(atom::INTEGER, Cell::Flt(f))),
        }
    }

    fn check_float(&mut self, f: f64) -> Result<Num, Exc> {
        if f.is_nan() {
            Err(self.eval_error(atom::UNDEFINED))
        } else if f.is_infinite() {
            Err(self.eval_error(atom::FLOAT_OVERFLOW))
        } else {
            Ok(Num::Flt(f))
        }
    }

    fn float_to_int(&mut self, f: f64) -> Result<Num, Exc> {
        if f.is_nan() || f.is_infinite() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
            if f.is_nan() {
                return Err(self.eval_error(atom::UNDEFINED));
            }
            return Err(self.overflow());
        }
        Ok(Num::Int(f as i64))
    }

    fn unary(&mut self, f: Atom, x: Num) -> Result<Num, Exc> {
        use Num::*;
        Ok(match (f, x) {
            (atom::MINUS, Int(i)) => Int(i.checked_neg().ok_or_else(|| self.overflow())?),
            (atom::MINUS, Flt(v)) => Flt(-v),
            (atom::PLUS, v) => v,
            (atom::ABS, Int(i)) => Int(i.checked_abs().ok_or_else(|| self.overflow())?),
            (atom::ABS, Flt(v)) => Flt(v.abs()),
            (atom::SIGN, Int(i)) => Int(i.signum()),
            (atom::SIGN, Flt(v)) => Flt(if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else {
                0.0
            }),
            (atom::MIN | atom::MAX, _) => return Err(self.not_evaluable(f, 1)),
            (atom::SQRT, v) => {
                let v = v.as_f64();
                if v < 0.0 {
                    return Err(self.eval_error(atom::UNDEFINED));
                }
                Flt(v.sqrt())
            }
            (atom::SIN, v) => Flt(v.as_f64().sin()),
            (atom::COS, v) => Flt(v.as_f64().cos()),
            (atom::TAN, v) => Flt(v.as_f64().tan()),
            (atom::ASIN, v) => self.check_float(v.as_f64().asin())?,
            (atom::ACOS, v) => self.check_float(v.as_f64().acos())?,
            (atom::ATAN, v) => Flt(v.as_f64().atan()),
            (atom::EXP, v) => self.check_float(v.as_f64().exp())?,
            (atom::LOG, v) => {
                let v = v.as_f64();
                if v <= 0.0 {
                    if v == 0.0 {
                        return Err(self.eval_error(atom::UNDEFINED));
                    }
                    return Err(self.eval_error(atom::UNDEFINED));
                }
                Flt(v.ln())
            }
            (atom::LOG2, v) => {
                let v = v.as_f64();
                if v <= 0.0 {
                    return Err(self.eval_error(atom::UNDEFINED));
                }
                Flt(v.log2())
            }
            (atom::FLOAT, v) => Flt(v.as_f64()),
            (atom::INTEGER, Int(i)) => Int(i),
            (atom::INTEGER, Flt(v)) => self.float_to_int(v.round())?,
            (atom::TRUNCATE | atom::ROUND | atom::CEILING | atom::FLOOR, Int(i)) => Int(i),
            (atom::TRUNCATE, Flt(v)) => self.float_to_int(v.trunc())?,
            (atom::ROUND, Flt(v)) => self.float_to_int(v.round())?,
            (atom::CEILING, Flt(v)) => self.float_to_int(v.ceil())?,
            (atom::FLOOR, Flt(v)) => self.float_to_int(v.floor())?,
            (atom::FLOAT_INTEGER_PART, v) => Flt(v.as_f64().trunc()),
            (atom::FLOAT_FRACTIONAL_PART, v) => {
                let v = v.as_f64();
                Flt(v - v.trunc())
            }
            (atom::BITNOT, v) => Int(!self.need_int(v)?),
            (atom::MSB, v) => {
                let i = self.need_int(v)?;
                if i <= 0 {
                    return Err(self.type_error(atom::NOT_LESS_THAN_ZERO, Cell::Int(i)));
                }
                Int(63 - i.leading_zeros() as i64)
            }
            (atom::RANDOM, v) => {
                let n = self.need_int(v)?;
                if n <= 0 {
                    return Err(self.domain_error(atom::NOT_LESS_THAN_ZERO, Cell::Int(n)));
                }
                Int(self.rng.gen_range(0..n))
            }
            (atom::RANDOM_FLOAT, _) => Flt(self.rng.r#gen::<f64>()),
            _ => return Err(self.not_evaluable(f, 1)),
        })
    }

    fn binary(&mut self, f: Atom, x: Num, y: Num) -> Result<Num, Exc> {
        use Num::*;
        Ok(match f {
            atom::PLUS => match (x, y) {
                (Int(a), Int(b)) => Int(a.checked_add(b).ok_or_else(|| self.overflow())?),
                _ => self.check_float(x.as_f64() + y.as_f64())?,
            },
            atom::MINUS => match (x, y) {
                (Int(a), Int(b)) => Int(a.checked_sub(b).ok_or_else(|| self.overflow())?),
                _ => self.check_float(x.as_f64() - y.as_f64())?,
            },
            atom::STAR => match (x, y) {
                (Int(a), Int(b)) => Int(a.checked_mul(b).ok_or_else(|| self.overflow())?),
                _ => self.check_float(x.as_f64() * y.as_f64())?,
            },
            atom::SLASH => match (x, y) {
                (Int(_), Int(0)) => return Err(self.eval_error(atom::ZERO_DIVISOR)),
                (Int(a), Int(b)) => {
                    if a % b == 0 {
                        Int(a.checked_div(b).ok_or_else(|| self.overflow())?)
                    } else {
                        Flt(a as f64 / b as f64)
                    }
                }
                _ => {
                    if y.as_f64() == 0.0 {
                        return Err(self.eval_error(atom::ZERO_DIVISOR));
                    }
                    self.check_float(x.as_f64() / y.as_f64())?
                }
            },
            atom::INTDIV | atom::MOD | atom::REM | atom::DIV => {
                let a = self.need_int(x)?;
                let b = self.need_int(y)?;
                if b == 0 {
                    return Err(self.eval_error(atom::ZERO_DIVISOR));
                }
                Int(match f {
                    atom::INTDIV => a.checked_div(b).ok_or_else(|| self.overflow())?,
                    atom::REM => a.checked_rem(b).ok_or_else(|| self.overflow())?,
                    atom::MOD => {
                        let m = a.checked_rem(b).ok_or_else(|| self.overflow())?;
                        if m != 0 && ((m < 0) != (b < 0)) { m + b } else { m }
                    }
                    _ => a.checked_div_euclid(b).map_or_else(
                        || Err(self.overflow()),
                        |_| {
                            let q = a / b;
                            Ok(if (a % b != 0) && ((a < 0) != (b < 0)) { q - 1 } else { q })
                        },
                    )?,
                })
            }
            atom::MIN => match compare(x, y) {
                std::cmp::Ordering::Greater => y,
                _ => x,
            },
            atom::MAX => match compare(x, y) {
                std::cmp::Ordering::Less => y,
                _ => x,
            },
            atom::GCD => {
                let (mut a, mut b) = (self.need_int(x)?.unsigned_abs(), self.need_int(y)?.unsigned_abs());
                while b != 0 {
                    (a, b) = (b, a % b);
                }
                Int(i64::try_from(a).map_err(|_| self.overflow())?)
            }
            atom::POW => match (x, y) {
                (Int(a), Int(b)) if b < 0 && a != 1 && a != -1 && a != 0 => Flt((a as f64).powf(b as f64)),
                (Int(a), Int(b)) => self.int_pow(a, b)?,
                _ => self.check_float(x.as_f64().powf(y.as_f64()))?,
            },
            atom::CARET => match (x, y) {
                (Int(a), Int(b)) => self.int_pow(a, b)?,
                _ => self.check_float(x.as_f64().powf(y.as_f64()))?,
            },
            atom::SHR => {
                let (a, b) = (self.need_int(x)?, self.need_int(y)?);
                Int(if b >= 64 {
                    if a < 0 { -1 } else { 0 }
                } else if b < 0 {
                    self.shl(a, -b)?
                } else {
                    a >> b
                })
            }
            atom::SHL => {
                let (a, b) = (self.need_int(x)?, self.need_int(y)?);
                Int(if b < 0 { a >> (-b).min(63) } else { self.shl(a, b)? })
            }
            atom::AND => Int(self.need_int(x)? & self.need_int(y)?),
            atom::OR => Int(self.need_int(x)? | self.need_int(y)?),
            atom::XOR => Int(self.need_int(x)? ^ self.need_int(y)?),
            atom::ATAN2 | atom::ATAN => {
                let (a, b) = (x.as_f64(), y.as_f64());
                if a == 0.0 && b == 0.0 && f == atom::ATAN2 {
                    return Err(self.eval_error(atom::UNDEFINED));
                }
                Flt(a.atan2(b))
            }
            atom::COPYSIGN => Flt(x.as_f64().copysign(y.as_f64())),
            atom::LOG => {
                let (b, v) = (x.as_f64(), y.as_f64());
                if b <= 0.0 || v <= 0.0 {
                    return Err(self.eval_error(atom::UNDEFINED));
                }
                Flt(v.ln() / b.ln())
            }
            atom::INTEGER => return Err(self.not_evaluable(f, 2)),
            _ => return Err(self.not_evaluable(f, 2)),
        })
    }

    fn shl(&mut self, a: i64, b: i64) -> Result<i64, Exc> {
        if a == 0 {
            return Ok(0);
        }
        if b >= 63 {
            return Err(self.overflow());
        }
        let r = a << b;
        if r >> b != a {
            return Err(self.overflow());
        }
        Ok(r)
    }

    fn int_pow(&mut self, a: i64, b: i64) -> Result<Num, Exc> {
        if b < 0 {
            return match a {
                1 => Ok(Num::Int(1)),
                -1 => Ok(Num::Int(if b % 2 == 0 { 1 } else { -1 })),
                0 => Err(self.eval_error(atom::ZERO_DIVISOR)),
                _ => {
                    let c = Cell::Int(a);
                    Err(self.type_error(atom::FLOAT, c))
                }
            };
        }
        let e = u32::try_from(b).map_err(|_| self.overflow())?;
        Ok(Num::Int(a.checked_pow(e).ok_or_else(|| self.overflow())?))
    }
}
