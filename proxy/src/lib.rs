//! HTTP(S) proxies for the Kubernetes and Prometheus clients of the controller and of the CLI
//! (`kubectl update-status`), chosen as client-go chooses them.
//!
//! Which proxy:
//! - a kubeconfig's `proxy-url` (OCM writes it into every add-on's hub kubeconfig when the
//!   klusterlet has a proxy) is used for every request of that client;
//! - otherwise the environment, read as Go's `httpproxy` reads it ([`env`]): `HTTPS_PROXY` for
//!   `https://` destinations, `HTTP_PROXY` for `http://` ones, never for `localhost` or a
//!   loopback address, nor for a destination `NO_PROXY` names. OCM's add-on manager sets these
//!   on the agent's container from the AddOnDeploymentConfig's `proxyConfig`.
//!
//! The tunnel is hyper-util's ([`hyper_util::client::legacy::connect::proxy::Tunnel`]:
//! `CONNECT host:port`, `Proxy-Authorization: Basic` from the URL's user information): every connection is tunnelled, to `https://` and `http://` destinations alike,
//! so an HTTP/2 session to the hub keeps its one connection, now one tunnel. An `https://`
//! proxy is reached over TLS, trusting the destination's CAs (a hub kubeconfig's
//! `certificate-authority-data`, where ACM puts the proxy's CA for its klusterlets; the
//! `--prometheus-ca-file`) plus the PEM bundle named by `CA_BUNDLE_FILE_PATH` (the proxy CA
//! OCM mounts for the AddOnDeploymentConfig's `proxyConfig.caBundle`).
//!
//! Credentials in a proxy URL never leave: a [`Proxy`] shows (`Display`, `Debug`) its URL
//! without user information, the header is marked sensitive, and hyper-util's tunnel errors are
//! fixed texts.
//!
//! Why the environment is read by our own code ([`env`], about 200 lines) and not by a crate:
//! the maintained ones implement other rules. hyper-util's `Matcher` (also reqwest's) follows
//! curl: `ALL_PROXY`, no port in a `NO_PROXY` entry, no implicit loopback, `.example.com`
//! matching `example.com` itself; kube's own `http-proxy` support reads `HTTPS_PROXY` without
//! `NO_PROXY` at all. kubectl, oc and client-go follow Go's `golang.org/x/net/http/httpproxy`,
//! and the CLI and the controller must pick the same proxy as they do for the same
//! environment, so `env` ports those rules and is tested with Go's own test table. hyper-util
//! is still used for what it agrees on: parsing a proxy URL and the `CONNECT` tunnel.

pub mod client;
pub mod connect;
pub mod env;

pub use connect::{
    CA_BUNDLE_ENV, Connector, Proxy, ProxyError, env_proxies, proxy_for, proxy_tls, proxy_with,
};
pub use env::{NoProxy, ProxyEnv};
