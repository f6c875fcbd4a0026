import Database from 'better-sqlite3';
import { childTraceparent, parseTraceparent } from '../../src/tracing';
import { aNewPlant } from '../helpers/plants';
import { perTest } from '../helpers/fixtures';
import { defaultStore, dropTable, postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const VALID = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe('W3C traceparent on the log lines', () => {
  const app = appForAll();

  const lineOf = (reqId: string) => app.logs.filter((line) => line.reqId === reqId && line.msg === 'request');

  it('when a valid traceparent comes with a request, then its trace id is on the request log line', async () => {
    const response = await postPlant(app, aNewPlant(), { traceparent: VALID, 'X-Request-Id': 'traced-1' });

    expect(response.status).toBe(200);
    expect(lineOf('traced-1')).toEqual([expect.objectContaining({ reqId: 'traced-1', traceId: TRACE_ID, status: 200 })]);
  });

  it('when a later version adds fields after the flags, then the trace id is still taken', async () => {
    await postPlant(app, aNewPlant(), { traceparent: `01-${TRACE_ID}-00f067aa0ba902b7-01-what-comes-next`, 'X-Request-Id': 'traced-2' });

    expect(lineOf('traced-2')[0]?.traceId).toBe(TRACE_ID);
  });

  it.each([
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-00f067aa0ba902b7-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE_ID}-00f067aa0ba902b7-01`],
    ['version 00 with extra fields', `${VALID}-extra`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-00f067aa0ba902b7-01`],
    ['no dashes', VALID.replace(/-/g, '')],
    ['free text', 'hello'],
  ])('when the traceparent has %s, then it is ignored: the request succeeds and its line has no trace id', async (_case, header) => {
    const reqId = `untraced-${Math.random().toString(36).slice(2)}`;

    const response = await postPlant(app, aNewPlant(), { traceparent: header, 'X-Request-Id': reqId });

    expect(response.status).toBe(200);
    expect(lineOf(reqId)).toHaveLength(1);
    expect(lineOf(reqId)[0]).not.toHaveProperty('traceId');
  });

  it('when no traceparent is sent, then the log line has no trace id', async () => {
    await postPlant(app, aNewPlant(), { 'X-Request-Id': 'untraced-plain' });

    expect(lineOf('untraced-plain')[0]).not.toHaveProperty('traceId');
  });
});

// A second SQLite connection holding the write lock.
const sqliteOnly = defaultStore() === 'postgres' ? it.skip : it;

describe('W3C traceparent on error log lines', () => {
  const open = perTest();

  sqliteOnly('when a store fault answers 503, then its request line carries the trace id (the fault itself is logged once per episode)', async () => {
    const app = await open.app({ DATABASE_BUSY_TIMEOUT_MS: '50' });
    const locker = new Database(app.dbPath);
    locker.exec('BEGIN IMMEDIATE');

    const response = await postPlant(app, aNewPlant(), { traceparent: VALID, 'X-Request-Id': 'traced-fault' });
    locker.exec('ROLLBACK');
    locker.close();
    await app.close();

    expect(response.status).toBe(503);
    expect(app.logs.filter((line) => line.reqId === 'traced-fault').map(({ level, traceId, error }) => ({ level, traceId, error }))).toEqual([
      { level: 30, traceId: TRACE_ID, error: 50301 },
    ]);
  });

  it('when a bug answers 500, then its error line carries the trace id', async () => {
    const app = await open.app();
    dropTable(app, 'plants');

    const response = await postPlant(app, aNewPlant(), { traceparent: VALID, 'X-Request-Id': 'traced-bug' });
    await app.close();

    expect(response.status).toBe(500);
    expect(app.logs.filter((line) => line.reqId === 'traced-bug').map(({ level, traceId, error }) => ({ level, traceId, error }))).toEqual([
      { level: 50, traceId: TRACE_ID, error: 50001 },
      { level: 30, traceId: TRACE_ID, error: 50001 },
    ]);
  });
});

describe('childTraceparent', () => {
  it('when a call is made within a trace, then it keeps the trace id and flags under a new span id', () => {
    const trace = parseTraceparent(VALID);

    const child = trace === undefined ? '' : childTraceparent(trace);

    expect(child).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    expect(child.split('-')[2]).not.toBe('00f067aa0ba902b7');
    expect(parseTraceparent(child)).toEqual({ traceId: TRACE_ID, flags: '01' });
  });
});
