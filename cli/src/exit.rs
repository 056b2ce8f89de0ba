//! Exit codes and error text.
//!
//! | code | when |
//! |---|---|
//! | 0 | the status was printed |
//! | 1 | an error: a snapshot file that cannot be read or is wrong, the API, RBAC, a view oc refuses to render, standard output closed |
//! | 2 | a usage error: an unknown flag, a missing or bad flag value (`--now yesterday`, `--details=everything`, `-o xml`), conflicting flags (`--related` without `--details=health|all`). clap reports its own; `--details` keeps oc's text |

use std::process::ExitCode;

use crate::show::escape::{self, Newlines};
use crate::show::render::{InvalidDetails, RelatedNeedsHealth};

/// Exit code of a usage error (clap's too).
pub const USAGE: u8 = 2;

/// The exit code for `e`: [`USAGE`] for a bad command line, 1 for anything else.
pub fn code(e: &anyhow::Error) -> ExitCode {
    if e.downcast_ref::<InvalidDetails>().is_some()
        || e.downcast_ref::<RelatedNeedsHealth>().is_some()
    {
        ExitCode::from(USAGE)
    } else {
        ExitCode::FAILURE
    }
}

/// The text of `e` and its causes, each cause once: a cause whose text the message already
/// holds (errors that put their source in their own text) is not repeated. Control characters
/// are escaped (the text may quote file content or an API server's message).
pub fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let cause = cause.to_string();
        if out.is_empty() {
            out = cause;
        } else if !out.contains(&cause) {
            out.push_str(": ");
            out.push_str(&cause);
        }
    }
    escape::text(&out, Newlines::Keep).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read x.yaml: {0}")]
    struct Repeats(#[source] std::io::Error);

    #[test]
    fn each_cause_is_printed_once() {
        let io = std::io::Error::other("invalid type: integer");
        let e = anyhow::Error::from(Repeats(io)).context("offline");
        assert_eq!(
            message(&e),
            "offline: cannot read x.yaml: invalid type: integer"
        );
        let chained = anyhow::anyhow!("inner").context("outer");
        assert_eq!(message(&chained), "outer: inner");
    }

    #[test]
    fn usage_errors_exit_2() {
        let usage = anyhow::Error::from(InvalidDetails("x".into()));
        assert_eq!(code(&usage), ExitCode::from(USAGE));
        let related = anyhow::Error::from(RelatedNeedsHealth);
        assert_eq!(code(&related), ExitCode::from(USAGE));
        assert_eq!(code(&anyhow::anyhow!("other")), ExitCode::FAILURE);
    }
}
