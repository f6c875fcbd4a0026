import { execFileSync } from 'node:child_process';
import path from 'node:path';

// Issue 32's measure: each write rule once. `duplicates` (the workplace's tool for what a tree writes twice) is on
// the development machines, not a dependency of this project: where it is absent the suite skips with one line.
const ROOT = path.resolve(__dirname, '..', '..');

/** The write path: the rule, both stores' appliers and repositories, the import, the outboxes, the queue. */
const WRITE_PATH = /^(?:plants\/plant\.(?:write|repository|transfer|writer|outbox)|backup\/transfer|webhooks\/outbox|db\/group-commit|change-outbox)/;

function duplicatesReport(): string | undefined {
  try {
    return execFileSync('duplicates', ['--repo', path.join(ROOT, 'src'), '--most', '200', '--seconds', '60'], { encoding: 'utf8' });
  } catch {
    return undefined;
  }
}

const report = duplicatesReport();
if (report === undefined) console.warn('write-path duplicates: skipped; the `duplicates` tool is not on the PATH');

(report === undefined ? describe.skip : describe)('the write path, read by duplicates', () => {
  it('when src/ is read for repeated runs of lines, then no pair has a side in the write path but what the tool calls boilerplate', () => {
    const pairs = (report ?? '').split('\n').filter((line) => /^D\d+ /.test(line));

    const inWritePath = pairs.filter((line) => {
      const [, left = '', , right = ''] = line.split(' ');
      return (WRITE_PATH.test(left) || WRITE_PATH.test(right)) && !line.includes('boilerplate');
    });

    expect({ read: pairs.length > 0 || (report ?? '').includes('files read'), inWritePath }).toEqual({ read: true, inWritePath: [] });
  });
});
