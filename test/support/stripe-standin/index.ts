// A stand-in for Stripe's REST API: a real HTTP server on 127.0.0.1 (a free port) that answers the
// official `stripe` SDK the way Stripe does (form-encoded bodies with nested `a[b][0]` keys,
// `Authorization: Bearer sk_...`, `Idempotency-Key` replays, Stripe's JSON objects, ids and error
// shape), so src/modules/billing/stripe/ runs unchanged against it (STRIPE_API_BASE = its url).
// Used by the billing tests and the app's billing browser tests.
//
//   const stripe = await startStripeStandIn({ webhookUrl: `${svc.url}/v1/billing/webhook` });
//   stripe.addPrice({ id: 'price_pro_month', unit_amount: 1500, currency: 'usd', interval: 'month' });
//   // STRIPE_SECRET_KEY=stripe.secretKey STRIPE_WEBHOOK_SECRET=stripe.webhookSecret STRIPE_API_BASE=stripe.url
//   stripe.paymentOutcomes.push('card_declined');   // the next off-session PaymentIntent's outcome
//   const events = stripe.completeCheckout(sessionId); // what the browser would do: the events Stripe sends
//   await stripe.send(events[0]);                    // signed, to webhookUrl; any order, any number of times
//   await stripe.send(event, { secret: 'whsec_wrong' }); // or a bad signature, an old timestamp, none
//   stripe.requests;                                // every request: method, path, form, headers
//   stripe.unreachable = true;                      // every request's connection is dropped
//   stripe.reset(); await stripe.stop();
//
// Checkout sessions answer `url` = `<stand-in>/checkout/<id>`: a page with Pay and Cancel buttons
// (what a browser test clicks); Pay completes the session (sending its events to webhookUrl when
// set; with webhookUrl null they wait in `events` for the test to send) and both redirect to the
// session's success_url / cancel_url. A customer portal session's url is a page with a Return
// link to its return_url.
import { createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Obj = Record<string, any>;

export interface StripeRequest {
  method: string;
  /** Without the query, e.g. `/v1/checkout/sessions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The form body (or the query of a GET), nested as Stripe reads it: `a[b][0]=x` → {a: {b: ['x']}}. */
  form: Obj;
  idempotencyKey: string | null;
}

/** An off-session PaymentIntent's scripted outcome (default succeeded). */
export type PaymentOutcome = 'succeeded' | 'card_declined' | 'authentication_required' | 'processing_error';

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  type: string;
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  data: { object: Obj; previous_attributes?: Obj };
}

export interface SendOptions {
  /** Sign with this secret (default the stand-in's webhookSecret). */
  secret?: string;
  /** The signature's timestamp, in seconds (default now). */
  timestamp?: number;
  /** The whole Stripe-Signature header instead (null: no header at all). */
  signature?: string | null;
  /** Another target than webhookUrl. */
  to?: string;
}

export interface StripeStandIn {
  url: string;
  secretKey: string;
  webhookSecret: string;
  /** Where `send` and the checkout page's Pay deliver events (null: nowhere until set). */
  webhookUrl: string | null;
  readonly requests: StripeRequest[];
  /** Every event Stripe would have sent, in order of creation. */
  readonly events: StripeEvent[];
  readonly customers: Map<string, Obj>;
  readonly prices: Map<string, Obj>;
  readonly sessions: Map<string, Obj>;
  readonly subscriptions: Map<string, Obj>;
  readonly paymentIntents: Map<string, Obj>;
  readonly paymentMethods: Map<string, Obj>;
  /** Outcomes of the next off-session PaymentIntents (confirm), taken in order. */
  paymentOutcomes: PaymentOutcome[];
  /** True: every request's connection is destroyed without an answer (Stripe cannot be reached). */
  unreachable: boolean;
  addPrice(p: { id?: string; unit_amount: number; currency?: string; interval?: 'month' | 'year' | null }): Obj;
  /** The browser's part: pays (or saves the card of) an open session; returns the events Stripe sends. */
  completeCheckout(sessionId: string, opts?: { paymentMethod?: string }): StripeEvent[];
  /** Changes a subscription as the customer portal would, with its `customer.subscription.updated` (or deleted). */
  updateSubscription(id: string, changes: Obj, opts?: { deleted?: boolean }): StripeEvent;
  /** A saved card attached to a customer (what a setup-mode checkout leaves). */
  attachCard(customerId: string): Obj;
  /** A signed POST of the event to webhookUrl (or `to`); answers the service's status and body. */
  send(event: StripeEvent, opts?: SendOptions): Promise<{ status: number; body: string }>;
  /** The Stripe-Signature header for a payload. */
  sign(payload: string, opts?: { secret?: string; timestamp?: number }): string;
  /** Requests to a path (and method, default POST). */
  calls(path: string, method?: string): StripeRequest[];
  reset(): void;
  stop(): Promise<void>;
}

export const STANDIN_API_VERSION = '2026-10-28.endive';

const rid = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
const now = () => Math.floor(Date.now() / 1000);

/** Parses Stripe's form encoding (`a[b][0][c]=x`) into nested objects; numeric keys make arrays. */
export function parseForm(text: string): Obj {
  const root: Obj = {};
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const keys = rawKey.replace(/\]/g, '').split('[');
    let node: any = root;
    keys.forEach((k, i) => {
      const last = i === keys.length - 1;
      const nextIsIndex = !last && /^\d+$/.test(keys[i + 1] as string);
      const key = Array.isArray(node) ? Number(k) : k;
      if (last) node[key] = value;
      else {
        node[key] ??= nextIsIndex ? [] : {};
        node = node[key];
      }
    });
  }
  return root;
}

const stripeError = (status: number, error: Obj) => ({ status, body: { error } });
const missing = (kind: string, id: string, param = 'id') =>
  stripeError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param,
    message: `No such ${kind}: '${id}'`,
  });
const invalid = (message: string, param?: string) =>
  stripeError(400, { type: 'invalid_request_error', code: 'parameter_missing', message, ...(param ? { param } : {}) });

export async function startStripeStandIn(
  opts: { secretKey?: string; webhookSecret?: string; webhookUrl?: string | null } = {},
): Promise<StripeStandIn> {
  const secretKey = opts.secretKey ?? `sk_test_${randomBytes(12).toString('hex')}`;
  const webhookSecret = opts.webhookSecret ?? `whsec_${randomBytes(16).toString('hex')}`;
  const requests: StripeRequest[] = [];
  const events: StripeEvent[] = [];
  const customers = new Map<string, Obj>();
  const prices = new Map<string, Obj>();
  const sessions = new Map<string, Obj>();
  const subscriptions = new Map<string, Obj>();
  const paymentIntents = new Map<string, Obj>();
  const paymentMethods = new Map<string, Obj>();
  const setupIntents = new Map<string, Obj>();
  /** Customer portal sessions by the last part of their url (the page a browser opens). */
  const portals = new Map<string, Obj>();
  const replays = new Map<string, { status: number; body: unknown }>();
  const sockets = new Set<Socket>();

  const event = (type: string, object: Obj, previous?: Obj): StripeEvent => {
    const e: StripeEvent = {
      id: rid('evt'),
      object: 'event',
      api_version: STANDIN_API_VERSION,
      created: now(),
      type,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object: structuredClone(object), ...(previous ? { previous_attributes: previous } : {}) },
    };
    events.push(e);
    return e;
  };

  const attachCard = (customerId: string): Obj => {
    const pm = {
      id: rid('pm'),
      object: 'payment_method',
      type: 'card',
      customer: customerId,
      card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 3 },
      created: now(),
      livemode: false,
    };
    paymentMethods.set(pm.id, pm);
    const c = customers.get(customerId);
    if (c) c.invoice_settings.default_payment_method ??= pm.id;
    return pm;
  };

  const newPaymentIntent = (f: Obj): Obj => ({
    id: rid('pi'),
    object: 'payment_intent',
    amount: Number(f.amount),
    amount_received: 0,
    currency: String(f.currency ?? 'usd').toLowerCase(),
    customer: f.customer ?? null,
    payment_method: f.payment_method ?? null,
    description: f.description ?? null,
    metadata: f.metadata ?? {},
    status: 'requires_payment_method',
    last_payment_error: null,
    latest_charge: null,
    created: now(),
    livemode: false,
  });

  const succeed = (pi: Obj) => {
    pi.status = 'succeeded';
    pi.amount_received = pi.amount;
    pi.latest_charge = rid('ch');
    return event('payment_intent.succeeded', pi);
  };

  function createSubscription(session: Obj): Obj {
    const start = now();
    const items = (session.line_items as Obj[]).map((li) => {
      const price = prices.get(li.price) as Obj;
      const days = price.recurring?.interval === 'year' ? 365 : 30;
      return {
        id: rid('si'),
        object: 'subscription_item',
        price,
        quantity: Number(li.quantity ?? 1),
        current_period_start: start,
        current_period_end: start + days * 86400,
      };
    });
    const sub = {
      id: rid('sub'),
      object: 'subscription',
      customer: session.customer,
      status: 'active',
      cancel_at_period_end: false,
      cancel_at: null,
      canceled_at: null,
      metadata: { ...(session.subscription_data?.metadata ?? session.metadata ?? {}) },
      items: { object: 'list', data: items, has_more: false, url: '/v1/subscription_items' },
      latest_invoice: rid('in'),
      created: start,
      livemode: false,
    };
    subscriptions.set(sub.id, sub);
    return sub;
  }

  const standIn: StripeStandIn = {
    url: '',
    secretKey,
    webhookSecret,
    webhookUrl: opts.webhookUrl ?? null,
    requests,
    events,
    customers,
    prices,
    sessions,
    subscriptions,
    paymentIntents,
    paymentMethods,
    paymentOutcomes: [],
    unreachable: false,

    addPrice(p) {
      const price = {
        id: p.id ?? rid('price'),
        object: 'price',
        active: true,
        currency: p.currency ?? 'usd',
        unit_amount: p.unit_amount,
        unit_amount_decimal: String(p.unit_amount),
        type: p.interval ? 'recurring' : 'one_time',
        recurring: p.interval ? { interval: p.interval, interval_count: 1, usage_type: 'licensed' } : null,
        product: rid('prod'),
        metadata: {},
        livemode: false,
        created: now(),
      };
      prices.set(price.id, price);
      return price;
    },

    completeCheckout(sessionId, o = {}) {
      const s = sessions.get(sessionId);
      if (!s) throw new Error(`no checkout session ${sessionId}`);
      if (s.status !== 'open') throw new Error(`checkout session ${sessionId} is ${s.status}`);
      const out: StripeEvent[] = [];
      const customer = s.customer ?? customersCreate({ metadata: s.metadata }).id;
      s.customer = customer;
      const pm = o.paymentMethod ? paymentMethods.get(o.paymentMethod) : attachCard(customer);
      s.status = 'complete';
      if (s.mode === 'subscription') {
        const sub = createSubscription(s);
        s.subscription = sub.id;
        s.payment_status = 'paid';
        out.push(event('customer.subscription.created', sub));
        out.push(event('checkout.session.completed', s));
      } else if (s.mode === 'payment') {
        const pi = newPaymentIntent({
          amount: s.amount_total,
          currency: s.currency,
          customer,
          payment_method: pm?.id,
          metadata: s.payment_intent_data?.metadata ?? {},
        });
        paymentIntents.set(pi.id, pi);
        s.payment_intent = pi.id;
        s.payment_status = 'paid';
        out.push(succeed(pi));
        out.push(event('checkout.session.completed', s));
      } else {
        const si = {
          id: rid('seti'),
          object: 'setup_intent',
          customer,
          payment_method: pm?.id ?? null,
          status: 'succeeded',
          usage: 'off_session',
          metadata: s.metadata ?? {},
          created: now(),
          livemode: false,
        };
        setupIntents.set(si.id, si);
        s.setup_intent = si.id;
        s.payment_status = 'no_payment_required';
        out.push(event('setup_intent.succeeded', si));
        out.push(event('checkout.session.completed', s));
      }
      return out;
    },

    updateSubscription(id, changes, o = {}) {
      const sub = subscriptions.get(id);
      if (!sub) throw new Error(`no subscription ${id}`);
      const previous: Obj = {};
      for (const k of Object.keys(changes)) previous[k] = sub[k];
      Object.assign(sub, changes);
      if (o.deleted) {
        sub.status = 'canceled';
        sub.canceled_at = now();
        return event('customer.subscription.deleted', sub);
      }
      return event('customer.subscription.updated', sub, previous);
    },

    attachCard,

    sign(payload, o = {}) {
      const t = o.timestamp ?? now();
      const v1 = createHmac('sha256', o.secret ?? webhookSecret)
        .update(`${t}.${payload}`, 'utf8')
        .digest('hex');
      return `t=${t},v1=${v1}`;
    },

    async send(e, o = {}) {
      const to = o.to ?? standIn.webhookUrl;
      if (!to) throw new Error('stripe stand-in: no webhookUrl to send to');
      const payload = JSON.stringify(e, null, 2);
      const headers: Record<string, string> = {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      };
      const signature =
        o.signature === undefined ? standIn.sign(payload, { secret: o.secret, timestamp: o.timestamp }) : o.signature;
      if (signature !== null) headers['stripe-signature'] = signature;
      const r = await fetch(to, { method: 'POST', headers, body: payload });
      return { status: r.status, body: await r.text() };
    },

    calls(path, method = 'POST') {
      return requests.filter((r) => r.path === path && r.method === method);
    },

    reset() {
      for (const m of [requests, events, standIn.paymentOutcomes]) m.length = 0;
      for (const m of [
        customers,
        sessions,
        subscriptions,
        paymentIntents,
        paymentMethods,
        setupIntents,
        portals,
        replays,
      ]) {
        m.clear();
      }
      standIn.unreachable = false;
    },

    async stop() {
      runningStripeStandIns.delete(standIn);
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close').catch(() => {});
    },
  };

  function customersCreate(f: Obj): Obj {
    const c = {
      id: rid('cus'),
      object: 'customer',
      email: f.email ?? null,
      name: f.name ?? null,
      metadata: f.metadata ?? {},
      invoice_settings: { default_payment_method: null as string | null },
      created: now(),
      livemode: false,
    };
    customers.set(c.id, c);
    return c;
  }

  /** One API call: the answer's status and body. */
  function api(method: string, path: string, f: Obj): { status: number; body: unknown } {
    const parts = path.split('/').filter(Boolean); // ['v1', ...]
    const route = `${method} /${parts.slice(0, 3).join('/')}`;
    const id = parts[parts.length - 1] as string;
    // Customers
    if (method === 'POST' && path === '/v1/customers') return { status: 200, body: customersCreate(f) };
    if (method === 'GET' && parts[1] === 'customers' && parts.length === 3) {
      const c = customers.get(id);
      return c ? { status: 200, body: c } : missing('customer', id);
    }
    // Prices
    if (method === 'GET' && parts[1] === 'prices' && parts.length === 3) {
      const p = prices.get(id);
      return p ? { status: 200, body: p } : missing('price', id);
    }
    // Checkout sessions
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      if (!['subscription', 'payment', 'setup'].includes(f.mode))
        return invalid('Missing required param: mode.', 'mode');
      if (!f.success_url) return invalid('Missing required param: success_url.', 'success_url');
      if (f.customer && !customers.has(f.customer)) return missing('customer', f.customer, 'customer');
      const lineItems: Obj[] = f.line_items ?? [];
      if (f.mode !== 'setup' && lineItems.length === 0)
        return invalid('Missing required param: line_items.', 'line_items');
      let amount = 0;
      let currency = f.currency ?? null;
      for (const [i, li] of lineItems.entries()) {
        const p = prices.get(li.price);
        if (!p) return missing('price', li.price, `line_items[${i}][price]`);
        if (f.mode === 'subscription' && !p.recurring) {
          return invalid('You must provide at least one recurring price in `subscription` mode.', 'line_items');
        }
        if (f.mode === 'payment' && p.recurring) {
          return invalid('You specified `payment` mode but passed a recurring price.', 'line_items');
        }
        amount += p.unit_amount * Number(li.quantity ?? 1);
        currency = p.currency;
      }
      if (f.mode === 'setup' && !currency) return invalid('Missing required param: currency.', 'currency');
      const s: Obj = {
        id: rid('cs_test'),
        object: 'checkout.session',
        mode: f.mode,
        status: 'open',
        payment_status: 'unpaid',
        customer: f.customer ?? null,
        client_reference_id: f.client_reference_id ?? null,
        metadata: f.metadata ?? {},
        success_url: f.success_url,
        cancel_url: f.cancel_url ?? null,
        amount_total: f.mode === 'setup' ? null : amount,
        currency,
        payment_intent: null,
        setup_intent: null,
        subscription: null,
        line_items: lineItems,
        subscription_data: f.subscription_data ?? null,
        payment_intent_data: f.payment_intent_data ?? null,
        expires_at: now() + 86400,
        created: now(),
        livemode: false,
      };
      s.url = `${standIn.url}/checkout/${s.id}`;
      sessions.set(s.id, s);
      const { line_items: _li, subscription_data: _sd, payment_intent_data: _pd, ...wire } = s;
      return { status: 200, body: wire };
    }
    if (method === 'GET' && parts[1] === 'checkout' && parts[2] === 'sessions' && parts.length === 4) {
      const s = sessions.get(id);
      if (!s) return missing('checkout.session', id);
      const { line_items: _li, subscription_data: _sd, payment_intent_data: _pd, ...wire } = s;
      return { status: 200, body: wire };
    }
    // Billing portal
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (!f.customer) return invalid('Missing required param: customer.', 'customer');
      if (!customers.has(f.customer)) return missing('customer', f.customer, 'customer');
      const slug = rid('sess');
      const ps = {
        id: rid('bps'),
        object: 'billing_portal.session',
        customer: f.customer,
        return_url: f.return_url ?? null,
        url: `${standIn.url}/portal/${slug}`,
        created: now(),
        livemode: false,
      };
      portals.set(slug, ps);
      return { status: 200, body: ps };
    }
    // Subscriptions
    if (parts[1] === 'subscriptions' && parts.length === 3) {
      const sub = subscriptions.get(id);
      if (!sub) return missing('subscription', id);
      if (method === 'POST') {
        const previous: Obj = {};
        for (const [i, it] of ((f.items ?? []) as Obj[]).entries()) {
          const item = sub.items.data.find((x: Obj) => x.id === it.id);
          if (!item) return missing('subscription_item', String(it.id), `items[${i}][id]`);
          if (it.quantity !== undefined) {
            previous.items ??= structuredClone(sub.items);
            item.quantity = Number(it.quantity);
          }
        }
        if (f.cancel_at_period_end !== undefined) {
          previous.cancel_at_period_end = sub.cancel_at_period_end;
          sub.cancel_at_period_end = f.cancel_at_period_end === 'true';
        }
        if (f.metadata) sub.metadata = { ...sub.metadata, ...f.metadata };
        event('customer.subscription.updated', sub, previous);
      }
      return { status: 200, body: sub };
    }
    // Payment methods of a customer
    if (method === 'GET' && parts[1] === 'payment_methods' && parts.length === 3) {
      const pm = paymentMethods.get(id);
      return pm ? { status: 200, body: pm } : missing('payment_method', id);
    }
    // Payment intents
    if (method === 'POST' && path === '/v1/payment_intents') {
      if (!f.amount) return invalid('Missing required param: amount.', 'amount');
      if (!f.currency) return invalid('Missing required param: currency.', 'currency');
      if (f.customer && !customers.has(f.customer)) return missing('customer', f.customer, 'customer');
      if (f.payment_method && !paymentMethods.has(f.payment_method)) {
        return missing('payment_method', f.payment_method, 'payment_method');
      }
      const pi = newPaymentIntent(f);
      paymentIntents.set(pi.id, pi);
      if (f.confirm !== 'true') return { status: 200, body: pi };
      if (!pi.payment_method) {
        return stripeError(400, {
          type: 'invalid_request_error',
          code: 'payment_intent_unexpected_state',
          message: 'You cannot confirm this PaymentIntent because it is missing a payment method.',
          payment_intent: pi,
        });
      }
      const outcome = standIn.paymentOutcomes.shift() ?? 'succeeded';
      if (outcome === 'succeeded') {
        succeed(pi);
        return { status: 200, body: pi };
      }
      const messages: Record<string, string> = {
        card_declined: 'Your card was declined.',
        authentication_required: 'Your card was declined. This transaction requires authentication.',
        processing_error: 'An error occurred while processing your card. Try again in a little bit.',
      };
      const err = {
        type: 'card_error',
        code: outcome,
        ...(outcome === 'card_declined' ? { decline_code: 'generic_decline' } : {}),
        ...(outcome === 'authentication_required' ? { decline_code: 'authentication_required' } : {}),
        message: messages[outcome],
        charge: rid('ch'),
        payment_method: paymentMethods.get(pi.payment_method),
      };
      pi.status = 'requires_payment_method';
      pi.last_payment_error = err;
      event('payment_intent.payment_failed', pi);
      return stripeError(402, { ...err, payment_intent: structuredClone(pi) });
    }
    if (method === 'GET' && parts[1] === 'payment_intents' && parts.length === 3) {
      const pi = paymentIntents.get(id);
      return pi ? { status: 200, body: pi } : missing('payment_intent', id);
    }
    if (method === 'GET' && parts[1] === 'setup_intents' && parts.length === 3) {
      const si = setupIntents.get(id);
      return si ? { status: 200, body: si } : missing('setup_intent', id);
    }
    return stripeError(404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${route}). Please see https://stripe.com/docs.`,
    });
  }

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, {
      'content-type': 'application/json',
      'request-id': rid('req'),
      'stripe-version': STANDIN_API_VERSION,
      ...headers,
    });
    res.end(JSON.stringify(body, null, 2));
  }

  const page = (title: string, body: string) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

  const server = createServer(async (req, res) => {
    if (standIn.unreachable) return void req.socket.destroy();
    const u = new URL(req.url ?? '/', 'http://stand-in');
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const raw = Buffer.concat(parts).toString('utf8');
    const method = req.method ?? 'GET';

    // The hosted pages a browser sees.
    const checkout = /^\/checkout\/([^/]+)(\/(pay|cancel))?$/.exec(u.pathname);
    if (checkout) {
      const s = sessions.get(checkout[1] as string);
      if (!s) return void res.writeHead(404).end('no such session');
      if (method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        const what = s.mode === 'setup' ? 'Save card' : s.mode === 'subscription' ? 'Subscribe' : 'Pay';
        return void res.end(
          page(
            'Stripe Checkout (stand-in)',
            `<h1>${what}</h1><p>${s.amount_total ?? 0} ${s.currency ?? ''}</p>` +
              `<form method="post" action="/checkout/${s.id}/pay"><button>${what}</button></form>` +
              `<form method="post" action="/checkout/${s.id}/cancel"><button>Cancel</button></form>`,
          ),
        );
      }
      let to = s.cancel_url ?? s.success_url;
      if (checkout[3] === 'pay') {
        const evs = standIn.completeCheckout(s.id);
        if (standIn.webhookUrl) for (const e of evs) await standIn.send(e).catch(() => {});
        to = s.success_url;
      }
      res.writeHead(303, { location: to });
      return void res.end();
    }
    if (u.pathname.startsWith('/portal/')) {
      const ps = portals.get(u.pathname.slice('/portal/'.length));
      if (!ps) return void res.writeHead(404).end('no such portal session');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      const back = ps.return_url ? `<p><a href="${String(ps.return_url).replace(/"/g, '&quot;')}">Return</a></p>` : '';
      return void res.end(page('Customer portal (stand-in)', `<h1>Customer portal</h1><p>${ps.customer}</p>${back}`));
    }

    const form = method === 'GET' || method === 'DELETE' ? parseForm(u.search.slice(1)) : parseForm(raw);
    const idempotencyKey = (req.headers['idempotency-key'] as string | undefined) ?? null;
    requests.push({ method, path: u.pathname, headers: req.headers, form, idempotencyKey });

    const auth = req.headers.authorization ?? '';
    if (auth !== `Bearer ${secretKey}`) {
      return send(res, 401, {
        error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${auth.slice(7, 15)}****` },
      });
    }
    if (method === 'POST' && idempotencyKey) {
      const prior = replays.get(idempotencyKey);
      if (prior) return send(res, prior.status, prior.body, { 'idempotent-replayed': 'true' });
    }
    const out = api(method, u.pathname, form);
    if (method === 'POST' && idempotencyKey && out.status < 500) replays.set(idempotencyKey, out);
    send(res, out.status, out.body);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  runningStripeStandIns.add(standIn);
  return standIn;
}

/** Stand-ins started and not stopped yet. */
export const runningStripeStandIns = new Set<StripeStandIn>();
