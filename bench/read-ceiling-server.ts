// Read ceiling: what Express 5 + helmet + a bearer check cost to answer GET /plants/{id} and GET /plants with the
// same JSON bodies as the service, kept in memory: no store, no parsing of the id, no logs. The service's reads
// are measured against it in the same run (bench/read.section.ts); it is never deployed.
import { ceilingApp, listen } from './ceiling-app';


// The service's bodies for a store seeded as bench/create.section.ts seeds it.
const stored = (id: number) => (id % 3 === 0 ? `{"id":${id},"name":"Stored plant ${id}"}` : `{"id":${id},"name":"Stored plant ${id}","tag":"seeded"}`);
const ONE = stored(4242);
const PAGE = `[${Array.from({ length: 100 }, (_, index) => stored(500_001 + index)).join(',')}]`;

const app = ceilingApp();
app.get('/plants/:id', (_req, res) => {
  res.set('Cache-Control', 'no-store').type('application/json').send(ONE);
});
app.get('/plants', (_req, res) => {
  res.set('Cache-Control', 'no-store').set('Link', '</plants?limit=100&after=500100>; rel="next"').type('application/json').send(PAGE);
});

listen(app);
