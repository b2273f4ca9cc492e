// The tickets part of npm run bench: one workspace of the service seeded directly in SQL with
// SEED_SERVICE_TICKETS tickets (default 100,000) and on average 3 messages per ticket, and the
// request sets of the ticket scenarios (list, list with q, GET by number, create, reply).
//
// The seed is set-based (a few INSERT … SELECT over generate_series, values picked by
// hashint4 of the row number, so every run seeds the same content): subjects and bodies come from
// a vocabulary with common words (the topics, "acme") and rare ones ("zeppelin" in about 0.1 %
// of subjects, "kerberos" in about 0.03 % of messages), so `q` can be measured both ways.
// Tickets are created over one year (number order = creation order), 80 % have a contact
// (one of tickets / 10 contacts), 30 % no assignee (else the owner or one of 8 seeded agents),
// recent tickets are mostly open or pending and older ones mostly solved or closed; 1 % spam.
// Each ticket has 1 to 5 messages (1 + number % 5: exactly 3 on average when the count is a
// multiple of 5): the customer first, then the agent's reply, then alternating; the ticket's
// message_count, last_message_at, last_message_preview, first_responded_at and
// last_customer_message_at are those of its messages. The workspace's ticket_number counter
// is set to the highest number, so POST /v1/tickets continues from it. No events are seeded
// (the bench's event checks then see only what the measured requests wrote).
//
// Custom fields (issue 5): BENCH_FIELDS are 20 ticket fields of every type, defined through the
// service's own POST /v1/custom-fields by bench/run.ts before the seed; the seed then writes the
// tickets' `fields` in the same INSERT (only keys with a value, as the service stores them), each
// field with its own fill rate: plan (select, 5 options) on 80 % of tickets, order_value (number)
// on 70 %, the others from 3 to 60 %. The values are ones the service itself would accept (option
// ids, finite numbers, real YYYY-MM-DD dates, lower-case emails, member ids for the user field).
import type pg from 'pg';

/** `((hashint4(expr * 31 + salt) as unsigned) % n)`: a deterministic pseudo-random 0..n-1. */
const h = (expr: string, salt: number, n: number) => `((hashint4((${expr}) * 31 + ${salt})::int8 + 2147483648) % ${n})`;

/** A contact's email from its name parts, in ASCII (Müller → mueller): the API's email format is ASCII. */
const email = (first: string, last: string, i: string, domain: string) =>
  `lower(${first}) || '.' || replace(lower(${last}), 'ü', 'ue') || ${i} || '@' || ${domain}`;

const arr = (items: string[]) => `ARRAY[${items.map((s) => `'${s.replaceAll("'", "''")}'`).join(',')}]::text[]`;
/** 1-based pick from a SQL array literal. */
const pick = (items: string[], expr: string, salt: number) => `(${arr(items)})[1 + ${h(expr, salt, items.length)}]`;

const FIRST = [
  'Anna',
  'Ben',
  'Chloe',
  'David',
  'Emma',
  'Felix',
  'Grace',
  'Hugo',
  'Ines',
  'Jonas',
  'Kira',
  'Liam',
  'Maya',
  'Noah',
  'Olga',
  'Pablo',
  'Quinn',
  'Rosa',
  'Sven',
  'Tara',
  'Umar',
  'Vera',
  'Wen',
  'Yusuf',
];
const LAST = [
  'Garcia',
  'Smith',
  'Müller',
  'Rossi',
  'Dubois',
  'Kowalski',
  'Tanaka',
  'Okafor',
  'Silva',
  'Novak',
  'Jensen',
  'Haddad',
  'Larsen',
  'Moreau',
  'Petrov',
  'Nguyen',
];
const DOMAINS = [
  'gmail.com',
  'outlook.com',
  'yahoo.com',
  'northwind.example',
  'contoso.example',
  'globex.example',
  'initech.example',
  'umbrella.example',
];
const AGENTS = [
  'Alex Agent',
  'Bea Support',
  'Carl Helpdesk',
  'Dana Care',
  'Eli Service',
  'Fay Success',
  'Gus Ops',
  'Hana Tier2',
];

/** Subject topics; the first word of each is also used in the bodies. */
const TOPICS = [
  'Refund for order',
  'Invoice missing from account',
  'Password reset email not arriving',
  'Cannot log in after update',
  'Printer jam on third floor',
  'Shipping delay on my order',
  'Wrong item delivered',
  'Subscription renewal question',
  'Upgrade to annual plan',
  'CSV export fails with error',
  'Slack integration broken',
  'Charged twice this month',
  'Delivery address change',
  'App crashes on start',
  'Calendar sync stopped working',
  'Webhook timeouts since yesterday',
  'Mobile app login loop',
  'Monthly report is empty',
  'API rate limit reached',
  'Two-factor code rejected',
  'Account locked out',
  'Cancel my subscription',
  'Discount code invalid',
  'Tracking number not working',
  'Damaged package received',
  'Data import stuck at 99%',
  'SSO configuration with Okta',
  'VAT missing on invoice',
  'GDPR data export request',
  'Feature request: dark mode',
];
const SUBJECT_PREFIX = ['', '', '', '', 'Re: ', 'Urgent: ', 'Question: ', 'Fwd: ', 'Help: '];
const SUBJECT_SUFFIX = ['', '', '', ' (Acme Cloud)', ' - Acme Mobile', ' on Acme Pro', ' for team account', ' again'];
const GREETING = ['Hello,', 'Hi team,', 'Good morning,', 'Hi there,', 'Dear support,', 'Hey,'];
const CUSTOMER = [
  'I have been trying to sort this out since last week and nothing seems to work.',
  'This started right after the latest update of the app on my laptop.',
  'Our whole team is affected and we cannot finish the quarterly close without it.',
  'I attached a screenshot of the error message that shows up in Chrome.',
  'It works in Firefox but not in Safari on macOS, which is strange.',
  'The order was placed on the website and paid with a credit card.',
  'We are on the business plan with twelve seats, billed yearly.',
  'Could you please check what is going on with my account?',
  'I already cleared the browser cache and tried a private window.',
  'The error code shown is E4021 followed by a request id.',
  'My colleague in the Berlin office sees the same problem on Windows.',
  'The tracking page says the parcel is still waiting at the warehouse.',
  'I would like to get my money back if this cannot be fixed quickly.',
  'Please let me know if you need any more details from our side.',
  'The invoice PDF does not show our company VAT number.',
  'It happens every time I open the dashboard in the morning.',
];
const AGENT = [
  'Thanks for reaching out and sorry for the trouble this caused.',
  'I checked your account and found the cause of the problem.',
  'Our engineering team deployed a fix this morning, could you try again?',
  'I have issued the refund; it should reach your card within five business days.',
  'Could you send us the exact time when this happened so we can check the logs?',
  'I reset the synchronisation for your workspace, it may take an hour to catch up.',
  'The replacement has been shipped and you will receive a tracking link by email.',
  'You can change this under Settings, Billing, then Payment methods.',
  'I forwarded this to our product team as a feature request.',
  'Please update the mobile app to the latest version from the store.',
  'I corrected the invoice and you can download the new PDF from your account.',
  'Let me know if there is anything else I can help you with.',
];
const CLOSING = ['Thanks', 'Best regards', 'Kind regards', 'Cheers', 'Thank you'];

// ---------------------------------------------------------------------------------------------
// Custom fields

/** A field as POST /v1/custom-fields takes it, with the share of tickets that get a value. */
export interface BenchField {
  body: {
    entity: 'ticket';
    type: 'text' | 'long_text' | 'number' | 'select' | 'multi_select' | 'date' | 'checkbox' | 'url' | 'email' | 'user';
    name: string;
    key: string;
    options?: Array<{ id: string; label: string; color?: string }>;
    description?: string;
  };
  /** Percent of tickets with a value. */
  fill: number;
  /** Select fields: the weight of each option (same order), else equal. */
  weights?: number[];
}

/** A field as the service answered its creation (what the seed needs of it). */
export interface SeededField {
  key: string;
  type: BenchField['body']['type'];
  options: Array<{ id: string }>;
}

const opt = (...labels: string[]) => labels.map((label) => ({ id: slug(label), label }));
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/**
 * 20 ticket fields, every type at least once; fill rates as a help desk has them: a plan and an
 * order value on most tickets (set by an integration), the rest filled by agents now and then.
 */
export const BENCH_FIELDS: BenchField[] = [
  {
    body: {
      entity: 'ticket',
      type: 'select',
      name: 'Plan',
      key: 'plan',
      options: opt('Free', 'Starter', 'Pro', 'Business', 'Enterprise'),
    },
    fill: 80,
    weights: [35, 25, 20, 15, 5],
  },
  { body: { entity: 'ticket', type: 'number', name: 'Order value', key: 'order_value' }, fill: 70 },
  {
    body: {
      entity: 'ticket',
      type: 'select',
      name: 'Region',
      key: 'region',
      options: opt('North America', 'South America', 'Europe', 'Middle East', 'Africa', 'Asia Pacific'),
    },
    fill: 60,
    weights: [35, 5, 35, 5, 5, 15],
  },
  {
    body: {
      entity: 'ticket',
      type: 'select',
      name: 'Product area',
      key: 'product_area',
      options: opt('Billing', 'Login', 'Integrations', 'Mobile', 'Reports', 'API', 'Shipping', 'Other'),
    },
    fill: 50,
  },
  {
    body: {
      entity: 'ticket',
      type: 'multi_select',
      name: 'Platforms',
      key: 'platforms',
      options: opt('Web', 'iOS', 'Android', 'Windows', 'macOS'),
    },
    fill: 30,
  },
  { body: { entity: 'ticket', type: 'text', name: 'Order number', key: 'order_number' }, fill: 40 },
  { body: { entity: 'ticket', type: 'number', name: 'Seats', key: 'seats' }, fill: 30 },
  { body: { entity: 'ticket', type: 'checkbox', name: 'First contact resolution', key: 'fcr' }, fill: 30 },
  {
    body: {
      entity: 'ticket',
      type: 'select',
      name: 'SLA tier',
      key: 'sla_tier',
      options: opt('Bronze', 'Silver', 'Gold'),
    },
    fill: 40,
    weights: [60, 30, 10],
  },
  { body: { entity: 'ticket', type: 'text', name: 'Account id', key: 'account_id' }, fill: 25 },
  { body: { entity: 'ticket', type: 'date', name: 'Renewal date', key: 'renewal_date' }, fill: 20 },
  {
    body: {
      entity: 'ticket',
      type: 'select',
      name: 'Browser',
      key: 'browser',
      options: opt('Chrome', 'Safari', 'Firefox', 'Edge', 'Other'),
    },
    fill: 20,
    weights: [55, 20, 12, 10, 3],
  },
  { body: { entity: 'ticket', type: 'email', name: 'Billing email', key: 'billing_email' }, fill: 15 },
  { body: { entity: 'ticket', type: 'number', name: 'CSAT score', key: 'csat_score' }, fill: 12 },
  { body: { entity: 'ticket', type: 'checkbox', name: 'VIP', key: 'vip' }, fill: 10 },
  { body: { entity: 'ticket', type: 'number', name: 'Refund amount', key: 'refund_amount' }, fill: 10 },
  { body: { entity: 'ticket', type: 'user', name: 'Escalation owner', key: 'escalation_owner' }, fill: 10 },
  { body: { entity: 'ticket', type: 'text', name: 'Error code', key: 'error_code' }, fill: 8 },
  { body: { entity: 'ticket', type: 'long_text', name: 'Steps to reproduce', key: 'steps_to_reproduce' }, fill: 5 },
  { body: { entity: 'ticket', type: 'url', name: 'Status page link', key: 'status_page_url' }, fill: 3 },
];

/**
 * The measured field list: `field.<select>=<option>` (plan = pro: 20 % of the 80 % with a plan,
 * about 16 % of the tickets) sorted by `field.<sort>` (a number field, ascending: the API's default
 * for a field sort, tickets without a value first).
 */
export const LIST_FIELDS = { select: 'plan', option: 'pro', sort: 'order_value' } as const;
export const LIST_FIELDS_PATH = `/v1/tickets?field.${LIST_FIELDS.select}=${LIST_FIELDS.option}&sort=field.${LIST_FIELDS.sort}&limit=50`;

/** 1-based pick with weights (percent-like, any total) from a SQL array literal of option ids. */
function weightedPick(ids: string[], weights: number[] | undefined, expr: string, salt: number): string {
  if (!weights) return pick(ids, expr, salt);
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  const whens = ids.map((id, i) => {
    acc += weights[i] ?? 0;
    return `WHEN ${h(expr, salt, total)} < ${acc} THEN '${id}'`;
  });
  return `(CASE ${whens.join(' ')} ELSE '${ids[ids.length - 1]}' END)`;
}

/** The jsonb value of field f (index i) for ticket g, as the service would store it. */
function fieldValueSql(f: SeededField, i: number, weights: number[] | undefined): string {
  const s = 100 + i * 10; // salts of this field: s .. s+9
  const ids = f.options.map((o) => o.id);
  switch (f.type) {
    case 'select':
      return `to_jsonb(${weightedPick(ids, weights, 'g', s + 1)})`;
    case 'multi_select': {
      // One option, or two different ones.
      const a = `${h('g', s + 1, ids.length)}`;
      const b = `((${a} + 1 + ${h('g', s + 2, Math.max(1, ids.length - 1))}) % ${ids.length})`;
      return `CASE WHEN ${h('g', s + 3, 2)} = 0 OR ${ids.length} < 2 THEN jsonb_build_array((${arr(ids)})[1 + ${a}])
                   ELSE jsonb_build_array((${arr(ids)})[1 + ${a}], (${arr(ids)})[1 + ${b}]) END`;
    }
    case 'number':
      if (f.key === 'seats') return `to_jsonb(1 + ${h('g', s + 1, 250)})`;
      if (f.key === 'csat_score') return `to_jsonb(1 + ${h('g', s + 1, 5)})`;
      // Money: 0.00 to 4,999.99 with cents.
      return `to_jsonb(round((${h('g', s + 1, 500000)})::numeric / 100, 2))`;
    case 'text':
      if (f.key === 'order_number') return `to_jsonb('ORD-' || lpad((${h('g', s + 1, 1000000)})::text, 6, '0'))`;
      if (f.key === 'error_code') return `to_jsonb('E' || (1000 + ${h('g', s + 1, 60)})::text)`;
      return `to_jsonb('ACC-' || upper(to_hex(4096 + ${h('g', s + 1, 60000)})))`;
    case 'long_text':
      return `to_jsonb('1. Open the dashboard' || E'\\n' || '2. ' || ${pick(TOPICS, 'g', s + 1)} || E'\\n' || '3. ' || ${pick(CUSTOMER, 'g', s + 2)})`;
    case 'date':
      return `to_jsonb(to_char(date '2026-01-01' + ${h('g', s + 1, 730)}::int, 'YYYY-MM-DD'))`;
    case 'checkbox':
      return `to_jsonb(${h('g', s + 1, 3)} > 0)`;
    case 'url':
      return `to_jsonb('https://status.example.com/incidents/' || (${h('g', s + 1, 5000)})::text)`;
    case 'email':
      return `to_jsonb('billing' || (${h('g', s + 1, 5000)})::text || '@' || ${pick(DOMAINS.slice(3), 'g', s + 2)})`;
    case 'user':
      return `to_jsonb((SELECT array_agg(id ORDER BY i) FROM seed_agent)[1 + ${h('g', s + 1, AGENTS.length + 1)}])`;
  }
}

/** The tickets' `fields` for row g: only keys with a value (jsonb_strip_nulls drops the rest). */
function fieldsSql(fields: SeededField[]): string {
  if (fields.length === 0) return `'{}'::jsonb`;
  const parts = fields.map((f, i) => {
    const spec = BENCH_FIELDS.find((b) => b.body.key === f.key);
    const fill = spec?.fill ?? 20;
    return `'${f.key}', CASE WHEN ${h('g', 100 + i * 10, 100)} < ${fill} THEN ${fieldValueSql(f, i, spec?.weights)} END`;
  });
  return `jsonb_strip_nulls(jsonb_build_object(${parts.join(',\n                 ')}))`;
}

export interface SeedResult {
  tickets: number;
  messages: number;
  contacts: number;
  agents: number;
  ms: number;
  /** Of the seeded workspace: tickets whose subject or messages contain the measured q words. */
  q_counts: Record<string, number>;
  /** Ticket fields with values: tickets with a value per key. */
  field_counts: Record<string, number>;
  /** Tickets the field list scenario filters to (LIST_FIELDS: the select field = its option). */
  list_fields_matches: number | null;
}

/** The q words the list_q scenarios use: a common one and a rare one. */
export const Q_COMMON = 'refund';
export const Q_RARE = 'kerberos';

/**
 * Seeds `workspaceId` (which must exist and have its owner as a member) with `n` tickets, with
 * values for `fields` (ticket fields already defined in the workspace; none: every `fields` is {}).
 * Runs in one transaction on `db`, then VACUUM (ANALYZE).
 */
export async function seedTickets(
  db: pg.Client,
  workspaceId: string,
  n: number,
  fields: SeededField[] = [],
): Promise<SeedResult> {
  if (!/^[0-9a-f-]{36}$/i.test(workspaceId)) throw new Error(`not a workspace id: ${workspaceId}`);
  if (!Number.isInteger(n) || n < 1) throw new Error('ticket count must be a positive whole number');
  const ws = `'${workspaceId}'::uuid`;
  const nContacts = Math.max(1, Math.floor(n / 10));
  const tag = `${process.pid}${Date.now().toString(36)}`;
  const t0 = performance.now();

  // Paragraphs of a message k (1-based) of ticket g: customer text on odd k, the agent's on even k.
  const m = 'g * 8 + k';
  const customerPara = (salt: number) =>
    `${pick(CUSTOMER, m, salt)} || ' ' || ${pick(CUSTOMER, m, salt + 1)}` +
    ` || CASE WHEN ${h(m, salt + 2, 3)} = 0 THEN ' ' || ${pick(CUSTOMER, m, salt + 3)} ELSE '' END`;
  const agentPara = (salt: number) =>
    `${pick(AGENT, m, salt)} || ' ' || ${pick(AGENT, m, salt + 1)}` +
    ` || CASE WHEN ${h(m, salt + 2, 2)} = 0 THEN ' ' || ${pick(AGENT, m, salt + 3)} ELSE '' END`;

  await db.query('BEGIN');
  try {
    await db.query(`
      CREATE TEMP TABLE seed_agent ON COMMIT DROP AS
        SELECT 0 AS i, user_id AS id FROM members WHERE workspace_id = ${ws} AND role = 'owner'
        UNION ALL
        SELECT i, gen_random_uuid() FROM generate_series(1, ${AGENTS.length}) i;
      INSERT INTO users (id, email, name, password_hash)
        SELECT id, 'agent' || i || '.${tag}@bench.example.com', (${arr(AGENTS)})[i], '!' FROM seed_agent WHERE i > 0;
      INSERT INTO members (workspace_id, user_id, role) SELECT ${ws}, id, 'agent' FROM seed_agent WHERE i > 0;

      CREATE TEMP TABLE seed_contact ON COMMIT DROP AS
        SELECT i, gen_random_uuid() AS id,
               ${pick(FIRST, 'i', 1)} AS first, ${pick(LAST, 'i', 2)} AS last, ${pick(DOMAINS, 'i', 3)} AS domain
          FROM generate_series(1, ${nContacts}) i;
      INSERT INTO contacts (workspace_id, id, email, name, created_at, updated_at)
        SELECT ${ws}, id, ${email('first', 'last', 'i', 'domain')}, first || ' ' || last,
               now() - interval '400 days', now() - interval '400 days'
          FROM seed_contact;

      -- One row per ticket: when, what, who.
      CREATE TEMP TABLE seed_t ON COMMIT DROP AS
        SELECT g, x.created_at, 1 + g % 5 AS n_msgs,
               -- Hours from creation to the last message: mostly within a day, some over a week.
               least(interval '1 hour' * (1 + ${h('g', 4, 3)} * ${h('g', 5, 60)}),
                     greatest(interval '0', now() - interval '1 minute' - x.created_at)) AS span,
               (lpad(to_hex((extract(epoch FROM x.created_at) * 1000)::int8), 12, '0') || '7' ||
                 substr(md5(g::text), 1, 3) || to_hex(8 + g % 4) || substr(md5(g::text), 4, 15))::uuid AS id,
               ${pick(SUBJECT_PREFIX, 'g', 6)} || ${pick(TOPICS, 'g', 7)} ||
                 CASE WHEN ${h('g', 8, 1000)} = 0 THEN ' zeppelin' ELSE '' END || ${pick(SUBJECT_SUFFIX, 'g', 9)}
                 AS subject,
               CASE WHEN g > ${n} * 0.96 THEN
                      (ARRAY['open','open','open','open','open','pending','pending','pending','on_hold','solved'])
                        [1 + ${h('g', 10, 10)}]
                    ELSE (ARRAY['solved','solved','solved','solved','solved','solved','solved','solved','solved','solved',
                                'solved','closed','closed','closed','closed','closed','closed','closed','open','pending'])
                        [1 + ${h('g', 10, 20)}] END AS status,
               (ARRAY['low','low','low','low','normal','normal','normal','normal','normal','normal','normal','normal',
                      'normal','normal','normal','high','high','high','high','urgent'])[1 + ${h('g', 11, 20)}] AS priority,
               CASE WHEN ${h('g', 12, 10)} = 0 THEN 'sev' || (1 + ${h('g', 13, 4)}) END AS severity,
               (ARRAY['email','email','email','email','email','email','chat','chat','api','portal'])[1 + ${h('g', 14, 10)}]
                 AS channel,
               CASE WHEN ${h('g', 15, 10)} < 8 THEN 1 + ${h('g', 16, nContacts)} END AS contact_i,
               CASE WHEN ${h('g', 17, 10)} >= 3 THEN ${h('g', 18, AGENTS.length + 1)} END AS agent_i,
               ${h('g', 19, 100)} = 0 AS spam,
               ${fieldsSql(fields)} AS fields
          FROM generate_series(1, ${n}) g,
               LATERAL (SELECT now() - interval '365 days' + (interval '365 days' - interval '2 hours') * (g::float8 / ${n})
                          AS created_at) x;

      -- One row per message.
      CREATE TEMP TABLE seed_m ON COMMIT DROP AS
        SELECT t.g, k, t.id AS ticket_id, gen_random_uuid() AS id,
               t.created_at + CASE WHEN t.n_msgs = 1 THEN interval '0' ELSE t.span * ((k - 1)::float8 / (t.n_msgs - 1)) END
                 AS created_at,
               CASE WHEN k % 2 = 1 AND c.id IS NOT NULL THEN 'inbound' ELSE 'outbound' END AS direction,
               CASE WHEN k % 2 = 1 AND k > 1 AND c.id IS NULL THEN 'note' ELSE 'reply' END AS kind,
               CASE WHEN k % 2 = 1 AND c.id IS NOT NULL THEN 'contact' WHEN k = 1 THEN 'api' ELSE 'user' END AS author_type,
               CASE WHEN k % 2 = 0 OR (k > 1 AND c.id IS NULL) THEN coalesce(a.id, o.id) END AS author_user_id,
               CASE WHEN k % 2 = 1 THEN c.id END AS author_contact_id,
               c.first || ' ' || c.last AS contact_name,
               ${email('c.first', 'c.last', 'c.i', 'c.domain')} AS contact_email,
               t.subject,
               ${pick(GREETING, m, 20)} AS p0,
               CASE WHEN k % 2 = 1
                    THEN 'About ' || lower(${pick(TOPICS, 'g', 7)}) || ': ' || ${customerPara(21)}
                    ELSE ${agentPara(31)} END AS p1,
               CASE WHEN k % 2 = 1 THEN ${customerPara(41)} ELSE ${agentPara(51)} END ||
                 CASE WHEN ${h(m, 60, 3000)} = 0 THEN ' Our Kerberos tickets expire too early as well.' ELSE '' END
                 AS p2,
               ${pick(CLOSING, m, 61)} || ', ' ||
                 CASE WHEN k % 2 = 1 AND c.id IS NOT NULL THEN c.first ELSE coalesce(split_part(an.name, ' ', 1), 'Support') END
                 AS p3
          FROM seed_t t
          CROSS JOIN LATERAL generate_series(1, t.n_msgs) k
          LEFT JOIN seed_contact c ON c.i = t.contact_i
          LEFT JOIN seed_agent a ON a.i = t.agent_i
          LEFT JOIN users an ON an.id = coalesce(a.id, (SELECT id FROM seed_agent WHERE i = 0))
          CROSS JOIN (SELECT id FROM seed_agent WHERE i = 0) o;

      -- Per ticket: its message statistics (the last message's preview as the service makes it).
      CREATE TEMP TABLE seed_stat ON COMMIT DROP AS
        SELECT g, max(created_at) AS last_at,
               regexp_replace((array_agg(p0 || ' ' || p1 || ' ' || p2 || ' ' || p3 ORDER BY k DESC))[1], '\\s+', ' ', 'g')
                 AS line,
               min(created_at) FILTER (WHERE direction = 'outbound' AND kind = 'reply') AS first_out,
               max(created_at) FILTER (WHERE direction = 'inbound') AS last_in
          FROM seed_m GROUP BY g;

      INSERT INTO tickets (workspace_id, id, number, subject, status, priority, severity, channel, contact_id,
                           assignee_id, first_responded_at, solved_at, last_message_at, last_customer_message_at,
                           last_message_preview, message_count, spam, fields, created_at, updated_at)
        SELECT ${ws}, t.id, t.g, t.subject, t.status, t.priority, t.severity, t.channel, c.id, a.id, s.first_out,
               CASE WHEN t.status IN ('solved', 'closed') THEN s.last_at END, s.last_at, s.last_in,
               CASE WHEN length(s.line) <= 200 THEN s.line ELSE rtrim(left(s.line, 199)) || '…' END,
               t.n_msgs, t.spam, t.fields, t.created_at, s.last_at
          FROM seed_t t
          JOIN seed_stat s ON s.g = t.g
          LEFT JOIN seed_contact c ON c.i = t.contact_i
          LEFT JOIN seed_agent a ON a.i = t.agent_i
         ORDER BY t.g;

      INSERT INTO messages (workspace_id, id, ticket_id, kind, direction, author_type, author_user_id,
                            author_contact_id, body_html, body_text, subject, from_email, from_name, "to",
                            delivery_status, created_at)
        SELECT ${ws}, id, ticket_id, kind, direction, author_type, author_user_id, author_contact_id,
               '<p>' || p0 || '</p><p>' || p1 || '</p><p>' || p2 || '</p><p>' || p3 || '</p>',
               p0 || E'\\n\\n' || p1 || E'\\n\\n' || p2 || E'\\n\\n' || p3,
               subject,
               CASE WHEN direction = 'inbound' THEN contact_email ELSE '' END,
               CASE WHEN direction = 'inbound' THEN contact_name ELSE '' END,
               CASE WHEN direction = 'outbound' AND kind = 'reply' AND contact_email IS NOT NULL
                    THEN ARRAY[contact_email] ELSE '{}' END,
               CASE WHEN direction = 'outbound' AND kind = 'reply' AND contact_email IS NOT NULL THEN 'sent' ELSE 'none' END,
               created_at
          FROM seed_m ORDER BY created_at, g, k;

      INSERT INTO workspace_counters (workspace_id, name, value) VALUES (${ws}, 'ticket_number', ${n})
        ON CONFLICT (workspace_id, name) DO UPDATE SET value = excluded.value;
    `);
    await db.query('COMMIT');
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {});
    throw err;
  }
  // VACUUM as well as ANALYZE: a year-old database has been vacuumed many times. Without it the
  // GIN indexes keep up to 4 MB of the seed's entries in their pending lists, which every text
  // search then scans linearly (the contacts' trigram search took 12 ms instead of 0.2 ms), and
  // no page is all-visible for index-only scans.
  for (const table of ['tickets', 'messages', 'contacts', 'users', 'members']) {
    await db.query(`VACUUM (ANALYZE) ${table}`);
  }
  const ms = Math.round(performance.now() - t0);

  const counts = await db.query<{ tickets: number; messages: number; counted: number; contacts: number }>(
    `SELECT (SELECT count(*)::int FROM tickets WHERE workspace_id = $1) AS tickets,
            (SELECT count(*)::int FROM messages WHERE workspace_id = $1) AS messages,
            (SELECT sum(message_count)::int FROM tickets WHERE workspace_id = $1) AS counted,
            (SELECT count(*)::int FROM contacts WHERE workspace_id = $1) AS contacts`,
    [workspaceId],
  );
  const c = counts.rows[0]!;
  if (c.tickets !== n || c.messages !== c.counted) {
    throw new Error(`seed inconsistent: ${c.tickets} tickets of ${n}, ${c.messages} messages, ${c.counted} counted`);
  }
  const q_counts: Record<string, number> = {};
  for (const word of [Q_COMMON, Q_RARE, 'zeppelin', 'acme']) {
    const r = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tickets t
        WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND NOT t.spam
          AND (t.search @@ to_tsquery('simple', $2 || ':*')
               OR t.id IN (SELECT ticket_id FROM messages m WHERE m.workspace_id = $1
                             AND m.search @@ to_tsquery('simple', $2 || ':*')))`,
      [workspaceId, word],
    );
    q_counts[word] = r.rows[0]!.n;
  }
  const field_counts: Record<string, number> = {};
  let list_fields_matches: number | null = null;
  if (fields.length > 0) {
    const r = await db.query<{ key: string; n: number }>(
      `SELECT k AS key, count(*)::int AS n FROM tickets t, jsonb_object_keys(t.fields) k
        WHERE t.workspace_id = $1 GROUP BY k`,
      [workspaceId],
    );
    for (const f of fields) field_counts[f.key] = r.rows.find((x) => x.key === f.key)?.n ?? 0;
    if (fields.some((f) => f.key === LIST_FIELDS.select) && fields.some((f) => f.key === LIST_FIELDS.sort)) {
      const m = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tickets t
          WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND NOT t.spam AND t.fields @> $2::jsonb`,
        [workspaceId, JSON.stringify({ [LIST_FIELDS.select]: LIST_FIELDS.option })],
      );
      list_fields_matches = m.rows[0]!.n;
    }
  }
  return {
    tickets: c.tickets,
    messages: c.messages,
    contacts: c.contacts,
    agents: AGENTS.length,
    ms,
    q_counts,
    field_counts,
    list_fields_matches,
  };
}

// ---------------------------------------------------------------------------------------------
// Request sets

const PARAGRAPHS = [
  '<p>Hello,</p>',
  '<p>Thanks for getting back to me so quickly. I tried the steps you sent, but the <strong>export</strong> still stops at the same point and the page shows a spinner for several minutes before it gives up.</p>',
  '<p>Here is what I did, in order:</p><ul><li>signed out and back in</li><li>cleared the cache in Chrome</li><li>started the export again from <a href="https://app.example.com/reports">the reports page</a></li></ul>',
  '<p>Our finance team needs the file by Friday for the monthly close, so any workaround would help. If it is easier, you can also call me at the office between 9 and 5.</p>',
  '<p>I also noticed that the invoice for last month lists twelve seats while we only have ten active users. Could you check that while you are at it?</p>',
  '<p>Best regards,<br>Anna Garcia<br>Northwind Traders</p>',
];

/** A few paragraphs of realistic HTML (about 900 characters), varied by i. */
export function bodyHtml(i: number): string {
  const middle = PARAGRAPHS.slice(1, 5);
  const a = middle[i % middle.length]!;
  const b = middle[(i + 1) % middle.length]!;
  const c = middle[(i + 2) % middle.length]!;
  return `${PARAGRAPHS[0]}${a}${b}${c}<p>Reference ${1000 + (i % 9000)}.</p>${PARAGRAPHS[5]}`;
}

/** POST /v1/tickets bodies: subjects from the topics, contact by email (3 of 4 a seeded contact, 1 of 4 new). */
export function createBody(i: number, emails: string[], runTag: string): Record<string, unknown> {
  const topic = TOPICS[i % TOPICS.length]!;
  const existing = emails.length > 0 && i % 4 !== 0;
  return {
    subject: `${SUBJECT_PREFIX[i % SUBJECT_PREFIX.length]}${topic}${SUBJECT_SUFFIX[i % SUBJECT_SUFFIX.length]}`,
    contact: existing
      ? { email: emails[i % emails.length]! }
      : { email: `new.customer.${runTag}.${i}@example.com`, name: `New Customer ${i}` },
    channel: 'email',
    priority: i % 10 === 0 ? 'high' : 'normal',
    body_html: bodyHtml(i),
  };
}
