// Stream transactions through arangojs: beginTransaction, step, commit, abort, get,
// listTransactions, db.transaction(id), withTransaction, and the errors a client sees
// (1200 conflicts, 1653/1654 on finished transactions, 1655 for unknown ids, 18 for a lock
// timeout, 36 for JavaScript transactions).
//
// One server for the file (server.mjs); each test makes its own collections.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";

import { isArangoError } from "arangojs/errors";

import { serverForFile } from "./server.mjs";

let db;
serverForFile((handle) => {
  db = handle;
});

function unique(prefix) {
  return `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

async function newCollection() {
  return db.createCollection(unique("col"));
}

/** Awaits `promise` and checks it rejects with an ArangoError of `errorNum` and HTTP `code`. */
async function rejectsWith(promise, errorNum, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(isArangoError(err), `not an ArangoError: ${err}`);
    assert.equal(err.errorNum, errorNum, err.message);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

describe("stream transactions", () => {
  test("begin, status, list, commit", async () => {
    const col = await newCollection();
    const trx = await db.beginTransaction({ write: col }, { lockTimeout: 5, waitForSync: true });
    assert.match(trx.id, /^\d+$/);
    assert.deepEqual(await trx.get(), { id: trx.id, status: "running" });
    assert.deepEqual(await db.listTransactions(), [{ id: trx.id, state: "running" }]);
    assert.equal(await trx.exists(), true);

    const meta = await trx.step(() => col.save({ _key: "a", v: 1 }));
    const inside = await trx.step(() => col.document("a"));
    assert.deepEqual(inside, { _key: "a", _id: `${col.name}/a`, _rev: meta._rev, v: 1 });
    assert.equal((await trx.step(() => col.count())).count, 1);
    // Not visible outside before the commit.
    assert.equal(await col.document("a", { graceful: true }), null);
    assert.equal((await col.count()).count, 0);

    assert.deepEqual(await trx.commit(), { id: trx.id, status: "committed" });
    assert.deepEqual(await trx.get(), { id: trx.id, status: "committed" });
    assert.deepEqual(await col.document("a"), inside);
    assert.deepEqual(await db.listTransactions(), []);
    // Committed: commit again is fine, abort and further steps are refused.
    assert.deepEqual(await trx.commit(), { id: trx.id, status: "committed" });
    await rejectsWith(trx.abort(), 1653, 400);
    await rejectsWith(trx.step(() => col.save({ _key: "b" })), 1653, 400);
  });

  test("abort drops the writes", async () => {
    const col = await newCollection();
    await col.save({ _key: "old", v: 0 });
    const trx = await db.beginTransaction(col);
    await trx.step(() => col.update("old", { v: 1 }));
    await trx.step(() => col.save({ _key: "new" }));
    assert.equal((await trx.step(() => col.document("old"))).v, 1);

    assert.deepEqual(await trx.abort(), { id: trx.id, status: "aborted" });
    assert.deepEqual(await trx.get(), { id: trx.id, status: "aborted" });
    assert.equal((await col.document("old")).v, 0);
    assert.equal(await col.documentExists("new"), false);
    await rejectsWith(trx.step(() => col.document("old")), 1654, 410);
    await rejectsWith(trx.commit(), 1653, 400);
    assert.deepEqual(await trx.abort(), { id: trx.id, status: "aborted" });
  });

  test("db.transaction(id) joins a running transaction", async () => {
    const col = await newCollection();
    const trx = await db.beginTransaction({ write: [col.name] });
    await trx.step(() => col.save({ _key: "x" }));
    const again = db.transaction(trx.id);
    assert.equal(again.id, trx.id);
    assert.deepEqual(await again.get(), { id: trx.id, status: "running" });
    assert.equal((await again.step(() => col.document("x")))._key, "x");
    await again.step(() => col.save({ _key: "y" }));
    assert.deepEqual(await again.commit(), { id: trx.id, status: "committed" });
    assert.deepEqual(await trx.get(), { id: trx.id, status: "committed" });
    assert.equal((await col.count()).count, 2);
  });

  test("unknown transaction ids", async () => {
    // (No exists() here: arangojs 10 maps only errorNum 10 to "does not exist", while the
    // server answers an unknown id with 404/1655, as ArangoDB does, so exists() throws.)
    const ghost = db.transaction("123456789");
    await rejectsWith(ghost.get(), 1655, 404);
    await rejectsWith(ghost.commit(), 1655, 404);
    await rejectsWith(ghost.abort(), 1655, 404);
    const col = await newCollection();
    await rejectsWith(ghost.step(() => col.save({})), 1655, 404);
  });

  test("a second writer of a key gets 1200 at once", async () => {
    const col = await newCollection();
    const one = await db.beginTransaction({ write: col });
    const two = await db.beginTransaction({ write: col });
    await one.step(() => col.save({ _key: "k", who: 1 }));
    await rejectsWith(two.step(() => col.save({ _key: "k", who: 2 })), 1200, 409);
    await rejectsWith(col.save({ _key: "k", who: 3 }), 1200, 409);
    await two.step(() => col.save({ _key: "mine2" }));

    // Each sees only its own writes.
    assert.equal(await two.step(() => col.document("k", { graceful: true })), null);
    assert.equal(await one.step(() => col.document("mine2", { graceful: true })), null);

    await two.commit();
    await one.commit();
    assert.equal((await col.document("k")).who, 1);
    assert.equal((await col.count()).count, 2);
  });

  test("undeclared collections and the lock timeout", async () => {
    const col = await newCollection();
    const other = await newCollection();
    const trx = await db.beginTransaction({ exclusive: col, read: other }, { allowImplicit: false });
    await rejectsWith(trx.step(() => other.save({})), 1652, 400);
    await rejectsWith(db.beginTransaction({ write: col }, { lockTimeout: 0.5 }), 18, 500);
    await rejectsWith(col.save({}), 18, 500);
    await trx.abort();
    const next = await db.beginTransaction({ write: col }, { lockTimeout: 0.5 });
    await next.abort();
  });

  test("withTransaction commits on success and aborts on an error", async () => {
    const col = await newCollection();
    const result = await db.withTransaction(col, async (step) => {
      await step(() => col.save({ _key: "kept" }));
      return "done";
    });
    assert.equal(result, "done");
    assert.equal(await col.documentExists("kept"), true);

    await assert.rejects(
      db.withTransaction(col, async (step) => {
        await step(() => col.save({ _key: "dropped" }));
        throw new Error("changed my mind");
      }),
      /changed my mind/,
    );
    assert.equal(await col.documentExists("dropped"), false);
    assert.deepEqual(await db.listTransactions(), []);
  });

  test("JavaScript transactions are disabled", async () => {
    const col = await newCollection();
    await rejectsWith(db.executeTransaction({ write: col }, "function () { return 1; }"), 36, 403);
  });
});
