// arangojs 10.4's log and access-token API against Quince: db.getLogEntries (the 3.12
// `/_admin/log/entries` shape), db.getLogLevel / db.setLogLevel (a topic raised to debug logs
// its debug lines, lowered it stops), db.createAccessToken with only a name (no expiry),
// db.getAccessTokens, db.useAccessToken (Basic with an empty user), db.login with a token as
// the password, db.deleteAccessToken; and db.engine, db.supportInfo and db.compact.
//
// One server for the file (server.mjs); each test makes its own users.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";

import { Database } from "arangojs";
import { isArangoError } from "arangojs/errors";

import { serverForFile } from "./server.mjs";

let db;
const server = serverForFile((handle) => {
  db = handle;
});

function unique(prefix) {
  return `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

/** A fresh handle on `_system` with no credentials yet. */
function bare() {
  return new Database({ url: server.url, databaseName: "_system" });
}

/** Polls `predicate` until it returns a truthy value; fails after the deadline. */
async function waitFor(predicate, what, deadlineMs = 30_000) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("logs", () => {
  test("getLogEntries has the 3.12 shape", async () => {
    const entries = await db.getLogEntries({ upto: "info", size: 5 });
    assert.equal(typeof entries.total, "number");
    assert.ok(entries.messages.length <= 5);
    for (const message of entries.messages) {
      assert.deepEqual(Object.keys(message).sort(), ["date", "id", "level", "message", "topic"]);
    }
    const ready = await db.getLogEntries({ search: "server.ready" });
    assert.ok(ready.messages.some((m) => m.topic === "startup" && m.level === "INFO"));
  });

  test("setLogLevel really changes what is logged", async () => {
    const before = await db.getLogLevel();
    assert.equal(before.requests, "INFO");
    await db.request({ method: "PUT", pathname: "/_admin/log/structured", body: { url: true } });
    try {
      const levels = await db.setLogLevel({ requests: "debug" });
      assert.equal(levels.requests, "DEBUG");
      const loud = unique("loud");
      await db.collection(loud).exists();
      const lines = await waitFor(async () => {
        const found = await db.getLogEntries({ upto: "debug", search: loud });
        return found.messages.length > 0 && found.messages;
      }, "the debug line");
      assert.equal(lines[0].topic, "requests");
      assert.equal(lines[0].level, "DEBUG");

      assert.equal((await db.setLogLevel({ requests: "info" })).requests, "INFO");
      const quiet = unique("quiet");
      await db.collection(quiet).exists();
      assert.deepEqual((await db.getLogEntries({ upto: "debug", search: quiet })).messages, []);
    } finally {
      await db.request({ method: "DELETE", pathname: "/_admin/log/level" });
      await db.request({ method: "PUT", pathname: "/_admin/log/structured", body: { url: false } });
    }
  });
});

describe("access tokens", () => {
  test("a token made with only a name works as a Basic password and at login", async () => {
    const user = unique("js_tok");
    await db.createUser(user, { passwd: "pw" });
    try {
      const created = await db.createAccessToken(user, { name: "ci" });
      assert.ok(created.token.startsWith("v1."));
      assert.equal(created.valid_until, 0);
      assert.equal(created.active, true);
      const listed = await db.getAccessTokens(user);
      assert.deepEqual(listed.map((t) => [t.name, t.active]), [["ci", true]]);
      assert.equal(listed[0].token, undefined);

      const asToken = bare().useAccessToken(created.token);
      const me = await asToken.request({ pathname: "/_api/user/" + user });
      assert.equal(me.user, user);

      const viaLogin = bare();
      const jwt = await viaLogin.login("", created.token);
      assert.equal(JSON.parse(Buffer.from(jwt.split(".")[1], "base64url")).preferred_username, user);
      assert.equal((await viaLogin.request({ pathname: "/_api/user/" + user })).user, user);
      await assert.rejects(bare().login("root", created.token), (err) => isArangoError(err) && err.code === 401);

      await db.deleteAccessToken(user, created.id);
      await assert.rejects(
        bare().useAccessToken(created.token).request({ pathname: "/_api/user/" + user }),
        (err) => isArangoError(err) && err.code === 401,
      );
    } finally {
      await db.removeUser(user);
    }
  });
});

describe("server", () => {
  test("engine, support info and compact", async () => {
    const engine = await db.engine();
    assert.equal(engine.name, "rocksdb");
    assert.equal(engine.quince.engine, "journal");
    const info = await db.supportInfo();
    assert.equal(info.deployment.type, "single");
    assert.equal(info.host.role, "SINGLE");
    assert.equal(await db.compact({ changeLevel: true }), undefined);
  });
});
