import { loadStaticTokens, type StaticTokenSet } from './static-tokens';

export type StaticTokenSource = { authTokens: readonly string[]; authTokensFile: string | undefined };

/**
 * The static tokens in force. A reload builds a whole new set and swaps it in one assignment: a request sees
 * the old set or the new one, never a mix, and a file that fails to parse leaves the old set in place.
 */
export class StaticTokenStore {
  private set: StaticTokenSet;

  constructor(private readonly source: StaticTokenSource) {
    this.set = loadStaticTokens(source);
  }

  get file(): string | undefined {
    return this.source.authTokensFile;
  }

  readonly current = (): StaticTokenSet => this.set;

  /** Re-reads AUTH_TOKENS_FILE; throws TokenFileError (keeping the old set) when it does not parse. */
  reload(): number {
    const next = loadStaticTokens(this.source);
    this.set = next;
    return next.size;
  }
}
