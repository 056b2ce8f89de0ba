//! Property test of the offline path past the reader: a real snapshot with random changes to
//! its fields (values of the same JSON type, removed fields, values of any type, control
//! characters in strings) is assessed by the controller's pure logic and rendered (text, JSON,
//! YAML) without a panic. 512 cases (each changes 1 to 8 fields; about two thirds stay decodable
//! and reach the assessment).

use std::sync::LazyLock;

use jiff::Timestamp;
use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use update_status_snapshot::Snapshot;

use crate::show::render::{self, Details};
use crate::show::report::{Format, UpdateStatusReport, serialise};

/// The fixture the changes start from (every kind of input, a degraded update).
static BASE: LazyLock<(Snapshot, [Value; 4])> = LazyLock::new(|| {
    let dir = update_status_testdata::oc_status_case("4.14.1-degraded");
    let snap = Snapshot::from_dir(&dir).expect("fixture");
    let values = [
        to_value(&snap.cluster_version),
        to_value(&snap.cluster_operators),
        to_value(&snap.machine_config_pools),
        to_value(&snap.nodes),
    ];
    (snap, values)
});

fn to_value<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("inputs serialise")
}

/// One change: which input (0..4), which value in it, and what to do.
#[derive(Debug, Clone)]
enum Change {
    /// A value of the same JSON type (a string, number, bool; arrays and objects lose or repeat
    /// an element).
    SameType(usize, prop::sample::Index, Value),
    /// Removed from its object or array.
    Remove(usize, prop::sample::Index),
    /// Any value.
    Any(usize, prop::sample::Index, Value),
}

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e12f64..1e12).prop_map(|f| json!(f)),
        "(\\PC|[\\x00-\\x1f\\x7f-\\x9f\u{202e}]){0,24}".prop_map(Value::String),
        prop::sample::select(vec![
            "True",
            "False",
            "Unknown",
            "",
            "worker",
            "master",
            "Done",
            "Working",
            "Degraded",
            "4.14.1",
            "2023-11-03T16:28:16Z",
            "rendered-worker-4cec9ed3a634560e5c083a187c8f93a7",
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,8}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn change() -> impl Strategy<Value = Change> {
    let at = (0..4usize, any::<prop::sample::Index>());
    prop_oneof![
        4 => (at.clone(), any_value()).prop_map(|((f, i), v)| Change::SameType(f, i, v)),
        2 => at.clone().prop_map(|(f, i)| Change::Remove(f, i)),
        1 => (at, any_value()).prop_map(|((f, i), v)| Change::Any(f, i, v)),
    ]
}

fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, c)| {
            pointers(
                c,
                format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, c)| pointers(c, format!("{at}/{i}"), out)),
        _ => {}
    }
    out.push(at);
}

fn apply(values: &mut [Value; 4], c: &Change) {
    let (file, index) = match c {
        Change::SameType(f, i, _) | Change::Remove(f, i) | Change::Any(f, i, _) => (*f, i),
    };
    let mut all = Vec::new();
    pointers(&values[file], String::new(), &mut all);
    let at = index.get(&all).clone();
    if at.is_empty() {
        return;
    }
    match c {
        Change::Remove(..) => {
            let (parent, key) = at.rsplit_once('/').unwrap_or(("", &at));
            match values[file].pointer_mut(parent) {
                Some(Value::Object(m)) => {
                    m.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                Some(Value::Array(a)) => {
                    if let Ok(i) = key.parse::<usize>()
                        && i < a.len()
                    {
                        a.remove(i);
                    }
                }
                _ => {}
            }
        }
        Change::Any(_, _, v) => {
            if let Some(slot) = values[file].pointer_mut(&at) {
                *slot = v.clone();
            }
        }
        Change::SameType(_, _, v) => {
            if let Some(slot) = values[file].pointer_mut(&at) {
                match (&*slot, v) {
                    (Value::String(_), Value::String(_))
                    | (Value::Number(_), Value::Number(_))
                    | (Value::Bool(_), Value::Bool(_)) => *slot = v.clone(),
                    (Value::Array(a), _) if !a.is_empty() => {
                        let mut a = a.clone();
                        if v.is_null() {
                            a.pop();
                        } else {
                            a.push(a[0].clone());
                        }
                        *slot = Value::Array(a);
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The typed input, or `None` when the change made it undecodable (the reader's property tests
/// cover those).
fn decode<T: DeserializeOwned>(v: &Value) -> Option<T> {
    serde_json::from_value(v.clone()).ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn changed_snapshots_are_assessed_and_rendered_without_panic(
        changes in prop::collection::vec(change(), 1..8),
        offset_s in -100_000i64..100_000,
    ) {
        let (base, values) = &*BASE;
        let mut values = values.clone();
        for c in &changes {
            apply(&mut values, c);
        }
        let (Some(cv), Some(cos), Some(pools), Some(nodes)) = (
            decode(&values[0]),
            decode(&values[1]),
            decode(&values[2]),
            decode(&values[3]),
        ) else {
            return Ok(());
        };
        let snap = Snapshot {
            cluster_version: cv,
            cluster_operators: cos,
            machine_config_pools: pools,
            nodes,
            ..base.clone()
        };
        let now = base
            .now
            .and_then(|n| n.checked_add(jiff::SignedDuration::from_secs(offset_s)).ok())
            .unwrap_or(Timestamp::UNIX_EPOCH);
        let view = super::assess(&snap, now);
        let escaped = crate::show::escape::view(view.clone()).expect("escape");
        let text = render::render(&escaped, now, Details::All);
        prop_assert!(text.ends_with('\n'));
        // Line feeds and tabs are printed as oc prints them; every other control is escaped.
        prop_assert!(
            !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{text}"
        );
        for format in [Format::Json, Format::Yaml] {
            serialise(&UpdateStatusReport::new(&view, now), format).expect("report");
        }
    }
}
