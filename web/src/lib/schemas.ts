// The API's shapes the app names, from the generated OpenAPI types (web/src/api.gen.d.ts). A
// module of types only, so that the client (api.ts) and the session (session.ts), which the client
// asks for its credentials, can both name `Me` without importing each other.
import type { components, paths } from '../api.gen';

export type Schemas = components['schemas'];
export type Ticket = Schemas['Ticket'];
export type Message = Schemas['Message'];
export type Activity = Schemas['Activity'];
export type View = Schemas['View'];
export type TicketStatus = Ticket['status'];
export type TicketCounts = paths['/v1/tickets/counts']['get']['responses'][200]['content']['application/json'];
export type Me = paths['/v1/me']['get']['responses'][200]['content']['application/json'];
export type WorkspaceRef = Me['workspaces'][number];
