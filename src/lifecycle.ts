/**
 * What the process knows of its own state, read by /readyz and the drain. Ground floor: imports nothing.
 */

/** Resolves true when the store is readable and migrated, false when readable but behind; throws when unreadable. */
export type Readiness = () => Promise<boolean>;

/** Flipped once by the service's drain; /readyz answers 503 from then on. */
export type Lifecycle = { shuttingDown: boolean };
