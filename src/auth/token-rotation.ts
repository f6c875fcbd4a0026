import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type { Logger } from '../logger';
import { TokenFileError } from './static-tokens';
import type { StaticTokenStore } from './token-store';

// Polling the path (a stat every 250 ms) rather than fs.watch on the inode: editors and Kubernetes secret
// updates replace the file by rename, which an inode watch misses; a stat sees the new inode within the interval.
const POLL_INTERVAL_MS = 250;

/**
 * Reloads AUTH_TOKENS_FILE on SIGHUP and when the file changes. Started by the service (src/service.ts) after listen; the
 * function it returns stops both (called in the drain). Does nothing when no file is configured.
 */
export function startTokenRotation(store: StaticTokenStore, logger: Logger): () => void {
  const file = store.file;
  if (file === undefined) return () => undefined;
  const reload = (trigger: 'SIGHUP' | 'file change') => {
    try {
      logger.info({ trigger, tokens: store.reload() }, 'static tokens reloaded');
    } catch (error) {
      if (!(error instanceof TokenFileError)) throw error;
      logger.error({ trigger, file }, `static tokens not reloaded, the previous set stays in force: ${error.message}`);
    }
  };
  const onSignal = () => reload('SIGHUP');
  const onChange = (current: Stats, previous: Stats) => {
    if (current.mtimeMs !== previous.mtimeMs || current.ino !== previous.ino || current.size !== previous.size) reload('file change');
  };
  process.on('SIGHUP', onSignal);
  watchFile(file, { interval: POLL_INTERVAL_MS, persistent: false }, onChange);
  return () => {
    process.off('SIGHUP', onSignal);
    unwatchFile(file, onChange);
  };
}
