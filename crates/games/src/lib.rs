//! tabula's games: the game interface over the engine ([`game`]: a
//! [`game::Spec`] that crosses threads, the [`game::Game`] it builds, a
//! game in progress as [`game::Play`]), games in GDL ([`gdl`]: the
//! translation and the grounded networks, an engine extension), the
//! computer players ([`ai`]) and [`loader`], which opens a file of either
//! kind. It knows nothing of front ends: terminals, servers, batch work.
#![deny(unsafe_code)]

pub use tabula_engine::{engine, syntax};

pub mod ai;
pub mod game;
pub mod gdl;
pub mod loader;
