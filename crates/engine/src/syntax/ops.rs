//! The operator table shared by the reader (`syntax::parse`) and the writer
//! (`engine::write`): the standard ISO table with SWI-Prolog's priorities.

/// How an operator takes its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpType {
    Xfx,
    Xfy,
    Yfx,
    Fy,
    Fx,
}

/// Priority and type of `name` as an infix operator.
pub fn infix(name: &str) -> Option<(u32, OpType)> {
    use OpType::*;
    Some(match name {
        ":-" | "-->" => (1200, Xfx),
        ";" | "|" => (1100, Xfy),
        "->" | "*->" => (1050, Xfy),
        "," => (1000, Xfy),
        "=" | "\\=" | "==" | "\\==" | "@<" | "@>" | "@=<" | "@>=" | "=.." | "is" | "=:=" | "=\\=" | "<" | ">"
        | "=<" | ">=" | "=@=" | "\\=@=" | ">:<" | ":<" | "as" => (700, Xfx),
        ":" => (200, Xfy),
        "+" | "-" | "/\\" | "\\/" | "xor" => (500, Yfx),
        "*" | "/" | "//" | "mod" | "rem" | "div" | "<<" | ">>" | "divmod" | "rdiv" => (400, Yfx),
        "**" => (200, Xfx),
        "^" => (200, Xfy),
        _ => return None,
    })
}

/// Priority and type of `name` as a prefix operator.
pub fn prefix(name: &str) -> Option<(u32, OpType)> {
    use OpType::*;
    Some(match name {
        ":-" | "?-" => (1200, Fx),
        "dynamic" | "discontiguous" | "initialization" | "table" | "multifile" => (1150, Fx),
        "\\+" => (900, Fy),
        "-" | "+" | "\\" => (200, Fy),
        _ => return None,
    })
}

/// Argument priorities (left, right) for an infix operator.
pub fn infix_args(prec: u32, ty: OpType) -> (u32, u32) {
    match ty {
        OpType::Xfx => (prec - 1, prec - 1),
        OpType::Xfy => (prec - 1, prec),
        _ => (prec, prec - 1),
    }
}

/// Argument priority for a prefix operator.
pub fn prefix_arg(prec: u32, ty: OpType) -> u32 {
    if ty == OpType::Fy { prec } else { prec - 1 }
}

/// Whether `name` is an operator of any kind.
pub fn is_op(name: &str) -> bool {
    infix(name).is_some() || prefix(name).is_some()
}
