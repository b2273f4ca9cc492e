// POST /v1/ai/translate: html and/or text translated to `target` (a BCP 47 tag), with the language
// the model detected. One call with structured output: a key per input and source_language. The
// html answer is sanitized (HTML kept valid), the text answer has no markup, and a
// source_language that is no BCP 47 tag is dropped to null.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../../deps.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { ApiError, invalid } from '../../../platform/http/errors.js';
import { runAi } from '../run.js';
import { requireAi } from '../service.js';
import { callerOf } from './context.js';
import { htmlOf, jsonOf, languageTag, plainOf, stringField } from './output.js';
import { dataBlock, translateSystem } from './prompts.js';
import { answerTokens, cleanInput } from './rewrite.js';
import type { TranslateAnswer, TranslateBody } from './schemas.js';
import type { CallIo } from './sse.js';

type Key = 'html' | 'text';

/** The JSON schema of the answer: the keys asked for, and source_language. */
export const translateSchema = (keys: Key[]) => ({
  type: 'object',
  properties: {
    ...Object.fromEntries(keys.map((k) => [k, { type: 'string' }])),
    source_language: { type: 'string' },
  },
  required: [...keys, 'source_language'],
  additionalProperties: false,
});

/** The inputs, checked before AI is looked at (422: none given, an empty html, a bad tag). */
function checkInput(body: Static<typeof TranslateBody>) {
  if (body.html === undefined && body.text === undefined) throw invalid('body', 'send html, text or both');
  const target = languageTag(body.target);
  if (target === null) throw invalid('body.target', 'must be a BCP 47 language tag, e.g. de or pt-BR');
  const html = body.html === undefined ? undefined : cleanInput(body.html, 'body.html');
  const text = body.text?.replaceAll('\u0000', '');
  if (text !== undefined && text.trim() === '') throw invalid('body.text', 'must not be blank');
  return { target, html, text };
}

export async function translateText(
  deps: Deps,
  ctx: RequestContext,
  body: Static<typeof TranslateBody>,
  io: CallIo,
): Promise<Static<typeof TranslateAnswer>> {
  const { target, html, text } = checkInput(body);
  const ai = await requireAi(deps, ctx.workspaceId);
  const keys: Key[] = [
    ...(html !== undefined ? ['html' as const] : []),
    ...(text !== undefined ? ['text' as const] : []),
  ];
  const blocks = [
    ...(html !== undefined ? [dataBlock('customer_data', { kind: 'html' }, html)] : []),
    ...(text !== undefined ? [dataBlock('customer_data', { kind: 'text' }, text)] : []),
  ];
  const result = await runAi(
    deps,
    callerOf(ctx),
    {
      feature: 'translate',
      tier: 'fast',
      system: translateSystem(target, keys),
      messages: [{ role: 'user', content: `${blocks.join('\n\n')}\n\nTranslate as described, answering in JSON.` }],
      maxTokens: answerTokens(`${html ?? ''}${text ?? ''}`, 1.5),
      json: { name: 'translation', schema: translateSchema(keys) },
      signal: io.signal,
    },
    ai,
  );
  const o = jsonOf(result.text);
  const out: Static<typeof TranslateAnswer> = { source_language: languageTag(o.source_language) };
  for (const k of keys) {
    const v = stringField(o, k);
    if (v === null) throw new ApiError('ai_unavailable', 'The AI provider sent a translation that could not be read.');
    out[k] = k === 'html' ? htmlOf(v) : plainOf(v);
  }
  return out;
}
