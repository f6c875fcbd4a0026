// npm run bench: every section in one run, on 127.0.0.1 only, with bounded durations. Each section
// (bench/*.section.ts) measures the service against its ceiling in the same run; only ratios compare, since
// this VM's speed drifts. Server on core 0, this load generator on core 1 (taskset), so the two do not share
// a core. BENCH_ONLY=create,… runs some sections; BENCH_QUICK=1 a short create comparison.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clientSection } from './client.section';
import { createSection } from './create.section';
import { metricsSection } from './metrics.section';
import { overloadSection } from './overload.section';
import { readSection } from './read.section';
import { jwtSection } from './jwt.section';
import { ROOT, work, type SectionResult } from './lib';
import { webhooksSection } from './webhooks.section';
import { postgresSection, postgresWritesSection } from './postgres.section';
import { backupSection } from './backup.section';
import { feedSection } from './feed.section';
import { runtimeSection } from './runtime.section';
import { instructionsSection } from './instructions.section';
import { findSection } from './find.section';
import { writesSection } from './writes.section';
import { tenantsSection } from './tenants.section';
import { workersSection } from './workers.section';

// Add a section here: its name (for BENCH_ONLY) and the function that measures it.
const SECTIONS: Record<string, () => Promise<SectionResult>> = {
  create: createSection,
  metrics: metricsSection,
  read: readSection,
  jwt: jwtSection,
  webhooks: webhooksSection,
  postgres: postgresSection,
  'postgres-writes': postgresWritesSection,
  overload: overloadSection,
  backup: backupSection,
  client: clientSection,
  feed: feedSection,
  runtime: runtimeSection,
  instructions: instructionsSection,
  find: findSection,
  writes: writesSection,
  tenants: tenantsSection,
  workers: workersSection,
};

async function main(): Promise<void> {
  if (!process.env.BENCH_PINNED) {
    // Re-run this script pinned to core 1; the servers go to core 0.
    const result = spawnSync('taskset', ['-c', '1', process.execPath, __filename], { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } });
    process.exit(result.status ?? 1);
  }
  const only = (process.env.BENCH_ONLY ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = only.filter((name) => !(name in SECTIONS));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY names no section ${unknown.join(', ')}; sections: ${Object.keys(SECTIONS).join(', ')}`);
  mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  const lines = [
    `Plant Store bench, ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version};`,
    'server on core 0, autocannon on core 1.',
    '',
  ];
  let failed = 0;
  for (const [name, section] of Object.entries(SECTIONS)) {
    if (only.length > 0 && !only.includes(name)) continue;
    console.error(`== section ${name}`);
    const result = await section();
    lines.push(...result.lines);
    failed += result.failed;
  }
  const report = lines.join('\n');
  process.stdout.write(`\n${report}\n`);
  writeFileSync(path.join(ROOT, 'bench', 'results', 'latest.md'), `${report}\n`);
  rmSync(work, { recursive: true, force: true });
  if (failed > 0) {
    console.error(`FAIL: ${failed} requests of the service's runs were not answered 2xx`);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
