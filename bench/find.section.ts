// Finding plants (BENCH_ONLY=find, issue 33): on a store of STORED plants (1,000,000 by default) on SQLite and on
// PostgreSQL, seeded and upgraded by bench/find.seed.ts, the reads of GET /plants with q, sort, cursor and
// Prefer: count=exact against the unfiltered first page and sort=id pages (bench/find.reads.ts), creates with the
// search index against without it (bench/find.creates.ts), and a live query's delay (bench/find.live.ts).
import os from 'node:os';
import { f0, f1, freshStore, met, ROUNDS, start, STORED, type SectionResult } from './lib';
import { postgresCreates, sqliteCreates } from './find.creates';
import { liveDelay } from './find.live';
import { seedPostgres, seedSqlite, checkNames, type Seeded } from './find.seed';
import {
  deepPages,
  FIND_CONNECTIONS,
  FIND_SECONDS,
  interleave,
  medianOf,
  oneConnection,
  oneOf,
  probe,
  ratioOf,
  searches,
  type Features,
  type ReadFigures,
  type ReadLoad,
} from './find.reads';

const PAGE = '/plants?limit=100';
// A whole name a person would type: selective (about one plant in 3,000 has it).
const SELECTIVE = 'monstera deliciosa';
// BENCH_FIND_PARTS=reads,creates,live: some of the parts (all by default), on both stores.
const PARTS = new Set((process.env.BENCH_FIND_PARTS ?? 'reads,creates,live').split(',').map((part) => part.trim()));
const DEEP_WALK_PAGES = Number(process.env.BENCH_FIND_DEEP_PAGES ?? 300);
// BENCH_FIND_STORES=sqlite or postgresql: one store only (both by default).
const STORES = new Set((process.env.BENCH_FIND_STORES ?? 'sqlite,postgresql').toLowerCase().split(',').map((store) => store.trim()));

type Row = { row: string; value: string; aa: string; target: string; met: string };
const na = (row: string, target: string, why: string): Row => ({ row, value: `n/a: ${why}`, aa: '', target, met: 'not measured' });

/** The read rows of one store: its server up on the upgraded store, read only, stopped at the end. */
async function readRows(store: string, seeded: Seeded): Promise<{ rows: Row[]; failed: number }> {
  const server = await start('service', seeded.url);
  try {
    const features = await probe(server.port);
    console.error(`find ${store}: features ${JSON.stringify(features)}`);
    return await measureReads(store, server, features);
  } finally {
    await server.stop();
  }
}

async function measureReads(store: string, server: Awaited<ReturnType<typeof start>>, features: Features): Promise<{ rows: Row[]; failed: number }> {
  const q3 = searches(3);
  const q3Path = oneOf(q3.map((q) => `${PAGE}&q=${encodeURIComponent(q)}`));
  const loads: Record<string, ReadLoad> = { page: { path: () => PAGE }, pageAgain: { path: () => PAGE } };
  if (features.q) loads.q3 = { path: q3Path };
  const idDeep = await deepPages(server.port, 'sort=id', DEEP_WALK_PAGES);
  loads.idDeep = { path: oneOf(idDeep) };
  if (features.sort) loads.name = { path: () => `${PAGE}&sort=name` };
  if (features.cursor) loads.nameDeep = { path: oneOf(await deepPages(server.port, 'sort=name', DEEP_WALK_PAGES)) };
  const runs = await interleave(server, loads, store);
  const aa = ratioOf(runs.pageAgain as ReadFigures[], runs.page as ReadFigures[]).text;
  const rows: Row[] = [
    {
      row: `unfiltered first page (limit=100), ${FIND_CONNECTIONS} connections`,
      value: `${f0(medianOf(runs.page as ReadFigures[], 'rps'))} req/s, p99 ${f1(medianOf(runs.page as ReadFigures[], 'p99'))} ms`,
      aa: `again / first ${aa}`,
      target: 'reference',
      met: '',
    },
  ];
  const ratioRow = (row: string, load: string, against: string, goal: number): Row => {
    const ratio = ratioOf(runs[load] as ReadFigures[], runs[against] as ReadFigures[]);
    return { row, value: ratio.text, aa, target: `≥ ${goal}`, met: met(ratio.value >= goal) };
  };
  rows.push(features.q ? ratioRow('q (3 characters) / unfiltered first page, throughput', 'q3', 'page', 0.5) : na('q (3 characters) / unfiltered first page, throughput', '≥ 0.5', 'this build has no q'));
  rows.push(features.sort ? ratioRow('sort=name / sort=id, first page, throughput', 'name', 'page', 0.9) : na('sort=name / sort=id, first page', '≥ 0.9', 'this build has no sort'));
  rows.push(
    features.cursor
      ? ratioRow(`sort=name / sort=id, deep pages (rows 10,000 to ${(DEEP_WALK_PAGES * 1000).toLocaleString('en')} via the Link), throughput`, 'nameDeep', 'idDeep', 0.9)
      : na('sort=name / sort=id, deep pages', '≥ 0.9', 'this build has no cursor'),
  );
  let failed = Object.values(runs).flat().reduce((sum, run) => sum + run.failed, 0);

  const latencyRow = (row: string, figures: ReadFigures, again: ReadFigures | undefined, goal: number | undefined): Row => ({
    row,
    value: `p99 ${f1(figures.p99)} ms (p50 ${f1(figures.p50)}, ${f0(figures.rps)} req/s)`,
    aa: again === undefined ? '' : `again: p99 ${f1(again.p99)} ms`,
    target: goal === undefined ? 'reported' : `p99 ≤ ${goal} ms`,
    met: goal === undefined ? '' : met(figures.p99 <= goal),
  });
  const single = async (label: string, spec: ReadLoad) => {
    const figures = await oneConnection(server, spec, `${store} ${label}`);
    failed += figures.failed;
    return figures;
  };
  const pageAlone = await single('page', { path: () => PAGE });
  rows.push(latencyRow('unfiltered first page, 1 connection', pageAlone, undefined, undefined));
  if (features.q) {
    const first = await single('q3', { path: q3Path });
    const again = await single('q3 again', { path: q3Path });
    rows.push(latencyRow('q (3 characters), 1 connection', first, again, 25));
    for (const length of [2, 1]) {
      const path = oneOf(searches(length).map((q) => `${PAGE}&q=${encodeURIComponent(q)}`));
      rows.push(latencyRow(`q (${length} character${length === 1 ? '' : 's'}), 1 connection`, await single(`q${length}`, { path }), undefined, undefined));
    }
  } else {
    rows.push(na('q (3 characters), 1 connection', 'p99 ≤ 25 ms', 'this build has no q'));
  }
  if (features.count) {
    const counted = { prefer: 'count=exact' };
    const all = await single('count all', { path: () => PAGE, headers: counted });
    const allAgain = await single('count all again', { path: () => PAGE, headers: counted });
    rows.push(latencyRow(`Prefer: count=exact, all ${STORED.toLocaleString('en')}, 1 connection`, all, allAgain, 100));
    if (features.q) {
      const selective = await single('count q', { path: () => `${PAGE}&q=${encodeURIComponent(SELECTIVE)}`, headers: counted });
      rows.push(latencyRow(`Prefer: count=exact with q=${SELECTIVE} (selective), 1 connection`, selective, undefined, 25));
    }
  } else {
    rows.push(na('Prefer: count=exact', '≤ 100 ms', 'this build has no count'));
  }
  return { rows, failed };
}

const table = (rows: Row[]) => [
  '| row | value | A/A | target | met |',
  '|---|---|---|---|---|',
  ...rows.map((row) => `| ${row.row} | ${row.value} | ${row.aa} | ${row.target} | ${row.met} |`),
];

export async function findSection(): Promise<SectionResult> {
  const began = performance.now();
  // The machine's other work moves the 1-connection p99s far more than the interleaved ratios: say how busy it was.
  const loadBefore = (os.loadavg()[0] ?? 0).toFixed(1);
  const lines = [
    `### Finding plants: a store of ${STORED.toLocaleString('en')} plants on each store; reads interleaved in one server, ${ROUNDS} alternating rounds of ${FIND_SECONDS} s after 1 s warm-up each`,
    '',
  ];
  let failed = 0;
  for (const [store, seed] of [
    ['SQLite', seedSqlite],
    ['PostgreSQL', seedPostgres],
  ] as const) {
    if (!STORES.has(store.toLowerCase())) continue;
    console.error(`find ${store}: seeding ${STORED.toLocaleString('en')} plants…`);
    const seeded = await seed();
    try {
      console.error(`find ${store}: seeded in ${f1(seeded.seedMs / 1000)} s${seeded.upgradeMs === undefined ? '' : `, upgraded in ${f1(seeded.upgradeMs / 1000)} s`}`);
      if (store === 'PostgreSQL') await checkNames(seeded.url);
      const reads = PARTS.has('reads') ? await readRows(store, seeded) : { rows: [], failed: 0 };
      const seedRow = seeded.from === undefined ? `seed ${STORED.toLocaleString('en')} plants and their events by SQL${seeded.note === undefined ? '' : `, ${seeded.note}`}` : `seed ${STORED.toLocaleString('en')} plants and their events by SQL at ${seeded.from}`;
      const rows: Row[] = [
        { row: seedRow, value: `${f1(seeded.seedMs / 1000)} s`, aa: '', target: 'reported', met: '' },
        ...(seeded.upgradeMs === undefined
          ? []
          : [{ row: `upgrade from ${seeded.from ?? ''} to this build: service start to /readyz`, value: `${f1(seeded.upgradeMs / 1000)} s`, aa: '', target: 'reported', met: '' }]),
        ...reads.rows,
      ];
      const file = seeded.url.slice('file:'.length);
      const creates = !PARTS.has('creates') ? { rows: [], failed: 0 } : store === 'SQLite' ? await sqliteCreates(file) : await postgresCreates(seeded.url, ROUNDS);
      const live = PARTS.has('live') ? await liveDelay(store === 'SQLite' ? freshStore('find-live', file) : seeded.url, store) : undefined;
      if (live !== undefined) rows.push({
        row: `live: a rename reaches ${live.watcher}, beside ${f0(live.createRate)} creates/s (half the create rate)`,
        value: `p99 ${f1(live.p99)} ms (p50 ${f1(live.p50)}; the PATCH's own answer p99 ${f1(live.answerP99)} ms, from the answer p99 ${f1(live.afterAnswerP99)} ms; ${live.arrived} of ${live.renames} renames arrived)`,
        aa: '',
        target: 'p99 ≤ 250 ms',
        met: met(live.p99 <= 250 && live.arrived === live.renames),
      });
      const lost = live === undefined ? 0 : live.failed + live.renames - live.arrived;
      const notAnswered = `not answered 2xx: reads ${reads.failed}, creates ${creates.failed}, live ${live === undefined ? 'n/a' : `${live.failed} (renames not delivered ${live.renames - live.arrived})`}`;
      console.error(`find ${store}: ${notAnswered}`);
      lines.push(`#### ${store}`, '', ...table(rows), ...creates.rows, '', `Requests ${notAnswered}.`, '');
      failed += reads.failed + creates.failed + lost;
    } finally {
      await seeded.drop();
    }
  }
  lines.push(`Section run time: ${f0((performance.now() - began) / 1000)} s; load average ${loadBefore} at its start, ${(os.loadavg()[0] ?? 0).toFixed(1)} at its end.`, '');
  return { lines, failed };
}
