// host-local IPAM (ranges, range sets, round-robin allocator, memory and disk stores).
export * from './range.js';
export * from './range-set.js';
export * from './store.js';
export * from './store-disk.js';
export * from './allocator.js';
export * from './host-local.js';
