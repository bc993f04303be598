'use strict';
// Test harness: starts the build's dmlserve (DMLSERVE_BIN, set by the ctest
// entry node_client) on a free loopback port (--port=0, read back from its
// readiness line), and makes certificates with openssl for the TLS tests.

const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const STARTUP_MS = 30000;

function dmlserveBin() {
  const bin = process.env.DMLSERVE_BIN;
  if (!bin) {
    throw new Error('DMLSERVE_BIN is not set: run these tests through ctest (node_client) ' +
                    'or point it at a built dmlserve');
  }
  return bin;
}

/** A running dmlserve: target, stop() (SIGTERM; resolves to the exit code)
 * and log() (its stderr so far). */
class Server {
  constructor(child) {
    this.child = child;
    this.stderr = '';
    this.exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
    child.stderr.on('data', (d) => { this.stderr += d; });
  }

  log() { return this.stderr.slice(-4000); }

  async stop() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20000);
    const code = await this.exit;
    clearTimeout(timer);
    return code;
  }
}

/** Starts dmlserve with `args` (besides address, port and quiet logging) on
 * `device` (default cpu); resolves once it prints its readiness line. */
function startServer(args = [], device = 'cpu') {
  const child = spawn(dmlserveBin(), [
    `--device=${device}`, '--address=127.0.0.1', '--port=0', '--log_level=warn',
    '--drain_seconds=0', ...args,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  const server = new Server(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const fail = (why) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`dmlserve did not start (${why}): ${server.log()}`));
    };
    const timer = setTimeout(() => fail(`no readiness line in ${STARTUP_MS} ms`), STARTUP_MS);
    const onExit = (code) => fail(`exit code ${code}`);
    child.on('exit', onExit);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /dmlserve listening on (\S+):(\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeListener('exit', onExit);
      child.stdout.removeAllListeners('data');
      child.stdout.resume();
      server.port = Number(m[2]);
      server.target = `127.0.0.1:${server.port}`;
      resolve(server);
    });
  });
}

/** Certificates made with openssl in a temporary folder: a CA, a server
 * certificate for localhost/127.0.0.1, a client certificate "alice" of that
 * CA and one of another CA. path(name) and read(name) give the files. */
class Pki {
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dmls-node-pki-'));
    this.selfSigned('ca', 'dmls node test CA');
    this.selfSigned('other-ca', 'someone else');
    this.signed('server', 'localhost', 'ca', 'subjectAltName=DNS:localhost,IP:127.0.0.1');
    this.signed('alice', 'alice', 'ca');
    this.signed('mallory', 'alice', 'other-ca');
  }

  path(name) { return path.join(this.dir, name); }

  read(name) { return fs.readFileSync(this.path(name)); }

  openssl(...args) { execFileSync('openssl', args, { cwd: this.dir, stdio: 'pipe' }); }

  selfSigned(name, cn) {
    this.openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
                 '-nodes', '-days', '2', '-subj', `/CN=${cn}`, '-keyout', `${name}.key`,
                 '-out', `${name}.pem`);
  }

  signed(name, cn, ca, extension) {
    this.openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
                 '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
    const sign = ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`,
                  '-CAcreateserial', '-days', '2', '-out', `${name}.pem`];
    if (extension) {
      fs.writeFileSync(this.path(`${name}.ext`), extension + '\n');
      sign.push('-extfile', `${name}.ext`);
    }
    this.openssl(...sign);
  }

  cleanup() { fs.rmSync(this.dir, { recursive: true, force: true }); }
}

/** Asserts that `promise` rejects with a DmlError of `codeName` (and `rule`,
 * `field` when given); returns the error. */
async function rejectsWith(assert, promise, codeName, rule, field) {
  let error = null;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  assert.ok(error, `expected ${codeName}, the call succeeded`);
  assert.equal(error.name, 'DmlError', String(error && error.stack));
  assert.equal(error.codeName, codeName, error.message);
  if (rule !== undefined) assert.equal(error.rule, rule, error.message);
  if (field !== undefined) assert.equal(error.field, field, error.message);
  return error;
}

/** CELU of float numbers (the reference the tests compare with). */
function celu(values, alpha = 1) {
  return Array.from(values, (x) => Math.max(0, x) + Math.min(0, alpha * Math.expm1(x / alpha)));
}

/** Asserts |a[i] - b[i]| <= tol for all i. */
function assertClose(assert, actual, expected, tol = 1e-5) {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol,
              `element ${i}: ${actual[i]} vs ${expected[i]}`);
  }
}

module.exports = { startServer, Pki, rejectsWith, celu, assertClose };
