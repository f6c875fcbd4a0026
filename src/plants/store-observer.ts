// The store's observer port, defined on the ground floor (src/observers.ts) so metrics implements it without
// importing this folder.
export { ignoreStore, type StoreObserver } from '../observers';
