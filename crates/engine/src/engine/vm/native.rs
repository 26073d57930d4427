//! Native code for runs of simple instructions, beside the interpreter
//! (on by default; `TABULA_NATIVE=0` in the environment, or a host's
//! `Engine::set_native(false)`, turns it off). See "Native code" in
//! `crates/engine/src/engine/README.md`.
//!
//! When a clause is compiled, each run of instructions this module can
//! translate (moves between registers and slots, constants, integer
//! arithmetic and comparisons, type tests, `==`) becomes one function
//! made with Cranelift. The run's first instruction is replaced by
//! `Instr::Native`, which calls the function; the others stay where they
//! were, so a jump into the middle of a run, and whatever the function
//! leaves to the interpreter, runs them as before. The function returns
//! where the interpreter goes on, counted from the run's first
//! instruction, or `BACKTRACK`.

use super::{
    AOp, ArgDst, ArgFast, Arith2, Arith2Op, Facts, GROW, INDEX, Instr, IsChain, Loop, NativeRun, Opd, PERM, RunFn,
    TestFast, TestOp, TypeTest,
};
use crate::engine::atoms::{Atom, atom};
use crate::engine::machine::Machine;
use crate::engine::stack;
use crate::engine::term::Cell;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{AbiParam, Block, InstBuilder, MemFlagsData, Signature, UserFuncName, Value};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};
use std::cmp::Ordering;
use std::rc::Rc;

/// The run's function returns it to backtrack.
pub const BACKTRACK: i64 = -1;

/// `Instr::Facts` with its first argument unbound, from native code: the
/// choice point and the first fact that unifies
/// (`Machine::facts_first`), the choice point resuming at instruction `to`
/// of the run being run (counted from its first, `Vm::run_at`). 1 if a
/// fact unified, else 0.
///
/// # Safety
/// Called by the native code of a run, with its machine and a table of
/// its code's (alive as long as the code).
unsafe extern "C" fn facts_first(m: *mut Machine, t: *const Facts, to: i64) -> i64 {
    // SAFETY: as the caller promises; the table's `Rc` is the code's,
    // borrowed (not dropped) here.
    let (m, t) = unsafe { (&mut *m, std::mem::ManuallyDrop::new(Rc::from_raw(t))) };
    // SAFETY: `to` is an instruction of the run's code (the table's
    // `done`, a jump inside it).
    let cont = unsafe { m.vm.run_at.add(to as usize) };
    i64::from(m.facts_first(&t, cont))
}

/// `random_between/3`'s draw from native code: an integer in `a..=b`
/// (`a <= b`) from the machine's generator, as the interpreter draws it.
///
/// # Safety
/// Called by the native code of a run, with its machine.
unsafe extern "C" fn random_draw(m: *mut Machine, a: i64, b: i64) -> i64 {
    // SAFETY: as the caller promises.
    let m = unsafe { &mut *m };
    rand::Rng::gen_range(&mut m.rng, a..=b)
}

/// A failure in a run that starts where a call of table `t` goes on
/// (`Machine::facts_again`): 1 where that call's choice point was resumed
/// and a fact unified (the run starts again), else 0 (to backtrack).
///
/// # Safety
/// Called by the native code of a run, with its machine.
unsafe extern "C" fn facts_again(m: *mut Machine, t: *const Facts) -> i64 {
    // SAFETY: as the caller promises.
    let m = unsafe { &mut *m };
    i64::from(m.facts_again(t))
}

/// `arg/3`'s argument at heap address `at` unified with register code
/// `code`'s cell, where that is more than a binding or a comparison of
/// constants (compound terms, floats, strings): as the interpreter's
/// `arg_fast` unifies them. 1 if they unified, else 0.
///
/// # Safety
/// Called by the native code of a run, with its machine, a heap address
/// and a register code of the running clause.
unsafe extern "C" fn arg_unify(m: *mut Machine, at: i64, code: i64) -> i64 {
    // SAFETY: as the caller promises.
    let m = unsafe { &mut *m };
    let (r, v) = (*m.vm.reg(code as usize), m.store.at(at as usize));
    i64::from(m.store.unify(r, v))
}

// The cell layout the native code reads and writes (`Cell` is
// `repr(u32)`: a 32-bit tag, then the fields of its variant laid out as a
// C struct would, so a 32-bit payload at 4 and a 64-bit one at 8). The
// tags are those of `Cell::words`.
const fn tag(c: Cell) -> i64 {
    c.words()[0] as i64 & 0xffff_ffff
}
const REF: i64 = tag(Cell::Ref(0));
const ATOM: i64 = tag(Cell::Atom(Atom(0)));
const INT: i64 = tag(Cell::Int(0));
const FLT: i64 = tag(Cell::Flt(0.0));
const STR: i64 = tag(Cell::Str(0));
const LST: i64 = tag(Cell::Lst(0));
const TEXT: i64 = tag(Cell::Text(0));

/// A cell as the two words the native code sees ([`Cell::words`]).
pub(crate) fn words(c: Cell) -> (i64, i64) {
    let [lo, hi] = c.words();
    (lo as i64, hi as i64)
}

/// Whether `ins` may not start a run, which replaces its first
/// instruction (a run hands an instruction back to the interpreter only
/// where it has changed nothing for it; at the run's first instruction,
/// that would be the run's `Native` again):
/// - `GetListValVar`, which hands itself back where the list cell's head
///   and the register are not simple to unify;
/// - a clause's first `GetConst [], 0`, which `Cont::past_nil_test`
///   looks for;
/// - the `Unify*` instructions, whose compound term's `GetStruct` or
///   `PutStruct` (or list) must be in the run (see `lower`).
fn never_first(ins: &Instr) -> bool {
    match ins {
        Instr::GetListValVar(..) | Instr::GetConst(Cell::Atom(atom::NIL), 0) => true,
        i => is_unify(i),
    }
}

/// Whether `ins` fills the next argument of a compound term (in the
/// interpreter's `s` and `wr`).
fn is_unify(ins: &Instr) -> bool {
    matches!(
        ins,
        Instr::UnifyVarX(_)
            | Instr::UnifyVarY(_)
            | Instr::UnifyVarYs(_)
            | Instr::UnifyValX(_)
            | Instr::UnifyValY(_)
            | Instr::UnifyConst(_)
            | Instr::UnifyVoid
            | Instr::UnifyTerm(_)
    )
}

/// Whether `ins` starts a compound term whose arguments the `Unify*`
/// instructions after it fill.
fn opens(ins: &Instr) -> bool {
    matches!(ins, Instr::GetStruct(..) | Instr::PutStruct(..) | Instr::GetList(_) | Instr::PutList(_))
}

/// The most heap cells and trail entries `ins` pushes in native code.
fn needs(ins: &Instr) -> (u32, u32) {
    match ins {
        Instr::PutVarX(..) | Instr::PutVarY(..) | Instr::PutVoid(_) | Instr::InitY(_) => (1, 0),
        Instr::GetStruct(_, n, _) => (1 + n, 1),
        Instr::PutStruct(_, n, _) => (1 + n, 0),
        Instr::GetList(_) | Instr::GetListVarVar(..) | Instr::GetListValVar(..) | Instr::GetListVoidVar(..) => (2, 1),
        Instr::PutList(_) => (2, 0),
        Instr::GetConst(..) | Instr::Arg(_) | Instr::UnifyValX(_) | Instr::UnifyValY(_) | Instr::UnifyConst(_) => {
            (0, 1)
        }
        Instr::Arith2(t) if matches!(t.op, Arith2Op::Is(_, _, false) | Arith2Op::Random(_, false)) => (0, 1),
        Instr::Facts(t) => (0, t.arity),
        Instr::IsChain(t) if !t.new => (0, 1),
        _ => (0, 0),
    }
}

/// Whether `ins` can be part of a run (the native code does all it
/// does).
fn translatable(ins: &Instr) -> bool {
    let leaf = |a: &AOp| matches!(a, AOp::Int(_) | AOp::X(_) | AOp::Y(_));
    let binary = |op: &AOp| matches!(op, AOp::Add | AOp::Sub | AOp::Mul | AOp::IntDiv | AOp::Mod | AOp::Min | AOp::Max);
    let constant = |c: &Cell| matches!(c, Cell::Atom(_) | Cell::Int(_));
    let opd = |o: &Opd| match o {
        Opd::Reg(_) => true,
        Opd::Const(c) => constant(c),
    };
    match ins {
        Instr::GetVarX(..)
        | Instr::GetVarY(..)
        | Instr::GetVarYs(_)
        | Instr::PutValX(..)
        | Instr::PutValY(..)
        | Instr::PutValYs(_)
        | Instr::PutVarX(..)
        | Instr::PutVarY(..)
        | Instr::PutVoid(_)
        | Instr::InitY(_)
        | Instr::GetStruct(..)
        | Instr::PutStruct(..)
        | Instr::GetList(_)
        | Instr::GetListVarVar(..)
        | Instr::GetListValVar(..)
        | Instr::GetListVoidVar(..)
        | Instr::PutList(_)
        | Instr::UnifyVarX(_)
        | Instr::UnifyVarY(_)
        | Instr::UnifyVarYs(_)
        | Instr::UnifyValX(_)
        | Instr::UnifyValY(_)
        | Instr::UnifyVoid
        | Instr::Step
        | Instr::Jump(_)
        | Instr::Facts(_) => true,
        Instr::UnifyConst(c) => constant(c),
        Instr::PutConst(c, _) | Instr::GetConst(c, _) => constant(c),
        Instr::Arith2(t) => {
            leaf(&t.a)
                && leaf(&t.b)
                && match t.op {
                    Arith2Op::Cmp(..) | Arith2Op::Random(..) => true,
                    Arith2Op::Is(op, ..) => binary(&op),
                }
        }
        Instr::IsChain(t) => leaf(&t.first) && t.rest.iter().all(|(op, b)| binary(op) && leaf(b)),
        Instr::Test(t) => opd(&t.a) && opd(&t.b),
        Instr::Arg(a) => {
            leaf(&a.n)
                && match a.dst {
                    ArgDst::Const(c) => constant(&c),
                    ArgDst::New(_) | ArgDst::Old(_) => true,
                }
        }
        _ => false,
    }
}

/// A fast path's `done` and `fail` (see `Arith`): where it goes on when
/// it succeeds, past the instructions of its general builtin call (which
/// a run leaves to the interpreter), and when it fails (0: backtracking).
/// `None` for other instructions.
fn fast_path(ins: &Instr) -> Option<(u32, u32)> {
    match ins {
        Instr::Arith2(t) => Some((t.done, t.fail)),
        Instr::IsChain(t) => Some((t.done, t.fail)),
        Instr::Test(t) => Some((t.done, t.fail)),
        Instr::Arg(a) => Some((a.done, 0)),
        Instr::Facts(t) => Some((t.done, 0)),
        _ => None,
    }
}

/// What a run must save to be worth its native code (see `worth`): about
/// what entering and leaving it costs, in instructions interpreted.
const WORTH: u32 = 6;

/// What native code saves on an instruction, against the interpreter's
/// dispatch of it, in units of one dispatch: a fast path (a comparison,
/// `is/2`, a type test, `arg/3`) also saves the general builtin's calls on
/// its operands. Measured (`benches/instructions.sh` with callgrind's cache
/// simulation): Campo Bello's clause heads and fact tables gave runs of a
/// few moves and unifications each, whose native code saved no
/// instructions while its size (98 KB) missed the instruction cache ten
/// times as often as the interpreter; runs with a fast path, or of six
/// instructions and more, keep most of Breakthrough's and Connect Four's
/// gains, and Campo Bello's native code is 12 KB.
fn worth(ins: &Instr) -> u32 {
    if fast_path(ins).is_some() { WORTH } else { 1 }
}

/// The forward jumps of an instruction, as offsets from it (a run's own
/// fast paths' `done` aside: see `Native::lower`).
fn jumps(ins: &Instr) -> [u32; 2] {
    match ins {
        Instr::Arith(a) => [a.done, a.fail],
        Instr::Arith2(_) | Instr::IsChain(_) | Instr::Test(_) => [0, fast_path(ins).map_or(0, |(_, fail)| fail)],
        Instr::Arg(_) | Instr::Facts(_) => [0, 0],
        Instr::CallBuiltin(_, _, _, fail) => [*fail, 0],
        Instr::TryElse(n) | Instr::Jump(n) | Instr::FindallBegin(_, _, n) => [*n, 0],
        _ => [0, 0],
    }
}

/// The calls of a clause before it gets native code, unless told
/// otherwise (see `Warm`).
pub const WARM_CALLS: u32 = 100;

/// The native code generator of one machine (its functions live as long
/// as it does: as long as the machine and its codes).
pub struct Native {
    /// Taken out only when the generator is dropped (see `Drop`).
    module: std::mem::ManuallyDrop<JITModule>,
    /// Whether clauses compiled from now on get native code
    /// (`Engine::set_native`): the generator itself stays, as the code it
    /// made may still run.
    pub on: bool,
    /// The calls of a clause before it gets native code (see `Warm`); 0:
    /// at its first. `TABULA_NATIVE_AFTER` sets it for every machine.
    pub after: u32,
    ctx: cranelift_codegen::Context,
    fctx: FunctionBuilderContext,
    /// Runs compiled, and the instructions their native code runs.
    pub runs: u64,
    pub spanned: u64,
    /// Bytes of machine code made.
    pub bytes: u64,
    /// Functions declared (each has a name of its own).
    functions: u64,
    /// Whether each run's machine code is printed as it is made
    /// (`TABULA_NATIVE_DISASM`, to standard error).
    disasm: bool,
    /// Where each run's machine code is written, once it is placed
    /// (`TABULA_NATIVE_DUMP`, a directory: `run<N>-<address>.bin`, for a
    /// profiler's per-address counts and a disassembler).
    dump: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Native({} runs)", self.runs)
    }
}

impl Native {
    /// A generator for this machine's processor; `None` where Cranelift
    /// has no backend for it (the interpreter then runs everything).
    pub fn new() -> Option<Native> {
        let mut flags = settings::builder();
        flags.set("use_colocated_libcalls", "false").ok()?;
        flags.set("is_pic", "false").ok()?;
        flags.set("opt_level", "speed").ok()?;
        // Debug builds (the tests') check every function's code.
        flags.set("enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" }).ok()?;
        let isa = cranelift_native::builder().ok()?.finish(settings::Flags::new(flags)).ok()?;
        let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
        // The clauses' code packed (see `packed`), where no cache needs
        // telling of new code.
        #[cfg(target_arch = "x86_64")]
        builder.memory_provider(Box::new(super::packed::Packed::new()));
        let module = JITModule::new(builder);
        let ctx = module.make_context();
        Some(Native {
            module: std::mem::ManuallyDrop::new(module),
            on: true,
            after: std::env::var("TABULA_NATIVE_AFTER").ok().and_then(|v| v.parse().ok()).unwrap_or(WARM_CALLS),
            ctx,
            fctx: FunctionBuilderContext::new(),
            runs: 0,
            spanned: 0,
            bytes: 0,
            functions: 0,
            disasm: std::env::var_os("TABULA_NATIVE_DISASM").is_some(),
            dump: std::env::var_os("TABULA_NATIVE_DUMP").map(Into::into),
        })
    }

    /// Replaces the first instruction of each run worth compiling in
    /// `code` (a clause's, before anything points into it) with its
    /// native code; `me`, where the clause may go round itself (see
    /// `Loop`), and its code is one run and the last call.
    pub fn lower(&mut self, code: &mut [Instr], me: Option<Loop>) {
        if !self.on {
            return;
        }
        let n = code.len();
        // Where jumps land: a run starts there at the latest (a jump into
        // a run would skip its native code). A fast path's success lands
        // past its general builtin call, where the call would go on too:
        // the run goes on there.
        // The first instruction that jumps there, for each place jumped
        // to (`n`: none). A run goes on over a place jumped to from
        // inside it only (an if-then-else's branches, decided by a test
        // in the run): the interpreter, where it runs such a jump, lands
        // in the run's instructions and runs them as they are.
        let mut target = vec![n; n + 1];
        // Where a call of a table of facts goes on, whose choice point
        // resumes there: a run starts there, which resumes it natively.
        let mut resumes: Vec<Option<*const Facts>> = vec![None; n + 1];
        for (i, ins) in code.iter().enumerate() {
            for off in jumps(ins) {
                if off > 0 {
                    let to = (i + off as usize).min(n);
                    target[to] = target[to].min(i);
                }
            }
            if let Instr::Facts(t) = ins
                && t.fresh
            {
                resumes[(i + t.done as usize).min(n)] = Some(Rc::as_ptr(t));
            }
        }
        let mut made = Vec::new();
        let mut i = 0;
        while i < n {
            if !translatable(&code[i]) || never_first(&code[i]) {
                i += 1;
                continue;
            }
            // A run goes on over places jumped to from before it (where an
            // if-then-else's branches join), each of which starts a run of
            // its own too (the next one made): the same instructions then
            // have native code in both, and a run that reaches the join
            // goes on natively instead of through the interpreter. At
            // most `OVER` such places a run.
            const OVER: usize = 2;
            let mut over = Vec::new();
            // The instructions the run's native code runs: translatable
            // ones, each fast path followed by what its success skips.
            // A `Unify*` instruction is in the run only with the
            // instruction that opened its compound term, and those
            // between: the run keeps `s` and `wr` itself.
            let mut natives = Vec::new();
            let (mut heap, mut trail) = (0u32, 0u32);
            let mut open = false;
            let mut e = i;
            // Whether the run may go on over the place a fresh table's call
            // it made goes on at (that place still starts a run of its own,
            // for backtracking into the call): once a run, in a run that
            // does not start at such a place itself, where every path in
            // the run to there went through the call (no jump before it
            // goes past it). A failure after it resumes the choice point
            // (`facts_again`) and goes on there, in this run.
            let mut inner = false;
            let mut over_facts = |natives: &[usize], e: usize| -> bool {
                let Some(&f) = natives.last() else { return false };
                let made = matches!(&code[i + f], Instr::Facts(t) if t.fresh && i + f + t.done as usize == e);
                let before = natives[..natives.len() - 1].iter().all(|&k| {
                    let j = i + k;
                    let [a, b] = jumps(&code[j]);
                    let done = fast_path(&code[j]).map_or(0, |(d, _)| d);
                    [a, b, done].iter().all(|&off| j + off as usize <= i + f)
                });
                let ok = !inner && resumes[i].is_none() && made && before;
                inner |= ok;
                ok
            };
            while e < n
                && translatable(&code[e])
                && (e == i || resumes[e].is_none() || over_facts(&natives, e))
                && (open || !is_unify(&code[e]))
            {
                if e > i && target[e] < i {
                    if over.len() == OVER {
                        break;
                    }
                    over.push(e);
                }
                open = opens(&code[e]) || (open && is_unify(&code[e]));
                natives.push(e - i);
                let (h, t) = needs(&code[e]);
                heap = heap.saturating_add(h);
                trail = trail.saturating_add(t);
                e += fast_path(&code[e]).map_or(1, |(done, _)| done as usize);
            }
            let e = e.min(n);
            // A run that goes round itself saves a call a round (one
            // that may push a choice point does not go round).
            let pushes = natives.iter().any(|&k| matches!(code[i + k], Instr::Facts(_)));
            let me = me
                .filter(|l| i == 0 && e + 1 == n && !pushes && matches!(code[e], Instr::Execute(p, ..) if p == l.pred));
            let saved =
                natives.iter().map(|&k| worth(&code[i + k])).sum::<u32>() + if me.is_some() { WORTH } else { 0 };
            if saved >= WORTH
                && let Some((id, size)) = self.compile(&code[i..e], &natives, heap, trail, me, resumes[i])
            {
                let groups = natives.iter().any(|&k| opens(&code[i + k]));
                made.push((i, e, id, size, natives.len(), heap, trail, groups));
            }
            // (A run went on over the call's place only if it made the
            // choice point there: that place starts the next run too.)
            let resumed = (i + 1..e).find(|&p| resumes[p].is_some());
            i = over.first().copied().into_iter().chain(resumed).min().unwrap_or(e);
        }
        // The clause's runs made ready together (each time the module
        // makes its functions executable, the next go on a new page: one
        // call a clause, not one a run).
        if made.is_empty() || self.module.finalize_definitions().is_err() {
            return;
        }
        for (i, e, id, size, spanned, heap, trail, groups) in made {
            let p = self.module.get_finalized_function(id);
            self.dump(id, p, size);
            // SAFETY: the function was made with `RunFn`'s signature (four
            // pointers in, an `i64` out, the platform's calling convention).
            let f = unsafe { std::mem::transmute::<*const u8, RunFn>(p) };
            let first = std::mem::replace(&mut code[i], Instr::Fail);
            code[i] = Instr::Native(Box::new(NativeRun { f, first, len: (e - i) as u32, heap, trail, groups }));
            self.runs += 1;
            self.spanned += spanned as u64;
        }
    }

    /// Writes function `id`'s `size` bytes of machine code, placed at
    /// `p`, where `TABULA_NATIVE_DUMP` says (a failure to write is
    /// ignored: it is a profiling aid).
    fn dump(&self, id: FuncId, p: *const u8, size: usize) {
        let Some(dir) = &self.dump else { return };
        // SAFETY: the module placed the function's `size` bytes of code
        // at `p`, and keeps them as long as the generator.
        let code = unsafe { std::slice::from_raw_parts(p, size) };
        let _ = std::fs::write(dir.join(format!("run{}-{:x}.bin", id.as_u32() + 1, p as usize)), code);
    }

    /// Defines the function of a run (`None` if Cranelift refuses it),
    /// made ready by the module's next `finalize_definitions`; with the
    /// size of its machine code.
    fn compile(
        &mut self,
        run: &[Instr],
        natives: &[usize],
        heap: u32,
        trail: u32,
        me: Option<Loop>,
        resume: Option<*const Facts>,
    ) -> Option<(FuncId, usize)> {
        let ptr = self.module.target_config().pointer_type();
        let mut sig = self.module.make_signature();
        sig.params.extend([AbiParam::new(ptr); 4]);
        sig.returns.push(AbiParam::new(I64));
        self.functions += 1;
        let name = format!("run{}", self.functions);
        let id = self.module.declare_function(&name, Linkage::Local, &sig).ok()?;
        self.ctx.func.signature = sig;
        self.ctx.func.name = UserFuncName::user(0, id.as_u32());
        {
            let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.fctx);
            let conv = self.module.target_config().default_call_conv;
            let mut g = Gen::new(&mut b, run, natives, Ends { me, resume, conv });
            g.room(heap, trail);
            g.body();
            b.seal_all_blocks();
            b.finalize(self.module.target_config());
        }
        self.ctx.set_disasm(self.disasm);
        let defined = self.module.define_function(id, &mut self.ctx);
        if self.disasm
            && let Some(c) = self.ctx.compiled_code()
        {
            eprintln!("== {name}: {run:?}\n{}", c.vcode.as_deref().unwrap_or(""));
        }
        // A function the verifier rejects is a fault of `Gen`, which a
        // release build (the verifier off) would run, wrongly.
        debug_assert!(
            !matches!(
                defined,
                Err(cranelift_module::ModuleError::Compilation(cranelift_codegen::CodegenError::Verifier(_)))
            ),
            "the native code of {run:?} fails Cranelift's verifier: {defined:?}"
        );
        let size = self.ctx.compiled_code().map_or(0, |c| c.code_info().total_size);
        self.bytes += u64::from(size);
        self.module.clear_context(&mut self.ctx);
        defined.ok()?;
        Some((id, size as usize))
    }
}

impl Drop for Native {
    /// Frees the functions' memory (Cranelift's module leaks it unless
    /// told): the generator lives as long as its machine, whose codes are
    /// the only holders of the functions, and nothing runs them once the
    /// machine is being dropped.
    fn drop(&mut self) {
        if std::env::var_os("TABULA_NATIVE_STATS").is_some() {
            eprintln!(
                "native code: {} runs of {} instructions, {} bytes of machine code",
                self.runs, self.spanned, self.bytes
            );
        }
        // SAFETY: the module is taken once, here; see above for why no
        // function of it runs after.
        unsafe { std::mem::ManuallyDrop::take(&mut self.module).free_memory() };
    }
}

/// Where a fast path goes: on success (`done`) and failure (`fail`)
/// as in `Arith`, and on anything it does not decide (`other`).
#[derive(Clone, Copy)]
struct Exits {
    done: u32,
    fail: u32,
    other: Block,
}

/// Emits one run's function.
struct Gen<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    run: &'a [Instr],
    /// The instructions the native code runs, and the entry block of each
    /// (`None` for the others).
    natives: &'a [usize],
    at: Vec<Option<Block>>,
    x: Value,
    y: Value,
    heap: Value,
    m: Value,
    /// Blocks that return to the interpreter, one for each place it goes
    /// on at, made as needed, emitted last.
    exits: Vec<(Block, i64)>,
    /// The dereferencing loop's two words.
    lo: Variable,
    hi: Variable,
    /// The builtins' steps this run has taken so far (added to the
    /// machine's count when it leaves).
    steps: Variable,
    /// Registers dereferenced on the way to here, with their cells and
    /// whether the cell is an integer (checked, or made by `is/2`):
    /// forgotten when the register is written; when a variable is bound,
    /// all but the integers (which no binding changes); where paths from
    /// elsewhere in the run join, what all of them know.
    known: Vec<Known>,
    /// The instructions that more than the one before them in the run
    /// can lead to, and what every path there so far knows (`go` adds
    /// each; the jumps are forward, so all have been made when the
    /// instruction's code is).
    joins: Vec<bool>,
    incoming: Vec<Option<Vec<Known>>>,
    /// The interpreter's `s` and `wr` (see `Gen::new`), and whether the
    /// run sets them (then it leaves them in the machine for the
    /// interpreter when it leaves).
    s: Variable,
    wr: Variable,
    groups: bool,
    /// Whether the compound term whose arguments the `Unify*`
    /// instructions go through is being built (`wr`): after `PutStruct`
    /// or `PutList`, and in each of the two copies `Gen::get_compound`
    /// makes of them (so no `Unify*` instruction tests `wr`).
    mode: Option<bool>,
    /// Where the run goes round itself (see `Loop`): the call, and the
    /// block that makes it, and the block that checks for room again.
    me: Option<Loop>,
    again: Option<Block>,
    head: Option<Block>,
    /// Where the run starts where a call of a table of facts goes on:
    /// the table, the block before the room check, and the block that
    /// resumes the call's choice point on a failure (see `facts_again`).
    resume: Option<*const Facts>,
    top: Option<Block>,
    retry: Option<Block>,
    /// A fresh table's call inside the run whose place the run goes on
    /// over (see `Native::lower`): the table and that place, once the
    /// call's code is made; and the block that resumes its choice point
    /// on a failure after it. `resets`: that place, where nothing is
    /// known (a resumed choice point has restored the registers).
    inner: Option<(*const Facts, usize)>,
    inner_retry: Option<Block>,
    resets: Vec<bool>,
    /// What holds at that place however it is reached (see `Gen::facts`).
    kept: Vec<Known>,
    /// Instructions whose code is made already (`Gen::get_compound`).
    made: Vec<usize>,
    /// The calling convention of the helpers the code calls.
    conv: CallConv,
}

/// How a run may start again (`Gen::new`): by going round itself, or by
/// resuming the choice point of the call of a table of facts before it;
/// and the calling convention of the helpers it calls.
struct Ends {
    me: Option<Loop>,
    resume: Option<*const Facts>,
    conv: CallConv,
}

/// The head of a list cell `Gen::get_list2` takes apart: into a new
/// variable's register, unified with an old one's, or not wanted.
#[derive(Clone, Copy)]
enum Head {
    New(u32),
    Old(u32),
    Void,
}

/// What a run knows of a register on the way to here (`Gen::known`): its
/// cell dereferenced, and whether that is an integer.
#[derive(Clone, Copy, PartialEq)]
struct Known {
    code: usize,
    lo: Value,
    hi: Value,
    int: bool,
}

const MEM: MemFlagsData = MemFlagsData::trusted();

impl<'a, 'b> Gen<'a, 'b> {
    fn new(b: &'a mut FunctionBuilder<'b>, run: &'a [Instr], natives: &'a [usize], ends: Ends) -> Self {
        let Ends { me, resume, conv } = ends;
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (x, y, heap, m) = match *b.block_params(entry) {
            [x, y, heap, m] => (x, y, heap, m),
            _ => unreachable!("a run's function has four parameters"),
        };
        let lo = b.declare_var(I64);
        let hi = b.declare_var(I64);
        let mut at = vec![None; run.len()];
        for &k in natives {
            at[k] = Some(b.create_block());
        }
        let steps = b.declare_var(I64);
        let zero = b.ins().iconst(I64, 0);
        b.def_var(steps, zero);
        // The compound term's next argument and whether it is being
        // built, as the interpreter's `s` and `wr`: a run that reads or
        // builds compound terms takes them from the machine, where the
        // interpreter left them, and leaves them there (the interpreter
        // may be inside a term's arguments when the run starts: the
        // compiler puts new variables' `PutVar*` between them).
        let (s, wr) = (b.declare_var(I64), b.declare_var(I64));
        let groups = natives.iter().any(|&k| opens(&run[k]));
        if groups {
            let sv = b.ins().load(I64, MEM, m, std::mem::offset_of!(Machine, vm.s) as i32);
            let w = b.ins().uload8(I64, MEM, m, std::mem::offset_of!(Machine, vm.wr) as i32);
            b.def_var(s, sv);
            b.def_var(wr, w);
        } else {
            b.def_var(s, zero);
            b.def_var(wr, zero);
        }
        // Where each native instruction goes on (success, and failure
        // when that is a jump): an instruction reached other than from
        // the one before it is a join.
        let mut joins = vec![false; run.len()];
        for (i, &j) in natives.iter().enumerate() {
            let (on, fail) = match run[j] {
                // What follows a jump is reached from elsewhere.
                Instr::Jump(n) => {
                    if let Some(after) = joins.get_mut(j + 1) {
                        *after = true;
                    }
                    (n, 0)
                }
                ref ins => fast_path(ins).unwrap_or((1, 0)),
            };
            let next = natives.get(i + 1).copied();
            for to in [j + on as usize, j + fail as usize] {
                if to != j && Some(to) != next && to < run.len() {
                    joins[to] = true;
                }
            }
        }
        let mut resets = vec![false; run.len()];
        for &j in natives {
            if let Instr::Facts(t) = &run[j]
                && t.fresh
                && natives.contains(&(j + t.done as usize))
            {
                resets[j + t.done as usize] = true;
            }
        }
        Gen {
            b,
            run,
            natives,
            at,
            x,
            y,
            heap,
            m,
            exits: Vec::new(),
            lo,
            hi,
            steps,
            s,
            wr,
            groups,
            mode: None,
            known: Vec::new(),
            incoming: vec![None; joins.len()],
            resets,
            joins,
            inner: None,
            inner_retry: None,
            kept: Vec::new(),
            made: Vec::new(),
            me,
            again: None,
            head: None,
            resume,
            top: None,
            retry: None,
            conv,
        }
    }

    /// Ends the entry block: on to the first instruction when the heap
    /// and the trail have room for what the run may push, else back to
    /// the interpreter to grow them (`GROW`, nothing changed), so that
    /// nothing inside the run checks.
    /// A run that goes round itself checks again at each round, from a
    /// block of its own (the entry block cannot be jumped to), and gives
    /// back the steps of the rounds made with `GROW`.
    fn room(&mut self, heap: u32, trail: u32) {
        let first = self.at[0].expect("a run starts with a native instruction");
        if self.me.is_some() {
            // Each round starts with `X0` dereferenced (a list cell),
            // which the clause's first instruction reads.
            let x0 = self.xa(0);
            let c = self.load(x0);
            let (lo, hi) = self.deref(c);
            let head = self.b.create_block();
            self.b.append_block_param(head, I64);
            self.b.append_block_param(head, I64);
            self.b.ins().jump(head, &[lo.into(), hi.into()]);
            self.b.switch_to_block(head);
            let (lo, hi) = match *self.b.block_params(head) {
                [lo, hi] => (lo, hi),
                _ => unreachable!("two parameters"),
            };
            self.known.push(Known { code: 0, lo, hi, int: false });
            self.head = Some(head);
        }
        if self.resume.is_some() {
            let top = self.b.create_block();
            self.b.ins().jump(top, &[]);
            self.b.switch_to_block(top);
            self.top = Some(top);
        }
        let mut fits = None;
        for (need, off) in [
            (heap, std::mem::offset_of!(Machine, store.heap) as i32),
            (trail, std::mem::offset_of!(Machine, store.trail) as i32),
        ] {
            if need == 0 {
                continue;
            }
            let len = self.b.ins().load(I64, MEM, self.m, off + stack::LEN);
            let cap = self.b.ins().load(I64, MEM, self.m, off + stack::CAP);
            let free = self.b.ins().isub(cap, len);
            let ok = self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, free, need as i64);
            fits = Some(match fits {
                None => ok,
                Some(f) => self.b.ins().band(f, ok),
            });
        }
        match fits {
            None => {
                self.b.ins().jump(first, &[]);
            }
            Some(ok) if self.me.is_some() || self.resume.is_some() => {
                let grow = self.leaving(GROW);
                self.b.ins().brif(ok, first, &[], grow, &[]);
            }
            Some(ok) => {
                let grow = self.b.create_block();
                self.b.ins().brif(ok, first, &[], grow, &[]);
                self.b.switch_to_block(grow);
                let v = self.b.ins().iconst(I64, GROW);
                self.b.ins().return_(&[v]);
            }
        }
    }

    fn body(&mut self) {
        let (run, natives) = (self.run, self.natives);
        for &k in natives {
            if self.made.contains(&k) {
                continue;
            }
            self.b.switch_to_block(self.at[k].expect("a block for each native instruction"));
            if self.resets[k] {
                self.known = std::mem::take(&mut self.kept);
            } else if self.joins[k] {
                // The first instruction is reached from the room check
                // too, which knows nothing.
                self.known = match k == natives[0] {
                    true => Vec::new(),
                    false => self.incoming[k].take().unwrap_or_default(),
                };
            }
            self.instr(k, &run[k]);
        }
        if let Some(again) = self.again {
            self.round(again);
        }
        if let (Some(retry), Some((t, at))) = (self.inner_retry, self.inner) {
            // A failure after the call inside the run: its choice point
            // resumed, and on where the call goes on; or back.
            self.b.switch_to_block(retry);
            let t = self.b.ins().iconst(I64, t as i64);
            let again = self.helper(facts_again as *const u8, &[self.m, t]);
            let (on, back) = (self.at[at].expect("the place is in the run"), self.exit(BACKTRACK));
            self.b.ins().brif(again, on, &[], back, &[]);
        }
        if let (Some(retry), Some(t)) = (self.retry, self.resume) {
            // A failure: the call's choice point resumed, and the run
            // again from the start (the steps it took kept), or back.
            self.b.switch_to_block(retry);
            let t = self.b.ins().iconst(I64, t as i64);
            let again = self.helper(facts_again as *const u8, &[self.m, t]);
            let (top, back) = (self.top.expect("made by `room`"), self.exit(BACKTRACK));
            self.b.ins().brif(again, top, &[], back, &[]);
        }
        // Each way out names where the interpreter goes on, and all of
        // them share one way back to it (the code stays small: the runs
        // of the hot clauses must fit the instruction cache).
        let exits = std::mem::take(&mut self.exits);
        if exits.is_empty() {
            return;
        }
        let back = self.b.create_block();
        self.b.append_block_param(back, I64);
        for (blk, to) in exits {
            self.b.switch_to_block(blk);
            let v = self.b.ins().iconst(I64, to);
            self.b.ins().jump(back, &[v.into()]);
        }
        self.b.switch_to_block(back);
        let to = self.b.block_params(back)[0];
        self.leave(to);
    }

    /// Returns `to` to the interpreter, with the steps taken (and `s` and
    /// `wr`, which the interpreter reads unless it backtracks).
    fn leave(&mut self, to: Value) {
        if self.groups {
            let sv = self.b.use_var(self.s);
            let wr = self.b.use_var(self.wr);
            self.b.ins().store(MEM, sv, self.m, std::mem::offset_of!(Machine, vm.s) as i32);
            self.b.ins().istore8(MEM, wr, self.m, std::mem::offset_of!(Machine, vm.wr) as i32);
        }
        let off = std::mem::offset_of!(Machine, steps) as i32;
        let taken = self.b.use_var(self.steps);
        let s = self.b.ins().load(I64, MEM, self.m, off);
        let s = self.b.ins().iadd(s, taken);
        self.b.ins().store(MEM, s, self.m, off);
        self.b.ins().return_(&[to]);
    }

    /// Goes on at instruction `to` of the run: natively when it is a
    /// later instruction of the run that the native code runs, else in
    /// the interpreter.
    fn go(&mut self, from: usize, to: usize) {
        if self.me.is_some() && to == self.run.len() {
            let again = *self.again.get_or_insert_with(|| self.b.create_block());
            self.b.ins().jump(again, &[]);
            return;
        }
        match self.at.get(to) {
            Some(&Some(blk)) if to > from => {
                if self.joins[to] {
                    // What this path knows there, and every other: the
                    // cells they share were read before they parted.
                    let here = &self.known;
                    match &mut self.incoming[to] {
                        Some(all) => all.retain(|k| here.contains(k)),
                        none => *none = Some(here.clone()),
                    }
                }
                self.b.ins().jump(blk, &[]);
            }
            _ => {
                let out = self.leaving(to as i64);
                self.b.ins().jump(out, &[]);
            }
        }
    }

    /// The last call of a run that goes round itself (see `Loop`): with
    /// a list cell in `X0`, no clause of the predicate changed, and a call
    /// that `Machine::limits_quiet` lets through (the steps this run took
    /// counted), one step more and round again; else the interpreter
    /// makes the call.
    fn round(&mut self, again: Block) {
        let me = self.me.expect("a run that goes round itself");
        self.b.switch_to_block(again);
        // Reached from wherever the run ends.
        self.known.clear();
        let call = self.leaving(self.run.len() as i64);
        let x0 = self.xa(0);
        let c = self.load(x0);
        let (lo, hi) = self.deref(c);
        let t = self.tag(lo);
        let lst = self.b.ins().icmp_imm_s(IntCC::Equal, t, LST);
        self.require(lst, call);
        let epoch = self.b.ins().iconst(I64, me.epoch as i64);
        let epoch = self.b.ins().uload32(MEM, epoch, 0);
        let same = self.b.ins().icmp_imm_s(IntCC::Equal, epoch, me.at as i64);
        self.require(same, call);
        let taken = self.b.use_var(self.steps);
        let steps = self.b.ins().load(I64, MEM, self.m, std::mem::offset_of!(Machine, steps) as i32);
        let steps = self.b.ins().iadd(steps, taken);
        let steps = self.b.ins().iadd_imm_s(steps, 1);
        let step_at = self.b.ins().load(I64, MEM, self.m, std::mem::offset_of!(Machine, step_at) as i32);
        let below = self.b.ins().icmp(IntCC::UnsignedLessThan, steps, step_at);
        let hp = std::mem::offset_of!(Machine, store.heap) as i32;
        let len = self.b.ins().load(I64, MEM, self.m, hp + stack::LEN);
        let heap_at = self.b.ins().load(I64, MEM, self.m, std::mem::offset_of!(Machine, heap_at) as i32);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, len, heap_at);
        let quiet = self.b.ins().band(below, fits);
        self.require(quiet, call);
        let taken = self.b.ins().iadd_imm_s(taken, 1);
        self.b.def_var(self.steps, taken);
        let head = self.head.expect("a run that goes round itself has a head");
        self.b.ins().jump(head, &[lo.into(), hi.into()]);
    }

    /// A failure: to `from + fail`, or backtracking when `fail` is 0.
    fn fail(&mut self, from: usize, fail: u32) {
        if fail == 0 {
            let out = self.leaving(BACKTRACK);
            self.b.ins().jump(out, &[]);
        } else {
            self.go(from, from + fail as usize);
        }
    }

    /// A success of a fast path: one step counted, on to `from + done`.
    fn done(&mut self, from: usize, done: u32) {
        let s = self.b.use_var(self.steps);
        let s = self.b.ins().iadd_imm_s(s, 1);
        self.b.def_var(self.steps, s);
        self.go(from, from + done as usize);
    }

    /// Calls the helper at `f` (a function of the Rust code, with the C
    /// calling convention, each argument and the result an `i64`): its
    /// result. The helper may change the machine (as the interpreter
    /// would); the run reads it again after (it keeps nothing of it but
    /// its own steps).
    fn helper(&mut self, f: *const u8, args: &[Value]) -> Value {
        let mut sig = Signature::new(self.conv);
        sig.params.extend(args.iter().map(|_| AbiParam::new(I64)));
        sig.returns.push(AbiParam::new(I64));
        let sig = self.b.import_signature(sig);
        let callee = self.b.ins().iconst(I64, f as i64);
        let call = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(call)[0]
    }

    /// The address of an X register.
    fn xa(&mut self, r: u32) -> (Value, i32) {
        (self.x, (r as i32) * 16)
    }

    /// The address of a slot of the current frame.
    fn ya(&mut self, s: u32) -> (Value, i32) {
        (self.y, (s as i32) * 16)
    }

    /// A register code's cell, dereferenced (once on the way through a
    /// run, while nothing changes it).
    fn deref_reg(&mut self, code: usize) -> (Value, Value) {
        if let Some(k) = self.known_of(code) {
            return (k.lo, k.hi);
        }
        let at = self.reg(code);
        let c = self.load(at);
        let (lo, hi) = self.deref(c);
        self.known.push(Known { code, lo, hi, int: false });
        (lo, hi)
    }

    fn known_of(&self, code: usize) -> Option<Known> {
        self.known.iter().find(|k| k.code == code).copied()
    }

    /// Register code `code` now holds the integer `r` (`int_tag` the
    /// tag's word), on every path that goes on from here.
    fn known_int(&mut self, code: usize, int_tag: Value, r: Value) {
        self.forget(code);
        self.known.push(Known { code, lo: int_tag, hi: r, int: true });
    }

    /// A variable may have been bound: what is known of registers is kept
    /// only for those that are integers.
    fn unsettle(&mut self) {
        self.known.retain(|k| k.int);
    }

    /// Register code `code` is written: what was known of it is not.
    fn forget(&mut self, code: usize) {
        self.known.retain(|k| k.code != code);
    }

    /// The address of a register code (X, or with `PERM` a slot).
    fn reg(&mut self, code: usize) -> (Value, i32) {
        if code & PERM != 0 { self.ya((code & INDEX) as u32) } else { self.xa(code as u32) }
    }

    fn load(&mut self, (p, off): (Value, i32)) -> (Value, Value) {
        let lo = self.b.ins().load(I64, MEM, p, off);
        let hi = self.b.ins().load(I64, MEM, p, off + 8);
        (lo, hi)
    }

    fn store(&mut self, (p, off): (Value, i32), (lo, hi): (Value, Value)) {
        self.b.ins().store(MEM, lo, p, off);
        self.b.ins().store(MEM, hi, p, off + 8);
    }

    fn copy(&mut self, from: (Value, i32), to: (Value, i32)) {
        let c = self.load(from);
        self.store(to, c);
    }

    fn constant(&mut self, c: Cell) -> (Value, Value) {
        let (lo, hi) = words(c);
        (self.b.ins().iconst(I64, lo), self.b.ins().iconst(I64, hi))
    }

    /// The tag of a cell's low word.
    fn tag(&mut self, lo: Value) -> Value {
        let t = self.b.ins().ireduce(I32, lo);
        self.b.ins().uextend(I64, t)
    }

    /// A cell dereferenced: followed through bound variables to a
    /// non-variable or an unbound variable (`Ref` to itself).
    fn deref(&mut self, (lo, hi): (Value, Value)) -> (Value, Value) {
        let (head, follow, out) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.def_var(self.lo, lo);
        self.b.def_var(self.hi, hi);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let lo = self.b.use_var(self.lo);
        let t = self.tag(lo);
        let is_ref = self.b.ins().icmp_imm_s(IntCC::Equal, t, REF);
        self.b.ins().brif(is_ref, follow, &[], out, &[]);
        self.b.switch_to_block(follow);
        let hi = self.b.use_var(self.hi);
        let addr = self.b.ins().ishl_imm_u(hi, 4);
        let addr = self.b.ins().iadd(self.heap, addr);
        let (nlo, nhi) = self.load((addr, 0));
        let nt = self.tag(nlo);
        let nref = self.b.ins().icmp_imm_s(IntCC::Equal, nt, REF);
        let itself = self.b.ins().icmp(IntCC::Equal, nhi, hi);
        let unbound = self.b.ins().band(nref, itself);
        let next = self.b.create_block();
        self.b.ins().brif(unbound, out, &[], next, &[]);
        self.b.switch_to_block(next);
        self.b.def_var(self.lo, nlo);
        self.b.def_var(self.hi, nhi);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(out);
        (self.b.use_var(self.lo), self.b.use_var(self.hi))
    }

    /// Goes on in a new block when `cond` holds, else to `other`.
    fn require(&mut self, cond: Value, other: Block) {
        let ok = self.b.create_block();
        self.b.ins().brif(cond, ok, &[], other, &[]);
        self.b.switch_to_block(ok);
    }

    /// The block that returns `to` to the interpreter (one for each
    /// `to`); to backtrack in a run that resumes a choice point, the block
    /// that tries that first.
    fn leaving(&mut self, to: i64) -> Block {
        if to == BACKTRACK && self.inner.is_some() {
            return *self.inner_retry.get_or_insert_with(|| self.b.create_block());
        }
        if to == BACKTRACK && self.resume.is_some() {
            return *self.retry.get_or_insert_with(|| self.b.create_block());
        }
        self.exit(to)
    }

    /// The block that returns `to` to the interpreter.
    fn exit(&mut self, to: i64) -> Block {
        if let Some(&(blk, _)) = self.exits.iter().find(|e| e.1 == to) {
            return blk;
        }
        let blk = self.b.create_block();
        self.exits.push((blk, to));
        blk
    }

    /// The integer an arithmetic leaf holds; on anything else, to `other`.
    fn operand(&mut self, a: AOp, other: Block) -> Value {
        let code = match a {
            AOp::Int(i) => return self.b.ins().iconst(I64, i),
            AOp::X(r) => r as usize,
            AOp::Y(s) => s as usize | PERM,
            _ => unreachable!("a run's leaves are constants and registers"),
        };
        if let Some(Known { hi, int: true, .. }) = self.known_of(code) {
            return hi;
        }
        let (lo, hi) = self.deref_reg(code);
        let t = self.tag(lo);
        let int = self.b.ins().icmp_imm_s(IntCC::Equal, t, INT);
        self.require(int, other);
        if let Some(k) = self.known.iter_mut().find(|k| k.code == code) {
            k.int = true;
        }
        hi
    }

    /// `a op b`; on overflow or a zero divisor, to `other` (as `binary` in
    /// the interpreter).
    fn binary(&mut self, op: AOp, a: Value, b: Value, other: Block) -> Value {
        match op {
            AOp::Add | AOp::Sub | AOp::Mul => {
                let (v, over) = match op {
                    AOp::Add => self.b.ins().sadd_overflow(a, b),
                    AOp::Sub => self.b.ins().ssub_overflow(a, b),
                    _ => self.b.ins().smul_overflow(a, b),
                };
                let fine = self.b.ins().icmp_imm_s(IntCC::Equal, over, 0);
                self.require(fine, other);
                v
            }
            AOp::Min => self.b.ins().smin(a, b),
            AOp::Max => self.b.ins().smax(a, b),
            AOp::IntDiv | AOp::Mod => {
                // `checked_div`/`checked_rem`: no zero divisor, and not
                // the one overflow (MIN by -1).
                let zero = self.b.ins().icmp_imm_s(IntCC::Equal, b, 0);
                let min = self.b.ins().icmp_imm_s(IntCC::Equal, a, i64::MIN);
                let minus = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
                let over = self.b.ins().band(min, minus);
                let bad = self.b.ins().bor(zero, over);
                let fine = self.b.ins().icmp_imm_s(IntCC::Equal, bad, 0);
                self.require(fine, other);
                if op == AOp::IntDiv {
                    return self.b.ins().sdiv(a, b);
                }
                // The remainder takes the divisor's sign.
                let m = self.b.ins().srem(a, b);
                let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, m, 0);
                let mneg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, m, 0);
                let bneg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, b, 0);
                let differ = self.b.ins().bxor(mneg, bneg);
                let adjust = self.b.ins().band(nonzero, differ);
                let sum = self.b.ins().iadd(m, b);
                self.b.ins().select(adjust, sum, m)
            }
            _ => unreachable!("a run's operators are binary"),
        }
    }

    /// `is/2`'s result `r` given to register code `code` (`new`: its first
    /// occurrence), then on to `done`; a failure to `fail`, anything but
    /// an integer or a variable to `other` (as `is_result`).
    fn is_result(&mut self, k: usize, code: usize, new: bool, r: Value, ex: Exits) {
        let Exits { done, fail, other } = ex;
        // Whichever way it goes on, the register is the integer.
        let int_tag = self.b.ins().iconst(I64, INT);
        if new {
            let at = self.reg(code);
            self.store(at, (int_tag, r));
            self.known_int(code, int_tag, r);
            self.done(k, done);
            return;
        }
        let (lo, hi) = self.deref_reg(code);
        let t = self.tag(lo);
        let (var, nonvar, same, differ) =
            (self.b.create_block(), self.b.create_block(), self.b.create_block(), self.b.create_block());
        let is_ref = self.b.ins().icmp_imm_s(IntCC::Equal, t, REF);
        self.b.ins().brif(is_ref, var, &[], nonvar, &[]);
        // An unbound variable is bound to the integer.
        self.b.switch_to_block(var);
        self.bind(hi, (int_tag, r));
        self.done(k, done);
        self.b.switch_to_block(nonvar);
        let int = self.b.ins().icmp_imm_s(IntCC::Equal, t, INT);
        self.require(int, other);
        let eq = self.b.ins().icmp(IntCC::Equal, hi, r);
        self.b.ins().brif(eq, same, &[], differ, &[]);
        self.b.switch_to_block(same);
        self.done(k, done);
        self.b.switch_to_block(differ);
        self.fail(k, fail);
        self.known_int(code, int_tag, r);
    }

    /// A test's operand, dereferenced.
    fn opd(&mut self, o: Opd) -> (Value, Value) {
        match o {
            Opd::Reg(code) => self.deref_reg(code),
            // An atom or an integer: nothing to follow.
            Opd::Const(c) => self.constant(c),
        }
    }

    /// Whether the tag `t` is one of `tags`.
    fn tag_in(&mut self, t: Value, tags: &[i64]) -> Value {
        let mut acc = self.b.ins().icmp_imm_s(IntCC::Equal, t, tags[0]);
        for &tag in &tags[1..] {
            let c = self.b.ins().icmp_imm_s(IntCC::Equal, t, tag);
            acc = self.b.ins().bor(acc, c);
        }
        acc
    }

    fn instr(&mut self, k: usize, ins: &Instr) {
        match *ins {
            Instr::GetVarX(x, a) => self.mov(a as usize, x as usize),
            Instr::GetVarY(y, a) => self.mov(a as usize, y as usize | PERM),
            Instr::GetVarYs(ref run) => {
                for &(y, a) in run.iter() {
                    self.mov(a as usize, y as usize | PERM);
                }
            }
            Instr::PutValX(x, a) => self.mov(x as usize, a as usize),
            Instr::PutValY(y, a) => self.mov(y as usize | PERM, a as usize),
            Instr::PutValYs(ref run) => {
                for &(y, a) in run.iter() {
                    self.mov(y as usize | PERM, a as usize);
                }
            }
            Instr::PutConst(c, a) => {
                let v = self.constant(c);
                let to = self.xa(a);
                self.store(to, v);
                self.forget(a as usize);
            }
            Instr::PutVarX(x, a) => self.put_var(&[x as usize, a as usize]),
            Instr::PutVarY(y, a) => self.put_var(&[y as usize | PERM, a as usize]),
            Instr::PutVoid(a) => self.put_var(&[a as usize]),
            Instr::InitY(y) => self.put_var(&[y as usize | PERM]),
            Instr::Step => {
                let s = self.b.use_var(self.steps);
                let s = self.b.ins().iadd_imm_s(s, 1);
                self.b.def_var(self.steps, s);
            }
            Instr::GetStruct(f, n, a) => return self.get_compound(k, Some((f, n)), a),
            Instr::GetList(a) => return self.get_compound(k, None, a),
            Instr::GetListVarVar(a, x, y) => return self.get_list2(k, a, Head::New(x), y),
            Instr::GetListValVar(a, x, y) => return self.get_list2(k, a, Head::Old(x), y),
            Instr::GetListVoidVar(a, y) => return self.get_list2(k, a, Head::Void, y),
            Instr::PutStruct(f, n, a) => self.put_compound(Some((f, n)), a),
            Instr::PutList(a) => self.put_compound(None, a),
            Instr::UnifyVarX(x) => self.unify_var(x as usize),
            Instr::UnifyVarY(y) => self.unify_var(y as usize | PERM),
            Instr::UnifyVarYs(ref run) => {
                for &y in run.iter() {
                    self.unify_var(y as usize | PERM);
                }
            }
            Instr::UnifyVoid => self.unify_void(),
            Instr::UnifyValX(x) => return self.unify_val(k, x as usize),
            Instr::UnifyValY(y) => return self.unify_val(k, y as usize | PERM),
            Instr::UnifyConst(c) => return self.unify_const(k, c),
            Instr::GetConst(c, a) => return self.get_const(k, c, a),
            Instr::Arith2(ref t) => return self.arith2(k, t),
            Instr::IsChain(ref t) => return self.is_chain(k, t),
            Instr::Test(ref t) => return self.test(k, t),
            Instr::Arg(ref a) => return self.arg(k, a),
            Instr::Facts(ref t) => return self.facts(k, t),
            Instr::Jump(n) => return self.go(k, k + n as usize),
            _ => unreachable!("only translatable instructions are compiled"),
        }
        self.go(k, k + 1);
    }

    /// Register code `to` takes register code `from`'s cell (and what is
    /// known of it).
    fn mov(&mut self, from: usize, to: usize) {
        let (f, t) = (self.reg(from), self.reg(to));
        self.copy(f, t);
        self.forget(to);
        if let Some(k) = self.known_of(from) {
            self.known.push(Known { code: to, ..k });
        }
    }

    fn get_const(&mut self, k: usize, c: Cell, a: u32) {
        let cell = self.deref_reg(a as usize);
        let (next, back) = (self.b.create_block(), self.leaving(BACKTRACK));
        self.bind_or_compare(cell, c, next, back);
        self.b.switch_to_block(next);
        self.unsettle();
        self.go(k, k + 1);
    }

    /// Binds the unbound variable at heap address `addr` to the cell `v`,
    /// on the trail where it is older than the newest choice point (as
    /// `Store::bind`; the run made room for it on entry). What was known
    /// of the registers' cells dereferenced is not any more.
    fn bind(&mut self, addr: Value, (lo, hi): (Value, Value)) {
        let hb = std::mem::offset_of!(Machine, store.hb) as i32;
        let tr = std::mem::offset_of!(Machine, store.trail) as i32;
        let hb = self.b.ins().load(I64, MEM, self.m, hb);
        let older = self.b.ins().icmp(IntCC::UnsignedLessThan, addr, hb);
        let (trail, write) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(older, trail, &[], write, &[]);
        self.b.switch_to_block(trail);
        let len = self.b.ins().load(I64, MEM, self.m, tr + stack::LEN);
        let buf = self.b.ins().load(I64, MEM, self.m, tr + stack::PTR);
        let at = self.b.ins().ishl_imm_u(len, 3);
        let at = self.b.ins().iadd(buf, at);
        self.b.ins().store(MEM, addr, at, 0);
        let len = self.b.ins().iadd_imm_s(len, 1);
        self.b.ins().store(MEM, len, self.m, tr + stack::LEN);
        self.b.ins().jump(write, &[]);
        self.b.switch_to_block(write);
        let cell = self.b.ins().ishl_imm_u(addr, 4);
        let cell = self.b.ins().iadd(self.heap, cell);
        self.store((cell, 0), (lo, hi));
        self.unsettle();
    }

    /// `n` new cells on the heap (the run made room for them on entry):
    /// the address of the first. The heap's buffer does not move while a
    /// run runs (nothing grows it), so `heap` is still its address.
    fn push(&mut self, n: i64) -> Value {
        let hp = std::mem::offset_of!(Machine, store.heap) as i32;
        let len = self.b.ins().load(I64, MEM, self.m, hp + stack::LEN);
        let top = self.b.ins().iadd_imm_s(len, n);
        self.b.ins().store(MEM, top, self.m, hp + stack::LEN);
        len
    }

    /// The address of heap cell `a`.
    fn cell_at(&mut self, a: Value) -> (Value, i32) {
        let off = self.b.ins().ishl_imm_u(a, 4);
        (self.b.ins().iadd(self.heap, off), 0)
    }

    /// `GetStruct` (`fun`) or `GetList` (`None`) on register `a`: a
    /// compound term with that functor is read, its arguments from `s`;
    /// an unbound variable is bound to a new one, whose arguments the
    /// `Unify*` instructions after it build; anything else fails.
    fn get_compound(&mut self, k: usize, fun: Option<(Atom, u32)>, a: u32) {
        // Read or built: known only in each copy of the group below.
        self.mode = None;
        let (lo, hi) = self.deref_reg(a as usize);
        let t = self.tag(lo);
        let (var, nonvar, read) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let back = self.leaving(BACKTRACK);
        let is_ref = self.b.ins().icmp_imm_s(IntCC::Equal, t, REF);
        self.b.ins().brif(is_ref, var, &[], nonvar, &[]);
        self.b.switch_to_block(nonvar);
        let first = match fun {
            Some((f, n)) => {
                let is_str = self.b.ins().icmp_imm_s(IntCC::Equal, t, STR);
                self.require(is_str, back);
                let at = self.cell_at(hi);
                let name = self.b.ins().load(I64, MEM, at.0, 0);
                // The arity is 32 bits (what follows is padding).
                let arity = self.b.ins().uload32(MEM, at.0, 8);
                let same_name = self.b.ins().icmp_imm_s(IntCC::Equal, name, words(Cell::Fun(f, n)).0);
                let same_arity = self.b.ins().icmp_imm_s(IntCC::Equal, arity, n as i64);
                let same = self.b.ins().band(same_name, same_arity);
                self.b.ins().brif(same, read, &[], back, &[]);
                self.b.switch_to_block(read);
                self.b.ins().iadd_imm_s(hi, 1)
            }
            None => {
                let is_lst = self.b.ins().icmp_imm_s(IntCC::Equal, t, LST);
                self.b.ins().brif(is_lst, read, &[], back, &[]);
                self.b.switch_to_block(read);
                hi
            }
        };
        let zero = self.b.ins().iconst(I64, 0);
        self.b.def_var(self.s, first);
        self.b.def_var(self.wr, zero);
        // The `Unify*` instructions that follow in the run: made twice,
        // once reading and once building, so that none tests `wr`.
        let group: Vec<usize> =
            self.natives.iter().copied().skip_while(|&j| j <= k).take_while(|&j| is_unify(&self.run[j])).collect();
        if group.is_empty() {
            let next = self.b.create_block();
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(var);
            let term = self.new_compound(fun);
            self.bind(hi, term);
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(next);
            self.unsettle();
            self.go(k, k + 1);
            return;
        }
        // Both copies go on to the instruction after them, which knows
        // what both know.
        let after = group[group.len() - 1] + 1;
        if let Some(j) = self.joins.get_mut(after) {
            *j = true;
        }
        let known = self.known.clone();
        self.mode = Some(false);
        self.group(&group, None);
        self.b.switch_to_block(var);
        self.known = known;
        let term = self.new_compound(fun);
        self.bind(hi, term);
        self.mode = Some(true);
        let blocks = group.iter().map(|_| self.b.create_block()).collect();
        self.group(&group, Some(blocks));
        self.mode = None;
        self.made.extend_from_slice(&group);
    }

    /// The code of a group of `Unify*` instructions in the mode
    /// `Gen::mode` says, from the current block: in their own blocks, or
    /// in `blocks` (the second copy).
    fn group(&mut self, group: &[usize], blocks: Option<Vec<Block>>) {
        let own: Vec<Option<Block>> = group.iter().map(|&j| self.at[j]).collect();
        if let Some(blocks) = &blocks {
            for (&j, &b) in group.iter().zip(blocks) {
                self.at[j] = Some(b);
            }
        }
        let first = self.at[group[0]].expect("a block for each native instruction");
        self.b.ins().jump(first, &[]);
        let run = self.run;
        for &j in group {
            self.b.switch_to_block(self.at[j].expect("a block for each native instruction"));
            self.instr(j, &run[j]);
        }
        for (&j, b) in group.iter().zip(own) {
            self.at[j] = b;
        }
    }

    /// `GetListVarVar`, `GetListValVar` and `GetListVoidVar` on register
    /// `a` (see `Head`): a list cell has its head put in `Xx` (or unified
    /// with `Xx`'s cell, or left) and its tail in `Xy`; an unbound
    /// variable is bound to a new list cell of a new variable (or `Xx`'s
    /// cell) and a new variable, which go to `Xx` and `Xy`; anything else
    /// fails. A head and a cell of `Xx` that are not simple to unify leave
    /// the instruction to the interpreter (nothing has changed then).
    fn get_list2(&mut self, k: usize, a: u32, head: Head, y: u32) {
        let (lo, hi) = self.deref_reg(a as usize);
        let t = self.tag(lo);
        let (var, nonvar, next) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let back = self.leaving(BACKTRACK);
        let is_ref = self.b.ins().icmp_imm_s(IntCC::Equal, t, REF);
        self.b.ins().brif(is_ref, var, &[], nonvar, &[]);
        // A list cell read; both its arguments before either register is
        // written (either may be `a`).
        self.b.switch_to_block(nonvar);
        let is_lst = self.b.ins().icmp_imm_s(IntCC::Equal, t, LST);
        self.require(is_lst, back);
        let (cell, _) = self.cell_at(hi);
        let first = self.load((cell, 0));
        let tail = self.load((cell, 16));
        match head {
            Head::Old(x) => {
                let interpret = self.leaving(k as i64);
                let first = self.deref(first);
                self.unify_simple(first, x as usize, back, interpret);
            }
            Head::New(x) => {
                let to = self.xa(x);
                self.store(to, first);
            }
            Head::Void => {}
        }
        let to = self.xa(y);
        self.store(to, tail);
        self.b.ins().jump(next, &[]);
        // A variable bound to a new list cell.
        self.b.switch_to_block(var);
        let h = self.push(2);
        let (cell, _) = self.cell_at(h);
        let first = match head {
            Head::Old(x) => {
                let from = self.xa(x);
                self.load(from)
            }
            Head::New(_) | Head::Void => (self.b.ins().iconst(I64, REF), h),
        };
        self.store((cell, 0), first);
        let h1 = self.b.ins().iadd_imm_s(h, 1);
        let tail = (self.b.ins().iconst(I64, REF), h1);
        self.store((cell, 16), tail);
        if let Head::New(x) = head {
            let to = self.xa(x);
            self.store(to, first);
        }
        let to = self.xa(y);
        self.store(to, tail);
        let lst = self.b.ins().iconst(I64, LST);
        self.bind(hi, (lst, h));
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(next);
        if let Head::New(x) | Head::Old(x) = head {
            self.forget(x as usize);
        }
        self.forget(y as usize);
        // Paths with and without a binding join here.
        self.unsettle();
        self.go(k, k + 1);
    }

    /// A new compound term (`fun`, or a list cell), its arguments to be
    /// built from `s` on (`wr`): the term's cell.
    fn new_compound(&mut self, fun: Option<(Atom, u32)>) -> (Value, Value) {
        let (size, tag) = match fun {
            Some((_, n)) => (1 + n as i64, STR),
            None => (2, LST),
        };
        let h = self.push(size);
        let first = match fun {
            Some((f, n)) => {
                let at = self.cell_at(h);
                let header = self.constant(Cell::Fun(f, n));
                self.store(at, header);
                self.b.ins().iadd_imm_s(h, 1)
            }
            None => h,
        };
        let one = self.b.ins().iconst(I64, 1);
        self.b.def_var(self.s, first);
        self.b.def_var(self.wr, one);
        (self.b.ins().iconst(I64, tag), h)
    }

    /// `PutStruct` (`fun`) or `PutList` (`None`) into register `a`.
    fn put_compound(&mut self, fun: Option<(Atom, u32)>, a: u32) {
        let term = self.new_compound(fun);
        let to = self.xa(a);
        self.store(to, term);
        self.forget(a as usize);
        self.mode = Some(true);
    }

    /// Whether the `Unify*` instruction being made builds its argument
    /// (else reads it): known, as each follows the instruction that
    /// opened its compound term in the same run.
    fn building(&self) -> bool {
        self.mode.expect("a Unify instruction follows its compound term's in the run")
    }

    /// The address of the compound term's argument at `s`.
    fn at_s(&mut self) -> (Value, i32) {
        let sv = self.b.use_var(self.s);
        self.cell_at(sv)
    }

    /// A new variable as the argument at `s` (building): its cell.
    fn var_at_s(&mut self) -> (Value, Value) {
        let sv = self.b.use_var(self.s);
        let at = self.cell_at(sv);
        let v = (self.b.ins().iconst(I64, REF), sv);
        self.store(at, v);
        v
    }

    /// On to the compound term's next argument.
    fn next_arg(&mut self) {
        let sv = self.b.use_var(self.s);
        let sv = self.b.ins().iadd_imm_s(sv, 1);
        self.b.def_var(self.s, sv);
    }

    /// `UnifyVar*`: the argument at `s` to register code `code`: a new
    /// variable there when building.
    fn unify_var(&mut self, code: usize) {
        if self.building() {
            let v = self.var_at_s();
            self.new_var_in(code, v);
        } else {
            let at = self.at_s();
            let c = self.load(at);
            let to = self.reg(code);
            self.store(to, c);
            self.forget(code);
        }
        self.next_arg();
    }

    /// `UnifyVoid`: a new variable at `s` when building.
    fn unify_void(&mut self) {
        if self.building() {
            self.var_at_s();
        }
        self.next_arg();
    }

    /// A `Unify*` instruction that may bind (`k`): `write` builds the
    /// argument at `s`; `read` gets the argument there, dereferenced, and
    /// the block to go on to when it unifies; then on to the next
    /// argument.
    fn unify_arg(
        &mut self,
        k: usize,
        write: impl FnOnce(&mut Self, (Value, i32)),
        read: impl FnOnce(&mut Self, (Value, Value), Block),
    ) {
        let at = self.at_s();
        if self.building() {
            // Stored, nothing bound.
            write(self, at);
        } else {
            let join = self.b.create_block();
            let c = self.load(at);
            let a = self.deref(c);
            read(self, a, join);
            self.b.switch_to_block(join);
            // Paths with and without a binding join here.
            self.unsettle();
        }
        self.next_arg();
        self.go(k, k + 1);
    }

    /// `UnifyVal*`: register code `code`'s cell stored at `s` when
    /// building, unified with the argument there when reading (handed
    /// back to the interpreter, with `s` and `wr`, where that is not
    /// simple).
    fn unify_val(&mut self, k: usize, code: usize) {
        self.unify_arg(
            k,
            |g, at| {
                let from = g.reg(code);
                g.copy(from, at);
            },
            |g, a, join| {
                let back = g.leaving(BACKTRACK);
                let interpret = g.leaving(k as i64);
                g.unify_simple(a, code, back, interpret);
                g.b.ins().jump(join, &[]);
            },
        );
    }

    /// `UnifyConst`: the constant stored at `s` when building; when
    /// reading, the argument there bound to it or compared.
    fn unify_const(&mut self, k: usize, c: Cell) {
        self.unify_arg(
            k,
            |g, at| {
                let v = g.constant(c);
                g.store(at, v);
            },
            |g, a, join| {
                let back = g.leaving(BACKTRACK);
                g.bind_or_compare(a, c, join, back);
            },
        );
    }

    /// The dereferenced cell `(lo, hi)` unified with the atom or integer
    /// `c`: a variable bound to it, anything else compared; on to `next`,
    /// or to `back` where they differ. Leaves the current block.
    fn bind_or_compare(&mut self, (lo, hi): (Value, Value), c: Cell, next: Block, back: Block) {
        let t = self.tag(lo);
        let (var, nonvar) = (self.b.create_block(), self.b.create_block());
        let is_ref = self.b.ins().icmp_imm_s(IntCC::Equal, t, REF);
        self.b.ins().brif(is_ref, var, &[], nonvar, &[]);
        self.b.switch_to_block(var);
        let v = self.constant(c);
        self.bind(hi, v);
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(nonvar);
        let same = self.is_const(lo, hi, c);
        self.b.ins().brif(same, next, &[], back, &[]);
    }

    /// A new variable on the heap, given to the register codes `to`.
    fn put_var(&mut self, to: &[usize]) {
        let h = self.push(1);
        let v = (self.b.ins().iconst(I64, REF), h);
        let at = self.cell_at(h);
        self.store(at, v);
        for &code in to {
            self.new_var_in(code, v);
        }
    }

    /// Register code `code` takes the new unbound variable `v` (which
    /// dereferences to itself).
    fn new_var_in(&mut self, code: usize, v: (Value, Value)) {
        let r = self.reg(code);
        self.store(r, v);
        self.forget(code);
        self.known.push(Known { code, lo: v.0, hi: v.1, int: false });
    }

    /// Whether the dereferenced cell `(lo, hi)`, not a variable, is the
    /// atom or integer `c`.
    fn is_const(&mut self, lo: Value, hi: Value, c: Cell) -> Value {
        let (clo, chi) = words(c);
        // An atom is its whole low word; an integer its tag and high word.
        if matches!(c, Cell::Atom(_)) {
            self.b.ins().icmp_imm_s(IntCC::Equal, lo, clo)
        } else {
            let t = self.tag(lo);
            let tag = self.b.ins().icmp_imm_s(IntCC::Equal, t, INT);
            let val = self.b.ins().icmp_imm_s(IntCC::Equal, hi, chi);
            self.b.ins().band(tag, val)
        }
    }

    /// A call of a table of facts, as the interpreter's `facts`, its step
    /// counted: with `X0` unbound, the facts tried one after another from
    /// a choice point (`facts_first`); else the facts' first arguments
    /// compared with it, and the one that matches has its other arguments
    /// unified with `X1...` (bound or compared, one after the other); on
    /// to `done`, or backtracking where none matches.
    fn facts(&mut self, k: usize, t: &Rc<Facts>) {
        let place = k + t.done as usize;
        if t.fresh && self.resets.get(place) == Some(&true) {
            // Where the call goes on, first or after its choice point is
            // resumed by a failure later in the run, the slots of the
            // frame that were integers here still are: a resumption
            // restores the argument registers (others may have been
            // written since) and undoes only later bindings, and a slot
            // is written once, when its variable first occurs.
            self.kept = self.known.iter().filter(|k| k.int && k.code & PERM != 0).copied().collect();
        }
        let back = self.leaving(BACKTRACK);
        let (lo, hi) = self.deref_reg(0);
        let tag = self.tag(lo);
        let (bound, first) = (self.b.create_block(), self.b.create_block());
        let s = self.b.use_var(self.steps);
        let s = self.b.ins().iadd_imm_s(s, 1);
        self.b.def_var(self.steps, s);
        let unbound = self.b.ins().icmp_imm_s(IntCC::Equal, tag, REF);
        self.b.ins().brif(unbound, first, &[], bound, &[]);
        // Unbound: the facts one after another, from a choice point
        // (`Machine::facts_first`) that resumes where the call goes on.
        self.b.switch_to_block(first);
        let known = self.known.clone();
        let tp = self.b.ins().iconst(I64, Rc::as_ptr(t) as i64);
        let to = self.b.ins().iconst(I64, (k + t.done as usize) as i64);
        let unified = self.helper(facts_first as *const u8, &[self.m, tp, to]);
        let on = self.b.create_block();
        self.b.ins().brif(unified, on, &[], back, &[]);
        self.b.switch_to_block(on);
        self.unsettle();
        self.go(k, place);
        self.known = known;
        self.b.switch_to_block(bound);
        let matched = self.b.create_block();
        let known = self.known.clone();
        let n = t.arity as usize - 1;
        for (r, &key) in t.keys.iter().enumerate() {
            let (row, next) = (self.b.create_block(), self.b.create_block());
            let same = self.is_const(lo, hi, key);
            self.b.ins().brif(same, row, &[], next, &[]);
            self.b.switch_to_block(row);
            for (j, &c) in t.rest[r * n..r * n + n].iter().enumerate() {
                let cell = self.deref_reg(j + 1);
                let ok = self.b.create_block();
                self.bind_or_compare(cell, c, ok, back);
                self.b.switch_to_block(ok);
                self.unsettle();
            }
            self.b.ins().jump(matched, &[]);
            // What this fact's blocks learnt holds on none of the others.
            self.known = known.clone();
            self.b.switch_to_block(next);
        }
        self.b.ins().jump(back, &[]);
        self.b.switch_to_block(matched);
        self.unsettle();
        self.go(k, place);
        if t.fresh && self.resets.get(place) == Some(&true) {
            self.inner = Some((Rc::as_ptr(t), place));
        }
    }

    /// `arg(N, T, A)` as the interpreter's `arg_fast`: N an integer and T
    /// a compound, else to the general builtin; N out of range fails; the
    /// argument goes to a new variable's register, or is unified with
    /// an atom, an integer, or an old variable's cell (bound, or compared
    /// where both are atoms or integers; compound terms are handed back to
    /// the interpreter, or unified by `arg_unify` where the `arg/3` starts
    /// the run). So it may start a run (as where `between/3` goes on:
    /// `between_scan` finds it there).
    fn arg(&mut self, k: usize, a: &ArgFast) {
        let general = self.leaving(k as i64 + 1);
        let n = self.operand(a.n, general);
        let (tlo, thi) = self.deref_reg(a.t);
        let tt = self.tag(tlo);
        // The first argument's address and the arity: a structure's
        // header is its functor and arity (the arity in the high word), a
        // list cell has two arguments where it points.
        let (str_, lst, got) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let first = self.b.declare_var(I64);
        let arity = self.b.declare_var(I64);
        let not_str = self.b.create_block();
        let is_str = self.b.ins().icmp_imm_s(IntCC::Equal, tt, STR);
        self.b.ins().brif(is_str, str_, &[], not_str, &[]);
        self.b.switch_to_block(not_str);
        let is_lst = self.b.ins().icmp_imm_s(IntCC::Equal, tt, LST);
        self.b.ins().brif(is_lst, lst, &[], general, &[]);
        self.b.switch_to_block(str_);
        let addr = self.b.ins().ishl_imm_u(thi, 4);
        let addr = self.b.ins().iadd(self.heap, addr);
        // The arity is 32 bits (what follows is padding).
        let n_args = self.b.ins().uload32(MEM, addr, 8);
        let at = self.b.ins().iadd_imm_s(thi, 1);
        self.b.def_var(first, at);
        self.b.def_var(arity, n_args);
        self.b.ins().jump(got, &[]);
        self.b.switch_to_block(lst);
        let two = self.b.ins().iconst(I64, 2);
        self.b.def_var(first, thi);
        self.b.def_var(arity, two);
        self.b.ins().jump(got, &[]);
        self.b.switch_to_block(got);
        let (first, arity) = (self.b.use_var(first), self.b.use_var(arity));
        // A negative N is an error, which the builtin raises; 0 or past
        // the arity fails.
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, n, 0);
        let fine = self.b.ins().icmp_imm_s(IntCC::Equal, negative, 0);
        self.require(fine, general);
        let back = self.leaving(BACKTRACK);
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, n, 0);
        let past = self.b.ins().icmp(IntCC::SignedGreaterThan, n, arity);
        let out = self.b.ins().bor(zero, past);
        let inside = self.b.create_block();
        self.b.ins().brif(out, back, &[], inside, &[]);
        self.b.switch_to_block(inside);
        let at = self.b.ins().iadd(first, n);
        let at = self.b.ins().iadd_imm_s(at, -1);
        let addr = self.b.ins().ishl_imm_u(at, 4);
        let addr = self.b.ins().iadd(self.heap, addr);
        let v = self.load((addr, 0));
        match a.dst {
            ArgDst::New(code) => {
                let to = self.reg(code);
                self.store(to, v);
                self.forget(code);
                // What the run goes on to ask of it (a board square is
                // most often compared next), known once.
                let (lo, hi) = self.deref(v);
                self.known.push(Known { code, lo, hi, int: false });
            }
            ArgDst::Const(c) => {
                let a = self.deref(v);
                let next = self.b.create_block();
                self.bind_or_compare(a, c, next, back);
                self.b.switch_to_block(next);
                self.unsettle();
            }
            // Inside a run, compound terms (floats, strings) are left to
            // the interpreter's `arg/3`, which runs the instruction again
            // (nothing has changed yet): no call in the run's code, so no
            // more of the registers its entry and exit save.
            ArgDst::Old(code) if k != self.natives[0] => {
                let d = self.deref(v);
                let interpret = self.leaving(k as i64);
                self.unify_simple(d, code, back, interpret);
            }
            // Where it starts the run, which it cannot hand back to (that
            // would be the run again), the helper unifies them.
            ArgDst::Old(code) => {
                let d = self.deref(v);
                let unify = self.b.create_block();
                let known = self.known.clone();
                self.unify_simple(d, code, back, unify);
                let after = std::mem::replace(&mut self.known, known);
                let next = self.b.create_block();
                self.b.ins().jump(next, &[]);
                // Compound terms (or floats, strings): unified in Rust.
                self.b.switch_to_block(unify);
                let code = self.b.ins().iconst(I64, code as i64);
                let unified = self.helper(arg_unify as *const u8, &[self.m, at, code]);
                self.b.ins().brif(unified, next, &[], back, &[]);
                self.b.switch_to_block(next);
                self.known = after;
                self.unsettle();
            }
        }
        self.done(k, a.done);
    }

    /// Unifies the dereferenced cell `a` with register code `code`'s, as
    /// `Store::unify` does where neither is compound (a variable bound to
    /// the other side, the younger of two variables to the older; atoms
    /// and integers compared): on to the block after, or to `back` where
    /// they differ, or to `interpret` for anything else (nothing has
    /// changed then).
    fn unify_simple(&mut self, (alo, ahi): (Value, Value), code: usize, back: Block, interpret: Block) {
        let (blo, bhi) = self.deref_reg(code);
        let (ta, tb) = (self.tag(alo), self.tag(blo));
        let next = self.b.create_block();
        let (a_var, a_nonvar, b_var, both_var) =
            (self.b.create_block(), self.b.create_block(), self.b.create_block(), self.b.create_block());
        let is_ref = self.b.ins().icmp_imm_s(IntCC::Equal, ta, REF);
        self.b.ins().brif(is_ref, a_var, &[], a_nonvar, &[]);
        // `a` a variable: bound to `b` unless `b` is one too.
        self.b.switch_to_block(a_var);
        let b_ref = self.b.ins().icmp_imm_s(IntCC::Equal, tb, REF);
        let a_to_b = self.b.create_block();
        self.b.ins().brif(b_ref, both_var, &[], a_to_b, &[]);
        self.b.switch_to_block(a_to_b);
        self.bind(ahi, (blo, bhi));
        self.b.ins().jump(next, &[]);
        // Two variables: the younger (higher) bound to the older, unless
        // they are one.
        self.b.switch_to_block(both_var);
        let two = self.b.create_block();
        let one = self.b.ins().icmp(IntCC::Equal, ahi, bhi);
        self.b.ins().brif(one, next, &[], two, &[]);
        self.b.switch_to_block(two);
        let a_younger = self.b.ins().icmp(IntCC::UnsignedGreaterThan, ahi, bhi);
        let younger = self.b.ins().select(a_younger, ahi, bhi);
        let older = self.b.ins().select(a_younger, bhi, ahi);
        let tag = self.b.ins().iconst(I64, REF);
        self.bind(younger, (tag, older));
        self.b.ins().jump(next, &[]);
        // `a` not a variable: `b` a variable is bound to it.
        self.b.switch_to_block(a_nonvar);
        let b_ref = self.b.ins().icmp_imm_s(IntCC::Equal, tb, REF);
        let consts = self.b.create_block();
        self.b.ins().brif(b_ref, b_var, &[], consts, &[]);
        self.b.switch_to_block(b_var);
        self.bind(bhi, (alo, ahi));
        self.b.ins().jump(next, &[]);
        // Neither a variable: atoms and integers compared, anything else
        // unified by the interpreter.
        self.b.switch_to_block(consts);
        let a_const = self.tag_in(ta, &[ATOM, INT]);
        let b_const = self.tag_in(tb, &[ATOM, INT]);
        let both = self.b.ins().band(a_const, b_const);
        self.require(both, interpret);
        let eq_tags = self.b.ins().icmp(IntCC::Equal, ta, tb);
        let by_hi = self.b.ins().icmp(IntCC::Equal, ahi, bhi);
        let by_lo = self.b.ins().icmp(IntCC::Equal, alo, blo);
        let is_atom = self.b.ins().icmp_imm_s(IntCC::Equal, ta, ATOM);
        let same = self.b.ins().select(is_atom, by_lo, by_hi);
        let same = self.b.ins().band(eq_tags, same);
        self.b.ins().brif(same, next, &[], back, &[]);
        self.b.switch_to_block(next);
        // Paths with and without a binding join here.
        self.unsettle();
    }

    fn arith2(&mut self, k: usize, t: &Arith2) {
        let other = self.leaving(k as i64 + 1);
        let a = self.operand(t.a, other);
        let b = self.operand(t.b, other);
        match t.op {
            Arith2Op::Cmp(ord, negate) => {
                let cc = match (ord, negate) {
                    (Ordering::Less, false) => IntCC::SignedLessThan,
                    (Ordering::Less, true) => IntCC::SignedGreaterThanOrEqual,
                    (Ordering::Equal, false) => IntCC::Equal,
                    (Ordering::Equal, true) => IntCC::NotEqual,
                    (Ordering::Greater, false) => IntCC::SignedGreaterThan,
                    (Ordering::Greater, true) => IntCC::SignedLessThanOrEqual,
                };
                let holds = self.b.ins().icmp(cc, a, b);
                let (yes, no) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(holds, yes, &[], no, &[]);
                self.b.switch_to_block(yes);
                self.done(k, t.done);
                self.b.switch_to_block(no);
                self.fail(k, t.fail);
            }
            Arith2Op::Is(op, code, new) => {
                let r = self.binary(op, a, b, other);
                self.is_result(k, code, new, r, Exits { done: t.done, fail: t.fail, other });
            }
            Arith2Op::Random(code, new) => {
                // As the interpreter: no draw when the range is empty, and
                // a target that is no variable or integer left to the
                // builtin (before the draw, which the builtin makes then).
                let (empty, draw) = (self.b.create_block(), self.b.create_block());
                let lt = self.b.ins().icmp(IntCC::SignedLessThan, b, a);
                self.b.ins().brif(lt, empty, &[], draw, &[]);
                self.b.switch_to_block(empty);
                self.fail(k, t.fail);
                self.b.switch_to_block(draw);
                if !new {
                    let (lo, _) = self.deref_reg(code);
                    let tag = self.tag(lo);
                    let fits = self.tag_in(tag, &[REF, INT]);
                    self.require(fits, other);
                }
                let r = self.helper(random_draw as *const u8, &[self.m, a, b]);
                self.is_result(k, code, new, r, Exits { done: t.done, fail: t.fail, other });
            }
        }
    }

    fn is_chain(&mut self, k: usize, t: &IsChain) {
        let other = self.leaving(k as i64 + 1);
        let mut acc = self.operand(t.first, other);
        for &(op, b) in t.rest.iter() {
            let v = self.operand(b, other);
            acc = self.binary(op, acc, v, other);
        }
        self.is_result(k, t.code, t.new, acc, Exits { done: t.done, fail: t.fail, other });
    }

    fn test(&mut self, k: usize, t: &TestFast) {
        let other = self.leaving(k as i64 + 1);
        let (alo, ahi) = self.opd(t.a);
        let ta = self.tag(alo);
        let (holds, negate) = match t.op {
            TestOp::Type(tt) => {
                let holds = match tt {
                    TypeTest::Var => self.tag_in(ta, &[REF]),
                    TypeTest::Nonvar => self.b.ins().icmp_imm_s(IntCC::NotEqual, ta, REF),
                    TypeTest::Atom => {
                        // `[]` is not an atom (as in SWI-Prolog 7).
                        let is_atom = self.tag_in(ta, &[ATOM]);
                        let nil = self.b.ins().icmp_imm_s(IntCC::NotEqual, alo, words(Cell::Atom(atom::NIL)).0);
                        self.b.ins().band(is_atom, nil)
                    }
                    TypeTest::Number => self.tag_in(ta, &[INT, FLT]),
                    TypeTest::Integer => self.tag_in(ta, &[INT]),
                    TypeTest::Float => self.tag_in(ta, &[FLT]),
                    TypeTest::Atomic => self.tag_in(ta, &[ATOM, INT, FLT, TEXT]),
                    TypeTest::Compound => self.tag_in(ta, &[STR, LST]),
                    TypeTest::Callable => self.tag_in(ta, &[ATOM, STR, LST]),
                    TypeTest::String => self.tag_in(ta, &[TEXT]),
                };
                (holds, false)
            }
            // Against an atom or an integer: the cell is that constant
            // (an atom's whole low word, an integer's tag and high word),
            // whatever else it is (a variable, another type) it is not.
            TestOp::Same(negate) if matches!(t.b, Opd::Const(_)) => {
                let Opd::Const(c) = t.b else { unreachable!("matched above") };
                (self.is_const(alo, ahi, c), negate)
            }
            TestOp::Same(negate) => {
                let (blo, bhi) = self.opd(t.b);
                let tb = self.tag(blo);
                // As the interpreter's `test`: identical variables,
                // atoms and integers decided here; a variable, an atom or
                // an integer against anything else differ; anything else
                // falls through to the builtin.
                let (alike, unlike) = (self.b.create_block(), self.b.create_block());
                let eq_tags = self.b.ins().icmp(IntCC::Equal, ta, tb);
                self.b.ins().brif(eq_tags, alike, &[], unlike, &[]);
                let decided = self.b.create_block();
                let same = self.b.declare_var(cranelift_codegen::ir::types::I8);
                // Same tags: a variable or an integer by its high word,
                // an atom by its low word.
                self.b.switch_to_block(alike);
                let simple = self.tag_in(ta, &[REF, INT, ATOM]);
                self.require(simple, other);
                let by_hi = self.b.ins().icmp(IntCC::Equal, ahi, bhi);
                let by_lo = self.b.ins().icmp(IntCC::Equal, alo, blo);
                let is_atom = self.b.ins().icmp_imm_s(IntCC::Equal, ta, ATOM);
                let s = self.b.ins().select(is_atom, by_lo, by_hi);
                self.b.def_var(same, s);
                self.b.ins().jump(decided, &[]);
                // Different tags: unequal where either is a variable, an
                // atom or an integer.
                self.b.switch_to_block(unlike);
                let a_simple = self.tag_in(ta, &[REF, ATOM, INT]);
                let b_simple = self.tag_in(tb, &[REF, ATOM, INT]);
                let known = self.b.ins().bor(a_simple, b_simple);
                self.require(known, other);
                let f = self.b.ins().iconst(cranelift_codegen::ir::types::I8, 0);
                self.b.def_var(same, f);
                self.b.ins().jump(decided, &[]);
                self.b.switch_to_block(decided);
                (self.b.use_var(same), negate)
            }
        };
        let (yes, no) = (self.b.create_block(), self.b.create_block());
        if negate {
            self.b.ins().brif(holds, no, &[], yes, &[]);
        } else {
            self.b.ins().brif(holds, yes, &[], no, &[]);
        }
        self.b.switch_to_block(yes);
        self.done(k, t.done);
        self.b.switch_to_block(no);
        self.fail(k, t.fail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::engine::atoms::Atom;

    /// The cell of two words (the inverse of `words`, reading only what the
    /// tag says is there).
    fn cell(lo: i64, hi: i64) -> Cell {
        let half = (lo >> 32) as u32;
        match lo as u32 as i64 {
            REF => Cell::Ref(hi as usize),
            ATOM => Cell::Atom(Atom(half)),
            INT => Cell::Int(hi),
            FLT => Cell::Flt(f64::from_bits(hi as u64)),
            STR => Cell::Str(hi as usize),
            LST => Cell::Lst(hi as usize),
            TEXT => Cell::Text(half),
            _ => Cell::Fun(Atom(half), hi as u32),
        }
    }

    fn answers(e: &mut Engine, q: &str) -> Vec<String> {
        match e.query(q) {
            Ok(sols) => sols
                .map(|a| match a {
                    Ok(a) => a.bindings.iter().map(|b| b.text.clone()).collect::<Vec<_>>().join(","),
                    Err(err) => format!("error: {err:?}"),
                })
                .collect(),
            Err(err) => vec![format!("error: {err:?}")],
        }
    }

    /// Each query gives the same answers, in the same order, with native
    /// code (every clause's from its first call) and without; the native
    /// engine did compile runs.
    fn both_ways(src: &str, queries: &[&str]) {
        both_ways_after(src, queries, 0);
    }

    /// `both_ways` with `counted(G, N)` (the inferences `G` takes) added
    /// to `src`, and each query's errors caught (`E`).
    fn counted_both_ways(src: &str, queries: &[String]) {
        let src =
            format!("counted(G, N) :- statistics(inferences, A), G, statistics(inferences, B), N is B - A.\n{src}");
        let queries: Vec<String> = queries.iter().map(|q| format!("catch({q}, error(E, _), true)")).collect();
        let queries: Vec<&str> = queries.iter().map(|q| q.as_str()).collect();
        both_ways(&src, &queries);
    }

    /// What a run knows of its registers (`Gen::known`) does not outlive
    /// a binding that changes it: integers given by `is/2` and compared,
    /// variables bound and tested again in one run.
    #[test]
    fn integers_known_across_bindings_are_the_interpreters() {
        let src = "step(X, D, W, X2, J) :- X2 is X + D, X2 >= 1, X2 =< W, J is (X2 - 1) * W + X2, J > X.\n\
                   alias(A, B, C) :- B = A, A > 0, C is B + 1, C > A, B < C.\n\
                   rebind(V, W, L) :- V is 3 + 1, L = [V, W], W is V + 1, W > V.\n\
                   twice(X, Y) :- Y is X + 1, Y is X + 1, Y > X.\n\
                   late(X, Y, Z) :- Y = Z, X > 1, Z is X * 2, Y =:= X + X.\n\
                   bound(X, R) :- var(X), X = 5, ( var(X) -> R = v ; R = n ).\n\
                   named(X, Y, R) :- Y \\== a, Y = X, X = a, ( Y == a -> R = y ; R = n ).\n\
                   pm(F, A, B, M) :- ( T is F + A, arg(T, B, e), M = m(F, T) ; T is F - A, M = m(F, T) ).\n";
        both_ways(
            src,
            &[
                "step(3, 1, 8, X2, J)",
                "step(3, -1, 8, X2, J)",
                "step(1, -1, 8, X2, J)",
                "step(8, 1, 8, X2, J)",
                "step(3, 1, 8, 4, J)",
                "step(3, 1, 8, 5, J)",
                "step(3, 1, 8, X2, 28)",
                "step(3, 1, 8, X2, 27)",
                "catch(step(3, 1, 8, a, J), error(E, _), true)",
                "alias(2, B, C)",
                "alias(0, B, C)",
                "alias(X, 3, C)",
                "rebind(V, W, L)",
                "rebind(4, W, L)",
                "rebind(5, W, L)",
                "rebind(V, 5, L)",
                "rebind(V, 6, L)",
                "twice(1, Y)",
                "late(3, Y, Z)",
                "late(1, Y, Z)",
                "bound(X, R)",
                "bound(5, R)",
                "named(X, Y, R)",
                "named(b, Y, R)",
                "findall(M, pm(3, 1, b(e, x, x, e), M), L)",
                "findall(M, pm(3, 1, b(e, x, x, x), M), L)",
                "findall(M, pm(3, 1, b(e, x, x, e), m(3, 4)), L)",
                "findall(M, pm(3, 1, b(e, x, x, e), m(3, 2)), L)",
                "findall(M, pm(3, 1, b(e, x, x, e), m(F, T)), L)",
            ],
        );
    }

    /// `both_ways`, each clause getting native code at its `after + 1`th
    /// call.
    fn both_ways_after(src: &str, queries: &[&str], after: u32) {
        let mut plain = Engine::new();
        let mut native = Engine::new();
        assert!(native.set_native(true), "no native code generator for this processor");
        native.set_native_after(after);
        plain.set_native(false);
        for e in [&mut plain, &mut native] {
            assert!(!e.load("t", src).has_errors());
        }
        for q in queries {
            assert_eq!(answers(&mut native, q), answers(&mut plain, q), "{q}");
        }
        let (runs, spanned) = native.native_runs().expect("native code is on");
        assert!(runs > 0 && spanned >= runs, "{runs} runs spanning {spanned} instructions");
    }

    /// A clause that walks a list by calling itself goes round in its
    /// native code (see `Loop`), with the interpreter's answers, steps and
    /// errors: lists read and built, a partial list and an unbound first
    /// argument (left to the interpreter's call, with its choice points),
    /// heads not simple to unify (handed back), a step limit reached
    /// inside the loop, garbage collected on the way, and a clause added
    /// later by another file (the loop then makes its calls through the
    /// interpreter).
    #[test]
    fn lists_walked_round_natively_are_the_interpreters() {
        let src = "app([], L, L).\n\
                   app([H|T], L, [H|R]) :- app(T, L, R).\n\
                   len([], N, N).\n\
                   len([_|T], N0, N) :- N1 is N0 + 1, len(T, N1, N).\n\
                   sum([], S, S).\n\
                   sum([X|Xs], S0, S) :- S1 is S0 + X, sum(Xs, S1, S).\n\
                   same([], []).\n\
                   same([X|Xs], [X|Ys]) :- same(Xs, Ys).\n\
                   nrev([], []).\n\
                   nrev([H|T], R) :- nrev(T, RT), app(RT, [H], R).\n\
                   steps(G, N) :- statistics(inferences, A), call(G), statistics(inferences, B), N is B - A.\n";
        let queries = [
            "app([1, 2, 3], [4], L)",
            "app([a, b], X, [a, b, c])",
            "app([a, b], [c], [a, x, c])",
            "app([a, b], [c], [a, b, c, d])",
            "app(X, Y, [1, 2])",
            "once((app([1, 2|T], [3], L), T = [_, _]))",
            "app([X, Y], [Y], [1, 2, Z])",
            "app(foo, [], L)",
            "len([a, b, c, d], 0, N)",
            "once(len(L, 0, 2))",
            "numlist(1, 1000, L), sum(L, 0, S), steps(len(L, 0, _), N)",
            "sum([1, 2, x], 0, S)",
            "len([a, b|c], 0, N)",
            "catch(len([a, b], x, N), error(E, _), true)",
            "same([f(X), 2, Z], [f(1), Y, 3])",
            "same([f(X), 2], [g(1), 2])",
            "same([1, 2], L)",
            "numlist(1, 300, L), nrev(L, R), R = [A, B|_], steps(nrev(L, _), N)",
            "numlist(1, 20000, L), steps(app(L, [x], R), N), last(R, Z)",
        ];
        both_ways(src, &queries);
        // The same answers and error with a step limit reached inside the
        // loop, and with garbage collections on the way.
        let mut plain = Engine::new();
        let mut native = Engine::new();
        assert!(native.set_native(true));
        native.set_native_after(0);
        plain.set_native(false);
        for e in [&mut plain, &mut native] {
            assert!(!e.load("t", src).has_errors());
            e.set_limits(crate::engine::Limits { max_steps: Some(5_000), ..Default::default() });
        }
        for q in ["numlist(1, 2000, L), app(L, L, R), length(R, N)", "numlist(1, 20000, L), app(L, [], R)"] {
            let a = answers(&mut native, q);
            assert_eq!(a, answers(&mut plain, q), "{q}");
            if q.contains("20000") {
                assert!(a[0].contains("Limit"), "{a:?}");
            }
        }
        // A clause added by a later file: every call takes it too.
        let later = "app([X|_], _, first(X)).";
        for e in [&mut plain, &mut native] {
            e.set_limits(crate::engine::Limits::default());
            e.load("later", later);
        }
        for q in
            ["findall(R, app([1, 2], [3], R), Rs)", "numlist(1, 50, L), findall(R, app(L, [], R), Rs), length(Rs, N)"]
        {
            assert_eq!(answers(&mut native, q), answers(&mut plain, q), "{q}");
        }
    }

    /// Comparisons both ways and `is/2` on every binary operator the
    /// native code runs, into new, bound and caller-bound variables;
    /// floats, atoms, unbound variables, overflows and zero divisors
    /// fall through to the builtins, which raise the same errors.
    #[test]
    fn arithmetic_is_the_interpreters() {
        let src = "cmp(A, B, L) :- findall(O, ((A < B, O = lt) ; (A > B, O = gt) ; (A =< B, O = le) ; \
                   (A >= B, O = ge) ; (A =:= B, O = eq) ; (A =\\= B, O = ne)), L).\n\
                   ops(A, B, [S, D, P, Q, M, N, X]) :- S is A + B, D is A - B, P is A * B, Q is A // B, \
                   M is A mod B, N is min(A, B), X is max(A, B).\n\
                   chain(I, C, X, Y) :- X is (I - 1) mod C + 1, Y is (I - 1) // C * C - I.\n\
                   old(A, B, C) :- C = B, C is A + 1.\n\
                   lim(A) :- A >= 1, A =< 8.\n";
        let max = i64::MAX;
        let min = i64::MIN;
        let mut queries = vec![
            "cmp(1, 2, L)".to_string(),
            "cmp(2, 2, L)".into(),
            "cmp(3, 2, L)".into(),
            "cmp(1.5, 2, L)".into(),
            "catch(cmp(a, 2, L), error(E, _), true)".into(),
            "catch(cmp(_, 2, L), error(E, _), true)".into(),
            "findall(A, (member(A, [0, 1, 5, 8, 9]), lim(A)), L)".into(),
            "old(4, 5, C)".into(),
            "old(4, 6, C)".into(),
            "old(4, X, C)".into(),
            "catch(old(4, a, C), error(E, _), true)".into(),
            "chain(7, 3, X, Y)".into(),
            "chain(-7, 3, X, Y)".into(),
            "catch(chain(7, 0, X, Y), error(E, _), true)".into(),
        ];
        for (a, b) in [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 5), (5, 1), (6, 3)] {
            queries.push(format!("ops({a}, {b}, L)"));
        }
        for (a, b) in [(max, 1), (min, 1), (min, -1), (max, 2), (5, 0), (max, -1)] {
            queries.push(format!("catch(ops({a}, {b}, L), error(E, _), true)"));
        }
        queries.push("catch(ops(1.5, 2, L), error(E, _), true)".into());
        let queries: Vec<&str> = queries.iter().map(|q| q.as_str()).collect();
        both_ways(src, &queries);
    }

    /// Moves, constants, type tests and `==`/`\==` in runs, with the
    /// variables, atoms, integers, `[]`, floats, strings and compound
    /// terms they meet.
    #[test]
    fn tests_and_moves_are_the_interpreters() {
        let src = "kind(X, K) :- ( var(X) -> K = var ; integer(X) -> K = int ; atom(X) -> K = atom ; \
                   float(X) -> K = float ; string(X) -> K = string ; compound(X) -> K = compound ; K = other ).\n\
                   types(X, L) :- findall(T, ((atomic(X), T = atomic) ; (number(X), T = number) ; \
                   (callable(X), T = callable) ; (nonvar(X), T = nonvar)), L).\n\
                   same(A, B, S) :- ( A == B -> S = yes ; S = no ).\n\
                   differ(A, B, S) :- ( A \\== B -> S = yes ; S = no ).\n\
                   fact(white, w, 1).\n\
                   fact(black, b, -1).\n\
                   swap(A, B, C, D, B, A, D, C).\n\
                   pass(A, B, C) :- fact(A, B, D), C = D, kind(B, _).\n";
        let values = ["_", "1", "a", "[]", "1.5", "\"s\"", "f(x)", "[a]"];
        let mut queries = Vec::new();
        for v in values {
            queries.push(format!("kind({v}, K)"));
            queries.push(format!("types({v}, L)"));
            for w in values {
                queries.push(format!("same({v}, {w}, S)"));
                queries.push(format!("differ({v}, {w}, S)"));
            }
        }
        queries.extend(
            ["same(X, X, S)", "differ(X, X, S)", "X = Y, same(X, Y, S)", "X = 1, same(X, 1, S)"].map(String::from),
        );
        queries.extend(
            [
                "fact(white, B, C)",
                "fact(A, b, C)",
                "fact(x, B, C)",
                "fact(white, b, C)",
                "swap(1, 2, x, y, A, B, C, D)",
            ]
            .map(String::from),
        );
        queries.extend(["pass(white, B, C)", "pass(black, B, 2)", "pass(P, B, C)"].map(String::from));
        let queries: Vec<&str> = queries.iter().map(|q| q.as_str()).collect();
        both_ways(src, &queries);
    }

    /// `arg/3` in runs: into a new variable, against an old one, an atom
    /// or an integer; on structures, list cells and what is neither; N
    /// out of range, negative, not an integer or unbound; and where it
    /// would bind a variable or unify compound terms (left to the
    /// interpreter).
    #[test]
    fn arg_is_the_interpreters() {
        let src = "new(I, T, R) :- J is I + 0, arg(J, T, A), K is J + 1, R = K-A.\n\
                   old(I, T, X) :- J is I + 0, arg(J, T, X), K is J + 1, K > 0.\n\
                   con(I, T) :- J is I + 0, arg(J, T, w), K is J + 1, K > 0.\n\
                   int(I, T) :- J is I + 0, arg(J, T, 3), K is J + 1, K > 0.\n\
                   two(I, T, R) :- J is I + 0, arg(J, T, A), arg(1, T, B), K is J * 2, R = K-A-B.\n\
                   same(I, T, R) :- J is I + 0, arg(J, T, A), arg(2, T, A), K is J + 1, R = K-A.\n\
                   scan(T, L) :- findall(I-A, (between(1, 9, I), J is I + 0, arg(J, T, A), J > 0), L).\n";
        let terms = [
            "f(w, 3, X, g(1), 2.5, \"s\", w, [])",
            "f(w, w)",
            "f(3, 3)",
            "f(P, Q, P)",
            "[w|3]",
            "[a]",
            "foo",
            "7",
            "_",
        ];
        let mut queries = Vec::new();
        for t in terms {
            for i in ["-1", "0", "1", "2", "3", "4", "5", "6", "8", "9", "a", "1.0", "_"] {
                for q in ["new(I, T, R)", "old(I, T, X)", "old(I, T, w)", "old(I, T, 3)", "old(I, T, g(Y))"] {
                    queries.push(format!("catch({}, error(E, _), true)", q.replace('I', i).replace('T', t)));
                }
                for q in ["con(I, T)", "int(I, T)", "two(I, T, R)", "same(I, T, R)"] {
                    queries.push(format!("catch({}, error(E, _), true)", q.replace('I', i).replace('T', t)));
                }
            }
            queries.push(format!("catch(scan({t}, L), error(E, _), true)"));
        }
        queries.push("X = f(A, B), con(1, X), int(2, X)".into());
        queries.push("X = f(A, B), old(1, X, Y), Y = 1".into());
        let queries: Vec<&str> = queries.iter().map(|q| q.as_str()).collect();
        both_ways(src, &queries);
    }

    /// A run goes on over the place an if-then-else's branches join,
    /// which starts a run of its own for the branch that jumps there: both
    /// ways in, and the interpreter landing among the instructions past
    /// the join (a fast path that hands back: a float, an overflow, an
    /// unbound operand), with the inferences counted as the interpreter
    /// counts them.
    #[test]
    fn runs_over_a_join_are_the_interpreters() {
        let src = "p(X, Y, R) :- ( integer(X) -> I is X + 0 ; between(1, 4, I0), I is I0 + 1 ), J is I * 2, K is J + Y, \
                   ( K > 6 -> R = big(K) ; R = small(K) ).\n\
                   q(X, Y, R) :- ( X == a -> I = 1 ; X == b -> I = 2 ; I is X * 3 ), J is I + Y, K is J * J, R = I-K.\n";
        let mut queries = Vec::new();
        for x in ["1", "7", "X", "a", "2.5", "4611686018427387904"] {
            for y in ["0", "3", "1.5", "Y", "9223372036854775807"] {
                queries.push(format!("counted(findall(R, p({x}, {y}, R), L), N)"));
                queries.push(format!("counted(findall(R, q({x}, {y}, R), L), N)"));
            }
        }
        queries.push("counted(findall(R, q(b, 2, R), L), N)".into());
        counted_both_ways(src, &queries);
    }

    /// A run goes on over the place where a fresh table's call it makes
    /// goes on (that place starts a run of its own too, where
    /// backtracking into the call lands): a failure after the call
    /// resumes its choice point and goes on there in the same run, until
    /// the table is done; two tables in a clause, a table after an
    /// if-then-else whose branches skip nothing of it, a cut after the
    /// table, non-integers handed back past it; answers and inferences as
    /// the interpreter's.
    #[test]
    fn runs_over_a_tables_place_are_the_interpreters() {
        let src = "dir(-1).\ndir(0).\ndir(1).\n\
                   walk(X, Y, R) :- X1 is X + 1, Y1 is Y * 2, dir(D), X2 is X1 + D, X2 > 0, X2 =< 3, T is X2 * Y1, \
                   ( T > 4 -> R = big(X2, T) ; T > 0, R = small(X2, T) ).\n\
                   two(X, R) :- Y is X + 1, dir(D), dir(E), S is Y + D * 10 + E, S > 0, R = S.\n\
                   pick(X, R) :- ( X > 0 -> Z is X + 1 ; Z is 0 - X ), dir(D), W is Z + D, W > 1, R = W.\n\
                   once_(X, R) :- Y is X * 1, dir(D), Y + D > 1, !, R = D.\n";
        let mut queries = Vec::new();
        for x in ["0", "1", "2", "-3", "1.5", "a", "X"] {
            for y in ["0", "1", "2", "2.5", "Y"] {
                queries.push(format!("counted(findall(R, walk({x}, {y}, R), L), N)"));
            }
            for q in ["two", "pick", "once_"] {
                queries.push(format!("counted(findall(R, {q}({x}, R), L), N)"));
                queries.push(format!("counted(({q}({x}, R), R > 1 -> true ; R = none), N)"));
            }
        }
        counted_both_ways(src, &queries);
    }

    /// Frame slots that are integers before a table's call inside a run
    /// are known after it, however it is reached (first, or by a failure
    /// after it resuming the call's choice point); what is not an integer
    /// there (an unbound variable the call binds, a term, an atom) is read
    /// again, as are slots first written after the call.
    #[test]
    fn integers_kept_over_a_tables_place_are_the_interpreters() {
        let src = "dir(-1).\ndir(0).\ndir(1).\n\
                   id(X, X).\n\
                   far(X, Y, R) :- id(X, Y0), X1 is X + 1, Y1 is Y0 * 2, dir(D), X2 is X1 + D, X2 > 0, \
                   T is X2 * Y1, Y1 > T - 9, id(T, R), R > X1 - Y1.\n\
                   same(X, R) :- id(X, V), dir(V), W is V + 1, W > 0, id(W, R), R >= V.\n\
                   term(X, R) :- id(X, T), N is 1 + 1, dir(D), arg(N, T, A), A > D, id(A-D, R), R \\== N.\n\
                   late(X, R) :- id(X, Y), Z is Y + 1, dir(D), W is Z + D, W > 1, Q is W * 2, Q > 5, \
                   id(Q, R), R > Z + W.\n";
        let mut queries = Vec::new();
        for x in ["0", "1", "2", "-3", "1.5", "a", "X", "f(4, 5)", "g(1, 0, 2)"] {
            for y in ["0", "1", "2", "Y"] {
                queries.push(format!("counted(findall(R, far({x}, {y}, R), L), N)"));
            }
            for q in ["same", "term", "late"] {
                queries.push(format!("counted(findall(R, {q}({x}, R), L), N)"));
                queries.push(format!("counted(({q}({x}, R), R \\== 0 -> true ; R = none), N)"));
            }
        }
        counted_both_ways(src, &queries);
    }

    /// `random_between/3` in a run draws as the interpreter does, from the
    /// same generator: into a new variable, an old one unbound or bound
    /// (compared), none for an empty range, and left to the builtin (which
    /// then draws once) for a target or bounds that are not integers; each
    /// query's draws follow the last one's, so a draw too many or too few
    /// anywhere shows in every answer after it.
    #[test]
    fn draws_are_the_interpreters() {
        let src = "new(A, B, R) :- Y is A + 0, random_between(Y, B, Z), Z >= A, R = Z.\n\
                   old(A, B, X, R) :- Y is A + 0, random_between(Y, B, X), R = got(X).\n\
                   many(N, K, L) :- findall(X, (between(1, N, _), K1 is K + 0, random_between(1, K1, X), X > 0), L).\n";
        let mut queries = Vec::new();
        for (a, b) in
            [("1", "6"), ("-5", "5"), ("3", "3"), ("4", "3"), ("0", "1000000000000"), ("1.5", "6"), ("1", "x")]
        {
            queries.push(format!("counted(findall(R, new({a}, {b}, R), L), N)"));
            for x in ["X", "2", "-7", "a", "f(1)", "2.0"] {
                queries.push(format!("counted(findall(X-R, old({a}, {b}, {x}, R), L), N)"));
            }
        }
        for k in ["2", "6", "100", "0"] {
            queries.push(format!("counted(many(40, {k}, L), N)"));
        }
        queries.push("many(5, 6, L), random_between(1, 1000, R)".to_string());
        counted_both_ways(src, &queries);
    }

    /// `arg/3` right after `between/3` starts a run (where backtracking
    /// into `between/3` goes on, and where its board scan looks for it):
    /// into a new variable, against an atom, an integer, an old variable
    /// bound or not, and compound terms, floats and strings unified by
    /// `arg_unify`; with the inferences counted, as the interpreter
    /// counts them.
    #[test]
    fn arg_after_between_is_the_interpreters() {
        let src = "counted(G, N) :- statistics(inferences, A), G, statistics(inferences, B), N is B - A.
                   new(T, L) :- findall(I-A, (between(1, 9, I), arg(I, T, A), I > 0), L).
                   con(T, L) :- findall(I, (between(1, 9, I), arg(I, T, w), I > 0), L).
                   int(T, L) :- findall(I, (between(1, 9, I), arg(I, T, 3), I > 0), L).
                   old(T, X, L) :- findall(I-X, (between(1, 9, I), arg(I, T, X), I > 0), L).
                   first(T, X, I) :- between(1, 9, I), arg(I, T, X), I > 0, !.
";
        let terms = ["f(w, 3, X, g(1), 2.5, \"s\", w, [], g(Y))", "f(e, e, e, w, e, w)", "f(P, Q, P)", "[w|3]", "foo"];
        let mut queries = Vec::new();
        for t in terms {
            for q in ["new(T, L)", "con(T, L)", "int(T, L)"] {
                queries.push(format!("counted({}, N)", q.replace('T', t)));
            }
            for x in ["X", "w", "3", "g(Z)", "g(1)", "2.5", "\"s\"", "[]"] {
                queries.push(format!("counted(old({t}, {x}, L), N)"));
                queries.push(format!("counted(first({t}, {x}, I), N)"));
                queries.push(format!("counted((first({t}, {x}, I), fail ; true), N)"));
            }
        }
        let queries: Vec<&str> = queries.iter().map(|q| q.as_str()).collect();
        both_ways(src, &queries);
    }

    /// Bindings and new variables in runs: trailed where a choice point
    /// is younger than the variable (so that backtracking undoes them, as
    /// each `findall/3` answer and the failure-driven loop show), not
    /// where it is older; the younger of two variables bound to the
    /// older; and enough of them that the heap and the trail fill up and
    /// are grown by the interpreter.
    #[test]
    fn bindings_and_new_variables_are_the_interpreters() {
        let src = "times(A, B) :- A >= 0, B is A * 10.\n\
                   name(A, B) :- A >= 0, B = w.\n\
                   pair(A, R) :- J is A + 0, q(J, V, W), K is J + 1, R = K-V-W.\n\
                   q(1, a, b).\n\
                   q(2, V, V).\n\
                   q(_, _, _).\n\
                   link(T, A, B) :- J is 1 + 0, arg(J, T, A), arg(2, T, B), K is J + 1, K > 0.\n\
                   fresh(N, L) :- J is N + 0, length(L, J), fill(L, 0).\n\
                   fill([], _).\n\
                   fill([X|Xs], I) :- J is I + 1, X is J * 2, fill(Xs, J).\n\
                   loop(N) :- between(1, N, I), J is I + 0, times(J, X), X =:= J * 10, name(J, Y), Y == w, fail.\n\
                   loop(_).\n";
        let queries = [
            "findall(X-Y, (member(X, [1, 2, 3]), times(X, Y)), L)",
            "findall(X-Y, (member(X, [1, 2, 3]), name(X, Y)), L)",
            "Y = 20, findall(X, (member(X, [1, 2, 3]), times(X, Y)), L)",
            "findall(R, (member(A, [1, 2, 3]), pair(A, R)), L)",
            "pair(2, R)",
            "T = f(P, Q), link(T, A, B), A == P, B == Q",
            "T = f(P, Q), link(T, Q, P), P == Q",
            "link(f(1, 2), A, B)",
            "link(f(1, 2), 1, 3)",
            "link(f(X, 2), 1, B)",
            "fresh(3, L)",
            "fresh(5000, L), last(L, X)",
            "findall(N, (between(1, 3000, N), fresh(3, _)), L), length(L, K)",
            "loop(20000)",
        ];
        both_ways(src, &queries);
    }

    /// Compound terms in runs, read and built (`GetStruct`, `GetList`,
    /// `PutStruct`, `PutList` and their `Unify*` instructions): heads and
    /// bodies in both modes, nested terms and constants that leave the
    /// rest of the term to the interpreter, arguments unified where that
    /// needs the interpreter (it goes on inside the term from where the
    /// run stopped), bindings undone on backtracking, and enough terms
    /// that the heap and the trail are grown between calls of a run.
    #[test]
    fn compound_terms_are_the_interpreters() {
        let src = "pt(p(X, Y), X, Y).\n\
                   mk(X, Y, T) :- J is X + 1, T = p(J, Y).\n\
                   bld(X, T) :- J is X + 0, T = f(J, [J, a], g(J), \"s\", 1.5, W, W).\n\
                   lst([H|T], H, T).\n\
                   cp(s(A, B, C), s(A, B2, C)) :- B2 is B + 1.\n\
                   eq(f(A, A), B) :- B = A.\n\
                   pair(X, Y, [X-Y, Y-X]).\n\
                   mklist(0, []) :- !.\n\
                   mklist(N, [p(N, M)|T]) :- M is N - 1, mklist(M, T).\n\
                   deep(N, T) :- findall(X, (between(1, N, I), J is I + 0, X = p(J, q(J), [J])), T).\n\
                   goal(Rs, Fs, G) :- G = forall(member(R, Rs), ( write(a(R)), \\+ ( member(F, Fs), \
                   S is R * 10 + F, write(b(S)), fail ), write(c) )).\n\
                   run(Rs, Fs, L) :- findall(R-S, ( member(R, Rs), \\+ \\+ ( member(F, Fs), S is R * 10 + F, \
                   write(b(S)) ) ), L).\n";
        let queries = [
            "pt(p(1, 2), X, Y)",
            "pt(T, 1, 2)",
            "pt(T, X, Y)",
            "pt(q(1, 2), X, Y)",
            "pt(p(1), X, Y)",
            "pt(p(1, 2), 2, Y)",
            "pt(p(f(Z), b), f(1), B)",
            "pt([a|b], X, Y)",
            "mk(1, y, T)",
            "mk(1, y, p(2, y))",
            "mk(1, y, p(3, y))",
            "mk(1, y, p(2, Z))",
            "mk(1, y, q(2, y))",
            "mk(1, y, 7)",
            "bld(1, T)",
            "bld(1, f(1, L, G, S, F, a, A))",
            "bld(1, f(1, [1, b], _, _, _, _, _))",
            "bld(1, f(1, [1, a], g(1), \"s\", 1.5, b, c))",
            "lst([1, 2, 3], H, T)",
            "lst(L, a, [b])",
            "lst([], H, T)",
            "lst(foo, H, T)",
            "cp(s(1, 2, 3), T)",
            "cp(S, s(1, 3, 2))",
            "cp(s(1, 2, 3), s(1, 3, 3))",
            "cp(s(1, 2, 3), s(1, 4, 3))",
            "cp(s(X, 2, Y), s(a, Z, b))",
            "cp(s(f(X), 2, [Y]), s(f(1), Z, [2]))",
            "cp(s(f(X), 2, [Y]), s(g(1), Z, [2]))",
            "eq(f(g(1), g(1)), B)",
            "eq(f(g(1), g(2)), B)",
            "eq(f(X, g(Y)), B)",
            "eq(f(1, 1), B)",
            "eq(f(1, 2), B)",
            "eq(F, 3)",
            "pair(1, 2, L)",
            "pair(X, Y, [a-b, B])",
            "pair(X, Y, [a-b, b-a])",
            "pair(X, Y, [a-b, b-c])",
            "mklist(20000, L), length(L, N), last(L, E)",
            "deep(5000, T), length(T, N), last(T, E)",
            "findall(T, (member(X, [1, 2, 3]), pt(T, X, y)), L)",
            "X = p(A, B), findall(A-B, (member(V, [1, 2]), pt(X, V, V)), L)",
            "X = s(A, 2, C), findall(X-Y, (member(A, [1, 2]), cp(X, Y)), L)",
            "goal([1, 2], [3, 4], G)",
            "run([1, 2], [3, 4], L)",
        ];
        both_ways(src, &queries);
    }

    /// Clauses that get native code once warm, in the middle of a query:
    /// a recursion whose callers go on in the interpreted code, choice
    /// points that retry clauses of either kind, a fact table, and a
    /// clause retracted before it warms.
    #[test]
    fn clauses_warmed_up_midway_are_the_interpreters() {
        let src = "app([], L, L).\n\
                   app([H|T], L, [H|R]) :- app(T, L, R).\n\
                   nrev([], []).\n\
                   nrev([H|T], R) :- nrev(T, RT), app(RT, [H], R).\n\
                   range(N, N, [N]) :- !.\n\
                   range(I, N, [I|T]) :- I < N, J is I + 1, range(J, N, T).\n\
                   sq(I, S) :- S is I * I.\n\
                   sq(I, S) :- S is I * I + 1.\n\
                   cell(1, a, 2). cell(2, b, 3). cell(3, c, 1).\n\
                   walk(0, _, []) :- !.\n\
                   walk(N, C, [L|T]) :- cell(C, L, D), M is N - 1, walk(M, D, T).\n\
                   :- dynamic(tmp/1).\n\
                   tmp(1). tmp(2).\n\
                   use(X) :- tmp(X), X > 0.\n";
        let queries = [
            "range(1, 40, L), nrev(L, R)",
            "findall(S, (between(1, 30, I), sq(I, S)), L)",
            "findall(X-Y, (app(X, Y, [1, 2, 3, 4, 5, 6, 7, 8]), length(X, N), N > 2), L)",
            "walk(50, 1, L)",
            "findall(X, (between(1, 5, _), use(X)), L)",
            "retract(tmp(1)), findall(X, (between(1, 5, _), use(X)), L)",
            "range(1, 60, L), nrev(L, R), nrev(R, L2), L == L2",
        ];
        for after in [1, 3, 10] {
            both_ways_after(src, &queries, after);
        }
    }

    /// The words the native code reads are where `Cell`'s layout puts
    /// them: the tag in the first four bytes, a 32-bit payload in the
    /// next four, a 64-bit one in the second eight.
    #[test]
    fn cells_are_laid_out_as_the_native_code_reads_them() {
        let cells = [
            Cell::Ref(12345),
            Cell::Atom(Atom(77)),
            Cell::Int(-5),
            Cell::Flt(2.5),
            Cell::Str(99),
            Cell::Fun(Atom(8), 3),
            Cell::Lst(1 << 40),
            Cell::Text(6),
        ];
        for c in cells {
            let (lo, hi) = words(c);
            let p = &c as *const Cell as *const u8;
            // SAFETY: each read is of bytes the variant initialises.
            let tag = unsafe { (p as *const u32).read() };
            assert_eq!(tag as i64, lo & 0xffff_ffff, "tag of {c:?}");
            match c {
                Cell::Atom(_) | Cell::Text(_) => {
                    assert_eq!(unsafe { (p.add(4) as *const u32).read() } as i64, lo >> 32, "{c:?}")
                }
                Cell::Fun(..) => {
                    assert_eq!(unsafe { (p.add(4) as *const u32).read() } as i64, lo >> 32, "{c:?}");
                    assert_eq!(unsafe { (p.add(8) as *const u32).read() } as i64, hi, "{c:?}");
                }
                _ => assert_eq!(unsafe { (p.add(8) as *const i64).read() }, hi, "{c:?}"),
            }
            assert_eq!(cell(lo, hi), c);
        }
        assert_eq!(std::mem::size_of::<Cell>(), 16);
    }
}
