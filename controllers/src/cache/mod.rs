//! The cache layer: one watch and in-memory cache per input and output kind ([`watch`]), our
//! insights as the cache holds them (whole or projected: [`insights`]) and the Nodes reduced to
//! what the assessment reads ([`nodes`]), and the pods and PodDisruptionBudgets read on
//! demand for nodes whose drain fails ([`drain`]). The watches wake whom the start-up tells them to
//! ([`watch::Routes`]): this layer knows no reconciler.
//!
//! May import: [`crate::runtime`], [`crate::metrics`].
pub mod drain;
pub mod insights;
pub mod nodes;
pub mod watch;
