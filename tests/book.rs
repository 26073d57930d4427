//! The manual (`docs/`, an mdBook) and the README hold together: every
//! chapter is in `SUMMARY.md` and every file `SUMMARY.md` names exists,
//! every relative link reaches a file (and its `#anchor` a heading there),
//! every `{{#include}}` reaches a file and its anchor. `.ci/run` also
//! builds the book with mdBook.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn book() -> PathBuf {
    root().join("docs/src")
}

/// The chapters: every `.md` file of the book's source.
fn chapters() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(book())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    v.sort();
    v
}

/// The text outside fenced code blocks, with each line's number.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// The targets of the Markdown links and images in a line: `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    // Code spans are not links.
    let mut plain = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            plain.push(c);
        }
    }
    let mut out = Vec::new();
    let mut rest = plain.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        match after.find(')') {
            Some(j) => {
                out.push(after[..j].to_string());
                rest = &after[j..];
            }
            None => break,
        }
    }
    out
}

/// The anchors mdBook (and GitHub) give a file's headings: lower case,
/// letters, digits, `-` and `_` kept, spaces made `-`, the rest dropped;
/// a repeated one gets `-1`, `-2`...
fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for (_, line) in prose(text) {
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else { continue };
        if !title.starts_with(' ') {
            continue;
        }
        let id: String = title
            .trim()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
                _ => None,
            })
            .collect();
        let mut unique = id.clone();
        let mut n = 1;
        while !ids.insert(unique.clone()) {
            unique = format!("{id}-{n}");
            n += 1;
        }
    }
    ids
}

/// The problems of one file's links: (line, what is wrong).
fn broken_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut out = Vec::new();
    for (n, line) in prose(&text) {
        for target in link_targets(line) {
            if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() { file.to_path_buf() } else { dir.join(path) };
            if !resolved.exists() {
                out.push(format!("{}:{n}: `{target}`: no such file", file.display()));
                continue;
            }
            if let Some(a) = anchor {
                let is_md = resolved.extension().is_some_and(|x| x == "md");
                let ids =
                    if is_md { heading_ids(&std::fs::read_to_string(&resolved).unwrap()) } else { BTreeSet::new() };
                if !ids.contains(a) {
                    out.push(format!("{}:{n}: `{target}`: no heading with the anchor `{a}`", file.display()));
                }
            }
        }
    }
    out
}

#[test]
fn every_link_of_the_book_and_the_readme_reaches_its_target() {
    let mut files = chapters();
    files.push(root().join("README.md"));
    let broken: Vec<String> = files.iter().flat_map(|f| broken_links(f)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_summary_lists_every_chapter_once() {
    let summary = std::fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    let listed: Vec<String> = summary.lines().flat_map(link_targets).collect();
    let unique: BTreeSet<&String> = listed.iter().collect();
    assert_eq!(unique.len(), listed.len(), "a chapter is listed twice: {listed:?}");
    for chapter in chapters() {
        let name = chapter.file_name().unwrap().to_string_lossy().into_owned();
        if name != "SUMMARY.md" {
            assert!(listed.contains(&name), "{name} is not in SUMMARY.md, so the book leaves it out");
        }
    }
    for name in &listed {
        assert!(book().join(name).exists(), "SUMMARY.md names {name}, which does not exist");
    }
}

/// `{{#include path}}`, `{{#include path:anchor}}` and
/// `{{#include path:from:to}}` reach a file, and a named anchor is
/// marked there by `ANCHOR: name` and `ANCHOR_END: name` lines.
#[test]
fn every_include_reaches_its_file_and_anchor() {
    let mut found = 0;
    for chapter in chapters() {
        let text = std::fs::read_to_string(&chapter).unwrap();
        for (i, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("{{#include ") {
                let escaped = at > 0 && rest.as_bytes()[at - 1] == b'\\';
                let after = &rest[at + "{{#include ".len()..];
                let end = after.find("}}").expect("an include closes with }}");
                rest = &after[end..];
                if escaped {
                    continue;
                }
                found += 1;
                let spec = after[..end].trim();
                let (path, selector) = match spec.split_once(':') {
                    Some((p, s)) => (p, Some(s)),
                    None => (spec, None),
                };
                let file = chapter.parent().unwrap().join(path);
                let where_ = format!("{}:{}", chapter.display(), i + 1);
                let included = std::fs::read_to_string(&file)
                    .unwrap_or_else(|e| panic!("{where_}: cannot include {}: {e}", file.display()));
                let Some(sel) = selector else { continue };
                if sel.split(':').all(|n| n.is_empty() || n.parse::<usize>().is_ok()) {
                    let first: usize = sel.split(':').next().unwrap().parse().unwrap_or(1);
                    assert!(first <= included.lines().count(), "{where_}: {path} has fewer than {first} lines");
                } else {
                    let start = included.lines().filter(|l| l.trim_end().ends_with(&format!("ANCHOR: {sel}"))).count();
                    let stop =
                        included.lines().filter(|l| l.trim_end().ends_with(&format!("ANCHOR_END: {sel}"))).count();
                    assert!(
                        start == 1 && stop == 1,
                        "{where_}: {path} has no anchor `{sel}` (ANCHOR: and ANCHOR_END:)"
                    );
                }
            }
        }
    }
    assert!(found > 0, "the book includes nothing: the tutorial shows its game through includes");
}

/// The tutorial's game, put together from the pieces the chapter shows
/// (in the order it shows them), is the tested file: nothing in the file
/// is left out of the chapter but comments.
#[test]
fn the_tutorial_shows_all_of_its_game() {
    let chapter = std::fs::read_to_string(book().join("writing-a-game.md")).unwrap();
    let game = std::fs::read_to_string(book().join("tutorial/hexapawn.rules")).unwrap();
    let shown: Vec<&str> = chapter
        .lines()
        .filter_map(|l| l.trim().strip_prefix("{{#include tutorial/hexapawn.rules:")?.strip_suffix("}}"))
        .collect();
    let mut current: Option<&str> = None;
    let mut order = Vec::new();
    for line in game.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("% ANCHOR: ") {
            current = Some(name);
            order.push(name);
        } else if t.starts_with("% ANCHOR_END: ") {
            current = None;
        } else if current.is_none() && !t.is_empty() && !t.starts_with('%') {
            panic!("hexapawn.rules: `{t}` is outside every anchor, so the chapter never shows it");
        }
    }
    assert_eq!(shown, order, "the chapter should show the game's parts, each once, in the file's order");
}
