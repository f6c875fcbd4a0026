import { startTestApp, type TestApp } from './test-app';
import { startReceiver, WEBHOOK_SECRET, type Receiver } from './webhook-receiver';

/** A webhook subscriber with the test secret and retries 100 ms apart, so a test sees its retries quickly. */
export const webhookEnv = (urls: string, extra: Record<string, string> = {}): Record<string, string> => ({
  WEBHOOK_URLS: urls,
  WEBHOOK_SECRET,
  WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms',
  ...extra,
});

/**
 * What a webhook test file opens, closed after each test, last opened first (the app before its receivers).
 * Call once at the top of the file: it registers the afterEach.
 */
export function webhookFixtures() {
  const opened: { close: () => Promise<void> }[] = [];
  afterEach(async () => {
    for (const item of opened.splice(0).reverse()) await item.close();
  });
  const keep = <T extends { close: () => Promise<void> }>(item: T): T => {
    opened.push(item);
    return item;
  };
  return {
    receiver: async (options: Parameters<typeof startReceiver>[0] = {}): Promise<Receiver> => keep(await startReceiver(options)),
    /** The app with `urls` subscribed (webhookEnv); `extra` adds or overrides variables. */
    appWith: async (urls: string, extra: Record<string, string> = {}): Promise<TestApp> => keep(await startTestApp(webhookEnv(urls, extra))),
    /** The app with exactly this environment. */
    app: async (env: Record<string, string>): Promise<TestApp> => keep(await startTestApp(env)),
  };
}
