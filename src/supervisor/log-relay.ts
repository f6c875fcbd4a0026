/**
 * A worker's stdout, a pipe to the supervisor, into the supervisor's one stdout writer: complete lines only (each
 * chunk cut after its last newline, the rest kept for the next), never parsed. Several processes writing one pipe
 * could cut each other's lines past PIPE_BUF; one writer cannot.
 */
import type { Readable } from 'node:stream';

/** Resolves when the worker's end of the pipe has closed and its last line is relayed. */
export function relayLines(from: Readable, write: (lines: Buffer) => void): Promise<void> {
  let pending: Buffer | undefined;
  from.on('data', (chunk: Buffer) => {
    const whole = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
    const end = whole.lastIndexOf(10);
    if (end === -1) {
      pending = whole;
      return;
    }
    pending = end === whole.length - 1 ? undefined : whole.subarray(end + 1);
    write(whole.subarray(0, end + 1));
  });
  return new Promise((resolve) => {
    from.once('close', () => {
      // A worker killed mid-line leaves half a line: dropped, since a reader of the log expects JSON on every line.
      pending = undefined;
      resolve();
    });
  });
}
