// Public surface of the store: the contract, the embedded (durable) and in-memory backends.
export type * from './types.js';
export { buildEmbeddedStore } from './embedded-store.js';
export { buildMemoryStore, type MemoryStoreOptions } from './memory-store.js';
export type { EmbeddedStoreOptions, StoreStartOptions } from './options.js';
