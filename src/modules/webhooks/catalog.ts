// The event types an endpoint may subscribe to (docs/webhooks.md, and one entry each in the
// OpenAPI document's `webhooks`), every `x.*` family written out as created, updated and deleted. `event.hidden` (a stand-in) and `chat.typing`
// (gateway only) never reach webhooks; `webhook.test` is sent by the test route to one endpoint
// only and cannot be subscribed to.

const crud = (resource: string) => [`${resource}.created`, `${resource}.updated`, `${resource}.deleted`];

export const EVENT_TYPES: readonly string[] = [
  ...crud('ticket'),
  'message.created',
  'message.updated',
  'activity.created',
  ...crud('contact'),
  ...crud('company'),
  ...crud('tag'),
  'tag.merged',
  ...crud('tag_group'),
  ...crud('custom_field'),
  ...crud('mailbox'),
  'member.added',
  'member.updated',
  'member.removed',
  'workspace.updated',
  'notification.created',
  ...crud('saved_reply'),
  ...crud('view'),
  ...crud('automation'),
  ...crud('sla_policy'),
  ...crud('kb_article'),
  ...crud('kb_collection'),
  ...crud('team'),
  ...crud('webhook'),
  'billing.updated',
];

export const ALL_EVENTS = '*';
export const TEST_EVENT = 'webhook.test';

const known = new Set(EVENT_TYPES);
export const isEventType = (t: string): boolean => known.has(t);
