//! A loaded game as it crosses threads: [`Spec`] (the rules' text, where
//! they came from, an engine extension) → [`Spec::build`] → a [`Game`] for
//! the calling thread. The engine holds `Rc`s, so a `Game` stays on the
//! thread that built it; a `Spec` is `Send + Sync` and cheap to clone.

use super::{Game, GameError, load_error};
use crate::engine::{Engine, Extension};
use crate::syntax::render;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// A game that can be sent to another thread and built there: the text of
/// its rules (for a GDL game, its translation), the file they came from,
/// and the engine extension that answers some of their predicates natively
/// (a GDL game's network of propositions), with the note of why there is
/// none where one was tried.
#[derive(Clone)]
pub struct Spec {
    path: Arc<Path>,
    source: Arc<str>,
    extension: Option<Arc<dyn Extension>>,
    note: Option<Arc<str>>,
}

impl Spec {
    /// The rules `source`, read from `path` (which names the game and the
    /// file in messages).
    pub fn new(path: &Path, source: impl Into<Arc<str>>) -> Spec {
        Spec { path: Arc::from(path), source: source.into(), extension: None, note: None }
    }

    /// The same rules, with an extension installed in every engine built.
    pub fn with_extension(mut self, extension: Arc<dyn Extension>) -> Spec {
        self.extension = Some(extension);
        self
    }

    /// The same rules, with a note of why they have no extension.
    pub fn with_note(mut self, note: impl Into<Arc<str>>) -> Spec {
        self.note = Some(note.into());
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The text of the rules.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The extension installed in every engine built, if any.
    pub fn extension(&self) -> Option<&Arc<dyn Extension>> {
        self.extension.as_ref()
    }

    /// Why the game has no extension, where one was tried.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The digest of the rules' text (jobs and shards check it).
    pub fn digest(&self) -> String {
        digest(&self.source)
    }

    /// A game for this thread: a new engine with the rules loaded and the
    /// extension installed; the warnings of the load, rendered.
    pub fn build(&self) -> Result<(Game, String), GameError> {
        let file = self.path.display().to_string();
        let mut engine = Engine::new();
        let report = engine.load(&file, &self.source);
        if report.has_errors() {
            return Err(load_error(&file, &self.source, &report.diagnostics));
        }
        let warnings = render(&file, &self.source, &report.diagnostics);
        if let Some(ext) = &self.extension {
            ext.clone().install(&mut engine).map_err(GameError::Rules)?;
        }
        Ok((Game::from_engine(self.clone(), engine)?, warnings))
    }
}

impl fmt::Debug for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spec")
            .field("path", &self.path)
            .field("source", &format_args!("{} bytes", self.source.len()))
            .field("extension", &self.extension.is_some())
            .field("note", &self.note)
            .finish()
    }
}

/// FNV-1a over the rules' text, as 16 hex digits.
pub fn digest(source: &str) -> String {
    let h = source.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    format!("{h:016x}")
}
