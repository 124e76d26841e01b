//! Every external program that the tests, the sources and the `.ci/` scripts spawn is installed by
//! `.ci/setup` (its `programs` table names each with its Debian package), is in every Debian root
//! (the Essential packages, a `debootstrap --variant=minbase` root included), is the Rust
//! toolchain README asks for, or runs only on the NVIDIA device machine (the `.ci/nvidia-*`
//! scripts and the ones that source `.ci/nvidia-env`). A program spawned nowhere in that list fails
//! this test, so a test cannot again pass only where someone installed its tool by hand.
//!
//! The `.ci/` scripts are read with a small scanner of the shell's grammar (quotes, command
//! substitution, heredocs, arrays, functions, redirections), enough for what the scripts use; a
//! construct it does not know (`case`, backticks) is an error here rather than a silent miss.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Programs of Debian's Essential packages (coreutils, bash, grep, sed, findutils, diffutils,
/// debianutils, dpkg, apt, libc-bin, util-linux, mount, hostname, tar, gzip, mawk): every root has
/// them (each checked present in a `debootstrap --variant=minbase` bookworm root).
const ESSENTIAL: &[&str] = &[
    "apt-get",
    "awk",
    "basename",
    "bash",
    "cat",
    "chmod",
    "cmp",
    "cp",
    "cut",
    "date",
    "df",
    "dirname",
    "dpkg",
    "dpkg-query",
    "find",
    "grep",
    "head",
    "id",
    "ldconfig",
    "ls",
    "mkdir",
    "mktemp",
    "mv",
    "nproc",
    "rm",
    "sed",
    "seq",
    "sha256sum",
    "sleep",
    "sort",
    "tail",
    "tar",
    "tee",
    "touch",
    "tr",
    "uniq",
    "wc",
    "xargs",
];

/// Shell builtins and keywords: never spawned.
const BUILTINS: &[&str] = &[
    ".", ":", "[", "[[", "]]", "break", "cd", "command", "compgen", "continue", "declare", "do",
    "done", "echo", "elif", "else", "esac", "eval", "exec", "exit", "export", "false", "fi", "for",
    "if", "kill", "local", "printf", "pwd", "read", "return", "set", "shift", "source", "test",
    "then", "time", "trap", "true", "type", "unset", "until", "wait", "while", "{", "}", "!",
];

/// The Rust toolchain: README's one prerequisite (rustup), `.ci/setup` checks it is there.
const TOOLCHAIN: &[&str] = &["cargo", "rustc"];

/// Programs of the NVIDIA device machine's image, used only by scripts that run there (they
/// source `.ci/nvidia-env`); they cannot be had on a Debian CI machine.
const DEVICE_ONLY: &[(&str, &str)] = &[
    ("nvidia-smi", "NVIDIA's driver, on the device machine"),
    (
        "python3",
        "the device image's Python with numpy (summaries of bench runs)",
    ),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `.ci/setup`'s `programs` table: program -> Debian package.
fn setup_programs() -> BTreeMap<String, String> {
    let setup = std::fs::read_to_string(root().join(".ci/setup")).unwrap();
    let start = setup
        .find("\nprograms=(")
        .expect(".ci/setup has a programs=( ... ) table");
    let body = &setup[start + "\nprograms=(".len()..];
    let body = &body[..body
        .find("\n)")
        .expect("the programs table ends with a line ')'")];
    let mut table = BTreeMap::new();
    for line in body.lines() {
        let line = line.split('#').next().unwrap().trim();
        for entry in line.split_whitespace() {
            let (program, package) = entry
                .split_once(':')
                .unwrap_or_else(|| panic!(".ci/setup programs: '{entry}' is not PROGRAM:PACKAGE"));
            table.insert(program.to_string(), package.to_string());
        }
    }
    assert!(!table.is_empty(), ".ci/setup's programs table is empty");
    table
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                files(&path, ext, out);
            }
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// Helpers that spawn a program given as their first argument: (file, helper name).
const SPAWN_HELPERS: &[(&str, &str)] = &[("tests/formats.rs", "tool")];

/// The programs the Rust sources spawn: `Command::new` of a string literal, and the first string argument of
/// calls to the [`SPAWN_HELPERS`] (whitespace and line breaks allowed, as rustfmt writes them). A
/// `Command::new` of anything else (a variable) outside those helpers' bodies is an error, since
/// this test could not tell what it runs; the binary under test is exempt.
fn rust_programs() -> BTreeMap<String, String> {
    let mut sources = vec![root().join("build.rs")];
    files(&root().join("src"), "rs", &mut sources);
    files(&root().join("tests"), "rs", &mut sources);
    files(&root().join("fuzz"), "rs", &mut sources);
    let mut found = BTreeMap::new();
    for path in sources {
        let rel = path.strip_prefix(root()).unwrap().display().to_string();
        if rel == "tests/programs.rs" {
            continue; // this file names the patterns it looks for
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let at = |offset: usize| format!("{rel}:{}", text[..offset].lines().count().max(1));
        // The helpers' bodies: from `fn NAME(` to the next line that is a lone `}`.
        let helpers: Vec<&str> = SPAWN_HELPERS
            .iter()
            .filter(|(f, _)| *f == rel)
            .map(|(_, h)| *h)
            .collect();
        let bodies: Vec<std::ops::Range<usize>> = helpers
            .iter()
            .filter_map(|h| {
                let start = text.find(&format!("fn {h}("))?;
                let end = text[start..].find("\n}").map_or(text.len(), |e| start + e);
                Some(start..end)
            })
            .collect();
        assert_eq!(
            bodies.len(),
            helpers.len(),
            "{rel}: a SPAWN_HELPERS function is gone"
        );
        let mut calls: Vec<(&str, bool)> = vec![("Command::new(", false)];
        calls.extend(helpers.iter().map(|h| (*h, true)));
        for (call, helper) in calls {
            let pattern = if helper {
                format!("{call}(")
            } else {
                call.to_string()
            };
            for (i, _) in text.match_indices(&pattern) {
                let before = text[..i].chars().next_back();
                if helper && before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue; // another function whose name ends like the helper's
                }
                let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
                if (helper && text[..i].ends_with("fn "))
                    || text[line_start..i].trim_start().starts_with("//")
                {
                    continue; // the helper's definition, or a comment
                }
                let rest = text[i + pattern.len()..].trim_start();
                if let Some(lit) = rest.strip_prefix('"') {
                    let name = &lit[..lit.find('"').unwrap()];
                    found.entry(name.to_string()).or_insert_with(|| at(i));
                } else if !helper
                    && !rest.starts_with("env!(\"CARGO_BIN_EXE_")
                    && !bodies.iter().any(|b| b.contains(&i))
                {
                    panic!(
                        "{}: Command::new of a computed program: spawn a literal name, or add \
                         the helper to SPAWN_HELPERS in tests/programs.rs",
                        at(i)
                    );
                }
            }
        }
    }
    found
}

/// What one shell script runs: the first word of every simple command, with its line.
#[derive(Default)]
struct Scan {
    programs: Vec<(String, usize)>,
    functions: BTreeSet<String>,
}

/// A scanner of the bash the `.ci/` scripts are written in.
struct Shell<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
    heredocs: Vec<String>,
    out: Scan,
}

/// Where a word stands in its command.
#[derive(Clone, Copy, PartialEq)]
enum Pos {
    /// The next word names the program (or is an assignment, a keyword or a wrapper).
    Start,
    /// Arguments.
    Args,
    /// The words of `for NAME in ...`, up to the next separator.
    ForList,
}

impl<'a> Shell<'a> {
    fn peek(&self, k: usize) -> u8 {
        *self.s.get(self.i + k).unwrap_or(&0)
    }

    fn fail(&self, what: &str) -> ! {
        panic!(
            "line {}: {what} (tests/programs.rs cannot read it)",
            self.line
        )
    }

    /// Skips the bodies of the heredocs whose operators were on the line just ended.
    fn newline(&mut self) {
        self.line += 1;
        for delim in std::mem::take(&mut self.heredocs) {
            loop {
                let end = self.s[self.i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(self.s.len(), |p| self.i + p);
                let text = std::str::from_utf8(&self.s[self.i..end]).unwrap();
                self.i = (end + 1).min(self.s.len());
                self.line += 1;
                if text.trim_start_matches('\t') == delim || end >= self.s.len() {
                    break;
                }
            }
        }
    }

    /// Reads commands until `close` (0: the end of the script); records each command's program.
    fn commands(&mut self, close: u8) {
        let mut pos = Pos::Start;
        let mut word = Vec::new();
        let mut redirect = false;
        loop {
            let c = self.peek(0);
            let ends_word = matches!(
                c,
                0 | b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
            ) || (c == close && close != 0);
            if ends_word {
                let digits = !word.is_empty() && word.iter().all(u8::is_ascii_digit);
                if !(digits && matches!(c, b'<' | b'>')) {
                    self.word(&mut word, &mut pos, &mut redirect);
                }
                word.clear();
            }
            match c {
                0 if close != 0 => self.fail("unterminated substitution"),
                0 => return,
                c if c == close && close != 0 => {
                    self.i += 1;
                    return;
                }
                b'\n' => {
                    self.i += 1;
                    self.newline();
                    if pos != Pos::Start || !word.is_empty() {
                        pos = Pos::Start;
                    }
                }
                b' ' | b'\t' => self.i += 1,
                b';' | b'&' | b'|' | b'(' | b')' => {
                    if c == b'(' && self.peek(1) == b'(' {
                        self.arithmetic();
                    } else {
                        self.i += 1;
                    }
                    pos = Pos::Start;
                }
                b'<' | b'>' => {
                    if c == b'<' && self.peek(1) == b'<' && self.peek(2) != b'<' {
                        self.heredoc();
                    } else {
                        while matches!(self.peek(0), b'<' | b'>' | b'&') {
                            self.i += 1;
                        }
                        redirect = true;
                    }
                }
                b'#' if word.is_empty() => {
                    while !matches!(self.peek(0), b'\n' | 0) {
                        self.i += 1;
                    }
                }
                b'\\' => {
                    if self.peek(1) == b'\n' {
                        self.line += 1;
                    } else {
                        word.push(self.peek(1));
                    }
                    self.i += 2;
                }
                b'\'' => {
                    self.i += 1;
                    while self.peek(0) != b'\'' {
                        if self.peek(0) == 0 {
                            self.fail("unterminated quote");
                        }
                        self.line += usize::from(self.peek(0) == b'\n');
                        word.push(self.peek(0));
                        self.i += 1;
                    }
                    self.i += 1;
                    word.push(b'\'');
                }
                b'"' => {
                    self.i += 1;
                    word.push(b'"');
                    self.double_quoted(&mut word);
                }
                b'$' => self.dollar(&mut word),
                b'`' => self.fail("backticks"),
                b'=' if self.peek(1) == b'(' && !word.is_empty() && pos == Pos::Start => {
                    // An array assignment: its elements are words, never commands.
                    self.i += 2;
                    self.array();
                    word.clear();
                }
                _ => {
                    word.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// Classifies one finished word by where it stands.
    fn word(&mut self, word: &mut Vec<u8>, pos: &mut Pos, redirect: &mut bool) {
        if word.is_empty() {
            return;
        }
        let w = String::from_utf8(std::mem::take(word)).unwrap();
        if std::mem::take(redirect) {
            return;
        }
        match *pos {
            Pos::ForList | Pos::Args => {}
            Pos::Start => {
                let assignment = w
                    .split_once('=')
                    .is_some_and(|(name, _)| !name.is_empty() && name.bytes().all(is_name_byte));
                match w.as_str() {
                    _ if assignment => {}
                    "case" | "select" => self.fail(&format!("'{w}'")),
                    "for" => *pos = Pos::ForList,
                    "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" | "time"
                    | "exec" | "sudo" | "$sudo" | "{" | "}" | "fi" | "done" => {}
                    _ => {
                        if self.peek(0) == b'(' && self.peek(1) == b')' {
                            self.out.functions.insert(w);
                        } else {
                            self.out.programs.push((w, self.line));
                        }
                        *pos = Pos::Args;
                    }
                }
            }
        }
    }

    /// `<<WORD`, `<<-WORD`, `<<'WORD'`: the body follows the end of this line.
    fn heredoc(&mut self) {
        self.i += 2;
        if self.peek(0) == b'-' {
            self.i += 1;
        }
        while self.peek(0) == b' ' {
            self.i += 1;
        }
        let mut delim = Vec::new();
        while !matches!(self.peek(0), b' ' | b'\t' | b'\n' | b')' | b';' | b'|' | 0) {
            let c = self.peek(0);
            if c != b'\'' && c != b'"' {
                delim.push(c);
            }
            self.i += 1;
        }
        self.heredocs.push(String::from_utf8(delim).unwrap());
    }

    /// Inside "...": only substitutions run commands.
    fn double_quoted(&mut self, word: &mut Vec<u8>) {
        loop {
            match self.peek(0) {
                0 => self.fail("unterminated double quote"),
                b'"' => {
                    self.i += 1;
                    word.push(b'"');
                    return;
                }
                b'\\' => {
                    word.push(self.peek(1));
                    self.i += 2;
                }
                b'$' => self.dollar(word),
                b'`' => self.fail("backticks"),
                c => {
                    self.line += usize::from(c == b'\n');
                    word.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// `$(...)` (commands), `$((...))` (arithmetic), `${...}` and `$NAME` (expansions).
    fn dollar(&mut self, word: &mut Vec<u8>) {
        word.push(b'$');
        self.i += 1;
        match (self.peek(0), self.peek(1)) {
            (b'(', b'(') => self.arithmetic(),
            (b'(', _) => {
                self.i += 1;
                self.commands(b')');
            }
            (b'{', _) => {
                let mut depth = 0;
                loop {
                    match self.peek(0) {
                        0 => self.fail("unterminated ${"),
                        b'{' => depth += 1,
                        b'}' => depth -= 1,
                        _ => {}
                    }
                    word.push(self.peek(0));
                    self.i += 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            _ => {}
        }
    }

    /// `((...))`: no commands inside.
    fn arithmetic(&mut self) {
        let mut depth = 0;
        loop {
            match self.peek(0) {
                0 => self.fail("unterminated (("),
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            self.i += 1;
            if depth == 0 {
                break;
            }
        }
    }

    /// The elements of `NAME=(...)`, comments and newlines included.
    fn array(&mut self) {
        loop {
            match self.peek(0) {
                0 => self.fail("unterminated array"),
                b')' => {
                    self.i += 1;
                    return;
                }
                b'#' => {
                    while !matches!(self.peek(0), b'\n' | 0) {
                        self.i += 1;
                    }
                }
                b'\n' => {
                    self.line += 1;
                    self.i += 1;
                }
                b'"' => {
                    self.i += 1;
                    self.double_quoted(&mut Vec::new());
                }
                _ => self.i += 1,
            }
        }
    }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn scan_shell(text: &str) -> Scan {
    let mut shell = Shell {
        s: text.as_bytes(),
        i: 0,
        line: 1,
        heredocs: Vec::new(),
        out: Scan::default(),
    };
    shell.commands(0);
    shell.out
}

/// The program a command word names, or None for words this test need not check: variables
/// (`"$bin"`: the binary under test or a script's argument) and paths into the checkout.
fn program_of(word: &str) -> Option<String> {
    let w = word.trim_matches('"').trim_matches('\'');
    if w.starts_with('$') || w.starts_with("./") || w.starts_with("target/") {
        return None;
    }
    Some(w.rsplit('/').next().unwrap().to_string())
}

#[test]
fn the_shell_scanner_finds_the_commands_of_every_construct_the_scripts_use() {
    let script = r#"#!/usr/bin/env bash
set -euo pipefail   # a comment: rm nothing
packages=(
  xvfb # Xvfb itself
  imagemagick
)
a=$1 b=$2 FOO=bar alpha --flag "$a" 2>&1 | beta >"$b" 2>/dev/null
if [ -n "${X:-}" ]; then exec gamma "$@"; fi
for t in one two three; do delta "$t" & done
echo "words; not | commands $(epsilon -q "$(zeta x)" | eta)"
run() { local t=$1; theta "$t"; }
out=$(cat <<'PY'
iota should not count
PY
)
((i % 2)) && kappa
x=$((i + 1)); "$bin" bench --json x
sudo lambda && $sudo mu
VAR=1 \
  nu --x ' ; omicron '
trap 'kill $pid' EXIT
"#;
    let scan = scan_shell(script);
    let got: Vec<&str> = scan.programs.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        got,
        [
            "set", "alpha", "beta", "[", "gamma", "delta", "echo", "epsilon", "zeta", "eta",
            "local", "theta", "cat", "kappa", "\"$bin\"", "lambda", "mu", "nu", "trap"
        ]
    );
    assert_eq!(scan.functions.iter().collect::<Vec<_>>(), ["run"]);
    let line = |p: &str| scan.programs.iter().find(|(q, _)| q == p).unwrap().1;
    assert_eq!(line("alpha"), 7);
    assert_eq!(line("kappa"), 16);
    assert_eq!(line("nu"), 20);
}

#[test]
fn every_program_the_tests_scripts_and_sources_spawn_is_installed_by_ci_setup() {
    let table = setup_programs();
    let essential: BTreeSet<&str> = ESSENTIAL.iter().copied().collect();
    let builtin: BTreeSet<&str> = BUILTINS.iter().copied().collect();
    let mut problems = Vec::new();
    let mut check = |program: &str, at: &str, device: bool| {
        let known = table.contains_key(program)
            || essential.contains(program)
            || builtin.contains(program)
            || TOOLCHAIN.contains(&program)
            || (device && DEVICE_ONLY.iter().any(|(p, _)| *p == program));
        if !known {
            problems.push(format!(
                "{at}: '{program}' is spawned but .ci/setup does not install it (add \
                 PROGRAM:PACKAGE to its programs table)"
            ));
        }
    };
    for (program, at) in rust_programs() {
        check(&program, &at, false);
    }
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(root().join(".ci"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    scripts.sort();
    let mut seen = 0;
    for path in scripts {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let device =
            name.starts_with("nvidia-") || text.contains("source \"$(dirname \"$0\")/nvidia-env\"");
        let scan = scan_shell(&text);
        for (word, line) in &scan.programs {
            let Some(program) = program_of(word) else {
                continue;
            };
            if scan.functions.contains(&program) {
                continue;
            }
            seen += 1;
            check(&program, &format!(".ci/{name}:{line}"), device);
        }
    }
    assert!(seen > 30, "the scanner found only {seen} commands in .ci/");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `.ci/setup` installs what its table names: each package is in its package list (so a fresh
/// machine gets it) and, where setup has run, each program is on PATH.
#[test]
fn every_program_in_the_setup_table_is_on_the_path() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<String> = setup_programs()
        .into_iter()
        .filter(|(program, _)| !std::env::split_paths(&path).any(|d| d.join(program).is_file()))
        .map(|(program, package)| format!("{program} (package {package})"))
        .collect();
    assert!(
        missing.is_empty(),
        "not installed: {}; run `bash .ci/setup`, which installs them",
        missing.join(", ")
    );
}
