//! The database: predicates keyed by name/arity, their compiled clauses
//! (templates copied on call) and first-argument indexes.

use super::atoms::Atom;
use super::term::{Cell, Tmpl};
use crate::syntax::Span;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

/// A small fast hasher for integer keys.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64)
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64)
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A compiled clause: the head and body goals as one template.
#[derive(Debug)]
pub struct ClauseCode {
    /// Template cells; `cells[0]` is the head, `cells[body]` the body goals.
    pub tmpl: Tmpl,
    /// Where the body goals start in `tmpl.cells`, and how many there are.
    pub body_start: usize,
    pub body_len: usize,
    /// First-argument key, `None` when the first argument is a variable.
    pub key: Option<Key>,
    /// Where the clause was read from.
    pub span: Option<(Rc<str>, Span)>,
}

/// The first-argument indexing key of a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Atom(Atom),
    Int(i64),
    Flt(u64),
    Fun(Atom, u32),
    Lst,
    Text,
}

impl Key {
    /// The key of a dereferenced cell; `None` for a variable.
    #[inline]
    pub fn of(c: Cell, heap: &[Cell]) -> Option<Key> {
        Some(match c {
            Cell::Ref(_) => return None,
            Cell::Atom(a) => Key::Atom(a),
            Cell::Int(i) => Key::Int(i),
            Cell::Flt(f) => Key::Flt(f.to_bits()),
            Cell::Str(p) => match heap[p] {
                Cell::Fun(f, n) => Key::Fun(f, n),
                _ => return None,
            },
            Cell::Lst(_) => Key::Lst,
            Cell::Text(_) => Key::Text,
            Cell::Fun(f, n) => Key::Fun(f, n),
        })
    }
}

/// Clause numbers that may match a call.
pub type Candidates = Rc<[u32]>;

/// The first-argument index of a predicate.
#[derive(Debug)]
pub struct Index {
    by_key: FastMap<Key, Candidates>,
    /// Clauses whose first argument is a variable (match any key not listed).
    var_only: Candidates,
    all: Candidates,
}

impl Index {
    fn build(clauses: &[Rc<ClauseCode>]) -> Index {
        let all: Candidates = (0..clauses.len() as u32).collect();
        let mut by_key = FastMap::default();
        for k in clauses.iter().filter_map(|c| c.key) {
            if by_key.contains_key(&k) {
                continue;
            }
            let list: Candidates = clauses
                .iter()
                .enumerate()
                .filter(|(_, c)| c.key.is_none() || c.key == Some(k))
                .map(|(i, _)| i as u32)
                .collect();
            by_key.insert(k, list);
        }
        let var_only = clauses
            .iter()
            .enumerate()
            .filter(|(_, c)| c.key.is_none())
            .map(|(i, _)| i as u32)
            .collect();
        Index {
            by_key,
            var_only,
            all,
        }
    }

    /// The clauses to try for a first argument with this key.
    #[inline]
    pub fn select(&self, key: Option<Key>) -> &Candidates {
        match key {
            None => &self.all,
            Some(k) => self.by_key.get(&k).unwrap_or(&self.var_only),
        }
    }
}

/// A user predicate.
#[derive(Debug)]
pub struct Pred {
    pub name: Atom,
    pub arity: u32,
    pub clauses: Rc<Vec<Rc<ClauseCode>>>,
    pub dynamic: bool,
    /// Defined by the prelude (library) rather than the user's program.
    pub library: bool,
    index: RefCell<Option<Rc<Index>>>,
}

impl Pred {
    pub fn new(name: Atom, arity: u32) -> Pred {
        Pred {
            name,
            arity,
            clauses: Rc::new(Vec::new()),
            dynamic: false,
            library: false,
            index: RefCell::new(None),
        }
    }

    /// The index, built on first use after a change.
    pub fn index(&self) -> Rc<Index> {
        if let Some(i) = &*self.index.borrow() {
            return i.clone();
        }
        let i = Rc::new(Index::build(&self.clauses));
        *self.index.borrow_mut() = Some(i.clone());
        i
    }

    pub fn add(&mut self, c: ClauseCode, front: bool) {
        let v = Rc::make_mut(&mut self.clauses);
        if front {
            v.insert(0, Rc::new(c));
        } else {
            v.push(Rc::new(c));
        }
        *self.index.borrow_mut() = None;
    }

    /// Removes the clause that is `c` (by identity).
    pub fn remove(&mut self, c: &Rc<ClauseCode>) -> bool {
        let Some(i) = self.clauses.iter().position(|x| Rc::ptr_eq(x, c)) else {
            return false;
        };
        Rc::make_mut(&mut self.clauses).remove(i);
        *self.index.borrow_mut() = None;
        true
    }

    pub fn clear(&mut self) {
        self.clauses = Rc::new(Vec::new());
        *self.index.borrow_mut() = None;
    }
}

/// What a goal's name/arity refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A control construct the solver handles itself.
    Control(super::machine::Control),
    /// A deterministic builtin written in Rust.
    Builtin(usize),
    /// A user (or library) predicate, by number.
    User(usize),
}

/// All predicates and builtins.
#[derive(Debug, Default)]
pub struct Db {
    pub entries: FastMap<(Atom, u32), Entry>,
    pub preds: Vec<Pred>,
    /// Flags: `(name/arity)` declared discontiguous.
    pub discontiguous: Vec<(Atom, u32)>,
}

impl Db {
    /// The user predicate for name/arity, created if new. `None` when the
    /// name is a builtin or control construct.
    pub fn pred_mut(&mut self, name: Atom, arity: u32) -> Option<&mut Pred> {
        let n = self.preds.len();
        match *self.entries.entry((name, arity)).or_insert(Entry::User(n)) {
            Entry::User(i) => {
                if i == n {
                    self.preds.push(Pred::new(name, arity));
                }
                Some(&mut self.preds[i])
            }
            _ => None,
        }
    }

    pub fn pred(&self, name: Atom, arity: u32) -> Option<&Pred> {
        match self.entries.get(&(name, arity)) {
            Some(Entry::User(i)) => Some(&self.preds[*i]),
            _ => None,
        }
    }
}
