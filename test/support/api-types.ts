// The API's records as the service's own OpenAPI document describes them, for the test helpers
// that return records. web/src/api.gen.d.ts is generated (`npm run -s web:types`, which
// `npm run typecheck` runs first) and gitignored; `import type` is erased, so vitest needs nothing.
import type { components, operations } from '../../web/src/api.gen.js';

export type Schemas = components['schemas'];
export type Ticket = Schemas['Ticket'];
export type Message = Schemas['Message'];
export type Contact = Schemas['Contact'];
export type Company = Schemas['Company'];
export type SlaPolicy = Schemas['SlaPolicy'];
export type Team = Schemas['Team'];

/** One event of GET /v1/events (the replay of the outbox). */
export type ReplayedEvent = operations['getEvents']['responses'][200]['content']['application/json']['data'][number];
