//! Who may read `/metrics`: the bearer token of the request must pass a TokenReview, and its
//! user a SubjectAccessReview for `get` on the resource `services/metrics` in the controller's
//! namespace (as kube-rbac-proxy's resource attributes do: a role granting it grants nothing
//! else, where the non-resource URL `/metrics` would also open the kube-apiserver's own
//! `/metrics`). No or an invalid token → 401, a user without the permission → 403, an API
//! error → 500, the review budget spent → 429.
//!
//! The port is reachable by anyone who can reach the pod, so a review is what it must never
//! hand out freely:
//! - **Junk costs nothing**: a token that has not the shape of a Kubernetes bearer token
//!   ([`well_formed`]: a JWT, an OpenShift `sha256~` token or a bootstrap token, at most
//!   [`MAX_TOKEN_BYTES`]) is refused (401) without any review.
//! - **Decisions are cached** by a SHA-256 of the token (allowed for a minute, denied for 10
//!   seconds, at most [`CACHE_CAPACITY`] entries; expired and denied entries go first), so a
//!   Prometheus scraping every 30 s costs two API calls a minute.
//! - **Reviews have a budget**: at most [`MAX_CONCURRENT_REVIEWS`] at once and
//!   [`REVIEWS_PER_SECOND`] a second (a token bucket of [`REVIEW_BURST`]); a request that cannot
//!   get one within [`QUEUE_WAIT`] is answered 429 with `Retry-After`. Tokens that were allowed
//!   before (a scraper whose decision expired) have a lane of their own
//!   ([`KNOWN_REVIEWS_PER_SECOND`]), so a flood of unknown tokens cannot keep a known scraper
//!   out. In all, at most 12 TokenReviews (and as many SubjectAccessReviews) a second, whatever
//!   arrives.
//! - **Reviews go through a client of their own** (its own connections, user agent
//!   `update-status-controller/metrics-auth`), so the Lease renewals and the writers never
//!   queue behind them in the controller.
//!
//! Tokens are never logged, only the first 8 hex digits of their SHA-256.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;
use sha2::{Digest, Sha256};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::metrics::registry::Metrics;

/// How long an allowed decision is reused.
pub const ALLOWED_TTL: Duration = Duration::from_secs(60);
/// How long a denied decision (401 or 403) is reused.
pub const DENIED_TTL: Duration = Duration::from_secs(10);
/// Most decisions kept.
pub const CACHE_CAPACITY: usize = 1024;
/// Timeout of one TokenReview or SubjectAccessReview.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest bearer token reviewed (a ServiceAccount JWT is about 1 KiB).
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// Reviews of tokens not allowed before: sustained rate a second.
pub const REVIEWS_PER_SECOND: f64 = 8.0;
/// ... and burst.
pub const REVIEW_BURST: f64 = 8.0;
/// Reviews of tokens allowed before (their decision expired): rate a second, and burst.
pub const KNOWN_REVIEWS_PER_SECOND: f64 = 2.0;
const KNOWN_REVIEW_BURST: f64 = 4.0;
/// Reviews in flight at once (unknown tokens; the known lane has its own two).
pub const MAX_CONCURRENT_REVIEWS: usize = 4;
const MAX_CONCURRENT_KNOWN_REVIEWS: usize = 2;
/// How long a request waits for a review before it is answered 429.
pub const QUEUE_WAIT: Duration = Duration::from_secs(1);
/// Tokens remembered as allowed before (for the known lane), and for how long.
const KNOWN_CAPACITY: usize = 256;
const KNOWN_TTL: Duration = Duration::from_secs(3600);

// At most 20 TokenReviews a second, as issue #29 asks, with room to spare.
const _: () = assert!(
    (REVIEWS_PER_SECOND + KNOWN_REVIEWS_PER_SECOND) as u64 <= 12
        && (REVIEW_BURST + KNOWN_REVIEW_BURST) as u64 <= 20
);

/// What a request may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// No token, or the API server does not know it (401).
    Unauthenticated,
    /// The user may not `get` the path (403).
    Forbidden {
        /// Who the token belongs to.
        user: String,
    },
    /// The user may `get` the path.
    Allowed {
        /// Who the token belongs to.
        user: String,
    },
}

/// A TokenReview or SubjectAccessReview could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The API call failed.
    #[error("creating a {kind}: {source}")]
    Api {
        /// `TokenReview` or `SubjectAccessReview`.
        kind: &'static str,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The review budget is spent: try again later (429).
    #[error("too many reviews: none free within {QUEUE_WAIT:?}")]
    Throttled,
    /// The API call did not answer in time.
    #[error("creating a {kind}: no answer within {REVIEW_TIMEOUT:?}")]
    Timeout {
        /// `TokenReview` or `SubjectAccessReview`.
        kind: &'static str,
    },
    /// The answer has no status.
    #[error("the {kind} came back without a status")]
    NoStatus {
        /// `TokenReview` or `SubjectAccessReview`.
        kind: &'static str,
    },
}

type Key = [u8; 32];

/// Recent decisions by token and path, bounded.
#[derive(Debug)]
pub struct DecisionCache {
    entries: HashMap<Key, (Decision, Instant)>,
    capacity: usize,
}

impl DecisionCache {
    /// An empty cache holding at most `capacity` decisions.
    pub fn new(capacity: usize) -> Self {
        DecisionCache {
            entries: HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    /// The key of a token asking for a path.
    pub fn key(token: &str, path: &str) -> Key {
        let mut h = Sha256::new();
        h.update(path.as_bytes());
        h.update([0]);
        h.update(token.as_bytes());
        h.finalize().into()
    }

    /// The decision for `key` if it has not expired at `now`.
    pub fn get(&self, key: &Key, now: Instant) -> Option<Decision> {
        self.entries
            .get(key)
            .filter(|(_, until)| now < *until)
            .map(|(d, _)| d.clone())
    }

    /// Remembers a decision made at `now` (allowed: [`ALLOWED_TTL`], else [`DENIED_TTL`]).
    /// When full, expired decisions go first, then the one expiring soonest.
    pub fn insert(&mut self, key: Key, decision: Decision, now: Instant) {
        let ttl = match decision {
            Decision::Allowed { .. } => ALLOWED_TTL,
            _ => DENIED_TTL,
        };
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            self.entries.retain(|_, (_, until)| now < *until);
            if self.entries.len() >= self.capacity
                && let Some(oldest) = self
                    .entries
                    .iter()
                    .min_by_key(|(_, (_, until))| *until)
                    .map(|(k, _)| *k)
            {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(key, (decision, now + ttl));
    }

    /// How many decisions are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no decision is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The bearer token of a request, if it has one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Whether `token` has the shape of a bearer token the API server may know: a JWT
/// (ServiceAccount tokens: three base64url parts, the first a JSON header naming its `alg`),
/// an OpenShift OAuth access token (`sha256~` and base64url) or a bootstrap token
/// (`[a-z0-9]{6}.[a-z0-9]{16}`), at most [`MAX_TOKEN_BYTES`]. Anything else is refused without
/// a review.
pub fn well_formed(token: &str) -> bool {
    let b64url = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if token.len() > MAX_TOKEN_BYTES {
        return false;
    }
    if let Some(rest) = token.strip_prefix("sha256~") {
        return rest.len() >= 32 && b64url(rest);
    }
    if let Some((id, secret)) = token.split_once('.')
        && id.len() == 6
        && secret.len() == 16
        && [id, secret].iter().all(|p| {
            p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
    {
        return true;
    }
    let parts: Vec<&str> = token.split('.').collect();
    let [header, payload, signature] = parts.as_slice() else {
        return false;
    };
    if ![header, payload, signature].iter().all(|p| b64url(p)) {
        return false;
    }
    let Ok(json) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header.as_bytes())
    else {
        return false;
    };
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&json)
        .is_ok_and(|h| h.get("alg").is_some_and(serde_json::Value::is_string))
}

/// First 8 hex digits of the token's SHA-256: enough to tell tokens apart in logs.
pub fn token_id(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A token bucket: `rate` tokens a second, at most `burst` saved up. Pure (the caller gives
/// the time): a dozen lines, where a crate (governor) would bring a clock abstraction and
/// more than this needs.
#[derive(Debug)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    /// A full bucket at `now`.
    pub fn new(rate: f64, burst: f64, now: Instant) -> Self {
        TokenBucket {
            rate,
            burst,
            tokens: burst,
            at: now,
        }
    }

    /// Takes one token at `now`, or says how long until one is there.
    pub fn take(&mut self, now: Instant) -> Result<(), Duration> {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.at = now.max(self.at);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / self.rate))
        }
    }
}

/// One lane of reviews: a bound on those in flight and on their rate.
#[derive(Debug)]
struct Lane {
    in_flight: Semaphore,
    bucket: Mutex<TokenBucket>,
}

impl Lane {
    fn new(concurrent: usize, rate: f64, burst: f64) -> Self {
        Lane {
            in_flight: Semaphore::new(concurrent),
            bucket: Mutex::new(TokenBucket::new(rate, burst, Instant::now())),
        }
    }

    /// A permit to review, waiting until `deadline` at most.
    async fn admit(
        &self,
        deadline: tokio::time::Instant,
    ) -> Result<SemaphorePermit<'_>, ReviewError> {
        let permit = tokio::time::timeout_at(deadline, self.in_flight.acquire())
            .await
            .map_err(|_| ReviewError::Throttled)?
            .map_err(|_| ReviewError::Throttled)?;
        loop {
            let wait = {
                let mut bucket = self.bucket.lock().unwrap_or_else(PoisonError::into_inner);
                match bucket.take(Instant::now()) {
                    Ok(()) => return Ok(permit),
                    Err(wait) => wait,
                }
            };
            if tokio::time::Instant::now() + wait > deadline {
                return Err(ReviewError::Throttled);
            }
            tokio::time::sleep(wait).await;
        }
    }
}

/// Authenticates and authorizes requests with the API server.
pub struct Authorizer {
    client: kube::Client,
    namespace: String,
    metrics: Option<Arc<Metrics>>,
    cache: Mutex<DecisionCache>,
    /// Keys of tokens allowed within [`KNOWN_TTL`] (until when).
    known: Mutex<HashMap<Key, Instant>>,
    unknown_lane: Lane,
    known_lane: Lane,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("namespace", &self.namespace)
            .field("cached", &self.cache().len())
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    /// Reviews tokens with `client` (it needs `create` on `tokenreviews` and
    /// `subjectaccessreviews`; give it a client of its own: see the module documentation),
    /// authorizing `get` on `services/metrics` in `namespace`; counts into `metrics`.
    pub fn new(client: kube::Client, namespace: &str, metrics: Option<Arc<Metrics>>) -> Self {
        Authorizer {
            client,
            namespace: namespace.to_string(),
            metrics,
            cache: Mutex::new(DecisionCache::new(CACHE_CAPACITY)),
            known: Mutex::new(HashMap::new()),
            unknown_lane: Lane::new(MAX_CONCURRENT_REVIEWS, REVIEWS_PER_SECOND, REVIEW_BURST),
            known_lane: Lane::new(
                MAX_CONCURRENT_KNOWN_REVIEWS,
                KNOWN_REVIEWS_PER_SECOND,
                KNOWN_REVIEW_BURST,
            ),
        }
    }

    /// Where it counts.
    pub fn metrics(&self) -> Option<Arc<Metrics>> {
        self.metrics.clone()
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, DecisionCache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn count_refused(&self, reason: &str) {
        if let Some(m) = &self.metrics {
            m.scrape_auth.refused(reason);
        }
    }

    fn count_review(&self, result: &str) {
        if let Some(m) = &self.metrics {
            m.scrape_auth.reviewed(result);
        }
    }

    /// Forgets the decision about `token` (tests: as if it expired).
    #[cfg(test)]
    pub(crate) fn forget(&self, token: &str, path: &str) {
        self.cache()
            .entries
            .remove(&DecisionCache::key(token, path));
    }

    /// Remembers a decision as if the API server had made it (tests of the HTTP layer).
    #[cfg(test)]
    pub(crate) fn remember(&self, token: &str, path: &str, decision: Decision) {
        self.cache()
            .insert(DecisionCache::key(token, path), decision, Instant::now());
    }

    /// Whether `key` was allowed recently (its reviews take the known lane).
    fn is_known(&self, key: &Key, now: Instant) -> bool {
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known.get(key).is_some_and(|until| now < *until)
    }

    fn remember_known(&self, key: Key, now: Instant) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.len() >= KNOWN_CAPACITY && !known.contains_key(&key) {
            known.retain(|_, until| now < *until);
            if known.len() >= KNOWN_CAPACITY
                && let Some(oldest) = known.iter().min_by_key(|(_, u)| **u).map(|(k, _)| *k)
            {
                known.remove(&oldest);
            }
        }
        known.insert(key, now + KNOWN_TTL);
    }

    /// What the holder of `token` (none: anonymous) may do with `get` on `path`.
    pub async fn decide(&self, token: Option<&str>, path: &str) -> Result<Decision, ReviewError> {
        let Some(token) = token else {
            return Ok(Decision::Unauthenticated);
        };
        if !well_formed(token) {
            self.count_refused("malformed");
            return Ok(Decision::Unauthenticated);
        }
        let key = DecisionCache::key(token, path);
        if let Some(d) = self.cache().get(&key, Instant::now()) {
            return Ok(d);
        }
        let lane = if self.is_known(&key, Instant::now()) {
            &self.known_lane
        } else {
            &self.unknown_lane
        };
        let deadline = tokio::time::Instant::now() + QUEUE_WAIT;
        let permit = match lane.admit(deadline).await {
            Ok(p) => p,
            Err(e) => {
                self.count_refused("throttled");
                return Err(e);
            }
        };
        // Another request with the same token may have been reviewed meanwhile.
        if let Some(d) = self.cache().get(&key, Instant::now()) {
            return Ok(d);
        }
        let decision = self.review(token).await;
        drop(permit);
        let decision = match decision {
            Ok(d) => d,
            Err(e) => {
                self.count_review("error");
                return Err(e);
            }
        };
        self.count_review(match decision {
            Decision::Allowed { .. } => "allowed",
            Decision::Forbidden { .. } => "forbidden",
            Decision::Unauthenticated => "unauthenticated",
        });
        tracing::debug!(token = %token_id(token), ?decision, path, "metrics access decided");
        let now = Instant::now();
        if matches!(decision, Decision::Allowed { .. }) {
            self.remember_known(key, now);
        }
        self.cache().insert(key, decision.clone(), now);
        Ok(decision)
    }

    /// TokenReview, then SubjectAccessReview for `get services/metrics` in our namespace.
    async fn review(&self, token: &str) -> Result<Decision, ReviewError> {
        const TR: &str = "TokenReview";
        const SAR: &str = "SubjectAccessReview";
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string(),
                audiences: None,
            },
            ..Default::default()
        };
        let reviewed = timed(TR, async {
            Api::<TokenReview>::all(self.client.clone())
                .create(&PostParams::default(), &review)
                .await
        })
        .await?;
        let status = reviewed.status.ok_or(ReviewError::NoStatus { kind: TR })?;
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(user)) => user,
            _ => return Ok(Decision::Unauthenticated),
        };
        let name = user.username.clone().unwrap_or_default();
        let sar = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username,
                groups: user.groups,
                uid: user.uid,
                extra: user.extra,
                resource_attributes: Some(metrics_resource(&self.namespace)),
                non_resource_attributes: None,
            },
            ..Default::default()
        };
        let answered = timed(SAR, async {
            Api::<SubjectAccessReview>::all(self.client.clone())
                .create(&PostParams::default(), &sar)
                .await
        })
        .await?;
        let status = answered.status.ok_or(ReviewError::NoStatus { kind: SAR })?;
        Ok(if status.allowed {
            Decision::Allowed { user: name }
        } else {
            Decision::Forbidden { user: name }
        })
    }
}

/// What a scraper must be allowed: `get` on `services/metrics` in `namespace` (the resource
/// attributes kube-rbac-proxy checks; `config/prometheus/metrics-reader.yaml` grants them).
pub fn metrics_resource(namespace: &str) -> ResourceAttributes {
    ResourceAttributes {
        namespace: Some(namespace.to_string()),
        verb: Some("get".to_string()),
        group: Some(String::new()),
        version: Some("v1".to_string()),
        resource: Some("services".to_string()),
        subresource: Some("metrics".to_string()),
        ..Default::default()
    }
}

async fn timed<T>(
    kind: &'static str,
    call: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, ReviewError> {
    match tokio::time::timeout(REVIEW_TIMEOUT, call).await {
        Ok(r) => r.map_err(|source| ReviewError::Api { kind, source }),
        Err(_) => Err(ReviewError::Timeout { kind }),
    }
}

/// axum middleware: lets the request through only if its token may `get` the metrics.
pub async fn require_access(
    State(auth): State<Arc<Authorizer>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_string();
    let token = bearer_token(request.headers());
    match auth.decide(token, &path).await {
        Ok(Decision::Allowed { .. }) => next.run(request).await,
        Ok(Decision::Unauthenticated) => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "Unauthorized: send a valid bearer token (Authorization: Bearer <token>)\n",
        )
            .into_response(),
        Ok(Decision::Forbidden { user }) => (
            StatusCode::FORBIDDEN,
            format!(
                "Forbidden: user {user:?} may not get services/metrics in namespace {}\n",
                auth.namespace
            ),
        )
            .into_response(),
        Err(ReviewError::Throttled) => (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "1")],
            "Too Many Requests: the token cannot be reviewed now; retry later\n",
        )
            .into_response(),
        Err(e) => {
            tracing::warn!(
                error = %e,
                token = %token.map(token_id).unwrap_or_default(),
                path,
                "cannot check access to the metrics endpoint"
            );
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal Server Error: cannot check access with the API server\n",
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> Decision {
        Decision::Allowed { user: "u".into() }
    }

    #[test]
    fn cache_expires_allowed_after_a_minute_and_denied_sooner() {
        let mut c = DecisionCache::new(10);
        let t0 = Instant::now();
        let ok = DecisionCache::key("good", "/metrics");
        let bad = DecisionCache::key("bad", "/metrics");
        c.insert(ok, allowed(), t0);
        c.insert(bad, Decision::Unauthenticated, t0);
        assert_eq!(c.get(&ok, t0), Some(allowed()));
        assert_eq!(c.get(&bad, t0), Some(Decision::Unauthenticated));
        let later = t0 + DENIED_TTL;
        assert_eq!(c.get(&ok, later), Some(allowed()));
        assert_eq!(c.get(&bad, later), None);
        assert_eq!(c.get(&ok, t0 + ALLOWED_TTL), None);
        // The path is part of the key.
        assert_eq!(c.get(&DecisionCache::key("good", "/other"), t0), None);
    }

    #[test]
    fn cache_is_bounded_dropping_expired_then_soonest_to_expire() {
        let mut c = DecisionCache::new(3);
        let t0 = Instant::now();
        let k = |i: u32| DecisionCache::key(&format!("token-{i}"), "/metrics");
        c.insert(k(0), Decision::Unauthenticated, t0); // expires t0+10s
        c.insert(k(1), allowed(), t0); // t0+60s
        c.insert(k(2), allowed(), t0 + Duration::from_secs(1)); // t0+61s
        assert_eq!(c.len(), 3);
        // Full, nothing expired: the soonest to expire (k0) goes.
        c.insert(k(3), allowed(), t0 + Duration::from_secs(2));
        assert_eq!(c.len(), 3);
        assert_eq!(c.get(&k(0), t0), None);
        assert!(c.get(&k(1), t0).is_some());
        // Full, two expired: both go.
        let late = t0 + Duration::from_secs(61);
        c.insert(k(4), allowed(), late);
        assert_eq!(c.len(), 2);
        assert!(c.get(&k(3), late).is_some());
        assert!(c.get(&k(4), late).is_some());
        // Re-deciding a known key does not evict another.
        c.insert(k(4), Decision::Unauthenticated, late);
        c.insert(k(5), allowed(), late);
        c.insert(k(5), allowed(), late);
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn bearer_tokens_are_read_from_the_authorization_header() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer_token(&h), None);
        h.insert(
            header::AUTHORIZATION,
            "Bearer abc.def".parse().expect("header"),
        );
        assert_eq!(bearer_token(&h), Some("abc.def"));
        h.insert(
            header::AUTHORIZATION,
            "bearer  xyz ".parse().expect("header"),
        );
        assert_eq!(bearer_token(&h), Some("xyz"));
        h.insert(
            header::AUTHORIZATION,
            "Basic dXNlcjpwYXNz".parse().expect("header"),
        );
        assert_eq!(bearer_token(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer ".parse().expect("header"));
        assert_eq!(bearer_token(&h), None);
    }

    #[test]
    fn token_ids_are_short_hashes_not_the_token() {
        let id = token_id("secret-token-value");
        assert_eq!(id.len(), 8);
        assert!(!"secret-token-value".contains(&id));
        assert_ne!(id, token_id("another-token"));
    }

    #[test]
    fn only_token_shaped_strings_are_reviewed() {
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let jwt = format!(
            "{}.{}.{}",
            b64(r#"{"alg":"RS256","kid":"k"}"#),
            b64("{}"),
            b64("sig")
        );
        assert!(well_formed(&jwt));
        assert!(well_formed(&format!("sha256~{}", "a".repeat(43))));
        assert!(well_formed("abcdef.0123456789abcdef"));
        for junk in [
            "not-a-token",
            "a.b.c",
            &format!("{}.{}.{}", b64("{}"), b64("{}"), b64("sig")),
            &format!("{}.{}", b64(r#"{"alg":"RS256"}"#), b64("{}")),
            &format!(
                "{}.{}.{}",
                b64(r#"{"alg":"RS256"}"#),
                b64("{}"),
                "x".repeat(MAX_TOKEN_BYTES)
            ),
            "sha256~short",
            "ABCDEF.0123456789abcdef",
            "' OR 1=1 --",
        ] {
            assert!(!well_formed(junk), "{junk}");
        }
    }

    #[test]
    fn the_bucket_gives_its_burst_then_its_rate() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(2.0, 3.0, t0);
        for _ in 0..3 {
            assert_eq!(b.take(t0), Ok(()));
        }
        let wait = b.take(t0).expect_err("empty");
        assert!(
            wait <= Duration::from_millis(500) && wait > Duration::ZERO,
            "{wait:?}"
        );
        assert_eq!(b.take(t0 + Duration::from_millis(500)), Ok(()));
        assert!(b.take(t0 + Duration::from_millis(500)).is_err());
        // Never more than the burst saved up.
        let late = t0 + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(b.take(late), Ok(()));
        }
        assert!(b.take(late).is_err());
    }

    /// A fake API server: TokenReviews authenticate only `good` (counted), SubjectAccessReviews
    /// allow everyone (the resource asked is recorded).
    async fn api_server(
        good: String,
    ) -> (
        String,
        Arc<std::sync::atomic::AtomicU64>,
        Arc<Mutex<String>>,
    ) {
        use std::sync::atomic::{AtomicU64, Ordering};
        use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let reviews = Arc::new(AtomicU64::new(0));
        let last_sar = Arc::new(Mutex::new(String::new()));
        let (count, sar) = (reviews.clone(), last_sar.clone());
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (count, sar, good) = (count.clone(), sar.clone(), good.clone());
                tokio::spawn(async move {
                    let mut sock = BufReader::new(sock);
                    loop {
                        let mut line = String::new();
                        let mut path = String::new();
                        let mut len = 0usize;
                        loop {
                            line.clear();
                            match sock.read_line(&mut line).await {
                                Ok(0) | Err(_) => return,
                                Ok(_) => {}
                            }
                            if line.starts_with("POST ") {
                                path = line.clone();
                            }
                            if let Some(v) =
                                line.to_ascii_lowercase().strip_prefix("content-length:")
                            {
                                len = v.trim().parse().unwrap_or(0);
                            }
                            if line == "\r\n" {
                                break;
                            }
                        }
                        let mut body = vec![0u8; len];
                        if sock.read_exact(&mut body).await.is_err() {
                            return;
                        }
                        let body = String::from_utf8_lossy(&body).into_owned();
                        let reply = if path.contains("tokenreviews") {
                            count.fetch_add(1, Ordering::SeqCst);
                            // Slow enough for reviews to overlap.
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            if body.contains(&good) {
                                r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{},"status":{"authenticated":true,"user":{"username":"reader"}}}"#
                            } else {
                                r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{},"status":{"authenticated":false}}"#
                            }
                        } else {
                            *sar.lock().unwrap_or_else(PoisonError::into_inner) = body;
                            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{},"status":{"allowed":true}}"#
                        };
                        let answer = format!(
                            "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
                            reply.len()
                        );
                        if sock.get_mut().write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (format!("http://{addr}"), reviews, last_sar)
    }

    fn fake_jwt(payload: &str) -> String {
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!(
            "{}.{}.{}",
            b64(r#"{"alg":"RS256","kid":"x"}"#),
            b64(payload),
            b64("signature")
        )
    }

    /// The review's reproduction, in small: hundreds of clients with random (well-formed)
    /// tokens. Reviews stay within the budget, the rest is answered 429, junk costs nothing,
    /// and a scraper allowed before the flood is reviewed again in its own lane.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flood_of_tokens_is_held_to_the_review_budget() {
        use std::sync::atomic::Ordering;
        let good = fake_jwt(r#"{"sub":"the-scraper"}"#);
        let (url, reviews, last_sar) = api_server(good.clone()).await;
        let client =
            kube::Client::try_from(kube::Config::new(url.parse().expect("url"))).expect("client");
        let metrics = Arc::new(Metrics::new().expect("metrics"));
        let auth = Arc::new(Authorizer::new(
            client,
            "update-status-ns",
            Some(metrics.clone()),
        ));

        assert!(matches!(
            auth.decide(Some(&good), "/metrics").await,
            Ok(Decision::Allowed { .. })
        ));
        let sar = last_sar
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        assert!(
            sar.contains(r#""resource":"services""#)
                && sar.contains(r#""subresource":"metrics""#)
                && sar.contains(r#""namespace":"update-status-ns""#)
                && !sar.contains("nonResource"),
            "{sar}"
        );
        let before = reviews.load(Ordering::SeqCst);
        assert_eq!(before, 1);

        let flood = Duration::from_secs(3);
        let started = Instant::now();
        let mut tasks = Vec::new();
        for i in 0..300u32 {
            let auth = auth.clone();
            tasks.push(tokio::spawn(async move {
                let mut n = 0u32;
                while started.elapsed() < flood {
                    let token = if i.is_multiple_of(2) {
                        fake_jwt(&format!(r#"{{"sub":"attacker-{i}-{n}"}}"#))
                    } else {
                        format!("junk-{i}-{n}")
                    };
                    let _ = auth.decide(Some(&token), "/metrics").await;
                    n += 1;
                    tokio::task::yield_now().await;
                }
            }));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        // The scraper's decision expires mid-flood: it is reviewed again, in its lane.
        auth.forget(&good, "/metrics");
        let again = auth.decide(Some(&good), "/metrics").await;
        assert!(matches!(again, Ok(Decision::Allowed { .. })), "{again:?}");
        for t in tasks {
            let _ = t.await;
        }
        let elapsed = started.elapsed().as_secs_f64();
        let made = reviews.load(Ordering::SeqCst) - before;
        let budget = REVIEW_BURST
            + KNOWN_REVIEW_BURST
            + (REVIEWS_PER_SECOND + KNOWN_REVIEWS_PER_SECOND)
                * (elapsed + QUEUE_WAIT.as_secs_f64());
        assert!(
            made as f64 <= budget,
            "{made} reviews in {elapsed:.1}s (budget {budget:.0})"
        );
        assert!(made >= 10, "the budget is used: {made}");
        assert!(
            metrics.scrape_auth.refusals("throttled") > 100,
            "the rest is refused"
        );
        assert!(
            metrics.scrape_auth.refusals("malformed") > 100,
            "junk is refused unreviewed"
        );
        assert_eq!(metrics.scrape_auth.reviews(), made + before);
    }
}
