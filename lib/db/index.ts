// The store: opened from the StoreConfig it is handed (lib/root holds the one of a process).
export { openStore, type Store } from './store';
