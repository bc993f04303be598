'use strict';
// The package as npm ships it: its copies of proto/ equal the repository's,
// its version is the project's, its lock file names no registry host, and
// the files `npm pack` takes load on their own outside the repository.

const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { PROTO_DIR, PROTO_FILES } = require('../lib/proto');

const PACKAGE_DIR = path.join(__dirname, '..');
const REPO_DIR = path.join(PACKAGE_DIR, '..', '..');

function listFiles(dir, prefix = '') {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory()
    ? listFiles(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));
}

describe('the npm package', () => {
  it("carries exact copies of the repository's proto files (npm run sync-protos)", () => {
    assert.deepEqual(listFiles(PROTO_DIR).sort(), [...PROTO_FILES].sort());
    for (const file of PROTO_FILES) {
      const copy = fs.readFileSync(path.join(PROTO_DIR, file), 'utf8');
      const source = fs.readFileSync(path.join(REPO_DIR, 'proto', file), 'utf8');
      assert.ok(copy === source, `client/node/proto/${file} differs from proto/${file}: ` +
                                 'run `npm run sync-protos` in client/node');
    }
  });

  it("has the project's version (the VERSION file)", () => {
    const version = fs.readFileSync(path.join(REPO_DIR, 'VERSION'), 'utf8').trim();
    const hint = `run \`npm version ${version} --no-git-tag-version\` in client/node`;
    assert.equal(require('../package.json').version, version, hint);
    assert.equal(require('../package-lock.json').version, version, hint);
  });

  it('has a lock file without registry addresses', () => {
    assert.match(fs.readFileSync(path.join(PACKAGE_DIR, '.npmrc'), 'utf8'),
                 /^omit-lockfile-registry-resolved=true$/m);
    const lock = fs.readFileSync(path.join(PACKAGE_DIR, 'package-lock.json'), 'utf8');
    assert.doesNotMatch(lock, /"resolved"/);
    assert.doesNotMatch(lock, /registry/i);
    const packages = JSON.parse(lock).packages;
    for (const dep of ['@grpc/grpc-js', '@grpc/proto-loader']) {
      assert.ok(packages[`node_modules/${dep}`].integrity, `${dep} has no integrity`);
    }
  });

  it('loads from the files npm packs, copied outside the repository', () => {
    const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'],
                                           { cwd: PACKAGE_DIR, stdio: ['ignore', 'pipe', 'pipe'] }));
    const files = packed[0].files.map((f) => f.path);
    for (const file of PROTO_FILES) assert.ok(files.includes(`proto/${file}`), file);
    assert.ok(files.includes('index.d.ts'));
    assert.ok(!files.some((f) => f.startsWith('test/')), 'tests are not shipped');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dmls-node-pkg-'));
    try {
      for (const file of files) {
        fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
        fs.copyFileSync(path.join(PACKAGE_DIR, file), path.join(dir, file));
      }
      fs.symlinkSync(path.join(PACKAGE_DIR, 'node_modules'), path.join(dir, 'node_modules'));
      const script = `const d = require(${JSON.stringify(dir)});
        const def = d.packageDefinition();
        if (!d.PROTO_DIR.startsWith(${JSON.stringify(dir)})) throw new Error(d.PROTO_DIR);
        const bytes = def['dmlserve.v1.DmlService'].Execute.requestSerialize(
          { operator: d.operator('celu', { input: d.tensorDesc('float32', [2]) }) });
        new d.DmlClient('127.0.0.1:1').close();
        process.stdout.write(String(bytes.length));`;
      const out = execFileSync(process.execPath, ['-e', script], { cwd: os.tmpdir() });
      assert.ok(Number(out) > 10, String(out));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
