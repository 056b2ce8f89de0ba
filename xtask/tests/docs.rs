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
