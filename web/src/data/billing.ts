// Billing, hosted offering (interface.md "Billing objects", "Billing (hosted offering only)";
// docs/billing.md; docs/app.md "Billing"): the plan, seats, AI balance and auto-recharge (GET
// /v1/billing, any member), the AI usage report (GET /v1/billing/usage, owners and admins), the
// checkouts that leave the app for the payment provider (subscription, top-up, saving a card, the
// customer portal: each answers a url the browser goes to) and the auto-recharge settings (PATCH).
// A payment shows only once the provider confirms it (its webhook): never on the return itself.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { api, ok } from '../lib/api';
import type { Body } from './change';
import { keys } from './keys';

export type Billing = paths['/v1/billing']['get']['responses'][200]['content']['application/json'];
export type UsageReport = paths['/v1/billing/usage']['get']['responses'][200]['content']['application/json'];
export type AutoRecharge = NonNullable<Billing['auto_recharge']>;
export type AutoRechargePatch = Body<'/v1/billing/auto-recharge', 'patch'>;

/** GET /v1/billing; `poll` (ms) while a return from checkout waits for the provider's confirmation. */
export const useBilling = (
  ws: string,
  poll: number | false | ((q: { state: { data?: Billing } }) => number | false) = false,
) =>
  useQuery({
    queryKey: keys.billing(ws),
    queryFn: () => ok(api.GET('/v1/billing')),
    enabled: ws !== '',
    staleTime: 10_000,
    refetchInterval: poll,
  });

/** GET /v1/billing/usage for this UTC month (owners and admins). */
export const useBillingUsage = (ws: string, enabled = true) =>
  useQuery({
    queryKey: keys.billingUsage(ws),
    queryFn: () => ok(api.GET('/v1/billing/usage', { params: { query: {} } })),
    enabled: enabled && ws !== '',
    staleTime: 30_000,
  });

export type Checkout =
  | { kind: 'plan'; interval: 'month' | 'year' }
  | { kind: 'top-up'; top_ups: number }
  | { kind: 'card' }
  | { kind: 'portal' };

/** One of the provider's pages: its url (the caller sends the browser there). */
export function checkoutUrl(c: Checkout): Promise<{ url: string }> {
  switch (c.kind) {
    case 'plan':
      return ok(api.POST('/v1/billing/checkout', { body: { interval: c.interval } }));
    case 'top-up':
      return ok(api.POST('/v1/billing/top-up/checkout', { body: { top_ups: c.top_ups } }));
    case 'card':
      return ok(api.POST('/v1/billing/payment-method'));
    case 'portal':
      return ok(api.POST('/v1/billing/portal'));
  }
}

/** PATCH /v1/billing/auto-recharge: the answer (the whole billing state) goes into the cache. */
export function useSaveAutoRecharge(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: AutoRechargePatch) => ok(api.PATCH('/v1/billing/auto-recharge', { body })),
    onSuccess: (next) => qc.setQueryData(keys.billing(ws), next),
  });
}

const usdFormat = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const smallUsd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 4 });

/** Dollars as people read them: $12.50; under a cent with its digits ($0.0042). */
export const usd = (n: number): string => (n !== 0 && Math.abs(n) < 0.01 ? smallUsd : usdFormat).format(n);

/** A price in the currency's smallest unit: $15.00. */
export function money(amount: number | null, currency: string | null): string {
  if (amount === null) return '';
  return new Intl.NumberFormat('en-US', { style: 'currency', currency: (currency ?? 'usd').toUpperCase() }).format(
    amount / 100,
  );
}
