/**
 * The link to the SQLite writer thread (src/writer.thread.ts): a `worker_threads` thread that owns the write
 * connection, so the group commit's transaction, its fsync and a checkpoint run off the thread that serves
 * requests. One request at a time per message, answered in order; the thread is started on the first request and
 * again after it died. A keyed write's answer is rendered here, on the request thread, while the writer waits
 * inside the write's savepoint (`render`): the answer is still kept in the same transaction as its write.
 * Knows nothing of what is written: requests and replies are data (structured clone, bigint included).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { ChangeOutbox } from '../change-outbox';
import { AppError } from '../errors';
import type { Db } from './database.sqlite';

/**
 * What the thread opens: the file, read-only or not; the module (a path) whose `threadCommit` runs each request,
 * named by the resource that writes, so the thread itself names none; and the webhook rows its commits write.
 */
export type WriterSetup = { file: string; readonly: boolean; module: string; outbox?: { subscribers: readonly string[]; types: readonly string[] } };

/** What the named module exports: prepared once on the write connection, then called once per request. */
export type WriterModule = {
  threadCommit: (db: Db, outbox: ChangeOutbox | undefined, render: (ref: number, outcome: unknown) => unknown) => (request: unknown) => unknown;
};

/** The path of a module beside `file` (a caller's `__filename`), in the same form: TypeScript source or built. */
export const moduleBeside = (file: string, name: string): string => path.join(path.dirname(file), `${name}${path.extname(file)}`);

/** What the thread answers a request: the commit's result, or the fault that failed the whole batch. */
export type WriterReply<Result> = { result: Result } | { fault: WriterFault };

/** A failed batch's error, as data: its code (SQLITE_BUSY, SQLITE_FULL, …) decides retry, 503 or 500. */
export type WriterFault = { name: string; message: string; code?: string; stack?: string };

/** The thread's side of the render call: it posts a request here and waits on the flag for the answer. */
export type RenderChannel = { flag: SharedArrayBuffer; requests: MessagePort; answers: MessagePort };

type Waiting = { resolve: (reply: WriterReply<unknown>) => void; reject: (error: Error) => void };

// Under jest and tsx the thread runs the TypeScript source: jest's transform does not reach a worker thread.
const EXT = path.extname(__filename);
const SCRIPT = path.join(__dirname, '..', `writer.thread${EXT}`);
const EXEC_ARGV = EXT === '.ts' ? ['--require', 'tsx/cjs'] : [];

/** A failed batch's fault as an Error the caller can read the same way as the driver's (by `code`). */
export function errorOfFault(fault: WriterFault): Error {
  const error = Object.assign(new Error(fault.message), fault.code === undefined ? {} : { code: fault.code });
  error.name = fault.name;
  if (fault.stack !== undefined) error.stack = fault.stack;
  return error;
}

export function faultOf(error: unknown): WriterFault {
  const { name, message, stack, code } = (error instanceof Error ? error : new Error(String(error))) as Error & { code?: unknown };
  return { name, message, stack, ...(typeof code === 'string' ? { code } : {}) };
}

const writers = new WeakMap<object, Set<SqliteWriter>>();

/** Stops every writer started for `owner` (the store's connection): called before that connection closes. */
export async function closeWriters(owner: object): Promise<void> {
  const open = writers.get(owner);
  if (open === undefined) return;
  writers.delete(owner);
  await Promise.all([...open].map((writer) => writer.close()));
}

export class SqliteWriter {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private next = 0;
  private closed = false;

  constructor(
    owner: object,
    private readonly setup: WriterSetup,
    /** Renders a keyed write's answer for the thread, by the reference its request carried. */
    private readonly render: (ref: number, outcome: unknown) => unknown,
  ) {
    const open = writers.get(owner) ?? new Set();
    open.add(this);
    writers.set(owner, open);
  }

  /** Whether a writer thread can run here: the built thread is present (or its source, under jest and tsx). */
  static available(): boolean {
    return existsSync(SCRIPT);
  }

  /** Sends one request; resolves with the thread's reply, or rejects with 503 when the thread died or is closed. */
  request<Result>(body: unknown): Promise<WriterReply<Result>> {
    if (this.closed) return Promise.reject(new AppError('store_unavailable', 'The store is closing; retry later.'));
    const worker = this.worker ?? this.start();
    const id = (this.next += 1);
    return new Promise<WriterReply<unknown>>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, body });
    }) as Promise<WriterReply<Result>>;
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) await worker.terminate();
  }

  private start(): Worker {
    const flag = new SharedArrayBuffer(4);
    const renders = new MessageChannel();
    const answers = new MessageChannel();
    const channel: RenderChannel = { flag, requests: renders.port2, answers: answers.port2 };
    const worker = new Worker(SCRIPT, { workerData: { setup: this.setup, channel }, transferList: [renders.port2, answers.port2], execArgv: EXEC_ARGV });
    // The thread keeps no process alive: a store left open by a test, or a process at exit, ends it.
    worker.unref();
    renders.port1.unref();
    const signal = new Int32Array(flag);
    renders.port1.on('message', ({ ref, outcome }: { ref: number; outcome: unknown }) => {
      let answer: { answer: unknown } | { fault: WriterFault };
      try {
        answer = { answer: this.render(ref, outcome) };
      } catch (error) {
        answer = { fault: faultOf(error) };
      }
      answers.port1.postMessage(answer);
      Atomics.store(signal, 0, 1);
      Atomics.notify(signal, 0);
    });
    worker.on('message', ({ id, reply }: { id: number; reply: WriterReply<unknown> }) => {
      const waiting = this.waiting.get(id);
      this.waiting.delete(id);
      waiting?.resolve(reply);
    });
    const died = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      renders.port1.close();
      answers.port1.close();
      // The outcome of what was in flight is unknown: a 503, whose retry replays (or finds the write done).
      const failure = new AppError('store_unavailable', undefined, { cause: error });
      for (const { reject } of this.waiting.values()) reject(failure);
      this.waiting.clear();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`the SQLite writer thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }
}
