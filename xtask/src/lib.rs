//! Checks of the workspace's own structure, run as tests (`cargo test -p xtask`, part of
//! `make unit`) and by hand (`cargo run -p xtask -- modules`).
//!
//! [`Crate::read`] reads the module graph of one target of a crate (its lib, or one binary)
//! from its sources, as text: which file names which other file of the same target. A file
//! names a module when its code (comments, string and character literals and `#[cfg(test)]`
//! modules left out) holds a path into it: `crate::a::b`, `super::x`, `self::y`, `child::z`
//! (a module declared by this file), in a `use` declaration or anywhere in the code. A path
//! names the deepest module it walks through: `crate::cache::watch::Caches` names the file of
//! `cache::watch`.
//!
//! Two kinds of paths draw no arrow:
//! - into the file itself;
//! - into one of the file's ancestors (`super::Shared`, `crate::ClusterInputs` from any module):
//!   a module's own file (`mod.rs`, `lib.rs`) is the face of the modules below it, which use
//!   what it declares; what it takes from them is drawn, what they take from it is not.
//!
//! [`Crate::cycles`] lists the strongly connected groups of files of more than one file: files
//! that import each other in a loop. Test code (`tests/`, `benches/`, `#[cfg(test)]` modules,
//! `#[cfg(any(test, ...))]` modules) is no part of the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What can go wrong reading a crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A source file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A `mod x;` declaration names no file.
    #[error("{file}: `mod {name};` has neither {name}.rs nor {name}/mod.rs")]
    NoModuleFile {
        /// The declaring file.
        file: PathBuf,
        /// The module's name.
        name: String,
    },
}

/// One module of a target.
#[derive(Clone, Debug)]
pub struct Module {
    /// Its path from the crate root (`[]` for the root, `["cache", "watch"]`).
    pub path: Vec<String>,
    /// The file that holds it (an inline module: the file of its parent).
    pub file: PathBuf,
    /// Its parent (`None` for the root).
    pub parent: Option<usize>,
    /// Its child modules by name.
    pub children: BTreeMap<String, usize>,
}

impl Module {
    /// `crate::a::b` (`crate` for the root).
    pub fn name(&self) -> String {
        std::iter::once("crate".to_string())
            .chain(self.path.iter().cloned())
            .collect::<Vec<_>>()
            .join("::")
    }
}

/// The module graph of one target (a lib or a binary).
#[derive(Clone, Debug, Default)]
pub struct Crate {
    /// Every module; `modules[0]` is the root.
    pub modules: Vec<Module>,
    /// `(a, b)`: the file of module `a` names module `b` (both own their file).
    pub edges: BTreeSet<(usize, usize)>,
    /// `(a, b)`: the file of module `a` names module `b`, one of its ancestors (its parent, the
    /// crate root...): an import running back up. Kept apart from `edges` (a module and its
    /// ancestors would make every such import a cycle).
    pub upward: BTreeSet<(usize, usize)>,
}

impl Crate {
    /// Reads the target whose root file is `root` (`src/lib.rs`, `src/main.rs`,
    /// `src/bin/x.rs`).
    pub fn read(root: &Path) -> Result<Self, Error> {
        let mut c = Crate::default();
        c.modules.push(Module {
            path: Vec::new(),
            file: root.to_path_buf(),
            parent: None,
            children: BTreeMap::new(),
        });
        // Declarations first (every file, depth first), then the paths of every file.
        let mut code: Vec<(usize, String)> = Vec::new();
        let mut stack = vec![0];
        while let Some(m) = stack.pop() {
            let file = c.modules[m].file.clone();
            let text = std::fs::read_to_string(&file).map_err(|source| Error::Read {
                path: file.clone(),
                source,
            })?;
            let raw = text;
            let text = without_tests(&strip(&raw));
            let dir = child_dir(&file, m == 0);
            for decl in declarations(&text, &raw) {
                let child_file = match decl.path_attr {
                    Some(p) => file.parent().unwrap_or(Path::new("")).join(p),
                    None => {
                        let flat = dir.join(format!("{}.rs", decl.name));
                        let nested = dir.join(&decl.name).join("mod.rs");
                        if flat.is_file() {
                            flat
                        } else if nested.is_file() {
                            nested
                        } else {
                            return Err(Error::NoModuleFile {
                                file: file.clone(),
                                name: decl.name,
                            });
                        }
                    }
                };
                let id = c.add_child(m, &decl.name, child_file);
                stack.push(id);
            }
            for name in inline_modules(&text) {
                let file = c.modules[m].file.clone();
                c.add_child(m, &name, file);
            }
            code.push((m, text));
        }
        for (m, text) in code {
            for path in paths(&text) {
                if let Some(target) = c.resolve(m, &path) {
                    c.add_edge(m, target);
                }
            }
        }
        Ok(c)
    }

    fn add_child(&mut self, parent: usize, name: &str, file: PathBuf) -> usize {
        let mut path = self.modules[parent].path.clone();
        path.push(name.to_string());
        let id = self.modules.len();
        self.modules.push(Module {
            path,
            file,
            parent: Some(parent),
            children: BTreeMap::new(),
        });
        self.modules[parent].children.insert(name.to_string(), id);
        id
    }

    /// The module of the file that holds `m` (an inline module's file owner).
    fn file_owner(&self, mut m: usize) -> usize {
        while let Some(p) = self.modules[m].parent {
            if self.modules[p].file != self.modules[m].file {
                break;
            }
            m = p;
        }
        m
    }

    fn is_ancestor(&self, a: usize, mut m: usize) -> bool {
        while let Some(p) = self.modules[m].parent {
            if p == a {
                return true;
            }
            m = p;
        }
        false
    }

    fn add_edge(&mut self, from: usize, to: usize) {
        let (from, to) = (self.file_owner(from), self.file_owner(to));
        if from == to {
            return;
        }
        if self.is_ancestor(to, from) {
            self.upward.insert((from, to));
        } else {
            self.edges.insert((from, to));
        }
    }

    /// The deepest module `path` walks through, seen from module `from`.
    fn resolve(&self, from: usize, path: &[String]) -> Option<usize> {
        let (mut at, rest) = match path.first().map(String::as_str) {
            Some("crate" | "$crate") => (0, &path[1..]),
            Some("self") => (from, &path[1..]),
            Some("super") => {
                let mut at = from;
                let mut i = 0;
                while path.get(i).map(String::as_str) == Some("super") {
                    at = self.modules[at].parent?;
                    i += 1;
                }
                (at, &path[i..])
            }
            Some(first) if self.modules[from].children.contains_key(first) => (from, path),
            _ => return None,
        };
        for seg in rest {
            match self.modules[at].children.get(seg) {
                Some(&c) => at = c,
                None => break,
            }
        }
        Some(at)
    }

    /// The groups of files that import each other in a loop (Tarjan's strongly connected
    /// components of more than one file), each sorted, by module name.
    pub fn cycles(&self) -> Vec<Vec<String>> {
        let n = self.modules.len();
        let mut adj = vec![Vec::new(); n];
        for &(a, b) in &self.edges {
            adj[a].push(b);
        }
        let mut t = Tarjan {
            adj: &adj,
            index: vec![None; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            next: 0,
            groups: Vec::new(),
        };
        for v in 0..n {
            if t.index[v].is_none() {
                t.visit(v);
            }
        }
        let mut out: Vec<Vec<String>> = t
            .groups
            .into_iter()
            .filter(|g| g.len() > 1)
            .map(|g| {
                let mut names: Vec<String> = g.iter().map(|&m| self.modules[m].name()).collect();
                names.sort();
                names
            })
            .collect();
        out.sort();
        out
    }

    /// Every import running back up (to an ancestor module) as `(from, to)` module names, but
    /// those of test modules (`mod tests`: `use super::*` is how they reach what they test).
    pub fn upward_arrows(&self) -> Vec<(String, String)> {
        self.upward
            .iter()
            .filter(|&&(a, _)| self.modules[a].path.last().map(String::as_str) != Some("tests"))
            .map(|&(a, b)| (self.modules[a].name(), self.modules[b].name()))
            .collect()
    }

    /// Every arrow as `(from, to)` module names.
    pub fn arrows(&self) -> Vec<(String, String)> {
        self.edges
            .iter()
            .map(|&(a, b)| (self.modules[a].name(), self.modules[b].name()))
            .collect()
    }
}

struct Tarjan<'a> {
    adj: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    groups: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.adj[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(i) if self.on_stack[w] => self.low[v] = self.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut group = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            self.groups.push(group);
        }
    }
}

/// Where the files of the modules that `file` declares are: beside it for a crate root or a
/// `mod.rs`, else in the folder named after it.
fn child_dir(file: &Path, root: bool) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new("")).to_path_buf();
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if root || stem == "mod" {
        parent
    } else {
        parent.join(stem)
    }
}

/// `text` with comments replaced by spaces and the contents of string and character literals
/// emptied (newlines kept, so that positions stay on their lines).
pub fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        match c[i] {
            '/' if at(i + 1) == '/' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if c[i] == '\n' {
                            out.push('\n');
                        }
                        i += 1;
                    }
                }
                out.push(' ');
            }
            'r' if (at(i + 1) == '"' || at(i + 1) == '#') && !ident_char(prev(&c, i)) => {
                // A raw string: r"..." or r#"..."#.
                let mut j = i + 1;
                let mut hashes = 0;
                while at(j) == '#' {
                    hashes += 1;
                    j += 1;
                }
                if at(j) != '"' {
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                j += 1;
                loop {
                    if j >= c.len() {
                        break;
                    }
                    if c[j] == '"' && (1..=hashes).all(|h| at(j + h) == '#') {
                        j += 1 + hashes;
                        break;
                    }
                    if c[j] == '\n' {
                        out.push('\n');
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j;
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    if at(i) == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' => {
                // A character literal ('x', '\n', '\u{1F600}'), else a lifetime or a label.
                if at(i + 1) == '\\' {
                    let mut j = i + 2;
                    while j < c.len() && c[j] != '\'' {
                        j += 1;
                    }
                    i = j + 1;
                    out.push_str("' '");
                } else if at(i + 2) == '\'' {
                    i += 3;
                    out.push_str("' '");
                } else {
                    out.push('\'');
                    i += 1;
                }
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

fn prev(c: &[char], i: usize) -> char {
    if i == 0 { '\0' } else { c[i - 1] }
}

fn ident_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// The stripped `text` without the items under a `#[cfg(...)]` naming `test` (a `mod tests {
/// ... }` block, a `mod tests;` declaration, a test-only `use` or function), which are test
/// code.
fn without_tests(text: &str) -> String {
    cut_tests(text, true)
}

/// `text` (a Rust file) without its comments, strings and `#[cfg(test)]` items: the code that
/// ships.
pub fn product_code(text: &str) -> String {
    cut_tests(&strip(text), false)
}

/// The lines of `text` (a Rust file) outside its `#[cfg(test)]` items: its code, comments
/// included, its inline tests aside.
pub fn code_lines(text: &str) -> usize {
    let stripped = strip(text);
    let code = cut_tests(&stripped, false);
    code.lines().count()
}

/// `text` without its `#[cfg(test)]` items; `keep_lines`: their newlines stay (positions stay
/// on their lines).
fn cut_tests(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(") {
        let attr_end = match matching(rest, at + "#[cfg".len(), '(', ')') {
            Some(e) => e,
            None => break,
        };
        let cond = &rest[at..attr_end];
        let is_test = words(cond).any(|w| w == "test");
        out.push_str(&rest[..at]);
        if !is_test {
            out.push_str(&rest[at..attr_end]);
            rest = &rest[attr_end..];
            continue;
        }
        // Skip the item: up to its `;` or its balanced `{ ... }`, whichever comes first.
        let item = &rest[attr_end..];
        let semi = item.find(';');
        let brace = item.find('{');
        let end = match (semi, brace) {
            (Some(s), Some(b)) if s < b => s + 1,
            (_, Some(b)) => matching(item, b, '{', '}').unwrap_or(item.len()),
            (Some(s), None) => s + 1,
            (None, None) => item.len(),
        };
        if keep_lines {
            out.extend(item[..end].chars().filter(|&c| c == '\n'));
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The index just past the `close` matching the `open` at or after `from`.
fn matching(text: &str, from: usize, open: char, close: char) -> Option<usize> {
    let start = from + text[from..].find(open)?;
    let mut depth = 0usize;
    for (i, ch) in text[start..].char_indices() {
        if ch == open {
            depth += 1;
        } else if ch == close {
            depth -= 1;
            if depth == 0 {
                return Some(start + i + ch.len_utf8());
            }
        }
    }
    None
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !ident_char(c))
        .filter(|w| !w.is_empty())
}

/// A `mod name;` declaration, with its `#[path = "..."]`, if any.
struct Declaration {
    name: String,
    path_attr: Option<String>,
}

/// The `mod name;` declarations of a stripped text (strings emptied: the `#[path]` value is
/// read from the same line of the `raw` text, which has as many lines).
fn declarations(text: &str, raw: &str) -> Vec<Declaration> {
    let mut out = Vec::new();
    let mut path_attr: Option<String> = None;
    let mut raw_lines = raw.lines();
    for line in text.lines() {
        let raw_line = raw_lines.next().unwrap_or_default();
        let l = line.trim();
        if l.starts_with("#[path") {
            path_attr = raw_line.split('"').nth(1).map(str::to_string);
            continue;
        }
        let decl = l
            .strip_prefix("pub ")
            .or_else(|| l.strip_prefix("pub(crate) "))
            .or_else(|| l.strip_prefix("pub(super) "))
            .unwrap_or(l);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
            out.push(Declaration {
                name: name.trim().to_string(),
                path_attr: path_attr.take(),
            });
        } else if !l.starts_with("#[") && !l.is_empty() {
            path_attr = None;
        }
    }
    out
}

/// The names of the inline modules (`mod name { ... }`) of a stripped text.
fn inline_modules(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let l = line.trim();
            let l = l
                .strip_prefix("pub ")
                .or_else(|| l.strip_prefix("pub(crate) "))
                .unwrap_or(l);
            let name = l.strip_prefix("mod ")?.strip_suffix('{')?.trim();
            name.chars().all(ident_char).then(|| name.to_string())
        })
        .collect()
}

/// Every path of a stripped text: the paths of its `use` trees, expanded, and every other
/// `a::b::c` sequence of identifiers.
pub fn paths(text: &str) -> Vec<Vec<String>> {
    let tokens = tokenize(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "use" {
            let end = tokens[i..]
                .iter()
                .position(|t| t == ";")
                .map_or(tokens.len(), |p| i + p);
            let mut pos = i + 1;
            use_tree(&tokens[..end], &mut pos, &[], &mut out);
            i = end;
            continue;
        }
        if is_ident(&tokens[i]) && tokens.get(i + 1).map(String::as_str) == Some("::") {
            let mut path = vec![tokens[i].clone()];
            let mut j = i + 1;
            while tokens.get(j).map(String::as_str) == Some("::")
                && tokens.get(j + 1).is_some_and(|t| is_ident(t))
            {
                path.push(tokens[j + 1].clone());
                j += 2;
            }
            // Not a segment of a longer path already taken (`x::y::z` from `y`).
            if i < 1 || tokens[i - 1] != "::" {
                out.push(path);
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// Expands the use tree at `tokens[*pos]` under `prefix` into `out`.
fn use_tree(tokens: &[String], pos: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    while *pos < tokens.len() {
        let t = tokens[*pos].as_str();
        match t {
            "{" => {
                *pos += 1;
                loop {
                    use_tree(tokens, pos, &path, out);
                    match tokens.get(*pos).map(String::as_str) {
                        Some(",") => *pos += 1,
                        Some("}") => {
                            *pos += 1;
                            return;
                        }
                        _ => return,
                    }
                    if tokens.get(*pos).map(String::as_str) == Some("}") {
                        *pos += 1;
                        return;
                    }
                }
            }
            "::" => *pos += 1,
            "," | "}" => break,
            "as" => {
                *pos += 2;
                break;
            }
            "*" => {
                *pos += 1;
                break;
            }
            _ => {
                path.push(t.to_string());
                *pos += 1;
            }
        }
    }
    if !path.is_empty() {
        out.push(path);
    }
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && t.chars().skip(1).all(ident_char)
}

/// Identifiers (with a leading `$` kept: `$crate`), `::`, and single other characters.
fn tokenize(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ident_char(ch) || (ch == '$' && c.get(i + 1).is_some_and(|&n| ident_char(n))) {
            let start = i;
            i += 1;
            while i < c.len() && ident_char(c[i]) {
                i += 1;
            }
            out.push(c[start..i].iter().collect());
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".to_string());
            i += 2;
        } else {
            out.push(ch.to_string());
            i += 1;
        }
    }
    out
}

/// The root files of a crate's targets (its lib, its main, its `src/bin/*.rs` and
/// `src/bin/*/main.rs`), as `(target name, root file)`. Tests and benches are left out.
pub fn targets(crate_dir: &Path) -> Vec<(String, PathBuf)> {
    let src = crate_dir.join("src");
    let mut out = Vec::new();
    for (name, file) in [("lib", src.join("lib.rs")), ("main", src.join("main.rs"))] {
        if file.is_file() {
            out.push((name.to_string(), file));
        }
    }
    if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let p = e.path();
                let name = p.file_stem()?.to_str()?.to_string();
                if p.extension().is_some_and(|x| x == "rs") {
                    Some((format!("bin {name}"), p))
                } else if p.join("main.rs").is_file() {
                    Some((format!("bin {name}"), p.join("main.rs")))
                } else {
                    None
                }
            })
            .collect();
        bins.sort();
        out.extend(bins);
    }
    out
}

/// The workspace members named in `Cargo.toml`'s `members = [...]` under `root`.
pub fn members(root: &Path) -> Result<Vec<PathBuf>, Error> {
    let path = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Read {
        path: path.clone(),
        source,
    })?;
    let list = text
        .split_once("members")
        .and_then(|(_, rest)| rest.split_once('['))
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .unwrap_or_default();
    Ok(list
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root.join(m))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_trees_expand() {
        let text = "use crate::{a::B, c::{self, d::E as F}, g::*};\nuse super::super::h;";
        let got = paths(&strip(text));
        let want: Vec<Vec<&str>> = vec![
            vec!["crate", "a", "B"],
            vec!["crate", "c", "self"],
            vec!["crate", "c", "d", "E"],
            vec!["crate", "g"],
            vec!["super", "super", "h"],
        ];
        assert_eq!(
            got,
            want.iter()
                .map(|p| p.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn comments_strings_and_tests_are_not_code() {
        let text = "// crate::a::x\n/* crate::b */ let s = \"crate::c\"; let c = '\"'; \
                    fn f<'a>() {}\n#[cfg(test)]\nmod tests { use crate::d; }\ncrate::e::f();";
        let got = paths(&without_tests(&strip(text)));
        assert_eq!(got, vec![vec!["crate".to_string(), "e".into(), "f".into()]]);
    }

    #[test]
    fn code_lines_leave_inline_tests_out() {
        let text =
            "//! doc\nfn a() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
        // The doc, `fn a`, the blank line and the attribute's line (cut from `#[cfg(`).
        assert_eq!(code_lines(text), 4);
        assert_eq!(code_lines("fn a() {}\n#[cfg(test)]\nmod tests;\n"), 2);
    }

    #[test]
    fn imports_back_up_are_arrows_of_their_own() {
        let dir = std::env::temp_dir().join(format!("xtask-up-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("a")).expect("dir");
        let w = |p: &str, t: &str| std::fs::write(dir.join(p), t).expect("write");
        w("lib.rs", "pub mod a;\npub mod b;\npub struct Root;\n");
        w("a/mod.rs", "pub mod c;\nuse crate::b::B;\n");
        w(
            "a/c.rs",
            "use super::X;\nuse crate::Root;\n#[cfg(test)]\nmod tests;\n",
        );
        w("a/tests.rs", "use super::*;\n");
        w("b.rs", "pub struct B;\n");
        let c = Crate::read(&dir.join("lib.rs")).expect("read");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            c.upward_arrows(),
            vec![
                ("crate::a::c".to_string(), "crate".to_string()),
                ("crate::a::c".to_string(), "crate::a".to_string()),
            ]
        );
        assert_eq!(
            c.arrows(),
            vec![("crate::a".to_string(), "crate::b".to_string())]
        );
    }
}
