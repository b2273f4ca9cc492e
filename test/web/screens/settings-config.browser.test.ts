// The settings screens of what tickets are made of, in a browser (test/support/app-harness.ts): an owner
// makes, through the screens only, an exclusive label group with two labels, a dropdown custom
// field with choices, a view filtering by one of the labels (which shows in the sidebar with its
// count), a saved reply with a placeholder, business hours, and an SLA policy counting them (with
// a next-response target, whose clock a chat ticket then shows running); each checked over the API. A form's own check shows its message next to the field; axe-core finds
// nothing serious on each screen; the labels screen fits 360 px. SCREENSHOTS=1 writes
// settings-labels and settings-sla into docs/screenshots/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, startAppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';
import { addMember } from '../../support/helpers.js';

describe.runIf(browserAvailable())('settings: labels, fields, views, saved replies, SLA, business hours', () => {
  let h: AppHarness;
  let page: Page;
  const as = () => h.tenant.as;
  /**
   * Opens a settings section the way a person does: Settings in the sidebar (on a phone, behind
   * the Menu button), then the section.
   */
  const open = async (section: string, heading: string) => {
    const narrow = await page.evaluate<boolean>("matchMedia('(max-width: 720px)').matches");
    if (narrow) await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Workspace tools' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: section, exact: true }).click();
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  };
  const noViolations = async () => expect(await h.violations(page)).toBe('[]');
  /** 409s answered: only the one the test provokes (a taken label name). */
  const conflicts: string[] = [];
  /** Errors the pages reported, but for the expected 401 (the sign-in page's first refresh) and 409. */
  const unexpected = () => h.errors.filter((e) => !/(401 \(Unauthorized\)|409 \(Conflict\))/.test(e));

  beforeAll(async () => {
    h = await startAppHarness('app_config');
    ({ page } = await h.newPage());
    page.on('response', (r) => {
      // The sign-in page's first refresh (no session yet) is the only 401 expected.
      if (r.status() === 409) conflicts.push(r.url());
      if (r.status() === 401 && !r.url().endsWith('/v1/auth/refresh'))
        h.errors.push(`401 from ${r.request().method()} ${r.url()}`);
    });
    await h.signIn(page, h.tenant.owner);
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
  });

  it('makes an exclusive label group with two labels, and says what an empty name lacks', async () => {
    await open('Labels', 'Labels');
    await page.getByText('No label groups yet.').waitFor();
    await noViolations();

    await page.getByRole('button', { name: 'New label group' }).click();
    const dialog = page.getByRole('dialog', { name: 'New label group' });
    await dialog.getByRole('button', { name: 'Create group' }).click();
    // The form's own check: the message next to the field, the field marked and focused.
    const name = dialog.getByLabel('Name');
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => name.evaluate((e: any) => e === e.ownerDocument.activeElement)).toBe(true);
    const describedBy = (await name.getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`[id="${describedBy.split(' ').pop()}"]`).textContent()).toBe('Give the group a name.');

    await name.fill('Priority tier');
    await dialog.getByLabel('Exclusive').check();
    await dialog.getByRole('button', { name: 'Create group' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('Exclusive: one per record').waitFor();

    for (const [label, color] of [
      ['Tier 1', 'Red'],
      ['Tier 2', 'Blue'],
    ] as const) {
      await page.getByRole('button', { name: 'New label', exact: true }).click();
      const d = page.getByRole('dialog', { name: 'New label' });
      await d.getByLabel('Name').fill(label);
      await d.getByLabel('Colour').selectOption({ label: color });
      await d.getByLabel('Group').selectOption({ label: 'Priority tier (exclusive)' });
      await d.getByRole('button', { name: 'Create label' }).click();
      await d.waitFor({ state: 'detached' });
    }
    const inGroup = page.getByRole('list', { name: 'Labels in Priority tier' });
    await inGroup.getByText('Tier 2', { exact: true }).waitFor();
    expect(await inGroup.getByRole('listitem').count()).toBe(2);

    const groups = (await h.svc.api.get('/v1/tag-groups', as())).body.data;
    expect(groups).toMatchObject([{ name: 'Priority tier', exclusive: true, tag_count: 2 }]);
    const tags = (await h.svc.api.get('/v1/tags', as())).body.data;
    expect(tags.map((t: { name: string; color: string; group_id: string }) => [t.name, t.color, t.group_id])).toEqual([
      ['Tier 1', 'red', groups[0].id],
      ['Tier 2', 'blue', groups[0].id],
    ]);
    await noViolations();
    await docsScreenshot(page, 'settings-labels');
  });

  it('fits 360 px on the labels screen, and says a taken name next to the field', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    try {
      await open('Labels', 'Labels');
      await page.getByText('Tier 1', { exact: true }).waitFor();
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBe(0);
      await page.getByRole('button', { name: 'New label', exact: true }).click();
      const d = page.getByRole('dialog', { name: 'New label' });
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBe(0);
      // The API's refusal (the name is taken, ignoring case) is said next to the field.
      await d.getByLabel('Name').fill('tier 1');
      await d.getByRole('button', { name: 'Create label' }).click();
      await expect.poll(() => d.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
      await d.getByText('A label with this name already exists', { exact: false }).waitFor();
      expect(conflicts).toEqual([`${h.svc.url}/v1/tags`]);
      await noViolations();
      await page.keyboard.press('Escape');
      await d.waitFor({ state: 'detached' });
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('makes a dropdown custom field with its choices', async () => {
    await open('Custom fields', 'Custom fields');
    await page.getByText('No custom fields on tickets yet.').waitFor();
    await page.getByRole('button', { name: 'New field' }).click();
    const d = page.getByRole('dialog', { name: 'New custom field' });
    await d.getByLabel('Type').selectOption({ label: 'Dropdown (one choice)' });
    await d.getByLabel('Name').fill('Plan');
    await d.getByRole('button', { name: 'Create field' }).click();
    await d.getByText('Add at least one choice.').waitFor();
    for (const [i, choice] of ['Free', 'Pro'].entries()) {
      await d.getByRole('button', { name: 'Add a choice' }).click();
      await d.getByLabel(`Choice ${i + 1}`, { exact: true }).fill(choice);
    }
    await d.getByLabel('Colour of choice 2').selectOption('green');
    await d.getByLabel('Required to solve').check();
    await noViolations();
    await d.getByRole('button', { name: 'Create field' }).click();
    await d.waitFor({ state: 'detached' });
    await page.getByRole('list', { name: 'Choices of Plan' }).getByText('Pro').waitFor();

    const fields = (await h.svc.api.get('/v1/custom-fields?entity=ticket', as())).body.data;
    expect(fields).toMatchObject([
      {
        key: 'plan',
        name: 'Plan',
        type: 'select',
        required_on_solve: true,
        options: [
          { id: 'free', label: 'Free', color: 'gray' },
          { id: 'pro', label: 'Pro', color: 'green' },
        ],
      },
    ]);
  });

  it('makes a view filtering by a label, seen in the sidebar with its count', async () => {
    for (const [subject, tags] of [
      ['Tier one, first', ['Tier 1']],
      ['Tier one, second', ['Tier 1']],
      ['Tier two', ['Tier 2']],
    ] as const) {
      const r = await h.svc.api.post('/v1/tickets', { subject, tags }, as());
      expect(r.status).toBe(201);
    }
    await open('Views', 'Views');
    await page.getByText('No personal views yet.').waitFor();
    await page.getByRole('button', { name: 'New view' }).click();
    const d = page.getByRole('dialog', { name: 'New view' });
    await d.getByLabel('Name').fill('Tier one');
    await d.getByLabel('Label').selectOption('Tier 1');
    await d.getByLabel('Open', { exact: true }).check();
    await d.getByRole('button', { name: 'Add a condition' }).click();
    await d.getByLabel('Condition 1: field').selectOption({ label: 'Plan' });
    await d.getByLabel('Condition 1: operator').selectOption('not_set');
    await noViolations();
    await d.getByRole('button', { name: 'Create view' }).click();
    await d.waitFor({ state: 'detached' });

    const views = (await h.svc.api.get('/v1/views', as())).body.data;
    expect(views).toMatchObject([
      {
        name: 'Tier one',
        shared: false,
        filters: { status: ['open'], tag: 'Tier 1', fields: [{ key: 'plan', op: 'not_set' }] },
      },
    ]);
    // The sidebar lists it, with the number of its tickets (named as the built-in views' are).
    const link = page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: /Tier one/ });
    await expect.poll(() => link.textContent()).toBe('Tier one2 tickets');
    // The screen shows its filters and count too.
    await page.getByRole('list', { name: 'Your personal views' }).getByText('2 tickets').waitFor();
    await link.click();
    await page.getByText('Tier one, second').waitFor();
    expect(await page.getByText('Tier two').count()).toBe(0);
  });

  it('makes a saved reply with a placeholder', async () => {
    await open('Saved replies', 'Saved replies');
    await page.getByText('No saved replies yet.').waitFor();
    await page.getByRole('button', { name: 'New saved reply' }).click();
    const d = page.getByRole('dialog', { name: 'New saved reply' });
    await d.getByLabel('Title').fill('Welcome');
    await d.getByLabel('Shortcut').fill('has space');
    await d.getByRole('button', { name: 'Create saved reply' }).click();
    await d.getByText('Letters, digits, - and _ only (up to 50), no spaces.').waitFor();
    await d.getByText('Write the reply.').waitFor();
    await d.getByLabel('Shortcut').fill('welcome');
    const body = d.getByRole('textbox', { name: 'Body' });
    await body.click();
    await page.keyboard.type('Hello ');
    await d.getByRole('button', { name: /^Insert \{\{customer\.first_name\}\}/ }).click();
    // The text keeps the focus, the cursor after the placeholder.
    await expect
      .poll(() => page.evaluate<boolean>("document.activeElement?.closest('.ProseMirror') !== null"))
      .toBe(true);
    await page.keyboard.type(', thanks for writing.');
    await noViolations();
    await d.getByRole('button', { name: 'Create saved reply' }).click();
    await d.waitFor({ state: 'detached' });
    await page.getByText('Hello {{customer.first_name}}, thanks for writing.').waitFor();

    const replies = (await h.svc.api.get('/v1/saved-replies', as())).body.data;
    expect(replies).toMatchObject([{ title: 'Welcome', shortcut: 'welcome' }]);
    expect(replies[0].body_html).toContain('Hello {{customer.first_name}}, thanks for writing.');

    await page.getByLabel('Search saved replies').fill('nothing like it');
    await page.getByText('No saved reply matches “nothing like it”.').waitFor();
  });

  it('sets business hours and an SLA policy counting them', async () => {
    await open('Business hours', 'Business hours');
    await page.getByLabel('Use business hours').check();
    await page.getByLabel('Time zone').selectOption('Europe/Berlin');
    await page.getByLabel('Saturday', { exact: true }).check();
    await page.getByLabel('to (Saturday)').selectOption('08:00');
    await page.getByRole('button', { name: 'Save business hours' }).click();
    await page.getByText('Each range must end after it starts.').waitFor();
    await page.getByLabel('to (Saturday)').selectOption('13:00');
    await page.getByRole('button', { name: 'Add a holiday' }).click();
    await page.getByLabel('Holiday 1: date').fill('2026-12-25');
    await page.getByLabel('Holiday 1: name').fill('Christmas');
    await noViolations();
    await page.getByRole('button', { name: 'Save business hours' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const bh = (await h.svc.api.get('/v1/business-hours', as())).body;
    expect(bh).toMatchObject({
      enabled: true,
      timezone: 'Europe/Berlin',
      holidays: [{ date: '2026-12-25', name: 'Christmas' }],
    });
    expect(bh.schedule.sat).toEqual([{ start: '09:00', end: '13:00' }]);

    await open('SLA policies', 'SLA policies');
    await page.getByText('No SLA policies yet', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'New SLA policy' }).click();
    const d = page.getByRole('dialog', { name: 'New SLA policy' });
    await d.getByLabel('First response within', { exact: true }).fill('');
    await d.getByRole('button', { name: 'Create policy' }).click();
    await d.getByText('Give the policy a name.').waitFor();
    await d.getByText('Give a time.').waitFor();
    await d.getByLabel('Name').fill('Urgent tickets');
    await d.getByLabel('For tickets of priority').selectOption('urgent');
    await d.getByLabel('First response within', { exact: true }).fill('30');
    await d.getByLabel('First response within: unit').selectOption('minutes');
    // The next-response target is optional (empty: none); set here.
    await d.getByLabel('Next response within', { exact: true }).fill('2');
    await d.getByLabel('Next response within: unit').selectOption('hours');
    await d.getByLabel('Solved within', { exact: true }).fill('4');
    await d.getByLabel('Solved within: unit').selectOption('hours');
    expect(await d.getByLabel('Count business hours only').isChecked()).toBe(true);
    await noViolations();
    await d.getByRole('button', { name: 'Create policy' }).click();
    await d.waitFor({ state: 'detached' });
    await page
      .getByText('First response within 30 min · next response within 2 h · solved within 4 h · business hours')
      .waitFor();

    const policies = (await h.svc.api.get('/v1/sla-policies', as())).body.data;
    expect(policies).toMatchObject([
      {
        name: 'Urgent tickets',
        priority: 'urgent',
        first_response_minutes: 30,
        next_response_minutes: 120,
        resolution_minutes: 240,
        business_hours: true,
        enabled: true,
      },
    ]);
    await docsScreenshot(page, 'settings-sla');

    // On an urgent chat ticket the agent answered: no reply due until the customer writes again,
    // then the next-response clock runs (the page follows the ticket live).
    const api = h.svc.api;
    const key = (await api.get('/v1/workspace', as())).body.widget_key;
    const visitor = await api.post('/v1/widget/session', { key, name: 'Vic', email: 'vic@example.com' });
    expect(visitor.status, visitor.text).toBe(200);
    const va = { headers: { authorization: `Visitor ${visitor.body.visitor_token}` } };
    const chat = (await api.post('/v1/widget/conversations', { body: 'My parcel is late' }, va)).body;
    expect((await api.patch(`/v1/tickets/${chat.id}`, { priority: 'urgent' }, as())).status).toBe(200);
    const answer = await api.post(`/v1/tickets/${chat.id}/messages`, { kind: 'reply', body_html: 'Checking.' }, as());
    expect(answer.status, answer.text).toBe(201);
    await page.goto(`${h.svc.url}/tickets/${chat.number}`);
    // The email the visitor typed is shown as theirs to claim, not as proven (contacts' unverified_email).
    const customer = page.locator('.contact-panel');
    await customer.getByText('vic@example.com').waitFor();
    await customer.getByText('Unverified', { exact: true }).waitFor();
    expect(await customer.getByRole('link', { name: 'vic@example.com' }).count()).toBe(0);
    const nextClock = page.locator('.sla-clock').filter({ hasText: 'Next response' });
    await nextClock.filter({ hasText: 'No reply due' }).waitFor();
    expect((await api.post(`/v1/widget/conversations/${chat.id}/messages`, { body: 'Any news?' }, va)).status).toBe(
      201,
    );
    await nextClock
      .locator('time')
      .filter({ hasText: / left$/ })
      .waitFor();
    const due = (await api.get(`/v1/tickets/${chat.id}`, as())).body.sla.next_response_due_at;
    expect(await nextClock.locator('time').getAttribute('datetime')).toBe(due);

    // Emptied in the edit form: no next-response target.
    await open('SLA policies', 'SLA policies');
    await page.getByRole('button', { name: 'Edit Urgent tickets' }).click();
    const e = page.getByRole('dialog', { name: /Edit the SLA policy/ });
    const nextField = e.getByLabel('Next response within', { exact: true });
    expect(await nextField.inputValue()).toBe('2');
    await nextField.fill('');
    await e.getByRole('button', { name: 'Save policy' }).click();
    await e.waitFor({ state: 'detached' });
    await page.getByText('First response within 30 min · solved within 4 h · business hours').waitFor();
    expect((await api.get('/v1/sla-policies', as())).body.data[0].next_response_minutes).toBeNull();

    // Off and on again with its switch.
    const on = page.getByRole('switch', { name: /Urgent tickets/ });
    expect(await on.getAttribute('aria-checked')).toBe('true');
    await on.click();
    await expect.poll(async () => (await h.svc.api.get('/v1/sla-policies', as())).body.data[0].enabled).toBe(false);
    await page.getByText('Off', { exact: true }).waitFor();
    await noViolations();
    expect(unexpected()).toEqual([]);
  });

  it('shows an agent the definitions read-only, saying who may change them', async () => {
    const agent = await addMember(h.svc, h.tenant, 'agent', 'Andy Agent');
    const { page: p2 } = await h.newPage();
    await h.signIn(p2, agent);
    page = p2;
    await open('Labels', 'Labels');
    await page.getByText('Only admins can change labels and label groups.').waitFor();
    await page.getByText('Tier 1', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'New label' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Edit / }).count()).toBe(0);
    await open('SLA policies', 'SLA policies');
    await page.getByText('Only admins can see and change SLA policies.', { exact: false }).waitFor();
    await noViolations();
    expect(unexpected()).toEqual([]);
    expect(conflicts).toHaveLength(1);
  });
});
