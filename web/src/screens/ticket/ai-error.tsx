// An AI action's failure as the composer and the AI panel show it (aiErrorText's words). Out of AI
// credit (402 ai_balance_empty) says what to do: owners and admins get a link to Settings → Billing
// to buy more, other members are told to ask an admin.
import { Link } from '@tanstack/react-router';
import { AI_BALANCE_EMPTY } from '../../data/ai';
import { isAdmin, useRole } from '../../lib/role';

export function AiErrorText({ text }: { text: string | null }) {
  const admin = isAdmin(useRole());
  if (text !== AI_BALANCE_EMPTY) return <>{text}</>;
  return admin ? (
    <>
      Your workspace is out of AI credit — buy more in{' '}
      <Link to="/settings/$" params={{ _splat: 'billing' }}>
        Settings → Billing
      </Link>
      .
    </>
  ) : (
    <>Your workspace is out of AI credit — ask an admin to buy more in Settings → Billing.</>
  );
}
