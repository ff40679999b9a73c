//! This server as a member of a cluster: the agency connection, the server's id, its
//! registration and heartbeat, and its role (coordinator or DB server), started before the
//! API opens and stopped after the last request.
//!
//! What it is: [`start`], which connects to etcd (`--cluster.agency-endpoint`, waiting for it
//! up to [`AGENCY_WAIT`]), reads or makes the server's id (`<data-dir>/SERVER_ID`: a restarted
//! server is the same member), joins ([`quince_cluster::node::Node`]), and starts the role: a
//! coordinator's engine over the Plan (`quince_cluster::coordinator`) plus the supervision
//! runner (which acts only while this coordinator wins the election), or a DB server's
//! replicating engine over the local catalog (`quince_cluster::dbserver`). The result is the
//! engine the API serves and the [`ClusterOps`] it answers the cluster endpoints with.
//!
//! What it is not: the role's logic (the cluster crate), or the options (`cluster_options`).
//!
//! Invariants: a member of a cluster with authentication needs the cluster's shared JWT secret
//! (`--server.jwt-secret-keyfile`): members sign their requests to each other with it; the id
//! file is written once, atomically (temp file, fsync, rename), and never changes.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use quince_cluster::admin::Member;
use quince_cluster::coordinator::Coordinator;
use quince_cluster::dbserver::DbServer;
use quince_cluster::layout::Role;
use quince_cluster::node::{ClusterConfig, Node};
use quince_cluster::supervision::{SupervisionConfig, SupervisionRunner};
use quince_meta::{EtcdOptions, EtcdStore, MetaStore};
use quince_ops::{ClusterOps, Engine};

/// How long a starting member waits for the agency to answer.
pub const AGENCY_WAIT: Duration = Duration::from_secs(60);

/// The file that keeps the server's id.
const ID_FILE: &str = "SERVER_ID";

/// A started member (see the module documentation).
pub struct ClusterMember {
    /// What the API serves.
    pub engine: Arc<dyn Engine>,
    /// What the API answers the cluster endpoints with.
    pub ops: Arc<dyn ClusterOps>,
    node: Arc<Node>,
    role: RoleParts,
    supervision: Option<SupervisionRunner>,
}

enum RoleParts {
    Coordinator(Arc<Coordinator>),
    DbServer(Arc<DbServer>),
}

/// Joins the cluster as `config.role`, with the local catalog `local` (a DB server's shards
/// live there; a coordinator keeps none).
pub fn start(
    config: ClusterConfig,
    agency: &[String],
    data_dir: &Path,
    local: Arc<dyn Engine>,
    jwt_secret: Option<Vec<u8>>,
) -> anyhow::Result<ClusterMember> {
    let store = connect(agency)?;
    let id = server_id(data_dir, config.role)?;
    let role = config.role;
    let supervision_config = SupervisionConfig {
        frequency: config.supervision_frequency,
        ok_threshold: config.supervision_ok_threshold,
        grace_period: config.supervision_grace_period,
        ..SupervisionConfig::default()
    };
    let layout = config.layout.clone();
    let node = Node::join(
        store.clone(),
        config,
        id.clone(),
        quince_api::limits::ARANGODB_VERSION,
        "quince",
    )
    .map_err(|e| anyhow!("cannot register in the agency: {e}"))?;
    tracing::info!(event = "cluster.joined", id = %id, short_name = %node.short_name, role = ?role);
    let member = match role {
        Role::Coordinator => {
            let coordinator = quince_cluster::coordinator::start(node.clone(), jwt_secret)
                .map_err(|e| anyhow!("cannot start the coordinator: {e}"))?;
            let supervision = SupervisionRunner::start(store, layout, supervision_config, id)
                .context("cannot start the supervision thread")?;
            ClusterMember {
                engine: coordinator.engine(),
                ops: Arc::new(Member::new(node.clone(), coordinator.clone())),
                node,
                role: RoleParts::Coordinator(coordinator),
                supervision: Some(supervision),
            }
        }
        Role::Dbserver => {
            let dbserver = quince_cluster::dbserver::start(node.clone(), local, jwt_secret)
                .map_err(|e| anyhow!("cannot start the DB server: {e}"))?;
            ClusterMember {
                engine: dbserver.engine(),
                ops: Arc::new(Member::new(node.clone(), dbserver.clone())),
                node,
                role: RoleParts::DbServer(dbserver),
                supervision: None,
            }
        }
    };
    Ok(member)
}

impl ClusterMember {
    /// Stops the role's threads and leaves the cluster (the heartbeat key goes at once).
    pub fn stop(self) {
        if let Some(supervision) = self.supervision {
            supervision.stop();
        }
        match &self.role {
            RoleParts::Coordinator(coordinator) => coordinator.stop(),
            RoleParts::DbServer(dbserver) => dbserver.stop(),
        }
        self.node.leave();
    }
}

/// Connects to etcd, retrying until it answers or [`AGENCY_WAIT`] passed.
fn connect(agency: &[String]) -> anyhow::Result<Arc<dyn MetaStore>> {
    let deadline = Instant::now() + AGENCY_WAIT;
    loop {
        let attempt = EtcdStore::connect(agency, EtcdOptions::default())
            .and_then(|store| store.get("/").map(|_| store));
        match attempt {
            Ok(store) => return Ok(Arc::new(store)),
            Err(error) if Instant::now() < deadline => {
                tracing::warn!(event = "cluster.agency_unreachable", "{error}; retrying");
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(error) => {
                return Err(anyhow!(
                    "the agency ({}) did not answer within {} s: {error}",
                    agency.join(", "),
                    AGENCY_WAIT.as_secs()
                ))
            }
        }
    }
}

/// The server's id: read from the data directory, or made (`PRMR-<uuid>`, `CRDN-<uuid>`) and
/// kept there. A data directory of one role cannot serve the other.
fn server_id(data_dir: &Path, role: Role) -> anyhow::Result<String> {
    let path = data_dir.join(ID_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let id = text.trim().to_string();
            if !id.starts_with(role.id_prefix()) {
                return Err(anyhow!(
                    "{} holds the id {id}, which is not a {:?}'s: this data directory belongs \
                     to another role",
                    path.display(),
                    role
                ));
            }
            Ok(id)
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let id = format!("{}-{}", role.id_prefix(), uuid::Uuid::new_v4());
            let temporary = data_dir.join(format!("{ID_FILE}.tmp"));
            {
                use std::io::Write;
                let mut file = std::fs::File::create(&temporary)
                    .with_context(|| format!("cannot write {}", temporary.display()))?;
                file.write_all(id.as_bytes())?;
                file.sync_all()?;
            }
            std::fs::rename(&temporary, &path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            std::fs::File::open(data_dir)
                .and_then(|dir| dir.sync_all())
                .with_context(|| format!("cannot sync {}", data_dir.display()))?;
            Ok(id)
        }
        Err(error) => Err(anyhow!("cannot read {}: {error}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_made_once_and_kept_for_its_role() {
        let dir = tempfile::tempdir().unwrap();
        let first = server_id(dir.path(), Role::Dbserver).unwrap();
        assert!(first.starts_with("PRMR-"));
        assert_eq!(server_id(dir.path(), Role::Dbserver).unwrap(), first);
        let refused = server_id(dir.path(), Role::Coordinator).unwrap_err();
        assert!(refused.to_string().contains("another role"), "{refused}");
    }
}
