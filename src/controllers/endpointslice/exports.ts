// Shared between the EndpointSlice and Endpoints controllers.
export { findPort, podIPOfFamily, shouldPodBeInEndpoints } from './desired.js';
export { watchPodsForServices } from './controller.js';
