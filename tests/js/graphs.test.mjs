// Named graphs through arangojs 10.4: db.createGraph, db.graph(name).get/exists/drop,
// db.graphs(), vertex collections (add, list, remove), edge definitions (add, replace,
// remove, list), and vertex and edge documents through vertexCollection(...) and
// edgeCollection(...) with their options and the graph's constraints.
//
// One server for the file (server.mjs); each test makes its own graph.

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

/** Awaits `promise` and checks it rejects with an ArangoError of `errorNum` and HTTP `code`. */
async function rejectsWith(promise, errorNum, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(isArangoError(err), `not an ArangoError: ${err}`);
    assert.equal(err.errorNum, errorNum, err.message);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

/** A new graph: `rel` joins `person` to `person` and `city`; `lonely` is an orphan. */
async function social() {
  const n = {
    g: unique("g"), rel: unique("rel"), person: unique("person"),
    city: unique("city"), lonely: unique("lonely"),
  };
  const graph = db.graph(n.g);
  const info = await graph.create(
    [{ collection: n.rel, from: [n.person], to: [n.person, n.city] }],
    { orphanCollections: [n.lonely] },
  );
  return { graph, info, ...n };
}

describe("graphs", () => {
  test("create, get, exists, list and drop", async () => {
    const s = await social();
    assert.equal(s.info.name, s.g);
    assert.equal(s.info._id, `_graphs/${s.g}`);
    assert.deepEqual(s.info.orphanCollections, [s.lonely]);
    assert.equal(s.info.isSmart, false);
    assert.equal(s.info.numberOfShards, 1);
    assert.equal(await s.graph.exists(), true);
    assert.equal(await db.graph(unique("none")).exists(), false);
    assert.deepEqual((await s.graph.get()).edgeDefinitions, [
      { collection: s.rel, from: [s.person], to: [s.person, s.city].sort() },
    ]);
    const names = (await db.graphs()).map((graph) => graph.name);
    assert.ok(names.includes(s.g));
    await rejectsWith(db.createGraph(s.g, []), 1925, 409);
    const smartGraph = await db.createGraph(unique("smart"), [], {
      isSmart: true, numberOfShards: 3, smartGraphAttribute: "region",
    });
    const smart = await smartGraph.get();
    assert.equal(smart.isSmart, true);
    assert.equal(smart.numberOfShards, 3);
    assert.equal(smart.smartGraphAttribute, "region");
    await smartGraph.drop();
    assert.equal(await s.graph.drop(true), true);
    assert.equal(await s.graph.exists(), false);
    assert.equal(await db.collection(s.rel).exists(), false);
    await rejectsWith(s.graph.get(), 1924, 404);
  });

  test("vertex collections and edge definitions", async () => {
    const s = await social();
    const extra = unique("extra");
    await s.graph.addVertexCollection(extra);
    assert.deepEqual(
      await s.graph.listVertexCollections(),
      [s.person, s.city, s.lonely, extra].sort(),
    );
    await rejectsWith(s.graph.addVertexCollection(extra), 1938, 400);
    await rejectsWith(s.graph.removeVertexCollection(s.person), 1928, 404);
    const removed = await s.graph.removeVertexCollection(extra, true);
    assert.ok(!removed.orphanCollections.includes(extra));
    assert.equal(await db.collection(extra).exists(), false);

    const e2 = unique("e2");
    const added = await s.graph.addEdgeDefinition({ collection: e2, from: s.lonely, to: s.city });
    assert.ok(!added.orphanCollections.includes(s.lonely));
    assert.deepEqual(await s.graph.listEdgeCollections(), [s.rel, e2].sort());
    await rejectsWith(
      s.graph.addEdgeDefinition({ collection: e2, from: s.person, to: s.city }), 1920, 400);
    const replaced = await s.graph.replaceEdgeDefinition({
      collection: e2, from: [s.person], to: [s.person],
    });
    assert.ok(replaced.edgeDefinitions.some(
      (d) => d.collection === e2 && d.from[0] === s.person && d.to[0] === s.person));
    assert.ok(replaced.orphanCollections.includes(s.lonely));
    await rejectsWith(
      s.graph.replaceEdgeDefinition({ collection: unique("x"), from: [], to: [] }), 1930, 404);
    const after = await s.graph.removeEdgeDefinition(e2, true);
    assert.deepEqual(after.edgeDefinitions.map((d) => d.collection), [s.rel]);
    assert.equal(await db.collection(e2).exists(), false);
    await s.graph.drop(true);
  });

  test("vertex and edge documents", async () => {
    const s = await social();
    const people = s.graph.vertexCollection(s.person);
    const saved = await people.save({ _key: "ann", age: 30 }, { returnNew: true });
    assert.equal(saved._id, `${s.person}/ann`);
    assert.equal(saved.new.age, 30);
    await people.save({ _key: "bob" });
    await s.graph.vertexCollection(s.city).save({ _key: "rome" });
    const ann = await people.vertex("ann");
    assert.equal(ann.age, 30);
    assert.equal(await people.vertexExists("ann"), true);
    assert.equal(await people.vertexExists("nobody"), false);
    assert.equal(await people.vertex("nobody", { graceful: true }), null);
    await rejectsWith(people.vertex("ann", { rev: "_nope" }), 1200, 412);
    const updated = await people.update("ann", { nick: null, x: 1 }, { returnOld: true, returnNew: true });
    assert.equal(updated.old.age, 30);
    assert.equal(updated.new.nick, null);
    const pruned = await people.update("ann", { nick: null }, { keepNull: false, returnNew: true });
    assert.ok(!("nick" in pruned.new));
    await rejectsWith(people.update("ann", { y: 1 }, { rev: ann._rev }), 1200, 412);
    const replaced = await people.replace("ann", { only: true }, { waitForSync: true });
    assert.ok(replaced._rev);

    const edges = s.graph.edgeCollection(s.rel);
    const edge = await edges.save({ _key: "ab", _from: `${s.person}/ann`, _to: `${s.person}/bob` });
    assert.equal(edge._id, `${s.rel}/ab`);
    await edges.save({ _key: "ar", _from: `${s.person}/ann`, _to: `${s.city}/rome` });
    assert.equal((await edges.edge("ab"))._to, `${s.person}/bob`);
    await rejectsWith(
      edges.save({ _from: `${s.city}/rome`, _to: `${s.person}/bob` }), 1947, 400);
    await rejectsWith(
      edges.save({ _from: `${s.person}/zz`, _to: `${s.person}/bob` }), 1202, 404);
    await rejectsWith(
      s.graph.edgeCollection(unique("x")).save({ _from: `${s.person}/ann`, _to: `${s.person}/bob` }),
      1939, 404);
    await rejectsWith(s.graph.vertexCollection(unique("x")).save({}), 1926, 404);
    const updatedEdge = await edges.update("ab", { w: 2 }, { returnNew: true });
    assert.equal(updatedEdge.new.w, 2);
    await edges.replace("ab", { _from: `${s.person}/bob`, _to: `${s.person}/ann` });
    await rejectsWith(db.collection(s.rel).drop(), 1942, 403);

    const removed = await people.remove("ann", { returnOld: true });
    assert.equal(removed.old.only, true);
    assert.equal(await edges.edge("ab", { graceful: true }), null);
    assert.equal(await edges.edge("ar", { graceful: true }), null);
    await rejectsWith(people.remove("ann"), 1202, 404);
    await s.graph.drop(true);
  });
});
