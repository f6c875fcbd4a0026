// Jest transform for the client's source (clients/typescript/src): an ES module package, run here under jest's
// CommonJS registry. ts-jest keeps ESM output for files of a "type": "module" package, so this transpiles alone.
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const ts = require('typescript');

// This file's own text is part of the cache key: a change here must not reuse output transformed before it.
const SELF = readFileSync(module.filename);

module.exports = {
  getCacheKey(sourceText, sourcePath) {
    return createHash('sha256').update(SELF).update(ts.version).update(sourcePath).update('\0').update(sourceText).digest('hex');
  },
  process(sourceText, sourcePath) {
    const { outputText, sourceMapText } = ts.transpileModule(sourceText, {
      fileName: sourcePath,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, sourceMap: true, inlineSources: true },
    });
    // The package's own imports name the built file (`./wire.js`, as Node's ES module loader needs); here the
    // source beside it is what runs.
    return { code: outputText.replace(/require\("(\.{1,2}\/[^"]+)\.js"\)/g, 'require("$1")'), map: sourceMapText };
  },
};
