//! Interned atoms and strings: every atom name is stored once and referred
//! to by a small number.

use std::collections::HashMap;
use std::rc::Rc;

/// An interned atom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Atom(pub u32);

macro_rules! predefined {
    ($($id:ident => $text:expr,)*) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u32)]
        enum Pre { $($id,)* }
        /// Atoms every engine knows, with fixed numbers.
        pub mod atom {
            use super::Atom;
            $(pub const $id: Atom = Atom(super::Pre::$id as u32);)*
        }
        const PREDEFINED: &[&str] = &[$($text,)*];
    };
}

predefined! {
    NIL => "[]",
    DOT => "[|]",
    CURLY => "{}",
    COMMA => ",",
    SEMI => ";",
    ARROW => "->",
    SOFT => "*->",
    NOT => "\\+",
    TRUE => "true",
    FAIL => "fail",
    FALSE => "false",
    CUT => "!",
    CALL => "call",
    NECK => ":-",
    MINUS => "-",
    PLUS => "+",
    ERROR => "error",
    VAR_ => "$VAR",
    EQ => "=",
    SLASH => "/",
    CATCH => "catch",
    THROW => "throw",
    FINDALL => "findall",
    END_OF_FILE => "end_of_file",
    EMPTY => "",
    CARET => "^",
    COLON => ":",
    BAR => "|",
    // internal control goals
    MC => "$mc",
    SAMPLE => "$sample",
    IS => "is",
    ARITH_EQ => "=:=",
    ARITH_NE => "=\\=",
    LE => "=<",
    GE => ">=",
    CUT_TO => "$cut_to",
    NOT_FAIL => "$not_fail",
    STEP => "$step",
    // errors
    TYPE_ERROR => "type_error",
    INST_ERROR => "instantiation_error",
    EXISTENCE_ERROR => "existence_error",
    DOMAIN_ERROR => "domain_error",
    EVAL_ERROR => "evaluation_error",
    REPR_ERROR => "representation_error",
    RESOURCE_ERROR => "resource_error",
    PERMISSION_ERROR => "permission_error",
    SYNTAX_ERROR => "syntax_error",
    CONTEXT => "context",
    PROCEDURE => "procedure",
    INTEGER => "integer",
    FLOAT => "float",
    NUMBER => "number",
    ATOM => "atom",
    ATOMIC => "atomic",
    CALLABLE => "callable",
    LIST => "list",
    COMPOUND => "compound",
    EVALUABLE => "evaluable",
    CHARACTER => "character",
    STRING => "string",
    TEXT => "text",
    ZERO_DIVISOR => "zero_divisor",
    UNDEFINED => "undefined",
    INT_OVERFLOW => "int_overflow",
    FLOAT_OVERFLOW => "float_overflow",
    NOT_LESS_THAN_ZERO => "not_less_than_zero",
    MODIFY => "modify",
    STATIC_PROCEDURE => "static_procedure",
    PRIVATE_PROCEDURE => "private_procedure",
    ACCESS => "access",
    // arithmetic
    STAR => "*",
    INTDIV => "//",
    MOD => "mod",
    REM => "rem",
    DIV => "div",
    ABS => "abs",
    SIGN => "sign",
    MIN => "min",
    MAX => "max",
    GCD => "gcd",
    MSB => "msb",
    POW => "**",
    SHR => ">>",
    SHL => "<<",
    AND => "/\\",
    OR => "\\/",
    XOR => "xor",
    BITNOT => "\\",
    SQRT => "sqrt",
    TRUNCATE => "truncate",
    ROUND => "round",
    CEILING => "ceiling",
    FLOOR => "floor",
    FLOAT_INTEGER_PART => "float_integer_part",
    FLOAT_FRACTIONAL_PART => "float_fractional_part",
    PI => "pi",
    E => "e",
    INF => "inf",
    INFINITE => "infinite",
    NAN => "nan",
    EPSILON => "epsilon",
    RANDOM => "random",
    RANDOM_FLOAT => "random_float",
    RANDOM_BETWEEN => "random_between",
    MAX_TAGGED_INTEGER => "max_tagged_integer",
    MAX_INTEGER => "max_integer",
    MIN_INTEGER => "min_integer",
    SIN => "sin",
    COS => "cos",
    TAN => "tan",
    ASIN => "asin",
    ACOS => "acos",
    ATAN => "atan",
    ATAN2 => "atan2",
    EXP => "exp",
    LOG => "log",
    LOG2 => "log2",
    CPUTIME => "cputime",
    REALTIME => "realtime",
    COPYSIGN => "copysign",
    CMPFLAGS => "cmpflags",
    // misc
    LT => "<",
    GT => ">",
    COUNT => "count",
    SUM => "sum",
    BAG => "bag",
    SET => "set",
    MAX_DEPTH => "max_depth",
    QUOTED => "quoted",
    IGNORE_OPS => "ignore_ops",
    NUMBERVARS => "numbervars",
    ON => "on",
    OFF => "off",
    USER => "user",
    DYNAMIC => "dynamic",
    DISCONTIGUOUS => "discontiguous",
    INITIALIZATION => "initialization",
    ENSURE_LOADED => "ensure_loaded",
    USE_MODULE => "use_module",
    SET_PROLOG_FLAG => "set_prolog_flag",
    STEPS => "steps",
    TIME => "time",
    MEMORY => "memory",
    HALT => "halt",
    CODES => "codes",
    CHARS => "chars",
    EOF_CODE => "eof_code",
    ELLIPSIS => "...",
    CHARACTER_CODE => "character_code",
    NOT_EMPTY_LIST => "non_empty_list",
    ORDER => "order",
    OPERATOR_SPECIFIER => "operator_specifier",
    WRITE_OPTION => "write_option",
    FORMAT => "format",
    STREAM => "stream",
    PAIR => "pair",
    ASSOC => "assoc",
    T => "t",
    AT_LT => "@<",
    AT_GT => "@>",
    AT_LE => "@=<",
    AT_GE => "@>=",
    KEY => "key",
    VALUE => "value",
    BETWEEN => "between",
    ONEOF => "oneof",
    ANY => "any",
    ARG => "arg",
    // tests
    SAME => "==",
    NOT_SAME => "\\==",
    NOT_UNIFIABLE => "\\=",
    VARIANT => "=@=",
    NOT_VARIANT => "\\=@=",
    VAR => "var",
    NONVAR => "nonvar",
    IS_LIST => "is_list",
    GROUND => "ground",
    MEMBERCHK => "memberchk",
    ORD_MEMBERCHK => "ord_memberchk",
}

/// The table of interned atoms and string objects.
#[derive(Debug)]
pub struct Atoms {
    names: Vec<Rc<str>>,
    /// Each name's first 8 bytes, big-endian: comparing two keys orders
    /// most names without reading them.
    keys: Vec<u64>,
    map: HashMap<Rc<str>, u32>,
    /// Bytes of all atom names (atoms are never freed).
    pub bytes: usize,
}

impl Default for Atoms {
    fn default() -> Self {
        Self::new()
    }
}

impl Atoms {
    pub fn new() -> Atoms {
        let mut a = Atoms { names: Vec::new(), keys: Vec::new(), map: HashMap::new(), bytes: 0 };
        for name in PREDEFINED {
            a.intern(name);
        }
        a
    }

    /// The atom named `name`, created if new.
    pub fn intern(&mut self, name: &str) -> Atom {
        if let Some(&i) = self.map.get(name) {
            return Atom(i);
        }
        let rc: Rc<str> = Rc::from(name);
        self.bytes += name.len();
        let i = self.names.len() as u32;
        let mut key = [0u8; 8];
        let n = name.len().min(8);
        key[..n].copy_from_slice(&name.as_bytes()[..n]);
        self.keys.push(u64::from_be_bytes(key));
        self.names.push(rc.clone());
        self.map.insert(rc, i);
        Atom(i)
    }

    /// The atom named `name`, if it exists.
    pub fn lookup(&self, name: &str) -> Option<Atom> {
        self.map.get(name).map(|&i| Atom(i))
    }

    /// Two atoms in the standard order (by their names' bytes).
    pub fn cmp_names(&self, a: Atom, b: Atom) -> std::cmp::Ordering {
        if a == b {
            return std::cmp::Ordering::Equal;
        }
        let (i, j) = (a.0 as usize, b.0 as usize);
        self.keys[i].cmp(&self.keys[j]).then_with(|| self.names[i].cmp(&self.names[j]))
    }

    pub fn name(&self, a: Atom) -> &str {
        &self.names[a.0 as usize]
    }

    pub fn name_rc(&self, a: Atom) -> Rc<str> {
        self.names[a.0 as usize].clone()
    }

    /// Every atom name (for suggestions).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_atoms_are_distinct_and_numbered_in_order() {
        let mut seen = std::collections::HashSet::new();
        for name in PREDEFINED {
            assert!(seen.insert(name), "{name} is predefined twice");
        }
        let a = Atoms::new();
        assert_eq!(a.name(atom::GT), ">");
        assert_eq!(a.name(atom::ANY), "any");
        assert_eq!(a.len(), PREDEFINED.len());
    }
}
