/** What the process knows about its own state; server.ts flips it, /readyz and the drain read it. */
export type Lifecycle = { shuttingDown: boolean };
