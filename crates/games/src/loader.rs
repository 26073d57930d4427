//! Files → games: a `.rules` file is a game's rules as they are; a `.kif`
//! file (GDL) becomes a game through its translation
//! ([`crate::gdl::translate_game`]), with its network of propositions as
//! the engine extension where it grounds. The one place that knows both
//! kinds of file: the game layer knows neither GDL nor file names.

use crate::game::{Game, GameError, Spec, is_gdl, load_error};
use crate::syntax::render;
use std::path::Path;

/// Loads a game file: syntax errors and missing interface predicates are
/// errors; warnings are returned as rendered text.
pub fn load(path: &Path) -> Result<(Game, String), GameError> {
    let src = std::fs::read_to_string(path)
        .map_err(|e| GameError::NotFound(format!("cannot read {}: {e}", path.display())))?;
    load_text(path, &src)
}

/// Loads a game file's text (`path` says what kind it is): a `.rules`
/// file as it is, a `.kif` file through its translation (read once: the
/// engine that probed it runs the game).
pub fn load_text(path: &Path, src: &str) -> Result<(Game, String), GameError> {
    if !is_gdl(path) {
        return Spec::new(path, src).build();
    }
    let file = path.display().to_string();
    let name = path.file_stem().map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
    let t = crate::gdl::translate_game(&name, src).map_err(|diags| load_error(&file, src, &diags))?;
    let warnings = render(&file, src, &t.warnings);
    Ok((t.into_game(path)?, warnings))
}
