//! AST → heap terms, and heap clause terms → compiled clauses
//! (`ClauseCode`: a template copied on call, with its indexing key).

use super::atoms::{Atom, Atoms, atom};
use super::db::{ClauseCode, Key};
use super::term::{Cell, Store};
use crate::syntax::{Ast, Span};
use std::rc::Rc;

/// Puts a parsed term on the heap. `vars` maps variable names to their
/// cells (shared across calls for one clause or query).
pub fn ast_to_heap(ast: &Ast, atoms: &mut Atoms, store: &mut Store, vars: &mut Vec<(String, Cell)>) -> Cell {
    let root = store.heap.len();
    store.heap.push(Cell::Atom(atom::NIL));
    let mut work: Vec<(&Ast, usize)> = vec![(ast, root)];
    while let Some((t, dst)) = work.pop() {
        let v = match t {
            Ast::Var(name, _) => {
                if name == "_" {
                    Cell::Ref(dst)
                } else if let Some((_, c)) = vars.iter().find(|(n, _)| n == name) {
                    *c
                } else {
                    vars.push((name.clone(), Cell::Ref(dst)));
                    Cell::Ref(dst)
                }
            }
            Ast::Atom(name, _) => Cell::Atom(atoms.intern(name)),
            Ast::Int(i, _) => Cell::Int(*i),
            Ast::Float(f, _) => Cell::Flt(*f),
            Ast::Str(s, _) => store.new_text(s),
            Ast::Compound(name, args, _) => {
                let q = store.heap.len();
                if name == "[|]" && args.len() == 2 {
                    store.heap.push(Cell::Atom(atom::NIL));
                    store.heap.push(Cell::Atom(atom::NIL));
                    work.push((&args[1], q + 1));
                    work.push((&args[0], q));
                    Cell::Lst(q)
                } else {
                    let f = atoms.intern(name);
                    store.heap.push(Cell::Fun(f, args.len() as u32));
                    store.heap.resize(q + 1 + args.len(), Cell::Atom(atom::NIL));
                    for (i, a) in args.iter().enumerate().rev() {
                        work.push((a, q + 1 + i));
                    }
                    Cell::Str(q)
                }
            }
        };
        store.heap[dst] = v;
    }
    store.heap[root]
}

/// Why a term cannot be a clause.
#[derive(Debug, Clone, PartialEq)]
pub enum ClauseError {
    /// The head is a variable.
    VarHead,
    /// The head (or a body goal) is not callable: a number, string...
    NotCallable(Cell),
    /// The clause is a cyclic term (`X = f(X)`, then `assertz(X)`).
    Cyclic,
}

/// Whether `name/arity` is a control construct whose arguments are goals.
fn control_args(name: Atom, arity: usize) -> bool {
    matches!(
        (name, arity),
        (atom::COMMA, 2) | (atom::SEMI, 2) | (atom::ARROW, 2) | (atom::SOFT, 2) | (atom::NOT, 1) | (atom::BAR, 2)
    )
}

/// Rewrites variables standing as goals inside control constructs into
/// `call(X)`, so that a cut they are bound to stays local.
fn wrap_goal(store: &mut Store, g: Cell, depth: usize) -> Result<Cell, ClauseError> {
    let g = store.deref(g);
    match g {
        Cell::Ref(_) => Ok(store.new_struct(atom::CALL, &[g])),
        Cell::Atom(_) => Ok(g),
        Cell::Str(p) => {
            let Cell::Fun(f, n) = store.heap[p] else { unreachable!("Str points at Fun") };
            if depth < 200 && control_args(f, n as usize) {
                let mut args = Vec::with_capacity(n as usize);
                for i in 0..n as usize {
                    args.push(wrap_goal(store, store.heap[p + 1 + i], depth + 1)?);
                }
                Ok(store.new_struct(f, &args))
            } else {
                Ok(g)
            }
        }
        Cell::Lst(_) => Ok(g),
        other => Err(ClauseError::NotCallable(other)),
    }
}

/// Splits a clause term into head and body goals.
pub fn clause_parts(store: &mut Store, term: Cell) -> Result<(Cell, Vec<Cell>), ClauseError> {
    let term = store.deref(term);
    let (head, body) = match term {
        Cell::Str(p) if store.heap[p] == Cell::Fun(atom::NECK, 2) => {
            (store.deref(store.heap[p + 1]), Some(store.heap[p + 2]))
        }
        _ => (term, None),
    };
    match head {
        Cell::Ref(_) => return Err(ClauseError::VarHead),
        Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_) => {}
        other => return Err(ClauseError::NotCallable(other)),
    }
    let mut goals = Vec::new();
    if let Some(b) = body {
        let mut stack = vec![b];
        while let Some(g) = stack.pop() {
            let g = store.deref(g);
            if let Cell::Str(p) = g
                && store.heap[p] == Cell::Fun(atom::COMMA, 2)
            {
                stack.push(store.heap[p + 2]);
                stack.push(store.heap[p + 1]);
                continue;
            }
            if g == Cell::Atom(atom::TRUE) {
                continue;
            }
            goals.push(wrap_goal(store, g, 0)?);
        }
    }
    Ok((head, goals))
}

/// Compiles a clause term on the heap into a template. The heap is left as
/// it was.
pub fn compile_clause(store: &mut Store, term: Cell, span: Option<(Rc<str>, Span)>) -> Result<ClauseCode, ClauseError> {
    let mark = store.heap.len();
    let result = (|| {
        let (head, goals) = clause_parts(store, term)?;
        let mut parts = Vec::with_capacity(goals.len() + 1);
        parts.push(head);
        parts.extend_from_slice(&goals);
        let whole = store.new_struct(atom::NECK, &parts);
        let tmpl = store.copy_out(whole, &mut Vec::new()).map_err(|_| ClauseError::Cyclic)?;
        // copy_out puts the root at 0 and the `:-` header at 1.
        let key = match tmpl.cells[2] {
            Cell::Str(p) => Key::of(tmpl.cells[p + 1], &tmpl.cells),
            _ => None,
        };
        let neck = ClauseCode::neck_cut_mask(&tmpl.cells, goals.len());
        Ok(ClauseCode {
            tmpl,
            body_start: 3,
            body_len: goals.len(),
            key,
            span,
            vm: Default::default(),
            hot: Default::default(),
            neck,
        })
    })();
    store.heap.truncate(mark);
    result
}
