// The event store's public surface: open it, its port types and its errors.
export { openStore, DB_FILE, LOCKS_DIR, type OpenStoreOptions } from './sqlJsStore';
export { JOURNAL_FILE } from './journal';
export { LOCK_FILE } from './writerLock';
export { enableFastWasmStartup } from './sqlDb';
export {
  ReadOnlyStoreError,
  StoreClosedError,
  StoreCorruptError,
  StoreFailedError,
  StoreLockedError,
  StoreVersionError,
  type LockHolder,
} from './errors';
export type * from './types';
