// arangojs against a cluster started by `quince start` (3 etcd members, 3 DB servers, 2
// coordinators on loopback): documents, collections, imports, indexes and AQL through both
// coordinators with round-robin load balancing, the host list from /_api/cluster/endpoints, and
// failover between coordinators when one of them is killed.
//
// Skipped when the etcd binary is missing (scripts/test.sh installs it).

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, openSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";

import { Database } from "arangojs";
import { quinceBin } from "./server.mjs";

const HAVE_ETCD = spawnSync("sh", ["-c", "command -v etcd"]).status === 0;
const READY = /^quince start: ready: (\S+)\s*$/;
const START_TIMEOUT_MS = 120_000;

async function portFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A base port whose next 40 ports are free now. */
async function freeBase() {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 35000);
    let free = true;
    for (let port = base; port <= base + 40 && free; port++) free = await portFree(port);
    if (free) return base;
  }
  throw new Error("no free port range");
}

class Starter {
  async start() {
    this.dir = mkdtempSync(path.join(tmpdir(), "quince-js-cluster-"));
    const log = openSync(path.join(this.dir, "starter.log"), "a");
    const base = await freeBase();
    this.proc = spawn(
      quinceBin(),
      [
        "start",
        "--starter.data-dir", this.dir,
        "--starter.port", String(base),
        "--all.cluster.heartbeat-ttl=1",
        "--all.agency.supervision-frequency=0.25",
        "--all.agency.supervision-ok-threshold=1",
        "--all.agency.supervision-grace-period=1.5",
      ],
      { stdio: ["ignore", "pipe", log] },
    );
    closeSync(log);
    this.exited = new Promise((resolve) => this.proc.once("exit", (code) => resolve(code)));
    this.urls = await new Promise((resolve, reject) => {
      let buffered = "";
      const timer = setTimeout(() => reject(new Error(`no ready line within ${START_TIMEOUT_MS} ms\n${this.tail()}`)),
        START_TIMEOUT_MS);
      this.proc.stdout.setEncoding("utf8");
      this.proc.stdout.on("data", (chunk) => {
        buffered += chunk;
        let newline;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          const match = READY.exec(line);
          if (match) {
            clearTimeout(timer);
            resolve(match[1].split(","));
          }
        }
      });
      this.proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`quince start exited with ${code}\n${this.tail()}`));
      });
    });
    this.proc.stdout.resume();
    return this;
  }

  setup() {
    return JSON.parse(readFileSync(path.join(this.dir, "setup.json"), "utf8"));
  }

  tail() {
    try {
      return readFileSync(path.join(this.dir, "starter.log"), "utf8").slice(-4000);
    } catch {
      return "(no log)";
    }
  }

  async stop() {
    if (!this.proc) return;
    if (this.proc.exitCode === null) this.proc.kill("SIGTERM");
    const code = await this.exited;
    rmSync(this.dir, { recursive: true, force: true });
    assert.equal(code, 0, "quince start exits 0 on SIGTERM");
  }
}

const starter = new Starter();
let db;

before(async () => {
  if (!HAVE_ETCD) return;
  await starter.start();
  db = new Database({
    url: starter.urls,
    loadBalancingStrategy: "ROUND_ROBIN",
    auth: { username: "root", password: "" },
  });
}, { timeout: START_TIMEOUT_MS + 10_000 });

after(async () => {
  if (HAVE_ETCD) await starter.stop();
}, { timeout: 90_000 });

test("the coordinators list each other and say what they are", { skip: !HAVE_ETCD }, async () => {
  assert.equal(starter.urls.length, 2);
  const role = await db.route("/_admin/server/role").get();
  assert.equal(role.parsedBody.role, "COORDINATOR");
  const hosts = await db.acquireHostList();
  assert.equal(hosts, undefined);
  const endpoints = await db.route("/_api/cluster/endpoints").get();
  assert.equal(endpoints.parsedBody.endpoints.length, 2);
});

test("documents, imports, indexes and queries go through the coordinators", { skip: !HAVE_ETCD }, async () => {
  const col = db.collection(`c_${Date.now()}`);
  await col.create({ numberOfShards: 3, replicationFactor: 2 });
  const props = await col.properties();
  assert.equal(props.numberOfShards, 3);
  assert.equal(props.replicationFactor, 2);
  const meta = await col.save({ _key: "one", n: 1 });
  assert.equal(meta._id, `${col.name}/one`);
  assert.equal((await col.document("one")).n, 1);
  await col.update("one", { m: 2 });
  assert.equal((await col.document("one")).m, 2);
  const saved = await col.saveAll([{ n: 2 }, { n: 3 }, { _key: "one" }]);
  assert.ok(saved[0]._key && saved[1]._key);
  assert.equal(saved[2].errorNum, 1210);
  const imported = await col.import(Array.from({ length: 200 }, (_, i) => ({ _key: `i${i}`, v: i % 5 })));
  assert.equal(imported.created, 200);
  const index = await col.ensureIndex({ type: "persistent", fields: ["v"] });
  assert.equal(index.type, "persistent");
  assert.ok((await col.indexes()).some((i) => i.id === index.id));
  const cursor = await db.query(`FOR d IN ${col.name} FILTER d.v == 2 RETURN d._key`);
  assert.equal((await cursor.all()).length, 40);
  assert.equal((await col.count()).count, 203);
  await col.remove("one");
  assert.equal(await col.documentExists("one"), false);
  await col.drop();
});

test("a stream transaction's requests reach its coordinator whichever one they go to", { skip: !HAVE_ETCD }, async () => {
  const col = db.collection(`t_${Date.now()}`);
  await col.create({ numberOfShards: 2 });
  const trx = await db.beginTransaction({ write: [col] });
  // Round-robin: these requests alternate between the two coordinators.
  for (let i = 0; i < 6; i++) {
    await trx.step(() => col.save({ _key: `t${i}`, i }));
  }
  assert.equal((await trx.get()).status, "running");
  assert.equal((await trx.step(() => col.count())).count, 6);
  assert.equal((await col.count()).count, 0, "not visible outside before the commit");
  assert.equal((await trx.commit()).status, "committed");
  assert.equal((await col.count()).count, 6);
  const cursor = await db.query(`FOR d IN ${col.name} SORT d.i RETURN d.i`, {}, { batchSize: 2 });
  assert.deepEqual(await cursor.all(), [0, 1, 2, 3, 4, 5]);
  await col.drop();
});

test("a killed coordinator is failed over to the other", { skip: !HAVE_ETCD }, async () => {
  const col = db.collection(`f_${Date.now()}`);
  await col.create({ numberOfShards: 2 });
  const coordinators = starter.setup().processes.filter((p) => p.role === "coordinator");
  assert.equal(coordinators.length, 2);
  process.kill(coordinators[0].pid, "SIGKILL");
  // Once its port refuses connections the driver has seen its sockets close too; from then on
  // every request succeeds: a refused connection is retried on the other coordinator.
  const port = Number(new URL(starter.urls.find((u) => u.endsWith(`:${coordinators[0].port}`)) ?? starter.urls[0]).port);
  const deadline = Date.now() + 30_000;
  while (await new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => { socket.destroy(); resolve(true); });
    socket.once("error", () => resolve(false));
  })) {
    assert.ok(Date.now() < deadline, "the killed coordinator's port still accepts connections");
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (let i = 0; i < 20; i++) {
    await col.save({ _key: `k${i}` });
    assert.equal((await col.document(`k${i}`))._key, `k${i}`);
  }
  assert.equal((await col.count()).count, 20);
});
