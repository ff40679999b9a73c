//! `quince serve`: from options to a running server, and back down on a signal.
//!
//! What it is: [`run`], which sets up logging ([`crate::logging`]), settles root's password and
//! the token secret, installs what the admin endpoints borrow ([`crate::admin_hooks`]),
//! opens the catalog (recovering every collection), binds the endpoint, prints the one ready
//! line (`quince: listening on http://HOST:PORT`, `https://` for an ssl:// endpoint) on stdout, serves until SIGINT or SIGTERM,
//! and then shuts down in order: refuse new requests (503), stop accepting, let open
//! connections finish within [`DRAIN_TIMEOUT`], let queued asynchronous jobs run within the
//! same bound (those that cannot are logged by id, never started), close the catalog (sync
//! journals, write restart hints).
//!
//! What it is not: the request pipeline (crate `quince-api`) or the accept loop
//! ([`crate::listener`]).
//!
//! Invariants: the ready line is printed only once the socket is bound and the catalog is
//! open, so a client that read it can connect; the exit code is 0 after a clean shutdown.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use quince_api::{Api, ApiConfig};
use quince_client::Endpoint;
use quince_db::{Catalog, DbConfig};
use quince_storage::io::OsFileIo;
use rand::RngCore;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;

use crate::config::{read_jwt_secrets, ServeArgs};
use crate::governor::{Governor, Limits};
use crate::tls::{Protocol, TlsFiles, TlsServer};
use crate::{descriptors, listener, shutdown};

/// The stack of every runtime thread (workers and the blocking pool).
const WORKER_STACK_BYTES: usize = 4 << 20;

/// How long shutdown waits for open connections to finish their requests.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the server until a signal stops it.
pub fn run(args: ServeArgs) -> ExitCode {
    quince_memory::set_trim(crate::memory::purge_freed_memory);
    quince_memory::set_trim_thread(crate::memory::purge_thread_arena);
    let log = match crate::logging::init(&args.log_level) {
        Ok(log) => log,
        Err(error) => {
            eprintln!("quince: --log.level: {error}");
            return ExitCode::FAILURE;
        }
    };
    match run_inner(args, log) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(event = "server.failed", "{error:#}");
            eprintln!("quince: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: ServeArgs, log: Arc<crate::logging::LogSettings>) -> anyhow::Result<()> {
    let password = root_password(&args);
    let mut jwt_secrets = read_jwt_secrets(
        args.jwt_secret_keyfile.as_deref(),
        args.jwt_secret_folder.as_deref(),
    )
    .map_err(|e| anyhow!(e))?;
    // Members of a cluster sign their requests to each other with the shared secret.
    let cluster_secret = jwt_secrets.first().cloned();
    if args.cluster.role.is_some() && args.authentication && cluster_secret.is_none() {
        anyhow::bail!(
            "--cluster.my-role needs the cluster's shared secret (--server.jwt-secret-keyfile \
             or --server.jwt-secret-folder) when authentication is on"
        );
    }
    if jwt_secrets.is_empty() {
        let mut secret = vec![0u8; 32];
        rand::thread_rng().fill_bytes(&mut secret);
        jwt_secrets.push(secret);
    }
    if let Some(dir) = &args.static_dir {
        anyhow::ensure!(
            dir.is_dir(),
            "--http.static-dir {} is not a directory",
            dir.display()
        );
    }
    let endpoint = Endpoint::parse(&args.endpoint).map_err(|e| anyhow!(e))?;
    let socket_address = endpoint.resolve().map_err(|e| anyhow!(e))?;
    let tls = endpoint.tls.then(|| tls_server(&args)).transpose()?;

    let limit = descriptors::adjust(args.descriptors_minimum)?;
    let budget = descriptors::Budget::split(limit.soft, args.max_connections)?;
    tracing::info!(
        event = "descriptors.budget",
        engine_files = budget.engine_files,
        connections = budget.connections,
        reserve = descriptors::RESERVE,
    );
    let catalog = Catalog::open(DbConfig {
        default_journal_size: args.journal_size,
        default_wait_for_sync: args.wait_for_sync,
        sync_interval: Duration::from_millis(args.sync_interval_ms),
        ignore_datafile_errors: args.ignore_datafile_errors,
        transaction_idle_timeout: Duration::from_secs_f64(args.transaction_idle_timeout),
        ttl_frequency: Duration::from_millis(args.ttl_frequency_ms),
        open_files_max: usize::try_from(budget.engine_files).expect("bounded by the budget"),
        ..DbConfig::new(args.data_dir.clone(), Arc::new(OsFileIo::new()))
    })
    .map_err(|e| {
        anyhow!(
            "cannot open data directory {}: {e}",
            args.data_dir.display()
        )
    })?;

    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    // Stacks sized for the deepest JSON the server handles (`JSON_DEPTH_LIMIT`) with room to
    // spare, also in an unoptimised build.
    runtime
        .enable_all()
        .thread_name("quince-worker")
        .thread_stack_size(WORKER_STACK_BYTES);
    if let Some(threads) = args.threads {
        runtime.worker_threads(usize::try_from(threads).expect("bounded by the option parser"));
    }
    let runtime = runtime.build().context("cannot start the async runtime")?;
    let served = runtime.block_on(serve(
        &args,
        budget.connections,
        catalog.clone(),
        socket_address,
        Settled {
            root_password: password,
            jwt_secrets,
            cluster_secret: cluster_secret.filter(|_| args.authentication),
            log,
            tls,
        },
    ));
    // Connections that outlived the drain are abandoned here; the catalog closes regardless.
    runtime.shutdown_timeout(Duration::from_secs(1));
    let closed = catalog.shutdown();
    served?;
    closed.map_err(|e| anyhow!("closing the catalog failed: {e}"))?;
    tracing::info!(event = "server.stopped", "journals closed; bye");
    Ok(())
}

/// The listen queue's length. std's and mio's default of 128 is shorter than one burst of a
/// client opening 256 connections at once: the kernel drops the excess SYNs and those clients
/// stall a second before retrying. The kernel caps it at `net.core.somaxconn`.
const LISTEN_BACKLOG: u32 = 1024;

/// A listener on `address` with [`LISTEN_BACKLOG`] (and `SO_REUSEADDR`, as `bind` sets it).
fn listen(address: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match address {
        std::net::SocketAddr::V4(_) => TcpSocket::new_v4()?,
        std::net::SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// What [`run`] settled before the runtime started, for [`serve`] to hand to the API.
struct Settled {
    /// Root's password.
    root_password: String,
    /// The token secrets, the active one first.
    jwt_secrets: Vec<Vec<u8>>,
    /// The log levels and the ring of recent lines.
    log: Arc<crate::logging::LogSettings>,
    /// The TLS configuration, for an ssl:// endpoint.
    tls: Option<Arc<TlsServer>>,
    /// The secret cluster members sign their requests to each other with (none without
    /// authentication).
    cluster_secret: Option<Vec<u8>>,
}

async fn serve(
    args: &ServeArgs,
    max_connections: u64,
    catalog: Arc<Catalog>,
    socket_address: std::net::SocketAddr,
    settled: Settled,
) -> anyhow::Result<()> {
    let Settled {
        root_password,
        mut jwt_secrets,
        log,
        tls,
        cluster_secret,
    } = settled;
    let listener =
        listen(socket_address).with_context(|| format!("cannot listen on {socket_address}"))?;
    let local = listener
        .local_addr()
        .context("cannot read the bound address")?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let endpoint = format!("{scheme}://{local}");
    let jwt_secret = jwt_secrets.remove(0);
    let member = match args
        .cluster
        .config(&format!("tcp://{local}"))
        .map_err(|e| anyhow!(e))?
    {
        None => None,
        Some(config) => {
            let agency = args.cluster.agency_endpoints.clone();
            let data_dir = args.data_dir.clone();
            let local_engine = catalog.clone() as Arc<dyn quince_db::Engine>;
            let started = tokio::task::spawn_blocking(move || {
                crate::cluster_member::start(
                    config,
                    &agency,
                    &data_dir,
                    local_engine,
                    cluster_secret,
                )
            })
            .await
            .context("the cluster start panicked")??;
            Some(started)
        }
    };
    let engine = match &member {
        Some(member) => member.engine.clone(),
        None => catalog as Arc<dyn quince_db::Engine>,
    };
    let api = Api::open(
        engine,
        ApiConfig {
            authentication: args.authentication,
            authentication_system_only: args.authentication_system_only,
            root_password,
            jwt_secret,
            jwt_passive_secrets: jwt_secrets,
            body_size_max: usize::try_from(args.max_body_size).expect("bounded by the parser"),
            import_size_max: usize::try_from(args.max_import_size).expect("bounded by the parser"),
            json_depth_max: usize::try_from(args.max_json_depth).expect("bounded by the parser"),
            reply_size_max: usize::try_from(args.max_reply_size).expect("bounded by the parser"),
            queue_size_max: usize::try_from(args.queue_size).expect("bounded by the parser"),
            jobs_per_user_max: quince_api::limits::jobs_per_user_max(
                usize::try_from(args.queue_size).expect("bounded by the parser"),
            ),
            endpoint: endpoint.clone(),
            static_dir: args.static_dir.clone(),
            static_prefix: args.static_prefix.clone(),
            query_memory_limit: args.query_memory_limit,
            query_global_memory_limit: args.query_global_memory_limit,
            api_call_recording: args.api_call_recording,
            options_api: quince_api::ApiPolicy::parse(&args.options_api).map_err(|e| anyhow!(e))?,
            support_info_api: quince_api::ApiPolicy::parse(&args.support_info_api)
                .map_err(|e| anyhow!(e))?,
            log_api: quince_api::ApiPolicy::parse_switch(&args.log_api).map_err(|e| anyhow!(e))?,
            recording_api: quince_api::ApiPolicy::parse_switch(&args.recording_api)
                .map_err(|e| anyhow!(e))?,
            compress_response_threshold: args.compress_response_threshold,
        },
    )
    .map_err(|e| anyhow!("cannot open the user accounts: {e}"))?;
    crate::admin_hooks::install(&api, args, Some(log));
    if let Some(member) = &member {
        api.install_cluster(member.ops.clone());
    }
    if let Some(tls) = &tls {
        api.install_tls(tls.clone() as Arc<dyn quince_api::TlsControl>);
    }
    let max_connections = usize::try_from(max_connections).expect("bounded by the parser");
    let governor = Governor::new(Limits::new(
        max_connections,
        Duration::from_secs(args.keep_alive_timeout_s),
    ));
    let (stop_sender, stop) = watch::channel(false);
    tokio::spawn(governor.clone().run_sweeper(stop.clone()));
    let connections = governor.permits().clone();
    let accept_loop = tokio::spawn(listener::serve_connections(
        listener,
        api.clone(),
        governor.clone(),
        tls,
        stop,
    ));

    let mut signals = shutdown::Signals::install().context("cannot install signal handlers")?;
    // The one line scripts wait for; everything else goes to the log on stderr.
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "quince: listening on {endpoint}").context("cannot write to stdout")?;
    stdout.flush().context("cannot flush stdout")?;
    drop(stdout);
    tracing::info!(event = "server.ready", %endpoint, authentication = args.authentication);

    let signal = signals.wait().await;
    tracing::info!(
        event = "server.stopping",
        signal,
        "refusing new requests, draining connections"
    );
    api.begin_shutdown();
    stop_sender.send_replace(true);
    let _ = accept_loop.await;
    let all = u32::try_from(max_connections).expect("bounded by the parser");
    match tokio::time::timeout(DRAIN_TIMEOUT, connections.acquire_many(all)).await {
        Ok(_) => tracing::info!(event = "server.drained", "every connection closed"),
        Err(_) => tracing::warn!(
            event = "server.drain_timeout",
            open = max_connections - connections.available_permits(),
            "connections still open after the drain timeout; closing anyway"
        ),
    }
    // Queued asynchronous jobs run to their end (or are logged as dropped) before the
    // catalog closes, so none is cut off halfway.
    api.finish_jobs(DRAIN_TIMEOUT).await;
    if let Some(member) = member {
        // Leaving revokes the heartbeat lease: supervision sees the server gone at once.
        let _ = tokio::task::spawn_blocking(move || member.stop()).await;
    }
    Ok(())
}

/// The TLS configuration of an ssl:// endpoint, from the `--ssl.*` options: it needs
/// `--ssl.keyfile`, and every file must read and check out before the server starts.
fn tls_server(args: &ServeArgs) -> anyhow::Result<Arc<TlsServer>> {
    let keyfile = args.ssl_keyfile.clone().ok_or_else(|| {
        anyhow!(
            "endpoint '{}' needs --ssl.keyfile (a PEM file with the certificate chain and the \
             private key)",
            args.endpoint
        )
    })?;
    let protocol = Protocol::from_number(args.ssl_protocol)
        .ok_or_else(|| anyhow!("--ssl.protocol {} is not supported", args.ssl_protocol))?;
    TlsServer::open(TlsFiles {
        keyfile,
        cafile: args.ssl_cafile.clone(),
        server_names: args.ssl_server_names.clone(),
        protocol,
    })
    .map_err(|e| anyhow!("cannot set up TLS: {e}"))
}

/// Root's password by the rule every command shares ([`quince_client::password`]): the option,
/// else `QUINCE_ROOT_PASSWORD`, else `ARANGO_ROOT_PASSWORD`, else empty (with a warning, since
/// anyone may then log in as root).
fn root_password(args: &ServeArgs) -> String {
    if let Some(password) = quince_client::password(args.password.clone()) {
        return password;
    }
    if args.authentication {
        tracing::warn!(
            event = "server.empty_root_password",
            "root has an empty password: set --database.password or QUINCE_ROOT_PASSWORD"
        );
    }
    String::new()
}
