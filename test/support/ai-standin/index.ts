// Stand-ins for the language model providers: real HTTP servers on 127.0.0.1 (a free port) that
// speak the vendors' wire formats, so the production SDK code (src/modules/ai/providers/) runs
// unchanged against them. Used by the providers' tests, the AI features' tests, the app's browser
// tests and `npm run bench:ai`.
//
//   const ai = await startOpenAiStandIn({ keys: ['sk-test'] });  // or startAnthropicStandIn()
//   // AI_PROVIDER=openai AI_BASE_URL=ai.url AI_API_KEY=sk-test (Anthropic: its url is the origin)
//   ai.answer({ text: 'Hello there', chunks: ['Hel', 'lo there'], usage: { input_tokens: 12, output_tokens: 3 } });
//   ai.answer({ json: { summary: 'Short.' } });           // OpenAI: the content; Anthropic: the forced tool's input
//   ai.answer({ status: 429, headers: { 'retry-after': '1' } });   // the vendor's error body by default
//   ai.answer({ hang: true }, { malformed: true }, { cut: 1, text: 'a b c' });
//   ai.answer({ text: 'Looking.', toolCalls: [{ name: 'search_tickets', arguments: { q: 'refund' } }] });
//   ai.answer({ toolCalls: [{ id: 'call_1', name: 'get_ticket', arguments: '{"id": ' }] });  // a string: sent as is
//   toolResults(await ai.request(1));     // [{callId, name, content, isError}] the request sent back
//   offeredTools(ai.requests[0]!);        // ['search_tickets', 'get_ticket']: the tools it offered
//   const g = gate(); ai.answer({ gate: g, text: 'one two three' });  // first piece, then waits for g.release()
//   ai.fallback = (req) => ({ text: `echo ${req.body.model}` });     // when the queue is empty
//   const req = await ai.request(0);      // {method, path, headers, body, at, closedEarly, done}
//   await req.done; req.closedEarly;      // did the client go away before the answer ended?
//   ai.reset();                           // between tests: no requests, no queue, the default fallback
//   await ai.stop();                      // in afterAll: setup.ts fails a file that leaves one running
//
// Answers (core.ts `Answer`) are consumed by chat requests (OpenAI /v1/chat/completions,
// Anthropic /v1/messages) in order; without one, `fallback` answers (default: DEFAULT_TEXT, or a
// sample of the JSON schema the request asks for). Usage defaults to ~4 characters a token of
// the prompt and the answer; `usage: null` reports none. `keys` (null: any key) are the accepted
// API keys; another key gets the vendor's 401 body. OpenAI also answers /v1/embeddings (embedText:
// words hashed into 256 dimensions, normalised; `embeddingFailures` queues error replies first)
// and both list `models` at GET /v1/models.
//
// Tool calls (`toolCalls` of an answer, after its text if any; no text by default then) play in
// the vendor's format: OpenAI `message.tool_calls` (content null without text), streamed as
// `delta.tool_calls` pieces by index (id and name first, then the arguments cut into pieces),
// finish_reason tool_calls; Anthropic `tool_use` blocks, streamed as content_block_start then
// input_json_delta pieces, stop_reason tool_use. An object's arguments are sent as its JSON (an
// Anthropic `input`); a string as is. Ids default to call_… / toolu_…. The stand-ins refuse with
// the vendor's 400 what it refuses: OpenAI a `tool` message answering no call of the assistant
// message before it, or a call left without its `tool` message; Anthropic a tool_result without
// its tool_use in the previous assistant message, or a tool_use without its tool_result in the
// next; both a tool without a valid name. toolResults(req) and offeredTools(req) read a recorded
// request the same for both vendors (tools.ts).

export { type AnthropicStandIn, anthropicError, startAnthropicStandIn } from './anthropic.js';
export type { Answer, Gate, Recorded, Say, SayToolCall, ScriptedUsage, StandInCore } from './core.js';
export { DEFAULT_TEXT, gate, runningStandIns } from './core.js';
export { embedText, type OpenAiStandIn, openAiError, startOpenAiStandIn } from './openai.js';
export { offeredTools, type SentToolResult, toolResults } from './tools.js';
