// npm run bench:ai:triage:db (tsx bench/triage-training-db.ts): the dedicated engine's
// training job end to end on a database: N generated tickets (bench/data/tickets.ts, 50,000 by
// default) of one new workspace, each with its first customer message, then the job's work
// timed in three parts: reading the examples (store.ts loadExamples: the tickets, their first
// message, their Type label), training, and storing the model. The workspace is deleted after.
// DATABASE_URL: a PostgreSQL database (migrated here if it is not); unset: the embedded database
// in memory.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { trainModel } from '../src/modules/triage/dedicated/model.js';
import { loadExamples, saveModel } from '../src/modules/triage/dedicated/store.js';
import { openDatabase } from '../src/platform/db/index.js';
import { migrateToLatest } from '../src/platform/db/migrate.js';
import { generateTickets } from './data/tickets.js';

const N = Number(process.env.N ?? 50_000);
const url = process.env.DATABASE_URL || null;
const database = await openDatabase({
  databaseUrl: url,
  dataDir: mkdtempSync(join(tmpdir(), 'triage-db-')),
  memory: true,
});
await migrateToLatest(database.db as never);
const db = database.db;
const ws = randomUUID();
await sql`INSERT INTO workspaces (id, name, slug, widget_key) VALUES (${ws}, 'Triage bench', ${`triage-bench-${ws.slice(0, 8)}`}, ${`wk_${ws}`})`.execute(
  db,
);
const tickets = generateTickets(N, 1);
const t0 = performance.now();
const BATCH = 1_000;
for (let i = 0; i < tickets.length; i += BATCH) {
  const part = tickets.slice(i, i + BATCH).map((e, j) => ({ e, id: randomUUID(), number: i + j + 1 }));
  await db
    .insertInto('tickets')
    .values(
      part.map(({ e, id, number }) => ({
        workspace_id: ws,
        id,
        number,
        subject: e.text.subject,
        status: e.labels.spam === 'true' ? 'open' : 'solved',
        priority: e.labels.priority ?? 'normal',
        severity: e.labels.severity || null,
        channel: e.text.channel === 'chat' ? 'chat' : e.text.channel,
        spam: e.labels.spam === 'true',
        last_message_at: new Date(),
        solved_at: new Date(),
      })),
    )
    .execute();
  await db
    .insertInto('messages')
    .values(
      part.map(({ e, id }) => ({
        workspace_id: ws,
        id: randomUUID(),
        ticket_id: id,
        kind: 'reply' as const,
        direction: 'inbound' as const,
        author_type: 'contact' as const,
        body_html: '',
        body_text: e.text.message,
      })),
    )
    .execute();
}
const loaded = performance.now();
console.log(`${N} tickets inserted in ${((loaded - t0) / 1000).toFixed(1)} s (${database.kind})`);
const r0 = performance.now();
const examples = await loadExamples(db, ws);
const r1 = performance.now();
const model = await trainModel(examples);
const r2 = performance.now();
await saveModel(db, ws, N, model);
const r3 = performance.now();
console.log(
  `read ${examples.length} examples ${((r1 - r0) / 1000).toFixed(1)} s, train ${((r2 - r1) / 1000).toFixed(1)} s, store ${((r3 - r2) / 1000).toFixed(2)} s, total ${((r3 - r0) / 1000).toFixed(1)} s`,
);
await sql`DELETE FROM workspaces WHERE id = ${ws}`.execute(db);
await database.close();
