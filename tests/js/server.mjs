// Starting and stopping `quince serve` for the arangojs suites.
//
// What it is: the JavaScript twin of tests/support/quince_server.py. It launches the server
// binary ($QUINCE_BIN, else target/debug/quince of this checkout) on 127.0.0.1 port 0 with its
// own temporary data directory and root's password, learns the URL from the ready line
// (`quince: listening on http://127.0.0.1:PORT`, or https:// for an ssl:// endpoint), and stops
// it with SIGTERM.
//
// `serverForFile` registers the hooks every suite shares: one server started before the file's
// tests and stopped after them, with root's arangojs handle on `_system`.
//
// What it is not: a client. Tests talk to the server through arangojs.
//
// Invariants: every wait is bounded; stderr goes to a log file in the temporary directory,
// whose tail is shown when something goes wrong; stop() removes the directory.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";

import { Database } from "arangojs";

export const ROOT_PASSWORD = "quince-test-pw";
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;
const READY_LINE = /^quince: listening on (https?:\/\/127\.0\.0\.1:(\d+))\s*$/;
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The server binary: `$QUINCE_BIN`, else `target/debug/quince` of this checkout. */
export function quinceBin() {
  const configured = process.env.QUINCE_BIN || "target/debug/quince";
  return path.isAbsolute(configured) ? configured : path.join(REPO_ROOT, configured);
}

export class QuinceServer {
  /** @param {string[]} extraArgs extra `quince serve` options */
  constructor(extraArgs = []) {
    this.extraArgs = extraArgs;
    this.dir = null;
    this.proc = null;
    this.url = null;
  }

  /** Starts the process and resolves once its ready line names the URL. */
  async start() {
    const binary = quinceBin();
    if (!existsSync(binary)) {
      throw new Error(`server binary ${binary} does not exist (cargo build -p quince-server)`);
    }
    this.dir = mkdtempSync(path.join(tmpdir(), "quince-js-"));
    this.logPath = path.join(this.dir, "server.log");
    const log = openSync(this.logPath, "a");
    const args = [
      "serve",
      "--server.endpoint", "tcp://127.0.0.1:0",
      "--database.directory", path.join(this.dir, "data"),
      "--database.password", ROOT_PASSWORD,
      "--server.authentication", "true",
      ...this.extraArgs,
    ];
    this.proc = spawn(binary, args, { stdio: ["ignore", "pipe", log] });
    closeSync(log);
    this.exited = new Promise((resolve) => this.proc.once("exit", (code, signal) => resolve({ code, signal })));

    this.url = await new Promise((resolve, reject) => {
      let buffered = "";
      const timer = setTimeout(() => fail(`no ready line within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
      const fail = (why) => {
        clearTimeout(timer);
        this.proc.kill("SIGKILL");
        reject(new Error(`${why}\nstderr tail:\n${this.stderrTail()}`));
      };
      this.proc.stdout.setEncoding("utf8");
      this.proc.stdout.on("data", (chunk) => {
        buffered += chunk;
        let newline;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline).replace(/\r$/, "");
          buffered = buffered.slice(newline + 1);
          const match = READY_LINE.exec(line);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        }
      });
      this.proc.once("exit", (code) => fail(`server exited with code ${code} before it was ready`));
      this.proc.once("error", (err) => fail(`server did not start: ${err.message}`));
    });
    // Keep draining stdout so the pipe never fills.
    this.proc.stdout.resume();
    return this;
  }

  /** SIGTERM, waits for the exit, removes the directory; resolves to the exit code. */
  async stop() {
    if (!this.proc) return null;
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill("SIGTERM");
    let timer;
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve(null), STOP_TIMEOUT_MS);
    });
    const exit = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (exit === null) {
      this.proc.kill("SIGKILL");
      await this.exited;
      throw new Error(`server did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM\n${this.stderrTail()}`);
    }
    const tail = this.stderrTail();
    rmSync(this.dir, { recursive: true, force: true });
    if (exit.code !== 0) throw new Error(`server exited with ${exit.code ?? exit.signal} on SIGTERM\n${tail}`);
    return exit.code;
  }

  stderrTail(limit = 6000) {
    try {
      const text = readFileSync(this.logPath, "utf8");
      return text.slice(-limit);
    } catch {
      return "(no log)";
    }
  }
}

/**
 * One server for a test file: hooks that start it before the file's tests (then hand root's
 * `_system` handle to `ready`) and stop it after them. Returns the server.
 */
export function serverForFile(ready) {
  const server = new QuinceServer();
  let db;
  before(async () => {
    await server.start();
    db = new Database({
      url: server.url,
      databaseName: "_system",
      auth: { username: "root", password: ROOT_PASSWORD },
    });
    ready(db);
  });
  after(async () => {
    db?.close();
    await server.stop();
  });
  return server;
}
