// TypeBox schemas of the assistant's routes and stream events (interface.md "Assistant",
// "Assistant approval"; gaps.md "Assistant"). The wire contract the app's panel and integrators
// read: change a field here and the app's generated types (web/src/api.gen.d.ts) follow.
import { Type } from '@sinclair/typebox';
import { Body, Id, Nullable, Timestamp } from '../../platform/http/schemas.js';

/** A record a step or a preview names: tickets carry their number. */
export const Ref = Type.Object(
  {
    kind: Type.Union(['ticket', 'contact', 'article', 'view', 'automation'].map((k) => Type.Literal(k))),
    id: Type.String(),
    label: Type.String(),
    number: Type.Optional(Type.Integer()),
  },
  { title: 'AssistantRef' },
);

export const StepStatus = Type.Union(
  ['running', 'done', 'error', 'awaiting_approval', 'approved', 'denied', 'expired'].map((s) => Type.Literal(s)),
);

/** One tool step (the stream's `tool` event, and the JSON answer's `steps`). */
export const Step = Type.Object(
  {
    id: Type.String(),
    tool: Type.String({ description: 'The tool name as offered to the model (gaps.md "Assistant")' }),
    label: Type.String({ description: 'What the step does, for people ("Searching tickets for “refund”")' }),
    status: StepStatus,
    summary: Type.Optional(Type.String({ description: 'What came of it ("4 tickets found")' })),
    refs: Type.Array(Ref),
    action_id: Nullable(Type.String({ description: 'The approval of a write step, else null' })),
  },
  { title: 'AssistantStep' },
);

export const Change = Type.Object({
  field: Type.String(),
  from: Type.Unknown(),
  to: Type.Unknown(),
});

export const Preview = Type.Object(
  {
    title: Type.String(),
    summary: Type.String(),
    changes: Type.Array(Change),
    targets: Type.Array(Ref),
    external: Type.Boolean({ description: 'True when a reply reaches the customer' }),
    body: Type.Optional(Type.String({ description: 'Markdown of a reply or note' })),
    total: Type.Optional(Type.Integer({ description: 'How many records a bulk change touches' })),
  },
  { title: 'AssistantPreview' },
);

/** The stream's `approval` event; the JSON answer's and the transcript's pending approval. */
export const Approval = Type.Object(
  {
    action_id: Type.String(),
    call_id: Type.String(),
    tool: Type.String(),
    preview: Preview,
    token: Type.String({
      description: 'Send back with the decision; bound to the action, user, sign-in session and workspace',
    }),
    expires_at: Timestamp,
  },
  { title: 'AssistantApproval' },
);

export const Session = Type.Object(
  {
    id: Id,
    title: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
    running: Type.Boolean({ description: 'A run is under way (a new message answers 409 assistant_busy)' }),
  },
  { title: 'AssistantSession' },
);

/** One turn of the transcript: the person's text, or the assistant's text with its steps. */
export const TranscriptMessage = Type.Object(
  {
    id: Type.String(),
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    text: Type.String({ description: 'Markdown' }),
    steps: Type.Array(Step),
    created_at: Timestamp,
  },
  { title: 'AssistantMessage' },
);

export const SessionDetail = Type.Object(
  {
    session: Session,
    messages: Type.Array(TranscriptMessage),
    approval: Nullable(Approval),
  },
  { title: 'AssistantTranscript' },
);

export const SessionList = Type.Object({ data: Type.Array(Session) });

export const CreateSessionBody = Body({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});

export const RenameBody = Body({ title: Type.String({ minLength: 1, maxLength: 200 }) });

/** The person's current screen, handed to the model as context (never as instructions). */
export const Context = Type.Object(
  {
    path: Type.Optional(Type.String({ maxLength: 2000 })),
    page: Type.Optional(Type.String({ maxLength: 200 })),
    folder: Type.Optional(Type.String({ maxLength: 200 })),
    view_id: Type.Optional(Type.String({ maxLength: 64 })),
    ticket_id: Type.Optional(Type.String({ maxLength: 64 })),
    filters: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const SendBody = Body({
  text: Type.String({ minLength: 1, maxLength: 8000 }),
  context: Type.Optional(Context),
});

export const RunStatus = Type.Union([Type.Literal('complete'), Type.Literal('awaiting_approval')]);

/** A send's or a decision's answer without `Accept: text/event-stream`. */
export const RunResult = Type.Object(
  {
    session: Session,
    text: Type.String({ description: "The run's markdown" }),
    steps: Type.Array(Step),
    approval: Nullable(Approval),
    status: RunStatus,
  },
  { title: 'AssistantRun' },
);

export const DecisionBody = Body({
  decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
  token: Type.String({ minLength: 1, maxLength: 2000 }),
});

export const TipKey = Type.Union(
  ['sla_breached', 'sla_due_soon', 'sla_at_risk', 'unassigned_old', 'mine_waiting'].map((k) => Type.Literal(k)),
);

export const Tip = Type.Object(
  {
    key: TipKey,
    text: Type.String(),
    prompt: Type.String({ description: 'What the panel sends when the tip is chosen' }),
    severity: Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')]),
    count: Type.Integer({ minimum: 0 }),
  },
  { title: 'AssistantTip' },
);

export const TipList = Type.Object({ tips: Type.Array(Tip) });
