// What the webhook screens share: the API's event catalog, the on/paused badge, and the fields of
// an endpoint (URL, description, the events it receives, on or paused) for the new one and its page.
import type { paths } from '../../../api.gen';
import type { Schemas } from '../../../lib/api';
import { CheckboxField, fieldError, TextField } from '../../../ui/form';

export type Webhook = Schemas['Webhook'];
export type Delivery =
  paths['/v1/webhooks/{id}/deliveries']['get']['responses'][200]['content']['application/json']['data'][number];
export type EventName = NonNullable<
  paths['/v1/webhooks']['post']['requestBody']
>['content']['application/json']['events'][number];

/** The API's event catalog (what an endpoint may subscribe to), `*` aside. */
export const EVENTS = [
  'ticket.created',
  'ticket.updated',
  'ticket.deleted',
  'message.created',
  'message.updated',
  'activity.created',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'company.created',
  'company.updated',
  'company.deleted',
  'tag.created',
  'tag.updated',
  'tag.deleted',
  'tag.merged',
  'tag_group.created',
  'tag_group.updated',
  'tag_group.deleted',
  'custom_field.created',
  'custom_field.updated',
  'custom_field.deleted',
  'mailbox.created',
  'mailbox.updated',
  'mailbox.deleted',
  'member.added',
  'member.updated',
  'member.removed',
  'workspace.updated',
  'notification.created',
  'saved_reply.created',
  'saved_reply.updated',
  'saved_reply.deleted',
  'view.created',
  'view.updated',
  'view.deleted',
  'automation.created',
  'automation.updated',
  'automation.deleted',
  'sla_policy.created',
  'sla_policy.updated',
  'sla_policy.deleted',
  'kb_article.created',
  'kb_article.updated',
  'kb_article.deleted',
  'kb_collection.created',
  'kb_collection.updated',
  'kb_collection.deleted',
  'team.created',
  'team.updated',
  'team.deleted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'billing.updated',
] as const satisfies readonly EventName[];
// Every type of the API's catalog is offered: this fails to compile when the catalog grows.
type MissingEvent = Exclude<EventName, (typeof EVENTS)[number] | '*'>;
const everyEvent: MissingEvent extends never ? true : MissingEvent = true;
void everyEvent;

export function Enabled({ w }: { w: Webhook }) {
  return w.enabled ? <span className="state state-ok">On</span> : <span className="state state-wait">Paused</span>;
}

export interface Draft {
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
}

export function WebhookFields({ d, set, error }: { d: Draft; set(p: Partial<Draft>): void; error: unknown }) {
  const all = d.events.includes('*');
  const eventsError = fieldError(error, 'events');
  return (
    <>
      <TextField
        label="URL"
        type="url"
        value={d.url}
        onChange={(e) => set({ url: e.target.value })}
        placeholder="https://example.com/hooks/helpdesk"
        hint="An https address on the internet."
        error={fieldError(error, 'url')}
      />
      <TextField
        label="Description"
        value={d.description}
        onChange={(e) => set({ description: e.target.value })}
        maxLength={500}
        error={fieldError(error, 'description')}
      />
      <fieldset>
        <legend>Events</legend>
        <CheckboxField
          label="All events, including those added later"
          checked={all}
          onChange={(e) => set({ events: e.target.checked ? ['*'] : [] })}
        />
        {!all && (
          <div className="checks">
            {EVENTS.map((t) => (
              <CheckboxField
                key={t}
                label={t}
                checked={d.events.includes(t)}
                onChange={(e) => set({ events: e.target.checked ? [...d.events, t] : d.events.filter((x) => x !== t) })}
              />
            ))}
          </div>
        )}
        {eventsError && <p className="field-error">{eventsError}</p>}
      </fieldset>
      <CheckboxField
        label="On (unchecked: paused, no deliveries)"
        checked={d.enabled}
        onChange={(e) => set({ enabled: e.target.checked })}
      />
    </>
  );
}
