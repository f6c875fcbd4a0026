/**
 * The runtime floor, checked before anything else loads: better-sqlite3 13 is built for Node 22 and newer and
 * crashes an older process with a segfault and no message. The project runs on Node 24 LTS; an older node stops
 * here with one line naming the version it needs. package.json's engines and .nvmrc say the same
 * (tests/unit/node-version.test.ts); docs/development.md says how npm's scripts get that Node.
 */
export const NODE_MAJOR = 24;

/** The line an older node prints, or undefined when `version` (process.version's form) is new enough. */
export function tooOldNode(version: string, execPath: string): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= NODE_MAJOR) return undefined;
  return `plant-store: needs Node ${NODE_MAJOR} or newer, and ${execPath} is ${version}; run it through npm (npm start, npm run plant-store), which uses the Node the project pins, or see docs/development.md`;
}

const message = tooOldNode(process.version, process.execPath);
if (message !== undefined) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
