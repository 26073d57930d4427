//! What each builtin and library predicate does, for hover and
//! completion: read from the book's page of builtins
//! (`docs/src/builtins.md`), so the editor and the book say the same.
//! An entry is a line `- **`name/arity`** `template`: what it does`,
//! where arity may be a range (`1..8`) or a list (`0,1`).

use super::analysis::Key;
use std::collections::HashMap;
use std::sync::OnceLock;

const PAGE: &str = include_str!("../../docs/src/builtins.md");

/// One predicate's entry.
pub struct Entry {
    /// How it is called, with argument modes (`between(+Low, +High, ?X)`).
    pub template: &'static str,
    /// What it does.
    pub text: &'static str,
}

/// The entries, by name and arity.
pub fn entries() -> &'static HashMap<Key, Entry> {
    static ENTRIES: OnceLock<HashMap<Key, Entry>> = OnceLock::new();
    ENTRIES.get_or_init(|| parse(PAGE))
}

fn parse(page: &'static str) -> HashMap<Key, Entry> {
    let mut out = HashMap::new();
    for line in page.lines() {
        let Some(rest) = line.strip_prefix("- **`") else { continue };
        let Some((spec, rest)) = rest.split_once("`** `") else { continue };
        let Some((template, text)) = rest.split_once("`: ") else { continue };
        let Some((name, arities)) = spec.rsplit_once('/') else { continue };
        for arity in expand(arities) {
            out.insert((name.to_string(), arity), Entry { template, text });
        }
    }
    out
}

/// `3`, `0,1` or `1..8` as the arities they name.
fn expand(arities: &str) -> Vec<u32> {
    if let Some((lo, hi)) = arities.split_once("..") {
        return match (lo.parse::<u32>(), hi.parse::<u32>()) {
            (Ok(lo), Ok(hi)) => (lo..=hi).collect(),
            _ => Vec::new(),
        };
    }
    arities.split(',').filter_map(|a| a.trim().parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Engine, Origin};

    /// Every builtin and library predicate has its entry, and every entry
    /// is of one.
    #[test]
    fn the_page_documents_every_builtin_and_nothing_else() {
        let known: HashMap<Key, Origin> = (Engine::new().predicates().into_iter())
            .filter(|(n, _, o)| *o != Origin::Program && !n.starts_with('$'))
            .map(|(n, a, o)| ((n, a), o))
            .collect();
        let docs = entries();
        let mut missing: Vec<String> =
            known.keys().filter(|k| !docs.contains_key(*k)).map(|(n, a)| format!("{n}/{a}")).collect();
        missing.sort();
        assert!(missing.is_empty(), "not on docs/src/builtins.md: {missing:?}");
        let mut unknown: Vec<String> =
            docs.keys().filter(|k| !known.contains_key(*k)).map(|(n, a)| format!("{n}/{a}")).collect();
        unknown.sort();
        assert!(unknown.is_empty(), "on docs/src/builtins.md but no predicate: {unknown:?}");
        let between = &docs[&("between".to_string(), 3)];
        assert_eq!(between.template, "between(+Low, +High, ?X)");
        assert!(between.text.starts_with("X is each integer from Low to High"));
        assert_eq!(expand("1..8").len(), 8);
        assert_eq!(expand("0,1"), [0, 1]);
    }
}
