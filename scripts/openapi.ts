// npm run openapi [file]: the OpenAPI document exactly as GET /v1/openapi.json serves it, built
// in-process (embedded database in memory, no jobs, nothing listening), written to `file`
// (default .openapi/openapi.json) and checked by openapi-check.ts: the official OpenAPI 3.1
// JSON Schema and the JSON Schema 2020-12 meta-schema for every Schema Object. Exit status 1 on
// any error, with each error's location. `npm run lint:openapi` runs this, then `redocly lint`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { createRuntime } from '../src/runtime.js';
import { checkDocument } from './openapi-check.js';

async function buildDocument(): Promise<Record<string, any>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
  try {
    const config = loadConfig({
      DATABASE_IN_MEMORY: 'true',
      DATA_DIR: dataDir,
      // Only for building the app: nothing is sealed or signed with it.
      SECRET_KEY: 'openapi-document-only-0123456789abcdef',
      PORT: '0',
      LOG_LEVEL: 'warn',
    });
    const rt = await createRuntime(config, { jobs: false, logger: pino({ level: 'warn' }) });
    try {
      await rt.app.ready();
      // A copy through JSON, as a client receives it.
      return JSON.parse(JSON.stringify(rt.app.swagger()));
    } finally {
      await rt.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const file = process.argv[2] ?? '.openapi/openapi.json';
const doc = await buildDocument();
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
const problems = await checkDocument(doc);
if (problems.length > 0) {
  for (const p of problems.slice(0, 50)) console.error(p);
  console.error(`${file}: ${problems.length} problem(s); not a valid OpenAPI 3.1 document`);
  process.exit(1);
}
const count = (o: unknown) => Object.keys(o ?? {}).length;
console.log(`${file}: valid OpenAPI ${doc.openapi} (${count(doc.paths)} paths, ${count(doc.webhooks)} webhooks)`);
