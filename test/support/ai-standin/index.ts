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

export { type AnthropicStandIn, anthropicError, startAnthropicStandIn } from './anthropic.js';
export type { Answer, Gate, Recorded, Say, ScriptedUsage, StandInCore } from './core.js';
export { DEFAULT_TEXT, gate, runningStandIns } from './core.js';
export { embedText, type OpenAiStandIn, openAiError, startOpenAiStandIn } from './openai.js';
