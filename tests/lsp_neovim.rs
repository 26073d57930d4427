//! `tabula lsp` in a real editor: Neovim, headless, starts the server
//! with its own LSP client, opens Breakthrough with a mistake put in and
//! a GDL file with one, and asks each for the diagnostics, a definition
//! and a hover, as a person would with `:lua vim.diagnostic.get()`, `gd` and
//! `K`. Debian's `neovim` (0.7 and later); under CI its absence is a
//! failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn nvim() -> Option<PathBuf> {
    let ok = Command::new("nvim").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "nvim is not installed, and CI=true requires the editor tests of the language server (apt-get install neovim)"
        );
    }
    if !ok {
        eprintln!(
            "nvim is not installed: the language server's editor tests are skipped (CI=true makes this a failure)"
        );
    }
    ok.then(|| PathBuf::from("nvim"))
}

/// Runs `script` (Lua) in headless Neovim, which writes what it saw to
/// the file `OUT`; gives that file's lines.
fn run_in_neovim(nvim: &Path, dir: &Path, script: &str) -> Vec<String> {
    let out = dir.join("out.txt");
    let lua = dir.join("session.lua");
    let script = script
        .replace("OUT", &lua_string(&out))
        .replace("TABULA", &lua_string(Path::new(env!("CARGO_BIN_EXE_tabula"))));
    std::fs::write(&lua, script).unwrap();
    let mut child = Command::new(nvim)
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", lua.display()))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nvim starts");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("nvim did not finish its session: {:?}", std::fs::read_to_string(&out));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(&out).unwrap_or_default().lines().map(str::to_string).collect()
}

/// A Lua string literal of a path.
fn lua_string(p: &Path) -> String {
    format!("[[{}]]", p.display())
}

#[test]
fn neovim_shows_the_diagnostics_goes_to_a_definition_and_hovers() {
    let Some(nvim) = nvim() else { return };
    let dir = std::env::temp_dir().join(format!("tabula-nvim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(root.join("games/breakthrough.rules")).unwrap();
    // A call of a predicate defined nowhere (a typo), put in move/3.
    let text = src.replacen("    other(P, O),\n", "    othr(P, O),\n", 1);
    std::fs::write(dir.join("breakthrough.rules"), &text).unwrap();
    let (call_line, call) = text.lines().enumerate().find(|(_, l)| l.starts_with("    piece_move(P, R, C, B")).unwrap();
    let column = call.find("piece_move").unwrap() + 2;
    std::fs::write(
        dir.join("broken.kif"),
        "(role red)\n(init (cell 1))\n(<= (legal red (mark ?x)) (true (cell ?y)))\n",
    )
    .unwrap();
    let script = format!(
        r#"
local out = io.open(OUT, 'w')
local function say(s) out:write(s .. '\n') out:flush() end
local client = vim.lsp.start_client({{ name = 'tabula', cmd = {{ TABULA, 'lsp' }}, root_dir = vim.fn.getcwd() }})
local function open(file)
  vim.cmd('edit ' .. file)
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, client)
  vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    say(string.format('%s diagnostic %d:%d severity %d %s', file, d.lnum + 1, d.col + 1, d.severity, (d.message:gsub('\n', ' '))))
  end
  return buf
end
local function ask(file, buf, line, character)
  local params = {{ textDocument = {{ uri = vim.uri_from_bufnr(buf) }}, position = {{ line = line, character = character }} }}
  for _, r in pairs(vim.lsp.buf_request_sync(buf, 'textDocument/definition', params, 10000) or {{}}) do
    for _, loc in ipairs(r.result or {{}}) do
      say(string.format('%s definition %d:%d', file, loc.range.start.line + 1, loc.range.start.character + 1))
    end
  end
  for _, r in pairs(vim.lsp.buf_request_sync(buf, 'textDocument/hover', params, 10000) or {{}}) do
    say(file .. ' hover ' .. (r.result.contents.value:gsub('\n', ' ')))
  end
end
ask('breakthrough.rules', open('breakthrough.rules'), {call_line}, {column})
ask('broken.kif', open('broken.kif'), 2, 33)
out:close()
vim.cmd('qa!')
"#
    );
    let seen = run_in_neovim(&nvim, &dir, &script);
    let (typo_line, typo) = text.lines().enumerate().find(|(_, l)| l.starts_with("    othr(")).unwrap();
    let expected = format!(
        "breakthrough.rules diagnostic {}:{} severity 2 call to undefined predicate `othr/2`",
        typo_line + 1,
        typo.find("othr").unwrap() + 1
    );
    assert!(
        seen.iter().any(|l| l.starts_with(&expected) && l.ends_with("did you mean `other/2`?")),
        "{expected}\nin\n{seen:#?}"
    );
    let head = text.lines().position(|l| l.starts_with("piece_move(P, R, C, B, X1")).unwrap();
    assert!(seen.contains(&format!("breakthrough.rules definition {}:1", head + 1)), "{seen:#?}");
    assert!(seen.iter().any(|l| l.starts_with("breakthrough.rules hover **piece_move/12**: 1 clause")), "{seen:#?}");
    assert!(seen.iter().any(|l| l.starts_with("broken.kif diagnostic 3:") && l.contains("severity 1")), "{seen:#?}");
    // In the GDL file: from the fluent `cell` in a body to where init
    // makes it, and its hover.
    assert!(seen.contains(&"broken.kif definition 2:8".to_string()), "{seen:#?}");
    assert!(seen.contains(&"broken.kif hover **cell/1**: 1 clause, the first at line 2".to_string()), "{seen:#?}");
    for line in &seen {
        eprintln!("{line}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
