// Jest transform for the client's source (clients/typescript/src): an ES module package, run here under jest's
// CommonJS registry. ts-jest keeps ESM output for files of a "type": "module" package, so this transpiles alone.
const ts = require('typescript');

module.exports = {
  process(sourceText, sourcePath) {
    const { outputText, sourceMapText } = ts.transpileModule(sourceText, {
      fileName: sourcePath,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, sourceMap: true, inlineSources: true },
    });
    return { code: outputText, map: sourceMapText };
  },
};
