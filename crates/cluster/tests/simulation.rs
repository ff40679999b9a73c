//! Deterministic simulation of supervision and the in-sync rules over the in-memory metadata
//! store (`docs/cluster.md`, "Failover").
//!
//! Each seed builds a [`World`]: 3-5 simulated DB servers, 1-3 shards of one collection
//! (replicationFactor 3, writeConcern 1 or 2), one or two supervising coordinators running the
//! real `Supervisor`, clients writing unique values to the leader their (possibly stale) Plan
//! names, and random faults for 60 simulated seconds; then every fault heals. Checked:
//! - (a) every acknowledged write of a synchronous shard is on the shard's final leader and
//!   on every member of its final in-sync set;
//! - (b) a shard's epoch never goes down, and each epoch has one leader (in Plan, and among
//!   the servers that acknowledged writes);
//! - (c) every write acknowledged at an epoch was held by the leader of each later epoch
//!   when that leader acknowledged its first write (two leaders never acknowledge in a way
//!   that loses writes);
//! - (d) liveness: within 60 s of the healing every shard has a `GOOD` leader that
//!   acknowledged a write; no failover happens before the old leader's heartbeat was gone
//!   for the grace period; and in a calm cluster a crashed leader is replaced within
//!   `grace_period + frequency + heartbeat TTL`.
//!
//! `QUINCE_SIM_SEED=<n>` runs one seed; `QUINCE_SIM_RUNS=<n>` sets how many seeds (default
//! 400 synchronous, 100 asynchronous). A failure prints the seed and the last events.

mod support;

#[path = "simulation/dbserver.rs"]
mod dbserver;
#[path = "simulation/faults.rs"]
mod faults;
#[path = "simulation/history.rs"]
mod history;
#[path = "simulation/link.rs"]
mod link;
#[path = "simulation/net.rs"]
mod net;
#[path = "simulation/world.rs"]
mod world;

use std::time::{Duration, Instant};

use world::{SimOptions, World};

/// The seeds to run: `QUINCE_SIM_SEED` alone, or `QUINCE_SIM_RUNS` (default `runs`) seeds
/// from a fixed start.
fn seeds(runs: u64) -> Vec<u64> {
    if let Some(seed) = std::env::var("QUINCE_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return vec![seed];
    }
    let runs = std::env::var("QUINCE_SIM_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(runs);
    (0..runs).map(|i| 1_000 + i).collect()
}

/// What one run found.
struct Outcome {
    acked: usize,
    failovers: usize,
    late_acks: usize,
    lost: usize,
    settled_ms: u64,
}

fn run_seed(seed: u64, synchronous: bool) -> Result<Outcome, String> {
    let options = SimOptions::from_seed(seed, synchronous);
    let mut world = World::new(options.clone());
    let fail = |world: &World, what: String| {
        format!(
            "seed {seed} failed (rerun: QUINCE_SIM_SEED={seed}): {what}\noptions: {options:?}\n\
             last events:\n{}",
            world.trace.dump()
        )
    };
    let settled_ms = world.run().map_err(|e| fail(&world, e))?;
    let missing = world.missing_at_end();
    let lost = missing
        .iter()
        .filter(|(shard, server, _)| *server == world.final_leader(*shard))
        .map(|(_, _, values)| values.len())
        .sum();
    if synchronous {
        world.history.check_epoch_handover();
        if let Some((shard, server, values)) = missing.first() {
            return Err(fail(
                &world,
                format!(
                    "(a) shard {shard}: {server} lacks acknowledged writes {values:?} ({} in all)",
                    missing.len()
                ),
            ));
        }
    }
    if let Some(violation) = world.history.violations.first() {
        return Err(fail(&world, violation.clone()));
    }
    Ok(Outcome {
        acked: world.history.acked.len(),
        failovers: world.history.failovers.len(),
        late_acks: world.history.late_acks,
        lost,
        settled_ms,
    })
}

fn run_all(synchronous: bool, default_runs: u64) -> Vec<Outcome> {
    let started = Instant::now();
    let seeds = seeds(default_runs);
    let mut outcomes = Vec::new();
    for seed in &seeds {
        match run_seed(*seed, synchronous) {
            Ok(outcome) => outcomes.push(outcome),
            Err(report) => panic!("{report}"),
        }
    }
    let sum = |f: fn(&Outcome) -> usize| outcomes.iter().map(f).sum::<usize>();
    let worst_settle = outcomes.iter().map(|o| o.settled_ms).max().unwrap_or(0);
    println!(
        "{} mode: {} seeds in {:.1?}: {} acknowledged writes, {} failovers, {} late \
         acknowledgements of an older epoch, {} acknowledged writes lost, slowest settling {} ms",
        if synchronous {
            "synchronous"
        } else {
            "asynchronous"
        },
        seeds.len(),
        started.elapsed(),
        sum(|o| o.acked),
        sum(|o| o.failovers),
        sum(|o| o.late_acks),
        sum(|o| o.lost),
        worst_settle
    );
    outcomes
}

#[test]
fn synchronous_replication_loses_no_acknowledged_write_under_faults() {
    let outcomes = run_all(true, 400);
    assert!(
        outcomes.iter().map(|o| o.failovers).sum::<usize>() > 0 || outcomes.len() < 5,
        "the faults caused no failover at all: the simulation tests nothing"
    );
}

#[test]
fn asynchronous_replication_counts_the_writes_a_failover_loses() {
    // Not a failure: asynchronous mode may lose acknowledged writes; the figure is printed.
    run_all(false, 100);
}

#[test]
fn a_crashed_leader_is_replaced_within_the_bound_and_takes_writes() {
    let mut times = Vec::new();
    for seed in seeds(20) {
        let mut options = SimOptions::from_seed(seed, true);
        options.fault_rate = 0.0;
        options.loss = 0.0;
        let mut world = World::new(options);
        // Crash the leader of shard 0 at a moment it has an in-sync follower (without one
        // the shard rightly waits for its leader).
        let in_sync_members = |world: &World| {
            let state =
                quince_cluster::in_sync::read_shard(&world.store, &world.layout, &world.shards[0])
                    .unwrap();
            let plan = state.plan.unwrap();
            state
                .current
                .filter(|c| c.epoch == plan.epoch)
                .map_or(0, |c| c.in_sync.len())
        };
        while world.now < 10_000 || in_sync_members(&world) < 2 {
            assert!(world.now < 60_000, "seed {seed}: never in sync");
            world.step(false);
        }
        let shard = &world.shards[0];
        let key = world.layout.shard_plan(&shard.db, shard.cid, &shard.shard);
        let leader_of = |world: &World| {
            let entry = quince_meta::MetaStore::get(&world.store, &key)
                .unwrap()
                .unwrap();
            dbserver::plan_of(&entry.value).unwrap().leader
        };
        let old = leader_of(&world);
        let index = dbserver::index_of(&old);
        let crashed_at = world.now;
        world.crash_for_test(index);
        while leader_of(&world) == old {
            assert!(
                world.now < crashed_at + 30_000,
                "seed {seed}: no failover\n{}",
                world.trace.dump()
            );
            world.step(false);
        }
        let took = Duration::from_millis(world.now - crashed_at);
        let bound = world.config.grace_period
            + world.config.frequency
            + support::HEARTBEAT_TTL
            + Duration::from_millis(world.options.step_ms);
        assert!(
            took >= world.config.grace_period && took <= bound,
            "seed {seed}: failover after {took:?}, expected within [{:?}, {bound:?}]\n{}",
            world.config.grace_period,
            world.trace.dump()
        );
        times.push(took);
        world.heal();
        let healed = world.now;
        while world.live_shards() < world.shards.len() {
            assert!(
                world.now < healed + 10_000,
                "seed {seed}: no writes after failover ({} of {} shards live)\n{}",
                world.live_shards(),
                world.shards.len(),
                world.trace.dump()
            );
            world.step(false);
        }
    }
    println!(
        "failover of a crashed leader: {} runs, {:?} to {:?} after the crash",
        times.len(),
        times.iter().min().unwrap(),
        times.iter().max().unwrap()
    );
}
