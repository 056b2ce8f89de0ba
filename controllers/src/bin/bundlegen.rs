//! Writes the OLM bundle (`bundle/`) and its file-based catalog (`catalog/`) from
//! `config/openshift` (`kubectl kustomize`) and `config/olm` ([`update_status_controllers::olm_bundle`]).
//!
//! `bundlegen [--image IMG] [--bundle-image IMG] [--check]`: the images default to the
//! Makefile's (`localhost/update-status-controller:<version>`,
//! `localhost/update-status-bundle:<version>`), which the checked-in bundle uses; `--check`
//! exits non-zero when a checked-in file differs from what would be written, or one is left
//! over (CI drift check, `make manifests-check`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use update_status_controllers::olm_bundle;

/// The command line.
struct Flags {
    check: bool,
    image: String,
    bundle_image: String,
}

impl Flags {
    fn parse(version: &str) -> anyhow::Result<Self> {
        let mut flags = Flags {
            check: false,
            image: format!("localhost/update-status-controller:{version}"),
            bundle_image: format!("localhost/update-status-bundle:{version}"),
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                "--check" => flags.check = true,
                "--image" => flags.image = args.next().context("--image needs a value")?,
                "--bundle-image" => {
                    flags.bundle_image = args.next().context("--bundle-image needs a value")?
                }
                other => bail!(
                    "unknown argument {other:?}; usage: bundlegen [--image IMG] [--bundle-image IMG] [--check]"
                ),
            }
        }
        Ok(flags)
    }
}

fn main() -> anyhow::Result<()> {
    let version = env!("CARGO_PKG_VERSION");
    let flags = Flags::parse(version)?;
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let manifests = kustomize(&root.join("config/openshift"))?;
    let read =
        |p: &str| std::fs::read_to_string(root.join(p)).with_context(|| format!("reading {p}"));
    let description = read("config/olm/description.md")?;
    let icon_svg = read("config/olm/icon.svg")?;
    let bundle = olm_bundle::bundle(&olm_bundle::Input {
        manifests: &manifests,
        version,
        image: &flags.image,
        bundle_image: &flags.bundle_image,
        description: &description,
        icon_svg: &icon_svg,
    })?;
    for o in &bundle.left_out {
        eprintln!(
            "bundlegen: left out of the bundle (OLM would create it in the install namespace): {o}"
        );
    }
    for r in &bundle.widened {
        eprintln!(
            "bundlegen: {r} granted in every namespace (clusterPermissions): OLM cannot create a Role outside the install namespace"
        );
    }
    let drift = write_or_check(&root, &bundle.files, flags.check)?;
    if !drift.is_empty() {
        bail!(
            "the bundle differs from what config/ generates (run `make bundle`): {}",
            drift.join(", ")
        );
    }
    if !flags.check {
        println!(
            "wrote {} files under bundle/ and catalog/",
            bundle.files.len()
        );
    }
    Ok(())
}

/// Writes `files` under `root` and removes the other files of `bundle/` and `catalog/`; with
/// `check`, writes nothing and returns what differs.
fn write_or_check(
    root: &Path,
    files: &[(String, String)],
    check: bool,
) -> anyhow::Result<Vec<String>> {
    let wanted: BTreeSet<PathBuf> = files.iter().map(|(p, _)| root.join(p)).collect();
    let mut drift = Vec::new();
    for dir in ["bundle", "catalog"] {
        for existing in files_under(&root.join(dir))? {
            if !wanted.contains(&existing) {
                if check {
                    drift.push(format!("{} (not generated)", existing.display()));
                } else {
                    std::fs::remove_file(&existing)
                        .with_context(|| format!("removing {}", existing.display()))?;
                }
            }
        }
    }
    for (rel, text) in files {
        let path = root.join(rel);
        if check {
            if std::fs::read_to_string(&path).unwrap_or_default() != *text {
                drift.push(rel.clone());
            }
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {rel}"))?;
    }
    Ok(drift)
}

fn kustomize(dir: &Path) -> anyhow::Result<String> {
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .context("running `kubectl kustomize` (kubectl is needed: hack/ensure-tools.sh)")?;
    if !out.status.success() {
        bail!(
            "kubectl kustomize {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8(out.stdout).context("kubectl kustomize output")
}

fn files_under(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    for e in entries {
        let path = e
            .with_context(|| format!("listing {}", dir.display()))?
            .path();
        if path.is_dir() {
            out.extend(files_under(&path)?);
        } else {
            out.push(path);
        }
    }
    Ok(out)
}
