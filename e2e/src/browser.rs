//! A real headless Chromium (the Debian package `chromium`, `/usr/bin/chromium` or
//! `$UPDATE_STATUS_CHROMIUM`), driven over the DevTools protocol (the small client of
//! [`crate::cdp`]), for the web view's tests and the bench.
//!
//! One browser per test process ([`Chromium::shared`]), started with the flags a closed network
//! needs (no background networking, no component update, no sync, no QUIC) and a fresh
//! `--user-data-dir`; a watchdog stops it and removes that folder once the process has exited.
//! Each tokio runtime connects to it on its own ([`Chromium::connect`]): a connection's reader
//! and writer tasks belong to the runtime that made it.

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::json;

pub use crate::cdp::{Browser, CdpError, Page};

/// The browser binary's variable.
pub const CHROMIUM_ENV: &str = "UPDATE_STATUS_CHROMIUM";

/// What can go wrong driving the browser.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// Chromium could not be started.
    #[error(
        "cannot start Chromium ({bin}): {reason} (install the Debian package `chromium`: hack/ensure-tools.sh)"
    )]
    Start {
        /// The binary.
        bin: String,
        /// Why.
        reason: String,
    },
    /// A DevTools call failed.
    #[error("{what}: {source}")]
    Cdp {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: CdpError,
    },
    /// The page's answer was not what was expected.
    #[error("{0}")]
    Page(String),
}

fn cdp(what: &str) -> impl FnOnce(CdpError) -> BrowserError + '_ {
    move |source| BrowserError::Cdp {
        what: what.to_owned(),
        source,
    }
}

/// The shared browser process.
#[derive(Debug)]
pub struct Chromium {
    ws: String,
}

/// The flags every start uses (the issue's list; the network of the test machines is closed).
pub const FLAGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

impl Chromium {
    /// The browser of this process, started at the first call.
    pub fn shared() -> Result<&'static Chromium, BrowserError> {
        static SHARED: OnceLock<Result<Chromium, String>> = OnceLock::new();
        let bin = std::env::var(CHROMIUM_ENV).unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
        SHARED
            .get_or_init(|| Chromium::start(&bin))
            .as_ref()
            .map_err(|reason| BrowserError::Start {
                bin: bin.clone(),
                reason: reason.clone(),
            })
    }

    fn start(bin: &str) -> Result<Chromium, String> {
        let dir = std::env::temp_dir().join(format!(
            "update-status-chromium-{}-{}",
            std::process::id(),
            Instant::now().elapsed().as_nanos()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut child = Command::new(bin)
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", dir.display()))
            .args([
                "--remote-debugging-port=0",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--mute-audio",
                "--font-render-hinting=none",
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        watchdog(child.id(), &dir);
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        let ws = loop {
            let Some(Ok(line)) = lines.next() else {
                return Err(format!("it exited before listening: {}", seen.join(" | ")));
            };
            if let Some(i) = line.find("ws://") {
                break line[i..].trim().to_owned();
            }
            seen.push(line);
            if Instant::now() > deadline {
                return Err(format!("no DevTools URL after 30 s: {}", seen.join(" | ")));
            }
        };
        // Keep reading its stderr (a full pipe would block it).
        std::thread::spawn(move || for _ in lines {});
        std::mem::forget(child);
        Ok(Chromium { ws })
    }

    /// A connection for the current tokio runtime (its tasks run on it).
    pub async fn connect(&self) -> Result<Browser, BrowserError> {
        Browser::connect(&self.ws)
            .await
            .map_err(cdp("connecting to Chromium"))
    }
}

/// Stops the browser `pid` and removes `dir` once this process has exited.
fn watchdog(pid: u32, dir: &std::path::Path) {
    let script = format!(
        "while kill -0 {me} 2>/dev/null; do sleep 0.5; done; kill {pid} 2>/dev/null; sleep 1; kill -9 {pid} 2>/dev/null; rm -rf '{dir}'",
        me = std::process::id(),
        dir = dir.display()
    );
    let _ = Command::new("setsid")
        .args(["sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

/// How to open a page.
#[derive(Clone, Debug)]
pub struct Open {
    /// Viewport width (CSS pixels).
    pub width: i64,
    /// Viewport height.
    pub height: i64,
    /// Bypass the page's Content-Security-Policy (to inject axe-core).
    pub bypass_csp: bool,
}

impl Default for Open {
    fn default() -> Self {
        Open {
            width: 1200,
            height: 2000,
            bypass_csp: false,
        }
    }
}

/// Installed before any script of every page: records Content-Security-Policy violations and
/// dialogs (`alert`, `confirm`, `prompt`: an injected script would call them).
const WATCH_SCRIPT: &str = r#"
window.__usViolations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__usViolations.push(e.violatedDirective + ' ' + e.blockedURI));
"#;

/// Opens `url` in a new page and waits for the view's first render (the performance mark
/// `update-status:interactive`).
pub async fn open(browser: &Browser, url: &str, how: &Open) -> Result<Page, BrowserError> {
    let page = browser
        .new_page("about:blank")
        .await
        .map_err(cdp("opening a page"))?;
    page.execute(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": how.width, "height": how.height, "deviceScaleFactor": 1, "mobile": false}),
    )
    .await
    .map_err(cdp("setting the viewport"))?;
    if how.bypass_csp {
        page.execute("Page.setBypassCSP", json!({"enabled": true}))
            .await
            .map_err(cdp("bypassing the CSP"))?;
    }
    page.execute(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": WATCH_SCRIPT}),
    )
    .await
    .map_err(cdp("installing the watch script"))?;
    page.goto(url).await.map_err(cdp("navigating"))?;
    wait_for(
        &page,
        "performance.getEntriesByName('update-status:interactive').length > 0",
        Duration::from_secs(20),
    )
    .await?;
    Ok(page)
}

/// Evaluates `expression` (a promise is awaited) and decodes its JSON value.
pub async fn eval<T: DeserializeOwned>(page: &Page, expression: &str) -> Result<T, BrowserError> {
    let value = page
        .evaluate(&format!("(async () => {{ return ({expression}); }})()"))
        .await
        .map_err(cdp("evaluating in the page"))?;
    serde_json::from_value(value).map_err(|e| BrowserError::Page(format!("{expression}: {e}")))
}

/// Waits until `expression` is true in the page.
pub async fn wait_for(
    page: &Page,
    expression: &str,
    timeout: Duration,
) -> Result<(), BrowserError> {
    let deadline = Instant::now() + timeout;
    loop {
        if eval::<bool>(page, &format!("!!({expression})"))
            .await
            .unwrap_or(false)
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(BrowserError::Page(format!(
                "timed out after {timeout:?} waiting for {expression}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A screenshot of the viewport (PNG; open the page with a viewport tall enough).
pub async fn screenshot(page: &Page) -> Result<Vec<u8>, BrowserError> {
    page.screenshot().await.map_err(cdp("taking a screenshot"))
}

/// A decoded screenshot: RGBA rows.
#[derive(Debug)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    rgba: Vec<u8>,
}

impl Image {
    /// Decodes a PNG (8-bit RGB or RGBA, as Chromium writes them).
    pub fn decode(png_bytes: &[u8]) -> Result<Image, BrowserError> {
        let bad = |e: &dyn std::fmt::Display| BrowserError::Page(format!("screenshot: {e}"));
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().map_err(|e| bad(&e))?;
        let size = reader
            .output_buffer_size()
            .ok_or_else(|| bad(&"too large"))?;
        let mut buf = vec![0; size];
        let info = reader.next_frame(&mut buf).map_err(|e| bad(&e))?;
        let channels = info.color_type.samples();
        let rgba = match channels {
            4 => buf,
            3 => buf
                .chunks(3)
                .flat_map(|p| [p[0], p[1], p[2], 255])
                .collect(),
            n => return Err(bad(&format!("{n} channels"))),
        };
        Ok(Image {
            width: info.width,
            height: info.height,
            rgba,
        })
    }

    /// The pixel at `(x, y)`, `None` outside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = ((y * self.width + x) * 4) as usize;
        self.rgba.get(i..i + 3).map(|p| [p[0], p[1], p[2]])
    }

    /// Pixels of the rectangle `(x, y, w, h)` within `tolerance` of `color`.
    pub fn count(&self, rect: (u32, u32, u32, u32), color: [u8; 3], tolerance: u8) -> usize {
        let (x0, y0, w, h) = rect;
        let mut n = 0;
        for y in y0..(y0 + h).min(self.height) {
            for x in x0..(x0 + w).min(self.width) {
                if let Some(p) = self.pixel(x, y)
                    && p.iter().zip(color).all(|(a, b)| a.abs_diff(b) <= tolerance)
                {
                    n += 1;
                }
            }
        }
        n
    }

    /// Distinct colours (a blank page has one or two).
    pub fn distinct_colors(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        for p in self.rgba.chunks(4) {
            seen.insert([p[0], p[1], p[2]]);
        }
        seen.len()
    }
}

/// The vendored axe-core (`testdata/axe-core/axe.min.js`, see `testdata/PROVENANCE.md`).
pub fn axe_source() -> std::io::Result<String> {
    std::fs::read_to_string(axe_path())
}

/// Where the vendored axe-core is.
pub fn axe_path() -> PathBuf {
    crate::paths::repo_root().join("testdata/axe-core/axe.min.js")
}
