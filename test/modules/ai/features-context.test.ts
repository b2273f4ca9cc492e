// What a ticket gives the model, read in one statement (src/modules/tickets/brief.ts) and the
// articles in another (src/modules/kb/sources.ts): the customer and their company with their
// custom field values, each message's author and time as the API writes them, an unverified
// sender marked, a ticket named by its number, an article's address only while the help center
// is on and its text cut to ARTICLE_CHARS, at most SOURCES articles best first, and a hidden
// team's ticket answering 404 without a call.
import { describe, expect, it } from 'vitest';
import { addMember, newTenant } from '../../support/helpers.js';
import { article, customerTicket, featuresSuite, promptOf, usageOf } from './features-setup.js';

describe('what a ticket gives the model', () => {
  const s = featuresSuite('openai');

  it('the customer and their company with their field values; authors and times as the API writes them', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const f = await svc.api.post('/v1/custom-fields', { entity: 'contact', name: 'Plan', type: 'text' }, t.as);
    expect(f.status, f.text).toBe(201);
    const cf = await svc.api.post('/v1/custom-fields', { entity: 'company', name: 'Seats', type: 'text' }, t.as);
    expect(cf.status, cf.text).toBe(201);
    const ticket = await customerTicket(svc, t, 'The export button does nothing.', 'Jane Customer');
    const p = await svc.api.patch(
      `/v1/contacts/${ticket.contactId}`,
      { company: { domain: 'acme.example', name: 'Acme Ltd' }, fields: { [f.body.key]: 'enterprise' } },
      t.as,
    );
    expect(p.status, p.text).toBe(200);
    const co = await svc.api.patch(`/v1/companies/${p.body.company.id}`, { fields: { [cf.body.key]: '40' } }, t.as);
    expect(co.status, co.text).toBe(200);
    const reply = await svc.api.post(
      `/v1/tickets/${ticket.id}/messages`,
      { kind: 'reply', body_html: '<p>Which browser?</p>' },
      t.as,
    );
    expect(reply.status, reply.text).toBe(201);
    const messages = (await svc.api.get(`/v1/tickets/${ticket.id}/messages`, t.as)).body.data as any[];
    const number = (await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.number as number;

    ai.answer({ text: 'Hello Jane.' });
    // Named by its number, as every ticket route allows.
    const r = await svc.api.post(`/v1/tickets/${number}/ai/draft`, {}, t.as);
    expect(r.status, r.text).toBe(200);
    const { user } = promptOf(ai.requests[0]!);
    expect(user).toContain(`<customer_data kind="ticket" number="${number}" status="open"`);
    expect(user).toContain(
      `<customer_data kind="customer">\nName: Jane Customer\nEmail: ${p.body.email ?? '(none)'}\nFields: {"${f.body.key}":"enterprise"}\n</customer_data>`,
    );
    expect(user).toContain(
      `<customer_data kind="company">\nName: Acme Ltd\nDomain: acme.example\nFields: {"${cf.body.key}":"40"}\n</customer_data>`,
    );
    expect(user).toContain(
      `<customer_data kind="message" n="1" from="customer" at="${messages[0].created_at}">\nJane Customer:\nThe export button does nothing.`,
    );
    expect(user).toContain(
      `<customer_data kind="message" n="2" from="agent" at="${messages[1].created_at}">\nOlivia Owner:\nWhich browser?`,
    );
  });

  it('articles: the best SOURCES of them, each cut, with their address only while the help center is on', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const long = await article(svc, t, 'Exporting data', `Export export export. ${'x'.repeat(5000)}`);
    for (let i = 1; i <= 6; i++) await article(svc, t, `Export note ${i}`, `About the export button, note ${i}.`);
    const ticket = await customerTicket(svc, t, 'The export button does nothing.');
    const ask = () => svc.api.post(`/v1/tickets/${ticket.id}/ai/ask`, { question: 'How do exports work?' }, t.as);

    ai.answer({ text: 'See the article.' });
    expect((await ask()).status).toBe(200);
    let { user } = promptOf(ai.requests[0]!);
    const titles = [...user.matchAll(/<kb_article n="(\d+)">\nTitle: ([^\n]*)/g)].map((m) => m[2]);
    expect(titles).toHaveLength(5);
    // The title weighs more and the word is three times in its text: the best match.
    expect(titles[0]).toBe('Exporting data');
    expect(user).not.toContain('Address:');
    expect(user).toMatch(/Export export export\. x{3977}…\n<\/kb_article>/);

    const on = await svc.api.patch('/v1/workspace', { settings: { help_center_enabled: true } }, t.as);
    expect(on.status, on.text).toBe(200);
    ai.answer({ text: 'See the article.' });
    expect((await ask()).status).toBe(200);
    ({ user } = promptOf(ai.requests[1]!));
    const url = new URL(svc.rt.deps.config.publicUrl);
    expect(user).toContain(
      `Title: Exporting data\nAddress: ${url.origin}${url.pathname.replace(/\/+$/, '')}/hc/${on.body.slug}/articles/${long.slug}\n`,
    );
  });

  it("a private team's ticket is 404 to a member outside it, and the model is not called", async () => {
    const { svc } = s;
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent', 'Outside Agent');
    const team = await svc.api.post('/v1/teams', { name: 'Secret team', private: true }, t.as);
    expect(team.status, team.text).toBe(201);
    const ticket = await customerTicket(svc, t, 'A private matter.');
    const moved = await svc.api.patch(`/v1/tickets/${ticket.id}`, { team_id: team.body.id }, t.as);
    expect(moved.status, moved.text).toBe(200);
    const r = await svc.api.post(`/v1/tickets/${ticket.id}/ai/draft`, {}, agent.as);
    expect(r.status, r.text).toBe(404);
    expect(r.body.code).toBe('not_found');
    expect(await usageOf(svc, t)).toEqual([]);
  });
});
