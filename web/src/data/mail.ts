// Outgoing mail's state: whether a mailer is set up, and which mailboxes' replies are kept in the
// outbox (refetched when a mailbox changes: lib/queries.ts applyEvent).
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';

export const useMailStatus = (ws: string) =>
  useQuery({ queryKey: keys.mailStatus(ws), queryFn: () => ok(api.GET('/v1/mail/status')) });

export type MailStatus = NonNullable<ReturnType<typeof useMailStatus>['data']>;
