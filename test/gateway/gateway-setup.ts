// The setup of the realtime gateway tests (gateway.test.ts, gateway-closing-replay.test.ts): a
// service without job workers, the sockets a test opens (disconnected after each test), and the
// helpers that open and join them. Each test file calls gatewaySuite() at its top level and gets
// its own service and sockets (the files share worker processes, so nothing here lives at module
// level).

import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { makeTicket } from '../support/builders.js';
import { type Client, collect, connect, join, realtimeToken, sleep } from '../support/gateway-client.js';
import { type Service, startService, type Tenant } from '../support/helpers.js';

/**
 * Sends a heartbeat and waits for the server's reply to it (Phoenix calls back only for the
 * reply with the heartbeat's ref): fails after 5 s without one.
 */
export async function heartbeat(socket: { ping(callback: (rtt: number) => void): boolean }): Promise<void> {
  let sent = false;
  const rtt = await Promise.race([
    new Promise<number>((resolve) => {
      sent = socket.ping(resolve);
    }),
    sleep(5000).then(() => null),
  ]);
  expect(sent, 'the heartbeat was sent (socket connected)').toBe(true);
  expect(rtt, 'the server answered the heartbeat within 5 s').not.toBeNull();
}

/** Waits a moment so that anything wrongly sent would have arrived. */
export const quiet = () => sleep(300);

/** One file's service and sockets, and the helpers that use them; registers the file's hooks. */
export function gatewaySuite() {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({}, { jobs: false });
  });
  afterAll(async () => svc?.stop());

  const clients: Client[] = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.disconnect();
  });

  function open(token: string | (() => string), o: Parameters<typeof connect>[2] = {}): Client {
    const c = connect(svc.url, token, o);
    clients.push(c);
    return c;
  }

  async function agentSocket(as: { token?: string; workspace?: string }) {
    return open(await realtimeToken(svc.api, as));
  }

  /** An agent socket joined to its workspace topic: what it receives from now on, and the seq it joined at. */
  async function joinedWorkspace(t: Tenant) {
    const c = await agentSocket(t.as);
    const ch = c.socket.channel(`workspace:${t.workspaceId}`);
    const got = collect(ch);
    const start = (await join(ch)).response.latest_seq as number;
    return { c, ch, got, start };
  }

  const ticket = (t: Tenant, extra: Record<string, unknown> = {}) =>
    makeTicket(svc.api, t, extra) as Promise<{ id: string; contact: { id: string } | null; team_id: string | null }>;

  async function privateTeam(t: Tenant, members: string[]) {
    const r = await svc.api.post(
      '/v1/teams',
      { name: `Team ${Math.random()}`, private: true, member_ids: members },
      t.as,
    );
    expect(r.status, r.text).toBe(201);
    return r.body.id as string;
  }

  return {
    get svc() {
      return svc;
    },
    clients,
    open,
    agentSocket,
    joinedWorkspace,
    ticket,
    privateTeam,
  };
}
