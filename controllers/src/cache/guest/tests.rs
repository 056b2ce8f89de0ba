//! The Secret → client path and the reasons of unreachable hosted clusters: bad input gives a
//! clear reason naming the Secret, and no reason ever carries a credential. The connection
//! tests use real sockets (a closed local port), no mock.

use super::kubeconfig::MAX_REASON;
use super::*;
use k8s_openapi::ByteString;
use kube::core::Status;

const TOKEN: &str = "sha256~Sup3rSecretT0kenValue-do-not-log";
const PASSWORD: &str = "hunter2-Pa55word";
const SECRET: &str = "clusters/demo-admin-kubeconfig";

fn kubeconfig(server: &str, user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    insecure-skip-tls-verify: true\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\nusers:\n- name: u\n  user:\n{user}"
    )
}

fn token_user() -> String {
    format!("    token: {TOKEN}\n")
}

fn secret(data: &[(&str, &[u8])]) -> Secret {
    let mut s = Secret::default();
    s.metadata.name = Some("demo-admin-kubeconfig".into());
    s.data = Some(
        data.iter()
            .map(|(k, v)| (k.to_string(), ByteString(v.to_vec())))
            .collect(),
    );
    s
}

/// A local port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    drop(l);
    port
}

fn clean(text: &str) {
    for s in [TOKEN, PASSWORD, "Sup3rSecret", "hunter2"] {
        assert!(!text.contains(s), "a credential leaked: {text}");
    }
}

#[test]
fn a_secret_without_the_key_names_the_secret() {
    let e = kubeconfig_of(&secret(&[("value", b"x")]), SECRET).expect_err("no key");
    assert_eq!(
        e.to_string(),
        "Secret clusters/demo-admin-kubeconfig has no key \"kubeconfig\""
    );
    let ok = kubeconfig_of(&secret(&[("kubeconfig", b"abc")]), SECRET).expect("key");
    assert_eq!(ok, b"abc");
}

#[test]
fn bad_yaml_with_a_token_in_it_gives_a_fixed_reason() {
    // The YAML error is right after the token: a parser message would quote it.
    let text = format!("users:\n- name: u\n  user:\n    token: {TOKEN}\n   bad: [\n");
    let e = parse_kubeconfig(text.as_bytes(), SECRET).expect_err("not YAML");
    let msg = e.to_string();
    assert_eq!(
        msg,
        "the kubeconfig in Secret clusters/demo-admin-kubeconfig is not a valid kubeconfig (YAML)"
    );
    clean(&msg);
    let e = parse_kubeconfig(&[0xff, 0xfe, 0x00], SECRET).expect_err("not UTF-8");
    assert!(e.to_string().contains("is not UTF-8"), "{e}");
}

#[test]
fn exec_plugins_auth_providers_and_files_are_refused() {
    for (user, what) in [
        (
            format!(
                "    token: {TOKEN}\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [\"-c\", \"echo {TOKEN}\"]\n"
            ),
            "exec credential plugin",
        ),
        (
            "    auth-provider:\n      name: oidc\n      config:\n        id-token: abc\n"
                .to_string(),
            "auth provider",
        ),
        (
            "    tokenFile: /var/run/secrets/token\n".to_string(),
            "token file",
        ),
        (
            "    client-certificate: /etc/passwd\n    client-key: /etc/shadow\n".to_string(),
            "client certificate or key files",
        ),
    ] {
        let text = kubeconfig("https://127.0.0.1:6443", &user);
        let e = parse_kubeconfig(text.as_bytes(), SECRET).expect_err(what);
        let msg = e.to_string();
        assert!(msg.contains(what), "{what}: {msg}");
        assert!(msg.contains(SECRET), "{msg}");
        clean(&msg);
        assert!(!msg.contains("/bin/sh") && !msg.contains("/etc/"), "{msg}");
    }
    let ca_file = kubeconfig("https://127.0.0.1:6443", &token_user()).replace(
        "insecure-skip-tls-verify: true",
        "certificate-authority: /etc/ca.crt",
    );
    let e = parse_kubeconfig(ca_file.as_bytes(), SECRET).expect_err("ca file");
    assert!(e.to_string().contains("certificate authority file"), "{e}");
}

#[tokio::test]
async fn a_kubeconfig_kube_refuses_gives_a_fixed_reason() {
    let no_context = kubeconfig("https://127.0.0.1:6443", &token_user())
        .replace("current-context: x", "current-context: nope");
    let e = guest_client(no_context.as_bytes(), SECRET)
        .await
        .expect_err("no such context");
    assert_eq!(
        e.to_string(),
        "the kubeconfig in Secret clusters/demo-admin-kubeconfig names a current-context that it does not define"
    );
    let bad_key = kubeconfig(
        "https://127.0.0.1:6443",
        &format!("    client-certificate-data: \"!!\"\n    client-key-data: \"{TOKEN}!!\"\n"),
    );
    let e = guest_client(bad_key.as_bytes(), SECRET)
        .await
        .expect_err("bad base64");
    clean(&e.to_string());
    // kube decodes the key when it makes the client.
    assert!(
        e.to_string()
            .ends_with("cannot make a client (the certificate authority or client certificate/key cannot be used)"),
        "{e}"
    );
}

#[tokio::test]
async fn a_closed_port_is_unreachable_without_the_credentials() {
    let port = closed_port();
    // User information in the server URL and a token: neither may show.
    let server = format!("https://admin:{PASSWORD}@127.0.0.1:{port}");
    let text = kubeconfig(&server, &token_user());
    let g = guest_client(text.as_bytes(), SECRET)
        .await
        .expect("a valid kubeconfig");
    assert_eq!(g.server, format!("https://127.0.0.1:{port}/"));
    assert!(!format!("{g:?} {:?}", g.credentials).contains(TOKEN));
    let api: Api<DynamicObject> = Api::all_with(g.client.clone(), &ApiResource::erase::<Node>(&()));
    let err = api
        .list(&Default::default())
        .await
        .expect_err("nothing listens");
    let why = watch_reason(
        &watcher::Error::InitialListFailed(err),
        "Node",
        &g.server,
        &g.credentials,
    );
    assert!(
        why.starts_with(&format!("cannot reach https://127.0.0.1:{port}/: ")),
        "{why}"
    );
    assert!(why.to_lowercase().contains("refused"), "{why}");
    clean(&why);

    // The same through the guest watches: Unreachable (not Waiting) once the first list fails.
    let wake = Arc::new(Notify::new());
    let conn = GuestConn::start(g, "clusters/demo", &wake);
    let view = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match conn.view() {
                GuestView::Waiting(_) => wake.notified().await,
                v => return v,
            }
        }
    })
    .await
    .expect("a verdict within 10 s");
    let GuestView::Unreachable(why) = view else {
        panic!("a closed port is unreachable: {view:?}");
    };
    assert!(why.contains(&format!("127.0.0.1:{port}")), "{why}");
    clean(&why);
}

fn api_error(code: u16) -> watcher::Error {
    watcher::Error::InitialListFailed(kube::Error::Api(
        Status::failure(&format!("token {TOKEN} rejected"), "Unauthorized")
            .with_code(code)
            .boxed(),
    ))
}

#[test]
fn reasons_say_what_failed_and_never_carry_credentials() {
    let creds = Credentials(vec![TOKEN.to_string(), PASSWORD.to_string()]);
    let server = "https://api.demo.example:6443/";
    let r401 = watch_reason(&api_error(401), "Node", server, &creds);
    assert_eq!(
        r401,
        "https://api.demo.example:6443/ does not accept the kubeconfig's credentials (401 Unauthorized)"
    );
    let r403 = watch_reason(&api_error(403), "ClusterOperator", server, &creds);
    assert!(
        r403.contains("may not list ClusterOperator (403 Forbidden)"),
        "{r403}"
    );
    assert!(watch_reason(&api_error(503), "Node", server, &creds).contains("answered 503"));
    // A transport error quoting a URL with a password and the token itself.
    let service = kube::Error::Service(
        format!("connecting to https://admin:{PASSWORD}@api.demo.example:6443/?token={TOKEN} failed: bearer {TOKEN}").into(),
    );
    let why = watch_reason(
        &watcher::Error::WatchFailed(service),
        "Node",
        server,
        &creds,
    );
    clean(&why);
    assert!(
        why.starts_with("cannot reach https://api.demo.example:6443/: "),
        "{why}"
    );
    assert!(
        why.contains("https://api.demo.example:6443/?token=REDACTED"),
        "{why}"
    );
    assert!(why.chars().count() <= MAX_REASON + 3);
}

fn hosted_cluster(name: &str, secret: Option<&str>) -> HostedCluster {
    let mut hc = HostedCluster::default();
    hc.metadata.name = Some(name.into());
    hc.metadata.namespace = Some("clusters".into());
    if let Some(s) = secret {
        hc.status = Some(update_status_api::hosted::HostedClusterStatus {
            kubeconfig: Some(update_status_api::hosted::SecretName { name: s.into() }),
            ..Default::default()
        });
    }
    hc
}

#[tokio::test]
async fn links_follow_the_hosted_clusters_and_a_failing_one_is_unreachable() {
    // The "management cluster" is a closed port: reading the Secret fails.
    let port = closed_port();
    let mut config = kube::Config::new(format!("http://127.0.0.1:{port}").parse().expect("uri"));
    config.connect_timeout = Some(Duration::from_secs(2));
    let client = kube::Client::try_from(config).expect("client");
    let wake = Arc::new(Notify::new());
    let mut guests = Guests::new(client, wake.clone());
    let (a, b) = (
        hosted_cluster("a", Some("a-admin-kubeconfig")),
        hosted_cluster("b", None),
    );
    guests.sync([&a, &b]);
    assert_eq!(guests.len(), 1, "b has no kubeconfig: no link");
    let GuestView::Unreachable(why) = guests.view(&b) else {
        panic!("b is unreachable");
    };
    assert_eq!(
        why,
        "HostedCluster clusters/b has no status.kubeconfig yet (no admin kubeconfig published)"
    );
    let view = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match guests.view(&a) {
                GuestView::Waiting(_) => wake.notified().await,
                v => return v,
            }
        }
    })
    .await
    .expect("a verdict within 10 s");
    let GuestView::Unreachable(why) = view else {
        panic!("the Secret cannot be read: {view:?}");
    };
    assert_eq!(
        why,
        "Secret clusters/a-admin-kubeconfig cannot be read: the management API server cannot be reached"
    );
    // Another Secret name restarts the link; a HostedCluster gone stops it.
    let a2 = hosted_cluster("a", Some("a-other"));
    guests.sync([&a2]);
    assert!(
        matches!(guests.view(&a2), GuestView::Waiting(_)),
        "restarted"
    );
    guests.sync(std::iter::empty());
    assert!(guests.is_empty());
}

/// Issue #29 item 2: a watch keeps at most `max` objects (the first seen), drops the events of
/// the others before the cache, and counts every one it was told of (kept or not); a deleted
/// kept one frees its slot, a relist starts over.
#[test]
fn a_capped_watch_keeps_the_first_objects_and_counts_all() {
    use watcher::Event;
    let co = |n: usize| {
        let mut o = ClusterOperator::default();
        o.metadata.name = Some(format!("op-{n:03}"));
        o
    };
    let status = Arc::new(Mutex::new(ConnStatus::default()));
    let mut cap = Capped::new(3, status.clone(), OPERATORS, Arc::new(Notify::new()));
    let reported = || lock(&status).reported[OPERATORS];
    let name = |e: Option<Event<ClusterOperator>>| match e {
        Some(Event::InitApply(o) | Event::Apply(o) | Event::Delete(o)) => o.metadata.name,
        Some(_) => Some("(marker)".into()),
        None => None,
    };
    assert!(cap.admit(Event::<ClusterOperator>::Init).is_some());
    let passed: Vec<_> = (0..10)
        .filter_map(|i| name(cap.admit(Event::InitApply(co(i)))))
        .collect();
    assert_eq!(passed, ["op-000", "op-001", "op-002"]);
    assert!(cap.admit(Event::<ClusterOperator>::InitDone).is_some());
    assert_eq!(reported(), 10);
    // A change of a kept one passes, of another one does not; counts unchanged.
    assert_eq!(name(cap.admit(Event::Apply(co(1)))), Some("op-001".into()));
    assert_eq!(name(cap.admit(Event::Apply(co(7)))), None);
    assert_eq!(reported(), 10);
    // Deleting one past the cap: counted down (passed: a no-op for the cache, but it wakes the
    // reconciler); a kept one: passed, slot freed.
    assert_eq!(name(cap.admit(Event::Delete(co(9)))), Some("op-009".into()));
    assert_eq!(reported(), 9);
    assert_eq!(name(cap.admit(Event::Delete(co(0)))), Some("op-000".into()));
    assert_eq!(reported(), 8);
    assert_eq!(name(cap.admit(Event::Apply(co(8)))), Some("op-008".into()));
    assert_eq!(
        reported(),
        8,
        "op-008 moved from past the cap into the cache"
    );
    // A relist starts over.
    assert!(cap.admit(Event::<ClusterOperator>::Init).is_some());
    assert_eq!(
        name(cap.admit(Event::InitApply(co(5)))),
        Some("op-005".into())
    );
    assert_eq!(reported(), 1);
}
