/**
 * What test files share: an app or an identity provider for a whole file or block (appForAll,
 * identityProviderForAll) or for each test (…ForEach), apps and webhook receivers made inside one test (perTest),
 * server processes on one fresh PostgreSQL database per test (replicasForEach), and from ./common log capture, `sleep` and `errorOf`. Ports come from ./ports (freePort).
 */
import { startIdentityProvider, type IdentityProvider } from './identity-provider';
import { createTestDatabase, type TestDatabase } from './postgres';
import { startServer, type ServerProcess } from './server-process';
import { startTestApp, type StoreKind, type TestApp } from './test-app';
import { startReceiver, WEBHOOK_SECRET, type Receiver } from './webhook-receiver';

export { captureLogs, errorOf, sleep, type LogLine } from './common';

type Hooks = { before: (run: () => Promise<void>) => void; after: (run: () => Promise<void>) => void };
const ALL: Hooks = {
  before: (run) => {
    beforeAll(run);
  },
  after: (run) => {
    afterAll(run);
  },
};
const EACH: Hooks = {
  before: (run) => {
    beforeEach(run);
  },
  after: (run) => {
    afterEach(run);
  },
};

/**
 * A thing tests share, started before them and closed after them. The returned object gets the started thing's
 * own properties (by descriptor: the PostgreSQL app's `db` is a getter that throws when read) once the `before`
 * hook has run, so tests use it as the thing itself.
 */
function shared<T extends object>(hooks: Hooks, start: () => Promise<T>, close: (started: T) => Promise<void>): T {
  const handle = {} as T;
  let started: T | undefined;
  hooks.before(async () => {
    started = await start();
    Object.defineProperties(handle, Object.getOwnPropertyDescriptors(started));
  });
  hooks.after(async () => {
    if (started !== undefined) await close(started);
    started = undefined;
  });
  return handle;
}

type Env = Record<string, string> | (() => Record<string, string>);
type AppOptions = { readonly?: boolean; store?: StoreKind };
const envOf = (env: Env) => (typeof env === 'function' ? env() : env);

/**
 * The app of a file or describe block: started in beforeAll, closed in afterAll. `env` may be a function, called
 * then, for values known only after an earlier beforeAll (an identity provider's URL).
 */
export const appForAll = (env: Env = {}, options: AppOptions = {}): TestApp =>
  shared(ALL, () => startTestApp(envOf(env), options), (app) => app.close());

/** A fresh app for each test of the block. */
export const appForEach = (env: Env = {}, options: AppOptions = {}): TestApp =>
  shared(EACH, () => startTestApp(envOf(env), options), (app) => app.close());

/** An identity provider (JWKS and token minting) for the file or describe block. */
export const identityProviderForAll = (): IdentityProvider => shared(ALL, startIdentityProvider, (idp) => idp.stop());

/** A fresh identity provider for each test of the block. */
export const identityProviderForEach = (): IdentityProvider => shared(EACH, startIdentityProvider, (idp) => idp.stop());

/** A webhook subscriber with the test secret and retries 100 ms apart, so a test sees its retries quickly. */
export const webhookEnv = (urls: string, extra: Record<string, string> = {}): Record<string, string> => ({
  WEBHOOK_URLS: urls,
  WEBHOOK_SECRET,
  WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms',
  ...extra,
});

/**
 * Apps and receivers for one test, closed after it (afterEach), last opened first: the app before its receivers.
 * Call once at the top of a file or describe block: it registers the afterEach.
 */
export function perTest() {
  const opened: { close: () => Promise<void> }[] = [];
  afterEach(async () => {
    for (const item of opened.splice(0).reverse()) await item.close();
  });
  const keep = <T extends { close: () => Promise<void> }>(item: T): T => {
    opened.push(item);
    return item;
  };
  return {
    /** An app with exactly this environment (and options, as startTestApp takes them). */
    app: async (env: Record<string, string> = {}, options: { readonly?: boolean; store?: StoreKind } = {}): Promise<TestApp> =>
      keep(await startTestApp(env, options)),
    /** An app with `urls` subscribed (webhookEnv); `extra` adds or overrides variables. */
    appWith: async (urls: string, extra: Record<string, string> = {}): Promise<TestApp> => keep(await startTestApp(webhookEnv(urls, extra))),
    receiver: async (options: Parameters<typeof startReceiver>[0] = {}): Promise<Receiver> => keep(await startReceiver(options)),
  };
}

/**
 * A fresh database on the PostgreSQL `server` for each test of the block, and the server processes (replicas) a
 * test starts on it: after each test all are stopped, then the database is dropped.
 */
export function replicasForEach(server: string) {
  let database: TestDatabase | undefined;
  const started: ServerProcess[] = [];
  beforeEach(async () => {
    database = await createTestDatabase(server);
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((replica) => replica.stop()));
    await database?.drop();
    database = undefined;
  });
  const url = (): string => {
    if (database === undefined) throw new Error('replicasForEach: the database exists only while a test runs');
    return database.url;
  };
  /** `count` replicas on the test's database, started at once; `env` adds variables. */
  const start = async (count: number, env: Record<string, string> = {}): Promise<ServerProcess[]> => {
    const replicas = await Promise.all(Array.from({ length: count }, () => startServer({ DATABASE_URL: url(), ...env })));
    started.push(...replicas);
    return replicas;
  };
  return {
    /** The running test's database. */
    get url(): string {
      return url();
    },
    start,
    /** Two replicas on the test's database, as a pair. */
    two: async (env: Record<string, string> = {}): Promise<[ServerProcess, ServerProcess]> => {
      const [a, b] = await start(2, env);
      return [a as ServerProcess, b as ServerProcess];
    },
  };
}
