// Hot backups through arangojs: createHotBackup, getHotBackups (all, and by id),
// restoreHotBackup (the data as it was, and `previous`), deleteHotBackup, and 404/7007 for
// unknown ids.
//
// One server for the file (server.mjs): restoring replaces every database of it, which is
// why this file has its own server and makes all its collections itself.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { isArangoError } from "arangojs/errors";

import { serverForFile } from "./server.mjs";

let db;
serverForFile((handle) => {
  db = handle;
});

async function rejectsWith(promise, errorNum, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(isArangoError(err), `not an ArangoError: ${err}`);
    assert.equal(err.errorNum, errorNum, err.message);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

describe("hot backups", () => {
  test("create, list, restore, delete", async () => {
    const col = await db.createCollection("backed_up");
    await col.saveAll([{ _key: "a", n: 1 }, { _key: "b", n: 2 }]);
    const info = await db.createHotBackup({ label: "js" });
    assert.match(info.id, /^\d{4}-\d\d-\d\dT\d\d\.\d\d\.\d\dZ_js$/);
    assert.equal(info.potentiallyInconsistent, false);
    assert.equal(info.nrDBServers, 1);
    assert.ok(info.nrFiles > 0 && info.sizeInBytes > 0);

    const all = await db.getHotBackups();
    assert.ok(info.id in all.list);
    const one = await db.getHotBackups(info.id);
    assert.deepEqual(Object.keys(one.list), [info.id]);

    await col.update("a", { n: 100 });
    await col.remove("b");
    await db.createCollection("later");

    const previous = await db.restoreHotBackup(info.id);
    assert.ok(previous);
    const restored = db.collection("backed_up");
    assert.equal((await restored.document("a")).n, 1);
    assert.equal((await restored.document("b")).n, 2);
    assert.equal(await db.collection("later").exists(), false);

    await db.deleteHotBackup(info.id);
    assert.ok(!(info.id in (await db.getHotBackups()).list));
  });

  test("unknown ids are 404 with errorNum 7007", async () => {
    const unknown = "2026-01-01T00.00.00Z_nope";
    await rejectsWith(db.getHotBackups(unknown), 7007, 404);
    await rejectsWith(db.restoreHotBackup(unknown), 7007, 404);
    await rejectsWith(db.deleteHotBackup(unknown), 7007, 404);
  });
});
