// Where pictures are decoded: a small pool of worker threads, each running the pipeline of
// process.ts with its own sharp. sharp already does its work off the JavaScript thread, but a
// 2 MB JPEG still costs the process's event loop: reading the header, copying buffers, and on a
// small machine libvips' threads competing with the loop for the same cores. In a worker the
// event loop that answers requests only posts the bytes and waits (docs/performance.md
// "Pictures" has the measurement, pool against inline).
//
// The worker's code is the pipeline function's own source text (no separate file for the build to
// know about). With `workers: 0` the pipeline runs in this thread (the bench's comparison).

import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ApiError } from '../../platform/http/errors.js';
import { PICTURE_LIMITS, type PictureFit, type ProcessResult, processPicture } from './process.js';

export interface PicturePoolOptions {
  /** Worker threads; 0 runs the pipeline in this thread. Default: one per core but one, at least 1, at most 4. */
  workers?: number;
  /** Pictures waiting for a worker before new ones are refused (503). */
  maxQueue?: number;
}

interface Job {
  input: Uint8Array;
  fit: PictureFit;
  resolve: (r: ProcessResult) => void;
  reject: (e: Error) => void;
}

const LIMITS = {
  maxSide: PICTURE_LIMITS.maxSide,
  maxPixels: PICTURE_LIMITS.maxPixels,
  minSide: PICTURE_LIMITS.minSide,
};

const WORKER_SOURCE = `
'use strict';
var __name = (f) => f;
const { parentPort, workerData } = require('node:worker_threads');
const sharp = require(workerData.sharpPath);
sharp.cache(false);
sharp.concurrency(1);
const processPicture = ${processPicture.toString()};
parentPort.on('message', (m) => {
  processPicture(sharp, m.input, m.fit, m.limits).then(
    (r) => parentPort.postMessage({ r }),
    (e) => parentPort.postMessage({ error: String(e && e.message ? e.message : e) }),
  );
});
`;

class Slot {
  worker: Worker;
  job: Job | null = null;
  constructor(
    private readonly sharpPath: string,
    private readonly onFree: (slot: Slot) => void,
  ) {
    this.worker = this.#spawn();
  }

  #spawn(): Worker {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { sharpPath: this.sharpPath } });
    w.unref();
    w.on('message', (m: { r?: ProcessResult; error?: string }) => {
      const job = this.job;
      this.job = null;
      if (job) {
        if (m.r) job.resolve(m.r);
        else job.reject(new Error(`picture worker: ${m.error}`));
      }
      this.onFree(this);
    });
    w.on('error', (err) => this.#died(err));
    w.on('exit', (code) => {
      if (!this.closed) this.#died(new Error(`picture worker exited with code ${code}`));
    });
    return w;
  }

  closed = false;

  #died(err: Error): void {
    if (this.closed) return;
    const job = this.job;
    this.job = null;
    job?.reject(err);
    this.worker.removeAllListeners();
    void this.worker.terminate().catch(() => {});
    this.worker = this.#spawn();
    this.onFree(this);
  }

  run(job: Job): void {
    this.job = job;
    this.worker.postMessage({ input: job.input, fit: job.fit, limits: LIMITS });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.job?.reject(new Error('picture pool closed'));
    this.job = null;
    this.worker.removeAllListeners();
    await this.worker.terminate().catch(() => {});
  }
}

export class PicturePool {
  readonly size: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  readonly #maxQueue: number;
  #sharp: unknown = null;

  constructor(opts: PicturePoolOptions = {}) {
    this.size = opts.workers ?? Math.min(4, Math.max(1, availableParallelism() - 1));
    this.#maxQueue = opts.maxQueue ?? 64;
  }

  /** Processes one picture; the result says what was wrong with a refused one. */
  async process(input: Uint8Array, fit: PictureFit): Promise<ProcessResult> {
    if (this.size === 0) {
      this.#sharp ??= createRequire(import.meta.url)('sharp');
      return processPicture(this.#sharp, input, fit, LIMITS);
    }
    if (this.#slots.length === 0) {
      // Started on the first picture, not at start-up: most processes never see one.
      const sharpPath = createRequire(import.meta.url).resolve('sharp');
      for (let i = 0; i < this.size; i++) this.#slots.push(new Slot(sharpPath, (s) => this.#next(s)));
    }
    return new Promise<ProcessResult>((resolve, reject) => {
      const job: Job = { input, fit, resolve, reject };
      const free = this.#slots.find((s) => s.job === null);
      if (free) free.run(job);
      else if (this.#queue.length >= this.#maxQueue) {
        reject(
          new ApiError('unavailable', 'Too many pictures are being processed; try again shortly.', undefined, {
            'retry-after': '2',
          }),
        );
      } else this.#queue.push(job);
    });
  }

  #next(slot: Slot): void {
    const job = this.#queue.shift();
    if (job) slot.run(job);
  }

  async close(): Promise<void> {
    for (const job of this.#queue.splice(0)) job.reject(new Error('picture pool closed'));
    await Promise.all(this.#slots.splice(0).map((s) => s.close()));
  }
}
