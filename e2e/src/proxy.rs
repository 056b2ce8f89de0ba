//! A small HTTP `CONNECT` proxy on loopback, for the tests of the controller behind a proxy: it
//! tunnels only to the destinations it is given (a host name that resolves nowhere, e.g.
//! `hub.update-status.invalid:6443`, mapped to the real address), so a client that does not go
//! through it cannot reach them; it requires `Proxy-Authorization: Basic` when given
//! credentials (`407` otherwise), and counts the tunnels it opened per destination.
//!
//! Only what the tests need: one request per connection (`CONNECT host:port`), then the bytes
//! copied both ways until either side closes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What the proxy saw.
#[derive(Debug, Default)]
struct Seen {
    /// Tunnels opened, per destination as requested (`host:port`).
    tunnels: BTreeMap<String, u64>,
    /// Tunnels open now.
    open: u64,
    /// Requests refused: (status, first line).
    refused: Vec<(u16, String)>,
}

/// A running proxy; it stops accepting on drop (the tunnels open end with their clients).
pub struct ConnectProxy {
    port: u16,
    seen: Arc<Mutex<Seen>>,
    task: JoinHandle<()>,
    credentials: Option<(String, String)>,
}

impl Drop for ConnectProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ConnectProxy {
    /// Listens on a free loopback port; tunnels `CONNECT <requested>` to `routes[requested]`
    /// (a `host:port` this machine can reach), refuses anything else (`403`); with
    /// `credentials`, refuses a request without them (`407`).
    pub async fn start(
        routes: BTreeMap<String, String>,
        credentials: Option<(&str, &str)>,
    ) -> std::io::Result<ConnectProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let expected = credentials.map(|(u, p)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        });
        let routes = Arc::new(routes);
        let task_seen = seen.clone();
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let (seen, routes, expected) =
                    (task_seen.clone(), routes.clone(), expected.clone());
                tokio::spawn(async move {
                    let _ = serve(conn, &routes, expected.as_deref(), &seen).await;
                });
            }
        });
        Ok(ConnectProxy {
            port,
            seen,
            task,
            credentials: credentials.map(|(u, p)| (u.to_string(), p.to_string())),
        })
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its URL, with its credentials if it has some (`http://user:password@127.0.0.1:port`).
    pub fn url(&self) -> String {
        match &self.credentials {
            Some((u, p)) => format!("http://{u}:{p}@127.0.0.1:{}", self.port),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }

    /// Tunnels opened so far to `destination` (`host:port` as requested).
    pub fn tunnels(&self, destination: &str) -> u64 {
        self.lock().tunnels.get(destination).copied().unwrap_or(0)
    }

    /// Tunnels open now.
    pub fn open(&self) -> u64 {
        self.lock().open
    }

    /// The requests refused: (status, request line).
    pub fn refused(&self) -> Vec<(u16, String)> {
        self.lock().refused.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One client connection: the `CONNECT` request, then the tunnel.
async fn serve(
    mut conn: TcpStream,
    routes: &BTreeMap<String, String>,
    expected: Option<&str>,
    seen: &Mutex<Seen>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf).await?;
        if n == 0 || head.len() > 16 * 1024 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default().to_string();
    let auth = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("proxy-authorization"))
        .map(|(_, v)| v.trim().to_string());
    let refuse = |status: u16, reason: &str| {
        if let Ok(mut s) = seen.lock() {
            s.refused.push((status, first.clone()));
        }
        let extra = if status == 407 {
            "Proxy-Authenticate: Basic realm=\"e2e\"\r\n"
        } else {
            ""
        };
        format!("HTTP/1.1 {status} {reason}\r\n{extra}Content-Length: 0\r\n\r\n")
    };
    let mut parts = first.split_whitespace();
    let (method, target) = (parts.next(), parts.next());
    let Some(target) = target.filter(|_| method == Some("CONNECT")) else {
        conn.write_all(refuse(405, "Method Not Allowed").as_bytes())
            .await?;
        return Ok(());
    };
    if expected.is_some() && auth.as_deref() != expected {
        conn.write_all(refuse(407, "Proxy Authentication Required").as_bytes())
            .await?;
        return Ok(());
    }
    let Some(route) = routes.get(target) else {
        conn.write_all(refuse(403, "Forbidden").as_bytes()).await?;
        return Ok(());
    };
    let mut upstream = match TcpStream::connect(route).await {
        Ok(u) => u,
        Err(_) => {
            conn.write_all(refuse(502, "Bad Gateway").as_bytes())
                .await?;
            return Ok(());
        }
    };
    conn.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await?;
    if let Ok(mut s) = seen.lock() {
        *s.tunnels.entry(target.to_string()).or_default() += 1;
        s.open += 1;
    }
    let _ = tokio::io::copy_bidirectional(&mut conn, &mut upstream).await;
    if let Ok(mut s) = seen.lock() {
        s.open = s.open.saturating_sub(1);
    }
    Ok(())
}
