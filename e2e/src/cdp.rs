//! A small client of the Chrome DevTools Protocol: JSON messages over one WebSocket
//! (`tokio-tungstenite`) to the browser, one flattened session per page.
//!
//! Why not a crate: `chromiumoxide` (the maintained Rust client) generates bindings for the
//! whole protocol; its `chromiumoxide_cdp` alone took about 4 minutes of a fresh debug build on 2
//! busy cores (a 108 MB rlib, checked again by clippy) and it brings reqwest, url and ICU. The
//! tests use ten commands and one event: [`Browser::new_page`], [`Page::execute`],
//! [`Page::goto`] (waits for `Page.loadEventFired`), [`Page::evaluate`], [`Page::screenshot`],
//! [`Page::close`]. `puppeteer-core` would need Node.js.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine as _;
use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// What went wrong talking to the browser.
#[derive(Debug, thiserror::Error)]
pub enum CdpError {
    /// The WebSocket could not be opened, or closed.
    #[error("DevTools connection: {0}")]
    Connection(String),
    /// The browser answered a command with an error.
    #[error("{method}: {message}")]
    Command {
        /// The command.
        method: String,
        /// The browser's message.
        message: String,
    },
    /// No answer (or event) in time.
    #[error("{0}: no answer within {1:?}")]
    Timeout(String, Duration),
    /// The page threw, or its value was not what was asked for.
    #[error("{0}")]
    Page(String),
}

/// An answer, or the browser's error message.
type Reply = Result<Value, String>;

struct Conn {
    out: mpsc::UnboundedSender<Message>,
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
    /// Events: (session, method, params).
    events: broadcast::Sender<(Option<String>, String, Value)>,
}

impl Conn {
    async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.out
            .send(Message::text(msg.to_string()))
            .map_err(|_| CdpError::Connection("closed".to_owned()))?;
        match tokio::time::timeout(timeout, rx).await {
            Err(_) => {
                self.waiting
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
                Err(CdpError::Timeout(method.to_owned(), timeout))
            }
            Ok(Err(_)) => Err(CdpError::Connection("closed".to_owned())),
            Ok(Ok(Err(message))) => Err(CdpError::Command {
                method: method.to_owned(),
                message,
            }),
            Ok(Ok(Ok(v))) => Ok(v),
        }
    }

    /// Routes one message from the browser: an answer to its caller, an event to the
    /// subscribers.
    fn route(&self, text: &str) {
        let Ok(mut v) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if let Some(id) = v.get("id").and_then(Value::as_u64) {
            let waiter = self
                .waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
            if let Some(w) = waiter {
                let reply = match v.get("error") {
                    Some(e) => Err(e
                        .get("message")
                        .and_then(Value::as_str)
                        .map_or_else(|| e.to_string(), str::to_owned)),
                    None => Ok(v.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
                };
                let _ = w.send(reply);
            }
        } else if let Some(method) = v.get("method").and_then(Value::as_str) {
            let session = v
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let method = method.to_owned();
            let params = v.get_mut("params").map(Value::take).unwrap_or(Value::Null);
            let _ = self.events.send((session, method, params));
        }
    }
}

const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// A connection to the browser; its reader and writer are tasks of the runtime that made it.
#[derive(Clone)]
pub struct Browser {
    conn: Arc<Conn>,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Browser")
    }
}

impl Browser {
    /// Connects to the browser's DevTools WebSocket (`ws://127.0.0.1:<port>/devtools/browser/...`).
    pub async fn connect(ws: &str) -> Result<Browser, CdpError> {
        let (socket, _) = tokio_tungstenite::connect_async(ws)
            .await
            .map_err(|e| CdpError::Connection(format!("{ws}: {e}")))?;
        let (mut sink, mut stream) = socket.split();
        let (out, mut queue) = mpsc::unbounded_channel::<Message>();
        let (events, _) = broadcast::channel(4096);
        let conn = Arc::new(Conn {
            out,
            next: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
            events,
        });
        tokio::spawn(async move {
            while let Some(m) = queue.recv().await {
                if sink.send(m).await.is_err() {
                    return;
                }
            }
        });
        // The reader holds the connection weakly: it ends when the socket closes or every
        // `Browser` and `Page` is gone (then the writer's queue closes and the socket with it).
        let weak = Arc::downgrade(&conn);
        tokio::spawn(async move {
            while let Some(Ok(m)) = stream.next().await {
                let Some(conn) = weak.upgrade() else { return };
                if let Message::Text(t) = m {
                    conn.route(t.as_str());
                }
            }
            // Closed: every caller still waiting gets an error.
            if let Some(conn) = weak.upgrade() {
                conn.waiting
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clear();
            }
        });
        Ok(Browser { conn })
    }

    /// A new tab showing `url`, with its own session (events of the `Page` domain enabled).
    pub async fn new_page(&self, url: &str) -> Result<Page, CdpError> {
        let target = self
            .conn
            .call(
                None,
                "Target.createTarget",
                json!({"url": url}),
                CALL_TIMEOUT,
            )
            .await?;
        let target = str_field(&target, "targetId")?;
        let attached = self
            .conn
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
                CALL_TIMEOUT,
            )
            .await?;
        let page = Page {
            conn: Arc::clone(&self.conn),
            session: str_field(&attached, "sessionId")?,
            target,
        };
        page.execute("Page.enable", json!({})).await?;
        Ok(page)
    }
}

fn str_field(v: &Value, name: &str) -> Result<String, CdpError> {
    v.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| CdpError::Page(format!("no {name} in {v}")))
}

/// One tab.
#[derive(Clone)]
pub struct Page {
    conn: Arc<Conn>,
    session: String,
    target: String,
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Page({})", self.target)
    }
}

impl Page {
    /// Runs the command `method` in this page's session.
    pub async fn execute(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        self.conn
            .call(Some(&self.session), method, params, CALL_TIMEOUT)
            .await
    }

    /// Navigates to `url` and waits for its `load` event.
    pub async fn goto(&self, url: &str) -> Result<(), CdpError> {
        let mut events = self.conn.events.subscribe();
        let nav = self.execute("Page.navigate", json!({"url": url})).await?;
        if let Some(e) = nav.get("errorText").and_then(Value::as_str) {
            return Err(CdpError::Page(format!("navigating to {url}: {e}")));
        }
        let timeout = Duration::from_secs(30);
        let loaded = async {
            loop {
                match events.recv().await {
                    Ok((Some(s), m, _)) if s == self.session && m == "Page.loadEventFired" => {
                        return Ok(());
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => {
                        return Err(CdpError::Connection("closed".to_owned()));
                    }
                }
            }
        };
        tokio::time::timeout(timeout, loaded)
            .await
            .map_err(|_| CdpError::Timeout(format!("loading {url}"), timeout))?
    }

    /// Evaluates `expression` in the page (a promise is awaited) and returns its JSON value
    /// (`null` for `undefined`); a thrown exception is an error.
    pub async fn evaluate(&self, expression: &str) -> Result<Value, CdpError> {
        let mut r = self
            .execute(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            )
            .await?;
        if let Some(e) = r.get("exceptionDetails") {
            let text = e
                .pointer("/exception/description")
                .or_else(|| e.get("text"))
                .and_then(Value::as_str)
                .unwrap_or("an exception");
            return Err(CdpError::Page(text.to_owned()));
        }
        Ok(r.pointer_mut("/result/value")
            .map(Value::take)
            .unwrap_or(Value::Null))
    }

    /// A PNG of the viewport.
    pub async fn screenshot(&self) -> Result<Vec<u8>, CdpError> {
        let r = self
            .execute("Page.captureScreenshot", json!({"format": "png"}))
            .await?;
        base64::engine::general_purpose::STANDARD
            .decode(str_field(&r, "data")?)
            .map_err(|e| CdpError::Page(format!("screenshot: {e}")))
    }

    /// Closes the tab.
    pub async fn close(self) -> Result<(), CdpError> {
        self.conn
            .call(
                None,
                "Target.closeTarget",
                json!({"targetId": self.target}),
                CALL_TIMEOUT,
            )
            .await
            .map(drop)
    }
}
