// AQL, cursors, query management and indexes through arangojs: db.query with the aql
// template, cursor iteration (all, next, batches, forEach, map, count, extra), explain,
// parse, listRunningQueries/killQuery, query tracking and the slow log, user functions
// (disabled: no JavaScript), and the index API (ensureIndex, indexes, index, dropIndex).
//
// One server for the file (server.mjs); each test makes its own collections.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";

import { aql } from "arangojs";
import { isArangoError } from "arangojs/errors";

import { serverForFile } from "./server.mjs";

let db;
serverForFile((handle) => {
  db = handle;
});

function unique(prefix) {
  return `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

async function filledCollection(n) {
  const col = await db.createCollection(unique("col"));
  const docs = [];
  for (let i = 0; i < n; i++) docs.push({ _key: `k${i}`, a: i, g: i % 3 });
  await col.saveAll(docs);
  return col;
}

async function rejectsWith(promise, errorNum, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(isArangoError(err), `not an ArangoError: ${err}`);
    assert.equal(err.errorNum, errorNum, err.message);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

describe("queries and cursors", () => {
  test("the aql template, bind variables and all()", async () => {
    const col = await filledCollection(30);
    const min = 20;
    const cursor = await db.query(aql`FOR d IN ${col} FILTER d.a >= ${min} SORT d.a RETURN d.a`, {
      count: true,
    });
    assert.equal(cursor.count, 10);
    assert.deepEqual(await cursor.all(), [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
  });

  test("next, batches, forEach and map across batches", async () => {
    const cursor = await db.query(aql`FOR i IN 1..7 RETURN i`, { batchSize: 3 });
    assert.equal(await cursor.next(), 1);
    assert.equal(await cursor.next(), 2);
    assert.equal(cursor.hasNext, true);
    const rest = [];
    await cursor.forEach((v) => {
      rest.push(v);
    });
    assert.deepEqual(rest, [3, 4, 5, 6, 7]);
    const mapped = await (await db.query(aql`FOR i IN 1..5 RETURN i`, { batchSize: 2 })).map((v) => v * 10);
    assert.deepEqual(mapped, [10, 20, 30, 40, 50]);
    const batches = (await db.query(aql`FOR i IN 1..5 RETURN i`, { batchSize: 2 })).batches;
    assert.deepEqual(await batches.all(), [[1, 2], [3, 4], [5]]);
  });

  test("extra carries stats and warnings", async () => {
    const cursor = await db.query(aql`RETURN 1 / 0`);
    assert.deepEqual(await cursor.all(), [null]);
    assert.equal(cursor.extra.warnings[0].code, 1562);
    assert.equal(typeof cursor.extra.stats.executionTime, "number");
  });

  test("stream cursors and kill", async () => {
    const cursor = await db.query(aql`FOR i IN 1..1000000 RETURN i`, { stream: true, batchSize: 100 });
    assert.equal(await cursor.next(), 1);
    await cursor.kill();
  });

  test("parse errors are ArangoErrors with 1501", async () => {
    await rejectsWith(db.query("FOR x IN"), 1501, 400);
    await rejectsWith(db.query(aql`FOR d IN ${db.collection("no_such_collection")} RETURN d`), 1203, 404);
  });

  test("explain and parse", async () => {
    const col = await filledCollection(5);
    const explained = await db.explain(aql`FOR d IN ${col} FILTER d._key == "k1" RETURN d`);
    assert.ok(explained.plan.nodes.some((n) => n.type === "IndexNode"));
    const parsed = await db.parse(aql`FOR d IN ${col} FILTER d.a == ${1} RETURN d`);
    assert.equal(parsed.parsed, true);
    // A collection named by a bind parameter is not known before the parameters are bound.
    assert.deepEqual(parsed.collections, []);
    assert.deepEqual((await db.parse(`FOR d IN ${col.name} RETURN d`)).collections, [col.name]);
    assert.deepEqual(parsed.bindVars.sort(), ["@value0", "value1"].sort());
  });

  test("listRunningQueries, killQuery, tracking and the slow log", async () => {
    const running = db.query(aql`RETURN SLEEP(20)`);
    let listed = [];
    for (let i = 0; i < 500 && listed.length === 0; i++) {
      listed = (await db.listRunningQueries()).filter((q) => q.query.includes("SLEEP(20)"));
      if (listed.length === 0) await new Promise((r) => setImmediate(r));
    }
    assert.equal(listed.length, 1);
    await db.killQuery(listed[0].id);
    await rejectsWith(running, 1500, 410);
    const tracking = await db.queryTracking();
    assert.equal(tracking.enabled, true);
    await db.queryTracking({ slowQueryThreshold: 0 });
    try {
      await db.query(aql`RETURN "js slow"`);
      assert.ok((await db.listSlowQueries()).some((q) => q.query.includes("js slow")));
      await db.clearSlowQueries();
    } finally {
      await db.queryTracking({ slowQueryThreshold: 10 });
    }
  });

  test("user functions need JavaScript", async () => {
    assert.deepEqual(await db.listUserFunctions(), []);
    await rejectsWith(db.createUserFunction("my::f", "function () { return 1; }"), 36, 403);
  });

  test("queries inside a stream transaction", async () => {
    const col = await db.createCollection(unique("col"));
    const trx = await db.beginTransaction({ write: col });
    await trx.step(() => db.query(aql`INSERT { _key: "t" } INTO ${col}`));
    const inside = await trx.step(() => db.query(aql`RETURN LENGTH(${col})`));
    assert.deepEqual(await inside.all(), [1]);
    assert.equal((await col.count()).count, 0);
    await trx.commit();
    assert.equal((await col.count()).count, 1);
  });
});

describe("indexes", () => {
  test("ensureIndex, indexes, index, dropIndex", async () => {
    const col = await filledCollection(10);
    const created = await col.ensureIndex({ type: "persistent", fields: ["a"], name: "by_a", unique: true });
    assert.equal(created.isNewlyCreated, true);
    assert.equal(created.type, "persistent");
    const again = await col.ensureIndex({ type: "persistent", fields: ["a"], name: "by_a", unique: true });
    assert.equal(again.isNewlyCreated, false);
    assert.equal(again.id, created.id);
    const list = await col.indexes();
    assert.deepEqual(list.map((i) => i.type), ["primary", "persistent"]);
    const one = await col.index("by_a");
    assert.equal(one.id, created.id);
    await rejectsWith(col.save({ a: 3 }), 1210, 409);
    const cursor = await db.query(aql`FOR d IN ${col} FILTER d.a == 4 RETURN d._key`);
    assert.deepEqual(await cursor.all(), ["k4"]);
    await col.dropIndex("by_a");
    assert.deepEqual((await col.indexes()).map((i) => i.type), ["primary"]);
    await col.save({ a: 3 });
  });

  test("ttl indexes", async () => {
    const col = await db.createCollection(unique("col"));
    const ttl = await col.ensureIndex({ type: "ttl", fields: ["expires"], expireAfter: 3600 });
    assert.equal(ttl.type, "ttl");
    assert.equal(ttl.expireAfter, 3600);
  });
});
