// Checks an OpenAPI document: against the official OpenAPI 3.1 JSON Schema (as shipped by
// @seriousme/openapi-schema-validator, compiled with ajv's draft 2020-12 class, every $ref
// resolving), and every Schema Object in it against the JSON Schema 2020-12 meta-schema (the
// 3.1 schema leaves Schema Objects open). Used by scripts/openapi.ts and test/openapi.test.ts.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';

type Json = Record<string, any>;

/** Every Schema Object of the document with its JSON pointer. */
function* schemaObjects(doc: Json): Generator<[string, unknown]> {
  const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
  const ofContent = function* (at: string, content: Json | undefined): Generator<[string, unknown]> {
    for (const [type, media] of Object.entries(content ?? {})) {
      if (media?.schema !== undefined) yield [`${at}/content/${esc(type)}/schema`, media.schema];
    }
  };
  const ofOperation = function* (at: string, op: Json): Generator<[string, unknown]> {
    for (const [i, p] of (op.parameters ?? []).entries()) {
      if (p.schema !== undefined) yield [`${at}/parameters/${i}/schema`, p.schema];
    }
    yield* ofContent(`${at}/requestBody`, op.requestBody?.content);
    for (const [status, res] of Object.entries<Json>(op.responses ?? {})) {
      yield* ofContent(`${at}/responses/${status}`, res.content);
      for (const [name, h] of Object.entries<Json>(res.headers ?? {})) {
        if (h.schema !== undefined) yield [`${at}/responses/${status}/headers/${esc(name)}/schema`, h.schema];
      }
    }
  };
  for (const section of ['paths', 'webhooks'] as const) {
    for (const [path, item] of Object.entries<Json>(doc[section] ?? {})) {
      for (const [method, op] of Object.entries<Json>(item)) {
        if (op && typeof op === 'object' && 'responses' in op)
          yield* ofOperation(`#/${section}/${esc(path)}/${method}`, op);
      }
    }
  }
  for (const [name, s] of Object.entries(doc.components?.schemas ?? {})) yield [`#/components/schemas/${esc(name)}`, s];
  for (const [name, p] of Object.entries<Json>(doc.components?.parameters ?? {})) {
    if (p.schema !== undefined) yield [`#/components/parameters/${esc(name)}/schema`, p.schema];
  }
}

export async function checkDocument(doc: Json): Promise<string[]> {
  const problems: string[] = [];
  const result = await new Validator().validate(doc);
  if (!result.valid) {
    const errors = typeof result.errors === 'string' ? [{ message: result.errors }] : (result.errors ?? []);
    for (const e of errors as Array<{ instancePath?: string; message?: string; params?: unknown }>) {
      problems.push(
        `OpenAPI 3.1 schema: #${e.instancePath ?? ''} ${e.message ?? ''} ${JSON.stringify(e.params ?? {})}`,
      );
    }
  }
  const ajv = new Ajv2020({ strict: false });
  let count = 0;
  for (const [at, schema] of schemaObjects(doc)) {
    count++;
    if (!ajv.validateSchema(schema as object)) {
      for (const e of ajv.errors ?? []) problems.push(`JSON Schema 2020-12: ${at}${e.instancePath} ${e.message}`);
    }
  }
  if (count === 0) problems.push('no Schema Object found: is this the whole document?');
  return problems;
}
