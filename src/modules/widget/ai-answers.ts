// AI answers in the chat (docs/ai.md "AI answers in the chat"; issue 35 item 5). With AI on and
// the workspace's `widget_answers` feature on, a visitor's message is answered in a job, never on
// the request path:
//   1. the visitor's message commits (service.ts) → a job is queued (queueAnswer);
//   2. the job skips a conversation gone to people (custom.handoff_requested_at), one with any
//      public message after the visitor's (an agent replied, the assistant did, or the visitor
//      wrote again: that message's own job answers), spam, closed or deleted ones;
//   3. "talk to a person" → the conversation goes to people, no model call;
//   4. the month's `answer` spend at or past `widget_monthly_cap_usd` (0 = no cap, per UTC month)
//      → no model call, the conversation goes to people, and owners and admins get
//      `ai_cap_reached` (data cap_usd) once per UTC month (widget_cap_notices);
//   5. up to five PUBLISHED articles of the workspace matching the visitor's words (the search the
//      draft uses: kb/sources.ts); none → "I don't know" and people;
//   6. one structured call through runAi (tier widget, feature answer: metered there); a
//      confident answer citing the articles is posted as a public reply, author type `ai` under the
//      assistant's name, through the message sanitizer, and reaches the widget over the gateway
//      like an agent's reply; otherwise (not confident, unreadable, the provider failed: failed
//      calls cost nothing) the assistant says it does not know and the conversation goes to people.
// Going to people is requestHandoff's change (custom.handoff_requested_at, a waiting or solved
// conversation opened again) plus custom.ai_handoff (the reason), once per conversation, with one
// `ai_handoff` notification to the assignee, else the team's agents, else the workspace's agents.
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { escapeHtml } from '../../platform/html/index.js';
import type { ServiceContext } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';
import { seesEveryTeam } from '../../platform/http/team-access.js';
import { jsonOf, replyOf } from '../ai/features/output.js';
import { ARTICLE_CHARS, SOURCES, type SourceArticle, searchQuery } from '../ai/features/sources.js';
import { runAi } from '../ai/run.js';
import { ASSISTANT_NAME, resolveAi, type WorkspaceAi } from '../ai/service.js';
import { storedFeatures } from '../ai/settings.js';
import { linksOf } from '../help-center/routes.js';
import { publishedSources } from '../kb/sources.js';
import { notify } from '../notifications/service.js';
import { cleanBody, insertMessage, type MessageView } from '../tickets/outbound-message.js';
import { applyPatch } from '../tickets/patch.js';
import { reload, type TicketRow, ticketQuery } from '../tickets/queries.js';
import {
  ANSWER_SCHEMA,
  answerSystem,
  answerUser,
  asksForPerson,
  type ChatTurn,
  readAnswer,
} from './ai-answers-prompt.js';

export const ANSWER_JOB = 'widget-ai-answer';

/** The job: workspace, conversation (chat ticket), the visitor's message. */
export interface AnswerJob {
  w: string;
  t: string;
  m: string;
}

/** Why a conversation went to people (custom.ai_handoff, the ai_handoff notification's data.reason). */
export type HandoffReason = 'requested' | 'unknown' | 'cap' | 'unavailable';

/** Upper bound of an answer's tokens. */
const ANSWER_TOKENS = 800;
/** Messages of the chat the model sees (the visitor's latest last). */
const TURNS = 8;
/** What a ticket's statistics change when a message is added (ticket.updated `changes`). */
const STAT_CHANGES = ['message_count', 'last_message_at', 'last_message_preview'];

/** What the assistant says when the conversation goes to people (none for a visitor's POST …/handoff). */
const NOTICES: Record<HandoffReason, string> = {
  unknown:
    "I don't know the answer to that from our help articles, so I've passed your question to our team. " +
    'A person will reply here.',
  unavailable: "I can't answer that right now, so I've passed your question to our team. A person will reply here.",
  requested: "I've passed your conversation to our team. A person will reply here.",
  cap: "I've passed your question to our team. A person will reply here.",
};

/** AI available and switched on, and the widget's answers on: the assistant answers visitors. */
function answering(ai: WorkspaceAi): boolean {
  return ai.target !== null && ai.switchedOn && storedFeatures(ai.row).widget_answers;
}

/** Whether the workspace's assistant answers its chat visitors (read before a transaction). */
export async function answersOn(deps: Deps, workspaceId: string): Promise<boolean> {
  return answering(await resolveAi(deps, workspaceId));
}

/**
 * After the unit commits: queues the answer to the visitor's message, when the workspace has
 * answers on (a failure to queue is logged; the conversation stays with people).
 */
export function queueAnswer(deps: Deps, u: Unit, ticketId: string, messageId: string): void {
  const job: AnswerJob = { w: u.workspaceId, t: ticketId, m: messageId };
  u.afterCommit(async () => {
    try {
      if (!(await answersOn(deps, job.w))) return;
      await deps.jobs.send(ANSWER_JOB, job, { retryLimit: 2, retryDelaySeconds: 10 });
    } catch (err) {
      deps.log.warn({ err: (err as Error).message, ticket_id: ticketId }, 'could not queue the chat answer job');
    }
  });
}

/** The job's worker (runtime.ts starts it with the other workers). */
export async function registerAnswerJobs(deps: Deps): Promise<void> {
  await deps.jobs.work<AnswerJob>(ANSWER_JOB, (job) => runAnswerJob(deps, job), { concurrency: 2 });
}

const customOf = (t: TicketRow) => (t.custom ?? {}) as Record<string, unknown>;

/** A live chat conversation that has not gone to people. */
const answerable = (t: TicketRow | undefined): t is TicketRow =>
  t !== undefined &&
  t.deleted_at === null &&
  t.merged_into_id === null &&
  t.channel === 'chat' &&
  !t.spam &&
  t.status !== 'closed' &&
  !customOf(t).handoff_requested_at;

/** The public messages of the conversation (replies: never a note), oldest first. */
async function publicThread(db: Kysely<DB>, workspaceId: string, ticketId: string) {
  return db
    .selectFrom('messages')
    .select(['id', 'direction', 'author_type', 'body_text', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('ticket_id', '=', ticketId)
    .where('kind', '=', 'reply')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

type ThreadRow = Awaited<ReturnType<typeof publicThread>>[number];

/** The visitor's message, when it is the conversation's latest public message; else null. */
function latestVisitorMessage(thread: ThreadRow[], id: string): number | null {
  const at = thread.findIndex((m) => m.id === id);
  if (at < 0 || at !== thread.length - 1 || thread[at]!.direction !== 'inbound') return null;
  return at;
}

const turnOf = (m: ThreadRow): ChatTurn => ({
  from: m.direction === 'inbound' ? 'visitor' : m.author_type === 'ai' ? 'assistant' : 'agent',
  text: m.body_text,
});

/** The first day of the current UTC month. */
function monthStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** The workspace's `answer` spend in the current UTC month, in US dollars. */
async function monthSpend(db: Kysely<DB>, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('ai_usage')
    .select(sql<string>`coalesce(sum(cost_usd), 0)`.as('usd'))
    .where('workspace_id', '=', workspaceId)
    .where('feature', '=', 'answer')
    .where('created_at', '>=', monthStart())
    .executeTakeFirstOrThrow();
  return Number(r.usd);
}

/** Up to SOURCES published articles matching the texts, numbered for citing (ai/features/sources.ts). */
async function articlesFor(
  deps: Deps,
  workspaceId: string,
  texts: string[],
): Promise<{ articles: SourceArticle[]; helpCenterOn: boolean }> {
  const q = searchQuery(texts);
  if (q === null) return { articles: [], helpCenterOn: false };
  const { articles: rows, site } = await publishedSources(deps, workspaceId, q, SOURCES, ARTICLE_CHARS + 1);
  if (!site) return { articles: [], helpCenterOn: false };
  const links = linksOf(deps.config.publicUrl, site.slug);
  const articles = rows.map((a, i) => ({
    n: i + 1,
    id: a.id,
    title: a.title,
    url: links.absolute(links.article(a.slug)),
    text: a.text.length > ARTICLE_CHARS ? `${a.text.slice(0, ARTICLE_CHARS - 1)}…` : a.text,
  }));
  return { articles, helpCenterOn: site.helpCenterOn };
}

const assistantCtx = (model: string): ServiceContext => ({ actor: { kind: 'ai', model, onBehalfOf: null } });

/**
 * Answers one visitor's message (this file's header). Throws only on an unexpected failure (the
 * queue retries; the checks above make a retry post nothing twice).
 */
export async function runAnswerJob(deps: Deps, job: AnswerJob): Promise<void> {
  const db = deps.database.db;
  const ai = await resolveAi(deps, job.w);
  if (!answering(ai)) return;
  const ticket = await ticketQuery(db, job.w).where('t.id', '=', job.t).executeTakeFirst();
  if (!answerable(ticket)) return;
  const thread = await publicThread(db, job.w, ticket.id);
  const at = latestVisitorMessage(thread, job.m);
  if (at === null) return;
  const question = thread[at]!.body_text;
  const model = ai.tiers.widget ?? '';
  const handOff = (reason: HandoffReason) => handOffConversation(deps, job, reason, model);
  if (asksForPerson(question)) return handOff('requested');
  const cap = Number(ai.row.widget_monthly_cap_usd);
  if (cap > 0 && (await monthSpend(db, job.w)) >= cap) {
    await handOff('cap');
    await capReached(deps, job.w, cap);
    return;
  }
  const { articles, helpCenterOn } = await articlesFor(deps, job.w, [question, ticket.subject]);
  if (articles.length === 0) return handOff('unknown');
  const settings = storedFeatures(ai.row);
  let text: string;
  try {
    const result = await runAi(
      deps,
      { workspaceId: job.w, userId: null },
      {
        feature: 'answer',
        tier: 'widget',
        system: answerSystem({
          assistantName: ASSISTANT_NAME,
          tone: settings.tone,
          replyLanguage: settings.reply_language,
          instructions: settings.instructions,
        }),
        messages: [
          {
            role: 'user',
            content: answerUser(
              thread
                .slice(0, at + 1)
                .slice(-TURNS)
                .map(turnOf),
              articles,
              helpCenterOn,
            ),
          },
        ],
        maxTokens: ANSWER_TOKENS,
        temperature: 0,
        json: { name: 'chat_answer', schema: ANSWER_SCHEMA },
        ticketId: ticket.id,
      },
    );
    text = result.text;
  } catch (err) {
    // AI turned off meanwhile: nothing. The provider failed (502, metered as failed: no cost) or
    // no balance left (402): people answer.
    if (err instanceof ApiError && err.status === 404) return;
    if (err instanceof ApiError) return handOff('unavailable');
    throw err;
  }
  let answer: ReturnType<typeof readAnswer>;
  try {
    answer = readAnswer(jsonOf(text), articles);
  } catch {
    answer = { confident: false };
  }
  if (!answer.confident) return handOff('unknown');
  await postAnswer(deps, job, model, answerHtml(answer.text, helpCenterOn ? answer.sources : []));
}

/** The answer as sanitized HTML, with links to the articles it cites while the help center is on. */
function answerHtml(text: string, sources: Array<{ title: string; url: string }>): string {
  const reply = replyOf(text);
  if (sources.length === 0) return reply.html;
  const links = sources.map((s) => `<li><a href="${escapeHtml(s.url)}">${escapeHtml(s.title)}</a></li>`).join('');
  return `${reply.html}<p>Sources:</p><ul>${links}</ul>`;
}

/** The conversation locked, when the answer or notice may still be posted on it. */
async function lockAnswerable(u: Unit, job: AnswerJob): Promise<TicketRow | null> {
  const t = await ticketQuery(u.trx, u.workspaceId).where('t.id', '=', job.t).forUpdate('t').executeTakeFirst();
  if (!answerable(t)) return null;
  const thread = await publicThread(u.trx, u.workspaceId, t.id);
  return latestVisitorMessage(thread, job.m) === null ? null : t;
}

/** The assistant's public reply on the locked conversation: message.created, one ticket.updated. */
async function postReply(
  deps: Deps,
  u: Unit,
  ctx: ServiceContext,
  ticket: TicketRow,
  html: string,
): Promise<MessageView> {
  const body = cleanBody(html, false);
  const { message, event } = await insertMessage(deps, u, ctx.actor, ticket, {
    kind: 'reply',
    body,
    assistant: ASSISTANT_NAME,
  });
  u.emit(event);
  return message;
}

async function postAnswer(deps: Deps, job: AnswerJob, model: string, html: string): Promise<void> {
  const ctx = assistantCtx(model);
  await deps.writer.run(job.w, async (u) => {
    const ticket = await lockAnswerable(u, job);
    if (!ticket) return;
    await postReply(deps, u, ctx, ticket, html);
    await applyPatch(deps, u, ctx, await reload(u, ticket.id), {}, { extraChanges: STAT_CHANGES });
  });
}

/**
 * The conversation goes to people, once: the assistant's notice, custom.handoff_requested_at and
 * custom.ai_handoff, a waiting or solved conversation opened again (one ticket.updated), and the
 * ai_handoff notification.
 */
async function handOffConversation(deps: Deps, job: AnswerJob, reason: HandoffReason, model: string): Promise<void> {
  const ctx = assistantCtx(model);
  await deps.writer.run(job.w, async (u) => {
    const ticket = await lockAnswerable(u, job);
    if (!ticket) return;
    await postReply(deps, u, ctx, ticket, `<p>${escapeHtml(NOTICES[reason])}</p>`);
    const reopen = ticket.status === 'pending' || ticket.status === 'on_hold' || ticket.status === 'solved';
    const { row } = await applyPatch(
      deps,
      u,
      ctx,
      await reload(u, ticket.id),
      {
        custom: { handoff_requested_at: new Date().toISOString(), ai_handoff: reason },
        ...(reopen ? { status: 'open' as const } : {}),
      },
      { extraChanges: STAT_CHANGES },
    );
    await notifyHandoff(u, row, reason);
  });
}

/**
 * The ai_handoff notification of a conversation that just went to people: to its assignee, else
 * the agents of its team (those who see it), else every agent, admin and owner of the workspace.
 */
export async function notifyHandoff(u: Unit, t: TicketRow, reason: HandoffReason): Promise<void> {
  let userIds: string[];
  if (t.assignee_id !== null) userIds = [t.assignee_id];
  else {
    const members = await u.trx
      .selectFrom('members')
      .select(['user_id', 'role'])
      .where('workspace_id', '=', u.workspaceId)
      .where('role', 'in', ['owner', 'admin', 'agent'])
      .orderBy('created_at')
      .orderBy('user_id')
      .execute();
    const teamOf = async (teamId: string) =>
      new Set(
        (
          await u.trx
            .selectFrom('team_members')
            .select('user_id')
            .where('workspace_id', '=', u.workspaceId)
            .where('team_id', '=', teamId)
            .execute()
        ).map((r) => r.user_id),
      );
    let picked = members;
    if (t.team_id !== null) {
      const team = await teamOf(t.team_id);
      const inTeam = members.filter((m) => team.has(m.user_id));
      if (inTeam.length > 0) picked = inTeam;
    }
    if (t.private_team_id !== null) {
      const team = await teamOf(t.private_team_id);
      picked = picked.filter((m) => seesEveryTeam(m.role) || team.has(m.user_id));
    }
    userIds = picked.map((m) => m.user_id);
  }
  for (const userId of userIds) {
    await notify(u, {
      userId,
      type: 'ai_handoff',
      ticket: { id: t.id, number: t.number, subject: t.subject },
      data: { reason },
    });
  }
}

/** ai_cap_reached (data cap_usd) to the owners and admins, at most once per UTC month. */
async function capReached(deps: Deps, workspaceId: string, cap: number): Promise<void> {
  const month = monthStart().toISOString().slice(0, 10);
  await deps.writer.run(workspaceId, async (u) => {
    const first = await sql<{ month: string }>`
      INSERT INTO widget_cap_notices (workspace_id, month, cap_usd) VALUES (${workspaceId}, ${month}::date, ${cap})
      ON CONFLICT (workspace_id, month) DO NOTHING RETURNING month`.execute(u.trx);
    if (first.rows.length === 0) return;
    const admins = await u.trx
      .selectFrom('members')
      .select('user_id')
      .where('workspace_id', '=', workspaceId)
      .where('role', 'in', ['owner', 'admin'])
      .execute();
    for (const a of admins) {
      await notify(u, { userId: a.user_id, type: 'ai_cap_reached', ticket: null, data: { cap_usd: cap } });
    }
  });
}
