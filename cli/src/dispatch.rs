//! What the command does, in one place: which cluster or fleet it shows ([`Subject`]), read once
//! from a snapshot or the API ([`read`]), then printed in the format asked ([`output`]) or
//! served as a web page (`--web`: a snapshot's picture, or a live one fed by watches).

use std::io::Write as _;

use anyhow::Context as _;
use jiff::Timestamp;

use crate::args::{Cli, DEFAULT_NAMESPACE};
use crate::fleet::{self, Fleet};
use crate::read::{hosted, offline, online, selective};
use crate::show::escape;
use crate::show::render::{self, Details, RelatedNeedsHealth};
use crate::show::report::{self, Format, UpdateStatusReport};
use crate::show::view::View;
use crate::web;

/// Which cluster or fleet the command shows.
enum Subject<'a> {
    /// `--fleet`: every cluster of a hub.
    Fleet,
    /// `--hosted-cluster NAME`.
    Hosted(&'a str),
    /// A standalone cluster (the default).
    Standalone,
}

impl<'a> Subject<'a> {
    fn of(cli: &'a Cli) -> Self {
        match (&cli.hosted_cluster, cli.fleet) {
            (_, true) => Subject::Fleet,
            (Some(name), false) => Subject::Hosted(name),
            (None, false) => Subject::Standalone,
        }
    }
}

/// What was read, ready for any output.
pub enum Picture {
    /// The fleet's rows.
    Fleet(Fleet),
    /// One cluster's objects.
    Cluster {
        /// Its objects' content.
        view: Box<View>,
        /// The title of its page.
        title: String,
        /// A hosted cluster's name (its own text layout).
        hosted: Option<String>,
    },
}

/// Runs the command `cli`.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let details: Details = cli.details.parse()?;
    if !cli.web && cli.related && cli.output == Format::Text && !cli.fleet && !details.health() {
        return Err(RelatedNeedsHealth.into());
    }
    let rt = runtime()?;
    let listen = web::Listen {
        address: cli.address,
        port: cli.port,
    };
    if cli.web && cli.from_dir.is_none() {
        // The live page: watches, not one read.
        let target = match Subject::of(&cli) {
            Subject::Fleet => web::Target::Fleet {
                filter: fleet_filter(&cli),
                now: cli.now,
            },
            Subject::Hosted(_) | Subject::Standalone => web::Target::Cluster {
                namespace: cli.namespace.clone(),
                hosted: cli.hosted_cluster.clone(),
                now: cli.now,
            },
        };
        let conn = connection(&cli);
        return rt.block_on(async {
            let client = online::client(&conn).await?;
            web::serve(listen, target, Some(client)).await
        });
    }
    let (picture, now) = read(&cli, details, &rt)?;
    let text = match picture {
        Picture::Cluster { view, title, .. } if cli.web => {
            let target = web::Target::Snapshot { view, now, title };
            return rt.block_on(web::serve(listen, target, None));
        }
        picture => output(picture, now, &cli, details)?,
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot write to standard output")?;
    Ok(())
}

/// Reads what `cli` asks for, from its snapshot folder or the API, and the instant to show it
/// at.
pub fn read(
    cli: &Cli,
    details: Details,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<(Picture, Timestamp)> {
    let clock = || cli.now.unwrap_or_else(Timestamp::now);
    let cluster = |view, title, hosted: Option<&str>| Picture::Cluster {
        view: Box::new(view),
        title,
        hosted: hosted.map(str::to_owned),
    };
    Ok(match (Subject::of(cli), &cli.from_dir) {
        // clap refuses --fleet with --from-dir.
        (Subject::Fleet, _) => {
            let now = clock();
            let conn = connection(cli);
            let filter = fleet_filter(cli);
            let fleet = rt.block_on(async {
                let client = online::client(&conn).await?;
                fleet::fetch(&client, &filter, now).await
            })?;
            (Picture::Fleet(fleet), now)
        }
        (Subject::Hosted(name), Some(dir)) => {
            let namespace = (cli.namespace != DEFAULT_NAMESPACE).then_some(cli.namespace.as_str());
            let (view, now) = hosted::load(dir, name, namespace, cli.now)?;
            (cluster(view, hosted_title(name), Some(name)), now)
        }
        (Subject::Hosted(name), None) => {
            let now = clock();
            let conn = connection(cli);
            let view = rt.block_on(async {
                let client = online::client(&conn).await?;
                hosted::fetch(&client, &cli.namespace, name).await
            })?;
            (cluster(view, hosted_title(name), Some(name)), now)
        }
        (Subject::Standalone, Some(dir)) => {
            let (view, now) = offline::load(dir, cli.now)?;
            (cluster(view, title_of(cli), None), now)
        }
        (Subject::Standalone, None) => {
            let now = clock();
            let conn = connection(cli);
            // Only the compact text views can be read by label; the others print every node
            // (`--details=nodes|all`) or every insight (`-o json|yaml`). (`-o html` draws every
            // node.)
            let selective = cli.output == Format::Text && !details.nodes() && !cli.full_read;
            let view = rt.block_on(async {
                let client = online::client(&conn).await?;
                selective::fetch_view(&client, &cli.namespace, selective).await
            })?;
            (cluster(view, title_of(cli), None), now)
        }
    })
}

/// `picture` at `now` in the format `cli` asks for (the fleet's warnings on standard error).
pub fn output(
    picture: Picture,
    now: Timestamp,
    cli: &Cli,
    details: Details,
) -> anyhow::Result<String> {
    Ok(match picture {
        Picture::Fleet(fleet) => {
            for w in fleet.all_warnings() {
                eprintln!("warning: {}", escape::text(&w, escape::Newlines::Escape));
            }
            match cli.output {
                Format::Text => fleet::render(&fleet::escaped(&fleet.rows), now),
                Format::Html => web::html_fleet(fleet, now, cli.stale_after)?,
                format => report::serialise(
                    &fleet::FleetReport::new(fleet, now, cli.stale_after),
                    format,
                )?,
            }
        }
        Picture::Cluster {
            view,
            title,
            hosted,
        } => match (cli.output, hosted) {
            (Format::Text, Some(name)) => {
                render::hosted::render_with(&name, &escape::view(*view)?, now, details, cli.related)
            }
            (Format::Text, None) => {
                render::check(&view)?;
                render::render_with(&escape::view(*view)?, now, details, cli.related)
            }
            (Format::Html, _) => web::html_cluster(&view, now, title)?,
            (format, _) => report::serialise(&UpdateStatusReport::new(&view, now), format)?,
        },
    })
}

/// The title of a hosted cluster's page.
fn hosted_title(name: &str) -> String {
    format!("hosted cluster {name}")
}

/// The title of a cluster's page: the snapshot folder's name, or the namespace.
fn title_of(cli: &Cli) -> String {
    match &cli.from_dir {
        Some(dir) => {
            let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
            format!(
                "snapshot {}",
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| dir.display().to_string())
            )
        }
        None => format!("namespace {}", cli.namespace),
    }
}

fn fleet_filter(cli: &Cli) -> fleet::FleetFilter {
    fleet::FleetFilter {
        selector: cli.selector.clone(),
        clusterset: cli.clusterset.clone(),
        stale_after: cli.stale_after,
        chunk_size: cli.chunk_size,
    }
}

fn connection(cli: &Cli) -> online::Connection {
    online::Connection {
        kubeconfig: cli.kubeconfig.clone(),
        context: cli.context.clone(),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
