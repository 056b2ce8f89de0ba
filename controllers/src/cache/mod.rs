//! The cache layer: one watch and in-memory cache per input and output kind ([`watch`]), our
//! insights as the cache holds them (whole or projected: [`insights`]) and the Nodes reduced to
//! what the assessment reads ([`nodes`]), the inputs of one pass copied out ([`readings`]), the
//! fingerprints of what the caches hold ([`fingerprint`]), and the pods and
//! PodDisruptionBudgets read on demand for nodes whose drain fails ([`drain`]). In hosted mode:
//! the watches of HostedClusters, NodePools, cluster-api objects and our objects labelled with a
//! hosted cluster ([`hosted`]), and each hosted cluster's own ClusterOperators and Nodes read
//! through its kubeconfig ([`guest`]). The watches wake whom the start-up tells them to
//! ([`watch::Routes`], [`hosted::HostedRoutes`]): this layer knows no reconciler.
//!
//! May import: [`crate::runtime`], [`crate::metrics`].
pub mod drain;
pub mod fingerprint;
pub mod guest;
pub mod hosted;
pub mod insights;
pub mod nodes;
pub mod prometheus;
pub mod readings;
pub mod watch;
