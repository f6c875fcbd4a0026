/**
 * How many workers the suites run the service at: TEST_WORKERS (default 1). At 1 the HTTP suites run the service in
 * the jest process (tests/helpers/test-app.ts); above 1 they run the built server with WORKERS at that number
 * (tests/helpers/test-app.workers.ts), and the process tests start it with that WORKERS unless a test sets its own.
 * docs/decisions/tests.md says why. Imports only ./optional-services, so every other helper may import it.
 */
import { describeWith, type Service } from './optional-services';

export const testWorkers = (): number => {
  const value = process.env.TEST_WORKERS ?? '1';
  const workers = Number(value);
  if (!Number.isInteger(workers) || workers < 1) throw new Error(`TEST_WORKERS must be a whole number of at least 1, not ${value}`);
  return workers;
};

type Body = () => void;
type TestBody = Parameters<typeof it>[1];

/**
 * Tests that run once, at one worker: what they check belongs to one process (its file descriptors, its event loop,
 * its modules) or reaches into the service in the jest process (app.lifecycle, app.db's own pragmas, a read-only
 * connection, an injected store). Above one worker each is skipped with its reason in its name, the one line jest
 * prints for it.
 */
export function perProcess(reason: string) {
  return onlyWhen(testWorkers() === 1, `at one worker only: ${reason}`);
}

/**
 * The webhook dispatchers that send: every worker's on PostgreSQL (they claim with SKIP LOCKED, as replicas do),
 * the leader's alone on SQLite. Each has its own connections per subscriber and its own circuit.
 */
export const dispatchers = (): number => (process.env.TEST_STORE === 'postgres' ? testWorkers() : 1);

/** Tests of one dispatcher's own state (its circuit): skipped where several workers dispatch, with the reason. */
export function perDispatcher(reason: string) {
  return onlyWhen(dispatchers() === 1, `with one webhook dispatcher only: ${reason}`);
}

function onlyWhen(runs: boolean, label: string) {
  const skip = !runs;
  const named = (name: string) => `${name} [${label}]`;
  return {
    describe: (name: string, body: Body): void => {
      if (skip) describe.skip(named(name), body);
      else describe(name, body);
    },
    /** describeWith (./optional-services) at one worker. */
    describeWith: (service: Service, name: string, body: (value: string) => void): void => {
      if (skip) describe.skip(named(name), () => body(''));
      else describeWith(service, name, body);
    },
    it: (name: string, body: TestBody, timeout?: number): void => {
      if (skip) it.skip(named(name), body, timeout);
      else it(name, body, timeout);
    },
  };
}

/** What a service log line carries beside the one process's fields: the worker that wrote it, above one worker. */
export const ofAWorker = (): Record<string, unknown> => (testWorkers() > 1 ? { worker: expect.any(Number) } : {});

/**
 * Lines that report a state of one process's own (its connection lost its file, its store refused a write): one
 * at one worker; above one, one from each worker that met it, and never two from the same worker.
 */
export function expectOnePerProcess(lines: readonly Record<string, unknown>[]): void {
  expect(lines.length).toBeGreaterThanOrEqual(1);
  expect(lines.length).toBeLessThanOrEqual(testWorkers());
  expect(new Set(lines.map((line) => line.worker)).size).toBe(lines.length);
}
