// The realtime gateway: see gateway.ts, and docs/realtime.md for client authors.
export { AGENT_PATH, DEFAULT_LIMITS, Gateway, type GatewayDeps, WIDGET_PATH } from './gateway.js';
export { gatewayHttpHandler, HEALTH_PATH, registerGatewayRoutes } from './health.js';
