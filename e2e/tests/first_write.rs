//! No transient wrong state: the ControlPlaneUpdateStatus is first written complete. A watch
//! opened before the controller starts sees every version of the object; each one that has a
//! status already carries the master pool's node counts (the control-plane reconciler counts
//! the master nodes itself, from caches that have all listed before its first pass).
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, WatchEvent, WatchParams};
use update_status_api::crd::ControlPlaneUpdateStatus;
use update_status_e2e::controller::Controller;
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

#[tokio::test]
async fn the_control_plane_status_is_never_written_without_its_node_counts() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("first").await?;
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let api: Api<ControlPlaneUpdateStatus> = Api::namespaced(env.client(), ns.name());
    let stream = api
        .watch(&WatchParams::default().timeout(60), "0")
        .await?
        .boxed();
    let controller = Controller::start(&env, ns.name(), &[])?;

    // Every version until the counts show (and a little after: a rewrite would follow soon).
    let mut versions = Vec::new();
    let mut stream = stream;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut complete_at = None;
    while let Ok(Some(event)) = tokio::time::timeout_at(
        complete_at.map_or(deadline, |t: tokio::time::Instant| t.min(deadline)),
        stream.next(),
    )
    .await
    {
        if let WatchEvent::Added(o) | WatchEvent::Modified(o) = event? {
            let Some(status) = o.status else { continue };
            let total = status.nodes.total;
            versions.push((o.metadata.resource_version.unwrap_or_default(), total));
            if total == 3 && complete_at.is_none() {
                complete_at = Some(tokio::time::Instant::now() + Duration::from_secs(3));
            }
        }
    }
    assert!(
        complete_at.is_some(),
        "no ControlPlaneUpdateStatus with the 3 master nodes within 60 s (versions seen: {versions:?}; controller log {})",
        controller.log.display()
    );
    assert!(
        versions.iter().all(|(_, total)| *total == 3),
        "a version of the ControlPlaneUpdateStatus was written without the master nodes: {versions:?}"
    );
    Ok(())
}
