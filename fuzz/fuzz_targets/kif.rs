//! A GDL `.kif` file: parsed, checked, translated, loaded, set up, its
//! first moves listed.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|text: &str| common::game("fuzz.kif", text));
