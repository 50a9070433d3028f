export * from './types.js';
export * from './address.js';
export * from './addresses.js';
export * from './ipset.js';
export * from './ipvsadm.js';
export * from './state-text.js';
export { parseError } from './parse-error.js';
