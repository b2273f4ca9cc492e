// A typed client of the help desk API: types generated from GET /v1/openapi.json by
// openapi-typescript (api.d.ts), calls made with openapi-fetch. Creates a ticket, lists the open
// tickets and reads the new one back. `npm run typecheck:client` type-checks it in CI; README.md
// says how to run it against a service.
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

type Ticket = components['schemas']['Ticket'];

const baseUrl = process.env.HELPDESK_URL ?? 'http://localhost:3000';
const apiKey = process.env.HELPDESK_API_KEY;
if (!apiKey) {
  console.error('Set HELPDESK_API_KEY to an API key with the tickets:write scope (svc_live_…).');
  process.exit(2);
}

const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } });

/** The body of a failed call is the service's error: `{status, code, detail, errors?}`. */
function fail(what: string, error: { code: string; detail: string }): never {
  throw new Error(`${what}: ${error.code}: ${error.detail}`);
}

// 1. Create a ticket (POST /v1/tickets): the body is checked against the document's schema.
const created = await api.POST('/v1/tickets', {
  body: { subject: 'The printer is on fire', body_html: '<p>Smoke since this morning.</p>', priority: 'high' },
});
if (created.error) fail('create', created.error);
const ticket: Ticket = created.data;
console.log(`created #${ticket.number} ${ticket.id} (${ticket.status}, ${ticket.priority})`);

// 2. List open tickets (GET /v1/tickets): query parameters are typed, the page is `{data, next_cursor}`.
const list = await api.GET('/v1/tickets', { params: { query: { status: 'open', limit: 5 } } });
if (list.error) fail('list', list.error);
for (const t of list.data.data) console.log(`  #${t.number} ${t.subject} [${t.status}]`);
if (list.data.next_cursor) console.log('  … more on the next page');

// 3. Read it back (GET /v1/tickets/{id}): the path parameter is required by the types.
const one = await api.GET('/v1/tickets/{id}', { params: { path: { id: ticket.id } } });
if (one.error) fail('get', one.error);
console.log(`read #${one.data.number}: "${one.data.subject}", ${one.data.tags.length} label(s)`);
