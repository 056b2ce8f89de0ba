//! The hub's etcd, through its HTTP gateway (`/v3/...`) and `/metrics`: its database size with
//! live data only (compacted and defragmented).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};

/// The hub etcd, through its HTTP gateway (`/v3/...`) and `/metrics`.
pub struct Etcd {
    url: String,
}

impl Etcd {
    /// The etcd of the local control plane in `cluster_dir` (its `ports.env`).
    pub fn of(cluster_dir: &Path) -> anyhow::Result<Self> {
        let ports = std::fs::read_to_string(cluster_dir.join("ports.env"))
            .context("reading the hub's ports.env")?;
        let port = ports
            .lines()
            .find_map(|l| l.strip_prefix("ETCD_PORT="))
            .context("no ETCD_PORT in the hub's ports.env")?;
        Ok(Etcd {
            url: format!("127.0.0.1:{}", port.trim()),
        })
    }

    /// One plain-HTTP request; the body of the answer.
    async fn http(&self, method: &str, path: &str, body: &str) -> anyhow::Result<String> {
        let (addr, req) = (
            self.url.clone(),
            format!(
                "{method} {path} HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                self.url,
                body.len()
            ),
        );
        tokio::task::spawn_blocking(move || -> anyhow::Result<String> {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(&addr)?;
            s.set_read_timeout(Some(Duration::from_secs(120)))?;
            s.write_all(req.as_bytes())?;
            let mut out = String::new();
            s.read_to_string(&mut out)?;
            let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
            if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
                bail!("etcd {}: {head}", req.lines().next().unwrap_or_default());
            }
            Ok(body.to_string())
        })
        .await?
    }

    /// Compacts the history up to the current revision and defragments: the database then
    /// holds the live keys only. Returns its size in bytes.
    pub async fn live_size(&self) -> anyhow::Result<u64> {
        let range = self
            .http("POST", "/v3/kv/range", r#"{"key":"AA==","limit":1}"#)
            .await?;
        let v: serde_json::Value = serde_json::from_str(&range)?;
        let rev = v
            .pointer("/header/revision")
            .and_then(|r| {
                r.as_str()
                    .map(str::to_string)
                    .or_else(|| Some(r.to_string()))
            })
            .context("no revision in etcd's answer")?;
        // Compacting a revision already compacted is an error: ignore it.
        let _ = self
            .http(
                "POST",
                "/v3/kv/compaction",
                &format!(r#"{{"revision":"{rev}","physical":true}}"#),
            )
            .await;
        self.http("POST", "/v3/maintenance/defragment", "{}")
            .await?;
        let metrics = self.http("GET", "/metrics", "").await?;
        metrics
            .lines()
            .find_map(|l| l.strip_prefix("etcd_mvcc_db_total_size_in_bytes "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map(|v| v as u64)
            .context("no etcd_mvcc_db_total_size_in_bytes in etcd's /metrics")
    }
}
