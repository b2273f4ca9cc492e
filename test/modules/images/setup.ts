// The setup of the pictures tests (images.test.ts, images-removal-sources.test.ts): the stand-in
// picture server (test/support/pictures.ts) and two services, one with loopback allowed for the
// stand-ins and one with the production address rules. Each test file calls imagesSuite() at its
// top level and gets its own stand-in and services (the files share worker processes, so nothing
// here lives at module level).

import type { Server } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { type Service, startService } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';
import { type Routes, resolve, standInPictures, startStandIn } from '../../support/pictures.js';

/** One file's stand-in and services; registers the file's hooks. */
export function imagesSuite() {
  /** What the stand-in answers, by path; records every path asked. */
  const routes: Routes = new Map();
  const asked: string[] = [];
  let standIn: Server;
  let base = '';

  let own: OwnDatabase;
  /** Loopback allowed for the stand-ins: every address rule but "127.0.0.1 is private" applies. */
  let svc: Service;
  /** The production address rules (no WEBHOOK_ALLOW_PRIVATE). */
  let strict: Service;

  beforeAll(async () => {
    ({ server: standIn, base } = await startStandIn(routes, asked));
    own = await ownDatabase('images');
    svc = await startService(
      { ...own.env, WEBHOOK_ALLOW_PRIVATE: 'true' },
      { jobs: true, pictures: standInPictures(base) },
    );
    strict = await startService({}, { jobs: false, pictures: { resolve } });
  });
  afterAll(async () => {
    await svc?.stop();
    await strict?.stop();
    await own?.drop();
    standIn?.close();
  });

  return {
    get standIn() {
      return standIn;
    },
    get base() {
      return base;
    },
    get svc() {
      return svc;
    },
    get strict() {
      return strict;
    },
    routes,
    asked,
  };
}
