// A webhook receiver typed by the document's `webhooks` section: every delivery is one of its
// event bodies, told apart by `type`, so `data` narrows to that event's keys. The signature is
// checked with the service's own helper (package export `helpdesk/webhooks`).
//
//   WEBHOOK_SECRET=whsec_… PORT=4000 npx tsx examples/typed-client/webhook-receiver.ts
import { createServer } from 'node:http';
import { verifyWebhook } from 'helpdesk/webhooks';
import type { webhooks } from './api.js';

/** The body of any delivery: the union of the catalog's event bodies. */
export type Delivery = {
  [T in keyof webhooks]: webhooks[T]['post']['requestBody']['content']['application/json'];
}[keyof webhooks];

export function describe(event: Delivery): string {
  switch (event.type) {
    case 'ticket.created':
      return `ticket #${event.data.ticket.number} created: ${event.data.ticket.subject}`;
    case 'ticket.updated':
      return `ticket #${event.data.ticket.number} changed: ${event.data.changes.join(', ')}`;
    case 'message.created':
      return `${event.data.message.kind} on ticket ${event.data.ticket_id} (${event.visibility})`;
    case 'tag.merged':
      return `label ${event.data.tag_id} merged into ${event.data.into}`;
    case 'webhook.test':
      return `test event for ${event.data.url}`;
    default:
      return `${event.type} #${event.seq}`;
  }
}

const secret = process.env.WEBHOOK_SECRET;
if (secret) {
  const port = Number(process.env.PORT ?? 4000);
  createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      // Verify the raw bytes before parsing them.
      if (!verifyWebhook(secret, req.headers['svc-signature'] as string | undefined, raw)) {
        res.writeHead(401).end();
        return;
      }
      console.log(describe(JSON.parse(raw.toString('utf8')) as Delivery));
      res.writeHead(204).end();
    });
  }).listen(port, () => console.log(`listening on http://localhost:${port}/`));
}
