//! The register machine (see `crates/engine/src/engine/README.md`): clauses compiled to
//! instructions over argument registers, environment frames and choice
//! points that save registers.

pub mod compile;
// The code generator is the `native` feature (on by default): a build
// without it (the fuzzers') has no Cranelift, and the interpreter runs
// every clause.
#[cfg(feature = "native")]
pub mod native;
#[cfg(not(feature = "native"))]
#[path = "interpreted.rs"]
pub mod native;
#[cfg(all(feature = "native", target_arch = "x86_64"))]
mod packed;
mod run;
pub mod unfold;

use super::atoms::Atom;
use super::db::{ClauseCode, FastMap};
use super::machine::{Control, Machine};
use super::term::Cell;
use std::ptr::NonNull;
use std::rc::Rc;

/// A template for a compound argument: `cells` as laid out by
/// `Store::copy_out` (depth first, each subtree contiguous) with the root
/// structure at 0, and variable cells holding a `var_code`.
#[derive(Debug)]
pub struct Tm {
    /// The root is a list cell (else a structure with its `Fun` at 0).
    pub lst: bool,
    pub cells: Box<[Cell]>,
    /// For each cell pointing at a substructure, the end of its subtree.
    pub ends: Box<[u32]>,
}

/// A leaf (constant or register) or an operator of an integer
/// arithmetic expression (`is/2` and the comparisons' fast path).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
pub enum AOp {
    Int(i64),
    X(u32),
    Y(u32),
    Add,
    Sub,
    Mul,
    IntDiv,
    Mod,
    Min,
    Max,
    Neg,
    Abs,
}

/// The deepest expression compiled to the fast path.
pub const ASTACK: usize = 16;

/// An integer expression of the fast path, as a tree (at most `ASTACK`
/// deep, so evaluating it recursively is bounded).
#[derive(Debug)]
#[repr(u8)]
pub enum Expr {
    /// A constant or a register.
    Leaf(AOp),
    /// An operator (`Add`...`Max`) on two leaves (the common case, with
    /// nothing to follow).
    Leaves(AOp, AOp, AOp),
    /// A chain of operators on leaves, left to right: `(A - 1) mod C + 1`
    /// is `A` then `Sub 1`, `Mod C`, `Add 1` (game rules' square
    /// arithmetic), evaluated in one loop.
    Chain(AOp, Box<[(AOp, AOp)]>),
    /// `Neg` or `Abs` of a subexpression.
    Un(AOp, Box<Expr>),
    /// An operator (`Add`...`Max`) on two subexpressions.
    Bin(AOp, Box<[Expr; 2]>),
}

/// What an arithmetic fast path does with the value of `rhs`.
#[derive(Debug)]
#[repr(u8)]
pub enum ArithOp {
    /// `is/2` into the first occurrence of a variable (its register code).
    IsNew(usize),
    /// `is/2` against a variable seen before (its register code).
    IsOld(usize),
    /// `is/2` against an integer.
    IsInt(i64),
    /// A comparison `lhs ? rhs`: true when `lhs.cmp(rhs)` is the ordering,
    /// or, with the flag (`=\=`, `=<`, `>=`), when it is not.
    Cmp(std::cmp::Ordering, bool, Expr),
}

/// An arithmetic fast path: `is/2` or a comparison on integers.
#[derive(Debug)]
pub struct Arith {
    pub op: ArithOp,
    pub rhs: Expr,
    /// Where the general builtin call ends (taken on success), counted
    /// from this instruction.
    pub done: u32,
    /// Where a failure goes, counted from this instruction (0: it
    /// backtracks): the else branch of an if-then-else whose condition
    /// is a test (see `Test`).
    pub fail: u32,
}

/// The commonest arithmetic, on two leaves (constants or registers),
/// run inline without an expression to walk: a comparison `A ? B`
/// (`X >= 1`), or `X is A op B` (`Y2 is Y1 + D`). As `Arith` otherwise:
/// anything but integers falls through to the general builtin.
#[derive(Debug)]
pub struct Arith2 {
    pub op: Arith2Op,
    pub a: AOp,
    pub b: AOp,
    pub done: u32,
    pub fail: u32,
}

/// `X is A op B op C ...`, a chain of operators on leaves (see
/// `Expr::Chain`: the square arithmetic of game rules), run inline.
#[derive(Debug)]
pub struct IsChain {
    /// The register code of X, and whether this is its first occurrence.
    pub code: usize,
    pub new: bool,
    pub first: AOp,
    pub rest: Box<[(AOp, AOp)]>,
    pub done: u32,
    pub fail: u32,
}

/// What an `Arith2` does with its leaves.
#[derive(Debug, Clone, Copy)]
pub enum Arith2Op {
    /// As `ArithOp::Cmp`, with `A` on the left.
    Cmp(std::cmp::Ordering, bool),
    /// `is/2` of `A op B` into a register code, the flag set at the
    /// variable's first occurrence.
    Is(AOp, usize, bool),
    /// `random_between(A, B, X)`: X (a register code, the flag as for
    /// `Is`) drawn from `A..=B` by the machine's generator, one draw as
    /// the builtin makes it.
    Random(usize, bool),
}

/// An operand of a test: a register code (X, or Y with `PERM`) or a
/// constant.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
pub enum Opd {
    Reg(usize),
    Const(Cell),
}

/// What a test's fast path checks.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
pub enum TestOp {
    /// `==` (or, with the flag, `\==`) on variables, atoms and integers;
    /// anything else falls through to the builtin.
    Same(bool),
    Type(TypeTest),
}

/// A type test: decided by the tag of the dereferenced argument (the
/// builtins `var/1`... and the `Test` instruction share it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TypeTest {
    Var,
    Nonvar,
    Atom,
    Number,
    Integer,
    Float,
    Atomic,
    Compound,
    Callable,
    String,
}

impl TypeTest {
    /// The test's name.
    pub fn name(self) -> Atom {
        use super::atoms::atom;
        match self {
            TypeTest::Var => atom::VAR,
            TypeTest::Nonvar => atom::NONVAR,
            TypeTest::Atom => atom::ATOM,
            TypeTest::Number => atom::NUMBER,
            TypeTest::Integer => atom::INTEGER,
            TypeTest::Float => atom::FLOAT,
            TypeTest::Atomic => atom::ATOMIC,
            TypeTest::Compound => atom::COMPOUND,
            TypeTest::Callable => atom::CALLABLE,
            TypeTest::String => atom::STRING,
        }
    }

    /// Every type test.
    pub const ALL: [TypeTest; 10] = [
        TypeTest::Var,
        TypeTest::Nonvar,
        TypeTest::Atom,
        TypeTest::Number,
        TypeTest::Integer,
        TypeTest::Float,
        TypeTest::Atomic,
        TypeTest::Compound,
        TypeTest::Callable,
        TypeTest::String,
    ];

    /// Whether a dereferenced cell passes the test.
    #[inline]
    pub fn holds(self, c: Cell) -> bool {
        match self {
            TypeTest::Var => matches!(c, Cell::Ref(_)),
            TypeTest::Nonvar => !matches!(c, Cell::Ref(_)),
            // As in SWI-Prolog 7+, `[]` is a reserved constant, not an atom.
            TypeTest::Atom => matches!(c, Cell::Atom(x) if x != super::atoms::atom::NIL),
            TypeTest::Number => matches!(c, Cell::Int(_) | Cell::Flt(_)),
            TypeTest::Integer => matches!(c, Cell::Int(_)),
            TypeTest::Float => matches!(c, Cell::Flt(_)),
            TypeTest::Atomic => c.is_atomic(),
            TypeTest::Compound => matches!(c, Cell::Str(_) | Cell::Lst(_)),
            TypeTest::Callable => matches!(c, Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_)),
            TypeTest::String => matches!(c, Cell::Text(_)),
        }
    }
}

/// The fast path of a test builtin (`done` and `fail` as in `Arith`).
#[derive(Debug)]
pub struct TestFast {
    pub op: TestOp,
    pub a: Opd,
    /// The second argument of `==`/`\==` (else unused).
    pub b: Opd,
    pub done: u32,
    pub fail: u32,
}

/// Where the fast path of `arg/3` puts the argument it finds.
#[derive(Debug)]
#[repr(u8)]
pub enum ArgDst {
    /// The first occurrence of a variable: its register takes the cell.
    New(usize),
    /// A variable seen before (its register code): unified.
    Old(usize),
    /// An atom or integer: compared.
    Const(Cell),
}

/// The fast path of `arg(N, T, A)` with N an integer and T a compound:
/// the argument without a call; anything else falls through to the
/// builtin (`done` as in `Arith`).
#[derive(Debug)]
pub struct ArgFast {
    pub n: AOp,
    /// The register code of T.
    pub t: usize,
    pub dst: ArgDst,
    pub done: u32,
}

/// An argument of a list cell in `GetList2`/`PutList2`: what the
/// `Unify*` instruction it stands for does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UArg {
    VarX(u32),
    ValX(u32),
    VarY(u32),
    ValY(u32),
    Void,
    /// `[]`.
    Nil,
}

/// Bits of a variable cell in a `Tm`.
pub const FIRST: usize = 1 << 40;
pub const PERM: usize = 1 << 41;
pub const VOID: usize = 1 << 42;
pub const INDEX: usize = (1 << 32) - 1;

/// `Call`/`Execute` of a predicate unknown at compile time.
pub const NO_PRED: u32 = u32::MAX;

/// One instruction. `a` is an argument register, `x` a register, `y` a
/// slot of the current environment.
#[derive(Debug)]
pub enum Instr {
    Allocate(u32),
    Deallocate,
    GetVarX(u32, u32),
    GetVarY(u32, u32),
    /// A run of `GetVarY` (slot, argument register) in one instruction:
    /// a clause's arguments saved in its frame.
    GetVarYs(Box<[(u32, u32)]>),
    GetValX(u32, u32),
    GetValY(u32, u32),
    GetConst(Cell, u32),
    /// A list cell or a structure in an argument: its arguments follow as
    /// `Unify*` instructions, in read mode on an existing term, in write
    /// mode on a new one.
    GetList(u32),
    GetStruct(Atom, u32, u32),
    PutList(u32),
    PutStruct(Atom, u32, u32),
    /// `GetList` or `PutList` with its two `Unify*` instructions, for the
    /// commonest list cells (`[H|T]`, `[X]`).
    GetList2(u32, UArg, UArg),
    /// `GetList2` of the commonest shapes, with no `UArg` to decode:
    /// `[X|Y]` with both first met here (`VarX`, `VarX`), and with `X`
    /// seen before (`ValX`, `VarX`).
    GetListVarVar(u32, u32, u32),
    GetListValVar(u32, u32, u32),
    /// ...and `[X|_]` with `X` seen before, and `[_|Y]` (the two clauses
    /// of a list walk such as `member/2`).
    GetListValVoid(u32, u32),
    GetListVoidVar(u32, u32),
    /// `[X|Y]` with both first met here, either in an environment slot:
    /// register codes (`PERM` for a slot).
    GetListVarVarXY(u32, usize, usize),
    /// `PutList2` of `[X]`, `X` seen before (a register code).
    PutListValNil(u32, usize),
    PutList2(u32, UArg, UArg),
    UnifyVarX(u32),
    UnifyVarY(u32),
    /// A run of `UnifyVarY`: a structure's arguments taken into slots.
    UnifyVarYs(Box<[u32]>),
    UnifyValX(u32),
    UnifyValY(u32),
    UnifyConst(Cell),
    UnifyVoid,
    UnifyTerm(Box<Tm>),
    PutVarX(u32, u32),
    PutVarY(u32, u32),
    PutValX(u32, u32),
    PutValY(u32, u32),
    /// A run of `PutValY` (slot, argument register): a call's arguments
    /// loaded from the frame.
    PutValYs(Box<[(u32, u32)]>),
    PutVoid(u32),
    PutConst(Cell, u32),
    InitY(u32),
    /// A user predicate by number (`NO_PRED` when it did not exist when
    /// the clause was compiled: then by name), its name and arity.
    Call(u32, Atom, u32),
    Execute(u32, Atom, u32),
    /// `Deallocate` then `Execute`: a last call from a clause with a frame.
    DeallocExecute(u32, Atom, u32),
    /// A builtin by number, its arity, the registers live after it, and
    /// where a failure goes (as `Arith::fail`: 0 backtracks).
    CallBuiltin(u32, u32, u32, u32),
    /// `call/N`; the flag: last call (the continuation is CP).
    CallMeta(u32, bool),
    CallControl(Control, bool),
    Proceed,
    /// Integer arithmetic on registers; on anything else it falls through
    /// to the general builtin call that follows it.
    Arith(Box<Arith>),
    /// `Arith` on two leaves.
    Arith2(Box<Arith2>),
    /// `Arith` of `is/2` on a chain.
    IsChain(Box<IsChain>),
    /// `arg/3` on an integer and a compound; else it falls through to the
    /// builtin call that follows it.
    Arg(Box<ArgFast>),
    /// A type test, or `==`/`\==` on atomic terms and variables; else it
    /// falls through to the builtin call that follows it.
    Test(Box<TestFast>),
    /// Cut to the barrier saved in the environment.
    Cut,
    /// Cut to the barrier register (no call since the clause started).
    CutB0,
    GetLevel(u32),
    /// Cut to the level in a slot, plus the flag (1: keep the choice point
    /// pushed right after the level was taken).
    CutTo(u32, u8),
    SoftCut(u32),
    /// A choice point for the branch this many instructions on.
    TryElse(u32),
    /// An inline `findall/3,4` (the result list in `X0`, and for
    /// `findall/4` its tail in `X1`): a new bag and its choice point, the
    /// choice-stack level below which goes in the slot (a `!` in the goal
    /// cuts to it, keeping the bag's choice point). The goal's code
    /// follows, then `FindallAdd`; once the goal has no more solutions the
    /// choice point unifies the list and goes on this many instructions on.
    FindallBegin(u32, bool, u32),
    /// Adds a copy of the template (in `X0`) to the bag of the findall
    /// whose level is in the slot, then backtracks for the next solution.
    FindallAdd(u32),
    /// Go on this many instructions on.
    Jump(u32),
    Fail,
    /// Internal continuations: collect a findall answer, leave a catch,
    /// restore registers saved around a goal a builtin called, and the end
    /// of a query.
    FaAdd,
    SampleAdd,
    ExitCatch,
    Restore,
    Succeed,
    /// A run of instructions compiled to native code, in place of the
    /// first (see `native`).
    Native(Box<NativeRun>),
    /// The first instruction of a clause's code made without native runs
    /// (see `Warm`): counts the clause's calls until it is hot.
    Warm(Box<Warm>),
    /// A call of a small table of facts (see `Facts`), in place of the
    /// call instruction.
    Facts(Rc<Facts>),
    /// One inference step counted: where a call of a predicate was
    /// unfolded into the clause (see `unfold`), the step the call counted.
    Step,
    /// The start of a clause's code with calls unfolded into it (see
    /// `unfold`): the code goes on while no predicate unfolded anywhere
    /// has changed since (`Db::inline_epoch` is still the one given),
    /// else it leaves for the clause's code made without unfolding.
    Guard(Box<Guard>),
}

/// A call of a predicate that is a small table of facts, looked up in
/// place (the compiler emits it after the call's arguments are put, in
/// place of the call; see `unfold`), one step counted: with the first
/// argument (`X0`) an atom or an integer, the one fact whose first
/// argument it is has its other arguments unified with `X1...`, and the
/// code goes on at `done` (the next instruction); with no such fact, or an
/// argument that does not unify, it fails. With `X0` unbound (a variable
/// met first in the call: `step(DX)`), the facts are tried one after
/// another as the call's clauses would be, with a choice point
/// (`Alt::Facts`, registers `X0..arity` saved) that resumes at `done`
/// with the next fact. (No fact has a compound first argument: with one,
/// it fails.)
#[derive(Debug)]
pub struct Facts {
    /// The facts' first arguments.
    pub keys: Box<[Cell]>,
    /// Their other arguments, `arity - 1` a fact.
    pub rest: Box<[Cell]>,
    pub arity: u32,
    pub done: u32,
    /// Whether the call's first argument is a variable met first there
    /// (unbound: the facts are tried one after another).
    pub fresh: bool,
}

/// See `Instr::Guard`.
#[derive(Debug)]
pub struct Guard {
    pub epoch: u32,
    pub plain: Code,
}

/// A run's function: given where the registers, the current frame's
/// slots and the heap are, and the machine (whose step count it adds the
/// builtins it runs to, as the interpreter's fast paths do), where to go
/// on, counted from the run's first instruction, or a negative number:
/// `GROW`, else to backtrack.
pub type RunFn = unsafe extern "C" fn(x: *mut Cell, y: *mut Cell, heap: *mut Cell, m: *mut Machine) -> i64;

/// The run's function returns it, having changed nothing, when the heap
/// or the trail has less room than the run may take (`NativeRun::heap`,
/// `NativeRun::trail`): the interpreter grows them and calls it again.
pub const GROW: i64 = -2;

/// A run compiled to native code, in place of its first instruction
/// (kept, for whatever reads the code).
pub struct NativeRun {
    pub f: RunFn,
    pub first: Instr,
    /// How many instructions the run spans.
    pub len: u32,
    /// The most heap cells and trail entries one call of the run pushes.
    pub heap: u32,
    pub trail: u32,
    /// Whether the run reads or builds compound terms: it then takes the
    /// interpreter's `s` and `wr` from the machine (`Vm::s`, `Vm::wr`)
    /// and leaves them there.
    pub groups: bool,
}

/// A clause whose native code goes round itself (see `run::self_loop`):
/// its code is one run and a last call of its own predicate, which a list
/// cell in the first argument sends back to this clause alone. The run
/// then makes that call natively (one step counted, the limits checked as
/// a call checks them) while the database's `inline_epoch` is `at` (no
/// clause of the predicate has changed since), and leaves it to the
/// interpreter otherwise.
#[derive(Clone, Copy, Debug)]
pub struct Loop {
    pub pred: u32,
    pub epoch: *const std::cell::Cell<u32>,
    pub at: u32,
}

impl std::fmt::Debug for NativeRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Native({} instructions from {:?})", self.len, self.first)
    }
}

/// A clause's calls still to come before it gets native code: the
/// interpreter runs its code until then (most clauses of a program run a
/// few times, at loading or at the end of a game, and compiling them to
/// native code would cost more than it saves). The last call makes the
/// clause's code again with native runs, into `ClauseCode::hot`, and
/// points the calls of its predicate there.
#[derive(Debug)]
pub struct Warm {
    pub left: std::cell::Cell<u32>,
    /// The clause, to be looked for among the predicates' clauses (it may
    /// have been retracted): never read through unless found there.
    pub clause: *const crate::engine::db::ClauseCode,
}

/// Compiled code of a clause. Every code ends with an instruction that
/// does not fall through (`ends_flow`), and jumps go forward inside it, so
/// the run loop follows a plain instruction pointer.
pub type Code = Rc<[Instr]>;

/// Where to continue: an instruction of some code. A plain pointer (no
/// reference count to touch at a call, a return or a choice point): the
/// code it points into is kept alive by its clause or, once the clause is
/// gone, by `Vm::codes` until no continuation points into it (see
/// `Machine::sweep_codes`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cont(NonNull<Instr>);

impl Cont {
    /// The first instruction of `code`.
    pub fn start(code: &Code) -> Cont {
        Cont(NonNull::from(&code[0]))
    }

    /// The instruction `k` places after this one (inside the same code).
    ///
    /// # Safety
    /// The result must be inside the same code: a forward jump the
    /// compiler made.
    #[inline(always)]
    unsafe fn add(self, k: usize) -> Cont {
        // SAFETY: the caller keeps the result inside the code.
        Cont(unsafe { self.0.add(k) })
    }

    /// Where a call whose first argument is known to be `[]` enters this
    /// clause code: past a first instruction that would only check that.
    pub fn past_nil_test(self) -> Cont {
        // SAFETY: a `Cont` points at an instruction of live code, and one
        // that falls through (`GetConst`) is followed by another.
        match unsafe { self.0.as_ref() } {
            Instr::GetConst(Cell::Atom(super::atoms::atom::NIL), 0) => unsafe { self.add(1) },
            _ => self,
        }
    }

    fn addr(self) -> usize {
        self.0.as_ptr() as usize
    }
}

/// Whether execution never goes on to the instruction after `i`.
pub fn ends_flow(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Proceed
            | Instr::Execute(..)
            | Instr::DeallocExecute(..)
            | Instr::Jump(_)
            | Instr::Fail
            | Instr::FaAdd
            | Instr::FindallAdd(_)
            | Instr::SampleAdd
            | Instr::Restore
            | Instr::Succeed
            | Instr::CallMeta(_, true)
            | Instr::CallControl(_, true)
    )
}

/// An environment frame.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    /// The frame to return to.
    pub ce: u32,
    pub cp: Cont,
    /// Choice-stack height a `!` in this clause cuts back to.
    pub b0: u32,
    /// Where the frame's Y slots start in `ys`, and how many.
    pub ys: u32,
    pub n: u32,
    /// A `catch/3` frame (its slot 0 holds the catch's choice index).
    pub catch: bool,
    /// A frame keeping registers around a goal a builtin called: the CP to
    /// restore when it exits (`cp` is then where to continue).
    pub ret: Option<Cont>,
}

/// Saved register-machine state of a choice point.
#[derive(Clone, Copy, Debug)]
pub struct VmSave {
    pub e: u32,
    pub cp: Cont,
    pub cont: Cont,
    pub b0: u32,
    /// Saved registers: `saved[regs..regs+nregs]`.
    pub regs: u32,
    pub nregs: u32,
    pub env_top: u32,
}

impl Vm {
    /// Makes frame `e` current.
    #[inline(always)]
    pub fn set_e(&mut self, e: u32) {
        self.e = e;
        self.ybase = self.envs[e as usize].ys;
    }
}

/// Code made of `instrs`: a `Fail` is added if the last instruction could
/// fall through (the compiler never leaves one: this keeps the run loop's
/// pointer inside the code whatever happens).
pub fn code(mut instrs: Vec<Instr>) -> Code {
    if !instrs.last().is_some_and(ends_flow) {
        debug_assert!(instrs.is_empty(), "code that falls off its end: {instrs:?}");
        instrs.push(Instr::Fail);
    }
    instrs.into()
}

/// The argument and temporary registers. They only grow, and every code
/// is compiled (`compiled` in `run.rs`) by the machine that runs it, which
/// first grows them to what the code uses: a register an instruction
/// names is always there, so `regs[r]` needs no bounds check.
#[derive(Debug)]
pub struct Regs(Vec<Cell>);

impl Vm {
    /// The register a register code names: `X`, or with `PERM` a slot of
    /// the current environment.
    #[inline]
    pub fn reg(&mut self, code: usize) -> &mut Cell {
        if code & PERM != 0 { &mut self.ys[self.ybase as usize + (code & INDEX)] } else { &mut self.x[code & INDEX] }
    }
}

impl Regs {
    /// Makes room for registers `0..n`.
    pub fn grow(&mut self, n: usize) {
        if self.0.len() < n {
            self.0.resize(n, Cell::Int(0));
        }
    }
}

impl std::ops::Deref for Regs {
    type Target = [Cell];
    fn deref(&self) -> &[Cell] {
        &self.0
    }
}

impl std::ops::DerefMut for Regs {
    fn deref_mut(&mut self) -> &mut [Cell] {
        &mut self.0
    }
}

impl std::ops::Index<usize> for Regs {
    type Output = Cell;
    #[inline(always)]
    fn index(&self, r: usize) -> &Cell {
        debug_assert!(r < self.0.len(), "register {r} of {}", self.0.len());
        // SAFETY: see `Regs`: compiled code names registers below the
        // length, which never shrinks.
        unsafe { self.0.get_unchecked(r) }
    }
}

impl std::ops::IndexMut<usize> for Regs {
    #[inline(always)]
    fn index_mut(&mut self, r: usize) -> &mut Cell {
        debug_assert!(r < self.0.len(), "register {r} of {}", self.0.len());
        // SAFETY: as in `index`.
        unsafe { self.0.get_unchecked_mut(r) }
    }
}

/// Ranges of registers, checked as slices are.
macro_rules! regs_range {
    ($($r:ty),*) => {$(
        impl std::ops::Index<$r> for Regs {
            type Output = [Cell];
            fn index(&self, r: $r) -> &[Cell] {
                &self.0[r]
            }
        }
        impl std::ops::IndexMut<$r> for Regs {
            fn index_mut(&mut self, r: $r) -> &mut [Cell] {
                &mut self.0[r]
            }
        }
    )*};
}
regs_range!(std::ops::Range<usize>, std::ops::RangeTo<usize>);

/// The register machine's state inside `Machine`.
#[derive(Debug)]
pub struct Vm {
    pub x: Regs,
    pub envs: Vec<Env>,
    pub ys: Vec<Cell>,
    pub saved: Vec<Cell>,
    /// The current frame (set with `set_e`), and where its Y slots start.
    pub e: u32,
    pub ybase: u32,
    pub cp: Cont,
    pub b0: u32,
    /// Where execution continues (set around builtins so that a choice
    /// point they push, or a goal they call, resumes after them).
    pub cont: Cont,
    /// Registers live at `cont`.
    pub live: u32,
    /// Every clause code compiled (see `Cont`), and the length at which
    /// `Machine::sweep_codes` looks for the ones no longer needed.
    pub codes: Vec<Code>,
    pub sweep_at: usize,
    /// `db::CODES_RELEASED` as the last sweep found it.
    pub released: u64,
    /// Shared internal code.
    pub succeed: Code,
    pub fa_code: Code,
    pub sample_code: Code,
    pub catch_code: Code,
    pub restore_code: Code,
    pub fail_code: Code,
    /// Goals with control constructs given to `call/N`, compiled once per
    /// shape (see `Machine::meta_clause`).
    pub meta_cache: FastMap<Box<[Shape]>, Rc<ClauseCode>>,
    /// The native code generator (see `native`), which makes code for
    /// the clauses compiled from now on while it is on; `None` where
    /// Cranelift has no backend for the processor, or with
    /// `TABULA_NATIVE=0`.
    pub native: Option<Box<native::Native>>,
    /// Where native code that stops inside a compound term's arguments
    /// leaves the interpreter's `s` and `wr` (see `native`).
    pub s: usize,
    pub wr: bool,
    /// The `Native` instruction of the run being run (its function finds
    /// the instructions of its code from there: see `native::facts_first`).
    pub run_at: Cont,
}

/// One node of a meta-called goal's shape, in prefix order: a control
/// construct (`,`, `;`, `->`, `*->`, `\+`) or a goal with its arity.
pub type Shape = (Atom, u32, bool);

/// Fewest compiled codes kept before looking for unneeded ones.
pub const SWEEP_MIN: usize = 1024;

/// Shapes kept at most: a program that builds goals without end does not
/// grow the cache without end.
pub const META_CACHE_MAX: usize = 4096;

impl Default for Vm {
    fn default() -> Self {
        let succeed = code(vec![Instr::Succeed]);
        let start = Cont::start(&succeed);
        Vm {
            x: Regs(vec![Cell::Int(0); 256]),
            envs: Vec::new(),
            ys: Vec::new(),
            saved: Vec::new(),
            e: 0,
            ybase: 0,
            cp: start,
            b0: 0,
            cont: start,
            live: 0,
            codes: Vec::new(),
            sweep_at: SWEEP_MIN,
            released: 0,
            succeed,
            fa_code: code(vec![Instr::FaAdd]),
            sample_code: code(vec![Instr::SampleAdd]),
            catch_code: code(vec![Instr::ExitCatch, Instr::Deallocate, Instr::Proceed]),
            restore_code: code(vec![Instr::Restore]),
            fail_code: code(vec![Instr::Fail]),
            meta_cache: FastMap::default(),
            native: if std::env::var_os("TABULA_NATIVE").is_some_and(|v| v == "0") {
                None
            } else {
                native::Native::new().map(Box::new)
            },
            s: 0,
            wr: false,
            run_at: start,
        }
    }
}
