import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { aNewPlant } from '../helpers/plants';
import { postPlant } from '../helpers/test-app';
import { identityProviderForAll, perTest } from '../helpers/fixtures';
import { openStream, type SseStream } from '../helpers/sse';

const REMOVED = 'removed-token-0123456789abcdefghijklmnopqrstuvwxyz';
const NARROWED = 'narrowed-token-0123456789abcdefghijklmnopqrstuvwxyz';
const KEPT = 'kept-token-0123456789abcdefghijklmnopqrstuvwxyz';
const now = () => Math.floor(Date.now() / 1000);

const { app } = perTest();
const idp = identityProviderForAll();
const opened: SseStream[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const stream of opened.splice(0)) stream.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function stream(url: string, token: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const reader = await openStream(url, '/plants/events', { Authorization: `Bearer ${token}`, ...headers });
  opened.push(reader);
  return reader;
}

/** Whether the stream ends within `ms`. */
const endsWithin = (reader: SseStream, ms: number): Promise<boolean> =>
  Promise.race([reader.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

/** The stream's last dispatched event, once it has ended. */
const lastEvent = (reader: SseStream) => reader.named().at(-1);
const about = (id: unknown) => (reader: SseStream) => reader.named().some((event) => event.data?.startsWith(`{"id":${id as number},`) === true);

/** AUTH_TOKENS_FILE in a directory of the test's own; `replace` swaps it in one rename, as an operator should. */
function tokensFile(text: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-stream-tokens-'));
  dirs.push(dir);
  const file = path.join(dir, 'tokens');
  writeFileSync(file, text);
  return {
    file,
    replace: (next: string) => {
      writeFileSync(`${file}.new`, next);
      renameSync(`${file}.new`, file);
    },
  };
}

describe('GET /plants/events when the credential it was opened with ends', () => {
  it('when the token file is reloaded without a token, or with it narrowed to plants:write, then its streams end with a last resume event and reconnecting is refused; other streams go on', async () => {
    const tokens = tokensFile(`${REMOVED}\n${NARROWED}\n${KEPT}\n`);
    const served = await app({ AUTH_TOKENS_FILE: tokens.file });
    const [removed, narrowed, kept] = [await stream(served.url, REMOVED), await stream(served.url, NARROWED), await stream(served.url, KEPT)];
    const before = aNewPlant();
    await postPlant(served, before);
    await Promise.all([removed, narrowed, kept].map((reader) => reader.waitFor(() => about(before.id)(reader))));

    tokens.replace(`${NARROWED} plants:write\n${KEPT}\n`);
    const ended = await Promise.all([endsWithin(removed, 3000), endsWithin(narrowed, 3000)]);
    const after = aNewPlant();
    await postPlant(served, after);
    await kept.waitFor(() => about(after.id)(kept));
    const resumeFrom = lastEvent(removed)?.id as string;
    const [again, narrowedAgain] = [await stream(served.url, REMOVED, { 'Last-Event-ID': resumeFrom }), await stream(served.url, NARROWED)];

    expect(ended).toEqual([true, true]);
    expect(served.logs.some((line) => line.msg === 'static tokens reloaded')).toBe(true);
    expect([lastEvent(removed), lastEvent(narrowed)]).toEqual([
      { event: 'resume', id: expect.stringMatching(/^\d+$/) as unknown, data: '{"reason":"token_revoked"}' },
      { event: 'resume', id: expect.stringMatching(/^\d+$/) as unknown, data: '{"reason":"token_revoked"}' },
    ]);
    expect(resumeFrom).toBe(removed.named().find((event) => event.data?.startsWith(`{"id":${before.id as number},`))?.id);
    expect([about(after.id)(removed), about(after.id)(narrowed)]).toEqual([false, false]);
    expect({ status: again.status, body: again.body }).toEqual({ status: 401, body: { error: 40102, message: 'The bearer token is not valid.' } });
    expect(narrowedAgain.status).toBe(403);
  });

  it('when a JWT\'s exp passes, then its stream ends at exp, with no change to wake it, with a last resume event, and reconnecting is 401 expired', async () => {
    const served = await app({ ...idp.env(), AUTH_CLOCK_TOLERANCE_S: '0' });
    const exp = now() + 2;
    const token = await idp.mint({ exp });
    const reader = await stream(served.url, token);
    const plant = aNewPlant();
    await postPlant(served, plant);
    await reader.waitFor(() => about(plant.id)(reader));

    const ended = await Promise.race([reader.ended.then(() => Date.now()), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 6000))]);
    const again = await stream(served.url, token, { 'Last-Event-ID': lastEvent(reader)?.id as string });

    expect(ended).toBeDefined();
    expect((ended as number) / 1000).toBeGreaterThanOrEqual(exp - 0.05);
    expect((ended as number) / 1000).toBeLessThan(exp + 1);
    expect(lastEvent(reader)).toEqual({ event: 'resume', id: expect.stringMatching(/^\d+$/) as unknown, data: '{"reason":"token_expired"}' });
    expect({ status: again.status, error: (again.body as { error: number }).error }).toEqual({ status: 401, error: 40103 });
  });
});
