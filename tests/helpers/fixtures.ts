/**
 * What test files share: an app for a whole file or describe block (appForAll), apps and webhook receivers for one
 * test (perTest), and from ./common log capture, `sleep` and `errorOf`. Ports come from ./ports (freePort).
 */
import { startTestApp, type StoreKind, type TestApp } from './test-app';
import { startReceiver, WEBHOOK_SECRET, type Receiver } from './webhook-receiver';

export { captureLogs, errorOf, sleep, type LogLine } from './common';

/**
 * The app of a file or a describe block: started in beforeAll, closed in afterAll. The returned object gets the
 * started app's fields when beforeAll has run, so tests use it as a TestApp. `env` may be a function, called in
 * beforeAll, for values known only then (an identity provider started by an earlier beforeAll).
 */
export function appForAll(
  env: Record<string, string> | (() => Record<string, string>) = {},
  options: { readonly?: boolean; store?: StoreKind } = {},
): TestApp {
  const app = {} as TestApp;
  let started: TestApp | undefined;
  beforeAll(async () => {
    started = await startTestApp(typeof env === 'function' ? env() : env, options);
    // Descriptors, not values: the PostgreSQL app's `db` is a getter that throws when read.
    Object.defineProperties(app, Object.getOwnPropertyDescriptors(started));
  });
  afterAll(async () => {
    await started?.close();
  });
  return app;
}

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
