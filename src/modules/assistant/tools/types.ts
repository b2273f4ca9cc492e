// The contract between the assistant's loop (../run.ts) and its tools (this folder; docs/assistant.md).
// A read tool runs when the model calls it, with the person's permissions, and answers only what
// they may see. A write tool never runs when called: `prepare` checks the arguments and the
// person's access and describes exactly what would happen (the approval's preview) and what will
// run (`plan`, stored with the action); `execute` runs that plan once, after the person approved
// it, through the regular service layer with their permissions (actor type `ai`, the person in
// actor.user).
import type { Static, TSchema } from '@sinclair/typebox';
import type { Deps } from '../../../deps.js';
import type { RequestContext } from '../../../platform/http/context.js';
import type { Preview, Ref } from '../schemas.js';

export type RefT = Static<typeof Ref>;
export type PreviewT = Static<typeof Preview>;

/** Who runs a tool: the signed-in person's own request context (role, private teams) in their workspace. */
export interface ToolEnv {
  deps: Deps;
  ctx: RequestContext;
  /** The assistant conversation the call belongs to. */
  sessionId: string;
  /** The model that made the call (recorded as the actor's model on writes). */
  model: string;
}

/** What a tool answers: `content` goes back to the model (JSON-serialisable), the rest to the person. */
export interface ToolOutput {
  content: unknown;
  /** One line for the step ("4 tickets found"). */
  summary: string;
  refs: RefT[];
}

/**
 * A failure the model is told about (its arguments outside the schema, a record the person cannot
 * see, a rule refused): the step ends with status `error` and this message as the tool result;
 * nothing changed. Any other error is a bug: the model is told only that the tool failed.
 */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

interface ToolBase<S extends TSchema> {
  /** As offered to the model (gaps.md "Assistant": search_tickets, get_ticket, update_ticket, reply_to_ticket, add_note, …). */
  name: string;
  description: string;
  /** The arguments' schema; the loop validates the model's JSON against it before calling. */
  parameters: S;
  /** The step's label for people, from the validated arguments. */
  label(args: Static<S>): string;
}

export interface ReadTool<S extends TSchema = TSchema> extends ToolBase<S> {
  kind: 'read';
  run(env: ToolEnv, args: Static<S>): Promise<ToolOutput>;
}

export interface WriteTool<S extends TSchema = TSchema, P = unknown> extends ToolBase<S> {
  kind: 'write';
  /** Resolves the targets the person may see and describes the change; throws ToolError otherwise. */
  prepare(env: ToolEnv, args: Static<S>): Promise<{ preview: PreviewT; plan: P; refs: RefT[] }>;
  /** Runs the approved plan once (with the person's permissions as they are now). */
  execute(env: ToolEnv, plan: P): Promise<ToolOutput>;
}

/** Any tool of the registry: each has its own arguments and plan, checked where it is defined. */
// biome-ignore lint/suspicious/noExplicitAny: a list of tools whose argument types differ (functions' parameters are contravariant)
export type AssistantTool = ReadTool<any> | WriteTool<any, any>;
