// The typed object model: every kind kdp serves, as upstream JSON. Import from here.

export * from './types/meta.js';
export * from './types/pod.js';
export * from './types/service.js';
export * from './types/node.js';
export * from './types/config.js';
export * from './types/apps.js';
export * from './types/discovery.js';
export * from './types/rbac.js';
