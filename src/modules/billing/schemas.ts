// TypeBox schemas of the billing routes (interface.md "Billing objects", "Billing (hosted offering only)").
import { Type } from '@sinclair/typebox';
import { Body, Nullable, Timestamp, UserRef } from '../../platform/http/schemas.js';

const Usd = Type.Number({ description: 'US dollars' });

export const Price = Type.Object(
  {
    id: Type.String(),
    unit_amount: Nullable(Type.Integer({ description: "In the currency's smallest unit (cents)" })),
    currency: Nullable(Type.String()),
    interval: Nullable(Type.Union([Type.Literal('month'), Type.Literal('year')])),
    usd: Type.Optional(Type.Number({ description: 'ai_top_up only: the AI usage one top-up adds (10)' })),
  },
  { title: 'Price' },
);

export const AutoRecharge = Type.Object(
  {
    enabled: Type.Boolean(),
    threshold_usd: Usd,
    top_ups: Type.Integer({ minimum: 1, maximum: 20 }),
    monthly_limit: Type.Integer({ minimum: 1, maximum: 30 }),
    recharges_this_month: Type.Integer({ minimum: 0 }),
    low_at_usd: Usd,
    last_recharge: Nullable(
      Type.Object({
        at: Timestamp,
        top_ups: Type.Integer(),
        usd: Usd,
        amount: Type.Integer(),
        currency: Type.String(),
      }),
    ),
    failure: Nullable(
      Type.Object({
        code: Type.Union([
          Type.Literal('card_declined'),
          Type.Literal('authentication_required'),
          Type.Literal('no_payment_method'),
          Type.Literal('payment_failed'),
          Type.Literal('unavailable'),
        ]),
        at: Timestamp,
      }),
    ),
  },
  { title: 'AutoRecharge' },
);

const Status = Type.Union(
  ['none', 'trialing', 'active', 'past_due', 'unpaid', 'canceled', 'incomplete', 'incomplete_expired', 'paused'].map(
    (s) => Type.Literal(s),
  ),
);

export const Billing = Type.Object(
  {
    plan: Type.Union([Type.Literal('free'), Type.Literal('pro'), Type.Literal('self_hosted')]),
    billing_enabled: Type.Boolean(),
    status: Status,
    interval: Nullable(Type.Union([Type.Literal('month'), Type.Literal('year')])),
    seats: Type.Integer({ minimum: 0, description: 'Billed seats at the payment provider' }),
    billed_seats: Type.Integer({ minimum: 0, description: 'Current owners, admins and agents' }),
    current_period_end: Nullable(Timestamp),
    cancel_at_period_end: Type.Boolean(),
    limits: Type.Object({
      max_mailboxes: Type.Integer({ minimum: 0, description: '0 = unlimited' }),
      max_members: Type.Integer({ minimum: 0, description: '0 = unlimited' }),
    }),
    usage: Type.Object({ mailboxes: Type.Integer({ minimum: 0 }), members: Type.Integer({ minimum: 0 }) }),
    ai: Type.Object({
      unlimited: Type.Boolean(),
      monthly_usd: Usd,
      used_usd: Usd,
      purchased_usd: Usd,
      remaining_usd: Nullable(Type.Number({ description: 'null when unlimited (self-hosted)' })),
      period_end: Timestamp,
    }),
    prices: Type.Object({ pro_month: Nullable(Price), pro_year: Nullable(Price), ai_top_up: Nullable(Price) }),
    auto_recharge: Nullable(AutoRecharge),
  },
  { title: 'Billing' },
);

export const Url = Type.Object({ url: Type.String() }, { title: 'BillingUrl' });

/** POST /v1/billing/webhook's answer to a verified event (provider.ts WebhookOutcome). */
export const WebhookReceipt = Type.Object(
  {
    received: Type.Literal(true),
    id: Type.String({ description: "The provider's event id" }),
    type: Type.String({ description: "The event's type" }),
    result: Type.Union([Type.Literal('processed'), Type.Literal('ignored'), Type.Literal('duplicate')], {
      description:
        'processed: acted on now; ignored: a type not acted on, or naming no workspace here (nothing changed); duplicate: received before (nothing changed)',
    }),
  },
  { title: 'BillingWebhookReceipt' },
);

export const CheckoutBody = Body({ interval: Type.Union([Type.Literal('month'), Type.Literal('year')]) });
export const TopUpBody = Body({ top_ups: Type.Integer({ minimum: 1, maximum: 20 }) });
export const AutoRechargeBody = Body({
  enabled: Type.Optional(Type.Boolean()),
  threshold_usd: Type.Optional(Type.Number({ minimum: 0.01, maximum: 1000, description: 'Rounded to cents' })),
  top_ups: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
  monthly_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 })),
});

const BOUND_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?([Zz]|[+-][0-9]{2}:[0-9]{2}))?$';

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        pattern: BOUND_PATTERN,
        description: 'Start (inclusive): YYYY-MM-DD (UTC midnight) or RFC 3339. Default: the start of this UTC month.',
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 40,
        pattern: BOUND_PATTERN,
        description:
          'End: RFC 3339 (exclusive) or YYYY-MM-DD (that day included). Default: the start of next UTC month. ' +
          'At most one year after `from`.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Money = { usd: Usd, calls: Type.Integer({ minimum: 0 }) };
export const UsageReport = Type.Object(
  {
    from: Timestamp,
    to: Type.String({ format: 'date-time', description: 'Exclusive' }),
    total_usd: Usd,
    total_calls: Type.Integer({ minimum: 0 }),
    by_feature: Type.Array(Type.Object({ feature: Type.String(), ...Money })),
    by_day: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date' }),
        ...Money,
        by_feature: Type.Record(Type.String(), Usd),
      }),
    ),
    by_member: Type.Array(Type.Object({ user: Nullable(UserRef), ...Money })),
    by_model: Type.Array(
      Type.Object({
        model: Type.String(),
        source: Type.Union([Type.Literal('instance'), Type.Literal('own_key')]),
        ...Money,
        input_tokens: Type.Integer({ minimum: 0 }),
        output_tokens: Type.Integer({ minimum: 0 }),
      }),
    ),
    own_key_calls: Type.Integer({ minimum: 0 }),
  },
  { title: 'UsageReport' },
);
