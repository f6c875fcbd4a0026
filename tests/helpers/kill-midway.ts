import type { ServerProcess } from './server-process';
import { childPids } from './workers';

/** The next request to send: what it stands for, and how to send it (resolving whether its answer counts). */
export type Midway<T> = { item: T; send: () => Promise<boolean> };

/**
 * Sends the requests `next` gives, `inFlight` at once, and SIGKILLs the server once `killAfter` answers counted
 * (after `delayMs()`, when it gives more than 0: requests keep going out meanwhile). Stops sending at the kill or
 * when `next` has no more; resolves once every request sent has settled, with the items sent and how many counted.
 */
export function sendUntilKilled<T>(
  server: ServerProcess,
  { next, inFlight, killAfter, delayMs = () => 0 }: { next: () => Midway<T> | undefined; inFlight: number; killAfter: number; delayMs?: () => number },
): Promise<{ sent: T[]; counted: number }> {
  const sent: T[] = [];
  let counted = 0;
  let killing = false;
  let killed = false;
  let exhausted = false;
  // Every process at once, as a crash of the machine: at WORKERS above 1 the workers commit, and a supervisor
  // killed alone would leave them answering (a worker orphaned mid-request) before they exit.
  const kill = () => {
    killed = true;
    for (const pid of server.child.pid === undefined ? [] : childPids(server.child.pid)) process.kill(pid, 'SIGKILL');
    server.child.kill('SIGKILL');
  };
  return new Promise((resolve) => {
    let running = 0;
    const launch = () => {
      while (!killed && !exhausted && running < inFlight) {
        const request = next();
        if (request === undefined) {
          exhausted = true;
          break;
        }
        sent.push(request.item);
        running += 1;
        void request.send().then((counts) => {
          running -= 1;
          if (counts) counted += 1;
          if (!killing && counted >= killAfter) {
            killing = true;
            const delay = delayMs();
            if (delay > 0) setTimeout(kill, delay);
            else kill();
          }
          if (running === 0 && (killed || exhausted)) resolve({ sent, counted });
          else launch();
        });
      }
      if (running === 0) resolve({ sent, counted });
    };
    launch();
  });
}
