//! Property tests of the snapshot reader: whatever a file holds (random bytes, random YAML or
//! JSON structures, random values in otherwise valid objects), reading never panics and either
//! succeeds or fails with an error naming the file. 3 properties × 1,024 cases. And the reader's
//! fast path (`fast.rs`, `events.rs`) reads what it reads as the general path does: 2 properties
//! × 512 cases.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::Snapshot;

/// A snapshot folder with a valid ClusterVersion and `nodes.yaml` holding `nodes`.
struct Dir(PathBuf);

impl Dir {
    fn new(nodes: &[u8]) -> Dir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "us-prop-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let cv = json!({"kind": "ClusterVersion", "metadata": {"name": "version"},
            "status": {"conditions": [{"type": "Progressing", "status": "False",
                "lastTransitionTime": "2024-01-01T00:00:00Z"}]}});
        std::fs::write(dir.join("clusterversion.yaml"), cv.to_string()).expect("write cv");
        std::fs::write(dir.join("nodes.yaml"), nodes).expect("write nodes");
        Dir(dir)
    }

    /// Reads it: success, or an error naming `nodes.yaml`.
    fn check(&self) -> Result<(), TestCaseError> {
        match Snapshot::from_dir(&self.0) {
            Ok(_) => Ok(()),
            Err(e) => {
                let text = e.to_string();
                prop_assert!(text.contains("nodes.yaml"), "{text}");
                Ok(())
            }
        }
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
        // Strings the reader gives meaning to.
        prop::sample::select(vec![
            "Node",
            "List",
            "NodeList",
            "True",
            "False",
            "items",
            "2024-01-01T00:00:00Z",
            "",
        ])
        .prop_map(|s| json!(s)),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 48, 6, |inner| {
        let key = prop_oneof![
            prop::sample::select(vec![
                "kind",
                "items",
                "metadata",
                "name",
                "status",
                "conditions",
                "annotations",
                "labels",
                "spec",
                "apiVersion",
            ])
            .prop_map(str::to_owned),
            "[a-z]{1,6}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A valid Node, as the API returns it.
fn node() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/worker": ""},
            "annotations": {"machineconfiguration.openshift.io/currentConfig": "rendered-worker-a",
                "machineconfiguration.openshift.io/desiredConfig": "rendered-worker-b",
                "machineconfiguration.openshift.io/state": "Working"}},
        "spec": {"unschedulable": true},
        "status": {"conditions": [{"type": "Ready", "status": "True",
            "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "KubeletReady", "message": "ok"}],
            "nodeInfo": {"kubeletVersion": "v1.31.0"}}
    })
}

/// The JSON pointers of every value in `v`.
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    out.push(at.to_owned());
    match v {
        Value::Object(m) => m
            .iter()
            .for_each(|(k, c)| pointers(c, &format!("{at}/{k}"), out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, c)| pointers(c, &format!("{at}/{i}"), out)),
        _ => {}
    }
}

/// A List of one valid Node whose value at a picked pointer is `replacement`.
fn node_list_with(pick: &prop::sample::Index, replacement: Value) -> Value {
    let mut n = node();
    let mut all = Vec::new();
    pointers(&n, "", &mut all);
    let at = pick.get(&all);
    if let Some(slot) = n.pointer_mut(at) {
        *slot = replacement;
    }
    json!({"kind": "List", "items": [n]})
}

fn write_yaml(v: &Value, yaml: bool) -> Vec<u8> {
    if yaml {
        serde_saphyr::to_string(v)
            .unwrap_or_else(|_| v.to_string())
            .into_bytes()
    } else {
        v.to_string().into_bytes()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        Dir::new(&bytes).check()?;
    }

    #[test]
    fn random_structures_never_panic(v in value(), yaml in any::<bool>()) {
        Dir::new(&write_yaml(&v, yaml)).check()?;
    }

    #[test]
    fn random_field_values_never_panic(
        pick in any::<prop::sample::Index>(),
        replacement in value(),
        yaml in any::<bool>(),
    ) {
        Dir::new(&write_yaml(&node_list_with(&pick, replacement), yaml)).check()?;
    }
}

/// The fast path's reading of `text`, if it reads it, is the general path's (Nodes: with the
/// metadata the fast path keeps); so is the event reader's of a YAML text.
fn paths_agree(text: &str) -> Result<(), TestCaseError> {
    use super::fast;
    use update_status_api::input::Node;
    let project = |mut n: Node| {
        n.metadata = super::wire::projected(n.metadata);
        n
    };
    let path = Path::new("nodes.yaml");
    let general =
        super::parse::values_of(path, text).and_then(|v| super::parse::objects_of::<Node>(path, v));
    // The streaming JSON reader: what the fast path reads, on a text that starts as JSON.
    if matches!(
        text.trim_start_matches([' ', '\t', '\n', '\r'])
            .as_bytes()
            .first(),
        Some(b'{' | b'[')
    ) {
        prop_assert_eq!(
            fast::read_json::<Node, _>(text.as_bytes()),
            fast::read::<Node>(text),
            "{}",
            text
        );
    }
    if let Some(fast) = fast::read::<Node>(text) {
        match general {
            Ok(general) => {
                let fast: Vec<Node> = fast.into_iter().map(project).collect();
                let general: Vec<Node> = general.into_iter().map(project).collect();
                prop_assert_eq!(fast, general, "{}", text);
            }
            Err(e) => prop_assert!(false, "fast path read it, general: {e}\n{text}"),
        }
    }
    if let Ok(events) = super::events::documents::<Value>(text) {
        let events: Vec<Value> = events.into_iter().filter(|v| !v.is_null()).collect();
        let general = super::parse::parse_documents(text);
        prop_assert_eq!(Ok(events), general, "{}", text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_structures_read_alike_through_both_paths(v in value(), yaml in any::<bool>()) {
        paths_agree(&String::from_utf8_lossy(&write_yaml(&v, yaml)))?;
    }

    #[test]
    fn random_field_values_read_alike_through_both_paths(
        pick in any::<prop::sample::Index>(),
        replacement in value(),
        yaml in any::<bool>(),
    ) {
        paths_agree(&String::from_utf8_lossy(&write_yaml(&node_list_with(&pick, replacement), yaml)))?;
    }
}

#[test]
fn the_generated_node_is_valid() {
    let dir = Dir::new(node().to_string().as_bytes());
    let snap = Snapshot::from_dir(Path::new(&dir.0)).expect("valid node");
    assert_eq!(snap.nodes.len(), 1);
}
