#!/usr/bin/env node
'use strict';
// Copies the repository's proto/ files this package loads at run time into
// client/node/proto, so that the package carries them and never reads
// outside its folder once installed. Runs before `npm pack` (prepack);
// test/package.test.js fails when the copies differ from proto/.

const fs = require('fs');
const path = require('path');
const { PROTO_FILES } = require('../lib/proto');

const PACKAGE_DIR = path.join(__dirname, '..');
const SOURCE_DIR = path.join(PACKAGE_DIR, '..', '..', 'proto');

if (!fs.existsSync(SOURCE_DIR)) {
  // Outside the repository (an unpacked tarball): the copies are all there is.
  console.log(`sync_protos: no ${SOURCE_DIR}; keeping the package's copies`);
  process.exit(0);
}
for (const file of PROTO_FILES) {
  const target = path.join(PACKAGE_DIR, 'proto', file);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(path.join(SOURCE_DIR, file), target);
}
console.log(`sync_protos: copied ${PROTO_FILES.length} files from ${SOURCE_DIR}`);
