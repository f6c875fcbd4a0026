/**
 * The SQLite writer thread (src/db/sqlite-writer.ts starts it): owns the write connection and runs each group
 * commit the request thread posts, in the order posted, one at a time. Every wait it has (the transaction, its
 * fsync, a checkpoint) is this thread's, never the event loop's that serves requests. A locked file is answered at
 * once (busy_timeout 0) as a fault with its code: the request thread retries it on a timer, as the group commit
 * always did (src/db/health.sqlite.ts), and owns the fault episode /readyz reads.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { openDatabase } from './db/database.sqlite';
import { faultOf, type RenderChannel, type WriterModule, type WriterReply, type WriterSetup } from './db/sqlite-writer';
import { outboxRecorder } from './webhooks/outbox.sqlite';

const { setup, channel } = workerData as { setup: WriterSetup; channel: RenderChannel };
const db: Database.Database = openDatabase(setup.file, { busyTimeoutMs: 0, readonly: setup.readonly });
const signal = new Int32Array(channel.flag);
// The request thread renders within seconds unless it is stuck; past that the write fails alone (500), unkept.
const RENDER_WAIT_MS = 10_000;

/** Asks the request thread for a keyed write's answer and waits for it, inside the write's savepoint. */
function render(ref: number, outcome: unknown): unknown {
  channel.requests.postMessage({ ref, outcome });
  if (Atomics.wait(signal, 0, 0, RENDER_WAIT_MS) === 'timed-out') throw new Error('the request thread did not render a kept answer in time');
  Atomics.store(signal, 0, 0);
  const reply = receiveMessageOnPort(channel.answers)?.message as { answer: unknown } | { fault: { message: string } } | undefined;
  if (reply === undefined) throw new Error('the request thread answered no kept answer');
  if ('fault' in reply) throw new Error(reply.fault.message);
  return reply.answer;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the module the writing resource named
const { threadCommit } = require(setup.module) as WriterModule;
const outbox = setup.outbox === undefined ? undefined : outboxRecorder(db, setup.outbox.subscribers, new Set(setup.outbox.types));
let commit: ((request: unknown) => unknown) | undefined;

parentPort?.on('message', ({ id, body }: { id: number; body: unknown }) => {
  let reply: WriterReply<unknown>;
  try {
    // Prepared at the first request and again after a failure: a schema that cannot prepare (a table dropped
    // under the process) fails each write as the bug it is, not the thread.
    commit ??= threadCommit(db, outbox, render);
    reply = { result: commit(body) };
  } catch (error) {
    reply = { fault: faultOf(error) };
  }
  parentPort?.postMessage({ id, reply });
});
