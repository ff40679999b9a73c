//! The `--cluster.*` and `--agency.*` options of `quince serve`: the server's role in a
//! cluster and the cluster's settings, with ArangoDB's names.
//!
//! What it is: [`ClusterArgs`] (flattened into `quince serve`'s options) and
//! [`ClusterArgs::config`], which turns them into the cluster crate's
//! [`quince_cluster::node::ClusterConfig`]. Without `--cluster.my-role` the server is a single
//! server and every other option here is ignored.
//!
//! What it is not: the start of the member (the serve module does that once the agency is
//! reachable).
//!
//! Invariants: a role needs at least one `--cluster.agency-endpoint`; durations are positive
//! and the grace period is not shorter than the ok threshold; the replication-factor bounds
//! are ordered (min <= default <= max) and the write concern is at least 1.

use std::time::Duration;

use clap::{ArgAction, Args};
use quince_cluster::layout::{Layout, Role};
use quince_cluster::node::ClusterConfig;

/// The cluster options of `quince serve`.
#[derive(Args, Debug, Clone)]
pub struct ClusterArgs {
    /// The server's role in a cluster: COORDINATOR or DBSERVER (PRIMARY is accepted for
    /// DBSERVER). Without it the server is a single server.
    #[arg(long = "cluster.my-role", value_name = "ROLE", value_parser = parse_role)]
    pub role: Option<Role>,

    /// An endpoint of the agency (an etcd member: tcp://HOST:PORT or http://HOST:PORT);
    /// repeat it for every member.
    #[arg(long = "cluster.agency-endpoint", value_name = "URL", action = ArgAction::Append)]
    pub agency_endpoints: Vec<String>,

    /// The endpoint other members and clients use to reach this server (default: the
    /// endpoint it listens on).
    #[arg(long = "cluster.my-address", value_name = "URL")]
    pub my_address: Option<String>,

    /// The key prefix of the cluster in the agency.
    #[arg(
        long = "cluster.agency-prefix",
        value_name = "PATH",
        default_value = "/arango"
    )]
    pub agency_prefix: String,

    /// The replicationFactor of new collections that do not give one.
    #[arg(long = "cluster.default-replication-factor", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=10))]
    pub default_replication_factor: u32,

    /// The smallest replicationFactor a collection may have.
    #[arg(long = "cluster.min-replication-factor", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=10))]
    pub min_replication_factor: u32,

    /// The largest replicationFactor a collection may have.
    #[arg(long = "cluster.max-replication-factor", value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=10))]
    pub max_replication_factor: u32,

    /// The writeConcern of new collections that do not give one.
    #[arg(long = "cluster.write-concern", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=10))]
    pub write_concern: u32,

    /// The largest numberOfShards a collection may have.
    #[arg(long = "cluster.max-number-of-shards", value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_number_of_shards: u32,

    /// The HTTP status of a write refused for its write concern (errorNum 1429): 403 or 503.
    #[arg(long = "cluster.failed-write-concern-status-code", value_name = "CODE",
          default_value_t = 403, value_parser = parse_write_concern_status)]
    pub failed_write_concern_status: u16,

    /// The lease of the server's heartbeat key, in seconds: this long after its last renewal
    /// a silent server's heartbeat is gone.
    #[arg(long = "cluster.heartbeat-ttl", value_name = "SECONDS", default_value_t = 3.0,
          value_parser = parse_seconds)]
    pub heartbeat_ttl: f64,

    /// How long a shard leader waits for a follower before it leaves the in-sync set, in
    /// seconds.
    #[arg(long = "cluster.follower-timeout", value_name = "SECONDS", default_value_t = 3.0,
          value_parser = parse_seconds)]
    pub follower_timeout: f64,

    /// How often supervision runs, in seconds.
    #[arg(long = "agency.supervision-frequency", value_name = "SECONDS", default_value_t = 1.0,
          value_parser = parse_seconds)]
    pub supervision_frequency: f64,

    /// A server without heartbeat this long is BAD, in seconds.
    #[arg(long = "agency.supervision-ok-threshold", value_name = "SECONDS",
          default_value_t = 5.0, value_parser = parse_seconds)]
    pub supervision_ok_threshold: f64,

    /// A server without heartbeat this long is FAILED and its shards fail over, in seconds.
    #[arg(long = "agency.supervision-grace-period", value_name = "SECONDS",
          default_value_t = 10.0, value_parser = parse_seconds)]
    pub supervision_grace_period: f64,
}

fn parse_role(text: &str) -> Result<Role, String> {
    match text.trim().to_ascii_uppercase().as_str() {
        "COORDINATOR" => Ok(Role::Coordinator),
        "DBSERVER" | "PRIMARY" => Ok(Role::Dbserver),
        "SINGLE" | "AGENT" => Err(format!(
            "'{text}' is not a cluster role of quince serve: use COORDINATOR or DBSERVER \
             (the agency is etcd; a single server takes no role)"
        )),
        _ => Err(format!(
            "'{text}' is not a role: use COORDINATOR or DBSERVER"
        )),
    }
}

fn parse_write_concern_status(text: &str) -> Result<u16, String> {
    match text.trim() {
        "403" => Ok(403),
        "503" => Ok(503),
        _ => Err(format!("'{text}' is not 403 or 503")),
    }
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0 => Ok(seconds),
        _ => Err(format!(
            "'{text}' is not a number of seconds (above 0, at most 86400)"
        )),
    }
}

impl ClusterArgs {
    /// The cluster configuration for a server listening on `bound` (`tcp://host:port`), or
    /// none for a single server. The message says what is inconsistent.
    pub fn config(&self, bound: &str) -> Result<Option<ClusterConfig>, String> {
        let Some(role) = self.role else {
            return Ok(None);
        };
        if self.agency_endpoints.is_empty() {
            return Err("--cluster.my-role needs at least one --cluster.agency-endpoint".into());
        }
        if !(self.min_replication_factor <= self.default_replication_factor
            && self.default_replication_factor <= self.max_replication_factor)
        {
            return Err(format!(
                "--cluster.min-replication-factor ({}) <= --cluster.default-replication-factor \
                 ({}) <= --cluster.max-replication-factor ({}) does not hold",
                self.min_replication_factor,
                self.default_replication_factor,
                self.max_replication_factor
            ));
        }
        if self.supervision_grace_period < self.supervision_ok_threshold {
            return Err("--agency.supervision-grace-period is shorter than \
                        --agency.supervision-ok-threshold"
                .into());
        }
        let address = self.my_address.clone().unwrap_or_else(|| bound.to_string());
        let mut config = ClusterConfig::new(role, &address);
        config.layout = Layout::new(&self.agency_prefix);
        config.default_replication_factor = self.default_replication_factor;
        config.min_replication_factor = self.min_replication_factor;
        config.max_replication_factor = self.max_replication_factor;
        config.write_concern = self.write_concern;
        config.max_number_of_shards = self.max_number_of_shards;
        config.failed_write_concern_status = self.failed_write_concern_status;
        config.heartbeat_ttl = Duration::from_secs_f64(self.heartbeat_ttl);
        config.follower_timeout = Duration::from_secs_f64(self.follower_timeout);
        config.supervision_frequency = Duration::from_secs_f64(self.supervision_frequency);
        config.supervision_ok_threshold = Duration::from_secs_f64(self.supervision_ok_threshold);
        config.supervision_grace_period = Duration::from_secs_f64(self.supervision_grace_period);
        Ok(Some(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Probe {
        #[command(flatten)]
        cluster: ClusterArgs,
    }

    fn parse(args: &[&str]) -> Result<ClusterArgs, clap::Error> {
        Probe::try_parse_from(std::iter::once("probe").chain(args.iter().copied()))
            .map(|probe| probe.cluster)
    }

    #[test]
    fn a_single_server_has_no_cluster_configuration() {
        let args = parse(&[]).unwrap();
        assert!(args.config("tcp://127.0.0.1:1").unwrap().is_none());
    }

    #[test]
    fn a_role_takes_arangodb_names_and_needs_the_agency() {
        let args = parse(&["--cluster.my-role", "PRIMARY"]).unwrap();
        assert_eq!(args.role, Some(Role::Dbserver));
        assert!(args
            .config("tcp://127.0.0.1:1")
            .unwrap_err()
            .contains("agency-endpoint"));
        let args = parse(&[
            "--cluster.my-role=coordinator",
            "--cluster.agency-endpoint=tcp://127.0.0.1:2379",
            "--cluster.agency-endpoint",
            "tcp://127.0.0.1:2389",
            "--agency.supervision-grace-period=4",
            "--agency.supervision-ok-threshold=2",
            "--cluster.heartbeat-ttl=1.5",
        ])
        .unwrap();
        assert_eq!(args.agency_endpoints.len(), 2);
        let config = args.config("tcp://127.0.0.1:8529").unwrap().unwrap();
        assert_eq!(config.role, Role::Coordinator);
        assert_eq!(config.my_address, "tcp://127.0.0.1:8529");
        assert_eq!(config.supervision_grace_period, Duration::from_secs(4));
        assert_eq!(config.heartbeat_ttl, Duration::from_millis(1500));
    }

    #[test]
    fn inconsistent_settings_are_refused() {
        assert!(parse(&["--cluster.my-role", "AGENT"]).is_err());
        assert!(parse(&["--cluster.failed-write-concern-status-code", "500"]).is_err());
        assert!(parse(&["--cluster.heartbeat-ttl", "0"]).is_err());
        let args = parse(&[
            "--cluster.my-role=DBSERVER",
            "--cluster.agency-endpoint=tcp://h:1",
            "--cluster.min-replication-factor=3",
            "--cluster.default-replication-factor=2",
        ])
        .unwrap();
        assert!(args
            .config("tcp://h:2")
            .unwrap_err()
            .contains("min-replication-factor"));
    }
}
