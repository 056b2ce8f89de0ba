//! What can go wrong making the bundle.

/// What can go wrong making the bundle.
#[derive(Debug, thiserror::Error)]
pub enum OlmError {
    /// The rendered manifests are not YAML.
    #[error("the manifests of config/openshift are not valid YAML: {0}")]
    Yaml(String),
    /// An object the bundle cannot carry.
    #[error("{0}")]
    Unplaceable(String),
    /// The manifests lack what the bundle needs.
    #[error("{0}")]
    Missing(String),
    /// The catalog is inconsistent.
    #[error("the file-based catalog is inconsistent: {0}")]
    Catalog(String),
}
