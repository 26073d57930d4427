//! The register machine's run loop: instructions, calls, backtracking,
//! exceptions, `findall/3` and `catch/3`, and the meta-call.

use super::compile::{compile, compile_with};
use super::{
    AOp, ArgDst, ArgFast, Arith, Arith2, Arith2Op, ArithOp, Code, Cont, Env, Expr, FIRST, INDEX, Instr, IsChain,
    META_CACHE_MAX, NO_PRED, Opd, PERM, Shape, TestFast, TestOp, Tm, UArg, VOID, VmSave,
};
use crate::engine::atoms::{Atom, atom};
use crate::engine::db::{ClauseCode, Entry, Key, Switch};
use crate::engine::machine::{Alt, Choice, Control, Exc, Machine, Res};
use crate::engine::term::Cell;
use std::rc::Rc;

/// What to do next: continue at some code, fail (`Ok(None)`), or raise.
type Go = Result<Option<Cont>, Exc>;

impl Machine {
    /// Resets the register machine's stacks to run `goal` (after
    /// `Machine::start` reset what both solvers share).
    pub(crate) fn vm_start(&mut self, goal: Cell) {
        let vm = &mut self.vm;
        vm.envs.clear();
        vm.ys.clear();
        vm.saved.clear();
        let done = Cont::start(&vm.succeed);
        vm.envs.push(Env { ce: 0, cp: done, b0: 0, ys: 0, n: 0, catch: false, ret: None });
        vm.e = 0;
        vm.ybase = 0;
        vm.b0 = 0;
        vm.cp = done;
        vm.cont = done;
        self.vm_goal = Some(goal);
        // No continuation is left from an earlier query: every code that
        // only `codes` holds goes, if a clause with code has been dropped
        // since the last sweep (else none is such).
        let released = crate::engine::db::CODES_RELEASED.load(std::sync::atomic::Ordering::Relaxed);
        if released != self.vm.released || self.vm.codes.len() > self.vm.sweep_at {
            self.sweep_codes(true);
        }
    }

    /// Looks for the next answer (see `Machine::solve`).
    pub(crate) fn vm_solve(&mut self, retry: bool) -> Res {
        let mut go: Go = match self.vm_goal.take() {
            Some(g) if !retry => self.vm_meta(g, &[]),
            _ => Ok(None),
        };
        'outer: loop {
            let cont = match go {
                Ok(Some(c)) => c,
                Ok(None) => match self.vm_backtrack() {
                    Ok(Some(c)) => c,
                    Ok(None) => return Ok(false),
                    Err(e) => {
                        go = Err(e);
                        continue;
                    }
                },
                Err(e) => match self.vm_handle(e)? {
                    Some(c) => c,
                    None => {
                        go = Ok(None);
                        continue;
                    }
                },
            };
            // The next instruction. It stays inside its code: every code
            // ends with an instruction that does not fall through, jumps
            // are forward inside it, and the code is kept alive while a
            // continuation points into it (see `Cont`).
            let mut ip = cont;
            // Read/write mode of `Unify*`: the next argument cell.
            let mut s = 0usize;
            let mut wr = false;
            // Calls predicate `i` (`f/n`): in the run loop when it can,
            // else through `vm_call`. (A macro, not a function: it jumps.)
            macro_rules! call {
                ($i:expr, $f:expr, $n:expr) => {{
                    if let Some(c) = self.fast_call($i, $n) {
                        ip = c;
                        continue;
                    }
                    match self.vm_call($i, $f, $n, ip) {
                        Ok(Some(c)) => ip = c,
                        other => {
                            go = other;
                            continue 'outer;
                        }
                    }
                }};
            }
            // Backtracking to the newest choice point.
            macro_rules! backtrack {
                () => {{
                    go = Ok(None);
                    continue 'outer;
                }};
            }
            // A failure: to the else branch `fail` instructions on from
            // `at` (a test's), or backtracking when `fail` is 0.
            macro_rules! fail {
                ($fail:expr, $at:expr) => {{
                    if $fail == 0 {
                        backtrack!();
                    }
                    // SAFETY: the compiler made `fail` a forward jump
                    // inside this code.
                    ip = unsafe { $at.add($fail as usize) };
                }};
            }
            // A builtin's fast path: on success skip the general call (to
            // `done`), on failure backtrack, else fall through to the call.
            macro_rules! fast {
                ($result:expr, $done:expr, $fail:expr, $at:expr) => {
                    match $result {
                        Some(true) => {
                            self.steps += 1;
                            // SAFETY: the compiler made `done` a forward
                            // jump inside this code.
                            ip = unsafe { $at.add($done as usize) };
                        }
                        Some(false) => fail!($fail, $at),
                        None => {}
                    }
                };
            }
            loop {
                let at = ip;
                // SAFETY: see `ip`. The code outlives this instruction: it
                // is only freed by `sweep_codes`, at a call.
                let ins = unsafe { &*at.0.as_ptr() };
                ip = unsafe { at.add(1) };
                match *ins {
                    Instr::GetVarX(x, a) => self.vm.x[x as usize] = self.vm.x[a as usize],
                    Instr::GetVarY(y, a) => {
                        let v = self.vm.x[a as usize];
                        *self.y(y) = v;
                    }
                    Instr::GetVarYs(ref run) => {
                        for &(y, a) in run.iter() {
                            let v = self.vm.x[a as usize];
                            *self.y(y) = v;
                        }
                    }
                    Instr::GetValX(x, a) => {
                        let (u, v) = (self.store.deref(self.vm.x[x as usize]), self.store.deref(self.vm.x[a as usize]));
                        // The commonest case at once: an unbound argument
                        // (an output) takes a value.
                        if let (false, Cell::Ref(r)) = (matches!(u, Cell::Ref(_)), v) {
                            self.store.bind(r, u);
                        } else if !self.store.unify(u, v) {
                            backtrack!();
                        }
                    }
                    Instr::GetValY(y, a) => {
                        let (u, v) = (*self.y(y), self.vm.x[a as usize]);
                        if !self.store.unify(u, v) {
                            backtrack!();
                        }
                    }
                    Instr::GetConst(c, a) => {
                        if !self.store.unify_const(self.vm.x[a as usize], c) {
                            backtrack!();
                        }
                    }
                    Instr::GetList(a) => match self.store.deref(self.vm.x[a as usize]) {
                        Cell::Lst(p) => {
                            s = p;
                            wr = false;
                        }
                        Cell::Ref(r) => {
                            let (t, first) = self.new_compound(None);
                            self.store.bind(r, t);
                            (s, wr) = (first, true);
                        }
                        _ => backtrack!(),
                    },
                    Instr::GetStruct(f, n, a) => match self.store.deref(self.vm.x[a as usize]) {
                        Cell::Str(p) if self.store.at(p) == Cell::Fun(f, n) => {
                            s = p + 1;
                            wr = false;
                        }
                        Cell::Ref(r) => {
                            let (t, first) = self.new_compound(Some((f, n)));
                            self.store.bind(r, t);
                            (s, wr) = (first, true);
                        }
                        _ => backtrack!(),
                    },
                    Instr::GetList2(a, u, v) => match self.store.deref(self.vm.x[a as usize]) {
                        Cell::Lst(p) => {
                            if !self.uarg_read(u, p) || !self.uarg_read(v, p + 1) {
                                backtrack!();
                            }
                        }
                        Cell::Ref(r) => {
                            let t = self.new_list2(u, v);
                            self.store.bind(r, t);
                        }
                        _ => backtrack!(),
                    },
                    Instr::GetListVarVar(a, x, y) => match self.store.deref(self.vm.x[a as usize]) {
                        Cell::Lst(p) => {
                            // Both read before either is stored: a store
                            // could alias the heap for all the compiler
                            // knows.
                            let (h, t) = (self.store.at(p), self.store.at(p + 1));
                            self.vm.x[x as usize] = h;
                            self.vm.x[y as usize] = t;
                        }
                        Cell::Ref(r) => {
                            let h = self.store.heap.len();
                            self.store.heap.extend_from_slice(&[Cell::Ref(h), Cell::Ref(h + 1)]);
                            self.vm.x[x as usize] = Cell::Ref(h);
                            self.vm.x[y as usize] = Cell::Ref(h + 1);
                            self.store.bind(r, Cell::Lst(h));
                        }
                        _ => backtrack!(),
                    },
                    Instr::GetListValVar(a, x, y) => match self.store.deref(self.vm.x[a as usize]) {
                        Cell::Lst(p) => {
                            if !self.store.unify(self.vm.x[x as usize], self.store.at(p)) {
                                backtrack!();
                            }
                            self.vm.x[y as usize] = self.store.at(p + 1);
                        }
                        Cell::Ref(r) => {
                            let h = self.store.heap.len();
                            let v = self.vm.x[x as usize];
                            self.store.heap.extend_from_slice(&[v, Cell::Ref(h + 1)]);
                            self.vm.x[y as usize] = Cell::Ref(h + 1);
                            self.store.bind(r, Cell::Lst(h));
                        }
                        _ => backtrack!(),
                    },
                    Instr::GetListValVoid(a, x) => match self.store.deref(self.vm.x[a as usize]) {
                        Cell::Lst(p) => {
                            if !self.store.unify(self.vm.x[x as usize], self.store.at(p)) {
                                backtrack!();
                            }
                        }
                        Cell::Ref(r) => {
                            let h = self.store.heap.len();
                            let v = self.vm.x[x as usize];
                            self.store.heap.extend_from_slice(&[v, Cell::Ref(h + 1)]);
                            self.store.bind(r, Cell::Lst(h));
                        }
                        _ => backtrack!(),
                    },
                    Instr::GetListVoidVar(a, y) => match self.store.deref(self.vm.x[a as usize]) {
                        Cell::Lst(p) => self.vm.x[y as usize] = self.store.at(p + 1),
                        Cell::Ref(r) => {
                            let h = self.store.heap.len();
                            self.store.heap.extend_from_slice(&[Cell::Ref(h), Cell::Ref(h + 1)]);
                            self.vm.x[y as usize] = Cell::Ref(h + 1);
                            self.store.bind(r, Cell::Lst(h));
                        }
                        _ => backtrack!(),
                    },
                    Instr::GetListVarVarXY(a, c, d) => match self.store.deref(self.vm.x[a as usize]) {
                        Cell::Lst(p) => {
                            let (h, t) = (self.store.at(p), self.store.at(p + 1));
                            *self.vm.reg(c) = h;
                            *self.vm.reg(d) = t;
                        }
                        Cell::Ref(r) => {
                            let h = self.store.heap.len();
                            self.store.heap.extend_from_slice(&[Cell::Ref(h), Cell::Ref(h + 1)]);
                            *self.vm.reg(c) = Cell::Ref(h);
                            *self.vm.reg(d) = Cell::Ref(h + 1);
                            self.store.bind(r, Cell::Lst(h));
                        }
                        _ => backtrack!(),
                    },
                    Instr::PutListValNil(a, c) => {
                        let h = self.store.heap.len();
                        let v = *self.vm.reg(c);
                        self.store.heap.extend_from_slice(&[v, Cell::Atom(atom::NIL)]);
                        self.vm.x[a as usize] = Cell::Lst(h);
                    }
                    Instr::PutList2(a, u, v) => self.vm.x[a as usize] = self.new_list2(u, v),
                    Instr::PutList(a) => {
                        let (t, first) = self.new_compound(None);
                        self.vm.x[a as usize] = t;
                        (s, wr) = (first, true);
                    }
                    Instr::PutStruct(f, n, a) => {
                        let (t, first) = self.new_compound(Some((f, n)));
                        self.vm.x[a as usize] = t;
                        (s, wr) = (first, true);
                    }
                    Instr::UnifyVarX(x) => {
                        self.vm.x[x as usize] = self.arg_var(wr, s);
                        s += 1;
                    }
                    Instr::UnifyVarY(y) => {
                        *self.y(y) = self.arg_var(wr, s);
                        s += 1;
                    }
                    Instr::UnifyVarYs(ref run) => {
                        for &y in run.iter() {
                            *self.y(y) = self.arg_var(wr, s);
                            s += 1;
                        }
                    }
                    Instr::UnifyValX(x) => {
                        if !self.arg_val(self.vm.x[x as usize], wr, s) {
                            backtrack!();
                        }
                        s += 1;
                    }
                    Instr::UnifyValY(y) => {
                        let v = *self.y(y);
                        if !self.arg_val(v, wr, s) {
                            backtrack!();
                        }
                        s += 1;
                    }
                    Instr::UnifyConst(c) => {
                        if wr {
                            self.store.heap[s] = c;
                        } else if !self.store.unify_const(self.store.at(s), c) {
                            backtrack!();
                        }
                        s += 1;
                    }
                    Instr::UnifyVoid => {
                        if wr {
                            self.store.heap[s] = Cell::Ref(s);
                        }
                        s += 1;
                    }
                    Instr::UnifyTerm(ref t) => {
                        if wr {
                            let v = self.build_tm(t, 0, t.cells.len());
                            self.store.heap[s] = v;
                        } else if !self.get_term(t, self.store.at(s)) {
                            backtrack!();
                        }
                        s += 1;
                    }
                    Instr::PutVarX(x, a) => {
                        let v = self.store.new_var();
                        self.vm.x[x as usize] = v;
                        self.vm.x[a as usize] = v;
                    }
                    Instr::PutVarY(y, a) => {
                        let v = self.store.new_var();
                        *self.y(y) = v;
                        self.vm.x[a as usize] = v;
                    }
                    Instr::PutValX(x, a) => self.vm.x[a as usize] = self.vm.x[x as usize],
                    Instr::PutValY(y, a) => self.vm.x[a as usize] = *self.y(y),
                    Instr::PutValYs(ref run) => {
                        for &(y, a) in run.iter() {
                            self.vm.x[a as usize] = *self.y(y);
                        }
                    }
                    Instr::PutVoid(a) => self.vm.x[a as usize] = self.store.new_var(),
                    Instr::PutConst(c, a) => self.vm.x[a as usize] = c,
                    Instr::InitY(y) => {
                        let v = self.store.new_var();
                        *self.y(y) = v;
                    }
                    Instr::Allocate(n) => self.push_frame(n, self.vm.cp, false),
                    Instr::Deallocate => self.deallocate(),
                    Instr::Call(i, f, n) => {
                        self.vm.cp = ip;
                        call!(i, f, n);
                    }
                    // A last call: the callee returns to this clause's CP.
                    Instr::Execute(i, f, n) => call!(i, f, n),
                    Instr::DeallocExecute(i, f, n) => {
                        self.deallocate();
                        call!(i, f, n);
                    }
                    Instr::CallBuiltin(b, n, live, fail) => {
                        self.vm.cont = ip;
                        self.vm.live = live;
                        match self.vm_builtin(b as usize, n as usize) {
                            Ok(true) => {
                                if let Some(g) = self.pending.take() {
                                    go = self.call_from_builtin(g);
                                    continue 'outer;
                                }
                            }
                            Ok(false) => fail!(fail, at),
                            Err(e) => {
                                go = Err(e);
                                continue 'outer;
                            }
                        }
                    }
                    Instr::CallMeta(n, last) => {
                        if !last {
                            self.vm.cp = ip;
                        }
                        let extra: Vec<Cell> = self.vm.x[1..n as usize].to_vec();
                        go = self.vm_meta(self.vm.x[0], &extra);
                        continue 'outer;
                    }
                    Instr::CallControl(c, last) => {
                        if !last {
                            self.vm.cp = ip;
                        }
                        go = self.vm_control(c);
                        continue 'outer;
                    }
                    Instr::Proceed => ip = self.vm.cp,
                    Instr::Native(ref run) => {
                        let x = self.vm.x.as_mut_ptr();
                        // SAFETY: the current frame's slots start at
                        // `ybase`, inside `ys` (see `y`).
                        let y = unsafe { self.vm.ys.as_mut_ptr().add(self.vm.ybase as usize) };
                        let heap = self.store.heap.as_mut_ptr();
                        // SAFETY: the run's code reads and writes only the
                        // registers and slots its instructions name, heap
                        // cells of live terms and the step count, as the
                        // interpreter would, and pushes onto the heap and
                        // the trail only while they have room (it never
                        // moves their buffers).
                        if run.groups {
                            (self.vm.s, self.vm.wr) = (s, wr);
                        }
                        self.vm.run_at = at;
                        let to = unsafe { (run.f)(x, y, heap, self) };
                        if to < 0 {
                            if to == super::GROW {
                                // Room for what the run may push; then the
                                // run again (it changed nothing).
                                self.store.heap.reserve(run.heap as usize);
                                self.store.trail.reserve(run.trail as usize);
                                ip = at;
                                continue;
                            }
                            backtrack!();
                        }
                        // A run that reads or builds compound terms
                        // leaves where it got to.
                        if run.groups {
                            (s, wr) = (self.vm.s, self.vm.wr);
                        }
                        // SAFETY: the run returns an instruction of its
                        // own code (a jump it spans, or one past it).
                        ip = unsafe { at.add(to as usize) };
                    }
                    Instr::Facts(ref t) => {
                        if !self.facts(t, at) {
                            backtrack!();
                        }
                        // SAFETY: the compiler made `done` a forward jump
                        // inside this code.
                        ip = unsafe { at.add(t.done as usize) };
                    }
                    Instr::Step => self.steps += 1,
                    Instr::Guard(ref g) => {
                        if g.epoch != self.db.inline_epoch.get() {
                            ip = Cont::start(&g.plain);
                        }
                    }
                    Instr::Warm(ref w) => match w.left.get() {
                        0 => {}
                        1 => {
                            w.left.set(0);
                            self.warm_up(w.clause);
                        }
                        n => w.left.set(n - 1),
                    },
                    Instr::Arith(ref a) => fast!(self.arith(a), a.done, a.fail, at),
                    Instr::Arith2(ref a) => fast!(self.arith2(a), a.done, a.fail, at),
                    Instr::IsChain(ref a) => fast!(self.is_chain(a), a.done, a.fail, at),
                    Instr::Arg(ref a) => fast!(self.arg_fast(a), a.done, 0, at),
                    Instr::Test(ref t) => fast!(self.test(t), t.done, t.fail, at),
                    Instr::Cut => {
                        let b = self.vm.envs[self.vm.e as usize].b0;
                        self.cut(b as usize);
                    }
                    Instr::CutB0 => self.cut(self.vm.b0 as usize),
                    Instr::GetLevel(y) => {
                        let h = self.choices.len() as i64;
                        *self.y(y) = Cell::Int(h);
                    }
                    Instr::CutTo(y, plus) => {
                        let Cell::Int(h) = *self.y(y) else { unreachable!("a level") };
                        self.cut(h as usize + plus as usize);
                    }
                    Instr::SoftCut(y) => {
                        let Cell::Int(h) = *self.y(y) else { unreachable!("a level") };
                        if let Some(cp) = self.choices.get_mut(h as usize) {
                            cp.alt = Alt::Dead;
                        }
                    }
                    Instr::TryElse(l) => {
                        // SAFETY: a forward jump inside this code.
                        let cont = unsafe { at.add(l as usize) };
                        self.vm_push_choice(Alt::Else, cont, 0);
                    }
                    Instr::FindallBegin(y, four, l) => {
                        let (result, level) = (self.vm.x[0], self.choices.len());
                        let tail = if four { self.vm.x[1] } else { Cell::Atom(atom::NIL) };
                        // SAFETY: a forward jump inside this code.
                        let done = unsafe { at.add(l as usize) };
                        if let Err(e) = self.findall_bag(result, tail, four, done) {
                            go = Err(e);
                            continue 'outer;
                        }
                        self.steps += 1;
                        *self.y(y) = Cell::Int(level as i64);
                    }
                    Instr::FindallAdd(y) => {
                        let Cell::Int(h) = *self.y(y) else { unreachable!("a level") };
                        let Alt::Findall { bag, .. } = self.choices[h as usize].alt else {
                            unreachable!("the findall's choice point")
                        };
                        go = self.bag_add(bag as usize, self.vm.x[0]).map(|()| None);
                        continue 'outer;
                    }
                    // SAFETY: a forward jump inside this code.
                    Instr::Jump(l) => ip = unsafe { at.add(l as usize) },
                    Instr::Fail => {
                        backtrack!();
                    }
                    Instr::FaAdd => {
                        let (t, bag) = (*self.y(0), *self.y(1));
                        let Cell::Int(bag) = bag else { unreachable!("bag number") };
                        go = self.bag_add(bag as usize, t).map(|()| None);
                        continue 'outer;
                    }
                    Instr::SampleAdd => {
                        // Reservoir sampling: the k-th solution replaces the
                        // one kept with probability 1/k.
                        let Cell::Int(k) = *self.y(2) else { unreachable!("a count") };
                        *self.y(2) = Cell::Int(k + 1);
                        if rand::Rng::gen_range(&mut self.rng, 0..=k) == 0 {
                            let (t, bag) = (*self.y(0), *self.y(1));
                            let Cell::Int(bag) = bag else { unreachable!("bag number") };
                            self.bags_truncate(bag as usize);
                            self.bag_new();
                            if let Err(e) = self.bag_add(bag as usize, t) {
                                go = Err(e);
                                continue 'outer;
                            }
                        }
                        backtrack!();
                    }
                    Instr::ExitCatch => {
                        let Cell::Int(h) = *self.y(0) else { unreachable!("catch height") };
                        let h = h as usize;
                        if self.choices.len() == h + 1 && matches!(self.choices[h].alt, Alt::Catch { .. }) {
                            self.pop_choice();
                        }
                    }
                    Instr::Restore => {
                        let env = &self.vm.envs[self.vm.e as usize];
                        let (base, n) = (env.ys as usize, env.n as usize);
                        let cont = env.cp;
                        self.vm.cp = env.ret.expect("a restoring frame");
                        self.vm.b0 = env.b0;
                        let ce = env.ce;
                        self.vm.set_e(ce);
                        self.vm.x[..n].copy_from_slice(&self.vm.ys[base..base + n]);
                        ip = cont;
                    }
                    Instr::Succeed => {
                        self.vm.cont = at;
                        return Ok(true);
                    }
                }
            }
        }
    }

    /// The integer value of a compiled expression, `None` when a value is
    /// not an integer or the result is not a plain integer (overflow,
    /// division by zero): the general builtin then runs.
    #[inline(always)]
    fn eval_int(&self, e: &Expr) -> Option<i64> {
        match *e {
            Expr::Leaf(a) => self.operand(a),
            Expr::Leaves(op, a, b) => binary(op, self.operand(a)?, self.operand(b)?),
            Expr::Chain(a, ref rest) => {
                let mut acc = self.operand(a)?;
                for &(op, b) in rest.iter() {
                    acc = binary(op, acc, self.operand(b)?)?;
                }
                Some(acc)
            }
            _ => self.eval_tree(e),
        }
    }

    /// `eval_int` on any tree (recursive: the compiler bounds the depth).
    fn eval_tree(&self, e: &Expr) -> Option<i64> {
        match *e {
            Expr::Leaf(a) => self.operand(a),
            Expr::Leaves(..) | Expr::Chain(..) => self.eval_int(e),
            Expr::Bin(op, ref ab) => {
                let x = self.eval_int(&ab[0])?;
                let y = self.eval_int(&ab[1])?;
                binary(op, x, y)
            }
            Expr::Un(AOp::Neg, ref a) => self.eval_tree(a)?.checked_neg(),
            Expr::Un(_, ref a) => self.eval_tree(a)?.checked_abs(),
        }
    }

    /// An operand of a compiled expression: a constant or a register
    /// holding an integer (`None` for an operator or anything else).
    #[inline(always)]
    fn operand(&self, a: AOp) -> Option<i64> {
        let v = match a {
            AOp::Int(i) => return Some(i),
            AOp::X(r) => self.vm.x[r as usize],
            AOp::Y(s) => self.vm.ys[(self.vm.ybase + s) as usize],
            _ => return None,
        };
        match v {
            Cell::Int(i) => Some(i),
            Cell::Ref(_) => match self.store.deref(v) {
                Cell::Int(i) => Some(i),
                _ => None,
            },
            _ => None,
        }
    }

    /// Runs an arithmetic fast path: `Some(success)`, or `None` to fall
    /// through to the general builtin.
    #[inline(never)]
    fn arith(&mut self, a: &Arith) -> Option<bool> {
        let r = self.eval_int(&a.rhs)?;
        match a.op {
            ArithOp::IsNew(code) => self.is_result(code, true, r),
            ArithOp::IsOld(code) => self.is_result(code, false, r),
            ArithOp::IsInt(i) => Some(i == r),
            ArithOp::Cmp(ord, negate, ref lhs) => {
                let l = self.eval_int(lhs)?;
                Some((l.cmp(&r) == ord) != negate)
            }
        }
    }

    /// Runs an `Arith2`: `Some(success)`, or `None` to fall through to the
    /// general builtin.
    #[inline(always)]
    fn arith2(&mut self, t: &Arith2) -> Option<bool> {
        let a = self.operand(t.a)?;
        let b = self.operand(t.b)?;
        match t.op {
            Arith2Op::Cmp(ord, negate) => Some((a.cmp(&b) == ord) != negate),
            Arith2Op::Is(op, code, new) => self.is_result(code, new, binary(op, a, b)?),
            Arith2Op::Random(code, new) => {
                // As the builtin: no draw when the range is empty, and a
                // target that is no variable or integer is left to it
                // (which then draws once, as here).
                if b < a {
                    return Some(false);
                }
                if !new {
                    let v = *self.reg(code);
                    if !matches!(self.store.deref(v), Cell::Ref(_) | Cell::Int(_)) {
                        return None;
                    }
                }
                let r = rand::Rng::gen_range(&mut self.rng, a..=b);
                self.is_result(code, new, r)
            }
        }
    }

    /// Runs an `IsChain`: `Some(success)`, or `None` to fall through to
    /// the general builtin.
    #[inline(always)]
    fn is_chain(&mut self, t: &IsChain) -> Option<bool> {
        let mut acc = self.operand(t.first)?;
        for &(op, b) in t.rest.iter() {
            acc = binary(op, acc, self.operand(b)?)?;
        }
        self.is_result(t.code, t.new, acc)
    }

    /// `is/2`'s result `r` given to the variable in register code `code`
    /// (`new`: its first occurrence, so nothing to compare).
    #[inline(always)]
    fn is_result(&mut self, code: usize, new: bool, r: i64) -> Option<bool> {
        if new {
            *self.reg(code) = Cell::Int(r);
            return Some(true);
        }
        let v = *self.reg(code);
        match self.store.deref(v) {
            Cell::Ref(addr) => {
                self.store.bind(addr, Cell::Int(r));
                Some(true)
            }
            Cell::Int(i) => Some(i == r),
            _ => None,
        }
    }

    /// Runs the fast path of a test: `Some(success)`, or `None` to fall
    /// through to the general builtin (`==` on compound terms, floats or
    /// strings).
    #[inline]
    fn test(&self, t: &TestFast) -> Option<bool> {
        let a = self.store.deref(self.opd(t.a));
        Some(match t.op {
            TestOp::Same(negate) => {
                let b = self.store.deref(self.opd(t.b));
                let same = match (a, b) {
                    (Cell::Ref(x), Cell::Ref(y)) => x == y,
                    (Cell::Atom(x), Cell::Atom(y)) => x == y,
                    (Cell::Int(x), Cell::Int(y)) => x == y,
                    // A variable is identical only to itself, an atom or
                    // an integer only to itself (not to a float, a string
                    // or a compound).
                    (Cell::Ref(_) | Cell::Atom(_) | Cell::Int(_), _)
                    | (_, Cell::Ref(_) | Cell::Atom(_) | Cell::Int(_)) => false,
                    _ => return None,
                };
                same != negate
            }
            TestOp::Type(t) => t.holds(a),
        })
    }

    /// The value of a test's operand.
    #[inline(always)]
    fn opd(&self, o: Opd) -> Cell {
        match o {
            Opd::Reg(code) if code & PERM != 0 => self.vm.ys[self.vm.ybase as usize + (code & INDEX)],
            Opd::Reg(x) => self.vm.x[x],
            Opd::Const(c) => c,
        }
    }

    /// `between(Lo, Hi, I)` followed at once by `arg(I, T, A)`, the board
    /// scan of game rules (`cont` is where `between/3` continues, `var`
    /// its I): the first value from `lo` to `hi` whose argument of T can
    /// unify with A, and the last value worth trying (T's arity at most);
    /// `None` when what follows is not such an `arg/3`, or when `lo` is
    /// not positive. The values passed over are exactly those at which
    /// the `arg/3` fast path would fail with nothing bound (an argument
    /// that is a constant other than A, a compound where A is a constant,
    /// a number past the arity): backtracking into `between/3` would have
    /// tried each and failed again.
    /// (The check of what follows is inlined where `between/3` is retried:
    /// a retry not followed by `arg/3` pays nothing more.)
    #[inline(always)]
    pub(crate) fn between_scan(&mut self, var: Cell, cont: Cont, lo: i64, hi: i64) -> Option<(Option<i64>, i64)> {
        // SAFETY: a continuation points at an instruction of live code.
        // (The `arg/3` may start a run of native code.)
        let a = match unsafe { cont.0.as_ref() } {
            Instr::Arg(a) => a,
            Instr::Native(run) => match &run.first {
                Instr::Arg(a) => a,
                _ => return None,
            },
            _ => return None,
        };
        self.arg_scan(var, a, lo, hi)
    }

    /// [`Machine::between_scan`] where `arg/3` follows.
    fn arg_scan(&mut self, var: Cell, a: &ArgFast, lo: i64, hi: i64) -> Option<(Option<i64>, i64)> {
        let Cell::Ref(v) = self.store.deref(var) else { return None };
        let n = match a.n {
            AOp::X(r) => self.vm.x[r as usize],
            AOp::Y(s) => self.vm.ys[(self.vm.ybase + s) as usize],
            _ => return None,
        };
        if lo < 1 || self.store.deref(n) != Cell::Ref(v) {
            return None;
        }
        let t = *self.vm.reg(a.t);
        let (first, arity) = self.args_of(t)?;
        let want = match a.dst {
            ArgDst::New(_) => None,
            ArgDst::Const(c) => Some(c),
            ArgDst::Old(code) => match self.store.deref(*self.vm.reg(code)) {
                c @ (Cell::Atom(_) | Cell::Int(_)) => Some(c),
                _ => None,
            },
        };
        let last = hi.min(arity);
        let mut i = lo;
        if let Some(w) = want {
            while i <= last {
                match self.store.deref(self.store.at(first + i as usize - 1)) {
                    Cell::Ref(_) => break,
                    c if c == w => break,
                    _ => i += 1,
                }
            }
        }
        Some(((i <= last).then_some(i), last))
    }

    /// Where the arguments of the compound `t` are on the heap (a list
    /// cell's two included), and how many; `None` for anything else.
    #[inline(always)]
    fn args_of(&self, t: Cell) -> Option<(usize, i64)> {
        match self.store.deref(t) {
            Cell::Str(p) => match self.store.at(p) {
                Cell::Fun(_, k) => Some((p + 1, k as i64)),
                _ => None,
            },
            Cell::Lst(p) => Some((p, 2)),
            _ => None,
        }
    }

    /// A call of a table of facts (see `Facts`, the instruction at `at`),
    /// its step counted: whether a fact matched.
    #[inline]
    fn facts(&mut self, t: &Rc<super::Facts>, at: Cont) -> bool {
        self.steps += 1;
        match self.store.deref(self.vm.x[0]) {
            Cell::Ref(_) => {
                // SAFETY: the compiler made `done` a forward jump inside
                // this code.
                let cont = unsafe { at.add(t.done as usize) };
                self.facts_first(t, cont)
            }
            a => {
                let n = t.arity as usize - 1;
                t.keys.iter().position(|&k| k == a).is_some_and(|r| {
                    let rest = &t.rest[r * n..r * n + n];
                    rest.iter().enumerate().all(|(j, &c)| self.store.unify_const(self.vm.x[j + 1], c))
                })
            }
        }
    }

    /// A call of a table of facts whose first argument is unbound: a
    /// choice point that resumes at `cont` with the next fact, then the
    /// first fact that unifies. Whether one did.
    pub(crate) fn facts_first(&mut self, t: &Rc<super::Facts>, cont: Cont) -> bool {
        self.vm_push_choice(Alt::Facts { t: t.clone(), next: 0 }, cont, t.arity);
        self.facts_from(t, self.choices.len() - 1, 0)
    }

    /// Tries the facts of `t` from `from` on, as a call's clauses (the
    /// choice point `idx`, an `Alt::Facts`, on top, its registers in
    /// place): the choice point goes on to the next fact, or is dropped
    /// before the last is tried. Whether one unified.
    fn facts_from(&mut self, t: &super::Facts, idx: usize, from: usize) -> bool {
        let (rows, n) = (t.keys.len(), t.arity as usize - 1);
        if n == 0 {
            // One argument, unbound (as the choice point was made): the
            // fact's unifies.
            if from + 1 == rows {
                self.pop_choice();
            } else if let Alt::Facts { next, .. } = &mut self.choices[idx].alt {
                *next = from as u32 + 1;
            }
            return self.store.unify_const(self.vm.x[0], t.keys[from]);
        }
        for r in from..rows {
            let last = r + 1 == rows;
            if last {
                self.pop_choice();
            } else if let Alt::Facts { next, .. } = &mut self.choices[idx].alt {
                *next = r as u32 + 1;
            }
            let var = self.vm.x[0];
            let rest = &t.rest[r * n..r * n + n];
            if self.store.unify_const(var, t.keys[r])
                && rest.iter().enumerate().all(|(j, &c)| self.store.unify_const(self.vm.x[j + 1], c))
            {
                return true;
            }
            if !last {
                let mark = self.choices[idx].trail;
                self.store.undo_to(mark);
            }
        }
        false
    }

    /// Runs the fast path of `arg/3`: `Some(success)`, or `None` to fall
    /// through to the general builtin (N not an integer, T not a
    /// compound).
    #[inline(never)]
    fn arg_fast(&mut self, a: &ArgFast) -> Option<bool> {
        let n = self.operand(a.n)?;
        let t = *self.reg(a.t);
        let (first, arity) = self.args_of(t)?;
        match n {
            // A negative N is an error: the builtin raises it.
            ..0 => return None,
            0 => return Some(false),
            n if n > arity => return Some(false),
            _ => {}
        }
        let v = self.store.at(first + n as usize - 1);
        Some(match a.dst {
            ArgDst::New(code) => {
                *self.reg(code) = v;
                true
            }
            ArgDst::Old(code) => {
                let r = *self.reg(code);
                self.store.unify(r, v)
            }
            ArgDst::Const(c) => self.store.unify_const(v, c),
        })
    }

    /// A new list cell (`None`) or structure `f/n` whose argument cells the
    /// `Unify*` instructions that follow fill: the term and its first
    /// argument cell.
    #[inline(always)]
    fn new_compound(&mut self, fun: Option<(Atom, u32)>) -> (Cell, usize) {
        let heap = &mut self.store.heap;
        let h = heap.len();
        match fun {
            None => {
                heap.extend_from_slice(&[Cell::Int(0); 2]);
                (Cell::Lst(h), h)
            }
            Some((f, n)) => {
                heap.push(Cell::Fun(f, n));
                heap.resize(h + 1 + n as usize, Cell::Int(0));
                (Cell::Str(h), h + 1)
            }
        }
    }

    /// A `UArg` in read mode on heap cell `s`: false when it does not
    /// unify.
    #[inline(always)]
    fn uarg_read(&mut self, u: UArg, s: usize) -> bool {
        let c = self.store.at(s);
        match u {
            UArg::VarX(x) => self.vm.x[x as usize] = c,
            UArg::ValX(x) => return self.store.unify(self.vm.x[x as usize], c),
            UArg::VarY(y) => *self.y(y) = c,
            UArg::ValY(y) => {
                let v = *self.y(y);
                return self.store.unify(v, c);
            }
            UArg::Void => {}
            UArg::Nil => return self.store.unify_const(c, Cell::Atom(atom::NIL)),
        }
        true
    }

    /// A new list cell whose two cells the `UArg`s fill (write mode).
    #[inline(always)]
    fn new_list2(&mut self, u: UArg, v: UArg) -> Cell {
        let h = self.store.heap.len();
        let a = self.uarg_new(u, h);
        let b = self.uarg_new(v, h + 1);
        self.store.heap.extend_from_slice(&[a, b]);
        Cell::Lst(h)
    }

    /// What a `UArg` puts in new heap cell `s` (write mode).
    #[inline(always)]
    fn uarg_new(&mut self, u: UArg, s: usize) -> Cell {
        match u {
            UArg::VarX(x) => {
                self.vm.x[x as usize] = Cell::Ref(s);
                Cell::Ref(s)
            }
            UArg::ValX(x) => self.vm.x[x as usize],
            UArg::VarY(y) => {
                *self.y(y) = Cell::Ref(s);
                Cell::Ref(s)
            }
            UArg::ValY(y) => *self.y(y),
            UArg::Void => Cell::Ref(s),
            UArg::Nil => Cell::Atom(atom::NIL),
        }
    }

    /// `Unify*` on argument cell `s` of the structure being read or
    /// written: a variable's first occurrence takes the cell (a new
    /// variable in write mode)...
    #[inline(always)]
    fn arg_var(&mut self, wr: bool, s: usize) -> Cell {
        if wr {
            self.store.heap[s] = Cell::Ref(s);
            Cell::Ref(s)
        } else {
            self.store.at(s)
        }
    }

    /// ...and a later occurrence is stored (write mode) or unified.
    #[inline(always)]
    fn arg_val(&mut self, v: Cell, wr: bool, s: usize) -> bool {
        if wr {
            self.store.heap[s] = v;
            true
        } else {
            self.store.unify(v, self.store.at(s))
        }
    }

    /// Slot `y` of the current environment.
    #[inline]
    fn y(&mut self, y: u32) -> &mut Cell {
        let i = self.vm.ybase as usize + y as usize;
        // Every live frame lies inside `ys` (`push_frame` truncates it
        // only to the end of the frame below the new one), and the
        // compiler numbers a clause's slots below its frame's size.
        debug_assert!(i < self.vm.ys.len(), "slot {y} past the frames");
        // SAFETY: as just said.
        unsafe { self.vm.ys.get_unchecked_mut(i) }
    }

    /// Leaves the current environment: its continuation back in CP.
    #[inline(always)]
    fn deallocate(&mut self) {
        let env = &self.vm.envs[self.vm.e as usize];
        self.vm.cp = env.cp;
        let ce = env.ce;
        self.vm.set_e(ce);
    }

    /// Pushes an environment of `n` slots (unbound: integers until set)
    /// and makes it current.
    #[inline(always)]
    fn push_frame(&mut self, n: u32, cp: Cont, catch: bool) {
        let vm = &mut self.vm;
        let btop = self.choices.last().map_or(1, |c| c.vm.env_top);
        let k = (vm.e + 1).max(btop) as usize;
        vm.envs.truncate(k);
        let below = &vm.envs[k - 1];
        let ys = below.ys + below.n;
        // The slots copied from a block of unset ones (a push a slot
        // checked the capacity at each; a fill loop stored each cell in two
        // stores: 40% of `Allocate` in a Breakthrough playout).
        vm.ys.truncate(ys as usize);
        const UNSET: [Cell; 32] = [Cell::Int(0); 32];
        let mut left = n as usize;
        while left > 0 {
            let k = left.min(UNSET.len());
            vm.ys.extend_from_slice(&UNSET[..k]);
            left -= k;
        }
        vm.envs.push(Env { ce: vm.e, cp, b0: vm.b0, ys, n, catch, ret: None });
        vm.e = k as u32;
        vm.ybase = ys;
    }

    /// The register-machine state a choice point pushed by a builtin saves:
    /// it resumes after the builtin with the live registers.
    pub(crate) fn vm_save(&mut self) -> VmSave {
        self.save_state(self.vm.cont, self.vm.live)
    }

    /// The machine state a new choice point keeps (resuming at `cont`),
    /// with registers `X0..nregs` saved above the newest choice point's.
    #[inline(always)]
    fn save_state(&mut self, cont: Cont, nregs: u32) -> VmSave {
        let regs = self.choices.last().map_or(0, |c| c.vm.regs + c.vm.nregs);
        self.vm.saved.truncate(regs as usize);
        save_regs(&mut self.vm.saved, &self.vm.x, nregs as usize);
        VmSave { e: self.vm.e, cp: self.vm.cp, cont, b0: self.vm.b0, regs, nregs, env_top: self.vm.envs.len() as u32 }
    }

    /// Pushes a choice point resuming at `cont`, saving `nregs` registers.
    #[inline(always)]
    fn vm_push_choice(&mut self, alt: Alt, cont: Cont, nregs: u32) {
        let save = self.save_state(cont, nregs);
        let heap = self.store.heap.len();
        self.choices.push(Choice { alt, heap, trail: self.store.trail.len(), vm: save });
        self.store.hb = heap;
    }

    fn pop_choice(&mut self) {
        // Dropped in place (`pop` would move it out first).
        self.choices.truncate(self.choices.len().saturating_sub(1));
        self.store.hb = self.choices.last().map_or(0, |c| c.heap);
    }

    /// Runs a deterministic builtin on the argument registers.
    fn vm_builtin(&mut self, b: usize, n: usize) -> Res {
        self.steps += 1;
        if !self.limits_quiet(self.steps) {
            self.check_limits()?;
        }
        let (name, arity, f) = self.builtins[b];
        self.context = (name, arity);
        // A fixed-size copy (there are always 256 registers or more).
        let args: [Cell; 8] = self.vm.x[..8].try_into().expect("eight registers");
        f(self, &args[..n])
    }

    /// A builtin asked to run `goal` next: the live registers are kept in a
    /// frame that restores them when the goal exits.
    fn call_from_builtin(&mut self, goal: Cell) -> Go {
        let live = self.vm.live;
        self.push_frame(live, self.vm.cont, false);
        self.vm.envs[self.vm.e as usize].ret = Some(self.vm.cp);
        let base = self.vm.envs[self.vm.e as usize].ys as usize;
        self.vm.ys[base..base + live as usize].copy_from_slice(&self.vm.x[..live as usize]);
        self.vm.cp = Cont::start(&self.vm.restore_code);
        self.vm_meta(goal, &[])
    }

    /// Code of a clause (compiled on first use), ready to run.
    #[inline]
    fn enter(&mut self, clause: &ClauseCode) -> Cont {
        Cont::start(compiled(&self.db, clause, &mut self.vm))
    }

    /// The common case of a call (CP is set), without leaving the run
    /// loop: a known predicate and no limit or garbage collection to see to
    /// (`None`: `vm_call` then does everything).
    #[inline(always)]
    fn fast_call(&mut self, i: u32, n: u32) -> Option<Cont> {
        let steps = self.steps + 1;
        // An abolished predicate has no clauses and no index, and
        // `NO_PRED` is no predicate (`enter_pred` finds neither): both are
        // left to `vm_call`, which looks the name up again.
        if !self.limits_quiet(steps) {
            return None;
        }
        let code = self.enter_pred(i as usize, n)?;
        self.steps = steps;
        Some(code)
    }

    /// Enters predicate `i` with its arguments in the registers: the code
    /// of the first candidate clause (or a failure), a choice point for
    /// the others. `None`, with nothing changed but the cut barrier B0,
    /// when an index or that clause's code is still to be built
    /// (`prepare_pred`), or when there is no predicate `i` (`NO_PRED`).
    #[inline(always)]
    fn enter_pred(&mut self, i: usize, n: u32) -> Option<Cont> {
        let p = self.db.preds.get(i)?;
        // The cut barrier of the clause entered (set even when `None`
        // follows: whatever calls the predicate then sets it again).
        self.vm.b0 = self.choices.len() as u32;
        // The switch on the first argument: one clause, or the one a list
        // cell or `[]` there leaves.
        let k = if n > 0 { Switch::of(self.store.deref(self.vm.x[0])) } else { Switch::Other };
        if let Some(code) = p.switch(k) {
            return Some(code);
        }
        // Every clause a candidate (no index to look at), or those the
        // indexes leave.
        let (code, cands) = match p.try_all() {
            Some(code) => (code, None),
            None => {
                // (A predicate of one clause has every class in its switch
                // once that clause's code is recorded; before, it has no
                // index either, and `select` finds nothing.)
                let cands = p.select(&self.vm.x[..n as usize], &self.store)?;
                let code = match cands.first() {
                    Some(&c) => p.entry(c as usize)?,
                    None => Cont::start(&self.vm.fail_code),
                };
                if cands.len() <= 1 {
                    return Some(code);
                }
                (code, Some(cands.clone()))
            }
        };
        // A first clause that cuts the others at its neck, and whose head
        // cannot fail on these arguments, needs no choice point.
        if p.necks {
            let first = cands.as_ref().map_or(0, |c| c[0] as usize);
            if neck_cut_enters(&self.store, &self.vm.x, &p.clauses[first]) {
                return Some(code);
            }
        }
        let clauses = p.clauses.clone();
        let done = Cont::start(&self.vm.fail_code);
        self.vm_push_choice(Alt::VmClauses { clauses, cands, next: 1 }, done, n);
        Some(code)
    }

    /// Makes the native code of a clause that has become hot (see
    /// `Warm`), and points the calls of its predicate there (the code
    /// running now, and every continuation into it, stay as they are).
    #[cold]
    fn warm_up(&mut self, clause: *const ClauseCode) {
        let found = self
            .db
            .preds
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.clauses.iter().position(|c| std::ptr::eq(Rc::as_ptr(c), clause)).map(|c| (i, c)));
        // Retracted since: it stays interpreted.
        let Some((i, c)) = found else { return };
        let clause = self.db.preds[i].clauses[c].clone();
        // A clause found at the address of one retracted (its memory used
        // again) is not one to compile now.
        if clause.span.is_none() || clause.hot.get().is_some() {
            return;
        }
        if self.vm.native.is_none() {
            return;
        }
        let mut code = clause_instrs(&self.db, &clause, &mut self.vm.x, &mut self.vm.codes);
        let me = self_loop(&self.db, &clause);
        let Some(native) = self.vm.native.as_mut() else { return };
        native.lower(&mut code, me);
        let hot = Cont::start(keep(&mut self.vm, &clause.hot, code));
        if self.db.preds[i].entry(c).is_some() {
            self.db.preds[i].set_entry(c, hot);
        }
    }

    /// Builds what `enter_pred` found missing: an index, else the code of
    /// the first candidate clause (compiled if it is not yet) in its entry.
    fn prepare_pred(&mut self, i: usize, n: u32) {
        let args = &self.vm.x[..n as usize];
        let p = &mut self.db.preds[i];
        let first = if p.clauses.len() == 1 {
            0
        } else {
            match p.select(args, &self.store) {
                // Not empty: with no candidate, `enter_pred` fails at once.
                Some(c) => c[0] as usize,
                None => return p.build_indexes(n as usize),
            }
        };
        let clause = self.db.preds[i].clauses[first].clone();
        let code = Cont::start(compiled(&self.db, &clause, &mut self.vm));
        self.db.preds[i].set_entry(first, code);
    }

    /// Calls predicate number `i` (or `f/n` by name) with its arguments in
    /// the registers (CP is set).
    #[inline]
    /// A call of predicate `i` (`f/n`) made just before `after`, past
    /// what `fast_call` handles.
    fn vm_call(&mut self, i: u32, f: Atom, n: u32, after: Cont) -> Go {
        self.steps += 1;
        self.check_limits()?;
        // Every continuation is on the stacks here (CP for the caller).
        if self.vm.codes.len() > self.vm.sweep_at {
            self.sweep_codes(false);
        }
        if self.store.heap.len() > self.gc_at {
            self.vm_gc(n as usize);
        }
        if i != NO_PRED && !self.db.preds[i as usize].abolished {
            return self.vm_call_pred(i as usize, n);
        }
        match self.db.get(f, n) {
            Some(Entry::User(i)) => self.vm_call_pred(i, n),
            _ => {
                // No such predicate (or a builtin called by name): where
                // the call was made, so that an unknown procedure can name
                // the clause it is in.
                self.unknown_call = Some((after, f, n));
                let args: Vec<Cell> = self.vm.x[..n as usize].to_vec();
                let g = self.store.new_struct(f, &args);
                let go = self.vm_meta(g, &[]);
                self.unknown_call = None;
                go
            }
        }
    }

    fn vm_call_pred(&mut self, i: usize, n: u32) -> Go {
        // At most: the first index, the others, the first clause's code.
        loop {
            if let Some(code) = self.enter_pred(i, n) {
                return Ok(Some(code));
            }
            self.prepare_pred(i, n);
        }
    }

    /// Calls a goal term with `extra` arguments added (CP is set).
    fn vm_meta(&mut self, goal: Cell, extra: &[Cell]) -> Go {
        let mut goal = goal;
        let mut extra: Vec<Cell> = extra.to_vec();
        loop {
            let g = self.store.deref(goal);
            let (f, p, n) = match g {
                Cell::Atom(a) => (a, 0, 0),
                Cell::Str(p) => {
                    let Cell::Fun(f, n) = self.store.heap[p] else { unreachable!("Str points at Fun") };
                    (f, p + 1, n as usize)
                }
                Cell::Lst(p) => (atom::DOT, p, 2),
                Cell::Ref(_) => {
                    self.context = (atom::CALL, 1 + extra.len() as u32);
                    return Err(self.inst_error());
                }
                other => {
                    self.context = (atom::CALL, 1 + extra.len() as u32);
                    return Err(self.type_error(atom::CALLABLE, other));
                }
            };
            let total = n + extra.len();
            let entry = self.db.get(f, total as u32);
            let load = |m: &mut Machine| {
                m.vm.x.grow(total);
                m.vm.x[..n].copy_from_slice(&m.store.heap[p..p + n]);
                m.vm.x[n..total].copy_from_slice(&extra);
            };
            match entry {
                Some(Entry::User(i)) => {
                    load(self);
                    self.steps += 1;
                    self.check_limits()?;
                    if self.store.heap.len() > self.gc_at {
                        self.vm_gc(total);
                    }
                    return self.vm_call_pred(i, total as u32);
                }
                Some(Entry::Builtin(b)) => {
                    load(self);
                    self.vm.cont = self.vm.cp;
                    self.vm.live = 0;
                    return match self.vm_builtin(b, total)? {
                        true => match self.pending.take() {
                            Some(g) => self.call_from_builtin(g),
                            None => Ok(Some(self.vm.cp)),
                        },
                        false => Ok(None),
                    };
                }
                Some(Entry::Control(c)) => match c {
                    Control::Call(_) => {
                        let args: Vec<Cell> = self.store.heap[p + 1..p + n].to_vec();
                        goal = self.store.heap[p];
                        extra.splice(0..0, args);
                    }
                    Control::True | Control::Cut => return Ok(Some(self.vm.cp)),
                    Control::Fail => return Ok(None),
                    Control::Conj | Control::Disj | Control::IfThen | Control::SoftIf | Control::Not => {
                        return self.meta_clause(g);
                    }
                    Control::Findall
                    | Control::Findall4
                    | Control::Sample
                    | Control::Catch
                    | Control::Throw
                    | Control::Halt0
                    | Control::Halt1 => {
                        load(self);
                        self.steps += 1;
                        return self.vm_control(c);
                    }
                },
                None => {
                    if let Cell::Lst(_) = g {
                        self.context = (atom::CALL, 1);
                        return Err(self.type_error(atom::CALLABLE, g));
                    }
                    return self.unknown(f, total as u32);
                }
            }
        }
    }

    /// The clause whose code holds the instruction before `after`, as a
    /// person names it: `the clause of move/3 at hexapawn.rules:57` (the
    /// line where the clause starts).
    fn clause_at(&self, after: Cont) -> Option<String> {
        let at = after.addr().checked_sub(std::mem::size_of::<Instr>())?;
        for p in &self.db.preds {
            for c in p.clauses.iter() {
                let holds = |code: &Code| {
                    let start = code.as_ptr() as usize;
                    (start..start + std::mem::size_of_val(&**code)).contains(&at)
                };
                if !c.vm.get().is_some_and(holds) && !c.hot.get().is_some_and(holds) {
                    continue;
                }
                let name = crate::engine::write::format_atom(self.atoms.name(p.name), true);
                let place = c.span.as_ref().and_then(|(file, span)| {
                    let (_, starts) = self.line_starts.iter().find(|(f, _)| f == file)?;
                    let line = starts.partition_point(|&s| s as usize <= span.start);
                    Some(format!("{file}:{line}"))
                });
                return Some(match place {
                    Some(place) => format!("the clause of {name}/{} at {place}", p.arity),
                    None => format!("a clause of {name}/{}", p.arity),
                });
            }
        }
        None
    }

    fn unknown(&mut self, f: Atom, n: u32) -> Go {
        self.unknown_from = match self.unknown_call.take() {
            Some((after, g, m)) if (g, m) == (f, n) => self.clause_at(after).map(|place| {
                let pi = format!("{}/{n}", crate::engine::write::format_atom(self.atoms.name(f), true));
                (pi, place)
            }),
            _ => None,
        };
        self.context = (atom::CALL, 1);
        let pi = self.store.new_struct(atom::SLASH, &[Cell::Atom(f), Cell::Int(n as i64)]);
        Err(self.existence_error(atom::PROCEDURE, pi))
    }

    /// Runs a goal with control constructs: it is compiled as the body of a
    /// temporary clause. The clause is made general so that one compiled
    /// clause serves every goal of the same shape: each goal that is not a
    /// control construct gets fresh variables as arguments, and the goal's
    /// actual arguments are passed as the clause's head arguments
    /// (`(member(X, L), X > 2)` runs as `'$mc'(A, B, C, D) :- member(A, B),
    /// C > D` called with `X, L, X, 2`, so sharing is kept).
    fn meta_clause(&mut self, g: Cell) -> Go {
        let mut shape = Vec::new();
        let mut args = Vec::new();
        let clause = if self.meta_shape(g, &mut shape, &mut args) {
            match self.vm.meta_cache.get(shape.as_slice()) {
                Some(c) => c.clone(),
                None => {
                    let c = Rc::new(self.meta_compile(g, &shape, args.len())?);
                    if self.vm.meta_cache.len() >= META_CACHE_MAX {
                        self.vm.meta_cache.clear();
                    }
                    self.vm.meta_cache.insert(shape.into(), c.clone());
                    c
                }
            }
        } else {
            // An odd goal (a number inside, or very large): compiled as it is.
            let mut vars = Vec::new();
            let _ = self.store.copy_out(g, &mut vars);
            args = vars.iter().map(|&a| Cell::Ref(a)).collect();
            let head = self.store.new_struct(atom::MC, &args);
            let clause = self.store.new_struct(atom::NECK, &[head, g]);
            match crate::engine::compile::compile_clause(&mut self.store, clause, None) {
                Ok(c) => Rc::new(c),
                Err(crate::engine::compile::ClauseError::Cyclic) => return Err(self.cyclic_error()),
                Err(_) => {
                    self.context = (atom::CALL, 1);
                    return Err(self.type_error(atom::CALLABLE, g));
                }
            }
        };
        self.vm.x.grow(args.len());
        self.vm.x[..args.len()].copy_from_slice(&args);
        self.vm.b0 = self.choices.len() as u32;
        self.steps += 1;
        Ok(Some(self.enter(&clause)))
    }

    /// The shape of goal `g` (prefix order) and the arguments of its goals
    /// that are not control constructs; `false` for a goal whose shape is
    /// not worth keeping (too large, or not callable somewhere).
    fn meta_shape(&self, g: Cell, shape: &mut Vec<Shape>, args: &mut Vec<Cell>) -> bool {
        let mut stack = vec![g];
        while let Some(t) = stack.pop() {
            if shape.len() > 200 || args.len() > 200 {
                return false;
            }
            match self.store.deref(t) {
                Cell::Atom(a) => shape.push((a, 0, false)),
                Cell::Str(p) => {
                    let Cell::Fun(f, n) = self.store.heap[p] else { unreachable!("Str points at Fun") };
                    let control = matches!(
                        self.db.get(f, n),
                        Some(Entry::Control(
                            Control::Conj | Control::Disj | Control::IfThen | Control::SoftIf | Control::Not
                        ))
                    );
                    shape.push((f, n, control));
                    let kids = &self.store.heap[p + 1..p + 1 + n as usize];
                    if control {
                        stack.extend(kids.iter().rev());
                    } else {
                        args.extend_from_slice(kids);
                    }
                }
                v @ Cell::Ref(_) => {
                    shape.push((atom::CALL, 1, false));
                    args.push(v);
                }
                _ => return false,
            }
        }
        true
    }

    /// Compiles the general clause of a goal shape with `n` arguments.
    fn meta_compile(&mut self, g: Cell, shape: &[Shape], n: usize) -> Result<ClauseCode, Exc> {
        let mark = self.store.heap.len();
        let vars: Vec<Cell> = (0..n).map(|_| self.store.new_var()).collect();
        // Built from the last node back, so each control construct finds
        // its parts on the stack in order.
        let mut next = n;
        let mut parts: Vec<Cell> = Vec::new();
        for &(f, k, control) in shape.iter().rev() {
            let k = k as usize;
            let t = if control {
                let kids: Vec<Cell> = (0..k).map(|_| parts.pop().expect("a part")).collect();
                self.store.new_struct(f, &kids)
            } else if k == 0 {
                Cell::Atom(f)
            } else {
                next -= k;
                self.store.new_struct(f, &vars[next..next + k])
            };
            parts.push(t);
        }
        let body = parts.pop().expect("the goal");
        let head = self.store.new_struct(atom::MC, &vars);
        let clause = self.store.new_struct(atom::NECK, &[head, body]);
        let compiled = crate::engine::compile::compile_clause(&mut self.store, clause, None);
        // Nothing refers to the general clause built here.
        self.store.heap.truncate(mark);
        compiled.map_err(|_| {
            self.context = (atom::CALL, 1);
            self.type_error(atom::CALLABLE, g)
        })
    }

    /// `findall/3,4`, `catch/3`, `throw/1`, `halt/0,1` on the argument
    /// registers (CP is the continuation).
    fn vm_control(&mut self, c: Control) -> Go {
        let x = |m: &Machine, i: usize| m.vm.x[i];
        match c {
            Control::Findall | Control::Findall4 => {
                let (template, goal, result) = (x(self, 0), x(self, 1), x(self, 2));
                let four = c == Control::Findall4;
                let tail = if four { x(self, 3) } else { Cell::Atom(atom::NIL) };
                self.check_callable_ctx(goal, atom::FINDALL, if four { 4 } else { 3 })?;
                let cont = self.vm.cp;
                let bag = self.findall_bag(result, tail, four, cont)?;
                self.push_frame(2, cont, false);
                *self.y(0) = template;
                *self.y(1) = Cell::Int(bag as i64);
                self.vm.cp = Cont::start(&self.vm.fa_code);
                self.vm.b0 = self.choices.len() as u32;
                self.vm_meta(goal, &[])
            }
            Control::Sample => {
                let (template, goal, result) = (x(self, 0), x(self, 1), x(self, 2));
                self.check_callable_ctx(goal, atom::SAMPLE, 3)?;
                let bag = self.bag_new();
                let cont = self.vm.cp;
                self.vm_push_choice(Alt::Sample { bag: bag as u32, result }, cont, 0);
                self.push_frame(3, cont, false);
                *self.y(0) = template;
                *self.y(1) = Cell::Int(bag as i64);
                *self.y(2) = Cell::Int(0);
                self.vm.cp = Cont::start(&self.vm.sample_code);
                self.vm.b0 = self.choices.len() as u32;
                self.vm_meta(goal, &[])
            }
            Control::Catch => {
                let (goal, catcher, recovery) = (x(self, 0), x(self, 1), x(self, 2));
                let h = self.choices.len();
                let cont = self.vm.cp;
                self.vm_push_choice(Alt::Catch { catcher, recovery }, cont, 0);
                self.push_frame(1, cont, true);
                *self.y(0) = Cell::Int(h as i64);
                self.vm.cp = Cont::start(&self.vm.catch_code);
                self.vm_meta(goal, &[])
            }
            Control::Throw => {
                let ball = self.store.deref(x(self, 0));
                if let Cell::Ref(_) = ball {
                    self.context = (atom::THROW, 1);
                    return Err(self.inst_error());
                }
                match self.store.copy_out(ball, &mut Vec::new()) {
                    Ok(t) => Err(Exc::Throw(t)),
                    Err(_) => {
                        self.context = (atom::THROW, 1);
                        Err(self.cyclic_error())
                    }
                }
            }
            Control::Halt0 => Err(Exc::Halt(0)),
            Control::Halt1 => match self.store.deref(x(self, 0)) {
                Cell::Int(i) => Err(Exc::Halt(i as i32)),
                Cell::Ref(_) => {
                    self.context = (atom::HALT, 1);
                    Err(self.inst_error())
                }
                other => {
                    self.context = (atom::HALT, 1);
                    Err(self.type_error(atom::INTEGER, other))
                }
            },
            _ => unreachable!("inline control {c:?} is compiled, not called"),
        }
    }

    /// Starts a `findall/3,4`: checks its result list, makes a bag and
    /// pushes the choice point that, once the goal is exhausted, unifies
    /// the bag's list (ending in `tail`) with `result` and goes on at
    /// `cont`. The bag's number.
    fn findall_bag(&mut self, result: Cell, tail: Cell, four: bool, cont: Cont) -> Result<usize, Exc> {
        self.check_partial_list(result, atom::FINDALL, if four { 4 } else { 3 })?;
        let bag = self.bag_new();
        self.vm_push_choice(Alt::Findall { bag: bag as u32, result, tail }, cont, 0);
        Ok(bag)
    }

    /// Backtracks to the newest choice point: where to continue, or `None`
    /// when there is none left.
    fn vm_backtrack(&mut self) -> Go {
        loop {
            let Some(idx) = self.restore_top() else {
                return Ok(None);
            };
            // Where a resumed builtin or branch continues (not needed to
            // retry a clause, the common case).
            let cont = |m: &Machine| m.choices[idx].vm.cont;
            match &mut self.choices[idx].alt {
                Alt::VmClauses { clauses, cands, next } => {
                    let i = *next;
                    let (c, last) = match cands {
                        Some(cands) => (cands[i] as usize, i + 1 >= cands.len()),
                        None => (i, i + 1 >= clauses.len()),
                    };
                    if !last {
                        *next = i + 1;
                    }
                    let code = Cont::start(compiled(&self.db, &clauses[c], &mut self.vm));
                    if last {
                        self.pop_choice();
                    }
                    self.vm.b0 = idx as u32;
                    return Ok(Some(code));
                }
                Alt::Else => {
                    let c = cont(self);
                    self.pop_choice();
                    return Ok(Some(c));
                }
                Alt::Catch { .. } | Alt::Dead => self.pop_choice(),
                Alt::Findall { bag, result, tail } => {
                    let (bag, result, tail) = (*bag, *result, *tail);
                    let c = cont(self);
                    self.pop_choice();
                    let list = self.bag_list(bag as usize, tail)?;
                    if self.store.unify(list, result) {
                        return Ok(Some(c));
                    }
                }
                Alt::Sample { bag, result } => {
                    let (bag, result) = (*bag, *result);
                    let c = cont(self);
                    self.pop_choice();
                    if let Some(v) = self.bag_first(bag as usize)
                        && self.store.unify(v, result)
                    {
                        return Ok(Some(c));
                    }
                }
                Alt::Member { x, at } => {
                    // The choice point stays while a later element may
                    // unify too.
                    let (x, p) = (*x, *at);
                    let c = cont(self);
                    let probe = self.store.probe(x);
                    match self.next_member(&probe, self.store.at(p + 1)) {
                        Some(next) => {
                            if let Alt::Member { at, .. } = &mut self.choices[idx].alt {
                                *at = next;
                            }
                        }
                        None => self.pop_choice(),
                    }
                    if self.store.unify(x, self.store.at(p)) {
                        return Ok(Some(c));
                    }
                }
                Alt::Between { var, next, hi } => {
                    let (var, mut v, mut hi) = (*var, *next, *hi);
                    let c = cont(self);
                    // A board scan skips the squares that cannot match.
                    match self.between_scan(var, c, v, hi) {
                        Some((None, _)) => {
                            self.pop_choice();
                            continue;
                        }
                        Some((Some(found), last)) => (v, hi) = (found, last),
                        None => {}
                    }
                    if v < hi {
                        if let Alt::Between { next, hi: h, .. } = &mut self.choices[idx].alt {
                            (*next, *h) = (v + 1, hi);
                        }
                    } else {
                        self.pop_choice();
                    }
                    if self.store.unify_const(var, Cell::Int(v)) {
                        return Ok(Some(c));
                    }
                }
                Alt::Facts { t, next } => {
                    let (t, from) = (Rc::as_ptr(t), *next as usize);
                    let c = cont(self);
                    // SAFETY: the table is the `Facts` instruction's, in
                    // the code the choice point goes on in; code is freed
                    // only at a call (`sweep_codes`), and `facts_from`
                    // makes none (it may drop the choice point's `Rc`).
                    if self.facts_from(unsafe { &*t }, idx, from) {
                        return Ok(Some(c));
                    }
                }
                Alt::Unify { alts, next } => {
                    let (alts, i) = (alts.clone(), *next);
                    let last = i + 1 >= alts.len();
                    if !last {
                        *next = i + 1;
                    }
                    let c = cont(self);
                    if last {
                        self.pop_choice();
                    }
                    if alts[i].iter().all(|&(a, b)| self.store.unify(a, b)) {
                        return Ok(Some(c));
                    }
                }
                Alt::ClauseIter(_) => {
                    let c = cont(self);
                    if crate::engine::builtins::resume_clause_iter(self)? {
                        return Ok(Some(c));
                    }
                }
            }
        }
    }

    /// Restores what the newest choice point saved (the trail undone, the
    /// heap cut back, the frame, continuation, cut barrier and registers):
    /// its index, or `None` when there is none.
    #[inline(always)]
    fn restore_top(&mut self) -> Option<usize> {
        let top = self.choices.last()?;
        self.store.undo_to(top.trail);
        self.store.heap.truncate(top.heap);
        let s = &top.vm;
        self.vm.e = s.e;
        self.vm.ybase = self.vm.envs[s.e as usize].ys;
        self.vm.cp = s.cp;
        self.vm.b0 = s.b0;
        let (r, n) = (s.regs as usize, s.nregs as usize);
        restore_regs(&mut self.vm.x, &self.vm.saved[r..r + n]);
        Some(self.choices.len() - 1)
    }

    /// A failure in native code that goes on where a call of the table
    /// of facts `t` goes on (see `native::facts_again`): where the newest
    /// choice point is that call's (`Alt::Facts` of `t`, made in the
    /// current frame), it is resumed as backtracking would resume it, and
    /// true if a fact unified; false to backtrack.
    #[cfg_attr(not(feature = "native"), allow(dead_code))]
    pub(crate) fn facts_again(&mut self, t: *const super::Facts) -> bool {
        let Some(top) = self.choices.last() else { return false };
        let Alt::Facts { t: ref mine, next } = top.alt else { return false };
        if !std::ptr::eq(Rc::as_ptr(mine), t) || top.vm.e != self.vm.e {
            return false;
        }
        let idx = self.restore_top().expect("a choice point");
        // SAFETY: `t` is the running code's table (see `vm_backtrack`).
        self.facts_from(unsafe { &*t }, idx, next as usize)
    }

    /// Handles an exception: unwinds to the newest active `catch/3` whose
    /// catcher unifies with the ball and calls its recovery. `Err` when no
    /// catch takes it.
    fn vm_handle(&mut self, e: Exc) -> Result<Option<Cont>, Exc> {
        let mut e = e;
        loop {
            let Exc::Throw(ball) = e else {
                return Err(e);
            };
            // A catch is active while its frame is on the environment chain.
            let mut active = Vec::new();
            let mut k = self.vm.e as usize;
            while k != 0 {
                let env = &self.vm.envs[k];
                if env.catch
                    && let Cell::Int(h) = self.vm.ys[env.ys as usize]
                {
                    active.push(h as usize);
                }
                k = env.ce as usize;
            }
            let mut recovered = None;
            while let Some(cp) = self.choices.pop() {
                self.store.hb = self.choices.last().map_or(0, |c| c.heap);
                match cp.alt {
                    Alt::Findall { bag, .. } | Alt::Sample { bag, .. } => self.bags_truncate(bag as usize),
                    Alt::Catch { catcher, recovery }
                        if active.contains(&self.choices.len()) && self.catches(&cp, catcher, &ball) =>
                    {
                        self.vm.set_e(cp.vm.e);
                        self.vm.cp = cp.vm.cont;
                        recovered = Some(recovery);
                        break;
                    }
                    _ => {}
                }
            }
            let Some(recovery) = recovered else {
                return Err(Exc::Throw(ball));
            };
            match self.vm_meta(recovery, &[]) {
                Err(e2) => e = e2,
                Ok(next) => return Ok(next),
            }
        }
    }

    /// Builds `t.cells[start..end]` on the heap, binding the template's
    /// variables through the registers; returns the root.
    fn build_tm(&mut self, t: &Tm, start: usize, end: usize) -> Cell {
        let base = self.store.heap.len();
        let vm = &mut self.vm;
        // The cells copied in one piece, then the pointers moved and the
        // variables filled in place.
        self.store.heap.extend_from_slice(&t.cells[start..end]);
        for (i, c) in self.store.heap[base..].iter_mut().enumerate() {
            match *c {
                Cell::Ref(code) => {
                    let here = Cell::Ref(base + i);
                    *c = if code & VOID != 0 {
                        here
                    } else if code & FIRST != 0 {
                        *vm.reg(code) = here;
                        here
                    } else {
                        *vm.reg(code)
                    };
                }
                Cell::Str(q) => *c = Cell::Str(q - start + base),
                Cell::Lst(q) => *c = Cell::Lst(q - start + base),
                _ => {}
            }
        }
        if t.lst && start == 0 { Cell::Lst(base) } else { Cell::Str(base) }
    }

    #[inline]
    fn reg(&mut self, code: usize) -> &mut Cell {
        self.vm.reg(code)
    }

    /// Unifies the template `t` with `v`: read mode where the term is
    /// there, building where it meets an unbound variable.
    fn get_term(&mut self, t: &Tm, v: Cell) -> bool {
        let v = self.store.deref(v);
        let mut work = std::mem::take(&mut self.hwork);
        work.clear();
        let ok = 'unify: {
            match v {
                Cell::Ref(r) => {
                    let built = self.build_tm(t, 0, t.cells.len());
                    self.store.bind(r, built);
                    break 'unify true;
                }
                Cell::Lst(q) if t.lst => {
                    work.push((1, self.store.at(q + 1)));
                    work.push((0, self.store.at(q)));
                }
                Cell::Str(q) if !t.lst => {
                    if self.store.at(q) != t.cells[0] {
                        break 'unify false;
                    }
                    let Cell::Fun(_, n) = t.cells[0] else { unreachable!("a structure template") };
                    for k in (1..=n as usize).rev() {
                        work.push((k, self.store.at(q + k)));
                    }
                }
                _ => break 'unify false,
            }
            while let Some((ti, h)) = work.pop() {
                match t.cells[ti] {
                    Cell::Ref(code) => {
                        if code & VOID != 0 {
                        } else if code & FIRST != 0 {
                            *self.reg(code) = h;
                        } else {
                            let r = *self.reg(code);
                            if !self.store.unify(r, h) {
                                break 'unify false;
                            }
                        }
                    }
                    Cell::Str(p) => match self.store.deref(h) {
                        Cell::Ref(r) => {
                            let built = self.build_sub(t, ti, p);
                            self.store.bind(r, built);
                        }
                        Cell::Str(q) => {
                            if self.store.at(q) != t.cells[p] {
                                break 'unify false;
                            }
                            let Cell::Fun(_, n) = t.cells[p] else { unreachable!() };
                            for k in (1..=n as usize).rev() {
                                work.push((p + k, self.store.at(q + k)));
                            }
                        }
                        _ => break 'unify false,
                    },
                    Cell::Lst(p) => match self.store.deref(h) {
                        Cell::Ref(r) => {
                            let built = self.build_sub(t, ti, p);
                            self.store.bind(r, built);
                        }
                        Cell::Lst(q) => {
                            work.push((p + 1, self.store.at(q + 1)));
                            work.push((p, self.store.at(q)));
                        }
                        _ => break 'unify false,
                    },
                    c => {
                        let h = self.store.deref(h);
                        match h {
                            Cell::Ref(r) => self.store.bind(r, c),
                            _ => {
                                if h != c && !self.store.unify(h, c) {
                                    break 'unify false;
                                }
                            }
                        }
                    }
                }
            }
            true
        };
        self.hwork = work;
        ok
    }

    /// Builds the substructure that template cell `ti` points at (`p`).
    fn build_sub(&mut self, t: &Tm, ti: usize, p: usize) -> Cell {
        let end = t.ends[ti] as usize;
        let base = self.store.heap.len();
        let lst = matches!(t.cells[ti], Cell::Lst(_));
        self.build_tm(t, p, end);
        if lst { Cell::Lst(base) } else { Cell::Str(base) }
    }

    /// Frees the code of clauses that are gone (retracted, abolished, or
    /// a meta-call shape dropped from the cache: only `Vm::codes` holds
    /// it) and that no continuation points into. With `none_live`, no
    /// continuation is left (a query starts); else every one is in CP, the
    /// builtin continuation, a frame or a choice point (frames above the
    /// live ones count too: a stale pointer only keeps code a while).
    pub(crate) fn sweep_codes(&mut self, none_live: bool) {
        let vm = &mut self.vm;
        // With no continuation, every code whose clause is gone goes: a
        // query's start need not sweep again until another is dropped.
        // (Read first: a clause dropped during the sweep is seen then.)
        if none_live {
            vm.released = crate::engine::db::CODES_RELEASED.load(std::sync::atomic::Ordering::Relaxed);
        }
        let mut conts: Vec<usize> = Vec::new();
        if !none_live {
            conts.extend([vm.cp.addr(), vm.cont.addr()]);
            for env in &vm.envs {
                conts.push(env.cp.addr());
                conts.extend(env.ret.map(Cont::addr));
            }
            for c in &self.choices {
                conts.extend([c.vm.cp.addr(), c.vm.cont.addr()]);
            }
            conts.sort_unstable();
        }
        vm.codes.retain(|code| {
            if Rc::strong_count(code) > 1 {
                return true;
            }
            let start = Cont::start(code).addr();
            let end = start + std::mem::size_of_val::<[Instr]>(code);
            let i = conts.partition_point(|&a| a < start);
            i < conts.len() && conts[i] < end
        });
        vm.sweep_at = (2 * vm.codes.len()).max(super::SWEEP_MIN);
    }

    /// Garbage collection at a call with `n` argument registers live.
    fn vm_gc(&mut self, n: usize) {
        // Live frames: reachable from E and from every choice point.
        let mut live = vec![false; self.vm.envs.len()];
        let mut starts: Vec<u32> = vec![self.vm.e];
        starts.extend(self.choices.iter().map(|c| c.vm.e));
        for s in starts {
            let mut k = s as usize;
            while k < live.len() && !live[k] {
                live[k] = true;
                k = self.vm.envs[k].ce as usize;
            }
        }
        let mut roots: Vec<Cell> = self.vm.x[..n].to_vec();
        let mut slots = Vec::new();
        for (k, env) in self.vm.envs.iter().enumerate() {
            if live[k] {
                for i in env.ys..env.ys + env.n {
                    slots.push(i as usize);
                    roots.push(self.vm.ys[i as usize]);
                }
            }
        }
        let nroots = self.roots.len();
        roots.extend_from_slice(&self.roots);
        crate::engine::gc::compact(self, &mut roots);
        self.vm.x[..n].copy_from_slice(&roots[..n]);
        for (j, &i) in slots.iter().enumerate() {
            self.vm.ys[i] = roots[n + j];
        }
        let from = roots.len() - nroots;
        self.roots.copy_from_slice(&roots[from..]);
    }
}

/// Appends registers `X0..Xn` to `saved`. A choice point saves few (a
/// call's arguments): fixed-size copies for up to four, where a copy of any
/// length is a call to `memcpy`.
#[inline(always)]
fn save_regs(saved: &mut Vec<Cell>, x: &[Cell], n: usize) {
    let x = &x[..n];
    saved.reserve(n);
    let len = saved.len();
    let dst = &mut saved.spare_capacity_mut()[..n];
    match n {
        0 => {}
        1 => copy_cells::<1>(dst, x),
        2 => copy_cells::<2>(dst, x),
        3 => copy_cells::<3>(dst, x),
        4 => copy_cells::<4>(dst, x),
        _ => {
            for (d, &c) in dst.iter_mut().zip(x) {
                d.write(c);
            }
        }
    }
    // SAFETY: the `n` cells above `len` were just written.
    #[allow(unsafe_code)]
    unsafe {
        saved.set_len(len + n)
    };
}

/// Writes the first `N` cells of `x` into the start of `dst`.
#[inline(always)]
fn copy_cells<const N: usize>(dst: &mut [std::mem::MaybeUninit<Cell>], x: &[Cell]) {
    let d: &mut [std::mem::MaybeUninit<Cell>; N] = (&mut dst[..N]).try_into().expect("N cells");
    let x: &[Cell; N] = x[..N].try_into().expect("N cells");
    for (d, &c) in d.iter_mut().zip(x) {
        d.write(c);
    }
}

/// Puts saved registers back into `X0...` (see `save_regs`).
#[inline(always)]
fn restore_regs(x: &mut [Cell], saved: &[Cell]) {
    match saved.len() {
        0 => {}
        1 => x[0] = saved[0],
        2 => x[..2].copy_from_slice(&saved[..2]),
        3 => x[..3].copy_from_slice(&saved[..3]),
        4 => x[..4].copy_from_slice(&saved[..4]),
        n => x[..n].copy_from_slice(saved),
    }
}

/// Whether a call with arguments `x` that enters `clause` first (of
/// more than one candidate) would keep no other: the clause starts its body
/// with a cut and its head matches these arguments whatever they are bound
/// to (see `ClauseCode::neck`), so the cut would remove the choice point
/// for the other candidates before anything could try them.
#[inline]
fn neck_cut_enters(store: &crate::engine::term::Store, x: &[Cell], clause: &ClauseCode) -> bool {
    let Some(mask) = clause.neck else { return false };
    // The arguments where the head could fail: distinct unbound variables.
    let (mut seen, mut n, mut m) = ([0usize; 5], 0, mask);
    if let Some(k) = clause.key {
        match store.deref(x[0]) {
            // The head binds it: one of the distinct variables (`p(V, V)`
            // against `p(a, b) :- !` fails at the second argument).
            Cell::Ref(r) => (seen[0], n) = (r, 1),
            // The candidates may have come from another argument's index.
            a if Key::of(a, &store.heap) != Some(k) => return false,
            _ => {}
        }
    }
    while m != 0 {
        let k = m.trailing_zeros() as usize;
        m &= m - 1;
        let Cell::Ref(r) = store.deref(x[k]) else { return false };
        if seen[..n].contains(&r) {
            return false;
        }
        seen[n] = r;
        n += 1;
    }
    true
}

/// The code of a clause, compiled on its first use (the registers grow to
/// what it needs): its native code once it is hot, else the code the
/// interpreter runs, which counts the calls until then (`Instr::Warm`)
/// where the clause is to get native code.
#[inline(always)]
fn compiled<'a>(db: &crate::engine::db::Db, clause: &'a ClauseCode, vm: &mut super::Vm) -> &'a Code {
    if let Some(code) = clause.hot.get() {
        return code;
    }
    if let Some(code) = clause.vm.get() {
        return code;
    }
    let mut code = clause_instrs(db, clause, &mut vm.x, &mut vm.codes);
    // Only a clause read from a program's text: an asserted one may be
    // retracted, and its native code would stay as long as the machine.
    if clause.span.is_some()
        && let Some(native) = vm.native.as_mut().filter(|n| n.on)
    {
        if native.after == 0 {
            native.lower(&mut code, self_loop(db, clause));
            return keep(vm, &clause.hot, code);
        }
        let warm = super::Warm { left: std::cell::Cell::new(native.after), clause };
        code.insert(0, Instr::Warm(Box::new(warm)));
    }
    keep(vm, &clause.vm, code)
}

/// Whether `clause` may go round itself in native code (see `Loop`): its
/// first argument is a list cell, and no other clause of its predicate
/// (static) has a variable or a list cell there, so that a call with a
/// list cell there enters this clause alone, with no choice point. The
/// predicate is marked as one whose change moves `inline_epoch` on, which
/// the loop checks. (Whether the clause's code is one run and a last call
/// of the predicate is `Native::lower`'s to see.)
fn self_loop(db: &crate::engine::db::Db, clause: &ClauseCode) -> Option<super::Loop> {
    use crate::engine::db::{Entry, Key};
    if clause.key != Some(Key::Lst) {
        return None;
    }
    let Cell::Str(h) = clause.tmpl.cells[2] else { return None };
    let Cell::Fun(f, n) = clause.tmpl.cells[h] else { return None };
    let Some(Entry::User(i)) = db.get(f, n) else { return None };
    let p = &db.preds[i];
    let me = |c: &Rc<ClauseCode>| std::ptr::eq(Rc::as_ptr(c), clause);
    if p.dynamic || !p.clauses.iter().any(me) {
        return None;
    }
    if !p.clauses.iter().all(|c| me(c) || c.key.is_some_and(|k| k != Key::Lst)) {
        return None;
    }
    p.inlined.set(true);
    Some(super::Loop { pred: i as u32, epoch: Rc::as_ptr(&db.inline_epoch), at: db.inline_epoch.get() })
}

/// The code a clause runs (compiled now if it is not yet), for tests.
#[cfg(test)]
pub(crate) fn clause_code_for_test(m: &mut Machine, clause: &ClauseCode) -> Code {
    compiled(&m.db, clause, &mut m.vm).clone()
}

/// A clause's instructions, the registers grown to what they need. A
/// clause read from a program's text has the calls it may unfold
/// unfolded and the small fact tables it calls looked up in place (see
/// `unfold`), behind a `Guard` holding its code made without either (kept
/// in `codes` too, for the continuations into it).
fn clause_instrs(
    db: &crate::engine::db::Db,
    clause: &ClauseCode,
    x: &mut super::Regs,
    codes: &mut Vec<Code>,
) -> Vec<Instr> {
    let t = &clause.tmpl;
    let on = clause.span.is_some() && !db.no_unfold;
    let unfolded = if on { super::unfold::unfold(db, clause) } else { None };
    let (mut code, nregs, looked_up) = match &unfolded {
        Some((cells, nvars, len)) => compile_with(db, cells, *nvars, 3, *len, on),
        None => compile_with(db, &t.cells, t.nvars, clause.body_start, clause.body_len, on),
    };
    if unfolded.is_none() && looked_up.is_empty() {
        x.grow(nregs as usize);
        return code;
    }
    for &i in &looked_up {
        db.preds[i].inlined.set(true);
    }
    let (instead, more) = compile(db, &t.cells, t.nvars, clause.body_start, clause.body_len);
    x.grow(nregs.max(more) as usize);
    let instead = super::code(instead);
    codes.push(instead.clone());
    code.insert(0, Instr::Guard(Box::new(super::Guard { epoch: db.inline_epoch.get(), plain: instead })));
    code
}

/// `code` made the clause's, in `cell`, and kept in `Vm::codes`.
fn keep<'a>(vm: &mut super::Vm, cell: &'a std::cell::OnceCell<Code>, code: Vec<Instr>) -> &'a Code {
    let code = super::code(code);
    vm.codes.push(code.clone());
    cell.get_or_init(|| code)
}

/// A binary integer operation; `None` on overflow, a zero divisor or an
/// operator that is not binary (the general builtin then decides).
#[inline(always)]
fn binary(op: AOp, a: i64, b: i64) -> Option<i64> {
    match op {
        AOp::Add => a.checked_add(b),
        AOp::Sub => a.checked_sub(b),
        AOp::Mul => a.checked_mul(b),
        AOp::IntDiv if b != 0 => a.checked_div(b),
        AOp::Mod if b != 0 => {
            let m = a.checked_rem(b)?;
            Some(if m != 0 && ((m < 0) != (b < 0)) { m + b } else { m })
        }
        AOp::Min => Some(a.min(b)),
        AOp::Max => Some(a.max(b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::Engine;

    fn answers(e: &mut Engine, q: &str) -> Vec<String> {
        e.query(q)
            .unwrap()
            .map(|a| a.unwrap().bindings.iter().map(|b| b.text.clone()).collect::<Vec<_>>().join(","))
            .collect()
    }

    /// A clause that cuts at its neck is entered without a choice point
    /// only where its head cannot fail: a bound argument its head may not
    /// match, one unbound variable in two places the head takes apart (the
    /// first argument among them, when the head binds it), or a first
    /// candidate that another argument's index chose (whose first argument
    /// may not match) each keep the other clauses.
    #[test]
    fn a_neck_cut_leaves_the_other_clauses_wherever_the_head_can_fail() {
        let mut e = Engine::new();
        let src = "d(U + V, X, sum(DU, DV)) :- !, d(U, X, DU), d(V, X, DV).\n\
                   d(X, X, 1) :- !.\n\
                   d(_, _, 0).\n\
                   p(a, f(X), g(X)) :- !.\n\
                   p(_, _, _).\n\
                   q(b, _, R) :- !, R = one.\n\
                   q(a, 2, R) :- R = two.\n\
                   q(a, 3, R) :- R = three.\n\
                   q(a, 1, R) :- R = four.\n\
                   r(a, b) :- !.\n\
                   r(_, _).\n";
        assert!(!e.load("t", src).has_errors());
        let neck = |e: &mut Engine, name: &str, clause: usize| {
            let p = e.m.db.pred(e.m.atoms.lookup(name).unwrap(), 3).unwrap();
            p.clauses[clause].neck
        };
        assert_eq!(neck(&mut e, "d", 0), Some(0b100));
        assert_eq!(neck(&mut e, "d", 1), Some(0b110));
        assert_eq!(neck(&mut e, "d", 2), None);
        assert_eq!(neck(&mut e, "p", 0), Some(0b110));
        assert_eq!(neck(&mut e, "q", 0), Some(0));
        // Entered without a choice point (one answer), and with one where
        // the bound output does not match the first clause's head.
        assert_eq!(answers(&mut e, "d(x + y, x, D)"), ["sum(1,0)"]);
        assert_eq!(answers(&mut e, "d(x + y, x, 0)"), [""]);
        assert_eq!(answers(&mut e, "d(x + y, x, sum(1, 1))"), Vec::<String>::new());
        // One variable in both arguments the head takes apart.
        assert_eq!(answers(&mut e, "aggregate_all(count, p(a, Z, Z), N)"), ["1"]);
        assert_eq!(answers(&mut e, "p(a, Y, Z)"), ["f(_A),g(_A)"]);
        // An unbound first argument the head binds, in a second place.
        assert_eq!(answers(&mut e, "aggregate_all(count, r(V, V), N)"), ["1"]);
        assert_eq!(answers(&mut e, "r(V, W)"), ["a,b"]);
        // The second argument's index chooses q(b, _, _) first for a.
        assert_eq!(answers(&mut e, "q(a, 1, R)"), ["four"]);
        assert_eq!(answers(&mut e, "q(a, N, R)"), ["2,two", "3,three", "1,four"]);
        assert_eq!(answers(&mut e, "q(b, 7, R)"), ["one"]);
        assert_eq!(answers(&mut e, "q(X, 7, R)"), ["b,one"]);
    }

    /// `random_between/3` in a clause draws in the run loop, and draws
    /// what the builtin (called as a goal) draws from the same seed, one
    /// draw a call: into a variable met first there, an argument, one
    /// bound to an integer or to an atom (left to the builtin, which
    /// fails), an empty range (no draw), and the builtin's error for a
    /// bound that is no integer.
    #[test]
    fn a_draw_in_the_run_loop_is_the_builtins() {
        let mut e = Engine::new();
        let src = "fast(L, H, X) :- random_between(L, H, X).\n\
                   old(L, H, X) :- Y = X, random_between(L, H, Y).\n\
                   new(L, H, Y) :- random_between(L, H, X), Y = X.\n\
                   draws(G, Xs) :- findall(X, (between(1, 40, _), call(G, X)), Xs).\n\
                   after(G, X) :- ( call(G) -> true ; true ), random_between(1, 1000, X).\n";
        assert!(!e.load("t", src).has_errors());
        let fast = answers(&mut e, "set_random(seed(5)), draws(fast(1, 6), Xs)");
        let slow = answers(&mut e, "set_random(seed(5)), draws(random_between(1, 6), Xs)");
        let new = answers(&mut e, "set_random(seed(5)), draws(new(1, 6), Xs)");
        assert_eq!(fast, slow);
        assert_eq!(new, slow);
        assert_eq!(fast[0].matches(',').count(), 39, "{fast:?}");
        assert_eq!(answers(&mut e, "fast(3, 1, X)"), Vec::<String>::new());
        assert_eq!(answers(&mut e, "old(1, 1, 1)"), [""]);
        assert_eq!(answers(&mut e, "old(1, 1, 2)"), Vec::<String>::new());
        for (ours, builtin) in
            [("old(1, 6, a)", "random_between(1, 6, a)"), ("fast(3, 1, _)", "random_between(3, 1, _)")]
        {
            let a = answers(&mut e, &format!("set_random(seed(9)), after({ours}, X)"));
            let b = answers(&mut e, &format!("set_random(seed(9)), after({builtin}, X)"));
            assert_eq!(a, b, "{ours}");
        }
        assert_eq!(answers(&mut e, "catch(fast(a, 6, X), error(E, _), true)"), ["type_error(integer,a)"]);
    }

    /// A chain of operators (`(I - 1) mod C + 1`) is evaluated left to
    /// right, as the tree would be; where an operator fails (a zero
    /// divisor, an overflow) the general builtin raises its error.
    #[test]
    fn a_chain_of_operators_is_the_expression_it_flattens() {
        let mut e = Engine::new();
        let src = "sq(I, C, X, Y, J) :- X is (I - 1) mod C + 1, Y is (I - 1) // C + 1, J is (Y - 1) * C + X - 2 * 1.\n\
                   zero(A, X) :- X is (A - 1) mod 0 + 1.\n\
                   big(A, X) :- X is A - 1 + 1 + 1.\n\
                   below(A, B) :- (A - 1) * 2 + 1 < B.\n";
        assert!(!e.load("t", src).has_errors());
        assert_eq!(answers(&mut e, "sq(7, 3, X, Y, J)"), ["1,3,5"]);
        assert_eq!(answers(&mut e, "sq(-7, 3, X, Y, J)"), ["2,-1,-6"]);
        assert_eq!(answers(&mut e, "catch(zero(3, X), error(E, _), true)"), ["evaluation_error(zero_divisor)"]);
        let max = i64::MAX;
        assert_eq!(
            answers(&mut e, &format!("catch(big({max}, X), error(E, _), true)")),
            ["evaluation_error(int_overflow)"]
        );
        assert_eq!(answers(&mut e, "(below(3, 6) -> X = yes ; X = no)"), ["yes"]);
        assert_eq!(answers(&mut e, "(below(3, 5) -> X = yes ; X = no)"), ["no"]);
    }

    /// Comparisons and `is/2` of two leaves run inline (`Arith2`): each
    /// comparison both ways, `is/2` into a new variable, a bound one and a
    /// variable bound by the caller; anything but two integers (a float,
    /// an atom, an overflow) goes to the general builtin, as before.
    #[test]
    fn arithmetic_on_two_leaves_is_the_builtins() {
        let mut e = Engine::new();
        let src = "cmp(A, B, L) :- findall(O, ((A < B, O = lt) ; (A > B, O = gt) ; (A =< B, O = le) ; \
                   (A >= B, O = ge) ; (A =:= B, O = eq) ; (A =\\= B, O = ne)), L).\n\
                   add(A, B, C) :- C is A + B.\n\
                   new(A, C) :- X is A - 1, C = X.\n\
                   same(A, B) :- X = B, X is A.\n\
                   lim(A) :- A >= 1, A =< 8.\n";
        assert!(!e.load("t", src).has_errors());
        assert_eq!(answers(&mut e, "cmp(1, 2, L)"), ["[lt,le,ne]"]);
        assert_eq!(answers(&mut e, "cmp(2, 2, L)"), ["[le,ge,eq]"]);
        assert_eq!(answers(&mut e, "cmp(3, 2, L)"), ["[gt,ge,ne]"]);
        assert_eq!(answers(&mut e, "cmp(1.5, 2, L)"), ["[lt,le,ne]"]);
        assert_eq!(answers(&mut e, "add(2, 3, C)"), ["5"]);
        assert_eq!(answers(&mut e, "(add(2, 3, 5) -> X = yes ; X = no)"), ["yes"]);
        assert_eq!(answers(&mut e, "(add(2, 3, 6) -> X = yes ; X = no)"), ["no"]);
        assert_eq!(answers(&mut e, "add(2, 0.5, C)"), ["2.5"]);
        assert_eq!(answers(&mut e, "new(10, C)"), ["9"]);
        assert_eq!(answers(&mut e, "(same(4, 4) -> X = yes ; X = no)"), ["yes"]);
        assert_eq!(answers(&mut e, "(same(4, 5) -> X = yes ; X = no)"), ["no"]);
        assert_eq!(answers(&mut e, "findall(A, (member(A, [0, 1, 5, 8, 9]), lim(A)), L)"), ["[1,5,8]"]);
        assert_eq!(answers(&mut e, "catch(add(a, 1, C), error(E, _), true)"), ["type_error(evaluable,a/0)"]);
        let max = i64::MAX;
        assert_eq!(
            answers(&mut e, &format!("catch(add({max}, 1, C), error(E, _), true)")),
            ["evaluation_error(int_overflow)"]
        );
    }

    #[test]
    fn code_of_retracted_clauses_is_freed_once_nothing_runs_it() {
        let mut e = Engine::new();
        let src = ":- dynamic(f/1).\n\
                   churn(0) :- !.\n\
                   churn(N) :- assertz(f(N)), f(N), retract(f(N)), N1 is N - 1, churn(N1).\n";
        assert!(!e.load("t", src).has_errors());
        // Each f(N) is compiled when called, then retracted.
        assert_eq!(answers(&mut e, "churn(5000), X = done"), ["done"]);
        let during = e.m.vm.codes.len();
        assert!(during <= 2 * super::super::SWEEP_MIN + 16, "codes kept during the loop: {during}");
        // A new query starts with no continuation: only live clauses' code.
        assert_eq!(answers(&mut e, "X = 1"), ["1"]);
        assert!(e.m.vm.codes.len() <= 4, "codes kept: {}", e.m.vm.codes.len());
    }

    #[test]
    fn a_clause_that_retracts_itself_runs_to_its_end() {
        let mut e = Engine::new();
        let src = ":- dynamic(g/1).\n\
                   g(X) :- retract((g(_) :- _)), garbage_collect, atom_length(abc, L), pad(L), X = L.\n\
                   pad(0) :- !.\n\
                   pad(N) :- assertz(h(N)), h(N), retract(h(N)), N1 is N - 1, pad(N1).\n\
                   :- dynamic(h/1).\n\
                   many(0) :- !.\n\
                   many(N) :- assertz(h(N)), h(N), retract(h(N)), N1 is N - 1, many(N1).\n";
        assert!(!e.load("t", src).has_errors());
        // The sweeps during many/1 run while g/1's code is gone from the
        // database but still running.
        assert_eq!(answers(&mut e, "g(X), many(3000)"), ["3"]);
        assert!(answers(&mut e, "g(_)").is_empty());
    }

    #[test]
    fn the_switch_on_the_first_argument_follows_changes_to_the_clauses() {
        let mut e = Engine::new();
        let src = ":- dynamic(p/2).\np([_|_], list).\np([], nil).\none(x, only).\n";
        assert!(!e.load("t", src).has_errors());
        // Each class of first argument, taken from the switch once its
        // clause's code is recorded; a variable tries both clauses.
        let q = "findall(W, p([a], W), A), findall(W, p([], W), B), findall(W, p(_, W), C), findall(W, one(x, W), D)";
        for _ in 0..2 {
            assert_eq!(answers(&mut e, q), ["[list],[nil],[list,nil],[only]"]);
        }
        // A clause added, then removed: the list class leaves two clauses,
        // then the first is gone.
        assert_eq!(answers(&mut e, "assertz(p([_], one)), findall(W, p([a], W), A)"), ["[list,one]"]);
        assert_eq!(answers(&mut e, "retract(p([_|_], list)), findall(W, p([a], W), A)"), ["[one]"]);
        assert_eq!(answers(&mut e, "findall(W, p([a, b], W), A), findall(W, p([], W), B)"), ["[],[nil]"]);
        assert_eq!(answers(&mut e, "retract(p([], nil)), findall(W, p([], W), B)"), ["[]"]);
    }

    #[test]
    fn a_predicate_whose_calls_take_every_clause_follows_changes_to_them() {
        let mut e = Engine::new();
        // No first argument to index on: each call tries every clause.
        let src = ":- dynamic(r/2).\nr(X, Y) :- Y = X - a.\nr(X, Y) :- Y = X - b.\n";
        assert!(!e.load("t", src).has_errors());
        for _ in 0..2 {
            assert_eq!(answers(&mut e, "findall(Y, r(1, Y), L)"), ["[1-a,1-b]"]);
        }
        // The logical update view: a call sees the clauses of its start.
        assert_eq!(answers(&mut e, "findall(Y, (r(2, Y), assertz((r(Z, W) :- W = Z - c))), L)"), ["[2-a,2-b]"]);
        assert_eq!(answers(&mut e, "findall(Y, r(3, Y), L)"), ["[3-a,3-b,3-c,3-c]"]);
        // The first clause gone: a call starts at the new first.
        assert_eq!(answers(&mut e, "retract((r(_, _) :- _ = _ - a)), findall(Y, r(4, Y), L)"), ["[4-b,4-c,4-c]"]);
        // A clause with a key: the calls are indexed again.
        assert_eq!(
            answers(&mut e, "asserta(r(5, five)), findall(Y, r(5, Y), A), findall(Y, r(6, Y), B)"),
            ["[five,5-b,5-c,5-c],[6-b,6-c,6-c]"]
        );
    }
}
