//! What the fleet bench counts: the controller's local and hub write counters, sampled until
//! they settle; the objects to copy and the hub's copies per kind; every copy compared with its
//! local object; the copies' size as JSON.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kube::api::{Api, ListParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus, labels,
};

use super::controller::Controller;

/// A client's counters: (local writes, hub writes), from `/metrics`.
pub async fn counters(c: &Controller) -> Option<(u64, u64)> {
    let text = c.scrape().await?;
    // The heartbeats (one write per cluster and `--hub-heartbeat-interval`, 5 min here) are not
    // copies: left out, so that the fleet settles and its steady state means "no copy written"
    // (their cost is docs/acm.md's, "Freshness and the agent's health").
    let sum = |metric: &str| -> u64 {
        text.lines()
            .filter(|l| l.starts_with(metric) && !l.contains("verb=\"heartbeat\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    };
    Some((
        sum("update_status_api_writes_total{"),
        sum("update_status_hub_writes_total{"),
    ))
}

/// The counters over time until neither has moved for `quiet`.
pub struct Settled {
    pub local: u64,
    pub hub: u64,
    /// When either counter last moved.
    pub last_change: Instant,
    /// When the local write counter last moved (the hub copies follow the local objects).
    pub last_local_change: Instant,
    /// (instant, hub writes) every 250 ms.
    pub samples: Vec<(Instant, u64)>,
}

impl Settled {
    /// Highest hub write rate over one second.
    pub fn peak_rate(&self) -> f64 {
        let mut peak = 0.0f64;
        for (i, &(t0, w0)) in self.samples.iter().enumerate() {
            if let Some(&(t1, w1)) = self.samples[i..]
                .iter()
                .find(|(t, _)| t.duration_since(t0) >= Duration::from_secs(1))
            {
                peak = peak.max((w1 - w0) as f64 / t1.duration_since(t0).as_secs_f64());
            }
        }
        peak
    }
}

/// Samples the counters every 250 ms until neither has moved for `quiet`.
pub async fn settle(c: &Controller, quiet: Duration, timeout: Duration) -> anyhow::Result<Settled> {
    let deadline = Instant::now() + timeout;
    let (mut local, mut hub) = counters(c).await.unwrap_or_default();
    let mut last_change = Instant::now();
    let mut last_local_change = last_change;
    let mut samples = vec![(last_change, hub)];
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = counters(c).await.unwrap_or((local, hub));
        samples.push((Instant::now(), now.1));
        if now.0 != local {
            last_local_change = Instant::now();
        }
        if now != (local, hub) {
            (local, hub) = now;
            last_change = Instant::now();
        } else if last_change.elapsed() >= quiet {
            return Ok(Settled {
                local,
                hub,
                last_change,
                last_local_change,
                samples,
            });
        }
        if Instant::now() > deadline {
            bail!("the controller kept writing for {timeout:?}");
        }
    }
}

/// Names of the objects of kind `K` everywhere, by namespace (metadata only), with `selector`.
async fn count_by_namespace<K>(
    client: &Client,
    selector: &str,
) -> anyhow::Result<BTreeMap<String, usize>>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    let list = api
        .list_metadata(&ListParams::default().labels(selector))
        .await
        .with_context(|| format!("listing {}", K::plural(&())))?;
    let mut out = BTreeMap::new();
    for o in list.items {
        *out.entry(o.metadata.namespace.unwrap_or_default())
            .or_default() += 1;
    }
    Ok(out)
}

/// What the hub should hold per kind: our local objects to copy (every ControlPlaneUpdateStatus
/// and WorkerPoolUpdateStatus, the health insights).
pub async fn local_to_copy(client: &Client) -> anyhow::Result<[usize; 3]> {
    let ours = format!("{}={}", labels::MANAGED_BY, labels::MANAGED_BY_VALUE);
    let health = format!("{ours},{}=health", labels::INSIGHT_TYPE);
    Ok([
        count_by_namespace::<ControlPlaneUpdateStatus>(client, &ours)
            .await?
            .values()
            .sum(),
        count_by_namespace::<WorkerPoolUpdateStatus>(client, &ours)
            .await?
            .values()
            .sum(),
        count_by_namespace::<UpdateInsight>(client, &health)
            .await?
            .values()
            .sum(),
    ])
}

/// The kinds copied to the hub, in the order of [`local_to_copy`] and [`hub_counts`].
pub const KINDS: [&str; 3] = [
    "ControlPlaneUpdateStatus",
    "WorkerPoolUpdateStatus",
    "UpdateInsight",
];

/// The hub copies per kind (and how many hub namespaces hold a ControlPlaneUpdateStatus).
pub async fn hub_counts(hub: &Client) -> anyhow::Result<([usize; 3], usize)> {
    let sel = format!("{},{}", labels::ACM_CLUSTER_NAME, labels::MANAGED_BY);
    let cps = count_by_namespace::<ControlPlaneUpdateStatus>(hub, &sel).await?;
    let wps = count_by_namespace::<WorkerPoolUpdateStatus>(hub, &sel).await?;
    let ins = count_by_namespace::<UpdateInsight>(hub, &sel).await?;
    Ok((
        [cps.values().sum(), wps.values().sum(), ins.values().sum()],
        cps.len(),
    ))
}

/// Every hub copy has the status of its local object, and the hub holds no other copy
/// (ControlPlaneUpdateStatus and WorkerPoolUpdateStatus of every cluster; health insights by
/// count per cluster), the local objects being in `namespace`. `Err` says what differs.
pub async fn compare(
    local: &Client,
    hub: &Client,
    namespace: &str,
    n: usize,
) -> anyhow::Result<Result<(), String>> {
    // Local objects carry the hosted cluster's name (= the managed cluster's here).
    let cluster_of =
        |l: &BTreeMap<String, String>| l.get(labels::CLUSTER).cloned().unwrap_or_default();
    let l_cp: Vec<ControlPlaneUpdateStatus> = Api::namespaced(local.clone(), namespace)
        .list(&ListParams::default())
        .await?
        .items;
    let h_cp: Vec<ControlPlaneUpdateStatus> = Api::all(hub.clone())
        .list(&ListParams::default())
        .await?
        .items;
    let l_wp: Vec<WorkerPoolUpdateStatus> = Api::namespaced(local.clone(), namespace)
        .list(&ListParams::default())
        .await?
        .items;
    let h_wp: Vec<WorkerPoolUpdateStatus> = Api::all(hub.clone())
        .list(&ListParams::default())
        .await?
        .items;
    let mut want = BTreeMap::new();
    for o in &l_cp {
        let c = cluster_of(o.labels());
        want.insert(("cp", c.clone(), c), serde_json::to_value(&o.status)?);
    }
    for o in &l_wp {
        let c = cluster_of(o.labels());
        want.insert(("wp", c, o.name_any()), serde_json::to_value(&o.status)?);
    }
    let mut have = BTreeMap::new();
    for o in &h_cp {
        let ns = o.namespace().unwrap_or_default();
        have.insert(("cp", ns, o.name_any()), serde_json::to_value(&o.status)?);
    }
    for o in &h_wp {
        let ns = o.namespace().unwrap_or_default();
        have.insert(("wp", ns, o.name_any()), serde_json::to_value(&o.status)?);
    }
    if want.len() != n * 3 {
        return Ok(Err(format!(
            "{} local status objects, {} expected",
            want.len(),
            n * 3
        )));
    }
    let differ: Vec<_> = want
        .iter()
        .filter(|(k, v)| have.get(*k) != Some(*v))
        .map(|(k, _)| format!("{}/{}/{}", k.0, k.1, k.2))
        .chain(
            have.keys()
                .filter(|k| !want.contains_key(*k))
                .map(|k| format!("extra {}/{}/{}", k.0, k.1, k.2)),
        )
        .collect();
    if !differ.is_empty() {
        return Ok(Err(format!(
            "{} hub copies differ from their local object: {:?}",
            differ.len(),
            &differ[..differ.len().min(5)]
        )));
    }
    let health = format!(
        "{}={},{}=health",
        labels::MANAGED_BY,
        labels::MANAGED_BY_VALUE,
        labels::INSIGHT_TYPE
    );
    let l_h: Vec<UpdateInsight> = Api::namespaced(local.clone(), namespace)
        .list(&ListParams::default().labels(&health))
        .await?
        .items;
    let mut want_h: BTreeMap<String, usize> = BTreeMap::new();
    for o in &l_h {
        *want_h
            .entry(o.labels().get(labels::CLUSTER).cloned().unwrap_or_default())
            .or_default() += 1;
    }
    let have_h =
        count_by_namespace::<UpdateInsight>(hub, &format!("{},{health}", labels::ACM_CLUSTER_NAME))
            .await?;
    if want_h != have_h {
        return Ok(Err(format!(
            "health insights per cluster differ: {} local, {} on the hub",
            want_h.values().sum::<usize>(),
            have_h.values().sum::<usize>()
        )));
    }
    Ok(Ok(()))
}

/// Bytes of the hub copies as JSON (what listing them returns).
pub async fn hub_json_bytes(hub: &Client) -> anyhow::Result<u64> {
    let sel = format!("{},{}", labels::ACM_CLUSTER_NAME, labels::MANAGED_BY);
    let lp = ListParams::default().labels(&sel);
    let a = serde_json::to_vec(
        &Api::<ControlPlaneUpdateStatus>::all(hub.clone())
            .list(&lp)
            .await?
            .items,
    )?;
    let b = serde_json::to_vec(
        &Api::<WorkerPoolUpdateStatus>::all(hub.clone())
            .list(&lp)
            .await?
            .items,
    )?;
    let c = serde_json::to_vec(
        &Api::<UpdateInsight>::all(hub.clone())
            .list(&lp)
            .await?
            .items,
    )?;
    Ok((a.len() + b.len() + c.len()) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_rate_is_the_most_writes_over_one_second() {
        let t = Instant::now();
        let at = |ms: u64, w: u64| (t + Duration::from_millis(ms), w);
        let s = Settled {
            local: 0,
            hub: 0,
            last_change: t,
            last_local_change: t,
            samples: vec![
                at(0, 0),
                at(500, 10),
                at(1_000, 20),
                at(1_500, 120),
                at(2_000, 130),
            ],
        };
        // The best one-second windows: 0.5 s → 1.5 s and 1.0 s → 2.0 s, 110 writes each.
        assert_eq!(s.peak_rate(), 110.0);
        let quiet = Settled {
            samples: vec![at(0, 5), at(250, 5)],
            ..s
        };
        assert_eq!(quiet.peak_rate(), 0.0, "no window of a second");
    }
}
