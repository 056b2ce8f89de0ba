//! The reader's fast path: a file is parsed by the parser of its syntax (`serde_json` when its
//! first non-space byte is `{` or `[`, the YAML crate otherwise) straight into the few fields
//! the assessment reads, without building a `serde_json::Value` tree first. Everything else of
//! an object (a Node's `managedFields`, `images`, `nodeInfo`, a MachineConfig's ignition
//! config...) is skipped by the parser as it goes (`serde::de::IgnoredAny`).
//!
//! The fast path gives up (`None`) on anything it does not read exactly like the general path
//! (see [`super::read_objects`]): a syntax error, a field of the wrong type, a kind other than
//! the one expected, a key given twice, a scalar where an object is expected... The caller then
//! reads the file again through the general path, which gives the same objects or the same error
//! as before the fast path existed. So errors keep their exact text, and a file the fast path
//! reads gives the objects the general path gives (the tests compare both on every fixture).
//!
//! One difference is deliberate: the metadata of a Node keeps only `name`, `namespace`, `uid`,
//! `resourceVersion`, `generation`, `labels` and `annotations` (what the assessment and the
//! controller read), and the fields it skips are not checked, so a Node whose `managedFields`
//! or `creationTimestamp` is malformed is read instead of failing the whole file.

use crate::wire::{Flat, Input, Top, flatten};

/// The objects of `text` read by the fast path, or `None` when it cannot tell (the caller then
/// uses the general path).
pub fn read<I: Input>(text: &str) -> Option<Vec<I>> {
    let tops: Vec<Top<I>> = if is_json(text) {
        serde_json::Deserializer::from_str(text)
            .into_iter::<Top<I>>()
            .collect::<Result<_, _>>()
            .ok()?
    } else {
        parse_yaml(text)?
    };
    objects(tops)
}

/// [`read`] on a JSON text parsed as it is read from `reader` (the bytes checked as
/// [`super::file::read_text`] checks them), so that the text is never held whole: `None` when
/// the text does not start as JSON (after ASCII white space only: `serde_json` skips no
/// other), or when [`read`] would not read it or [`super::file::read_text`] would refuse it.
pub fn read_json<I: Input, R: std::io::Read>(reader: R) -> Option<Vec<I>> {
    use std::io::BufRead as _;
    let mut reader =
        std::io::BufReader::with_capacity(64 * 1024, super::file::Checked::new(reader));
    loop {
        let buf = reader.fill_buf().ok()?;
        let spaces = buf
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .count();
        match buf.get(spaces) {
            Some(b'{' | b'[') => break,
            Some(_) => return None,
            // Only white space so far (or an empty text: not JSON).
            None if buf.is_empty() => return None,
            None => reader.consume(spaces),
        }
    }
    let tops: Vec<Top<I>> = serde_json::Deserializer::from_reader(reader)
        .into_iter::<Top<I>>()
        .collect::<Result<_, _>>()
        .ok()?;
    objects(tops)
}

/// The input objects of the documents read, or `None` when one is of another kind.
fn objects<I: Input>(tops: Vec<Top<I>>) -> Option<Vec<I>> {
    let mut flat = Vec::new();
    tops.into_iter().for_each(|t| flatten(t, &mut flat));
    let expected = I::kind(&());
    if flat
        .iter()
        .any(|f| f.kind.as_deref().is_some_and(|k| k != expected))
    {
        return None;
    }
    Some(flat.into_iter().map(Flat::into_input).collect())
}

/// The documents of a YAML text: cut and parsed on several threads when it is large, else
/// parsed straight from the YAML crate's events; `None` when the event reader refuses it.
fn parse_yaml<I: Input>(text: &str) -> Option<Vec<Top<I>>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if text.len() >= super::split::MIN_BYTES
        && threads > 1
        && let Some(tops) = super::split::parse::<I>(text, threads)
    {
        return Some(tops);
    }
    // Not `serde-saphyr` into the projected types when the event reader refuses: it reads a
    // plain `false` where a string is expected as `"false"`, where the general path fails.
    super::events::documents::<Top<I>>(text).ok()
}

/// Whether the text is JSON: its first non-space byte opens an object or an array.
fn is_json(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

#[cfg(test)]
mod tests {
    use std::fmt::Debug;
    use std::path::{Path, PathBuf};

    use update_status_api::input::{
        ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool, Node,
    };

    use super::*;
    use crate::SnapshotError;
    use crate::parse::{objects_of, read_typed, values_of};
    use crate::wire::projected;

    /// What the general path reads of `text`, or its error.
    fn general<T: Input>(text: &str) -> Result<Vec<T>, SnapshotError> {
        let path = Path::new("f.yaml");
        objects_of(path, values_of(path, text)?)
    }

    /// Both paths read `text` alike: the same objects (Nodes: with the metadata the fast path
    /// keeps), or the fast path gives up. Returns whether the fast path read it.
    fn agree<T: Input + PartialEq + Debug>(text: &str, fix: fn(T) -> T) -> bool {
        streams_alike::<T>(text);
        let fast = read::<T>(text);
        match (fast, general::<T>(text)) {
            (Some(fast), Ok(slow)) => {
                let fast: Vec<T> = fast.into_iter().map(fix).collect();
                let slow: Vec<T> = slow.into_iter().map(fix).collect();
                assert_eq!(fast, slow, "{text}");
                true
            }
            (Some(fast), Err(e)) => panic!(
                "fast path read {} objects, general: {e}\n{text}",
                fast.len()
            ),
            (None, _) => false,
        }
    }

    /// A reader giving at most `chunk` bytes a call (characters cut between calls).
    struct Trickle<'a>(&'a [u8], usize);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            let (head, tail) = self.0.split_at(n);
            buf[..n].copy_from_slice(head);
            self.0 = tail;
            Ok(n)
        }
    }

    /// The streaming JSON reader reads `text` as [`read`] does when it starts as JSON (fed 1,
    /// 3 or 4096 bytes at a time), and gives up on anything else.
    fn streams_alike<T: Input + PartialEq + Debug>(text: &str) {
        let json = matches!(
            text.trim_start_matches([' ', '\t', '\n', '\r'])
                .as_bytes()
                .first(),
            Some(b'{' | b'[')
        );
        for chunk in [1, 3, 4096] {
            let streamed = read_json::<T, _>(Trickle(text.as_bytes(), chunk));
            if json {
                assert_eq!(streamed, read::<T>(text), "{chunk}: {text}");
            } else {
                assert!(streamed.is_none(), "{chunk}: {text}");
            }
        }
    }

    #[test]
    fn the_stream_reader_passes_utf8_and_refuses_anything_else() {
        use std::io::Read as _;
        let text = "{\"name\": \"né ✓ 𝄞 \u{7f}\"}\n".repeat(50);
        for chunk in 1..=7 {
            let mut out = String::new();
            crate::file::Checked::new(Trickle(text.as_bytes(), chunk))
                .read_to_string(&mut out)
                .expect("UTF-8 passes");
            assert_eq!(out, text);
        }
        // An empty read in the middle of a cut character is not the end of the text.
        let mut checked = crate::file::Checked::new(Trickle("✓".as_bytes(), 1));
        let mut one = [0u8; 1];
        assert_eq!(checked.read(&mut one).expect("first byte"), 1);
        assert_eq!(checked.read(&mut []).expect("nothing asked"), 0);
        let mut rest = Vec::new();
        checked.read_to_end(&mut rest).expect("the rest");
        assert_eq!(rest, "✓".as_bytes()[1..]);
        let bad: [&[u8]; 6] = [
            b"{\"a\": \"\xff\"}",
            b"{\"a\": \"\xc0\x80\"}",
            b"{\"a\": \"\xed\xa0\x80\"}",
            b"{\"a\": \"\xe2\x9c\"}",
            b"{\"a\": \"x\"}\xe2\x9c",
            b"{\"a\": \"x\"}\xf0",
        ];
        for bytes in bad {
            for chunk in 1..=7 {
                let mut out = Vec::new();
                let got = crate::file::Checked::new(Trickle(bytes, chunk)).read_to_end(&mut out);
                assert!(got.is_err(), "{chunk}: {bytes:?}");
                assert_eq!(read_json::<Node, _>(Trickle(bytes, chunk)), None);
            }
        }
    }

    #[test]
    fn a_large_json_file_is_read_as_it_streams_with_the_same_objects_and_errors() {
        let dir = std::env::temp_dir().join(format!("us-fast-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let values = crate::read_values(
            &update_status_testdata::oc_status_case(
                "4.14.1-workers-started-updating-multiple-pools",
            )
            .join("nodes.yaml"),
        )
        .expect("fixture");
        // Enough copies (renamed) to pass the streaming threshold.
        let mut items = Vec::new();
        for i in 0.. {
            for v in &values {
                let mut v = v.clone();
                v["metadata"]["name"] = serde_json::json!(format!("node-{i}-{}", items.len()));
                items.push(v);
            }
            if serde_json::to_string(&items).map_or(0, |s| s.len()) as u64
                > 2 * crate::parse::STREAM_MIN_BYTES
            {
                break;
            }
        }
        let text =
            serde_json::json!({"apiVersion": "v1", "kind": "NodeList", "items": items}).to_string();
        let path = dir.join("nodes.yaml");
        std::fs::write(&path, &text).expect("write");
        let streamed: Vec<Node> = read_typed::<Node>(&path).expect("read");
        let general: Vec<Node> = general::<Node>(&text).expect("general");
        assert_eq!(streamed.len(), items.len());
        assert_eq!(
            streamed.into_iter().map(node).collect::<Vec<_>>(),
            general.into_iter().map(node).collect::<Vec<_>>()
        );
        // A byte that is not UTF-8 in the middle of the text: the error of the whole text read.
        let mut bytes = text.into_bytes();
        let at = bytes.len() / 2
            + bytes[bytes.len() / 2..]
                .iter()
                .position(|&b| b == b'a')
                .expect("an a");
        bytes[at] = 0xff;
        std::fs::write(&path, &bytes).expect("write");
        let err = read_typed::<Node>(&path).expect_err("not UTF-8");
        assert!(
            matches!(err, SnapshotError::NotUtf8 { offset, .. } if offset == at),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    fn node(mut n: Node) -> Node {
        n.metadata = projected(n.metadata);
        n
    }

    fn same<T>(t: T) -> T {
        t
    }

    fn fixture_dirs() -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(update_status_testdata::oc_status_dir())
            .expect("fixtures")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        dirs
    }

    #[test]
    fn every_fixture_file_reads_alike_through_both_paths() {
        let mut read = 0;
        for dir in fixture_dirs() {
            let text = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            for (ok, file) in [
                (
                    agree::<ClusterVersion>(&text("clusterversion.yaml"), same),
                    "clusterversion",
                ),
                (
                    agree::<ClusterOperator>(&text("clusteroperators.yaml"), same),
                    "clusteroperators",
                ),
                (
                    agree::<MachineConfigPool>(&text("machineconfigpools.yaml"), same),
                    "machineconfigpools",
                ),
                (
                    agree::<MachineConfig>(&text("machineconfigs.yaml"), same),
                    "machineconfigs",
                ),
                (agree::<Node>(&text("nodes.yaml"), node), "nodes"),
            ] {
                assert!(ok, "{}/{file}.yaml: the fast path gave up", dir.display());
                read += 1;
            }
        }
        assert!(read >= 40, "{read}");
    }

    #[test]
    fn the_same_fixtures_as_json_read_alike() {
        for dir in fixture_dirs() {
            let json = |f: &str| {
                let values = crate::read_values(&dir.join(f)).unwrap_or_default();
                serde_json::json!({"apiVersion": "v1", "kind": "List", "items": values}).to_string()
            };
            assert!(agree::<ClusterOperator>(
                &json("clusteroperators.yaml"),
                same
            ));
            assert!(agree::<MachineConfigPool>(
                &json("machineconfigpools.yaml"),
                same
            ));
            assert!(agree::<Node>(&json("nodes.yaml"), node));
            // A stream of JSON documents, and a top-level array.
            let values = crate::read_values(&dir.join("nodes.yaml")).unwrap_or_default();
            let stream: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            assert!(agree::<Node>(&stream.join("\n"), node));
            assert!(agree::<Node>(
                &serde_json::Value::Array(values).to_string(),
                node
            ));
        }
    }

    #[test]
    fn a_generated_must_gather_reads_alike() {
        let root = std::env::temp_dir().join(format!("us-fast-mg-{}", std::process::id()));
        let csr = update_status_testdata::must_gather::write(&root, 40).expect("write");
        let text = std::fs::read_to_string(csr.join("core/nodes/generated.yaml")).expect("read");
        std::fs::remove_dir_all(&root).ok();
        assert!(agree::<Node>(&text, node));
        assert_eq!(read::<Node>(&text).map(|n| n.len()), Some(40));
    }

    #[test]
    fn lists_kinds_and_nulls_are_read_like_the_general_path() {
        let cases = [
            // Typed list: items without a kind inherit it; `kind: null` does not.
            r#"{"kind":"NodeList","items":[{"metadata":{"name":"a"}},{"kind":null,"metadata":{"name":"b"}}]}"#,
            "kind: NodeList\nitems:\n- metadata: {name: a}\n- kind: null\n  metadata: {name: b}\n",
            "kind: ClusterOperatorList\nitems:\n- kind: null\n  metadata: {name: a}\n",
            // A list of lists, an item inheriting a kind that is not a list's.
            "kind: List\nitems:\n- kind: NodeList\n  items: [{metadata: {name: a}}]\n- items: [{metadata: {name: b}}]\n",
            "kind: NodeList\nitems:\n- items: [{metadata: {name: a}}]\n  metadata: {name: x}\n",
            // `items: null`, no items, a null document, an array of objects and nulls.
            "kind: List\nitems: null\n",
            "---\n---\nkind: Node\nmetadata: {name: a}\n---\nnull\n",
            "[null, {\"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}}, [{\"metadata\": null}]]",
            // An object with items that is not a list: its items are not objects of the file.
            "kind: Node\nmetadata: {name: a}\nitems: [{metadata: {name: b}}]\n",
            // Nulls where objects are expected.
            "kind: Node\nmetadata: null\nspec: null\nstatus: {conditions: null}\n",
            // Unschedulable as a string, an odd timestamp, unknown fields.
            "kind: Node\nspec: {unschedulable: \"true\"}\nstatus: {conditions: [{type: Ready, lastTransitionTime: x}]}\nextra: [1, 2]\n",
        ];
        for text in cases {
            assert!(agree::<Node>(text, node), "gave up: {text}");
        }
    }

    #[test]
    fn it_gives_up_where_the_general_path_fails_or_differs() {
        let cases = [
            // Wrong kinds, in an item or the object.
            "kind: ClusterOperatorList\nitems: [{metadata: {name: a}}]\n",
            "kind: 7\nmetadata: {name: a}\n",
            // Wrong types.
            "kind: Node\nmetadata: {name: bad}\nstatus: {conditions: 7}\n",
            "kind: Node\nmetadata: {name: [1]}\n",
            "kind: NodeList\nitems: 7\n",
            "7\n",
            "\"a string\"",
            // Syntax.
            "kind: Node\nmetadata: {name: a\n",
            "{\"kind\": \"Node\"",
            "{\"kind\": \"Node\"} trailing",
            // A key given twice (the general path keeps the last one).
            "{\"kind\": \"Node\", \"metadata\": {\"name\": \"a\", \"name\": \"b\"}}",
        ];
        for text in cases {
            assert!(read::<Node>(text).is_none(), "read: {text}");
            agree::<Node>(text, node);
        }
    }

    #[test]
    fn the_bad_inputs_fail_with_the_general_paths_error() {
        let dir = update_status_testdata::oc_status_dir().join("../bad-inputs");
        let mut seen = 0;
        for case in [
            "invalid-field-type",
            "wrong-kind",
            "escape-in-error",
            "alias-bomb",
        ] {
            let path = dir.join(case).join("nodes.yaml");
            let fast = read_typed::<Node>(&path).expect_err("fails").to_string();
            let general = crate::read_objects::<Node>(&path)
                .expect_err("fails")
                .to_string();
            assert_eq!(fast, general);
            seen += 1;
        }
        let path = dir.join("malformed-yaml/clusterversion.yaml");
        let fast = read_typed::<ClusterVersion>(&path)
            .expect_err("fails")
            .to_string();
        assert!(
            fast.contains("clusterversion.yaml is not valid YAML or JSON"),
            "{fast}"
        );
        assert_eq!(seen, 4);
    }

    #[test]
    fn node_metadata_keeps_what_is_read_and_skips_the_rest() {
        let text = r#"{"kind":"Node","metadata":{"name":"a","uid":"u","resourceVersion":"7",
            "generation":2,"labels":{"l":"1"},"annotations":{"a":"2"},
            "managedFields":"not a list","creationTimestamp":"not a time"}}"#;
        let nodes = read::<Node>(text).expect("read");
        let m = &nodes[0].metadata;
        assert_eq!(m.name.as_deref(), Some("a"));
        assert_eq!(m.uid.as_deref(), Some("u"));
        assert_eq!(m.resource_version.as_deref(), Some("7"));
        assert_eq!(m.generation, Some(2));
        assert_eq!(m.labels.as_ref().map(|l| l.len()), Some(1));
        assert_eq!(m.annotations.as_ref().map(|a| a.len()), Some(1));
        assert!(m.managed_fields.is_none() && m.creation_timestamp.is_none());
        // The general path refuses it (a malformed field it reads): the fast path is more lenient.
        assert!(general::<Node>(text).is_err());
    }
}
