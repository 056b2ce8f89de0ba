//! Parsing a large block-YAML list on several threads: the text is cut between the entries of
//! its `items:` sequence, each part is parsed by the YAML crate on its own thread, and the
//! entries are put back in order into the list read from the rest of the text.
//!
//! The cut is made only where it cannot change what the text means: the document is one
//! mapping with an `items:` key at column 0 whose value is a block sequence at column 0 (what
//! `oc get -o yaml` and must-gathers write). In valid YAML a line starting with `- ` at column 0
//! inside that sequence can only start an entry (an entry's content, block scalars and
//! continuation lines included, is indented). A document marker (`---`, `...`) or a directive
//! (`%`) anywhere but on the first line, a second `items:` key, or anything else that does not
//! fit gives up: the caller then parses the text in one piece. So does any error in a part
//! (e.g. an alias to an anchor of another part), so that errors are always those of the whole
//! text. The parts are read by the event reader (`events.rs`), which refuses anchors.

use super::events::documents;
use crate::wire::{Input, Top};

/// The smallest text worth cutting (below it, threads cost more than they save).
pub const MIN_BYTES: usize = 4 * 1024 * 1024;

/// A text cut at its items: the text without them (`items:` left empty, i.e. `null`), and the
/// parts holding the entries, in order.
#[derive(Debug, PartialEq, Eq)]
pub struct Cut<'a> {
    pub outer: String,
    pub parts: Vec<&'a str>,
}

/// Whether a line (without its line break) starts an entry of a sequence at column 0.
fn is_entry(line: &str) -> bool {
    line.starts_with("- ") || line.starts_with("-\t") || line.trim_end() == "-"
}

/// A document marker or a directive.
fn is_marker(line: &str) -> bool {
    line.starts_with("---") || line.starts_with("...") || line.starts_with('%')
}

/// Cuts `text` into at most `parts` parts of about the same size, between entries of its
/// `items:` sequence; `None` when the text does not have the shape described above.
pub fn cut(text: &str, parts: usize) -> Option<Cut<'_>> {
    #[derive(PartialEq)]
    enum State {
        Header,
        BeforeFirst,
        Items,
        Trailer,
    }
    let mut state = State::Header;
    let (mut items_end, mut region_end) = (0, text.len());
    let mut entries = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        // Most lines are an entry's indented content: nothing to look at.
        if state == State::Items && line.starts_with(' ') {
            continue;
        }
        let content = line.trim_end_matches(['\n', '\r']);
        let blank = content.trim().is_empty() || content.starts_with('#');
        if is_marker(content) && start > 0 {
            return None;
        }
        match state {
            State::Header => {
                if content.trim_end() == "items:" {
                    items_end = pos;
                    state = State::BeforeFirst;
                }
            }
            State::BeforeFirst if blank => {}
            State::BeforeFirst if is_entry(content) => {
                entries.push(start);
                state = State::Items;
            }
            State::BeforeFirst => return None,
            State::Items if is_entry(content) => entries.push(start),
            State::Items if blank || content.starts_with(' ') => {}
            State::Items => {
                if content.starts_with('\t') || content.starts_with("items:") {
                    return None;
                }
                region_end = start;
                state = State::Trailer;
            }
            State::Trailer => {
                if content.starts_with("items:") {
                    return None;
                }
            }
        }
    }
    if entries.len() < 2 || parts < 2 {
        return None;
    }
    let first = entries.first().copied()?;
    let size = region_end - first;
    let mut bounds = vec![first];
    for i in 1..parts {
        let target = first + size * i / parts;
        // The first entry at or after the target, if it makes a non-empty part.
        let at = entries.partition_point(|&e| e < target);
        if let Some(&e) = entries.get(at)
            && bounds.last().is_some_and(|&b| e > b)
        {
            bounds.push(e);
        }
    }
    bounds.push(region_end);
    let parts = bounds
        .windows(2)
        .filter_map(|w| text.get(w[0]..w[1]))
        .collect();
    let mut outer = String::with_capacity(items_end + text.len() - region_end);
    outer.push_str(text.get(..items_end)?);
    if !outer.ends_with('\n') {
        outer.push('\n');
    }
    outer.push_str(text.get(region_end..)?);
    Some(Cut { outer, parts })
}

/// The documents of `text` parsed in `parts` parts on as many threads, or `None` when it cannot
/// be cut or a part does not parse (the caller then parses it in one piece).
pub fn parse<I: Input>(text: &str, parts: usize) -> Option<Vec<Top<I>>> {
    let cut = cut(text, parts)?;
    let parse_part = |part: &str| {
        let mut docs = documents::<Vec<Top<I>>>(part).ok()?;
        match (docs.pop(), docs.pop()) {
            (Some(items), None) => Some(items),
            _ => None,
        }
    };
    let mut outer = documents::<Top<I>>(&cut.outer).ok()?;
    let (Some(Top::Object(mut list)), None) = (outer.pop(), outer.pop()) else {
        return None;
    };
    if !matches!(list.items, Some(None)) {
        return None;
    }
    let (first, rest) = cut.parts.split_first()?;
    let results: Vec<Option<Vec<Top<I>>>> = std::thread::scope(|s| {
        // A part whose thread cannot be started is parsed here, after the first.
        let handles: Vec<_> = rest
            .iter()
            .map(|part| {
                std::thread::Builder::new()
                    .spawn_scoped(s, move || parse_part(part))
                    .map_err(|_| *part)
            })
            .collect();
        let mut results = vec![parse_part(first)];
        results.extend(handles.into_iter().map(|h| match h {
            Ok(h) => h.join().ok().flatten(),
            Err(part) => parse_part(part),
        }));
        results
    });
    let mut items = Vec::with_capacity(results.iter().flatten().map(Vec::len).sum());
    for part in results {
        items.extend(part?);
    }
    list.items = Some(Some(items));
    Some(vec![Top::Object(list)])
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: a}\n  status:\n    conditions:\n    - type: Ready\n      status: \"True\"\n- metadata:\n    name: b\n# a comment\n\n- metadata: {name: c}\nmetadata:\n  resourceVersion: \"\"\n";

    #[test]
    fn cuts_between_entries_and_keeps_the_rest() {
        let cut = cut(LIST, 2).expect("cut");
        assert_eq!(
            cut.outer,
            "apiVersion: v1\nkind: List\nitems:\nmetadata:\n  resourceVersion: \"\"\n"
        );
        assert_eq!(
            cut.parts.concat(),
            LIST[LIST.find("- metadata").unwrap_or(0)
                ..LIST.find("metadata:\n  resourceVersion").unwrap_or(0)]
        );
        assert_eq!(cut.parts.len(), 2);
        assert!(
            cut.parts.iter().all(|p| p.starts_with("- ")),
            "{:?}",
            cut.parts
        );
        // As many parts as entries at most.
        assert_eq!(super::cut(LIST, 8).map(|c| c.parts.len()), Some(3));
    }

    #[test]
    fn gives_up_on_texts_it_cannot_cut_safely() {
        for text in [
            // Another document, a directive.
            "kind: List\nitems:\n- a: 1\n- a: 2\n---\nkind: List\n",
            "%YAML 1.2\n---\nkind: List\nitems:\n- a: 1\n- a: 2\n",
            // Items indented, in flow style, or not a sequence.
            "kind: List\nitems:\n  - a: 1\n  - a: 2\n",
            "kind: List\nitems: [{a: 1}, {a: 2}]\n",
            "kind: List\nitems:\n  a: 1\n",
            // A second items key, a tab at column 0, a single entry, no items.
            "items:\n- a: 1\n- a: 2\nitems:\n- a: 3\n",
            "items:\n- a: 1\n\t- a: 2\n",
            "items:\n- a: 1\n",
            "kind: Node\nmetadata: {name: a}\n",
        ] {
            assert_eq!(cut(text, 2), None, "{text}");
        }
        // A leading document marker is fine.
        assert!(cut("---\nitems:\n- a: 1\n- a: 2\n", 2).is_some());
    }

    #[test]
    fn parses_like_the_whole_text() {
        use update_status_api::input::Node;
        let root = std::env::temp_dir().join(format!("us-split-mg-{}", std::process::id()));
        let csr = update_status_testdata::must_gather::write(&root, 30).expect("write");
        let text = std::fs::read_to_string(csr.join("core/nodes/generated.yaml")).expect("read");
        std::fs::remove_dir_all(&root).ok();
        let names = |tops: Vec<Top<Node>>| -> Vec<Node> {
            let mut flat = Vec::new();
            tops.into_iter()
                .for_each(|t| crate::wire::flatten(t, &mut flat));
            flat.into_iter()
                .map(crate::wire::Flat::into_input)
                .collect()
        };
        let whole = serde_saphyr::from_multiple_with_options::<Top<Node>>(
            &text,
            crate::parse::yaml_options(text.len()),
        )
        .expect("whole");
        let whole = names(whole);
        assert_eq!(whole.len(), 30);
        for parts in [2, 3, 7] {
            let split = parse::<Node>(&text, parts).expect("split");
            assert_eq!(names(split), whole, "{parts} parts");
        }
        // An alias to an anchor of another part: the cut gives up.
        let aliased = "items:\n- metadata: &m {name: a}\n- metadata: *m\n";
        assert!(parse::<Node>(aliased, 2).is_none());
        // A part that does not parse: gives up.
        assert!(parse::<Node>("items:\n- metadata: {name: a}\n- metadata: [\n", 2).is_none());
    }
}
