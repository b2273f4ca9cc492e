// The account, people, reports and onboarding screens of the agent web app in a real browser
// (test/support/app-harness.ts): the owner invites a second person in Members, who accepts the link in a
// second browser context by creating an account there and lands in the workspace's inbox; the
// owner makes them admin; they change their name and password (signing in again with the new
// one), turn two-factor on with a code, and upload a picture (a refused SVG said in words first);
// the owner signs out another device's session from the profile's list of sessions;
// a team with them in it; the workspace's settings and the assignment screen; the reports' charts
// over two tickets made over the API; the onboarding checklist shown and dismissed. Every change is
// checked through the API too; axe-core on each screen; Members at 360 px.
import { join } from 'node:path';
import { sql } from 'kysely';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, startAppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';
import { PICTURES } from '../../support/pictures.js';

const run = browserAvailable();

describe.runIf(run)('account, people, reports and onboarding screens', () => {
  let h: AppHarness;
  let owner: Page;
  let bob: Page;
  const bobEmail = `bob-${Date.now().toString(36)}@acme.test`;
  let bobPassword = 'bob first password';
  let bobId = '';
  let inviteUrl = '';
  const as = () => h.tenant.as;
  const overflow = (p: Page) => p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  const member = async (id: string) =>
    ((await h.svc.api.get('/v1/members', as())).body.data as any[]).find((m) => m.user.id === id);

  beforeAll(async () => {
    h = await startAppHarness('app_people');
    owner = (await h.newPage()).page;
    await h.signIn(owner, h.tenant.owner);
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
  });

  it('invites a second person in Members, with a link to copy', async () => {
    await owner.goto(`${h.svc.url}/settings/members`);
    await owner.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    // The owner is listed with their role.
    await owner.getByRole('cell', { name: /Olivia Owner \(you\)/ }).waitFor();
    expect(await h.violations(owner)).toBe('[]');

    const invite = owner.getByRole('region', { name: 'Invite someone' });
    await invite.getByLabel('Email address').fill(bobEmail);
    await invite.getByLabel('Role').selectOption('agent');
    await invite.getByRole('button', { name: 'Send invitation' }).click();
    const link = owner.getByRole('textbox', { name: `Invitation link for ${bobEmail}` }).first();
    await link.waitFor();
    inviteUrl = await link.inputValue();
    expect(inviteUrl).toMatch(/\/invite\/.+/);
    // Pending, with revoke, as the API says.
    const pending = owner.getByRole('region', { name: 'Pending invitations' });
    await pending.getByRole('row').filter({ hasText: bobEmail }).waitFor();
    await pending.getByRole('button', { name: `Revoke the invitation for ${bobEmail}` }).waitFor();
    const list = await h.svc.api.get('/v1/invitations', as());
    expect(list.body.data.map((i: any) => [i.email, i.role])).toEqual([[bobEmail, 'agent']]);

    // Inviting a member again is said in words (the owner is already one).
    await invite.getByLabel('Email address').fill(h.tenant.owner.email);
    await invite.getByRole('button', { name: 'Send invitation' }).click();
    await invite.getByRole('alert').filter({ hasText: 'already a member' }).waitFor();
  });

  it('accepts the invitation in a second browser: an account made there, then the inbox', async () => {
    bob = (await h.newPage()).page;
    await bob.goto(inviteUrl);
    await bob.getByRole('heading', { name: 'Join Acme Support' }).waitFor();
    await bob.getByText(/invited to join Acme Support as an agent/).waitFor();
    expect(await h.violations(bob)).toBe('[]');
    // The invited address is filled in.
    expect(await bob.getByLabel('Email').inputValue()).toBe(bobEmail);
    await bob.getByLabel('Name').fill('Bob Builder');
    await bob.getByLabel('Password').fill(bobPassword);
    await bob.getByRole('button', { name: 'Create account' }).click();
    await bob.getByText(`You are signed in as ${bobEmail}`).waitFor();
    await bob.getByRole('button', { name: 'Accept invitation' }).click();
    await bob.waitForURL((u) => u.pathname === '/inbox');
    await bob.getByRole('button', { name: /Workspace: Acme Support/ }).waitFor();

    const members = (await h.svc.api.get('/v1/members', as())).body.data as any[];
    const b = members.find((m) => m.user.email === bobEmail);
    expect(b?.role).toBe('agent');
    bobId = b.user.id;

    // The link is used up: opening it again says so.
    await bob.goto(inviteUrl);
    await bob.getByRole('alert').filter({ hasText: 'no longer works' }).waitFor();
  });

  it('changes their role', async () => {
    await owner.reload();
    const role = owner.getByRole('combobox', { name: 'Role of Bob Builder' });
    await role.selectOption('admin');
    await owner.getByRole('status').filter({ hasText: 'Bob Builder is now admin.' }).waitFor();
    expect((await member(bobId)).role).toBe('admin');
    await docsScreenshot(owner, 'app-settings-members');
  });

  it('profile: the name, the password (signing in again with it), two-factor with a code', async () => {
    await bob.goto(`${h.svc.url}/settings/profile`);
    await bob.getByRole('heading', { name: 'Profile', level: 1 }).waitFor();
    expect(await h.violations(bob)).toBe('[]');

    await bob.getByLabel('Your name').fill('Bob B. Builder');
    await bob.getByRole('button', { name: 'Save name' }).click();
    await bob.getByRole('status').filter({ hasText: 'Name saved.' }).waitFor();
    await bob
      .getByRole('button', { name: /Workspace: Acme Support/ })
      .filter({ hasText: 'Bob B. Builder' })
      .waitFor();
    expect((await member(bobId)).user.name).toBe('Bob B. Builder');

    await bob.getByLabel('Current password').fill(bobPassword);
    await bob.getByLabel('New password').fill('bob second password');
    await bob.getByRole('button', { name: 'Change password' }).click();
    await bob.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    bobPassword = 'bob second password';
    const old = await h.svc.api.post('/v1/auth/login', { email: bobEmail, password: 'bob first password' });
    expect(old.status).toBe(401);

    // Signed out, then in again with the new password.
    await bob.getByRole('button', { name: /Workspace: Acme Support/ }).click();
    await bob.getByRole('menuitem', { name: 'Sign out', exact: true }).click();
    await bob.getByRole('heading', { name: 'Sign in' }).waitFor();
    await h.signIn(bob, { email: bobEmail, password: bobPassword });

    await bob.goto(`${h.svc.url}/settings/profile`);
    await bob.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const key = (await bob.locator('.secret code').first().textContent())!.replace(/\s/g, '');
    // The QR code of the setup link is drawn: dark and light modules both on the canvas.
    const qr = bob.getByRole('img', { name: 'QR code for your authenticator app' });
    await qr.waitFor();
    await expect
      .poll(() =>
        qr.evaluate((c) => {
          const canvas = c as unknown as {
            width: number;
            height: number;
            getContext(k: '2d'): { getImageData(...a: number[]): { data: Uint8ClampedArray } };
          };
          const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
          let dark = 0;
          for (let i = 0; i < d.length; i += 4) if (d[i]! < 128) dark++;
          return dark > 0 && dark < d.length / 4 ? 'drawn' : 'blank';
        }),
      )
      .toBe('drawn');
    await bob.getByText('The setup link (otpauth://), for apps that take one').click();
    await bob.getByText(/^otpauth:\/\/totp\//).waitFor();
    expect(await h.violations(bob)).toBe('[]');
    const code = new TOTP({ secret: Secret.fromBase32(key), digits: 6, period: 30 }).generate();
    await bob.getByLabel('Code from the app').fill(code);
    await bob.getByRole('button', { name: 'Turn on two-factor' }).click();
    const codes = bob.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await expect.poll(() => codes.count()).toBe(10);
    await bob.getByRole('button', { name: 'I saved them' }).click();
    await bob.getByRole('button', { name: 'Turn two-factor off' }).waitFor();
    const login = await h.svc.api.post('/v1/auth/login', { email: bobEmail, password: bobPassword });
    expect(login.status).toBe(200);
    expect(login.body.mfa_required).toBe(true);
  });

  it('uploads a picture (an SVG refused in words first) and shows it', async () => {
    const file = bob.getByLabel('Upload a picture');
    await file.setInputFiles(join(PICTURES, 'script.svg'));
    await bob.getByRole('alert').filter({ hasText: 'Choose a PNG, JPEG, GIF or WebP file' }).waitFor();
    await file.setInputFiles(join(PICTURES, 'photo.webp'));
    await bob.getByRole('status').filter({ hasText: 'Picture saved.' }).waitFor();
    const img = bob.getByRole('img', { name: 'Bob B. Builder' });
    await expect.poll(() => img.evaluate((e) => (e as unknown as { naturalWidth: number }).naturalWidth)).toBe(256);
    const url = (await member(bobId)).user.avatar_url;
    expect(url).toMatch(/\/v1\/images\//);
    expect(await img.getAttribute('src')).toBe(url);
    await bob.getByRole('button', { name: 'Remove picture' }).waitFor();
    await docsScreenshot(bob, 'app-settings-profile');
  });

  it('profile: where you are signed in, another device signed out from the page with the keyboard', async () => {
    // A second session of the owner, as a sign-in on another device would make it.
    const device = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0 OtherLaptop';
    const other = await h.svc.api.post(
      '/v1/auth/login',
      { email: h.tenant.owner.email, password: h.tenant.owner.password },
      { headers: { 'user-agent': device } },
    );
    expect(other.status, other.text).toBe(200);
    const otherId = JSON.parse(Buffer.from(other.body.access_token.split('.')[1], 'base64url').toString()).sid;

    await owner.goto(`${h.svc.url}/settings/profile`);
    await owner.getByRole('heading', { name: 'Where you’re signed in' }).waitFor();
    const sessions = owner.getByRole('list', { name: 'Your sessions' }).getByRole('listitem');
    const item = sessions.filter({ hasText: 'OtherLaptop' });
    await item.waitFor();
    // The page's own session says so, and has no sign-out of its own here.
    const here = sessions.filter({ hasText: 'This browser' });
    await here.waitFor();
    expect(await here.textContent()).not.toContain('OtherLaptop');
    expect(await here.getByRole('button').count()).toBe(0);
    expect(await item.textContent()).toMatch(/Last used just now from (::ffff:)?127\.0\.0\.1/);
    await owner.getByRole('button', { name: 'Sign out everywhere else' }).waitFor();
    expect(await h.violations(owner)).toBe('[]');

    // With the keyboard: the session's button, then Cancel (focused first) and Sign out.
    const button = item.getByRole('button', { name: /^Sign out .*OtherLaptop, last used just now$/ });
    await button.focus();
    await owner.keyboard.press('Enter');
    const dialog = owner.getByRole('alertdialog', { name: 'Sign out this session?' });
    await dialog.waitFor();
    expect(await h.violations(owner)).toBe('[]');
    await expect.poll(() => owner.evaluate<string>("document.activeElement?.textContent ?? ''")).toBe('Cancel');
    await owner.keyboard.press('Tab');
    await owner.keyboard.press('Enter');
    await owner.getByRole('status').filter({ hasText: 'Signed out.' }).waitFor();
    await item.waitFor({ state: 'detached' });

    const left = (await h.svc.api.get('/v1/me/sessions', as())).body.data as Array<{ id: string }>;
    expect(left.map((x) => x.id)).not.toContain(otherId);
    expect(left.length).toBeGreaterThan(0);
    expect((await h.svc.api.get('/v1/me', { token: other.body.access_token })).status).toBe(401);
  });

  it('makes a team with a member', async () => {
    await owner.goto(`${h.svc.url}/settings/teams`);
    await owner.getByRole('heading', { name: 'Teams', level: 1 }).waitFor();
    const create = owner.getByRole('region', { name: 'New team' });
    await create.getByLabel('Team name').fill('Billing');
    await create.getByRole('button', { name: 'Create team' }).click();
    const team = owner.getByRole('region', { name: 'Billing' });
    await team.getByLabel('Add a member').selectOption({ label: 'Bob B. Builder' });
    await team.getByRole('button', { name: 'Add to Billing' }).click();
    await team.getByRole('list', { name: 'Members of Billing' }).getByText('Bob B. Builder', { exact: true }).waitFor();
    await team.getByLabel('Private').check();
    await team.getByRole('status').filter({ hasText: 'Now private.' }).waitFor();
    expect(await h.violations(owner)).toBe('[]');
    const teams = (await h.svc.api.get('/v1/teams', as())).body.data as any[];
    expect(teams.map((t) => [t.name, t.private, t.member_ids])).toEqual([['Billing', true, [bobId]]]);
  });

  it('the workspace and assignment screens save what they show', async () => {
    await owner.goto(`${h.svc.url}/settings/general`);
    await owner.getByRole('heading', { name: 'Workspace', level: 1 }).waitFor();
    await owner.getByLabel('Use Gravatar pictures for contacts').check();
    await owner.getByLabel('Close solved tickets after (days)').fill('7');
    await owner.getByRole('button', { name: 'Save', exact: true }).click();
    await owner.getByRole('status').filter({ hasText: 'Saved.' }).first().waitFor();
    const w = (await h.svc.api.get('/v1/workspace', as())).body;
    expect([w.settings.gravatar, w.settings.auto_close_days]).toEqual([true, 7]);
    // The owner-only parts: deleting asks for the name.
    expect(await owner.getByRole('button', { name: 'Delete this workspace forever' }).isDisabled()).toBe(true);
    expect(await h.violations(owner)).toBe('[]');

    await owner.goto(`${h.svc.url}/settings/assignment`);
    await owner.getByRole('heading', { name: 'Assignment', level: 1 }).waitFor();
    await owner.getByLabel('Automatic assignment').selectOption('round_robin');
    await owner.getByRole('button', { name: 'Save', exact: true }).click();
    await owner.getByRole('status').filter({ hasText: 'Saved.' }).first().waitFor();
    expect((await h.svc.api.get('/v1/assignment', as())).body.mode).toBe('round_robin');
    const mine = owner.getByRole('button', { name: 'Available for new tickets' });
    const before = await mine.getAttribute('aria-pressed');
    await mine.click();
    await expect.poll(() => mine.getAttribute('aria-pressed')).not.toBe(before);
    expect((await member(h.tenant.owner.userId)).availability).toBe(before === 'true' ? 'away' : 'online');
    expect(await h.violations(owner)).toBe('[]');
  });

  it('reports: the charts over tickets made over the API, and their tables', async () => {
    for (const subject of ['Refund please', 'Where is my parcel?']) {
      const tk = await h.svc.api.post(
        '/v1/tickets',
        { subject, contact: { email: 'cara@customer.test', name: 'Cara' }, body_html: `<p>${subject}</p>` },
        as(),
      );
      expect(tk.status, tk.text).toBe(201);
      // A first response three minutes after the ticket came (made so in the database: a test
      // cannot wait minutes): the day's median is 3 minutes.
      if (subject === 'Refund please') {
        await sql`UPDATE tickets SET created_at = created_at - interval '3 minutes' WHERE id = ${tk.body.id}`.execute(
          h.svc.rt.deps.database.db,
        );
        const reply = await h.svc.api.post(
          `/v1/tickets/${tk.body.id}/messages`,
          { kind: 'reply', body_html: '<p>On its way.</p>' },
          as(),
        );
        expect(reply.status, reply.text).toBe(201);
      }
    }
    await owner.goto(`${h.svc.url}/reports`);
    await owner.getByRole('heading', { name: 'Reports', level: 1 }).waitFor();
    for (const title of [
      'Tickets created and solved',
      'First response and resolution times (daily medians)',
      'Customer satisfaction (average score per day, 1 to 5)',
    ]) {
      await owner.getByRole('heading', { name: title }).waitFor();
    }
    await expect.poll(() => owner.locator('.recharts-wrapper').count()).toBe(3);
    await expect.poll(() => owner.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    const created = owner.locator('.kpi').filter({ hasText: 'Created' }).locator('.kpi-value');
    await expect.poll(() => created.textContent()).toBe('2');
    // The times' axis in whole units, each tick its own (Recharts' own ticks for 0 to 3 minutes
    // said "0 min, 1 min, 2 min, 2 min, 3 min").
    const times = owner.getByRole('region', { name: 'First response and resolution times (daily medians)' });
    const ticks = times.locator('.recharts-cartesian-axis-tick-value[orientation="left"]');
    await expect.poll(() => ticks.count()).toBeGreaterThan(1);
    const labels = await ticks.allTextContents();
    expect(
      labels.every((l) => /^\d+ (min|h|d)$/.test(l)),
      labels.join(', '),
    ).toBe(true);
    expect(new Set(labels).size, labels.join(', ')).toBe(labels.length);
    await owner.getByText('Show as a table: Tickets created and solved').click();
    const table = owner.getByRole('region', { name: 'Tickets created and solved' }).getByRole('table');
    await expect.poll(() => table.getByRole('row').count()).toBe(31); // the heading and 30 days
    await owner.getByRole('combobox', { name: 'Period' }).selectOption('7');
    await expect.poll(() => table.getByRole('row').count()).toBe(8);
    expect(await h.violations(owner)).toBe('[]');
    await docsScreenshot(owner, 'app-reports');
  });

  it('the onboarding checklist shows in the sidebar, its steps linked, and is dismissed', async () => {
    await owner.goto(`${h.svc.url}/inbox`);
    const trigger = owner.getByRole('button', { name: /Get started/ });
    await trigger.click();
    const panel = owner.getByRole('dialog', { name: 'Get started' });
    await panel.waitFor();
    // Done: a teammate is in; not done: a mailbox, linked to its settings.
    await expect
      .poll(() => panel.getByRole('listitem').filter({ hasText: 'Invite a teammate' }).textContent())
      .toContain('(done)');
    const mailbox = panel.getByRole('link', { name: 'Connect your support mailbox' });
    expect(await mailbox.getAttribute('href')).toBe('/settings/mailboxes');
    expect(await h.violations(owner)).toBe('[]');
    await panel.getByRole('button', { name: 'Hide this checklist' }).click();
    await trigger.waitFor({ state: 'detached' });
    expect((await h.svc.api.get('/v1/onboarding', as())).body.dismissed).toBe(true);
    await owner.reload();
    await owner.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
    expect(await owner.getByRole('button', { name: /Get started/ }).count()).toBe(0);
  });

  it('fits 360 px: Members has no sideways overflow', async () => {
    await owner.setViewportSize({ width: 360, height: 740 });
    try {
      await owner.goto(`${h.svc.url}/settings/members`);
      await owner.getByRole('cell', { name: /Bob B\. Builder bob-/ }).waitFor();
      expect(await overflow(owner)).toBeLessThanOrEqual(0);
      expect(await h.violations(owner)).toBe('[]');
    } finally {
      await owner.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('logged no error in the pages', () => {
    // Expected failures: a signed-out page's refresh (401), the owner invited again (409), the
    // used link (404), the SVG (422); and, at times, the socket of a session just signed out
    // (Bob's, after his password change and sign-out) refused while it was reconnecting.
    const unexpected = h.errors.filter(
      (e) => !/status of (401|409|404|422)/.test(e) && !/WebSocket connection .* HTTP Authentication failed/.test(e),
    );
    expect(unexpected).toEqual([]);
  });
});
