//! The user-facing tools that drive a Kubernetes API server (`src/bin/`): `simulate-update`
//! and `simulate-hosted-update` play a simulated update ([`update_status_simulator`]),
//! `load-snapshot` loads captured clusters. `make demo` and `hack/*.sh` run them.
//!
//! The library is what they share with the e2e tests (which re-export [`playback`] and
//! [`snapshot`]):
//!
//! - [`playback`]: a simulation written to an API server (server-side apply of what each step
//!   changed, status through the status subresource), read back, and cleared;
//! - [`snapshot`]: a snapshot folder loaded into an API server;
//! - [`front`]: the binaries' front end (the client, Ctrl-C, the simulators' dry run and
//!   playback loop).

pub mod front;
pub mod playback;
pub mod snapshot;
