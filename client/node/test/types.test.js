'use strict';
// index.d.ts as TypeScript users meet it: tsc --strict compiles
// test/types/usage.ts (which imports the package by name, through the
// "exports" types) without errors, and the misuses it marks with
// @ts-expect-error stay errors. skipLibCheck keeps it to about 3 s.

const { it } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('child_process');
const path = require('path');

it('index.d.ts types the documented usage (tsc --strict)', () => {
  const tsc = require.resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(__dirname, 'types')],
                           { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stdout + result.stderr);
});
