// The edge index through arangojs: collection.inEdges / outEdges (GET /_api/edges),
// the edge index in collection.indexes() (never dropped: 403/11), AQL filters on _from/_to
// served by it, and edges seen inside a stream transaction (trx.step).
//
// arangojs 10.4's collection.edges(v) sends `direction=undefined` (it puts an undefined
// `direction` into URLSearchParams); ArangoDB's handler refuses any direction but any, in,
// out, inbound and outbound with 400/400, and so does this server: the test pins that, and
// reads both directions through db.route instead.
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

/** A new edge collection holding edges around `p/a` (e4 loops on it). */
async function graph() {
  const col = await db.createEdgeCollection(unique("edges"));
  await col.saveAll([
    { _key: "e1", _from: "p/a", _to: "p/b" },
    { _key: "e2", _from: "p/a", _to: "p/c" },
    { _key: "e3", _from: "p/b", _to: "p/a" },
    { _key: "e4", _from: "p/a", _to: "p/a" },
  ]);
  return col;
}

const keys = (result) => result.edges.map((edge) => edge._key);

/** Awaits `promise` and checks it rejects with an ArangoError of `errorNum` and HTTP `code`. */
async function rejectsWith(promise, errorNum, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(isArangoError(err), `not an ArangoError: ${err}`);
    assert.equal(err.errorNum, errorNum, err.message);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

describe("edges", () => {
  test("inEdges, outEdges, and both directions", async () => {
    const col = await graph();
    await rejectsWith(col.edges("p/a"), 400, 400);
    const both = (await db.route(`/_api/edges/${col.name}`).get({ vertex: "p/a" })).parsedBody;
    assert.deepEqual(keys(both), ["e1", "e2", "e4", "e3"]);
    assert.equal(both.stats.scannedIndex, 5);
    assert.equal(both.stats.filtered, 0);
    assert.deepEqual(keys(await col.outEdges("p/a")), ["e1", "e2", "e4"]);
    assert.deepEqual(keys(await col.inEdges("p/a")), ["e3", "e4"]);
    assert.deepEqual(keys(await col.inEdges("p/c")), ["e2"]);
    assert.deepEqual((await col.outEdges("p/nobody")).edges, []);
    const [edge] = (await col.outEdges("p/b")).edges;
    assert.equal(edge._id, `${col.name}/e3`);
    assert.equal(edge._to, "p/a");
    assert.match(edge._rev, /./);
  });

  test("a document collection is 1218, a missing one 1203", async () => {
    const docs = await db.createCollection(unique("docs"));
    await rejectsWith(docs.inEdges("p/a"), 1218, 400);
    await rejectsWith(db.collection(unique("missing")).outEdges("p/a"), 1203, 404);
  });

  test("the edge index is listed and cannot be dropped", async () => {
    const col = await graph();
    const indexes = await col.indexes();
    assert.deepEqual(
      indexes.map((i) => [i.type, i.name, i.id]),
      [
        ["primary", "primary", `${col.name}/0`],
        ["edge", "edge", `${col.name}/1`],
      ],
    );
    assert.deepEqual(indexes[1].fields, ["_from", "_to"]);
    await rejectsWith(col.dropIndex(`${col.name}/1`), 11, 403);
    await rejectsWith(col.dropIndex("edge"), 11, 403);
  });

  test("AQL on _from and _to reads the edge index", async () => {
    const col = await graph();
    const query = aql`FOR e IN ${col} FILTER e._from == ${"p/a"} SORT e._key RETURN e._key`;
    const explained = await db.explain(query);
    const node = explained.plan.nodes.find((n) => n.type === "IndexNode");
    assert.equal(node.indexes[0].type, "edge");
    assert.deepEqual(node.indexes[0].fields, ["_from"]);
    const cursor = await db.query(query);
    assert.deepEqual(await cursor.all(), ["e1", "e2", "e4"]);
    assert.equal(cursor.extra.stats.scannedFull, 0);
  });

  test("a stream transaction sees its own edges", async () => {
    const col = await graph();
    const trx = await db.beginTransaction({ write: col });
    await trx.step(() => col.save({ _key: "e5", _from: "p/a", _to: "p/z" }));
    await trx.step(() => col.remove("e1"));
    const inside = await trx.step(() => col.outEdges("p/a"));
    assert.deepEqual(keys(inside), ["e2", "e4", "e5"]);
    assert.deepEqual(keys(await col.outEdges("p/a")), ["e1", "e2", "e4"]);
    await trx.commit();
    assert.deepEqual(keys(await col.outEdges("p/a")), ["e2", "e4", "e5"]);
  });
});
