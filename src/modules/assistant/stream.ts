// How a send or a decision answers (interface.md "Assistant"; docs/assistant.md "Streaming"):
// with `Accept: text/event-stream`, the run's events as they happen (session, text, tool,
// approval, done; error with a problem body, then the stream ends); without it, one RunResult.
//
// The stream starts with the first event after `session` (the first text, step or `done`): an
// error before it (402, 501, 502 of the first model turn) is the normal JSON error response.
// A client that goes away aborts the run through its signal: the provider call stops, the run
// ends and releases its conversation. The service shutting down ends streams with a 503.
import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/errors.js';
import { closeQuietly, EventStream, errorBody, type InFlight, isShutdown, wantsStream } from '../ai/features/sse.js';
import { ProviderError } from '../ai/providers/types.js';
import type { ApprovalView, RunEvent, RunIo } from './run.js';
import type { RunResult } from './schemas.js';
import type { RunOutcome } from './service.js';
import type { StepView } from './store.js';

/** The run's events gathered into the JSON answer. */
class Collector {
  text = '';
  readonly steps = new Map<string, StepView>();
  approval: ApprovalView | null = null;
  emit(e: RunEvent): void {
    if (e.event === 'text') this.text += e.data.text;
    else if (e.event === 'tool') this.steps.set(e.data.id, e.data);
    else if (e.event === 'approval') this.approval = e.data;
  }
}

/** The event stream (ai/features/sse.ts), opened at its first event after `session`. */
class RunStream {
  private held: string[] = [];
  constructor(private readonly stream: EventStream) {}

  get started(): boolean {
    return this.stream.started;
  }

  emit(event: string, data: unknown): void {
    const text = JSON.stringify(data);
    if (!this.stream.started && event === 'session') {
      this.held.push(text);
      return;
    }
    for (const h of this.held) this.stream.write('session', h);
    this.held = [];
    this.stream.write(event, text);
  }

  end(): void {
    this.stream.end();
  }
}

/** Runs `work` (a send or a decision) and answers as a stream or as one RunResult. */
export async function respondRun(
  req: FastifyRequest,
  reply: FastifyReply,
  inFlight: InFlight,
  work: (io: RunIo) => Promise<RunOutcome>,
): Promise<Static<typeof RunResult> | FastifyReply> {
  const control = new AbortController();
  let finished = false;
  const onClose = () => {
    if (!finished) control.abort();
  };
  reply.raw.on('close', onClose);
  inFlight.add(control);
  const stream = wantsStream(req) ? new RunStream(new EventStream(req, reply)) : null;
  const collector = new Collector();
  const io: RunIo = {
    emit: (e) => (stream ? stream.emit(e.event, e.data) : collector.emit(e)),
    signal: control.signal,
    streaming: stream !== null,
  };
  try {
    const outcome = await work(io);
    finished = true;
    if (!stream) {
      return {
        session: outcome.session,
        text: collector.text,
        steps: [...collector.steps.values()],
        approval: collector.approval,
        status: outcome.status,
      };
    }
    stream.end();
    return reply;
  } catch (err) {
    finished = true;
    const shutdown = isShutdown(control.signal);
    const aborted = err instanceof ProviderError && err.failure === 'aborted';
    if ((aborted || control.signal.aborted) && !shutdown) {
      if (stream?.started) {
        stream.end();
        return reply;
      }
      return closeQuietly(reply);
    }
    const failure = shutdown ? new ApiError('unavailable', 'The service is restarting; try again.') : err;
    if (!stream?.started) throw failure;
    stream.emit('error', errorBody(req, failure));
    stream.end();
    return reply;
  } finally {
    inFlight.delete(control);
    reply.raw.off('close', onClose);
  }
}
