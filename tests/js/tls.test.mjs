// arangojs over TLS: a server on an ssl:// endpoint with a certificate from a CA that the test
// makes with the `openssl` command, and a small CRUD and AQL round trip through arangojs.
//
// How arangojs 10.4 is told to trust the CA: its `agentOptions` ({connect: {ca}}) needs the
// `undici` package, which this suite does not install; without it arangojs uses Node's
// built-in fetch, which trusts the certificates of NODE_EXTRA_CA_CERTS. So the round trip runs
// in a child `node` with NODE_EXTRA_CA_CERTS naming the test's CA, and this process (which
// does not trust it) checks that arangojs refuses the server.
//
// One server for the file; the certificates live in its own temporary directory.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { Database } from "arangojs";

import { QuinceServer, ROOT_PASSWORD } from "./server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHILD_TIMEOUT_MS = 60_000;

let dir;
let caFile;
let server;

/** True when the `openssl` command runs (the certificates are made with it). */
function haveOpenssl() {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const skip = haveOpenssl() ? false : "needs the openssl command";

function openssl(...args) {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"], timeout: 60_000 });
}

before(async () => {
  if (skip) return;
  dir = mkdtempSync(path.join(tmpdir(), "quince-js-tls-"));
  openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
    "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Quince JS test CA");
  openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
    "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
  writeFileSync(path.join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
    "-CAcreateserial", "-days", "2", "-out", "server.crt", "-extfile", "server.ext");
  const keyfile = path.join(dir, "server.pem");
  writeFileSync(keyfile, readFileSync(path.join(dir, "server.crt"), "utf8") + readFileSync(path.join(dir, "server.key"), "utf8"));
  caFile = path.join(dir, "ca.pem");
  server = new QuinceServer(["--server.endpoint", "ssl://127.0.0.1:0", "--ssl.keyfile", keyfile]);
  await server.start();
});

after(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The round trip, as the child runs it: its JSON result is the child's last stdout line. */
const ROUND_TRIP = `
import { Database } from "arangojs";
const db = new Database({ url: process.env.QUINCE_URL, databaseName: "_system",
  auth: { username: "root", password: process.env.QUINCE_PASSWORD } });
const name = "tls_" + process.pid + "_" + Date.now();
const col = await db.createCollection(name);
const meta = await col.save({ _key: "a", value: 1 });
await col.update("a", { value: 2 });
const doc = await col.document("a");
const cursor = await db.query({ query: "FOR d IN @@c RETURN d.value", bindVars: { "@c": name } });
const values = await cursor.all();
await col.remove("a");
const count = (await col.count()).count;
await col.drop();
db.close();
console.log(JSON.stringify({ key: meta._key, value: doc.value, values, count }));
`;

function runChild(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", ROUND_TRIP], {
      cwd: HERE,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test("arangojs does a CRUD and AQL round trip over https", { skip }, async () => {
  assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const { code, stdout, stderr } = await runChild({
    NODE_EXTRA_CA_CERTS: caFile,
    QUINCE_URL: server.url,
    QUINCE_PASSWORD: ROOT_PASSWORD,
  });
  assert.equal(code, 0, `child failed:\n${stderr}\nserver:\n${server.stderrTail()}`);
  const result = JSON.parse(stdout.trim().split("\n").at(-1));
  assert.deepEqual(result, { key: "a", value: 2, values: [2], count: 0 });
});

test("arangojs refuses the server when it does not trust the CA", { skip }, async () => {
  const db = new Database({
    url: server.url,
    databaseName: "_system",
    auth: { username: "root", password: ROOT_PASSWORD },
    maxRetries: 0,
  });
  try {
    await assert.rejects(db.version());
  } finally {
    db.close();
  }
});
