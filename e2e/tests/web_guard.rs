//! What the web view's server refuses (issue #38 items 3 and 4), against the real
//! `kubectl update-status --fleet --web` on the local control plane, the hub's calls counted by
//! the API server itself (`apiserver_request_total`, `apiserver_longrunning_requests`):
//!
//! - through a real HTTP client (hyper): without the printed URL's token, or with a wrong one,
//!   401; the token sets the cookie (`HttpOnly; SameSite=Strict; Path=/s/<session>`, the session's
//!   random path, outside which everything is 404), which then suffices,
//!   events included; a cross-site request (`Sec-Fetch-Site`, a foreign `Origin`) is refused
//!   even with the cookie, and asks nothing of the hub; a cluster name that is not a DNS name
//!   (`..`, `%2e%2e`, upper case, 64 characters, ...) gets 400 without any hub call; at most 8
//!   clusters are watched at once, the least recently viewed closed;
//! - in real headless Chromium: the printed URL opens the view, the token leaves the address
//!   bar, the cookie is out of the page's reach (`HttpOnly`); a page served from another port
//!   of 127.0.0.1 (same site: the browser sends it the cookie) cannot make the view open a
//!   cluster on the hub.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::path::PathBuf;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt as _, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use update_status_e2e::browser::{self, Chromium, Open};
use update_status_e2e::controller::workspace_bin;
use update_status_e2e::web::WebServer;
use update_status_e2e::{TestEnv, exclusive_cluster_state, wait_for};

/// The page's session path (`/s/<random>`, as the page's script reads it): the server serves
/// nothing outside it.
const BASE_JS: &str = "(location.pathname.match(/^\\/s\\/[A-Za-z0-9_-]+/) || [''])[0]";

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type TestResult = Result<(), BoxError>;

/// `drill::MAX_OPEN` of the CLI (cli/src/web/drill.rs).
const MAX_OPEN: usize = 8;
/// Namespaced watches of one open cluster (three sets of insights, control plane, pools).
const WATCHES_PER_CLUSTER: u64 = 5;

fn cli_bin() -> PathBuf {
    workspace_bin("kubectl-update_status", "UPDATE_STATUS_CLI_BIN")
}

/// Namespace names of this run (never created: a list or watch in a namespace that does not
/// exist is answered, empty, and no namespace deletion lists anything meanwhile).
fn namespace(i: usize) -> String {
    format!("web-guard-{}-{i}", std::process::id())
}

struct Answer {
    status: u16,
    headers: http::HeaderMap,
    body: String,
}

/// GET `url` with `headers`; the body is read unless it is an event stream (which never ends).
async fn get(
    client: &HttpClient<HttpConnector, Empty<Bytes>>,
    url: &str,
    headers: &[(&str, &str)],
) -> Result<Answer, BoxError> {
    let mut request = http::Request::get(url);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = tokio::time::timeout(
        Duration::from_secs(30),
        client.request(request.body(Empty::new())?),
    )
    .await
    .map_err(|_| format!("GET {url}: no answer within 30 s"))??;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let stream = headers
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let body = if stream {
        String::new()
    } else {
        let bytes = tokio::time::timeout(Duration::from_secs(30), response.into_body().collect())
            .await
            .map_err(|_| format!("GET {url}: body not read within 30 s"))??
            .to_bytes();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Ok(Answer {
        status,
        headers,
        body,
    })
}

/// Sum of the samples of `metric` whose labels contain every `labels` item.
fn metric_sum(text: &str, metric: &str, labels: &[&str]) -> u64 {
    text.lines()
        .filter(|l| {
            l.strip_prefix(metric)
                .is_some_and(|rest| rest.starts_with('{'))
        })
        .filter(|l| labels.iter().all(|want| l.contains(want)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// What the API server counts of our kinds in namespaces: lists answered so far, watches open
/// now. (The fleet's own reads are cluster-wide; only a cluster's view reads a namespace.)
async fn hub_reads(env: &TestEnv) -> Result<(u64, u64), BoxError> {
    let text = env.apiserver_metrics().await?;
    let ours = "group=\"update.openshift.io\"";
    let lists = metric_sum(
        &text,
        "apiserver_request_total",
        &["verb=\"LIST\"", "scope=\"namespace\"", ours],
    );
    let watches = metric_sum(
        &text,
        "apiserver_longrunning_requests",
        &["verb=\"WATCH\"", "scope=\"namespace\"", ours],
    );
    Ok((lists, watches))
}

async fn hub_lists(env: &TestEnv) -> Result<u64, BoxError> {
    Ok(hub_reads(env).await?.0)
}

/// The lists counted once they reach `want` (the API server counts a request just after
/// answering it), or after 10 s.
async fn lists_reach(env: &TestEnv, want: u64) -> Result<u64, BoxError> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let lists = hub_lists(env).await?;
        if lists >= want || Instant::now() > deadline {
            return Ok(lists);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// No namespace is being deleted (the namespace controller lists every kind in one it deletes,
/// ours included: the counts would move without the view).
async fn no_namespace_terminating(env: &TestEnv) -> TestResult {
    let api: Api<Namespace> = Api::all(env.client());
    wait_for(Duration::from_secs(120), "no namespace terminating", || {
        let api = api.clone();
        async move {
            api.list(&ListParams::default()).await.is_ok_and(|list| {
                list.items.iter().all(|n| {
                    n.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Terminating")
                })
            })
        }
    })
    .await?;
    Ok(())
}

/// Waits until the namespaced watches of our kinds number `want`.
async fn watches_become(env: &TestEnv, want: u64) -> Result<u64, BoxError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, watches) = hub_reads(env).await?;
        if watches == want || Instant::now() > deadline {
            return Ok(watches);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_server_refuses_what_its_page_never_sends() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let t0 = Instant::now();
    let env = TestEnv::new().await?;
    let server = WebServer::start(&cli_bin(), &["--fleet"], Some(env.kubeconfig_path()))?;
    let (origin, token) = (server.origin().to_owned(), server.token().to_owned());
    let base = server.base().to_owned();
    assert!(
        token.len() == 43
            && token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "the printed URL has no 32-byte URL-safe token: {}",
        server.banner
    );
    let port = origin.rsplit(':').next().ok_or("no port")?;
    let cookie_name = format!("update-status-{port}");
    let client: HttpClient<HttpConnector, Empty<Bytes>> =
        HttpClient::builder(TokioExecutor::new()).build_http();
    let at = |path: &str| format!("{base}{path}");

    // --- the token ---------------------------------------------------------------------------
    let mut wrong = token.clone().into_bytes();
    wrong[0] = if wrong[0] == b'A' { b'B' } else { b'A' };
    let wrong = String::from_utf8(wrong)?;
    let bad_cookie = format!("{cookie_name}={wrong}");
    for (path, headers) in [
        ("/".to_owned(), vec![]),
        ("/api/view".to_owned(), vec![]),
        ("/events".to_owned(), vec![]),
        ("/app.js".to_owned(), vec![]),
        (format!("/?token={wrong}"), vec![]),
        (format!("/api/view?token={}", &token[..42]), vec![]),
        (
            "/api/view".to_owned(),
            vec![("cookie", bad_cookie.as_str())],
        ),
    ] {
        let a = get(&client, &at(&path), &headers).await?;
        assert_eq!(a.status, 401, "{path} {headers:?}: {}", a.body);
        assert!(a.headers.get(http::header::SET_COOKIE).is_none(), "{path}");
        assert!(
            !a.body.contains(&token),
            "{path}: the answer shows the token"
        );
    }
    let first = get(&client, &at(&format!("/?token={token}")), &[]).await?;
    assert_eq!(first.status, 200, "{}", first.body);
    let set_cookie = first
        .headers
        .get(http::header::SET_COOKIE)
        .ok_or("the token's answer sets no cookie")?
        .to_str()?;
    assert_eq!(
        set_cookie,
        format!(
            "{cookie_name}={token}; HttpOnly; SameSite=Strict; Path={}",
            base.strip_prefix(&origin).unwrap_or(&base)
        )
    );
    // Nothing outside the session's path, even to the token (its cookie is never sent there).
    for outside in ["/", "/api/view", "/events"] {
        let a = get(&client, &format!("{origin}{outside}?token={token}"), &[]).await?;
        assert_eq!(a.status, 404, "{outside}: {}", a.body);
    }
    let cookie = format!("{cookie_name}={token}");
    let with_cookie = [("cookie", cookie.as_str())];
    for path in ["/", "/api/view", "/app.js", "/c/some-ns"] {
        let a = get(&client, &at(path), &with_cookie).await?;
        assert_eq!(a.status, 200, "{path} with the cookie: {}", a.body);
    }
    let events = get(&client, &at("/events"), &with_cookie).await?;
    assert_eq!(events.status, 200);
    assert_eq!(
        events
            .headers
            .get(http::header::CONTENT_TYPE)
            .map(|v| v.as_bytes()),
        Some(&b"text/event-stream"[..])
    );
    let rebound = get(
        &client,
        &at("/api/view"),
        &[("cookie", cookie.as_str()), ("host", "rebound.example")],
    )
    .await?;
    assert_eq!(rebound.status, 403, "a DNS name's Host: {}", rebound.body);

    // --- cross-site, and names: refused before any hub call -------------------------------
    no_namespace_terminating(&env).await?;
    let (lists0, watches0) = hub_reads(&env).await?;
    let victim = format!("/api/c/{}", namespace(99));
    for headers in [
        [
            ("sec-fetch-site", "cross-site"),
            ("cookie", cookie.as_str()),
        ],
        [("sec-fetch-site", "same-site"), ("cookie", cookie.as_str())],
        [
            ("origin", "http://evil.example"),
            ("cookie", cookie.as_str()),
        ],
        [("origin", "null"), ("cookie", cookie.as_str())],
    ] {
        let a = get(&client, &at(&victim), &headers).await?;
        assert_eq!(a.status, 403, "{headers:?}: {}", a.body);
        let a = get(
            &client,
            &at(&format!("/events/c/{}", namespace(99))),
            &headers,
        )
        .await?;
        assert_eq!(a.status, 403, "events, {headers:?}: {}", a.body);
    }
    let long = "a".repeat(64);
    let names = [
        "/api/c/..".to_owned(),
        "/api/c/%2E%2E".to_owned(),
        "/events/c/..".to_owned(),
        "/api/c/a..b".to_owned(),
        "/api/c/a.b".to_owned(),
        "/api/c/UPPER".to_owned(),
        "/api/c/-a".to_owned(),
        "/api/c/a_b".to_owned(),
        "/api/c/%2Fx".to_owned(),
        format!("/api/c/{long}"),
        "/api/c/ns/..".to_owned(),
        "/api/c/ns/a..b".to_owned(),
        "/events/c/ns/.hidden".to_owned(),
        format!("/api/c/ns/{long}"),
        "/c/..".to_owned(),
    ];
    for path in &names {
        let a = get(&client, &at(path), &with_cookie).await?;
        assert_eq!(a.status, 400, "{path}: {}", a.body);
        assert!(a.body.contains("not a "), "{path}: {}", a.body);
    }
    let (lists1, watches1) = hub_reads(&env).await?;
    assert_eq!(
        (lists1 - lists0, watches1),
        (0, watches0),
        "refused requests listed or watched on the hub"
    );
    eprintln!(
        "{} cross-site and {} badly named requests refused; the hub was asked nothing",
        8,
        names.len()
    );

    // --- the cap -------------------------------------------------------------------------------
    // The positive control: a valid name lists (5 lists) and watches (5 watches).
    let view = |i: usize| at(&format!("/api/c/{}", namespace(i)));
    for i in 0..MAX_OPEN + 2 {
        let a = get(&client, &view(i), &with_cookie).await?;
        assert_eq!(a.status, 200, "{}: {}", namespace(i), a.body);
        if i == 0 {
            let lists = lists_reach(&env, lists1 + 5).await?;
            assert!(lists >= lists1 + 5, "opening a cluster listed nothing");
        }
    }
    let want = watches0 + MAX_OPEN as u64 * WATCHES_PER_CLUSTER;
    let got = watches_become(&env, want).await?;
    assert_eq!(
        got,
        want,
        "{} clusters opened: {got} namespaced watches, want {want} ({MAX_OPEN} clusters)",
        MAX_OPEN + 2
    );
    // Open now: 2..=9, least recently viewed first. Viewing 2 lists nothing (open) and makes it
    // the most recent; 0 is opened anew (lists) and closes 3, not 2.
    let before = hub_lists(&env).await?;
    assert_eq!(get(&client, &view(2), &with_cookie).await?.status, 200);
    assert_eq!(
        hub_lists(&env).await?,
        before,
        "an open cluster was listed again"
    );
    assert_eq!(get(&client, &view(0), &with_cookie).await?.status, 200);
    let after = lists_reach(&env, before + 5).await?;
    assert!(after >= before + 5, "a closed cluster was not opened anew");
    assert_eq!(get(&client, &view(2), &with_cookie).await?.status, 200);
    assert_eq!(
        hub_lists(&env).await?,
        after,
        "the cluster viewed last but one was closed (not the least recently viewed)"
    );
    assert_eq!(get(&client, &view(3), &with_cookie).await?.status, 200);
    assert!(
        lists_reach(&env, after + 5).await? >= after + 5,
        "the least recently viewed cluster was not the one closed"
    );
    assert_eq!(watches_become(&env, want).await?, want);
    eprintln!(
        "{} clusters opened, {MAX_OPEN} watched; the least recently viewed closed; {:.1} s",
        MAX_OPEN + 2,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

#[tokio::test]
async fn a_page_of_another_port_cannot_make_the_view_watch() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let t0 = Instant::now();
    let env = TestEnv::new().await?;
    let server = WebServer::start(&cli_bin(), &["--fleet"], Some(env.kubeconfig_path()))?;
    let origin = server.base().to_owned();
    let browser = Chromium::shared()?.connect().await?;
    // The printed URL, as the user opens it: the view, the token gone from the address bar and
    // the history entry, the cookie out of the page's reach.
    let page = browser::open(&browser, &server.url, &Open::default()).await?;
    let (href, cookies): (String, String) =
        browser::eval(&page, "[location.href, document.cookie]").await?;
    assert_eq!(
        href,
        format!("{origin}/"),
        "the token stayed in the address"
    );
    assert_eq!(cookies, "", "the page can read the cookie");
    // The page's own request for a cluster opens it on the hub (the counts can move).
    no_namespace_terminating(&env).await?;
    let (lists0, watches0) = hub_reads(&env).await?;
    let own: u16 = browser::eval(
        &page,
        &format!(
            "fetch({BASE_JS} + '/api/c/{}').then((r) => r.status)",
            namespace(100)
        ),
    )
    .await?;
    assert_eq!(own, 200);
    let lists1 = lists_reach(&env, lists0 + 5).await?;
    assert!(
        lists1 >= lists0 + 5,
        "the page's own request listed nothing"
    );
    let watches1 = watches_become(&env, watches0 + WATCHES_PER_CLUSTER).await?;
    assert_eq!(watches1, watches0 + WATCHES_PER_CLUSTER);
    // Another local server's page (another user's, or any page the admin opens there): the same
    // site, so the browser sends it the cookie; every way a page can make a request.
    let evil = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let evil_url = format!("http://{}/", evil.local_addr()?);
    let evil_server = tokio::spawn(serve_blank(evil));
    let attacker = browser.new_page("about:blank").await?;
    attacker.goto(&evil_url).await?;
    let target = |i: usize| format!("{origin}/api/c/{}", namespace(i));
    let events = format!("{origin}/events/c/{}", namespace(201));
    let script = format!(
        r#"(async () => {{
          // Each settles once its request was answered (a blocked answer too: CORP, CORS).
          const done = [];
          done.push(fetch({a:?}, {{ mode: 'no-cors', credentials: 'include' }}).then(() => 'fetch', () => 'fetch'));
          done.push(new Promise((r) => {{ const i = new Image(); i.onload = i.onerror = () => r('img'); i.src = {b:?}; }}));
          done.push(new Promise((r) => {{ const s = document.createElement('script'); s.onload = s.onerror = () => r('script'); s.src = {c:?}; document.body.append(s); }}));
          done.push(new Promise((r) => {{ const e = new EventSource({d:?}, {{ withCredentials: true }}); e.onerror = () => {{ e.close(); r('events'); }}; }}));
          return (await Promise.all(done)).join(',');
        }})()"#,
        a = target(200),
        b = target(202),
        c = target(203),
        d = events,
    );
    let ran: String = browser::eval(&attacker, &script).await?;
    assert_eq!(ran, "fetch,img,script,events");
    let (lists2, watches2) = hub_reads(&env).await?;
    assert_eq!(
        (lists2 - lists1, watches2),
        (0, watches1),
        "a page of another port made the view list or watch on the hub"
    );
    attacker.close().await?;
    page.close().await?;
    evil_server.abort();
    eprintln!(
        "a same-site page's four requests asked nothing of the hub; {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Answers every request on `listener` with an empty page (the other local server).
async fn serve_blank(listener: tokio::net::TcpListener) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    while let Ok((mut conn, _)) = listener.accept().await {
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf).await;
            let body = "<!doctype html><html><head><title>another server</title></head><body></body></html>";
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = conn.write_all(answer.as_bytes()).await;
        });
    }
}
