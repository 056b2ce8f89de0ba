//! Who may read `/metrics`: the bearer token of the request must pass a TokenReview, and its
//! user a SubjectAccessReview for `get` on the non-resource URL (`/metrics`), like
//! controller-runtime's `WithAuthenticationAndAuthorization` filter and kube-rbac-proxy.
//! No or an invalid token → 401, a user without the permission → 403, an API error → 500.
//!
//! Decisions are cached by a SHA-256 of the token and the path (allowed for a minute, denied
//! for 10 seconds, at most [`CACHE_CAPACITY`] entries), so a Prometheus scraping every 30 s
//! costs two API calls a minute. Tokens are never logged, only the first 8 hex digits of
//! their SHA-256.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;
use sha2::{Digest, Sha256};

/// How long an allowed decision is reused.
pub const ALLOWED_TTL: Duration = Duration::from_secs(60);
/// How long a denied decision (401 or 403) is reused.
pub const DENIED_TTL: Duration = Duration::from_secs(10);
/// Most decisions kept.
pub const CACHE_CAPACITY: usize = 1024;
/// Timeout of one TokenReview or SubjectAccessReview.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);

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

/// First 8 hex digits of the token's SHA-256: enough to tell tokens apart in logs.
pub fn token_id(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Authenticates and authorizes requests with the API server.
pub struct Authorizer {
    client: kube::Client,
    cache: Mutex<DecisionCache>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("cached", &self.cache().len())
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    /// Reviews tokens with `client` (it needs `create` on `tokenreviews` and
    /// `subjectaccessreviews`).
    pub fn new(client: kube::Client) -> Self {
        Authorizer {
            client,
            cache: Mutex::new(DecisionCache::new(CACHE_CAPACITY)),
        }
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, DecisionCache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers a decision as if the API server had made it (tests of the HTTP layer).
    #[cfg(test)]
    pub(crate) fn remember(&self, token: &str, path: &str, decision: Decision) {
        self.cache()
            .insert(DecisionCache::key(token, path), decision, Instant::now());
    }

    /// What the holder of `token` (none: anonymous) may do with `get` on `path`.
    pub async fn decide(&self, token: Option<&str>, path: &str) -> Result<Decision, ReviewError> {
        let Some(token) = token else {
            return Ok(Decision::Unauthenticated);
        };
        let key = DecisionCache::key(token, path);
        if let Some(d) = self.cache().get(&key, Instant::now()) {
            return Ok(d);
        }
        let decision = self.review(token, path).await?;
        tracing::debug!(token = %token_id(token), ?decision, path, "metrics access decided");
        self.cache().insert(key, decision.clone(), Instant::now());
        Ok(decision)
    }

    /// TokenReview, then SubjectAccessReview.
    async fn review(&self, token: &str, path: &str) -> Result<Decision, ReviewError> {
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
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_string()),
                    verb: Some("get".to_string()),
                }),
                resource_attributes: None,
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

async fn timed<T>(
    kind: &'static str,
    call: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, ReviewError> {
    match tokio::time::timeout(REVIEW_TIMEOUT, call).await {
        Ok(r) => r.map_err(|source| ReviewError::Api { kind, source }),
        Err(_) => Err(ReviewError::Timeout { kind }),
    }
}

/// axum middleware: lets the request through only if its token may `get` its path.
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
            format!("Forbidden: user {user:?} may not get {path}\n"),
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
}
