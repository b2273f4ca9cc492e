// Reading the tool turns of a recorded chat request, the same for both vendors' wire formats
// (index.ts documents them): the tools it offered, and the results of earlier calls it sends back.
import type { Recorded } from './core.js';

/** A tool result a request sends back: the call it answers, the tool's name, its content. */
export interface SentToolResult {
  callId: string;
  /** The name of the call it answers (from the assistant turn that made it; undefined if none did). */
  name?: string;
  /** The result's text (Anthropic's text blocks joined). */
  content: string;
  /** Anthropic's `is_error`; always false on OpenAI (its wire has no such flag). */
  isError: boolean;
}

type Msg = { role?: string; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown };
type Block = {
  type?: string;
  id?: unknown;
  name?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
  is_error?: unknown;
};

const messagesOf = (req: Recorded): Msg[] => (Array.isArray(req.body?.messages) ? req.body.messages : []);
const blocksOf = (m: Msg): Block[] => (Array.isArray(m.content) ? m.content : []);
const isOpenAi = (req: Recorded) => req.path.endsWith('/chat/completions');

/** Anthropic's tool_result content: a text, or text blocks. */
const textOf = (c: unknown): string =>
  typeof c === 'string'
    ? c
    : Array.isArray(c)
      ? c.map((b: { type?: string; text?: unknown }) => (b?.type === 'text' ? String(b.text ?? '') : '')).join('')
      : '';

/** The names of the tools a request offered (OpenAI `tools[].function.name`, Anthropic `tools[].name`; not Anthropic's forced JSON-answer tool). */
export function offeredTools(req: Recorded): string[] {
  const tools: unknown[] = Array.isArray(req.body?.tools) ? req.body.tools : [];
  if (isOpenAi(req)) return tools.map((t) => String((t as { function?: { name?: unknown } }).function?.name));
  const forced = req.body?.tool_choice?.type === 'tool' ? req.body.tool_choice.name : undefined;
  return tools.map((t) => String((t as { name?: unknown }).name)).filter((n) => n !== forced);
}

/** The tool results a request sends back, in order (OpenAI `role: tool` messages, Anthropic `tool_result` blocks). */
export function toolResults(req: Recorded): SentToolResult[] {
  const names = new Map<string, string>();
  const out: SentToolResult[] = [];
  for (const m of messagesOf(req)) {
    if (isOpenAi(req)) {
      if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
        for (const c of m.tool_calls as Array<{ id?: unknown; function?: { name?: unknown } }>) {
          names.set(String(c.id), String(c.function?.name));
        }
      }
      if (m.role === 'tool') {
        const callId = String(m.tool_call_id);
        out.push({ callId, name: names.get(callId), content: textOf(m.content), isError: false });
      }
      continue;
    }
    for (const b of blocksOf(m)) {
      if (b.type === 'tool_use') names.set(String(b.id), String(b.name));
      if (b.type === 'tool_result') {
        const callId = String(b.tool_use_id);
        out.push({ callId, name: names.get(callId), content: textOf(b.content), isError: b.is_error === true });
      }
    }
  }
  return out;
}
