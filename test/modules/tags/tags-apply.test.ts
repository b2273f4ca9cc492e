// /v1/tags, part 3 (part 1: tags.test.ts, shared setup in setup.ts): applyTags, tagRefsOf and
// tagIdsByName, the functions every record's labels go through.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { applyTags, tagIdsByName, tagRefsOf } from '../../../src/modules/tags/records.js';
import { defaultTagColor } from '../../../src/modules/tags/service.js';
import { eventsAfterOf, latestSeqOf, newTenant, type Service } from '../../support/helpers.js';
import { ctxOf, ID, refused, tagsSuite } from './setup.js';

const suite = tagsSuite();
const { db, tag, group, ticket, contact, company, apply, namesOn } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('applyTags, tagRefsOf, tagIdsByName', () => {
  it('tags replaces, add_tags adds, remove_tags removes, by name (trimmed, ignoring case)', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    await tag(t, { name: 'Billing' });
    const seq = await latestSeqOf(svc, t);
    let r = await apply(t, 'ticket', tk, { tags: [' billing ', 'New one', 'BILLING'] });
    expect(r.added.map((x) => x.name)).toEqual(['New one', 'Billing']);
    expect(r.removed).toEqual([]);
    expect(r.added[0]).toEqual({
      id: expect.stringMatching(ID),
      name: 'New one',
      color: defaultTagColor('New one'),
      group_id: null,
    });
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Billing', 'New one']);
    // The unknown name created a label, with tag.created.
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.data.tag?.name])).toEqual([['tag.created', 'New one']]);
    expect(events[0].data.tag).toMatchObject({ applies_to: ['tickets', 'contacts', 'companies'], position: 1 });

    r = await apply(t, 'ticket', tk, { add_tags: ['third'], remove_tags: ['NEW ONE', 'never existed'] });
    expect(r.added.map((x) => x.name)).toEqual(['third']);
    expect(r.removed.map((x) => x.name)).toEqual(['New one']);
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Billing', 'third']);
    r = await apply(t, 'ticket', tk, { add_tags: ['Billing'] });
    expect(r).toEqual({ added: [], removed: [] });
    r = await apply(t, 'ticket', tk, { tags: [] });
    expect(r.removed.map((x) => x.name)).toEqual(['Billing', 'third']);
    expect(await namesOn(t, 'ticket', tk)).toEqual([]);
    expect(await apply(t, 'ticket', tk, {})).toEqual({ added: [], removed: [] });

    // Contacts and companies the same way.
    const ct = await contact(t);
    const co = await company(t);
    await apply(t, 'contact', ct, { add_tags: ['Billing'] });
    await apply(t, 'company', co, { tags: ['billing', 'Partner'] });
    expect(await namesOn(t, 'contact', ct)).toEqual(['Billing']);
    expect(await namesOn(t, 'company', co)).toEqual(['Billing', 'Partner']);
  });

  it('refuses tags together with add_tags or remove_tags, bad names, and a missing record', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    await refused(apply(t, 'ticket', tk, { tags: ['a'], add_tags: ['b'] }), 422, 'validation_failed', 'body.tags');
    await refused(apply(t, 'ticket', tk, { tags: ['a'], remove_tags: [] }), 422, 'validation_failed', 'body.tags');
    await refused(apply(t, 'ticket', tk, { tags: ['<b>'] }), 422, 'validation_failed', 'body.tags');
    await refused(
      apply(t, 'ticket', tk, { add_tags: ['ok', 'x'.repeat(51)] }),
      422,
      'validation_failed',
      'body.add_tags',
    );
    await refused(apply(t, 'ticket', tk, { add_tags: ['🔥'] }), 422, 'validation_failed', 'body.add_tags');
    await refused(apply(t, 'ticket', tk, { remove_tags: ['a;b'] }), 422, 'validation_failed', 'body.remove_tags');
    await refused(apply(t, 'ticket', tk, { add_tags: [' '] }), 422, 'validation_failed', 'body.add_tags');
    await refused(apply(t, 'ticket', tk, { add_tags: ['Same'], remove_tags: ['same'] }), 422, 'validation_failed');
    await refused(apply(t, 'ticket', randomUUID(), { tags: ['a'] }), 404, 'not_found');
    const other = await newTenant(svc.api);
    await refused(apply(t, 'ticket', await ticket(other), { tags: ['a'] }), 404, 'not_found');
    // Nothing was created by the refused writes.
    expect((await svc.api.get('/v1/tags', t.as)).body.data).toEqual([]);
    // A nested location is kept as given.
    const e = await refused(
      svc.rt.deps.writer.run(t.workspaceId, (u) =>
        applyTags(u, ctxOf(t), { entity: 'ticket', id: tk }, { tags: ['<'] }, { at: 'body.patch' }),
      ),
      422,
      'validation_failed',
      'body.patch.tags',
    );
    expect(e.detail).toContain('body.patch.tags');
  });

  it('label_creation admins: unknown names answer 422 unknown_label unless the caller is an admin or a settings:write key', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    await tag(t, { name: 'Known' });
    expect((await svc.api.patch('/v1/workspace', { settings: { label_creation: 'admins' } }, t.as)).status).toBe(200);
    for (const ctx of [ctxOf(t, 'agent'), ctxOf(t, 'viewer'), ctxOf(t, null, ['tickets:write', 'settings:read'])]) {
      const e = await refused(
        apply(t, 'ticket', tk, { add_tags: ['Known', 'Brand new'] }, ctx),
        422,
        'unknown_label',
        'body.add_tags',
      );
      expect(e.errors?.[0]?.message).toContain('Brand new');
      await refused(apply(t, 'ticket', tk, { tags: ['Brand new'] }, ctx), 422, 'unknown_label', 'body.tags');
      // Existing labels are fine.
      await apply(t, 'ticket', tk, { tags: ['known'] }, ctx);
    }
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Known']);
    for (const [ctx, name] of [
      [ctxOf(t, 'admin'), 'By admin'],
      [ctxOf(t, 'owner'), 'By owner'],
      [ctxOf(t, null, ['settings:write']), 'By key'],
    ] as const) {
      expect((await apply(t, 'ticket', tk, { add_tags: [name] }, ctx)).added.map((x) => x.name)).toEqual([name]);
    }
    // Back to all: anyone who may change the record creates labels.
    await svc.api.patch('/v1/workspace', { settings: { label_creation: 'all' } }, t.as);
    expect((await apply(t, 'ticket', tk, { add_tags: ['By agent'] }, ctxOf(t, 'agent'))).added).toHaveLength(1);
  });

  it('refuses a label whose applies_to omits the record’s kind, and an archived label newly applied', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    const ct = await contact(t);
    await tag(t, { name: 'Companies only', applies_to: ['companies'] });
    await refused(apply(t, 'ticket', tk, { add_tags: ['companies only'] }), 422, 'validation_failed', 'body.add_tags');
    await refused(apply(t, 'contact', ct, { tags: ['Companies only'] }), 422, 'validation_failed', 'body.tags');

    const old = await tag(t, { name: 'Old' });
    await apply(t, 'ticket', tk, { tags: ['Old', 'Fresh'] });
    await svc.api.patch(`/v1/tags/${old.id}`, { archived: true }, t.as);
    // It stays on the record through a replace that keeps it, and may be removed.
    await apply(t, 'ticket', tk, { tags: ['Old', 'Fresh', 'More'] });
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Fresh', 'More', 'Old']);
    await apply(t, 'ticket', tk, { add_tags: ['old'] });
    await refused(
      apply(t, 'ticket', await ticket(t), { add_tags: ['Old'] }),
      422,
      'validation_failed',
      'body.add_tags',
    );
    await refused(apply(t, 'contact', ct, { tags: ['Old'] }), 422, 'validation_failed', 'body.tags');
    const r = await apply(t, 'ticket', tk, { remove_tags: ['Old'] });
    expect(r.removed.map((x) => x.name)).toEqual(['Old']);
    await refused(apply(t, 'ticket', tk, { add_tags: ['Old'] }), 422, 'validation_failed', 'body.add_tags');
    // Narrowing applies_to keeps the label where it already is.
    const fresh = (await svc.api.get('/v1/tags?q=fresh', t.as)).body.data[0];
    await svc.api.patch(`/v1/tags/${fresh.id}`, { applies_to: ['contacts'] }, t.as);
    await apply(t, 'ticket', tk, { tags: ['Fresh'] });
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Fresh']);
  });

  it('exclusive groups: adding one removes the others, the last named wins, turning exclusive changes nothing', async () => {
    const t = await newTenant(svc.api);
    const prio = await group(t, { name: 'Priority', exclusive: true });
    for (const name of ['P1', 'P2', 'P3']) await tag(t, { name, group_id: prio.id });
    const tk = await ticket(t);
    await apply(t, 'ticket', tk, { tags: ['P1', 'Other'] });
    let r = await apply(t, 'ticket', tk, { add_tags: ['P2'] });
    expect(r.added.map((x) => x.name)).toEqual(['P2']);
    expect(r.removed.map((x) => x.name)).toEqual(['P1']);
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Other', 'P2']);
    r = await apply(t, 'ticket', tk, { add_tags: ['P1', 'P3'] });
    expect(r.added.map((x) => x.name)).toEqual(['P3']);
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Other', 'P3']);
    await apply(t, 'ticket', tk, { tags: ['P3', 'P1', 'Other', 'P2', 'P1'] });
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Other', 'P1']);

    // A group that is not exclusive holds several; turning it exclusive leaves records as they are
    // until their labels change.
    const area = await group(t, { name: 'Area' });
    for (const name of ['A1', 'A2', 'A3']) await tag(t, { name, group_id: area.id });
    const other = await ticket(t);
    await apply(t, 'ticket', other, { tags: ['A1', 'A2'] });
    expect((await svc.api.patch(`/v1/tag-groups/${area.id}`, { exclusive: true }, t.as)).status).toBe(200);
    expect(await namesOn(t, 'ticket', other)).toEqual(['A1', 'A2']);
    await apply(t, 'ticket', other, { add_tags: ['Unrelated'] });
    expect(await namesOn(t, 'ticket', other)).toEqual(['A1', 'A2', 'Unrelated']);
    r = await apply(t, 'ticket', other, { add_tags: ['A3'] });
    expect(r.removed.map((x) => x.name)).toEqual(['A1', 'A2']);
    expect(await namesOn(t, 'ticket', other)).toEqual(['A3', 'Unrelated']);
  });

  it('holds at most 50 labels per record (422)', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    const names = Array.from({ length: 50 }, (_, i) => `L${i}`);
    await apply(t, 'ticket', tk, { tags: names });
    expect(await namesOn(t, 'ticket', tk)).toHaveLength(50);
    await refused(apply(t, 'ticket', tk, { add_tags: ['L50'] }), 422, 'validation_failed', 'body.add_tags');
    await refused(apply(t, 'ticket', tk, { tags: [...names, 'L50'] }), 422, 'validation_failed', 'body.tags');
    // Swapping one for another is fine.
    await apply(t, 'ticket', tk, { add_tags: ['L50'], remove_tags: ['L0'] });
    expect(await namesOn(t, 'ticket', tk)).toHaveLength(50);
    // The refused writes created nothing (L50 exists once, from the last write).
    expect((await svc.api.get('/v1/tags', t.as)).body.data).toHaveLength(51);
  });

  it('concurrent writes naming one new label create it once', async () => {
    const t = await newTenant(svc.api);
    const ids = await Promise.all(Array.from({ length: 6 }, () => ticket(t)));
    await Promise.all(ids.map((id, i) => apply(t, 'ticket', id, { add_tags: [i % 2 ? 'Race' : 'RACE', `own ${i}`] })));
    const list = (await svc.api.get('/v1/tags?q=race', t.as)).body.data;
    expect(list).toHaveLength(1);
    expect(['Race', 'RACE']).toContain(list[0].name);
    expect(list[0].usage.tickets).toBe(6);
    // And concurrent changes of one record all land.
    const one = ids[0]!;
    await Promise.all(['c1', 'c2', 'c3', 'c4'].map((n) => apply(t, 'ticket', one, { add_tags: [n] })));
    expect(await namesOn(t, 'ticket', one)).toEqual(['c1', 'c2', 'c3', 'c4', 'own 0', list[0].name]);
  });

  it('tagRefsOf: each record’s TagRefs by name in one map; tagIdsByName: case-insensitive', async () => {
    const t = await newTenant(svc.api);
    const g = await group(t, { name: 'G' });
    await tag(t, { name: 'beta', group_id: g.id, color: 'teal' });
    const [a, b, c] = [await ticket(t), await ticket(t), await ticket(t)];
    await apply(t, 'ticket', a, { tags: ['beta', 'Alpha', 'gamma'] });
    await apply(t, 'ticket', b, { tags: ['Alpha'] });
    const map = await tagRefsOf(db(), t.workspaceId, 'ticket', [a, b, c.toUpperCase()]);
    expect([...map.keys()].sort()).toEqual([a, b, c].sort());
    expect(map.get(a)!.map((r) => r.name)).toEqual(['Alpha', 'beta', 'gamma']);
    expect(map.get(a)![1]).toEqual({ id: expect.stringMatching(ID), name: 'beta', color: 'teal', group_id: g.id });
    expect(map.get(b)!.map((r) => r.name)).toEqual(['Alpha']);
    expect(map.get(c)).toEqual([]);
    expect(await tagRefsOf(db(), t.workspaceId, 'contact', [])).toEqual(new Map());
    // Another workspace sees none of them.
    const other = await newTenant(svc.api);
    expect((await tagRefsOf(db(), other.workspaceId, 'ticket', [a])).get(a)).toEqual([]);

    const alpha = map.get(a)![0]!.id;
    expect(await tagIdsByName(db(), t.workspaceId, 'ALPHA')).toBe(alpha);
    expect(await tagIdsByName(db(), t.workspaceId, '  alpha ')).toBe(alpha);
    expect(await tagIdsByName(db(), t.workspaceId, 'alp')).toBeNull();
    expect(await tagIdsByName(db(), other.workspaceId, 'Alpha')).toBeNull();
  });
});
