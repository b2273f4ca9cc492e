// Setup shared by the SLA tests (test/modules/sla/) and others whose tickets run SLA clocks: an
// SLA policy made through the API, business hours open a quarter of an hour a week, and due dates
// computed the way the tests compare them.
import type { SlaPolicy } from './api-types.js';
import type { Who } from './builders.js';
import type { Api } from './helpers.js';

const MIN = 60_000;

/** An SLA policy named 'Policy' with `body` on top; fails unless the answer is 201. */
export async function makeSlaPolicy(api: Api, who: Who, body: Record<string, unknown>): Promise<SlaPolicy> {
  const r = await api.post<SlaPolicy>('/v1/sla-policies', { name: 'Policy', ...body }, 'as' in who ? who.as : who);
  if (r.status !== 201) throw new Error(`policy: ${r.status} ${r.text}`);
  return r.body;
}

/**
 * Business hours open a quarter of an hour a week (Wednesdays 12:00-12:15 in Auckland): 10 open
 * minutes are days away, 20 more than a week. The body of PUT /v1/business-hours.
 */
export const QUARTER_HOUR_A_WEEK = {
  enabled: true,
  timezone: 'Pacific/Auckland',
  schedule: { wed: [{ start: '12:00', end: '12:15' }] },
  holidays: [],
};

/** `iso` plus `minutes` of calendar time, as an ISO string. */
export const plus = (iso: string, minutes: number) => new Date(new Date(iso).getTime() + minutes * MIN).toISOString();
