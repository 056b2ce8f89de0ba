//! The file-based catalog (FBC): `catalog/update-status/catalog.yaml`, what `opm init` and
//! `opm render` of the bundle image would write (opm itself cannot be had here: the Go module
//! proxy refuses operator-registry), checked by [`check`]: one `olm.package`, one `olm.channel`
//! whose entries name bundles of the catalog (the upgrade graph: each entry `replaces` the one
//! before it), one `olm.bundle` per version with its `olm.package` and `olm.gvk` properties.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::describe::{CHANNEL, PACKAGE};
use super::error::OlmError;

/// One bundle of the catalog: its CSV name, version and the kinds it provides
/// (group, version, kind).
pub struct CatalogBundle<'a> {
    /// `update-status.v<version>`.
    pub name: &'a str,
    /// The version.
    pub version: &'a str,
    /// The bundle image.
    pub image: &'a str,
    /// The kinds it provides.
    pub gvks: Vec<(String, String, String)>,
    /// The related images (the bundle's `relatedImages`).
    pub related: Vec<Value>,
}

/// The catalog's documents, one bundle (the current version) in the channel.
pub fn documents(bundle: &CatalogBundle<'_>, description: &str) -> Vec<Value> {
    let package = json!({
        "schema": "olm.package",
        "name": PACKAGE,
        "defaultChannel": CHANNEL,
        "description": description,
    });
    let channel = json!({
        "schema": "olm.channel",
        "package": PACKAGE,
        "name": CHANNEL,
        "entries": [{"name": bundle.name}],
    });
    let mut properties = vec![
        json!({"type": "olm.package", "value": {"packageName": PACKAGE, "version": bundle.version}}),
    ];
    for (group, version, kind) in &bundle.gvks {
        properties.push(
            json!({"type": "olm.gvk", "value": {"group": group, "version": version, "kind": kind}}),
        );
    }
    let mut related = vec![json!({"name": "bundle", "image": bundle.image})];
    related.extend(bundle.related.iter().cloned());
    let olm_bundle = json!({
        "schema": "olm.bundle",
        "name": bundle.name,
        "package": PACKAGE,
        "image": bundle.image,
        "properties": properties,
        "relatedImages": related,
    });
    vec![package, channel, olm_bundle]
}

/// Checks a catalog's documents as `opm validate` would the basics: one package with a default
/// channel that exists, channel entries that are bundles of the package (each `replaces`, if
/// any, too), bundles with an image and their `olm.package` property naming the package.
pub fn check(docs: &[Value]) -> Result<(), OlmError> {
    let bad = |m: String| Err(OlmError::Catalog(m));
    let of =
        |schema: &str| -> Vec<&Value> { docs.iter().filter(|d| d["schema"] == schema).collect() };
    let packages = of("olm.package");
    let [package] = packages.as_slice() else {
        return bad(format!("{} olm.package documents, want 1", packages.len()));
    };
    let pkg = package["name"].as_str().unwrap_or_default();
    let bundles: BTreeSet<&str> = of("olm.bundle")
        .iter()
        .filter(|b| b["package"] == pkg)
        .filter_map(|b| b["name"].as_str())
        .collect();
    for b in of("olm.bundle") {
        let name = b["name"].as_str().unwrap_or_default();
        if b["image"].as_str().is_none_or(str::is_empty) {
            return bad(format!("bundle {name} has no image"));
        }
        let props = b["properties"].as_array().cloned().unwrap_or_default();
        if !props
            .iter()
            .any(|p| p["type"] == "olm.package" && p["value"]["packageName"] == pkg)
        {
            return bad(format!(
                "bundle {name} has no olm.package property naming {pkg}"
            ));
        }
    }
    let channels = of("olm.channel");
    let default = package["defaultChannel"].as_str().unwrap_or_default();
    if !channels.iter().any(|c| c["name"] == default) {
        return bad(format!(
            "the default channel {default:?} of {pkg} does not exist"
        ));
    }
    for c in channels {
        for e in c["entries"].as_array().into_iter().flatten() {
            for key in ["name", "replaces"] {
                if let Some(n) = e[key].as_str()
                    && !bundles.contains(n)
                {
                    return bad(format!(
                        "channel {} names {key} {n}, which is no bundle of {pkg}",
                        c["name"]
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_checks_and_a_broken_one_does_not() -> Result<(), OlmError> {
        let b = CatalogBundle {
            name: "update-status.v0.1.0",
            version: "0.1.0",
            image: "localhost/update-status-bundle:0.1.0",
            gvks: vec![(
                "update.openshift.io".into(),
                "v1alpha1".into(),
                "UpdateInsight".into(),
            )],
            related: vec![],
        };
        let docs = documents(&b, "d");
        check(&docs)?;
        let mut broken = docs.clone();
        broken[1]["entries"] =
            json!([{"name": "update-status.v0.1.0", "replaces": "update-status.v0.0.9"}]);
        assert!(check(&broken).is_err());
        let mut no_default = docs.clone();
        no_default[0]["defaultChannel"] = json!("candidate");
        assert!(check(&no_default).is_err());
        Ok(())
    }
}
