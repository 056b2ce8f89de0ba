//! The docs cite no path that does not exist: every repository path a Markdown file names (in
//! backticks, `config/acm/addon.yaml`, or as a relative link, `[x](../e2e/README.md)`) is a
//! file or folder of the checkout. A moved file leaves no stale pointer behind.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The top folders of the checkout a cited path may start with (other words with a slash, such
/// as `openshift-monitoring/prometheus-k8s` or `update.openshift.io/pool`, are not paths).
fn top_entries(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .expect("the checkout")
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n != "target" && n != ".git" && n != ".cache")
        .collect();
    names.sort();
    names
}

/// The files a path relative to a crate is recognised by.
const SOURCE_EXTENSIONS: &[&str] = &[".rs", ".js", ".css", ".html"];

/// `a/{b,c}.rs` → `a/b.rs`, `a/c.rs` (one brace group, as the docs write them).
fn expand(path: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (path.find('{'), path.find('}')) else {
        return vec![path.to_string()];
    };
    if close < open {
        return vec![path.to_string()];
    }
    path[open + 1..close]
        .split(',')
        .map(|alt| format!("{}{}{}", &path[..open], alt.trim(), &path[close + 1..]))
        .collect()
}

/// `dir` and every folder under it.
fn folders(dir: &Path, out: &mut Vec<PathBuf>) {
    out.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        if e.path().is_dir() {
            folders(&e.path(), out);
        }
    }
}

/// The Markdown files of the checkout outside `target/`, `.cache/` and the vendored test data.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if p.is_dir() {
            if !matches!(
                name.as_ref(),
                "target" | ".git" | ".cache" | "testdata" | "node_modules"
            ) {
                markdown_files(&p, out);
            }
        } else if name.ends_with(".md") {
            out.push(p);
        }
    }
}

/// The candidate paths a Markdown text cites: backtick spans and link targets, each with the
/// folder it is relative to (`None`: the checkout's root).
fn cited(text: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    for (i, span) in text.split('`').enumerate() {
        if i % 2 == 1 {
            found.push((span.to_string(), false));
        }
    }
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = &rest[..end];
            let target = target.split('#').next().unwrap_or_default();
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                found.push((target.to_string(), true));
            }
        }
    }
    found
}

#[test]
fn the_docs_cite_no_path_that_does_not_exist() {
    let root = root();
    let tops = top_entries(&root);
    let mut docs = Vec::new();
    markdown_files(&root, &mut docs);
    docs.sort();
    assert!(docs.len() >= 8, "Markdown files found: {docs:?}");
    let crates: Vec<PathBuf> = tops
        .iter()
        .map(|t| root.join(t))
        .filter(|d| d.join("Cargo.toml").is_file() && d.join("src").is_dir())
        .collect();
    // Every folder of every crate: a file may be named relative to its layer's folder, as the
    // architecture's tables do (`alerts/prometheus.rs` in the row of `reconcilers/`).
    let mut source_dirs = vec![];
    for c in &crates {
        source_dirs.push(c.clone());
        folders(&c.join("src"), &mut source_dirs);
    }
    let mut checked = 0;
    let mut dead = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).expect("a Markdown file");
        let dir = doc.parent().unwrap_or(&root);
        for (raw, is_link) in cited(&text) {
            let raw = raw.trim();
            // A path, not a command, a URL, a placeholder or a glob; a `file:line` cites the file.
            if raw.is_empty()
                || raw.contains(char::is_whitespace)
                || raw.contains("://")
                || raw.contains(['<', '>', '*', '$', '=', '~'])
                || raw.starts_with('/')
                || raw.starts_with('-')
            {
                continue;
            }
            let raw = match raw.rsplit_once(':') {
                Some((file, line)) if line.chars().all(|c| c.is_ascii_digit()) => file,
                _ => raw,
            };
            // Where the path may be: the doc's folder for a link; the checkout's root for a
            // path starting with one of its top folders; else, for a source file named within
            // its crate or layer (`cache/watch.rs`, `alerts/prometheus.rs`), any folder of a
            // crate.
            let bases: Vec<PathBuf> = if is_link {
                vec![dir.to_path_buf()]
            } else {
                let first = raw.split('/').next().unwrap_or_default();
                if !raw.contains('/') {
                    continue;
                } else if tops.iter().any(|t| t == first) {
                    vec![root.clone()]
                } else if SOURCE_EXTENSIONS.iter().any(|e| raw.ends_with(e)) {
                    source_dirs.clone()
                } else {
                    continue;
                }
            };
            for path in expand(raw) {
                checked += 1;
                if !bases.iter().any(|b| b.join(&path).exists()) {
                    let shown = doc.strip_prefix(&root).unwrap_or(doc);
                    dead.push(format!("{}: {path}", shown.display()));
                }
            }
        }
    }
    assert!(
        checked >= 100,
        "only {checked} paths cited: the scan is broken"
    );
    assert!(
        dead.is_empty(),
        "paths cited by the docs that do not exist:\n{}",
        dead.join("\n")
    );
}

/// The `.rs` files under `dir`, as paths relative to `dir`.
fn rust_files(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir.join(rel)) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let r = rel.join(e.file_name());
        if e.path().is_dir() {
            rust_files(dir, &r, out);
        } else if r.extension().is_some_and(|x| x == "rs") {
            out.push(r);
        }
    }
}

/// Issue #50 item 5: every source file of the controller's layers and of the plugin is in
/// docs/architecture.md's maps, named in backticks by its name or its path within its layer
/// (`writer/compare.rs`, `{model,read}.rs` groups included). A `mod.rs` is its folder's, a
/// `tests.rs` or `proptests.rs` its parent file's tests.
#[test]
fn every_file_of_the_controller_and_the_plugin_is_in_the_architecture_map() {
    let root = root();
    let map = std::fs::read_to_string(root.join("docs/architecture.md")).expect("the map");
    let named: Vec<String> = cited(&map)
        .into_iter()
        .filter(|(_, link)| !link)
        .flat_map(|(span, _)| expand(span.trim()))
        .collect();
    let mut missing = Vec::new();
    let mut checked = 0;
    for src in ["controllers/src", "cli/src"] {
        let mut files = Vec::new();
        rust_files(&root.join(src), Path::new(""), &mut files);
        for f in files {
            // A folder's `mod.rs` is the folder's; `tests.rs`/`proptests.rs` are a file's tests.
            if f.file_name()
                .is_some_and(|n| n == "mod.rs" || n == "tests.rs" || n == "proptests.rs")
            {
                continue;
            }
            checked += 1;
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
            let path = f.to_string_lossy().into_owned();
            let found = named.iter().any(|n| {
                Some(n.as_str()) == name.as_deref()
                    || *n == path
                    || path.ends_with(&format!("/{n}"))
                    || n.ends_with(&format!("/{path}"))
            });
            if !found {
                missing.push(format!("{src}/{path}"));
            }
        }
    }
    assert!(checked >= 100, "only {checked} files: the scan is broken");
    assert!(
        missing.is_empty(),
        "files docs/architecture.md does not name (add each to its layer's row or map):\n{}",
        missing.join("\n")
    );
}

/// The targets the Makefile defines (`name:` at a line's start, `.PHONY` excluded).
fn make_targets(root: &Path) -> Vec<String> {
    let makefile = std::fs::read_to_string(root.join("Makefile")).expect("the Makefile");
    makefile
        .lines()
        .filter_map(|l| l.split_once(':').map(|(t, _)| t))
        .filter(|t| !t.starts_with(['.', '\t', '#', ' ']) && !t.contains(['=', '$', ' ']))
        .map(str::to_owned)
        .collect()
}

/// Issue #50 item 5: every `make X` the docs cite is a target of the Makefile (`make test-e2e`
/// once was cited and never existed).
#[test]
fn every_make_target_the_docs_cite_exists() {
    let root = root();
    let targets = make_targets(&root);
    assert!(targets.len() >= 20, "targets found: {targets:?}");
    let mut docs = Vec::new();
    markdown_files(&root, &mut docs);
    let mut cited_targets = 0;
    let mut unknown = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).expect("a Markdown file");
        for (at, _) in text.match_indices("make ") {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_') {
                continue;
            }
            let word: String = text[at + 5..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            // Prose ("make it", "make sure") is lower-case words the Makefile does not define
            // and that are no target's shape: only words cited right after `make` in code.
            let in_code = text[..at].ends_with('`') || text[..at].ends_with('\n') || {
                let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
                text[line_start..at].trim().is_empty()
                    || text[line_start..at].matches('`').count() % 2 == 1
            };
            if word.is_empty() || !in_code {
                continue;
            }
            cited_targets += 1;
            if !targets.contains(&word) {
                let shown = doc.strip_prefix(&root).unwrap_or(doc);
                unknown.push(format!("{}: make {word}", shown.display()));
            }
        }
    }
    assert!(
        cited_targets >= 30,
        "only {cited_targets} make commands cited"
    );
    unknown.sort();
    unknown.dedup();
    assert!(
        unknown.is_empty(),
        "make targets the docs cite that the Makefile does not define:\n{}",
        unknown.join("\n")
    );
}
