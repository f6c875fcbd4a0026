import type { Worker } from 'node:cluster';
import { GroupCommit, type WriteTurn } from '../../src/db/group-commit';
import { WriteTurnTable } from '../../src/supervisor/write-turn';

// A worker as the table sees it: whether its channel is open, and the grants it was sent.
function aWorker(name: string, granted: string[]) {
  let connected = true;
  const worker = {
    isConnected: () => connected,
    send: (message: { id: number }) => {
      granted.push(`${name}:${message.id}`);
      return true;
    },
  } as unknown as Worker;
  return { worker, disconnect: () => (connected = false) };
}

describe('the machine write turn (supervisor side)', () => {
  it('when three asks queue, then the turn goes to each in arrival order, one at a time, as each gives it back', () => {
    const granted: string[] = [];
    const [a, b] = [aWorker('a', granted), aWorker('b', granted)];
    const table = new WriteTurnTable();

    table.received(a.worker, { type: 'write-turn', op: 'take', id: 1 });
    table.received(b.worker, { type: 'write-turn', op: 'take', id: 1 });
    table.received(a.worker, { type: 'write-turn', op: 'take', id: 2 });
    const first = [...granted];
    table.received(a.worker, { type: 'write-turn', op: 'give', id: 1 });
    table.received(b.worker, { type: 'write-turn', op: 'give', id: 1 });

    expect(first).toEqual(['a:1']);
    expect(granted).toEqual(['a:1', 'b:1', 'a:2']);
  });

  it('when the holder exits, then its turn and its later asks pass to the next worker', () => {
    const granted: string[] = [];
    const [a, b] = [aWorker('a', granted), aWorker('b', granted)];
    const table = new WriteTurnTable();
    table.received(a.worker, { type: 'write-turn', op: 'take', id: 1 });
    table.received(a.worker, { type: 'write-turn', op: 'take', id: 2 });
    table.received(b.worker, { type: 'write-turn', op: 'take', id: 7 });

    a.disconnect();
    table.exited(a.worker);

    expect(granted).toEqual(['a:1', 'b:7']);
  });

  it('when an ask is withdrawn before its grant, then it leaves the queue; a give from a worker not holding the turn frees nothing', () => {
    const granted: string[] = [];
    const [a, b] = [aWorker('a', granted), aWorker('b', granted)];
    const table = new WriteTurnTable();
    table.received(a.worker, { type: 'write-turn', op: 'take', id: 1 });
    table.received(b.worker, { type: 'write-turn', op: 'take', id: 1 });

    table.received(b.worker, { type: 'write-turn', op: 'give', id: 1 });
    table.received(a.worker, { type: 'write-turn', op: 'give', id: 1 });

    expect(granted).toEqual(['a:1']);
  });
});

describe('the group commit with a write turn', () => {
  it('when writes arrive while the turn is asked for, then they commit as one batch inside the turn, and the turn is given back once', async () => {
    const events: string[] = [];
    let grant: (() => void) | undefined;
    const turn: WriteTurn = {
      take: () =>
        new Promise((resolve) => {
          events.push('take');
          grant = () => resolve(() => events.push('give'));
        }),
    };
    const queue = new GroupCommit<number, number>((batch) => {
      events.push(`commit ${batch.map(({ op }) => op).join(',')}`);
      for (const { op, resolve } of batch) resolve(op * 10);
    }, turn);

    const first = queue.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [queue.submit(2), queue.submit(3)];
    await new Promise((resolve) => setImmediate(resolve));
    grant?.();

    expect(await Promise.all([first, ...later])).toEqual([10, 20, 30]);
    expect(events).toEqual(['take', 'commit 1,2,3', 'give']);
    await queue.settled();
  });
});
