#!/usr/bin/env node
// Runs the Khronos glTF validator (npm package gltf-validator) on one .glb
// or .gltf file and prints "errors N warnings N", then each error message.
// Exit status: 0 when the file has no errors, 1 when it has some, 2 when
// the validator is not installed (scripts/deps.sh test installs it into
// build/node), 3 on a usage or read error.
'use strict';
const fs = require('fs');
const path = require('path');

function loadValidator() {
  const places = ['gltf-validator',
    path.join(__dirname, '..', '..', 'build', 'node', 'node_modules', 'gltf-validator')];
  if (process.env.TROWEL_NODE_DIR)
    places.unshift(path.join(process.env.TROWEL_NODE_DIR, 'node_modules', 'gltf-validator'));
  for (const p of places) {
    try { return require(p); } catch (e) { /* try the next place */ }
  }
  return null;
}

const file = process.argv[2];
if (!file) {
  console.error('usage: gltf_validate.js FILE.glb');
  process.exit(3);
}
const validator = loadValidator();
if (!validator) {
  console.error('gltf-validator is not installed (scripts/deps.sh test)');
  process.exit(2);
}
let bytes;
try {
  bytes = new Uint8Array(fs.readFileSync(file));
} catch (e) {
  console.error(String(e));
  process.exit(3);
}
validator.validateBytes(bytes, { uri: path.basename(file), maxIssues: 100 })
  .then((report) => {
    const errors = report.issues.numErrors;
    console.log(`errors ${errors} warnings ${report.issues.numWarnings}`);
    for (const m of report.issues.messages)
      if (m.severity === 0)
        console.log(`${m.code}: ${m.message} (${m.pointer || m.offset || ''})`);
    process.exit(errors === 0 ? 0 : 1);
  })
  .catch((e) => {
    console.error(String(e));
    process.exit(1);
  });
