//! The web view under test: `kubectl update-status --web` as a child process
//! ([`WebServer`]), the facts the text view prints ([`text_facts`]) and the same facts read from
//! the page ([`page_facts`]), and the page's interactive time.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::browser::Page;
use serde::Deserialize;

use crate::browser::{self, BrowserError};

/// A running `kubectl-update_status --web`, stopped with SIGINT (Ctrl-C) on drop.
#[derive(Debug)]
pub struct WebServer {
    child: Child,
    /// The URL it printed, as a user opens it: `http://127.0.0.1:<port>/?token=<token>`.
    pub url: String,
    /// The line it printed.
    pub banner: String,
}

impl WebServer {
    /// Starts `bin` with `args` (plus `--web`) and waits for the line saying where it listens.
    pub fn start(bin: &Path, args: &[&str], kubeconfig: Option<&Path>) -> std::io::Result<Self> {
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .arg("--web")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(k) = kubeconfig {
            cmd.env("KUBECONFIG", k);
        }
        let mut child = cmd.spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            for _ in lines {}
        });
        let banner = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait()?;
                return Err(std::io::Error::other(format!(
                    "kubectl-update_status --web printed no address ({status})"
                )));
            }
        };
        let url = banner
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .ok_or_else(|| std::io::Error::other(format!("no URL in {banner:?}")))?
            .to_owned();
        Ok(WebServer { child, url, banner })
    }

    /// `http://127.0.0.1:<port>` (no path, no token).
    pub fn origin(&self) -> &str {
        let rest = self.url.strip_prefix("http://").unwrap_or(&self.url);
        let end = rest
            .find('/')
            .map_or(self.url.len(), |i| i + "http://".len());
        &self.url[..end]
    }

    /// `http://127.0.0.1:<port>/s/<session>`: the session's path, under which everything is
    /// served (no trailing `/`, no token).
    pub fn base(&self) -> &str {
        let no_query = self
            .url
            .split_once('?')
            .map_or(self.url.as_str(), |(u, _)| u);
        no_query.trim_end_matches('/')
    }

    /// The session's token (the URL's `token` parameter; empty when it printed none).
    pub fn token(&self) -> &str {
        self.url
            .split_once("?token=")
            .map_or("", |(_, t)| t.split('&').next().unwrap_or(t))
    }

    /// Stops it with SIGINT (Ctrl-C) and returns how long it took to exit and its status.
    pub fn interrupt(&mut self) -> std::io::Result<(Duration, std::process::ExitStatus)> {
        let t = Instant::now();
        Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok((t.elapsed(), status));
            }
            if Instant::now() > deadline {
                self.child.kill()?;
                return Err(std::io::Error::other("did not stop within 10 s of SIGINT"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.interrupt();
        }
    }
}

/// A worker pool's row of the text view.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PoolFacts {
    /// Name.
    pub name: String,
    /// ASSESSMENT.
    pub assessment: String,
    /// COMPLETION's percent.
    pub completion: String,
    /// COMPLETION's `updated/total`.
    pub nodes: String,
    /// STATUS (empty for an empty pool).
    pub status: String,
}

/// What the text view says, and the page must say too.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
pub struct Facts {
    /// Control-plane completion (`97%`).
    pub completion: String,
    /// Operators updated, updating, waiting (absent when the control plane has completed: the
    /// text view then prints one line).
    pub operators: Option<(String, String, String)>,
    /// The `Operator Health` line (absent when completed).
    pub operator_health: Option<String>,
    /// The worker pools.
    pub pools: Vec<PoolFacts>,
    /// The health table: SINCE, LEVEL, IMPACT, MESSAGE.
    pub health: Vec<[String; 4]>,
}

/// Splits a table row on runs of two or more spaces.
fn columns(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The facts of the text view (`kubectl update-status`'s default output).
pub fn text_facts(text: &str) -> Result<Facts, String> {
    let mut f = Facts::default();
    let lines: Vec<&str> = text.lines().collect();
    for line in &lines {
        if let Some(rest) = line.strip_prefix("Completion:") {
            // "97% (33 operators updated, 1 updating, 0 waiting)"
            let rest = rest.trim();
            let (pct, tail) = rest.split_once(' ').ok_or(format!("completion: {line}"))?;
            f.completion = pct.to_owned();
            let nums: Vec<String> = tail
                .split(|c: char| !c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            if let [a, b, c] = nums.as_slice() {
                f.operators = Some((a.clone(), b.clone(), c.clone()));
            }
        } else if line.starts_with("Update to ") && line.contains("successfully completed") {
            f.completion = "100%".to_owned();
        } else if let Some(rest) = line.strip_prefix("Operator Health:") {
            f.operator_health = Some(rest.trim().to_owned());
        }
    }
    let section = |title: &str| -> Vec<&str> {
        let Some(start) = lines.iter().position(|l| *l == title) else {
            return Vec::new();
        };
        lines[start + 1..]
            .iter()
            .skip_while(|l| l.is_empty())
            .skip(1) // the header row
            .take_while(|l| !l.is_empty())
            .copied()
            .collect()
    };
    for row in section("= Worker Upgrade =") {
        let c = columns(row);
        if c.get(1).is_some_and(|a| a == "Empty") {
            f.pools.push(PoolFacts {
                name: c[0].clone(),
                assessment: c[1].clone(),
                completion: String::new(),
                nodes: String::new(),
                status: c.get(2).cloned().unwrap_or_default(),
            });
            continue;
        }
        let (completion, nodes) = match c.get(2).and_then(|s| s.split_once(" (")) {
            Some((pct, n)) => (pct.to_owned(), n.trim_end_matches(')').to_owned()),
            None => (String::new(), String::new()),
        };
        f.pools.push(PoolFacts {
            name: c.first().cloned().unwrap_or_default(),
            assessment: c.get(1).cloned().unwrap_or_default(),
            completion,
            nodes,
            status: c.get(3).cloned().unwrap_or_default(),
        });
    }
    for row in section("= Update Health =") {
        let c = columns(row);
        if c.len() < 4 {
            return Err(format!("health row: {row:?}"));
        }
        let message = c[3..].join("  ");
        f.health
            .push([c[0].clone(), c[1].clone(), c[2].clone(), message]);
    }
    Ok(f)
}

/// The same facts, read from the page's DOM.
pub async fn page_facts(page: &Page) -> Result<Facts, BrowserError> {
    const JS: &str = r#"(() => {
      const t = (sel, root) => { const e = (root || document).querySelector(sel); return e ? e.textContent : null; };
      const done = t('[data-fact=ops-updated]') === t('[data-fact=ops-total]');
      const ops = t('[data-fact=ops-updated]');
      const pools = Array.from(document.querySelectorAll('section.pool'))
        .filter((s) => !/^Control plane/.test(s.querySelector('h3').textContent))
        .map((s) => ({
          name: s.dataset.pool,
          assessment: t('[data-fact=pool-assessment]', s),
          completion: t('[data-fact=pool-total]', s) === '0' ? '' : t('[data-fact=pool-completion]', s),
          nodes: t('[data-fact=pool-total]', s) === '0' ? '' : t('[data-fact=pool-updated]', s) + '/' + t('[data-fact=pool-total]', s),
          status: t('[data-fact=pool-status]', s) || (t('[data-fact=pool-total]', s) === '0' ? '0 Total' : ''),
        }));
      const health = Array.from(document.querySelectorAll('tr[data-insight]')).map((tr) => [
        tr.cells[0].textContent, t('.lvl > span:last-child', tr.cells[1]), tr.cells[2].textContent,
        (tr.cells[3].querySelector('div') || tr.cells[3]).textContent]);
      return {
        completion: t('[data-fact=cp-completion]'),
        operators: done ? null : [ops, t('[data-fact=ops-updating]'), t('[data-fact=ops-waiting]')],
        operator_health: done ? null : t('[data-fact=ops-health]'),
        pools, health,
      };
    })()"#;
    browser::eval(page, JS).await
}

/// Milliseconds from the navigation's start to the view's `update-status:interactive` mark
/// (its first render done and the main thread free again).
pub async fn interactive_ms(page: &Page) -> Result<f64, BrowserError> {
    browser::eval(
        page,
        "performance.getEntriesByName('update-status:interactive')[0].startTime",
    )
    .await
}

/// Writes to `dir` the simulator's snapshot of a cluster of about `nodes` nodes (3 control-plane
/// nodes, two worker pools) in the middle of rolling its workers; returns its node count.
pub fn mid_roll_snapshot(
    dir: &Path,
    nodes: usize,
) -> Result<usize, update_status_simulator::SimError> {
    use update_status_simulator::{SimConfig, Simulation, Stage};
    let per_pool = nodes.saturating_sub(3) / 2;
    let mut sim = Simulation::new(SimConfig {
        operators: 34,
        pools: 3,
        masters: 3,
        nodes_per_pool: per_pool,
        max_unavailable: (per_pool as u32 / 25).max(1),
        seed: 42,
        step: jiff::SignedDuration::from_secs(30),
        ..SimConfig::default()
    })?;
    while sim.stage() != Stage::Nodes && !sim.is_completed() {
        sim.step();
    }
    for _ in 0..12 {
        sim.step();
    }
    let _ = std::fs::remove_dir_all(dir);
    sim.write_snapshot(dir)?;
    Ok(sim.node_count())
}

/// The web view of a snapshot measured in the browser: the page's interactive time (the
/// second load of a warm browser, median of `loads`), and what it weighs.
#[derive(Debug, Clone, Copy)]
pub struct PageRun {
    /// Nodes in the snapshot.
    pub nodes: usize,
    /// Median milliseconds from navigation start to the `update-status:interactive` mark.
    pub interactive_ms: f64,
    /// Worst of the loads.
    pub worst_ms: f64,
    /// Bytes of the page, its script and stylesheet.
    pub page_bytes: usize,
    /// Bytes of its data (one `view` event).
    pub data_bytes: usize,
    /// Bytes of the `-o html` file.
    pub html_bytes: usize,
}

/// Serves `dir` with `bin --from-dir DIR --web`, loads it `loads` times in Chromium.
pub async fn measure_snapshot_page(
    bin: &Path,
    dir: &Path,
    nodes: usize,
    loads: usize,
) -> Result<PageRun, Box<dyn std::error::Error + Send + Sync>> {
    let d = dir.display().to_string();
    let server = WebServer::start(bin, &["--from-dir", &d], None)?;
    let browser = crate::browser::Chromium::shared()?.connect().await?;
    let page =
        crate::browser::open(&browser, &server.url, &crate::browser::Open::default()).await?;
    let mut times = Vec::new();
    for _ in 0..loads.max(1) {
        page.goto(server.url.as_str()).await?;
        crate::browser::wait_for(
            &page,
            "performance.getEntriesByName('update-status:interactive').length > 0",
            Duration::from_secs(30),
        )
        .await?;
        times.push(interactive_ms(&page).await?);
    }
    let (page_bytes, data_bytes): (usize, usize) = crate::browser::eval(
        &page,
        "(async () => { const b = (location.pathname.match(/^\\/s\\/[A-Za-z0-9_-]+/) || [''])[0]; let n = 0; for (const p of ['/', '/app.js', '/app.css']) n += (await (await fetch(b + p)).text()).length; return [n, (await (await fetch(b + '/api/view')).text()).length]; })()",
    )
    .await?;
    page.close().await?;
    let html = Command::new(bin)
        .args(["--from-dir", &d, "-o", "html"])
        .output()?;
    times.sort_by(f64::total_cmp);
    Ok(PageRun {
        nodes,
        interactive_ms: times[times.len() / 2],
        worst_ms: times.last().copied().unwrap_or_default(),
        page_bytes,
        data_bytes,
        html_bytes: html.stdout.len(),
    })
}
