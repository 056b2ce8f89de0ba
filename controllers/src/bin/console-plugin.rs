//! `update-status-console-plugin`: serves the update-status OpenShift console plugin's built
//! assets over HTTPS (`update_status_controllers::console_assets`), as the `ConsolePlugin`'s
//! Service (config/console-plugin) expects.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use update_status_controllers::console_assets::{Assets, serve_https};

/// Command-line flags.
#[derive(Parser, Debug)]
#[command(
    name = "update-status-console-plugin",
    version,
    about = "Serves the update-status console plugin's assets over HTTPS"
)]
struct Args {
    /// The built plugin (`console/dist`): read once at start.
    #[arg(long, env = "CONSOLE_PLUGIN_DIR", default_value = "/console-plugin")]
    dir: PathBuf,
    /// Where to listen.
    #[arg(long, env = "BIND_ADDRESS", default_value = "0.0.0.0:9443")]
    bind_address: SocketAddr,
    /// Folder of `tls.crt` and `tls.key` (the service CA's Secret), re-read when they change;
    /// unset: a self-signed certificate.
    #[arg(long, env = "CERT_DIR")]
    cert_dir: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    update_status_controllers::app::init_logging(update_status_controllers::app::LogFormat::Text);
    let assets = Assets::load(&args.dir)?;
    let (addr, task) = serve_https(assets, args.bind_address, args.cert_dir).await?;
    tracing::info!(%addr, dir = %args.dir.display(), "serving the console plugin (HTTPS)");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = task => r?,
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    Ok(())
}
