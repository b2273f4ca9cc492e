// Issue 9's benchmark: ticket creation in a workspace with 50 enabled automations and an SLA
// policy counting business hours (two ranges a day, holidays), against creation in a workspace
// with neither (pair workflow.create; target: at most 1.5x the time, a ratio of at least 0.67).
//
// Both workspaces are fresh and made over the service's own API by bench/run.ts; the requests are
// the same POST /v1/tickets bodies (bench/tickets.ts createBody). The automations are what a real
// team keeps: most look for words or a channel the ticket does not have (their conditions are
// evaluated and fail), a few hold and act (priority, severity, a label, a team, a custom field).

type Call = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> & { id?: string }; text: string }>;

const WORDS = [
  'invoice',
  'refund',
  'chargeback',
  'password',
  'outage',
  'crash',
  'export',
  'import',
  'webhook',
  'sso',
  'gdpr',
  'cancel',
  'upgrade',
  'downgrade',
  'coupon',
  'shipping',
  'delivery',
  'warranty',
  'return',
  'legal',
];

/** The 50 automations: `teamId` and the field `region` exist in the workspace. */
export function benchAutomations(teamId: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 45; i++) {
    const word = `${WORDS[i % WORDS.length]}-${i}`;
    out.push({
      name: `Route ${word}`,
      trigger: 'ticket_created',
      enabled: true,
      conditions:
        i % 3 === 0
          ? [{ field: 'subject', op: 'contains', value: word }]
          : i % 3 === 1
            ? [
                { field: 'body', op: 'contains', value: word },
                { field: 'priority', op: 'equals', value: 'urgent' },
              ]
            : [
                { field: 'channel', op: 'equals', value: 'chat' },
                { field: 'from_email', op: 'contains', value: `@${word}.example` },
              ],
      actions: [
        { type: 'add_tag', value: `route-${i}` },
        { type: 'set_priority', value: 'high' },
      ],
    });
  }
  // Five that hold for every bench ticket (channel email) and act.
  out.push({
    name: 'Email is normal at least',
    trigger: 'ticket_created',
    enabled: true,
    conditions: [{ field: 'channel', op: 'equals', value: 'email' }],
    actions: [{ type: 'set_severity', value: 'sev3' }],
  });
  out.push({
    name: 'Email to support team',
    trigger: 'ticket_created',
    enabled: true,
    conditions: [{ field: 'channel', op: 'equals', value: 'email' }],
    actions: [{ type: 'assign_team', value: teamId }],
  });
  out.push({
    name: 'Label email',
    trigger: 'ticket_created',
    enabled: true,
    conditions: [{ field: 'channel', op: 'equals', value: 'email' }],
    actions: [{ type: 'add_tag', value: 'from-email' }],
  });
  out.push({
    name: 'Region',
    trigger: 'ticket_created',
    enabled: true,
    conditions: [{ field: 'status', op: 'equals', value: 'open' }],
    actions: [{ type: 'set_field', field: 'region', value: 'europe' }],
  });
  out.push({
    name: 'High stays high',
    trigger: 'ticket_created',
    enabled: true,
    conditions: [{ field: 'priority', op: 'equals', value: 'high' }],
    actions: [{ type: 'add_tag', value: 'vip-queue' }],
  });
  return out;
}

/** Sets up the workflow workspace through `call` (as its owner): team, field, hours, SLA, automations. */
export async function setupWorkflow(call: Call): Promise<{ automations: number }> {
  const must = (r: { status: number; text: string }, status: number, what: string) => {
    if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
  };
  const team = await call('POST', '/v1/teams', { name: 'Support', private: false, member_ids: [] });
  must(team, 201, 'POST /v1/teams');
  const field = await call('POST', '/v1/custom-fields', {
    entity: 'ticket',
    type: 'select',
    name: 'Region',
    key: 'region',
    options: [
      { id: 'europe', label: 'Europe' },
      { id: 'americas', label: 'Americas' },
    ],
  });
  must(field, 201, 'POST /v1/custom-fields');
  const day = [
    { start: '08:00', end: '12:00' },
    { start: '13:00', end: '18:00' },
  ];
  const hours = await call('PUT', '/v1/business-hours', {
    enabled: true,
    timezone: 'Europe/Berlin',
    schedule: { mon: day, tue: day, wed: day, thu: day, fri: day, sat: [], sun: [] },
    holidays: [
      { date: '2026-12-25', name: 'Christmas' },
      { date: '2027-01-01', name: 'New Year' },
    ],
  });
  must(hours, 200, 'PUT /v1/business-hours');
  const sla = await call('POST', '/v1/sla-policies', {
    name: 'Standard',
    priority: null,
    first_response_minutes: 240,
    resolution_minutes: 2880,
    business_hours: true,
    enabled: true,
  });
  must(sla, 201, 'POST /v1/sla-policies');
  const list = benchAutomations(String(team.body.id));
  // Automations name labels that exist (they never create labels).
  const labels = new Set(
    list.flatMap((a) => (a.actions as Array<{ type: string; value: string }>).filter((x) => x.type === 'add_tag')),
  );
  for (const name of new Set([...labels].map((x) => x.value))) {
    must(await call('POST', '/v1/tags', { name }), 201, `POST /v1/tags (${name})`);
  }
  for (const a of list) must(await call('POST', '/v1/automations', a), 201, `POST /v1/automations (${a.name})`);
  return { automations: list.length };
}
