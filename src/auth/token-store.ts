import type { TenantKey } from '../tenant';
import type { LapseReason, Lease } from './lease';
import type { Scope } from './scopes';
import { loadStaticTokens, type StaticTokenSet, type StaticTokenSource } from './static-tokens';

export type { StaticTokenSource } from './static-tokens';

/** A response that outlives its request (a change stream), watching the static token it was opened with. */
type Watcher = { digest: Buffer; tenant: TenantKey | undefined; scope: Scope; lapsed: (reason: LapseReason) => void };

/**
 * The static tokens in force. A reload builds a whole new set and swaps it in one assignment: a request sees
 * the old set or the new one, never a mix, and a file that fails to parse leaves the old set in place. What
 * outlives a request is judged again at each reload: a watcher whose token the new set drops, no longer
 * grants the scope it watches, or moves to another tenant, is told so at once.
 */
export class StaticTokenStore {
  private set: StaticTokenSet;
  private readonly watchers = new Set<Watcher>();

  /** `scopes`: every scope the resources declare (a line that lists none grants them all but the admin ones). */
  constructor(
    private readonly source: StaticTokenSource,
    private readonly scopes: readonly Scope[],
  ) {
    this.set = loadStaticTokens(source, scopes, this.leaseOf);
  }

  get file(): string | undefined {
    return this.source.authTokensFile;
  }

  readonly current = (): StaticTokenSet => this.set;

  /** Re-reads AUTH_TOKENS_FILE; throws TokenFileError (keeping the old set) when it does not parse. */
  reload(): number {
    const next = loadStaticTokens(this.source, this.scopes, this.leaseOf);
    this.set = next;
    for (const watcher of [...this.watchers]) if (!this.grants(watcher)) this.lapse(watcher);
    return next.size;
  }

  private grants({ digest, tenant, scope }: Watcher): boolean {
    const found = this.set.matchDigest(digest);
    return found !== undefined && found.scopes.has(scope) && found.tenant === tenant;
  }

  private lapse(watcher: Watcher): void {
    this.watchers.delete(watcher);
    watcher.lapsed('revoked');
  }

  private readonly leaseOf = (digest: Buffer, tenant: TenantKey | undefined): Lease => ({
    watch: (scope, lapsed) => {
      const watcher: Watcher = { digest, tenant, scope, lapsed };
      this.watchers.add(watcher);
      // Opened under a set a reload has replaced since (the request was authorized before it): judged now.
      if (!this.grants(watcher)) {
        queueMicrotask(() => {
          if (this.watchers.has(watcher)) this.lapse(watcher);
        });
      }
      return () => this.watchers.delete(watcher);
    },
  });
}
