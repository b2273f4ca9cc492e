// The dedicated engine as a TriageEngine (../engine.ts): ready for a workspace once a model has
// been trained on its solved tickets (40 at least, training.ts), deciding offline in the
// process: the calibrated probability of each learned field's classes, the most probable class
// kept when it is a value the ticket can take (a team of the workspace, a label of the Type
// group), "no value" never decided; the language by detection. It cannot answer free-form
// questions: the automations' ai_decide conditions go to the language model (auto.ts).
import type { DedicatedEngine, EngineAnswer, EngineDecision, TriageInput, TriageOptions } from '../engine.js';
import { domainOf, type TicketText } from './features.js';
import { detectLanguage } from './language.js';
import { type LearnedField, MODEL_NAME, NONE, type Prediction, predict, type WorkspaceModel } from './model.js';
import { ModelCache, trainingState } from './store.js';

/** The ticket as the features read it: the subject and its first customer message. */
export function textOf(input: Pick<TriageInput, 'ticket' | 'messages'>): TicketText {
  const t = input.ticket;
  const first =
    input.messages.find((m) => m.from === 'customer' && m.kind === 'reply') ??
    input.messages.find((m) => m.kind === 'reply');
  return {
    subject: t.subject,
    message: first?.text ?? '',
    domain: domainOf(t.contact_email),
    channel: t.channel,
    mailboxId: t.mailbox_id,
  };
}

const decision = (value: string | boolean, p: number): EngineDecision => ({ value, probability: p, confidence: p });

/** The decisions of a model on a ticket, within what the ticket offers. */
export function decisionsOf(
  model: WorkspaceModel,
  text: TicketText,
  options: TriageOptions,
): EngineAnswer['decisions'] {
  const predicted = predict(model, text);
  const d: EngineAnswer['decisions'] = {};
  const top = (p: Prediction) => ({ value: p.classes[p.best]!, p: p.p[p.best]! });
  const chosen = (field: LearnedField) => {
    const p = predicted[field];
    if (!p) return null;
    const t = top(p);
    return t.value === NONE ? null : t;
  };
  const priority = chosen('priority');
  if (priority) d.priority = decision(priority.value, priority.p);
  const severity = chosen('severity');
  if (severity) d.severity = decision(severity.value, severity.p);
  const type = chosen('type_label');
  const typeName = type && options.typeLabels.find((n) => n.toLowerCase() === type.value.toLowerCase());
  if (type && typeName) d.type_label = decision(typeName, type.p);
  const team = chosen('team');
  if (team && options.teams.some((x) => x.id === team.value)) d.team = decision(team.value, team.p);
  const spam = predicted.spam;
  if (spam) {
    // Its probability is the probability of spam, whatever the value (apply.ts suggests at 0.8).
    const p = spam.p[spam.classes.indexOf('true')] ?? 0;
    d.spam = { value: p >= 0.5, probability: p, confidence: Math.max(p, 1 - p) };
  }
  const risk = predicted.sla_risk;
  if (risk) d.sla_risk = decision(risk.classes[risk.best] === 'true', risk.p[risk.best]!);
  const human = predicted.needs_human;
  if (human) d.needs_human = decision(human.classes[human.best] === 'true', human.p[human.best]!);
  const sentiment = chosen('sentiment');
  if (sentiment) d.sentiment = decision(sentiment.value, sentiment.p);
  const category = chosen('category');
  if (category) d.category = decision(category.value, category.p);
  const language = detectLanguage(`${text.subject}\n${text.message}`);
  if (language) d.language = { value: language, probability: null, confidence: null };
  return d;
}

export function dedicatedEngine(): DedicatedEngine {
  const cache = new ModelCache();
  return {
    kind: 'dedicated',
    async ready(deps, workspaceId) {
      return (await cache.current(deps.database.db, workspaceId)) !== null;
    },
    async triage(deps, input) {
      const model = await cache.current(deps.database.db, input.workspaceId);
      const decisions = model ? decisionsOf(model, textOf(input), input.options) : {};
      return {
        engine: 'dedicated',
        model: model?.name ?? MODEL_NAME,
        ...(model?.version ? { model_version: model.version } : {}),
        decisions,
        summary: '',
      };
    },
    async decide(_deps, input) {
      return input.questions.map(() => null);
    },
    training: (deps, workspaceId) => trainingState(deps.database.db, workspaceId),
  };
}
