//! What the fast path ([`crate::fast`]) reads of each input kind: the [`Input`] trait (which
//! parts of an object are kept, and how they make the input type), and the wire format of a
//! file's documents ([`Top`]: an object, a list, an array or null) flattened into objects.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use update_status_api::input::{
    ClusterOperator, ClusterOperatorStatus, ClusterVersion, ClusterVersionStatus, MachineConfig,
    MachineConfigPool, MachineConfigPoolSpec, Node, NodeSpec, NodeStatus, Pod, PodDisruptionBudget,
    PodDisruptionBudgetSpec, PodDisruptionBudgetStatus, PodSpec, nullable,
};

/// An input kind the fast path reads: which parts of an object it keeps, and how they make the
/// input type.
pub trait Input: Resource<DynamicType = ()> + DeserializeOwned + Send + Sized {
    /// What is read of `metadata`.
    type Meta: DeserializeOwned + Default + Into<ObjectMeta> + Send;
    /// What is read of `spec` ([`Skip`] when nothing).
    type Spec: DeserializeOwned + Default + Send;
    /// What is read of `status` ([`Skip`] when nothing).
    type Status: DeserializeOwned + Default + Send;
    /// The input object made of its parts.
    fn assemble(metadata: ObjectMeta, spec: Self::Spec, status: Self::Status) -> Self;
}

/// A part of an object that is not read: skipped by the parser whatever it holds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Skip)
    }
}

/// `impl Input for $kind`, with the whole `metadata` kept and `$assemble` making the object of
/// its parts.
macro_rules! input {
    ($kind:ty, $spec:ty, $status:ty, |$metadata:ident, $s:pat_param, $st:pat_param| $assemble:expr) => {
        impl Input for $kind {
            type Meta = ObjectMeta;
            type Spec = $spec;
            type Status = $status;
            fn assemble($metadata: ObjectMeta, $s: $spec, $st: $status) -> Self {
                $assemble
            }
        }
    };
}

input!(
    ClusterVersion,
    Skip,
    ClusterVersionStatus,
    |metadata, _, status| ClusterVersion { metadata, status }
);
input!(
    ClusterOperator,
    Skip,
    ClusterOperatorStatus,
    |metadata, _, status| ClusterOperator { metadata, status }
);
input!(
    MachineConfigPool,
    MachineConfigPoolSpec,
    Skip,
    |metadata, spec, _| MachineConfigPool { metadata, spec }
);
input!(MachineConfig, Skip, Skip, |metadata, _, _| MachineConfig {
    metadata
});
input!(Pod, PodSpec, Skip, |metadata, spec, _| Pod {
    metadata,
    spec
}
.trimmed());
input!(
    PodDisruptionBudget,
    PodDisruptionBudgetSpec,
    PodDisruptionBudgetStatus,
    |metadata, spec, status| PodDisruptionBudget {
        metadata,
        spec,
        status
    }
    .trimmed()
);

impl Input for Node {
    type Meta = NodeMeta;
    type Spec = NodeSpec;
    type Status = NodeStatus;
    fn assemble(metadata: ObjectMeta, spec: NodeSpec, mut status: NodeStatus) -> Self {
        // The list grew by doubling as it was read: thousands of Nodes are kept to the end.
        status.conditions.shrink_to_fit();
        Node {
            metadata,
            spec,
            status,
        }
    }
}

/// The metadata of a Node as read: what the assessment and the controller use. Read from a
/// mapping only, as `ObjectMeta` is (a derived struct would also take a sequence).
#[derive(Debug, Default)]
pub struct NodeMeta(NodeMetaFields);

impl<'de> Deserialize<'de> for NodeMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MapOnly;
        impl<'de> Visitor<'de> for MapOnly {
            type Value = NodeMeta;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("ObjectMeta")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<NodeMeta, A::Error> {
                NodeMetaFields::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(NodeMeta)
            }
        }
        d.deserialize_map(MapOnly)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NodeMetaFields {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    generation: Option<i64>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    annotations: Option<BTreeMap<String, String>>,
}

/// The `ObjectMeta` of the parts of `$m` that a Node keeps (see [`NodeMetaFields`]).
macro_rules! node_meta {
    ($m:ident) => {
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: $m.name,
            namespace: $m.namespace,
            uid: $m.uid,
            resource_version: $m.resource_version,
            generation: $m.generation,
            labels: $m.labels,
            annotations: $m.annotations,
            ..Default::default()
        }
    };
}

impl From<NodeMeta> for ObjectMeta {
    fn from(NodeMeta(m): NodeMeta) -> Self {
        node_meta! { m }
    }
}

/// `m` with only the metadata the fast path keeps of a Node.
#[cfg(test)]
pub(crate) fn projected(m: ObjectMeta) -> ObjectMeta {
    node_meta! { m }
}

/// Reads `Some(value)` when the key is there, `null` included (absent: `None` by default).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// An object as read (or a list: `items` set).
#[derive(Deserialize)]
#[serde(bound(deserialize = ""))]
pub(crate) struct Wire<I: Input> {
    /// Absent: `None`; `null`: `Some(None)`.
    #[serde(default, deserialize_with = "present")]
    kind: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    metadata: I::Meta,
    #[serde(default, deserialize_with = "nullable")]
    spec: I::Spec,
    #[serde(default, deserialize_with = "nullable")]
    status: I::Status,
    /// Absent: `None`; `null`: `Some(None)`.
    #[serde(default, deserialize_with = "present")]
    pub(crate) items: Option<Option<Vec<Top<I>>>>,
}

/// A document, or an element of a list or array: what [`super::flatten`] walks.
pub(crate) enum Top<I: Input> {
    /// `null`: skipped.
    Null,
    /// An object (or a list).
    Object(Box<Wire<I>>),
    /// An array.
    Array(Vec<Top<I>>),
}

impl<'de, I: Input> Deserialize<'de> for Top<I> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TopVisitor(PhantomData))
    }
}

struct TopVisitor<I>(PhantomData<I>);

impl<'de, I: Input> Visitor<'de> for TopVisitor<I> {
    type Value = Top<I>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object, an array or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Top<I>, E> {
        Ok(Top::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Top<I>, E> {
        Ok(Top::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Top<I>, D::Error> {
        Top::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top<I>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Top::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Top<I>, A::Error> {
        Wire::deserialize(de::value::MapAccessDeserializer::new(map))
            .map(|w| Top::Object(Box::new(w)))
    }
}

/// An object after flattening, with its kind (inherited from a typed list when it has none).
pub(crate) struct Flat<I: Input> {
    pub(crate) kind: Option<String>,
    wire: Wire<I>,
}

impl<I: Input> Flat<I> {
    /// The input object.
    pub(crate) fn into_input(self) -> I {
        I::assemble(self.wire.metadata.into(), self.wire.spec, self.wire.status)
    }
}

/// [`super::flatten`] on what the fast path read: the same lists are lists, and the same items
/// inherit the kind of their typed list.
pub(crate) fn flatten<I: Input>(top: Top<I>, out: &mut Vec<Flat<I>>) {
    match top {
        Top::Null => {}
        Top::Array(items) => items.into_iter().for_each(|t| flatten(t, out)),
        Top::Object(mut wire) => {
            let kind = wire.kind.clone().flatten();
            let is_list =
                wire.items.is_some() && kind.as_deref().is_none_or(|k| k.ends_with("List"));
            if !is_list {
                out.push(Flat { kind, wire: *wire });
                return;
            }
            let item_kind = kind
                .as_deref()
                .and_then(|k| k.strip_suffix("List"))
                .filter(|k| !k.is_empty());
            for mut item in wire.items.take().flatten().unwrap_or_default() {
                if let (Some(k), Top::Object(obj)) = (item_kind, &mut item)
                    && obj.kind.is_none()
                {
                    obj.kind = Some(Some(k.to_string()));
                }
                flatten(item, out);
            }
        }
    }
}
